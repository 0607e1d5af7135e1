// The balancer over a stream of samples, step by step (a step is one global batch: data-parallel
// ranks x micro-batches slots, slot = micro-batch x dp + rank).
//
// Each step takes, in order: the waiting samples (carried over from the previous step, and the
// outlier groups the queues release under wlb), oldest first, then new samples from the stream
// until the step's budget of slots x max_tokens tokens (or step_budget_tokens) is full (an
// outlier drawn under wlb goes to its queue instead and takes no budget); `one_step` draws the
// whole input into a single step instead. The method then places the step's samples into slots;
// what fits nowhere is carried over to the next step.
//   none          arrival order: first fit under the cap (PackingRule::arrival_order)
//   fixed-greedy  fixed-length packing balancing tokens (PackingRule::token_greedy)
//   lpt           longest processing time on predicted time, under the cap (time_greedy)
//   kk            largest differencing on predicted time; no cap
//   wlb           variable-length packing with multi-level outlier queues (WLB-LLM, OSDI'25,
//                 §4.1): lpt under the cap, and with several steps, short samples shed from the
//                 slowest slot to the next step (slowest_slot_shedding.h)
//
// No sample is held back for long (Tessera's rules, each needed by the bound below):
//   1. the `slots` oldest waiting samples of a step are placed before any other (one still-empty
//      slot each: a sample is at most max_tokens, so it always fits);
//   2. every queued outlier leaves its queue once it has waited max_wait_steps (outlier_queues.h);
//   3. a step whose waiting samples already fill its budget draws nothing new; the draw stops
//      while the queues hold Q = kQueuedSamplesPerSlot x slots outliers, and full queues release
//      their oldest groups until they hold fewer;
//   4. the packing is any-fit (a sample is left out only when no slot has room for it) and the
//      step holds at most slots x max_tokens tokens, so fewer than `slots` of its samples are
//      left out (each slot is then fuller than max_tokens - t for the smallest left-out t);
//      shedding stops at kCarriedPerSlot x slots - 1 carried samples;
//   5. once the input has ended the queues empty into the step (what does not fit waits, oldest
//      first): the end of the stream flushes every queue.
// Then at most Q + C - 1 samples wait after any step (C = slots without shedding, else
// kCarriedPerSlot x slots): a step that draws leaves at most C - 1 carried and Q queued, one that
// does not draw places at least min(slots, waiting) and adds none. A sample is among the waiting
// ones that rule 1 serves by max(W, 1) steps after its arrival (W = max_wait_steps: every older
// one is too), and each later step places it or `slots` older ones, so its delay is at most
//   delay_bound_steps = 1                                 (none, fixed-greedy, lpt; kk: 0)
//                     = max(W, 1) + kQueuedSamplesPerSlot + kCarriedPerSlot - 1
//                                                         (wlb; 16 + 4 + 3 = 23 by default)
// With `until_placed` the run stops after the step that places the last sample of the input.
// Invariants (checked by stream_violations): every sample drawn is placed exactly once or is
// still waiting at the end; no slot holds more than max_tokens; no delay exceeds the bound; the
// result depends only on the input and the settings.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "balance/longest_processing_time.h"
#include "balance/outlier_queues.h"

namespace tessera {

enum class BalanceMethod { none, fixed_greedy, lpt, kk, wlb };
const char* to_string(BalanceMethod method);
BalanceMethod parse_balance_method(const std::string& text);  // throws Error("method", ...)

// Bounds on the shape of one step (a slot index is an int32), on the run (each step keeps a time
// and a token total per slot: slots x steps x 16 bytes, at most 160 MB) and on a slot's cap (so
// that a step's budget, slots x max_tokens, stays far inside an int64).
inline constexpr std::int64_t kMaxSlots = 1'000'000;
inline constexpr std::int64_t kMaxSteps = 1'000'000;
inline constexpr std::int64_t kMaxSlotSteps = 10'000'000;
inline constexpr std::int64_t kMaxSlotTokens = std::int64_t{1} << 40;
// Rule 3 above: outliers queued at most, per slot. Two levels fill one group per slot each twice
// over; on wlb-like (1 x 4 slots of 128K tokens) the queues hold under 2 per slot.
inline constexpr int kQueuedSamplesPerSlot = 4;
// Rule 4: shedding leaves at most this many carried samples per slot (wlb-like sheds a handful
// of short documents from one slot per step).
inline constexpr int kCarriedPerSlot = 4;

struct StreamSettings {
  int dp = 1;
  int microbatches = 1;
  std::int64_t max_tokens = 0;  // per slot; 0 = no cap (then only one_step)
  int steps = 1;                // with until_placed: the most steps to run
  bool one_step = false;        // one step over the whole input, instead of token budgets
  bool until_placed = false;    // stop once the input is drawn and every sample placed
  // Tokens step s may draw: step_budget_tokens[s % size], each 1 to slots x max_tokens (a global
  // batch that changes between steps); empty: slots x max_tokens every step.
  std::vector<std::int64_t> step_budget_tokens;
  BalanceMethod method = BalanceMethod::wlb;
  CountMode count = CountMode::free;
  OutlierPolicy outliers;           // wlb with a cap; default_outlier_policy(max_tokens) if empty
  double filler_s_per_token = 0;    // time per token of the shortest samples (release rule)

  int slots() const { return dp * microbatches; }
  std::int64_t budget_tokens(int step) const;
  // Throws Error naming the field: dp, microbatches, max-tokens, steps, method, equal_count,
  // step_budget_tokens, outliers.*.
  void validate() const;
};

// The most steps a sample waits between being drawn and being placed (the bound above).
int delay_bound_steps(const StreamSettings& settings);

struct SlotPlacement {
  std::int64_t item = 0;
  std::int32_t slot = 0;
  std::int32_t arrival_step = 0;  // the step the sample was drawn in
};

struct StepResult {
  std::vector<SlotPlacement> placements;  // in the order the method placed them
  std::vector<double> slot_time_s;
  std::vector<std::int64_t> slot_tokens;
  double largest_item_s = 0;  // slowest sample placed in this step
  int released_outliers = 0;
};

struct StreamResult {
  std::vector<StepResult> steps;
  std::int64_t n_in = 0;        // distinct samples drawn: the prefix [0, n_in) of the input
  std::int64_t n_assigned = 0;  // placed in a slot
  std::int64_t n_carried = 0;   // still waiting after the last step (carried pool, then queues)
  std::vector<std::int64_t> carried;
  double mean_delay_steps = 0;  // over placed samples: step placed - step drawn
  int max_delay_steps = 0;
  int outlier_queues = 0;       // queues that held a sample
  bool ran_out = false;         // the input ended before a step's budget was full
};

// `tokens[i]` and `time_s[i]`: backbone tokens and predicted time of sample i, in arrival order.
// Throws Error("max-tokens", ...) when a sample is longer than the cap (it could never be placed).
StreamResult balance_stream(std::span<const std::int64_t> tokens, std::span<const double> time_s,
                            const StreamSettings& settings);

// Every broken invariant, one line each; empty when the result is sound.
std::vector<std::string> stream_violations(const StreamResult& result, std::span<const std::int64_t> tokens,
                                           std::span<const double> time_s, const StreamSettings& settings);

}  // namespace tessera

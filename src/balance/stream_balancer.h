// The balancer over a stream of samples, step by step (a step is one global batch: data-parallel
// ranks x micro-batches slots, slot = micro-batch x dp + rank).
//
// Each step takes, in order: the outlier group the queues release (wlb), the samples carried over
// from the previous step, then new samples from the stream until the step's budget of
// slots x max_tokens tokens is full (an outlier drawn under wlb goes to its queue instead and
// takes no budget); `one_step` draws the whole input into a single step instead. The method then
// places the step's samples into slots; what fits nowhere is carried over to the next step.
//   none          arrival order (PackingRule::arrival_order)
//   fixed-greedy  fixed-length packing balancing tokens (PackingRule::token_greedy)
//   lpt           longest processing time on predicted time, under the cap (time_greedy)
//   kk            largest differencing on predicted time; no cap
//   wlb           variable-length packing with multi-level outlier queues (WLB-LLM, OSDI'25,
//                 §4.1): lpt under the cap, and with several steps, short samples shed from the
//                 slowest slot to the next step (slowest_slot_shedding.h)
// Invariants (checked by stream_violations): every sample drawn is placed exactly once or is
// still waiting at the end; no slot holds more than max_tokens; the result depends only on the
// input and the settings.
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

// Bounds on the shape of one step (a slot index is an int32).
inline constexpr std::int64_t kMaxSlots = 1'000'000;
inline constexpr std::int64_t kMaxSteps = 1'000'000;

struct StreamSettings {
  int dp = 1;
  int microbatches = 1;
  std::int64_t max_tokens = 0;  // per slot; 0 = no cap (then only one_step)
  int steps = 1;
  bool one_step = false;        // one step over the whole input, instead of token budgets
  BalanceMethod method = BalanceMethod::wlb;
  CountMode count = CountMode::free;
  OutlierPolicy outliers;           // wlb with a cap; default_outlier_policy(max_tokens) if empty
  double filler_s_per_token = 0;    // time per token of the shortest samples (release rule)

  int slots() const { return dp * microbatches; }
  // Throws Error naming the field: dp, microbatches, max-tokens, steps, method.
  void validate() const;
};

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

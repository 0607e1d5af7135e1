#include "balance/stream_balancer.h"

#include <algorithm>
#include <cmath>

#include "balance/largest_differencing.h"
#include "balance/slowest_slot_shedding.h"
#include "balance/step_packing.h"
#include "core/checks.h"
#include "core/error.h"

namespace tessera {

namespace {

constexpr const char* kMethods = "none, fixed-greedy, lpt, kk, wlb";
// Relative tolerance when re-adding slot times in the invariant check (summation order differs).
constexpr double kTimeTolerance = 1e-9;

PackingRule packing_rule(BalanceMethod method) {
  switch (method) {
    case BalanceMethod::none: return PackingRule::arrival_order;
    case BalanceMethod::fixed_greedy: return PackingRule::token_greedy;
    default: return PackingRule::time_greedy;
  }
}

}  // namespace

const char* to_string(BalanceMethod method) {
  switch (method) {
    case BalanceMethod::none: return "none";
    case BalanceMethod::fixed_greedy: return "fixed-greedy";
    case BalanceMethod::lpt: return "lpt";
    case BalanceMethod::kk: return "kk";
    case BalanceMethod::wlb: return "wlb";
  }
  return "?";
}

BalanceMethod parse_balance_method(const std::string& text) {
  if (text == "none") return BalanceMethod::none;
  if (text == "fixed-greedy") return BalanceMethod::fixed_greedy;
  if (text == "lpt") return BalanceMethod::lpt;
  if (text == "kk") return BalanceMethod::kk;
  if (text == "wlb") return BalanceMethod::wlb;
  throw Error("method", "unknown method '" + text + "'", kMethods);
}

void StreamSettings::validate() const {
  require_positive("dp", dp, kMaxSlots);
  require_positive("microbatches", microbatches, kMaxSlots);
  if (static_cast<std::int64_t>(dp) * microbatches > kMaxSlots)
    throw Error("dp", std::to_string(dp) + " ranks x " + std::to_string(microbatches) + " micro-batches is too many slots",
                "dp x microbatches <= " + std::to_string(kMaxSlots));
  require_non_negative("max-tokens", max_tokens, kMaxSlotTokens);
  require_positive("steps", steps, kMaxSteps);
  if (static_cast<std::int64_t>(slots()) * steps > kMaxSlotSteps)
    throw Error("steps", std::to_string(steps) + " steps of " + std::to_string(slots()) + " slots",
                "dp x microbatches x steps <= " + std::to_string(kMaxSlotSteps));
  if (one_step && steps != 1) throw Error("steps", "one_step balances a single step", "1");
  if (!one_step && max_tokens == 0)
    throw Error("max-tokens", "missing: a step's budget is dp x microbatches x max-tokens",
                "a positive token count per micro-batch");
  if (method == BalanceMethod::kk && max_tokens > 0)
    throw Error("method", "kk balances without a token cap",
                "none, fixed-greedy, lpt or wlb with a cap; kk for one step with no --max-tokens");
  // Equal counts can leave a sample out while another slot has room, which the delay bound rules
  // out (rule 4 in the header).
  if (!one_step && count == CountMode::equal)
    throw Error("equal_count", "token-budget steps place by the cap, not by count", "false (or one step)");
  for (std::int64_t b : step_budget_tokens)
    if (one_step || b < 1 || b > max_tokens * slots())
      throw Error("step_budget_tokens", "got " + std::to_string(b),
                  one_step ? "none with one step" : "1 to dp x microbatches x max-tokens = " + std::to_string(max_tokens * slots()));
  for (std::size_t k = 0; k < outliers.level_min_tokens.size(); ++k)
    if (outliers.level_min_tokens[k] < 1 || (k > 0 && outliers.level_min_tokens[k] <= outliers.level_min_tokens[k - 1]))
      throw Error("outliers.level_min_tokens", "must be positive and increasing", "ascending token thresholds");
  require_non_negative("outliers.max_wait_steps", outliers.max_wait_steps, kMaxSteps);
  if (!std::isfinite(filler_s_per_token) || filler_s_per_token < 0)
    throw Error("filler_s_per_token", "got " + std::to_string(filler_s_per_token), "a finite number >= 0");
}

std::int64_t StreamSettings::budget_tokens(int step) const {
  if (step_budget_tokens.empty()) return max_tokens * slots();
  return step_budget_tokens[static_cast<std::size_t>(step) % step_budget_tokens.size()];
}

int delay_bound_steps(const StreamSettings& settings) {
  if (settings.one_step) return 0;
  if (settings.method != BalanceMethod::wlb) return 1;
  const int wait = settings.outliers.level_min_tokens.empty() ? kDefaultMaxWaitSteps : settings.outliers.max_wait_steps;
  return std::max(wait, 1) + kQueuedSamplesPerSlot + kCarriedPerSlot - 1;
}

namespace {

// One step's working set and what the step loop keeps between steps.
class StreamRun {
 public:
  StreamRun(std::span<const std::int64_t> tokens, std::span<const double> time_s, const StreamSettings& settings)
      : tokens_(tokens), time_s_(time_s), st_(settings), slots_(settings.slots()), cap_(settings.max_tokens),
        wlb_(settings.method == BalanceMethod::wlb && cap_ > 0), queues_(policy()),
        queue_limit_(static_cast<std::size_t>(kQueuedSamplesPerSlot) * static_cast<std::size_t>(slots_)) {}

  StreamResult run() {
    result_.steps.reserve(static_cast<std::size_t>(st_.steps));
    for (int step = 0; step < st_.steps; ++step) {
      if (st_.until_placed && next_ == tokens_.size() && carried_.empty() && queues_.size() == 0 && step > 0) break;
      run_step(step);
    }
    finish();
    return std::move(result_);
  }

 private:
  OutlierPolicy policy() const {
    OutlierPolicy p = st_.outliers;
    if (wlb_ && p.level_min_tokens.empty()) p = default_outlier_policy(cap_);
    if (!wlb_) p.level_min_tokens.clear();
    return p;
  }

  // Rule 1: the waiting samples, oldest first; the first `slots` of them are placed first.
  std::size_t gather_waiting(int step) {
    pool_.clear();
    if (wlb_ && !st_.one_step) {
      queues_.release(step, slots_, cap_, st_.filler_s_per_token, pool_);
      while (queues_.size() >= queue_limit_) queues_.release_oldest(slots_, cap_, st_.filler_s_per_token, pool_);
    }
    released_ = static_cast<int>(pool_.size());
    pool_.insert(pool_.end(), carried_.begin(), carried_.end());
    carried_.clear();
    std::sort(pool_.begin(), pool_.end(), queued_earlier);
    return std::min(pool_.size(), static_cast<std::size_t>(slots_));
  }

  // The first sample over the cap, and the cap every sample fits (issue 32: naming the first
  // sample's length sent the user to a second failure at the next longer one).
  Error cap_error(std::size_t sample) const {
    const std::int64_t longest = *std::max_element(tokens_.begin(), tokens_.end());
    return Error("max-tokens",
                 "sample " + std::to_string(sample) + " has " + std::to_string(tokens_[sample]) +
                     " tokens, more than the cap of " + std::to_string(cap_) + " (the longest sample has " +
                     std::to_string(longest) + ")",
                 "at least " + std::to_string(longest));
  }

  // Rule 3: new samples until the budget is full (one_step: all of them).
  void draw(int step, std::int64_t budget, std::int64_t& used) {
    if (!st_.one_step && used >= budget) return;
    while (next_ < tokens_.size()) {
      const std::int64_t t = tokens_[next_];
      if (cap_ > 0 && t > cap_) throw cap_error(next_);
      const QueuedItem item{static_cast<std::int64_t>(next_), t, time_s_[next_], step};
      if (const int level = queues_.level_of(t); level >= 0) {
        if (!st_.one_step && queues_.size() >= queue_limit_) return;
        queues_.push(item, level);
      } else {
        if (!st_.one_step && used + t > budget) return;
        pool_.push_back(item);
        used += t;
      }
      ++next_;
    }
  }

  // Rule 5: at the end of the input the queues empty, oldest first, into what the budget leaves.
  void flush_queues(std::int64_t budget, std::int64_t& used) {
    flushed_.clear();
    queues_.release_all(flushed_);
    std::sort(flushed_.begin(), flushed_.end(), queued_earlier);
    for (const QueuedItem& q : flushed_) {
      if (!st_.one_step && used + q.tokens > budget) {
        overflow_.push_back(q);
        continue;
      }
      pool_.push_back(q);
      used += q.tokens;
      ++released_;
    }
  }

  void place(std::size_t first, bool input_left) {
    step_tokens_.resize(pool_.size());
    step_time_.resize(pool_.size());
    slot_of_.resize(pool_.size());
    for (std::size_t i = 0; i < pool_.size(); ++i) {
      step_tokens_[i] = pool_[i].tokens;
      step_time_[i] = pool_[i].time_s;
    }
    if (st_.method == BalanceMethod::kk) {
      const std::vector<std::int32_t> kk = assign_largest_differencing(step_time_, slots_, st_.count == CountMode::equal);
      std::copy(kk.begin(), kk.end(), slot_of_.begin());
      return;
    }
    pack_step(step_tokens_, step_time_, slots_, cap_, packing_rule(st_.method), st_.count, slot_of_, scratch_, first);
    // Shedding defers work to the next step: only worth it while new samples can fill this one's
    // slots there, and only as far as rule 4 allows.
    if (!wlb_ || st_.one_step || !input_left) return;
    const auto unplaced = static_cast<int>(std::count(slot_of_.begin(), slot_of_.end(), kNotPlaced));
    shed_from_slowest_slot(step_time_, first, slots_, slot_of_, shed_scratch_, kCarriedPerSlot * slots_ - 1 - unplaced);
  }

  void run_step(int step) {
    const std::size_t first = gather_waiting(step);
    const std::int64_t budget = st_.one_step ? 0 : st_.budget_tokens(step);
    std::int64_t used = 0;
    for (const QueuedItem& q : pool_) used += q.tokens;
    draw(step, budget, used);
    if (next_ == tokens_.size()) {
      result_.ran_out = true;
      if (wlb_) flush_queues(budget, used);
    }
    place(first, next_ < tokens_.size());
    record(step);
  }

  void record(int step) {
    StepResult& out = result_.steps.emplace_back();
    out.released_outliers = released_;
    out.slot_time_s.assign(static_cast<std::size_t>(slots_), 0.0);
    out.slot_tokens.assign(static_cast<std::size_t>(slots_), 0);
    out.placements.reserve(pool_.size());
    for (std::size_t i = 0; i < pool_.size(); ++i) {
      const QueuedItem& q = pool_[i];
      if (slot_of_[i] == kNotPlaced) {
        carried_.push_back(q);
        continue;
      }
      const auto s = static_cast<std::size_t>(slot_of_[i]);
      out.placements.push_back({q.item, slot_of_[i], q.arrival_step});
      out.slot_time_s[s] += q.time_s;
      out.slot_tokens[s] += q.tokens;
      out.largest_item_s = std::max(out.largest_item_s, q.time_s);
      const int delay = step - q.arrival_step;
      delay_sum_ += delay;
      result_.max_delay_steps = std::max(result_.max_delay_steps, delay);
    }
    carried_.insert(carried_.end(), overflow_.begin(), overflow_.end());
    overflow_.clear();
    result_.n_assigned += static_cast<std::int64_t>(out.placements.size());
  }

  void finish() {
    result_.n_in = static_cast<std::int64_t>(next_);
    for (const QueuedItem& q : carried_) result_.carried.push_back(q.item);
    queues_.append_waiting(result_.carried);
    result_.n_carried = static_cast<std::int64_t>(result_.carried.size());
    result_.mean_delay_steps =
        result_.n_assigned > 0 ? delay_sum_ / static_cast<double>(result_.n_assigned) : 0.0;
    result_.outlier_queues = queues_.levels_used();
  }

  std::span<const std::int64_t> tokens_;
  std::span<const double> time_s_;
  const StreamSettings& st_;
  const int slots_;
  const std::int64_t cap_;
  const bool wlb_;
  OutlierQueues queues_;
  const std::size_t queue_limit_;
  StreamResult result_;
  std::vector<QueuedItem> pool_, carried_, flushed_, overflow_;
  std::vector<std::int64_t> step_tokens_;
  std::vector<double> step_time_;
  std::vector<std::int32_t> slot_of_;
  SheddingScratch shed_scratch_;
  PackingScratch scratch_;
  std::size_t next_ = 0;
  int released_ = 0;  // outliers released into this step
  double delay_sum_ = 0;
};

}  // namespace

StreamResult balance_stream(std::span<const std::int64_t> tokens, std::span<const double> time_s,
                            const StreamSettings& settings) {
  settings.validate();
  return StreamRun(tokens, time_s, settings).run();
}

std::vector<std::string> stream_violations(const StreamResult& result, std::span<const std::int64_t> tokens,
                                           std::span<const double> time_s, const StreamSettings& settings) {
  std::vector<std::string> problems;
  auto report = [&](std::string text) { problems.push_back(std::move(text)); };
  const std::int64_t n = static_cast<std::int64_t>(tokens.size());
  if (result.n_in < 0 || result.n_in > n) {
    report("n_in " + std::to_string(result.n_in) + " outside [0, " + std::to_string(n) + "]");
    return problems;
  }
  if (result.n_assigned + result.n_carried != result.n_in)
    report("n_assigned + n_carried = " + std::to_string(result.n_assigned + result.n_carried) + " != n_in " +
           std::to_string(result.n_in));
  std::vector<int> seen(static_cast<std::size_t>(result.n_in), 0);
  auto mark = [&](std::int64_t item, const std::string& where) {
    if (item < 0 || item >= result.n_in) {
      report(where + ": sample " + std::to_string(item) + " was never drawn");
      return false;
    }
    if (++seen[static_cast<std::size_t>(item)] == 2) report(where + ": sample " + std::to_string(item) + " appears twice");
    return true;
  };
  const int slots = settings.slots();
  const int bound = delay_bound_steps(settings);
  std::int64_t placed = 0;
  double delay_sum = 0;
  for (std::size_t step = 0; step < result.steps.size(); ++step) {
    const StepResult& s = result.steps[step];
    const std::string where = "step " + std::to_string(step);
    std::vector<std::int64_t> slot_tokens(static_cast<std::size_t>(slots), 0);
    std::vector<double> slot_time(static_cast<std::size_t>(slots), 0.0);
    for (const SlotPlacement& p : s.placements) {
      if (p.slot < 0 || p.slot >= slots) {
        report(where + ": slot " + std::to_string(p.slot) + " out of range");
        continue;
      }
      if (!mark(p.item, where)) continue;
      if (p.arrival_step > static_cast<std::int32_t>(step)) report(where + ": sample placed before it arrived");
      if (static_cast<int>(step) - p.arrival_step > bound)
        report(where + ": sample " + std::to_string(p.item) + " waited " + std::to_string(step - p.arrival_step) +
               " steps, over the bound of " + std::to_string(bound));
      slot_tokens[static_cast<std::size_t>(p.slot)] += tokens[static_cast<std::size_t>(p.item)];
      slot_time[static_cast<std::size_t>(p.slot)] += time_s[static_cast<std::size_t>(p.item)];
      delay_sum += static_cast<double>(step) - p.arrival_step;
      ++placed;
    }
    for (int k = 0; k < slots; ++k) {
      const auto u = static_cast<std::size_t>(k);
      if (settings.max_tokens > 0 && slot_tokens[u] > settings.max_tokens)
        report(where + ": slot " + std::to_string(k) + " holds " + std::to_string(slot_tokens[u]) + " tokens, over the cap");
      if (u >= s.slot_tokens.size() || s.slot_tokens[u] != slot_tokens[u] ||
          std::fabs(s.slot_time_s[u] - slot_time[u]) > kTimeTolerance * std::max(1.0, slot_time[u]))
        report(where + ": slot " + std::to_string(k) + " totals differ from its samples");
    }
  }
  for (std::int64_t item : result.carried) mark(item, "carried");
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (seen[i] == 0) report("sample " + std::to_string(i) + " was drawn but neither placed nor carried");
  if (placed != result.n_assigned) report("n_assigned differs from the placements");
  if (static_cast<std::int64_t>(result.carried.size()) != result.n_carried) report("n_carried differs from the carried list");
  const double mean = placed > 0 ? delay_sum / static_cast<double>(placed) : 0.0;
  if (std::fabs(mean - result.mean_delay_steps) > kTimeTolerance * std::max(1.0, mean))
    report("mean_delay_steps differs from the placements");
  return problems;
}

}  // namespace tessera

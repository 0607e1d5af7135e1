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
  require_non_negative("max-tokens", max_tokens);
  require_positive("steps", steps, kMaxSteps);
  if (one_step && steps != 1) throw Error("steps", "one_step balances a single step", "1");
  if (!one_step && max_tokens == 0)
    throw Error("max-tokens", "missing: a step's budget is dp x microbatches x max-tokens",
                "a positive token count per micro-batch");
  if (method == BalanceMethod::kk && max_tokens > 0)
    throw Error("method", "kk balances without a token cap",
                "none, fixed-greedy, lpt or wlb with a cap; kk for one step with no --max-tokens");
  for (std::size_t k = 0; k < outliers.level_min_tokens.size(); ++k)
    if (outliers.level_min_tokens[k] < 1 || (k > 0 && outliers.level_min_tokens[k] <= outliers.level_min_tokens[k - 1]))
      throw Error("outliers.level_min_tokens", "must be positive and increasing", "ascending token thresholds");
  require_non_negative("outliers.max_wait_steps", outliers.max_wait_steps, kMaxSteps);
  if (!std::isfinite(filler_s_per_token) || filler_s_per_token < 0)
    throw Error("filler_s_per_token", "got " + std::to_string(filler_s_per_token), "a finite number >= 0");
}

StreamResult balance_stream(std::span<const std::int64_t> tokens, std::span<const double> time_s,
                            const StreamSettings& settings) {
  settings.validate();
  const int slots = settings.slots();
  const std::int64_t cap = settings.max_tokens;
  const bool capped = cap > 0;
  const bool wlb = settings.method == BalanceMethod::wlb && capped;
  OutlierPolicy policy = settings.outliers;
  if (wlb && policy.level_min_tokens.empty()) policy = default_outlier_policy(cap);
  if (!wlb) policy.level_min_tokens.clear();
  OutlierQueues queues(policy);
  const std::int64_t budget = capped ? cap * slots : 0;
  const std::size_t n = tokens.size();

  StreamResult result;
  result.steps.reserve(static_cast<std::size_t>(settings.steps));
  std::vector<QueuedItem> pool, carried, released;
  std::vector<std::int64_t> step_tokens;
  std::vector<double> step_time;
  std::vector<std::int32_t> slot_of;
  std::vector<double> shed_scratch;
  PackingScratch scratch;
  std::size_t next = 0;
  double delay_sum = 0;

  auto draw = [&](int step, std::int64_t used) {
    while (next < n) {
      const std::int64_t t = tokens[next];
      if (capped && t > cap)
        throw Error("max-tokens", "sample " + std::to_string(next) + " has " + std::to_string(t) +
                                      " tokens, more than the cap of " + std::to_string(cap),
                    "at least " + std::to_string(t));
      const QueuedItem item{static_cast<std::int64_t>(next), t, time_s[next], step};
      if (const int level = queues.level_of(t); level >= 0) {
        queues.push(item, level);
      } else {
        if (!settings.one_step && used + t > budget) return;
        pool.push_back(item);
        used += t;
      }
      ++next;
    }
    result.ran_out = true;
  };

  for (int step = 0; step < settings.steps; ++step) {
    pool.clear();
    released.clear();
    if (wlb && !settings.one_step) queues.release(step, slots, cap, settings.filler_s_per_token, released);
    pool.insert(pool.end(), released.begin(), released.end());
    pool.insert(pool.end(), carried.begin(), carried.end());
    carried.clear();
    std::int64_t used = 0;
    for (const QueuedItem& q : pool) used += q.tokens;
    draw(step, used);
    if (wlb && settings.one_step) {
      queues.release(step, slots, cap, settings.filler_s_per_token, released);
      pool.insert(pool.end(), released.begin(), released.end());
    }

    step_tokens.resize(pool.size());
    step_time.resize(pool.size());
    slot_of.resize(pool.size());
    for (std::size_t i = 0; i < pool.size(); ++i) {
      step_tokens[i] = pool[i].tokens;
      step_time[i] = pool[i].time_s;
    }
    if (settings.method == BalanceMethod::kk) {
      const std::vector<std::int32_t> kk = assign_largest_differencing(step_time, slots);
      std::copy(kk.begin(), kk.end(), slot_of.begin());
    } else {
      pack_step(step_tokens, step_time, slots, cap, packing_rule(settings.method), settings.count, slot_of, scratch);
      if (wlb && !settings.one_step) shed_from_slowest_slot(step_time, released.size(), slots, slot_of, shed_scratch);
    }

    StepResult& out = result.steps.emplace_back();
    out.released_outliers = static_cast<int>(released.size());
    out.slot_time_s.assign(static_cast<std::size_t>(slots), 0.0);
    out.slot_tokens.assign(static_cast<std::size_t>(slots), 0);
    out.placements.reserve(pool.size());
    for (std::size_t i = 0; i < pool.size(); ++i) {
      const QueuedItem& q = pool[i];
      if (slot_of[i] == kNotPlaced) {
        if (const int level = queues.level_of(q.tokens); level >= 0) queues.push(q, level);
        else carried.push_back(q);
        continue;
      }
      const auto s = static_cast<std::size_t>(slot_of[i]);
      out.placements.push_back({q.item, slot_of[i], q.arrival_step});
      out.slot_time_s[s] += q.time_s;
      out.slot_tokens[s] += q.tokens;
      out.largest_item_s = std::max(out.largest_item_s, q.time_s);
      const int delay = step - q.arrival_step;
      delay_sum += delay;
      result.max_delay_steps = std::max(result.max_delay_steps, delay);
    }
    result.n_assigned += static_cast<std::int64_t>(out.placements.size());
  }

  result.n_in = static_cast<std::int64_t>(next);
  for (const QueuedItem& q : carried) result.carried.push_back(q.item);
  queues.append_waiting(result.carried);
  result.n_carried = static_cast<std::int64_t>(result.carried.size());
  result.mean_delay_steps = result.n_assigned > 0 ? delay_sum / static_cast<double>(result.n_assigned) : 0.0;
  result.outlier_queues = queues.levels_used();
  return result;
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

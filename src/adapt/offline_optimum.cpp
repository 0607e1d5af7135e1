#include "adapt/offline_optimum.h"

#include <limits>
#include <vector>

namespace tessera {

double static_time_to_target_s(const TrainingRunWorld& world, std::size_t candidate, StepTimes times) {
  const double tokens_per_s =
      times == StepTimes::real ? world.true_tokens_per_s(candidate) : world.predicted_tokens_per_s(candidate);
  return world.run_tokens(candidate) / tokens_per_s;
}

std::size_t best_static_candidate(const TrainingRunWorld& world, StepTimes times) {
  std::size_t best = 0;
  for (std::size_t c = 1; c < world.candidates.candidates.size(); ++c)
    if (static_time_to_target_s(world, c, times) < static_time_to_target_s(world, best, times)) best = c;
  return best;
}

PolicyRun offline_optimum(const TrainingRunWorld& world) {
  const auto& candidates = world.candidates.candidates;
  const std::size_t n = candidates.size(), segments = world.segment_end.size();
  const std::size_t plans = world.candidates.plans.size();
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<double> throughput(n);
  for (std::size_t c = 0; c < n; ++c) throughput[c] = world.true_tokens_per_s(c);
  // time[c]: least time to the end of the current segment, now running c; from[i][c]: what c ran
  // before segment i (kNone at i = 0).
  std::vector<double> time(n), next(n);
  std::vector<std::vector<std::size_t>> from(segments, std::vector<std::size_t>(n, kNone));
  for (std::size_t c = 0; c < n; ++c) time[c] = world.segment_tokens(0, c) / throughput[c];
  for (std::size_t i = 1; i < segments; ++i) {
    // The best predecessor overall and per plan.
    std::size_t best_all = 0;
    std::vector<std::size_t> best_of_plan(plans, kNone);
    for (std::size_t c = 0; c < n; ++c) {
      if (time[c] < time[best_all]) best_all = c;
      std::size_t& b = best_of_plan[candidates[c].plan_index];
      if (b == kNone || time[c] < time[b]) b = c;
    }
    for (std::size_t c = 0; c < n; ++c) {
      double t = time[c];
      std::size_t prev = c;
      const std::size_t same_plan = best_of_plan[candidates[c].plan_index];
      if (time[same_plan] + world.cost.batch_change_s < t) {
        t = time[same_plan] + world.cost.batch_change_s;
        prev = same_plan;
      }
      if (candidates[best_all].plan_index != candidates[c].plan_index && time[best_all] + world.cost.plan_change_s < t) {
        t = time[best_all] + world.cost.plan_change_s;
        prev = best_all;
      }
      next[c] = t + world.segment_tokens(i, c) / throughput[c];
      from[i][c] = prev;
    }
    time.swap(next);
  }
  std::size_t last = 0;
  for (std::size_t c = 1; c < n; ++c)
    if (time[c] < time[last]) last = c;
  // Walk back: the candidate run in each segment.
  std::vector<std::size_t> ran(segments);
  ran[segments - 1] = last;
  for (std::size_t i = segments - 1; i > 0; --i) ran[i - 1] = from[i][ran[i]];
  PolicyRun run;
  run.time_to_target_s = time[last];
  for (std::size_t i = 0; i < segments; ++i) {
    const std::size_t c = ran[i];
    if (i == 0 || c != ran[i - 1]) {
      if (i > 0) {
        const bool plan_change = candidates[c].plan_index != candidates[ran[i - 1]].plan_index;
        if (candidates[c].global_batch != candidates[ran[i - 1]].global_batch) run.batch_changes += 1;
        if (plan_change) run.plan_changes += 1;
        run.reconfiguration_s += plan_change ? world.cost.plan_change_s : world.cost.batch_change_s;
      }
      run.segments.push_back(RunSegment{run.consumed_tokens, c});
    }
    run.windows += 1;
    const double tokens = world.segment_tokens(i, c);
    run.consumed_tokens += tokens;
    run.steps += tokens / static_cast<double>(candidates[c].global_batch * world.candidates.seq_len);
  }
  return run;
}

}  // namespace tessera

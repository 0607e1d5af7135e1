#include "reliability/job_goodput.h"

#include <algorithm>
#include <cmath>

#include "core/checks.h"
#include "core/units.h"
#include "reliability/checkpoint_interval.h"

namespace tessera {

namespace {
constexpr double kMaxStepS = 86400.0;  // a day per step: beyond it, a unit slip
// --save-interval is a Python int; 10^12 steps is beyond any run.
constexpr double kMaxIntervalSteps = 1e12;

struct Interval {
  std::int64_t steps = 0;
  double fraction = 0;
};

// The better of the two whole-step neighbours of the optimum, no shorter than `min_steps`.
Interval best_step_interval(double optimum_s, double step_s, std::int64_t min_steps, double delta_s, double restart_s,
                            double mtbf_s) {
  const double raw = std::min(optimum_s / step_s, kMaxIntervalSteps);
  Interval best;
  for (const double candidate : {std::floor(raw), std::ceil(raw)}) {
    const auto steps = std::max<std::int64_t>({1, min_steps, static_cast<std::int64_t>(candidate)});
    const double f = useful_fraction(static_cast<double>(steps) * step_s, delta_s, restart_s, mtbf_s);
    if (f > best.fraction) best = {steps, f};
  }
  return best;
}
}  // namespace

void FailureModel::validate() const {
  rates.validate();
  storage.validate();
  restart.validate();
}

FailureOutcome failure_outcome(const FailureModel& model, const CheckpointCost& ckpt, std::int64_t gpus,
                               std::int64_t gpus_per_node, double step_time_s) {
  model.validate();
  require_positive_real("step_time_s", step_time_s, kMaxStepS);
  FailureOutcome o;
  o.checkpoint = ckpt;
  o.failures_per_hour = job_failures_per_hour(model.rates, gpus, gpus_per_node);
  o.mtbf_s = units::kSecondsPerHour / o.failures_per_hour;
  o.planned_per_hour = job_planned_per_hour(model.rates, gpus, gpus_per_node);
  const double delta = ckpt.blocking_s;
  const double durable_window_s = ckpt.write_s - ckpt.blocking_s;  // 0 unless async
  o.restart_s = expected_restart_s(model.restart, o.failures_per_hour, job_node_losses_per_hour(model.rates, gpus)) +
                ckpt.load_s + durable_window_s;
  o.young_interval_s = young_interval_s(delta, o.mtbf_s);
  o.daly_interval_s = daly_interval_s(delta, o.mtbf_s);
  o.optimal_interval_s = optimal_interval_s(delta, o.mtbf_s);
  // The next save starts only once the previous one is durable.
  const auto min_steps = static_cast<std::int64_t>(std::ceil(std::max(0.0, ckpt.write_s - delta) / step_time_s));
  const Interval best = best_step_interval(o.optimal_interval_s, step_time_s, min_steps, delta, o.restart_s, o.mtbf_s);
  o.interval_steps = best.steps;
  o.interval_s = static_cast<double>(best.steps) * step_time_s;
  const double planned_s = model.restart.relaunch_s + ckpt.load_s + delta;
  const double planned_share = o.planned_per_hour * planned_s / units::kSecondsPerHour;
  // A job interrupted more often than it can restart does no work: the fraction is 0, not negative.
  o.useful_fraction = best.fraction * std::max(0.0, 1.0 - planned_share);
  return o;
}

FailureOutcome plan_failure_outcome(const FailureModel& model, const ModelSpec& spec, const Plan& plan,
                                    const Cluster& cluster, double step_time_s) {
  const CheckpointCost ckpt = checkpoint_cost(spec, plan, cluster.gpus_per_node, model.storage, model.save);
  return failure_outcome(model, ckpt, plan.gpus(), cluster.gpus_per_node, step_time_s);
}

}  // namespace tessera

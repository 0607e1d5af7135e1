// Online correction of the cost model from measured step times: one scale per plan family, the
// bias-corrected moving average of measured / predicted step time (Pollux, Qiao et al. OSDI'21,
// section 3.2, refits its throughput model from the step times it observes, so its choices follow
// the real cluster). A family never run keeps scale 1: the cost model is the prior until measured.
// When the goodput controller refits the cost model itself (goodput_controller.h), this is the
// residual on top of it: `rescale` moves a family's ratio onto the new predictions.
#pragma once

#include <cstdint>
#include <vector>

#include "adapt/plan_family.h"

namespace tessera {

// Per-step decay of the ratio's moving average: a time constant of 100 steps, long enough to
// average out step-to-step jitter, short enough to follow a cluster that changes (a slow node).
inline constexpr double kRefitEmaDecay = 0.99;

class ThroughputRefit {
 public:
  explicit ThroughputRefit(double ema_decay = kRefitEmaDecay);  // decay in (0, 1)

  // `steps` steps of this family took `measured_step_time_s` on average where the cost model
  // predicted `predicted_step_time_s`. Throws Error on non-positive times or steps.
  void observe(const PlanFamily& family, double measured_step_time_s, double predicted_step_time_s,
               std::int64_t steps = 1);
  // measured / predicted step time; 1 for a family never observed.
  double scale(const PlanFamily& family) const;
  bool observed(const PlanFamily& family) const;
  // The predictions the ratio is measured against changed by new / old = 1 / factor: the ratio
  // becomes ratio x factor (its weight, the steps behind it, stays). Throws Error unless factor is
  // finite and > 0; a family never observed stays at 1.
  void rescale(const PlanFamily& family, double factor);

 private:
  struct Entry {
    PlanFamily family;
    double ratio_sum = 0;  // uncorrected EMA of measured / predicted
    double weight = 0;     // 1 - decay^steps
  };
  double decay_;
  std::vector<Entry> entries_;
};

}  // namespace tessera

#include "adapt/throughput_refit.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace tessera {

ThroughputRefit::ThroughputRefit(double ema_decay) : decay_(ema_decay) {
  if (!(ema_decay > 0.0 && ema_decay < 1.0))
    throw Error("ema_decay", "got " + std::to_string(ema_decay), "a number in (0, 1)");
}

void ThroughputRefit::observe(const PlanFamily& family, double measured_step_time_s, double predicted_step_time_s,
                              std::int64_t steps) {
  if (!std::isfinite(measured_step_time_s) || measured_step_time_s <= 0.0)
    throw Error("measured_step_time_s", "got " + std::to_string(measured_step_time_s), "a number > 0");
  if (!std::isfinite(predicted_step_time_s) || predicted_step_time_s <= 0.0)
    throw Error("predicted_step_time_s", "got " + std::to_string(predicted_step_time_s), "a number > 0");
  if (steps < 1) throw Error("steps", "got " + std::to_string(steps), "an integer >= 1");
  Entry* entry = nullptr;
  for (Entry& e : entries_)
    if (e.family == family) entry = &e;
  if (!entry) {
    entries_.push_back(Entry{family});
    entry = &entries_.back();
  }
  const double keep = std::pow(decay_, static_cast<double>(steps));
  entry->ratio_sum = keep * entry->ratio_sum + (1.0 - keep) * measured_step_time_s / predicted_step_time_s;
  entry->weight = keep * entry->weight + (1.0 - keep);
}

double ThroughputRefit::scale(const PlanFamily& family) const {
  for (const Entry& e : entries_)
    if (e.family == family) return e.ratio_sum / e.weight;
  return 1.0;
}

void ThroughputRefit::rescale(const PlanFamily& family, double factor) {
  if (!std::isfinite(factor) || factor <= 0.0)
    throw Error("factor", "got " + std::to_string(factor), "a number > 0");
  for (Entry& e : entries_)
    if (e.family == family) e.ratio_sum *= factor;
}

bool ThroughputRefit::observed(const PlanFamily& family) const {
  for (const Entry& e : entries_)
    if (e.family == family) return true;
  return false;
}

}  // namespace tessera

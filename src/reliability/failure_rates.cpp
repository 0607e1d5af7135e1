#include "reliability/failure_rates.h"

#include <cmath>

#include "core/checks.h"
#include "core/error.h"
#include "core/units.h"

namespace tessera {

namespace {
// Llama 3 (arXiv 2407.21783), section 3.3.4: a 54-day snapshot of pre-training, 466 job
// interruptions, 47 planned, 419 unexpected; Table 5: GPU issues 58.7% of the unexpected ones.
// Section 3.3.1 / 3.3.4: 16,384 H100 GPUs, 8 per server (Grand Teton), so 2,048 nodes.
constexpr double kLlama3Days = 54.0;
constexpr double kLlama3Unexpected = 419.0;
constexpr double kLlama3Planned = 47.0;
constexpr std::int64_t kLlama3Gpus = 16384;
constexpr std::int64_t kLlama3Nodes = 2048;
constexpr double kLlama3GpuShare = 0.587;
// Far above any measured fleet (a failure every ~4 s per GPU): a larger rate is a unit slip.
constexpr double kMaxRatePerHour = 1000.0;
}  // namespace

void FailureRates::validate() const {
  require_non_negative_real("failures.per_gpu_hour", per_gpu_hour, kMaxRatePerHour);
  require_non_negative_real("failures.per_node_hour", per_node_hour, kMaxRatePerHour);
  require_non_negative_real("failures.planned_per_node_hour", planned_per_node_hour, kMaxRatePerHour);
  if (per_gpu_hour == 0 && per_node_hour == 0)
    throw Error("failures", "both failure rates are 0 (the job never fails)", "a positive GPU or node failure rate");
}

FailureRates rates_from_fleet_report(const FleetReport& r) {
  require_positive_real("report.hours", r.hours, 1e9);
  require_positive("report.gpus", r.gpus);
  require_positive("report.nodes", r.nodes);
  require_non_negative_real("report.unexpected", r.unexpected, 1e12);
  require_non_negative_real("report.planned", r.planned, 1e12);
  require_in_range("report.gpu_share", r.gpu_share, 0.0, 1.0, "");
  FailureRates rates;
  rates.per_gpu_hour = r.gpu_share * r.unexpected / (r.hours * static_cast<double>(r.gpus));
  rates.per_node_hour = (1.0 - r.gpu_share) * r.unexpected / (r.hours * static_cast<double>(r.nodes));
  rates.planned_per_node_hour = r.planned / (r.hours * static_cast<double>(r.nodes));
  return rates;
}

FleetReport llama3_fleet_report() {
  return {kLlama3Unexpected, kLlama3Planned, kLlama3Days * units::kHoursPerDay, kLlama3Gpus, kLlama3Nodes,
          kLlama3GpuShare};
}

FailureRates default_failure_rates() { return rates_from_fleet_report(llama3_fleet_report()); }

std::int64_t job_nodes(std::int64_t gpus, std::int64_t gpus_per_node) {
  require_positive("gpus", gpus);
  require_positive("gpus_per_node", gpus_per_node);
  return (gpus + gpus_per_node - 1) / gpus_per_node;
}

double job_failures_per_hour(const FailureRates& rates, std::int64_t gpus, std::int64_t gpus_per_node) {
  return rates.per_gpu_hour * static_cast<double>(gpus) +
         rates.per_node_hour * static_cast<double>(job_nodes(gpus, gpus_per_node));
}

double job_mtbf_s(const FailureRates& rates, std::int64_t gpus, std::int64_t gpus_per_node) {
  rates.validate();
  return units::kSecondsPerHour / job_failures_per_hour(rates, gpus, gpus_per_node);
}

double job_planned_per_hour(const FailureRates& rates, std::int64_t gpus, std::int64_t gpus_per_node) {
  return rates.planned_per_node_hour * static_cast<double>(job_nodes(gpus, gpus_per_node));
}

double job_node_losses_per_hour(const FailureRates& rates, std::int64_t gpus) {
  return rates.per_gpu_hour * static_cast<double>(gpus);
}

}  // namespace tessera

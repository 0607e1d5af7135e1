#include "evaluation/calibration_runs.h"

#include "core/error.h"

namespace tessera {

RunMeasurement run_measurement(const ValidationResult& row, const std::string& origin) {
  RunMeasurement m;
  m.id = origin.empty() ? row.id : origin + ":" + row.id;
  m.model = row.model;
  m.gpu = row.cluster.gpu;
  m.shape = {row.cluster.gpus(), row.cluster.gpus_per_node, row.network_gbps_per_gpu};
  m.plan = row.plan_value;
  m.workload = row.workload;
  m.iteration_time_s = row.measured_time_s;
  return m;
}

std::vector<RunMeasurement> runs_from_table(const CsvTable& table, const std::string& origin) {
  const ValidationReport report = validate_runs(table);
  if (!report.skipped.empty()) {
    const ValidationSkip& first = report.skipped.front();
    throw Error("runs:" + origin + ":" + first.id + "." + first.field, first.problem, first.allowed);
  }
  std::vector<RunMeasurement> out;
  out.reserve(report.rows.size());
  for (const auto& row : report.rows) out.push_back(run_measurement(row, origin));
  return out;
}

}  // namespace tessera

// Measured runs of a validation-schema CSV (../shared/validation/README.md) as calibration
// measurements: each row's model, cluster shape, plan and workload as `tessera validate` reads
// them (empty knobs filled once, with the catalog), and its measured metric as an iteration time.
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurement.h"
#include "evaluation/validation.h"
#include "formats/csv_table.h"

namespace tessera {

RunMeasurement run_measurement(const ValidationResult& row, const std::string& origin);
// Every row of the table (rows `validate` skips are errors here: calibrating on a row it cannot
// read would be silent). `origin` names the file in measurement ids.
std::vector<RunMeasurement> runs_from_table(const CsvTable& table, const std::string& origin);

}  // namespace tessera

// Predicted peak memory against measured peaks (`tessera validate RUNS.csv --memory PEAKS.csv`).
// PEAKS.csv has a header and the columns (../shared/validation/h200/memory.csv):
//   id                  a row of the runs files (the configuration that was run)
//   ran                 yes | out_of_memory
//   peak_allocated_gib  torch.cuda.max_memory_allocated() over the run, GiB (required when ran = yes)
//   peak_reserved_gib   torch.cuda.max_memory_reserved(), GiB (optional)
//   params              the model's parameter count (optional: checks the model Tessera built)
// The measured allocated peak is the tensors the caching allocator handed out, so it is compared
// with the predicted peak less the runtime reserve (MemoryBreakdown::framework_bytes: CUDA
// context, workspaces, NCCL, fragmentation); the verdict is the estimate's fits (the whole
// predicted peak against the GPU's usable memory) against whether the run ran.
#pragma once

#include <string>
#include <vector>

#include "evaluation/validation.h"
#include "formats/csv_table.h"

namespace tessera {

struct MeasuredPeak {
  std::string id;
  bool ran = true;
  double allocated_gib = -1;  // -1: not measured (a run that ran out of memory)
  double reserved_gib = -1;
  double params = -1;
};

// Throws Error("memory.<column>", ...) for a missing column, an unknown `ran`, a negative or
// non-numeric peak, a run that ran without its allocated peak, or an id given twice.
std::vector<MeasuredPeak> read_measured_peaks(const CsvTable& table);

struct MemoryCheckRow {
  std::string id;
  bool ran = true;
  bool predicted_fits = true;
  double measured_gib = -1;   // allocated peak, -1 when not measured
  double predicted_gib = 0;   // predicted allocated peak (tensors only)
  double predicted_total_gib = 0;  // with the runtime reserve, what `fits` compares
  double usable_gib = 0;
  double error_pct = 0;       // 100 (predicted - measured) / measured; 0 when not measured
  double params_error_pct = 0;  // Tessera's parameter count against `params`; 0 when not given
  bool verdict_right() const { return predicted_fits == ran; }
};

struct MemoryCheck {
  std::vector<MemoryCheckRow> rows;
  std::size_t measured = 0;  // rows with an allocated peak
  double median_abs_error_pct = 0, max_abs_error_pct = 0;
  // Verdict confusion: predicted fits / does not fit against ran / ran out of memory.
  std::size_t fits_ran = 0, fits_oom = 0, no_fit_ran = 0, no_fit_oom = 0;
};

// Every peak's id must be a row or a configuration of `report` (Error "memory.id" otherwise).
MemoryCheck check_memory(const std::vector<MeasuredPeak>& peaks, const ValidationReport& report);

}  // namespace tessera

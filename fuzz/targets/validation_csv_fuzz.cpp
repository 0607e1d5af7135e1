// `tessera validate FILE.csv`: the CSV reader (formats/csv_table.h) and every row's prediction
// (evaluation/validation.h, closed-form pipeline term, so an exec stays short).
#include "evaluation/validation.h"
#include "formats/csv_table.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto table = tessera::parse_csv(tessera::fuzz::as_text(data, size), "csv");
    tessera::validate_runs(table, tessera::PipelineModel::closed_form);
  });
}

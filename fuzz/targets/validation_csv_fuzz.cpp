// `tessera validate FILE.csv`: the CSV reader (io/csv_table.h) and every row's prediction
// (io/validation.h, closed-form pipeline term, so an exec stays short).
#include "fuzz_input.h"
#include "io/csv_table.h"
#include "io/validation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto table = tessera::parse_csv(tessera::fuzz::as_text(data, size), "csv");
    tessera::validate_runs(table, tessera::PipelineModel::closed_form);
  });
}

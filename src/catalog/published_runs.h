// The published runs Tessera ships (data/validation/: every validation-schema CSV of
// ../shared/validation/, with its READMEs, embedded into the binary), and how `validate` and
// `calibrate` find a table: a built-in name ("public_runs", "moe_runs", "vtrain_runs", "h200/runs",
// "h200/memory"; forgiving, as every built-in name), or a CSV path.
#pragma once

#include <string>
#include <vector>

#include "formats/csv_table.h"

namespace tessera {

// The built-in tables' names: their paths under data/validation/ without ".csv", in file order.
std::vector<std::string> builtin_published_run_names();

// A table's text and the name reports use for it (the built-in name, or the path as given).
struct PublishedRunsText {
  std::string name;
  std::string text;
};
// A path that exists is read as a file; otherwise a built-in name (with or without ".csv"); a
// path-like argument (a '/' or ".csv") that is neither gets the file's error, unless a built-in
// name is near it ("h200/memry": Error(field, "unknown table or file 'x'; did you mean y?", ...));
// any other gets Error(field, "unknown table 'x'; did you mean y?", <names, or a CSV path>).
PublishedRunsText load_published_runs_text(const std::string& name_or_path, const std::string& field);
// The same table read as CSV (formats/csv_table.h), named as load_published_runs_text names it.
CsvTable load_published_runs(const std::string& name_or_path, const std::string& field);

}  // namespace tessera

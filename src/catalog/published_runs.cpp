#include "catalog/published_runs.h"

#include <filesystem>

#include "catalog/builtin_data.h"
#include "catalog/name_match.h"
#include "core/error.h"
#include "formats/json_fields.h"

namespace tessera {

namespace {
constexpr std::string_view kRunsDir = "validation/";
constexpr std::string_view kCsvSuffix = ".csv";

std::string builtin_path(const std::string& name) { return std::string(kRunsDir) + name + std::string(kCsvSuffix); }

PublishedRunsText builtin_table(const std::string& name) {
  return {name, std::string(find_builtin_file(builtin_path(name))->text)};
}
}  // namespace

std::vector<std::string> builtin_published_run_names() { return builtin_names(kRunsDir, kCsvSuffix); }

PublishedRunsText load_published_runs_text(const std::string& name_or_path, const std::string& field) {
  std::error_code ec;
  if (!name_or_path.empty() && std::filesystem::is_regular_file(name_or_path, ec))
    return {name_or_path, json_fields::read_text_file(name_or_path, field)};
  const auto names = builtin_published_run_names();
  std::string name = name_or_path;
  if (name.ends_with(kCsvSuffix)) name.resize(name.size() - kCsvSuffix.size());
  if (const auto index = match_name(name, names, field)) return builtin_table(names[*index]);
  // A path-like argument near a built-in name ("h200/memry") is most likely that name mistyped;
  // one near none is a path, and gets the file's own error ("cannot open ...").
  const std::string suggestion = either_of(nearest_names(name, names));
  const bool path_like = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(kCsvSuffix);
  if (path_like && suggestion.empty()) return {name_or_path, json_fields::read_text_file(name_or_path, field)};
  throw unknown_name_error(field, path_like ? "table or file" : "table", name_or_path, suggestion,
                           joined_names(names) + ", or a CSV path");
}

CsvTable load_published_runs(const std::string& name_or_path, const std::string& field) {
  const PublishedRunsText table = load_published_runs_text(name_or_path, field);
  return parse_csv(table.text, table.name);
}

}  // namespace tessera

#include "catalog/data_mixes.h"

#include <filesystem>

#include "catalog/builtin_data.h"
#include "catalog/name_match.h"
#include "core/error.h"
#include "formats/data_mix_json.h"
#include "formats/json_fields.h"

namespace tessera {

using namespace json_fields;

namespace {
constexpr std::string_view kMixDir = "mixes/";

std::string joined_mix_names() {
  std::string list;
  for (const auto& n : builtin_data_mix_names()) list += (list.empty() ? "" : ", ") + n;
  return list + ", a mix .json or a samples .jsonl path";
}
}  // namespace

std::vector<std::string> builtin_data_mix_names() { return builtin_json_names(kMixDir); }

DataMix load_data_mix(const std::string& name_or_path) {
  // An exact built-in name first, then a file, then a forgiving match (catalog/name_match.h).
  const auto builtin = [](const std::string& name) {
    const auto* file = find_builtin_file(std::string(kMixDir) + name + std::string(kJsonSuffix));
    return data_mix_from_json(parse(std::string(file->text), "data '" + name + "'"), "data");
  };
  if (find_builtin_file(std::string(kMixDir) + name_or_path + std::string(kJsonSuffix))) return builtin(name_or_path);
  std::error_code ec;
  if (name_or_path.empty() || !std::filesystem::is_regular_file(name_or_path, ec)) {
    const auto names = builtin_data_mix_names();
    if (const auto index = match_name(name_or_path, names, "data")) return builtin(names[*index]);
    throw unknown_name_error("data", "data mix", name_or_path, either_of(nearest_names(name_or_path, names)),
                             joined_mix_names() + " (not a built-in, not a file)");
  }
  if (std::filesystem::path(name_or_path).extension() == ".jsonl")
    return data_mix_from_jsonl(read_text_file(name_or_path, "data"), std::filesystem::path(name_or_path).stem().string());
  return data_mix_from_json(parse_file(name_or_path, "data"), "data");
}

}  // namespace tessera

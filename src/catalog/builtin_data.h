// The files under data/, embedded into the binary at build time (cmake/EmbedData.cmake), so the
// main job runs with no input files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct BuiltinFile {
  std::string_view path;  // relative to data/, e.g. "models/llama2-7b.json"
  std::string_view text;
};

const std::vector<BuiltinFile>& builtin_files();
// The text of data/<path>, or nullptr if there is no such built-in file.
const BuiltinFile* find_builtin_file(std::string_view path);

// The names of the built-in files in data/<folder> ("models/", "validation/", ...) that end in
// `suffix`, without the folder and the suffix, in file order.
inline std::vector<std::string> builtin_names(std::string_view folder, std::string_view suffix) {
  std::vector<std::string> names;
  for (const auto& file : builtin_files())
    if (file.path.starts_with(folder) && file.path.ends_with(suffix))
      names.emplace_back(file.path.substr(folder.size(), file.path.size() - folder.size() - suffix.size()));
  return names;
}

// The suffix of the built-in JSON files (models, mixes, multimodal models).
inline constexpr std::string_view kJsonSuffix = ".json";

// The built-in JSON files' names in data/<folder> ("models/", "mixes/", ...).
inline std::vector<std::string> builtin_json_names(std::string_view folder) { return builtin_names(folder, kJsonSuffix); }

}  // namespace tessera

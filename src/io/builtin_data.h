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

}  // namespace tessera

#include "formats/sample_index.h"

#include <filesystem>

#include "core/error.h"
#include "formats/json_fields.h"
#include "formats/sample_file.h"

namespace tessera {

namespace {

using Json = nlohmann::json;

std::string path_field(const Json& v, const std::string& field, const std::string& folder) {
  if (!v.is_string() || v.get<std::string>().empty())
    throw Error(field, "expected a file path, got " + json_fields::excerpt(v), "a path relative to the index's folder");
  const std::filesystem::path p(v.get<std::string>());
  return p.is_absolute() || folder.empty() ? p.string() : (std::filesystem::path(folder) / p).string();
}

std::vector<std::string> image_paths(const Json& v, const std::string& field, const std::string& folder) {
  if (!v.is_array()) return {path_field(v, field, folder)};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(path_field(v[i], field + "[" + std::to_string(i) + "]", folder));
  return out;
}

IndexedSample indexed_sample(const Json& j, const std::string& where, const std::string& folder) {
  json_fields::reject_unknown_keys(j, where, {"text", "image", "text_tokens", "image_tokens", "generated_tokens"});
  IndexedSample s;
  s.tokens = sample_tokens_of(j, where);
  if (j.contains("text")) {
    if (s.tokens.text_tokens.size() != 1)
      throw Error(where + ".text_tokens", "a text file needs its one token count", "\"text_tokens\": N");
    s.text_path = path_field(j.at("text"), where + ".text", folder);
  }
  if (j.contains("image")) s.image_paths = image_paths(j.at("image"), where + ".image", folder);
  if (s.image_paths.size() != s.tokens.image_tokens.size())
    throw Error(where + ".image_tokens", std::to_string(s.tokens.image_tokens.size()) + " counts for " +
                                             std::to_string(s.image_paths.size()) + " image files",
                "one count per image file");
  return s;
}

}  // namespace

std::vector<IndexedSample> parse_sample_index(const std::string& text, const std::string& folder, const std::string& what) {
  std::vector<IndexedSample> samples;
  for_each_json_line(text, what, [&](const Json& j, const std::string& where) {
    samples.push_back(indexed_sample(j, where, folder));
  });
  return samples;
}

std::vector<IndexedSample> read_sample_index(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().string();
  return parse_sample_index(json_fields::read_text_file(path, "index"), folder, "index");
}

}  // namespace tessera

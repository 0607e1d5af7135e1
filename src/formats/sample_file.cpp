#include "formats/sample_file.h"

#include <cmath>
#include <functional>

#include "core/error.h"
#include "formats/json_fields.h"

namespace tessera {

namespace {

using Json = nlohmann::json;

std::int64_t token_count(const Json& v, const std::string& field) {
  const std::string allowed = "an integer from 0 to " + std::to_string(kMaxSampleTokens);
  // exact_integer refuses booleans and 2^63 (stored unsigned) instead of wrapping them.
  if (const auto t = json_fields::exact_integer(v)) {
    if (*t < 0 || *t > kMaxSampleTokens) throw Error(field, "got " + std::to_string(*t), allowed);
    return *t;
  }
  throw Error(field, "expected a token count, got " + json_fields::excerpt(v), allowed);
}

std::vector<std::int64_t> token_counts(const Json& v, const std::string& field, bool number_allowed) {
  if (number_allowed && v.is_number()) return {token_count(v, field)};
  if (!v.is_array())
    throw Error(field, "expected " + std::string(number_allowed ? "a token count or " : "") + "an array of token counts",
                "[n, ...]");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(token_count(v[i], field + "[" + std::to_string(i) + "]"));
  return out;
}

}  // namespace

SampleTokens sample_tokens_of(const nlohmann::json& j, const std::string& where) {
  SampleTokens s;
  if (j.contains("text_tokens")) s.text_tokens = token_counts(j.at("text_tokens"), where + ".text_tokens", true);
  if (j.contains("image_tokens")) s.image_tokens = token_counts(j.at("image_tokens"), where + ".image_tokens", false);
  if (j.contains("generated_tokens")) s.generated_tokens = token_count(j.at("generated_tokens"), where + ".generated_tokens");
  if (s.backbone_tokens() > kMaxSampleTokens)
    throw Error(where + ".text_tokens", "text and image tokens add up to " + std::to_string(s.backbone_tokens()),
                "at most " + std::to_string(kMaxSampleTokens) + " in all");
  if (s.backbone_tokens() == 0 && s.generated_tokens == 0)
    throw Error(where, "the sample has no tokens", "at least one text, image or generated token");
  return s;
}

std::size_t for_each_json_line(const std::string& text, const std::string& what,
                               const std::function<void(const nlohmann::json&, const std::string&)>& each) {
  std::size_t objects = 0;
  std::size_t start = 0;
  for (std::size_t line = 1; start < text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string row = text.substr(start, end - start);
    start = end + 1;
    if (row.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = what + ":" + std::to_string(line);
    const Json j = json_fields::parse(row, where);
    json_fields::require_object(j, where);
    each(j, where);
    ++objects;
  }
  if (objects == 0) throw Error(what, "no samples", "one JSON object per line");
  return objects;
}

std::vector<SampleTokens> parse_sample_lines(const std::string& text, const std::string& what) {
  std::vector<SampleTokens> samples;
  for_each_json_line(text, what, [&](const Json& j, const std::string& where) {
    json_fields::reject_unknown_keys(j, where, {"text_tokens", "image_tokens", "generated_tokens"});
    samples.push_back(sample_tokens_of(j, where));
  });
  return samples;
}

std::vector<SampleTokens> read_sample_file(const std::string& path) {
  return parse_sample_lines(json_fields::read_text_file(path, "samples"), "samples");
}

}  // namespace tessera

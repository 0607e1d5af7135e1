#include "formats/data_mix_json.h"

#include <sstream>

#include "core/error.h"
#include "formats/json_fields.h"

namespace tessera {

using namespace json_fields;

namespace {
constexpr std::int64_t kDefaultSequenceTokens = 8192;

std::vector<double> numbers(const nlohmann::json& j, const char* key, const std::string& path) {
  std::vector<double> out;
  if (!has(j, key)) return out;
  const auto& list = j.at(key);
  if (!list.is_array()) throw Error(path + "." + key, "not a list", "a list of numbers");
  for (const auto& v : list) {
    if (!v.is_number()) throw Error(path + "." + key, "holds a non-number", "a list of numbers");
    out.push_back(v.get<double>());
  }
  return out;
}
}  // namespace

DataMix data_mix_from_json(const nlohmann::json& j, const std::string& path) {
  require_object(j, path);
  reject_unknown_keys(j, path, {"name", "source", "notes", "sequence_tokens", "text", "images", "audio", "generate"});
  DataMix mix;
  mix.name = get_string_or(j, "name", path, "custom");
  mix.source = get_string_or(j, "source", path, "");
  mix.sequence_tokens = get_int_or(j, "sequence_tokens", path, kDefaultSequenceTokens);
  if (has(j, "text")) {
    const auto& t = j.at("text");
    const std::string p = path + ".text";
    require_object(t, p);
    reject_unknown_keys(t, p, {"median_tokens", "sigma", "cap_tokens"});
    mix.text_median_tokens = get_number(t, "median_tokens", p);
    mix.text_sigma = get_number_or(t, "sigma", p, 0.0);
    mix.text_cap_tokens = get_int_or(t, "cap_tokens", p, mix.sequence_tokens);
  }
  if (has(j, "images")) {
    const auto& im = j.at("images");
    const std::string p = path + ".images";
    require_object(im, p);
    reject_unknown_keys(im, p, {"min", "max", "sizes"});
    mix.images_min = get_int_or(im, "min", p, 1);
    mix.images_max = get_int_or(im, "max", p, mix.images_min);
    if (!has(im, "sizes") || !im.at("sizes").is_array()) throw Error(p + ".sizes", "missing or not a list", "[{\"px\", \"probability\"}, ...]");
    for (const auto& s : im.at("sizes")) {
      require_object(s, p + ".sizes");
      reject_unknown_keys(s, p + ".sizes", {"px", "probability"});
      mix.image_sizes.push_back({get_number(s, "px", p + ".sizes"), get_number(s, "probability", p + ".sizes")});
    }
  }
  if (has(j, "audio")) {
    const auto& a = j.at("audio");
    const std::string p = path + ".audio";
    require_object(a, p);
    reject_unknown_keys(a, p, {"probability", "min_s", "max_s"});
    mix.audio_probability = get_number_or(a, "probability", p, 1.0);
    mix.audio_min_s = get_number(a, "min_s", p);
    mix.audio_max_s = get_number_or(a, "max_s", p, mix.audio_min_s);
  }
  if (has(j, "generate")) {
    const auto& g = j.at("generate");
    const std::string p = path + ".generate";
    require_object(g, p);
    reject_unknown_keys(g, p, {"probability", "images"});
    mix.generate_probability = get_number(g, "probability", p);
    mix.generated_images = get_int_or(g, "images", p, 1);
  }
  mix.validate();
  return mix;
}

DataMix data_mix_from_jsonl(const std::string& text, const std::string& name) {
  DataMix mix;
  mix.name = name;
  mix.sequence_tokens = kDefaultSequenceTokens;
  std::istringstream lines(text);
  std::string line;
  std::int64_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    // file:line, so an error names where to look (issue 13, D1).
    const std::string p = "data " + name + ":" + std::to_string(number);
    const auto j = parse(line, p);
    require_object(j, p);
    reject_unknown_keys(j, p, {"text_tokens", "images", "audio_s", "generated_images"});
    Sample s;
    s.text_tokens = get_int_or(j, "text_tokens", p, 0);
    s.image_px = numbers(j, "images", p);
    s.audio_s = numbers(j, "audio_s", p);
    s.generated_images = get_int_or(j, "generated_images", p, 0);
    mix.samples.push_back(std::move(s));
  }
  if (mix.samples.empty()) throw Error("data", "the samples file has no samples", "one JSON object per line");
  mix.validate();
  return mix;
}

}  // namespace tessera

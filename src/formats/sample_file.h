// Sample files for `tessera balance --samples`: JSON Lines, one sample per line (blank lines
// skipped), each an object with
//   "text_tokens"       a token count, or an array of them (documents packed in the sample)
//   "image_tokens"      optional array: encoder tokens of each image
//   "generated_tokens"  optional count: tokens the generator produces
// e.g. {"text_tokens": 1500} or {"text_tokens": [40], "image_tokens": [576], "generated_tokens": 256}.
// Unknown keys are rejected; errors name the line ("samples:12.text_tokens").
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "balance/sample_tokens.h"

namespace tessera {

std::vector<SampleTokens> read_sample_file(const std::string& path);
// `what` names the source in errors ("samples").
std::vector<SampleTokens> parse_sample_lines(const std::string& text, const std::string& what);

// One sample object's token fields (the keys above; the caller rejects unknown keys), checked.
SampleTokens sample_tokens_of(const nlohmann::json& object, const std::string& where);
// Calls `each(object, "what:LINE")` for every non-blank line, which must be a JSON object; returns
// how many there were (at least one, else Error(what, "no samples")).
std::size_t for_each_json_line(const std::string& text, const std::string& what,
                               const std::function<void(const nlohmann::json&, const std::string&)>& each);

}  // namespace tessera

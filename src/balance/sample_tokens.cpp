#include "balance/sample_tokens.h"

#include <string>

#include "core/error.h"

namespace tessera {

std::int64_t SampleTokens::backbone_tokens() const {
  std::int64_t total = 0;
  for (std::int64_t t : text_tokens) total += t;
  for (std::int64_t t : image_tokens) total += t;
  return total;
}

void SampleTokens::validate() const {
  const std::string limit = "an integer from 0 to " + std::to_string(kMaxSampleTokens);
  auto check = [&](const char* field, std::int64_t value) {
    if (value < 0 || value > kMaxSampleTokens)
      throw Error(std::string("sample.") + field, "got " + std::to_string(value), limit);
  };
  std::int64_t total = 0;
  for (std::int64_t t : text_tokens) {
    check("text_tokens", t);
    total += t;
  }
  for (std::int64_t t : image_tokens) {
    check("image_tokens", t);
    total += t;
  }
  check("generated_tokens", generated_tokens);
  if (total > kMaxSampleTokens)
    throw Error("sample.text_tokens", "text and image tokens add up to " + std::to_string(total), limit);
  if (total == 0 && generated_tokens == 0)
    throw Error("sample", "has no tokens", "at least one text, image or generated token");
}

}  // namespace tessera

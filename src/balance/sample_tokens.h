// SampleTokens: one training example as the balancer sees it. Its backbone tokens are text documents
// (several short documents may be packed into one sample, each its own causal span) plus the
// tokens of its images, which the encoder produces and the backbone then reads; a generator (for
// example a diffusion transformer) may produce further tokens from it.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

struct SampleTokens {
  std::vector<std::int64_t> text_tokens;   // one entry per document packed in this sample
  std::vector<std::int64_t> image_tokens;  // one entry per image: encoder tokens (also backbone tokens)
  std::int64_t generated_tokens = 0;       // tokens the generator produces for this sample

  // Text plus image tokens: what the sample occupies in a packed backbone sequence.
  std::int64_t backbone_tokens() const;
  // Throws Error("sample.<field>", ...) for negative counts, an empty sample or a sample longer
  // than kMaxSampleTokens.
  void validate() const;
};

// Longest sample accepted (tokens of one field or of the backbone): far beyond any context window,
// small enough that squares of token counts stay exact in double.
inline constexpr std::int64_t kMaxSampleTokens = 1LL << 30;

}  // namespace tessera

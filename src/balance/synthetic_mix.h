// The pinned synthetic sample mixes of `tessera balance --synthetic`: fixed distributions, so a
// seed gives the same samples everywhere.
//
//   wlb-like   long-context pre-training documents, one per sample: 73% lognormal (median 1,500,
//              sigma 1.2), 25% lognormal (median 12,000, sigma 0.8), 2% uniform on [32,768,
//              131,072], capped at 131,072 tokens. Documents under 64K carry about 78% of the
//              tokens; the mean is about 8,000 (the long tail WLB-LLM, OSDI'25, §3 describes).
//   mllm-like  the caption-like mix of the multimodal planner: one image per sample at 224 / 336 /
//              448 / 672 px (256 / 576 / 1,024 / 2,304 ViT-H/14 tokens) with probability
//              0.2 / 0.4 / 0.3 / 0.1; text lognormal (median 48, sigma 0.8) capped at 1,024
//              tokens; 30% of the samples also generate one 256-token image.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "balance/sample_tokens.h"

namespace tessera {

enum class SyntheticMix { wlb_like, mllm_like };

const char* to_string(SyntheticMix mix);
SyntheticMix parse_synthetic_mix(const std::string& text);  // throws Error("synthetic", ...)

// Most samples one call generates (each takes ~100 bytes with its token lists).
inline constexpr std::int64_t kMaxSyntheticSamples = 20'000'000;

// The first n samples of the mix's stream for `seed`; a longer stream starts with the shorter one.
std::vector<SampleTokens> synthetic_samples(SyntheticMix mix, std::int64_t n, std::uint64_t seed);

}  // namespace tessera

#include "balance/synthetic_mix.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/seeded_random.h"
#include "core/checks.h"
#include "core/error.h"

namespace tessera {

namespace {

// wlb-like (pinned; see the header).
constexpr double kShortShare = 0.73;
constexpr double kShortMedianTokens = 1500.0;
constexpr double kShortSigma = 1.2;
constexpr double kMediumShare = 0.25;
constexpr double kMediumMedianTokens = 12000.0;
constexpr double kMediumSigma = 0.8;
constexpr double kLongMinTokens = 32768.0;
constexpr double kLongMaxTokens = 131072.0;
constexpr std::int64_t kDocumentCapTokens = 131072;

// mllm-like (pinned): image sizes in ViT-H/14 tokens, (px / 14)^2, and their probabilities.
constexpr std::array<std::int64_t, 4> kImageTokens = {256, 576, 1024, 2304};
constexpr std::array<double, 4> kImageShare = {0.2, 0.4, 0.3, 0.1};
constexpr double kCaptionMedianTokens = 48.0;
constexpr double kCaptionSigma = 0.8;
constexpr std::int64_t kCaptionCapTokens = 1024;
constexpr double kGenerateShare = 0.3;
constexpr std::int64_t kGeneratedImageTokens = 256;

// Rounds a drawn length to a whole token count in [1, cap].
std::int64_t whole_tokens(double tokens, std::int64_t cap) {
  return std::clamp<std::int64_t>(std::llround(tokens), 1, cap);
}

SampleTokens wlb_like(SeededRandom& random) {
  const double pick = random.uniform();
  double tokens = 0;
  if (pick < kShortShare) tokens = random.lognormal(kShortMedianTokens, kShortSigma);
  else if (pick < kShortShare + kMediumShare) tokens = random.lognormal(kMediumMedianTokens, kMediumSigma);
  else tokens = kLongMinTokens + (kLongMaxTokens - kLongMinTokens) * random.uniform();
  SampleTokens s;
  s.text_tokens.push_back(whole_tokens(tokens, kDocumentCapTokens));
  return s;
}

SampleTokens mllm_like(SeededRandom& random) {
  const double pick = random.uniform();
  std::size_t size = kImageTokens.size() - 1;
  double below = 0;
  for (std::size_t i = 0; i < kImageShare.size(); ++i) {
    below += kImageShare[i];
    if (pick < below) {
      size = i;
      break;
    }
  }
  SampleTokens s;
  s.image_tokens.push_back(kImageTokens[size]);
  s.text_tokens.push_back(whole_tokens(random.lognormal(kCaptionMedianTokens, kCaptionSigma), kCaptionCapTokens));
  if (random.uniform() < kGenerateShare) s.generated_tokens = kGeneratedImageTokens;
  return s;
}

}  // namespace

const char* to_string(SyntheticMix mix) {
  switch (mix) {
    case SyntheticMix::wlb_like: return "wlb-like";
    case SyntheticMix::mllm_like: return "mllm-like";
  }
  return "?";
}

SyntheticMix parse_synthetic_mix(const std::string& text) {
  if (text == "wlb-like") return SyntheticMix::wlb_like;
  if (text == "mllm-like") return SyntheticMix::mllm_like;
  throw Error("synthetic", "unknown mix '" + text + "'", "wlb-like, mllm-like");
}

std::vector<SampleTokens> synthetic_samples(SyntheticMix mix, std::int64_t n, std::uint64_t seed) {
  require_non_negative("n", n, kMaxSyntheticSamples);
  SeededRandom random(seed);
  std::vector<SampleTokens> samples;
  samples.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    samples.push_back(mix == SyntheticMix::wlb_like ? wlb_like(random) : mllm_like(random));
  return samples;
}

}  // namespace tessera

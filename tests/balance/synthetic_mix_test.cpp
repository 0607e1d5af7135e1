// The pinned mixes: wlb-like's mean (~8,000 tokens) and the share of tokens in documents under
// 64K (~78%), its bounds, and mllm-like's category shares, each against the numbers the issue
// pins; plus determinism and prefix stability.
#include "balance/synthetic_mix.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "core/error.h"

namespace tessera {
namespace {

constexpr std::int64_t kSamples = 200'000;

double share_error(std::int64_t n) { return 5.0 * std::sqrt(0.25 / static_cast<double>(n)); }

TEST(SyntheticMix, WlbLikeHasItsPinnedMeanTailAndBounds) {
  const auto samples = synthetic_samples(SyntheticMix::wlb_like, kSamples, 1);
  double total = 0, under_64k = 0;
  std::int64_t long_docs = 0, lo = kMaxSampleTokens, hi = 0;
  for (const SampleTokens& s : samples) {
    ASSERT_EQ(s.text_tokens.size(), 1u);
    ASSERT_TRUE(s.image_tokens.empty());
    const std::int64_t d = s.text_tokens[0];
    total += static_cast<double>(d);
    if (d < 65536) under_64k += static_cast<double>(d);
    long_docs += d >= 32768;
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_NEAR(total / kSamples, 8000.0, 250.0);
  EXPECT_NEAR(under_64k / total, 0.78, 0.015);
  EXPECT_GE(lo, 1);
  EXPECT_LE(hi, 131072);
  // At least 32K: the 2% uniform part plus each lognormal's tail, share x P(z > ln(32768 / median) / sigma).
  auto tail = [](double share, double median, double sigma) {
    return share * 0.5 * std::erfc(std::log(32768.0 / median) / sigma / std::sqrt(2.0));
  };
  EXPECT_NEAR(static_cast<double>(long_docs) / kSamples, 0.02 + tail(0.25, 12000, 0.8) + tail(0.73, 1500, 1.2),
              share_error(kSamples) / 2);
}

TEST(SyntheticMix, MllmLikeIsTheCaptionMix) {
  const auto samples = synthetic_samples(SyntheticMix::mllm_like, kSamples, 2);
  std::int64_t by_size[4] = {0, 0, 0, 0}, generating = 0, max_text = 0;
  std::vector<std::int64_t> text;
  for (const SampleTokens& s : samples) {
    ASSERT_EQ(s.image_tokens.size(), 1u);
    ASSERT_EQ(s.text_tokens.size(), 1u);
    const std::int64_t sizes[4] = {256, 576, 1024, 2304};
    const auto at = std::find(sizes, sizes + 4, s.image_tokens[0]) - sizes;
    ASSERT_LT(at, 4) << s.image_tokens[0];
    ++by_size[at];
    EXPECT_TRUE(s.generated_tokens == 0 || s.generated_tokens == 256);
    generating += s.generated_tokens > 0;
    text.push_back(s.text_tokens[0]);
    max_text = std::max(max_text, s.text_tokens[0]);
  }
  const double want[4] = {0.2, 0.4, 0.3, 0.1};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(static_cast<double>(by_size[k]) / kSamples, want[k], share_error(kSamples));
  EXPECT_NEAR(static_cast<double>(generating) / kSamples, 0.3, share_error(kSamples));
  std::nth_element(text.begin(), text.begin() + kSamples / 2, text.end());
  EXPECT_NEAR(static_cast<double>(text[kSamples / 2]), 48.0, 2.0);
  EXPECT_LE(max_text, 1024);
}

TEST(SyntheticMix, DeterministicPerSeedAndPrefixStable) {
  const auto a = synthetic_samples(SyntheticMix::wlb_like, 1000, 9);
  const auto b = synthetic_samples(SyntheticMix::wlb_like, 4000, 9);
  const auto c = synthetic_samples(SyntheticMix::wlb_like, 1000, 10);
  int differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].text_tokens, b[i].text_tokens);
    differ += a[i].text_tokens != c[i].text_tokens;
  }
  EXPECT_GT(differ, 900);
}

TEST(SyntheticMix, NamesParseAndUnknownNamesAreErrors) {
  EXPECT_EQ(parse_synthetic_mix("wlb-like"), SyntheticMix::wlb_like);
  EXPECT_EQ(parse_synthetic_mix(to_string(SyntheticMix::mllm_like)), SyntheticMix::mllm_like);
  try {
    parse_synthetic_mix("caption");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "synthetic");
    EXPECT_NE(e.allowed().find("mllm-like"), std::string::npos);
  }
  EXPECT_THROW(synthetic_samples(SyntheticMix::wlb_like, -1, 0), Error);
}

}  // namespace
}  // namespace tessera

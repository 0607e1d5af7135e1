// SampleTokens: backbone tokens are text plus image tokens; validate() names the bad field.
#include "balance/sample_tokens.h"

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "core/error.h"

namespace tessera {
namespace {

TEST(SampleTokens, BackboneTokensAddTextAndImagesButNotGeneratedTokens) {
  SampleTokens s;
  s.text_tokens = {100, 20};
  s.image_tokens = {576, 256};
  s.generated_tokens = 256;
  EXPECT_EQ(s.backbone_tokens(), 100 + 20 + 576 + 256);
  EXPECT_NO_THROW(s.validate());
}

TEST(SampleTokens, ValidateRejectsNegativeEmptyAndOversizedSamples) {
  auto field_of = [](const SampleTokens& s) { return testing::thrown_field([&] { s.validate(); }); };
  EXPECT_EQ(field_of(SampleTokens{{-1}, {}, 0}), "sample.text_tokens");
  EXPECT_EQ(field_of(SampleTokens{{1}, {-5}, 0}), "sample.image_tokens");
  EXPECT_EQ(field_of(SampleTokens{{1}, {}, -1}), "sample.generated_tokens");
  EXPECT_EQ(field_of(SampleTokens{{}, {}, 0}), "sample");
  EXPECT_EQ(field_of(SampleTokens{{kMaxSampleTokens, 1}, {}, 0}), "sample.text_tokens");
  EXPECT_EQ(field_of(SampleTokens{{}, {}, 256}), "<no error>");  // generation only is a valid sample
}

}  // namespace
}  // namespace tessera

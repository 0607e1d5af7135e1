// The built-in module shapes against their papers' parameter counts: GEMM weights are all but the
// biases, norms, patch embedding and positions, so they land within 2% below the published totals.
#include "balance/module_shape.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(ModuleShape, VitH14HasThePublished632MParameters) {
  // Dosovitskiy et al. 2021, Table 1: ViT-Huge, 632M parameters.
  const double published = 632e6;
  EXPECT_LE(kVitH14Encoder.gemm_weights(), published);
  EXPECT_GT(kVitH14Encoder.gemm_weights(), 0.98 * published);
  EXPECT_EQ(kVitH14Encoder.heads * kVitH14Encoder.head_dim, kVitH14Encoder.hidden);
}

TEST(ModuleShape, DitXl2HasThePublished675MParameters) {
  // Peebles & Xie 2023, Table 1: DiT-XL, 675M parameters (adaLN-Zero blocks).
  const double published = 675e6;
  EXPECT_LE(kDitXl2Generator.gemm_weights(), published);
  EXPECT_GT(kDitXl2Generator.gemm_weights(), 0.98 * published);
  EXPECT_EQ(kDitXl2Generator.heads * kDitXl2Generator.head_dim, kDitXl2Generator.hidden);
}

}  // namespace
}  // namespace tessera

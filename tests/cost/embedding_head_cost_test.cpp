// embedding_cost's dense gradient: the backward of a vocabulary-sized table moves bytes in
// proportion to the table, whatever the tokens, at the HBM rate.
#include "cost/embedding_head_cost.h"

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/units.h"
#include "cost/compute_cost.h"

namespace tessera {
namespace {

StageCost embedding(const ModelSpec& m, const Cluster& c, const Plan& p) {
  const std::int64_t seq = 4096;
  return embedding_cost(make_layer_context(m, c, p, seq, static_cast<double>(p.micro_batch * seq), true), 0.0);
}

// Two vocabularies, the same tokens: the backward differs by exactly the table's bytes per
// element x the extra (vocab / tp) x hidden elements at the HBM rate, and the forward not at all.
TEST(EmbeddingCost, DenseGradientScalesWithTheTableNotTheTokens) {
  const Cluster c = load_cluster("h100-sxm-80gb:8");
  for (TrainingFramework f : {TrainingFramework::megatron, TrainingFramework::torchtitan, TrainingFramework::pytorch}) {
    for (bool tied : {false, true}) {
      ModelSpec small = builtin_model("llama3-8b");
      small.tied_embeddings = tied;
      ModelSpec big = small;
      big.vocab = 2 * small.vocab;
      Plan p;
      p.framework = f;
      p.tp = f == TrainingFramework::pytorch ? 1 : 2;
      p.dp = 8 / p.tp;
      const StageCost a = embedding(small, c, p), b = embedding(big, c, p);
      const double elements = static_cast<double>(big.vocab - small.vocab) / static_cast<double>(p.tp) * small.hidden;
      const double bytes = dense_embedding_gradient_bytes_per_element(f, tied) * elements;
      EXPECT_DOUBLE_EQ(b.fwd_s, a.fwd_s) << to_string(f);
      EXPECT_NEAR(b.bwd_s - a.bwd_s, memory_bound_time_s(bytes, c.gpu), 1e-12) << to_string(f);
      EXPECT_NEAR(b.compute_s - a.compute_s, memory_bound_time_s(bytes, c.gpu), 1e-12) << to_string(f);
    }
  }
}

// The bytes per element: a zero-filled table in the gradient's dtype (16-bit, or fp32 for plain
// PyTorch's fp32 parameters), Megatron's add into the fp32 main gradient (read 2 + 4, write 4),
// plain PyTorch's sum of a tied table's two gradients (read 4 + 4, write 4).
TEST(EmbeddingCost, DenseGradientBytesPerFramework) {
  EXPECT_EQ(dense_embedding_gradient_bytes_per_element(TrainingFramework::megatron, true), 2.0 + 10.0);
  EXPECT_EQ(dense_embedding_gradient_bytes_per_element(TrainingFramework::megatron, false), 2.0 + 10.0);
  EXPECT_EQ(dense_embedding_gradient_bytes_per_element(TrainingFramework::torchtitan, false), units::kBytesBf16);
  EXPECT_EQ(dense_embedding_gradient_bytes_per_element(TrainingFramework::pytorch, false), units::kBytesFp32);
  EXPECT_EQ(dense_embedding_gradient_bytes_per_element(TrainingFramework::pytorch, true), 4.0 + 12.0);
}

}  // namespace
}  // namespace tessera

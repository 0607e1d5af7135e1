// Peak memory of a plain PyTorch step (cost/eager_pytorch_memory.h) against closed forms written
// out here: 16 bytes of state per parameter at the end of backward, the loss backward's tensors
// without checkpointing, the gradients that gradient accumulation and DDP's buckets keep.
#include "cost/eager_pytorch_memory.h"

#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"
#include "core/units.h"
#include "cost/cost_model.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

using i64 = std::int64_t;

struct Step {
  ModelSpec model = builtin_model("llama3-8b");
  Cluster cluster = make_cluster(find_gpu("h200"), 1);
  Plan plan;
  Workload workload;
  Step(i64 mb, i64 gbs, i64 seq, Recompute recompute, i64 gpus = 1) {
    cluster = make_cluster(find_gpu("h200"), gpus);
    plan.framework = TrainingFramework::pytorch;
    plan.dp = gpus;
    plan.micro_batch = mb;
    plan.recompute = recompute;
    workload.global_batch = gbs;
    workload.seq_len = seq;
    validate_plan(plan, model, cluster, workload);
  }
  MemoryBreakdown memory() const { return estimate(model, cluster, plan, workload).memory; }
  // What PyTorch's allocator holds (the runtime reserve aside).
  double allocated() const {
    const MemoryBreakdown m = memory();
    return m.total() - m.framework_bytes;
  }
};

double params(const ModelSpec& m) { return count_parameters(m).total(); }

// Autograd's saved tensors per token and layer of a Llama layer under autocast, written out:
// 26 h (fp32 residual stream and norm outputs, five bf16 input casts) + 8 (two rsqrt) +
// 4 (a + g) d (q, k, v, SDPA output in bf16... q and output at a d, k and v at g d) + 4 a
// (logsumexp) + 8 f (SwiGLU's four bf16 tensors).
double saved_per_token_by_hand(const ModelSpec& m) {
  const double h = double(m.hidden), a = double(m.heads), g = double(m.kv_heads), d = double(m.head_dim);
  const double f = double(m.ffn_hidden);
  return 26.0 * h + 8.0 + 4.0 * a * d + 4.0 * g * d + 4.0 * a + 8.0 * f;
}

TEST(EagerPytorchMemory, SavedTensorsPerTokenMatchTheHandCount) {
  const ModelSpec m = builtin_model("llama3-8b");
  EXPECT_DOUBLE_EQ(eager_layer_saved_bytes_per_token(m), saved_per_token_by_hand(m));
}

// Full recompute, one micro-batch: the peak is the end of backward, where every fp32 gradient
// exists beside the fp32 parameters and both Adam moments: 16 bytes per parameter, and only the
// untied model's state (no tied second embedding gradient).
TEST(EagerPytorchMemory, BackwardEndHoldsSixteenBytesPerParameter) {
  const Step s(1, 1, 4096, Recompute::full);
  ASSERT_FALSE(s.model.tied_embeddings);
  const MemoryBreakdown m = s.memory();
  const double P = params(s.model);
  EXPECT_DOUBLE_EQ(m.weights_bytes, 4.0 * P);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 4.0 * P);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 8.0 * P);
  EXPECT_DOUBLE_EQ(s.allocated(), 16.0 * P);
}

// No checkpointing: the loss's backward holds the fp32 parameters and moments (12 B), every
// layer's saved tensors, every bf16 weight copy (2 B per linear weight, lm_head included), the
// final norm's and lm_head's inputs (10 h) and three fp32 tokens x vocab tensors (12 V).
TEST(EagerPytorchMemory, WithoutCheckpointingThePeakIsTheLossBackward) {
  const Step s(1, 1, 2048, Recompute::none);
  const ModelSpec& m = s.model;
  const ParameterCount c = count_parameters(m);
  const double T = 2048, h = double(m.hidden), V = double(m.vocab), L = double(m.layers);
  const double linear = L * (c.attention_per_layer + c.dense_mlp_per_layer) + c.unembedding;
  const double want = 12.0 * params(m) + L * saved_per_token_by_hand(m) * T + 2.0 * linear + 10.0 * h * T + 12.0 * V * T;
  EXPECT_NEAR(s.allocated(), want, 1e-9 * want);
}

// Gradient accumulation: the second micro-batch runs beside the first one's fp32 gradients.
TEST(EagerPytorchMemory, GradientAccumulationKeepsTheGradients) {
  const double one = Step(1, 1, 2048, Recompute::none).allocated();
  const Step two(1, 2, 2048, Recompute::none);
  EXPECT_NEAR(two.allocated() - one, 4.0 * params(two.model), 1e-6 * one);
}

// DDP (gradient_as_bucket_view=False, its default) keeps its buckets beside the gradients.
TEST(EagerPytorchMemory, DdpBucketsAddAGradientCopy) {
  const Step one(1, 1, 4096, Recompute::full);
  const Step two(1, 2, 4096, Recompute::full, 2);
  EXPECT_NEAR(two.allocated() - one.allocated(), 4.0 * params(one.model), 1e-6 * one.allocated());
}

// Plain PyTorch runs what a DDP / FSDP loop runs, and says which key it cannot.
TEST(EagerPytorchMemory, PlansThePlainLoopCannotRunNameTheKey) {
  Step s(1, 1, 4096, Recompute::full);
  auto field = [&](Plan p) {
    try {
      validate_plan(p, s.model, make_cluster(find_gpu("h200"), p.gpus()), s.workload);
    } catch (const Error& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  Plan p = s.plan;
  p.pp = 2;
  EXPECT_EQ(field(p), "pp");
  p = s.plan;
  p.tp = 2;
  EXPECT_EQ(field(p), "tp");
  p = s.plan;
  p.recompute = Recompute::selective;
  EXPECT_EQ(field(p), "recompute");
  p = s.plan;
  p.precision = Precision::fp8;
  EXPECT_EQ(field(p), "precision");
  p = s.plan;
  p.framework = TrainingFramework::deepspeed;
  p.cp = 2;
  EXPECT_EQ(field(p), "cp");
  p.cp = 1;
  EXPECT_EQ(field(p), "accepted");
}

}  // namespace
}  // namespace tessera

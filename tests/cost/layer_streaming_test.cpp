// MegaTrain's layer streaming (cost/layer_streaming.h) against closed forms written out here: 12 B
// of host state per parameter with the pinned slabs, four bf16 copies of the largest layer on the
// GPU, activations proportional to the micro-batch, three forward passes per layer, three weight
// copies per micro-batch; and the rules of framework=megatrain, each naming its key.
#include "cost/layer_streaming.h"

#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"
#include "cost/cost_model.h"
#include "cost/offload_time.h"
#include "model/flops.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

using i64 = std::int64_t;

struct StreamedStep {
  ModelSpec model = builtin_model("llama3-8b");
  Cluster cluster = make_cluster(find_gpu("h200"), 1);
  Plan plan;
  Workload workload{64, 1024};
  explicit StreamedStep(i64 mb) {
    plan.framework = TrainingFramework::megatrain;
    plan.recompute = Recompute::full;
    plan.micro_batch = mb;
    plan.offload = {MemoryTier::cpu, MemoryTier::cpu, MemoryTier::gpu};
    validate_plan(plan, model, cluster, workload);
  }
  Estimate run() const { return estimate(model, cluster, plan, workload); }
};

double layer_params(const ModelSpec& m) {
  const ParameterCount c = count_parameters(m);
  return c.attention_per_layer + c.norms_per_layer + c.dense_mlp_per_layer;
}

TEST(LayerStreaming, HostHoldsTwelveBytesPerParameterAndThePinnedSlabs) {
  const StreamedStep s(4);
  const double want = 12.0 * count_parameters(s.model).total() + 2.0 * layer_params(s.model) * (12.0 + 2.0);
  EXPECT_DOUBLE_EQ(s.run().memory.host_bytes, want);
  EXPECT_DOUBLE_EQ(s.run().host_memory_bytes_per_node, want);  // one GPU: the node's whole host state
}

TEST(LayerStreaming, TheGpuHoldsFourLayerCopiesAndTheResidentEmbeddingAndHead) {
  const StreamedStep s(4);
  const ParameterCount c = count_parameters(s.model);
  const double resident = c.embedding + c.output_head + c.final_norm;
  const MemoryBreakdown mem = s.run().memory;
  EXPECT_DOUBLE_EQ(mem.weights_bytes, 2.0 * (4.0 * layer_params(s.model) + resident));
  EXPECT_DOUBLE_EQ(mem.gradients_bytes, 2.0 * (2.0 * layer_params(s.model) + resident));
  EXPECT_DOUBLE_EQ(mem.optimizer_bytes, 0.0);
}

TEST(LayerStreaming, SavedBytesOfABf16LayerInClosedForm) {
  // llama3-8b: h 4096, q 4096, kv 1024, f 14336, 32 heads: two norms (4 + 2 bytes per h and an
  // fp32 rsqrt), q, k, v and the output in bf16, the logsumexp, four bf16 SwiGLU tensors.
  const double h = 4096, q = 4096, kv = 1024, f = 14336, heads = 32;
  const double want = 2.0 * (6.0 * h + 4.0) + 2.0 * (2.0 * q + 2.0 * kv) + 4.0 * heads + 8.0 * f;
  EXPECT_DOUBLE_EQ(streamed_layer_saved_bytes_per_token(builtin_model("llama3-8b")), want);
}

TEST(LayerStreaming, ActivationsScaleWithTheMicroBatchAndCheckpointEveryFourLayers) {
  const StreamedStep one(1), two(2);
  EXPECT_NEAR(two.run().memory.activations_bytes, 2.0 * one.run().memory.activations_bytes, 1.0);
  // 32 layers: 8 block checkpoints, the last hidden state, the block's 4 recomputed outputs and 2
  // gradients of hidden states (bf16), and one layer's saved tensors.
  const double tokens = 1024, hidden_tensor = 2.0 * 4096 * tokens;
  const double want = (8.0 + 1.0 + 4.0 + 2.0) * hidden_tensor + streamed_layer_saved_bytes_per_token(one.model) * tokens;
  EXPECT_DOUBLE_EQ(one.run().memory.activations_bytes, want);
}

TEST(LayerStreaming, EachLayerRunsItsForwardThreeTimes) {
  const StreamedStep s(8);
  const Estimate e = s.run();
  const IterationFlops f = iteration_flops(s.model, s.workload.tokens(), s.workload.seq_len, Recompute::full);
  EXPECT_NEAR(e.hardware_flops - e.model_flops, 2.0 * f.recompute, 1e-6 * f.recompute);
}

TEST(LayerStreaming, ThreeWeightCopiesPerMicroBatchRideTheHostLink) {
  Plan p;
  p.framework = TrainingFramework::megatrain;
  p.offload = {MemoryTier::cpu, MemoryTier::cpu, MemoryTier::gpu};
  OffloadShares shares;
  shares.optimizer_params = 8e9;
  shares.weight_shard_params = 7e9;
  const OffloadTraffic t = offload_traffic(p, shares, 0.5, 0.3, 4);
  EXPECT_DOUBLE_EQ(t.param_bytes_per_microbatch, 3.0 * 2.0 * 7e9);
  EXPECT_DOUBLE_EQ(t.grad_bytes_per_param, 0.0);    // out the other way of the duplex link
  EXPECT_DOUBLE_EQ(t.upload_bytes_per_param, 0.0);  // the masters stay on the host
  // A small micro-batch waits for its weights: 42 GB at the H200's 50.4 GB/s host link against
  // 0.5 s of compute, four times.
  const Cluster c = make_cluster(find_gpu("h200"), 1);
  EXPECT_NEAR(offload_exposed_s(p, c, t), 4.0 * (42e9 / 50.4e9 - 0.5), 1e-9);
}

TEST(LayerStreaming, ASmallMicroBatchIsBoundByTheHostLink) {
  // At one sequence per micro-batch the weights' copies outlast the compute; at 16 they hide.
  EXPECT_GT(StreamedStep(1).run().time.offload_s, 0.0);
  EXPECT_DOUBLE_EQ(StreamedStep(16).run().time.offload_s, 0.0);
}

// Each rule of framework=megatrain names its key (plan.cpp check_megatrain, memory_tiers.cpp).
std::string refused_key(const std::string& change) {
  StreamedStep s(4);
  Plan& p = s.plan;
  if (change == "tp") p.tp = 2;
  if (change == "dp") p.dp = 2;
  if (change == "precision") p.precision = Precision::fp8;
  if (change == "recompute") p.recompute = Recompute::none;
  if (change == "zero") p.zero = OptimizerSharding::zero1;
  if (change == "offload_optimizer") p.offload.optimizer = MemoryTier::gpu;
  if (change == "offload_params") p.offload.params = MemoryTier::gpu;
  if (change == "offload_activations") p.offload.activations = MemoryTier::cpu;
  if (change == "task") {
    p.tuning.task = TrainingTask::lora;
    p.tuning.lora_rank = 8;
  }
  const Cluster c = make_cluster(find_gpu("h200"), p.dp);
  try {
    validate_plan(p, s.model, c, s.workload);
  } catch (const Error& e) {
    return e.field();
  }
  return "accepted";
}

TEST(LayerStreaming, EveryRuleOfTheFrameworkNamesItsKey) {
  for (const std::string key : {"tp", "dp", "precision", "recompute", "zero", "offload_optimizer", "offload_params",
                                "offload_activations", "task"})
    EXPECT_EQ(refused_key(key), key);
}

}  // namespace
}  // namespace tessera

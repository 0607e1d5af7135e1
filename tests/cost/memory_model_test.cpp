// Weights, gradients and optimizer state per GPU under mixed-precision Adam (ZeRO, Rajbhandari
// et al. 2020, §3.1 and §5: 2 + 4 + 12 bytes per parameter with Megatron's fp32 main gradients),
// sharded by ZeRO stage over the data-parallel group, and conservation of parameters over
// pipeline stages, tensor-parallel ranks and expert-parallel ranks.
#include "cost/memory_model.h"

#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>

#include "common/relative_error.h"

#include "catalog/model_source.h"
#include "core/units.h"
#include "hardware/physical_ranges.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

using i64 = std::int64_t;

using testing::rel_err;

// GPT-3 175B (Brown et al. 2020 Table 2.1) by hand: per layer 12h^2 + 13h (QKV/O and MLP
// weights plus biases and two layernorms; Narayanan et al. SC'21 §5.1), learned positions,
// tied embeddings, and the final layernorm (2h).
double gpt3_175b_params_by_hand() {
  const double l = 96, h = 12288, V = 50257, s = 2048;
  return l * (12.0 * h * h + 13.0 * h) + (V + s) * h + 2.0 * h;
}

Workload workload(i64 gbs, i64 seq) {
  Workload w;
  w.global_batch = gbs;
  w.seq_len = seq;
  return w;
}

// stage_memory reads only the GPU's memory_reserve_gib (0 here: the modelled reserve).
const GpuSpec kAnyGpu{};

StageShape whole_model(const ModelSpec& m) {
  StageShape s;
  s.layers = m.layers;
  s.moe_layers = m.moe_layers();
  s.has_embedding = true;
  s.has_output_head = true;
  s.inflight_microbatches = 1;
  return s;
}

TEST(MemoryModel, Gpt3ParameterCountMatchesHandSum) {
  const ModelSpec m = builtin_model("gpt3-175b");
  const double P = gpt3_175b_params_by_hand();
  EXPECT_NEAR(P, 174.6e9, 0.1e9);  // "175B"
  Plan p;
  const StageParameters params = stage_parameters(m, p, whole_model(m));
  EXPECT_DOUBLE_EQ(params.total(), P);
  EXPECT_EQ(params.expert, 0.0);
}

TEST(MemoryModel, Gpt3UnshardedIs2Plus4Plus12BytesPerParameter) {
  const ModelSpec m = builtin_model("gpt3-175b");
  const double P = gpt3_175b_params_by_hand();
  Plan p;
  const MemoryBreakdown mem = stage_memory(m, p, workload(8, 2048), whole_model(m), kAnyGpu);
  EXPECT_DOUBLE_EQ(mem.weights_bytes, 2.0 * P);
  EXPECT_DOUBLE_EQ(mem.gradients_bytes, 4.0 * P);
  EXPECT_DOUBLE_EQ(mem.optimizer_bytes, 12.0 * P);
  EXPECT_DOUBLE_EQ(mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes, 18.0 * P);
  EXPECT_GE(mem.total(), 18.0 * P);
}

// ZeRO §5: stage 1 partitions the optimizer state (P_os), stage 2 also the gradients (P_os+g),
// stage 3 also the parameters (P_os+g+p), each over the N_d data-parallel ranks.
TEST(MemoryModel, ZeroStagesDivideTheirTermsByDp) {
  const ModelSpec m = builtin_model("gpt3-175b");
  const double P = gpt3_175b_params_by_hand();
  const double dp = 8;
  Plan p;
  p.dp = 8;

  p.zero = OptimizerSharding::zero1;
  MemoryBreakdown mem = stage_memory(m, p, workload(8, 2048), whole_model(m), kAnyGpu);
  EXPECT_DOUBLE_EQ(mem.weights_bytes, 2.0 * P);
  EXPECT_DOUBLE_EQ(mem.gradients_bytes, 4.0 * P);
  EXPECT_LT(rel_err(mem.optimizer_bytes, 12.0 * P / dp), 1e-12);

  p.zero = OptimizerSharding::zero2;
  mem = stage_memory(m, p, workload(8, 2048), whole_model(m), kAnyGpu);
  EXPECT_DOUBLE_EQ(mem.weights_bytes, 2.0 * P);
  EXPECT_LT(rel_err(mem.gradients_bytes, 4.0 * P / dp), 1e-12);
  EXPECT_LT(rel_err(mem.optimizer_bytes, 12.0 * P / dp), 1e-12);

  p.zero = OptimizerSharding::zero3;
  mem = stage_memory(m, p, workload(8, 2048), whole_model(m), kAnyGpu);
  EXPECT_LT(rel_err(mem.weights_bytes, 2.0 * P / dp), 1e-12);
  EXPECT_LT(rel_err(mem.gradients_bytes, 4.0 * P / dp), 1e-12);
  EXPECT_LT(rel_err(mem.optimizer_bytes, 12.0 * P / dp), 1e-12);
  // Gathered layers for compute are extra buffers, never negative.
  EXPECT_GE(mem.buffers_bytes, 0.0);
}

// Context-parallel ranks hold the same weights, so gradients are reduced (and ZeRO shards the
// state) over dp x cp (Megatron-Core): dp = 4, cp = 2 shards like dp = 8.
TEST(MemoryModel, ZeroShardsOverDpTimesCp) {
  const ModelSpec m = builtin_model("gpt3-175b");
  Plan a;
  a.dp = 8;
  a.zero = OptimizerSharding::zero3;
  Plan b = a;
  b.dp = 4;
  b.cp = 2;
  const MemoryBreakdown ma = stage_memory(m, a, workload(8, 2048), whole_model(m), kAnyGpu);
  const MemoryBreakdown mb = stage_memory(m, b, workload(8, 2048), whole_model(m), kAnyGpu);
  EXPECT_DOUBLE_EQ(ma.optimizer_bytes, mb.optimizer_bytes);
  EXPECT_DOUBLE_EQ(ma.weights_bytes, mb.weights_bytes);
}

// Sum of stage parameters over pp stages: every layer, the embedding and the final norm exactly
// once. With tied embeddings the last stage holds a second copy of the V x h word embedding when
// it is not also the first stage (memory_model.cpp: "A tied head lives on the last stage as a
// second copy when the pipeline splits them"; Megatron's shared word-embedding group).
double sum_over_stages(const ModelSpec& m, const Plan& p) {
  const LayerSplit split = split_layers(p, m.layers);
  double total = 0;
  for (i64 s = 0; s < p.pp; ++s) {
    StageShape shape;
    shape.layers = split.physical_stage_layers(s);
    shape.has_embedding = s == 0;
    shape.has_output_head = s == p.pp - 1;
    total += stage_parameters(m, p, shape).total();
  }
  return total;
}

TEST(MemoryModel, PipelineStagesConserveParametersTied) {
  const ModelSpec m = builtin_model("gpt3-175b");
  const double P = gpt3_175b_params_by_hand();
  const double word_embedding = double(m.vocab) * double(m.hidden);
  for (i64 pp : {2, 4, 8, 12, 16, 96}) {
    Plan p;
    p.pp = pp;
    EXPECT_LT(rel_err(sum_over_stages(m, p), P + word_embedding), 1e-12) << "pp=" << pp;
  }
  Plan one;
  EXPECT_LT(rel_err(sum_over_stages(m, one), P), 1e-12);
}

TEST(MemoryModel, PipelineStagesConserveParametersUntied) {
  for (const char* name : {"llama3-70b", "llama3.1-405b"}) {
    const ModelSpec m = builtin_model(name);
    const double total = count_parameters(m).total();
    for (i64 pp : {1, 2, 4, 8, 16}) {
      if (pp > m.layers) continue;
      Plan p;
      p.pp = pp;
      EXPECT_LT(rel_err(sum_over_stages(m, p), total), 1e-12) << name << " pp=" << pp;
    }
  }
}

// Tensor parallelism splits every weight matrix and the vocabulary over t ranks; norm weights
// are replicated (Megatron-LM, Shoeybi et al. 2019 §3). Llama 3 70B has no biases, so the sum
// over t ranks is the total plus (t-1) copies of the norms.
TEST(MemoryModel, TensorParallelSplitsMatricesAndReplicatesNorms) {
  const ModelSpec m = builtin_model("llama3-70b");
  const double total = count_parameters(m).total();
  const double h = double(m.hidden), l = double(m.layers);
  const double norms = l * 2.0 * h + h;  // two RMSNorms per layer + the final one
  for (i64 t : {2, 4, 8}) {
    Plan p;
    p.tp = t;
    const double per_gpu = stage_parameters(m, p, whole_model(m)).total();
    EXPECT_LT(rel_err(double(t) * per_gpu, total + double(t - 1) * norms), 1e-12) << "tp=" << t;
  }
}

// Routed experts are spread over ep ranks (and split by tp): summed over the ep x tp ranks of a
// stage, each routed expert's 3 h f SwiGLU weights appear exactly once.
TEST(MemoryModel, ExpertParallelConservesRoutedExperts) {
  const ModelSpec m = builtin_model("mixtral-8x7b");
  ASSERT_TRUE(m.is_moe());
  const double routed = double(m.moe_layers()) * double(m.moe.experts) * 3.0 * double(m.hidden) *
                        double(m.moe.expert_ffn_hidden);
  for (auto [ep, tp] : {std::pair<i64, i64>{1, 1}, {2, 1}, {4, 2}, {8, 1}, {8, 4}}) {
    Plan p;
    p.ep = ep;
    p.tp = tp;
    const StageParameters s = stage_parameters(m, p, whole_model(m));
    EXPECT_LT(rel_err(s.expert * double(ep * tp), routed), 1e-12) << "ep=" << ep << " tp=" << tp;
  }
}

// Pipeline memory on the first stage of 1F1B (Korthikanti §4.2.3): it holds p micro-batches of
// L/p layers, so its activations equal those of the whole model without pipelining.
TEST(MemoryModel, ActivationsScaleWithLayersAndInflightMicrobatches) {
  const ModelSpec m = builtin_model("gpt3-175b");
  Plan p;
  p.tp = 8;
  p.pp = 8;
  p.sequence_parallel = true;
  p.recompute = Recompute::selective;
  p.flash_attention = false;
  StageShape s;
  s.layers = 12;
  s.has_embedding = true;
  s.inflight_microbatches = 8;
  const MemoryBreakdown mem = stage_memory(m, p, workload(64, 2048), s, kAnyGpu);
  const double sbh = 2048.0 * 1.0 * 12288.0;
  EXPECT_LT(rel_err(mem.activations_bytes, 34.0 * sbh * 96.0 / 8.0), 1e-12);
  EXPECT_EQ(mem.logits_bytes, 0.0);  // no output layer on the first stage
}

// Expert tensor parallelism (MoE parallel folding): routed experts are split over ep x etp ranks,
// not ep x tp. Mixtral 8x7B by hand: 32 layers x 8 experts x 3 h f.
TEST(MemoryModel, ExpertWeightsSplitOverEpTimesEtpByHand) {
  const ModelSpec m = builtin_model("mixtral-8x7b");
  const double routed = 32.0 * 8.0 * 3.0 * 4096.0 * 14336.0;
  ASSERT_EQ(m.moe_layers(), 32);
  ASSERT_EQ(m.moe.expert_ffn_hidden, 14336);
  for (auto [tp, ep, etp] : {std::tuple<i64, i64, i64>{4, 8, 1}, {4, 2, 2}, {2, 4, 0}, {8, 8, 1}}) {
    Plan p;
    p.tp = tp;
    p.ep = ep;
    p.etp = etp;
    const double split = double(ep) * double(etp == 0 ? tp : etp);
    EXPECT_LT(rel_err(stage_parameters(m, p, whole_model(m)).expert, routed / split), 1e-12)
        << "tp=" << tp << " ep=" << ep << " etp=" << etp;
  }
}

// The distributed optimizer shards expert state over the expert-data-parallel ranks
// (tp x cp x dp / (etp x ep)) and dense state over dp x cp.
TEST(MemoryModel, ExpertOptimizerStateShardsOverExpertDp) {
  const ModelSpec m = builtin_model("mixtral-8x7b");
  Plan p;
  p.tp = 4;
  p.dp = 16;
  p.ep = 8;
  p.etp = 1;
  p.zero = OptimizerSharding::zero1;
  ASSERT_EQ(p.expert_dp(), 8);
  const StageParameters params = stage_parameters(m, p, whole_model(m));
  const MemoryBreakdown mem = stage_memory(m, p, workload(64, 4096), whole_model(m), kAnyGpu);
  EXPECT_LT(rel_err(mem.optimizer_bytes, 12.0 * (params.dense / 16.0 + params.expert / 8.0)), 1e-12);
}

// ZeRO-3 variants, from least to most memory: resharding after forward (two layers gathered);
// keeping the stage gathered from forward to backward (pp = 1); and under pipelining keeping the
// weights gathered and the gradients unsharded for the whole step. Optimizer state is identical.
TEST(MemoryModel, Zero3ReshardVariantsOrdered) {
  const ModelSpec m = builtin_model("llama3-70b");
  Plan p;
  p.tp = 8;
  p.dp = 16;
  p.zero = OptimizerSharding::zero3;
  StageShape s = whole_model(m);
  const MemoryBreakdown reshard = stage_memory(m, p, workload(64, 8192), s, kAnyGpu);
  p.reshard_after_forward = false;
  const MemoryBreakdown kept = stage_memory(m, p, workload(64, 8192), s, kAnyGpu);
  EXPECT_LT(reshard.total(), kept.total());
  EXPECT_DOUBLE_EQ(reshard.optimizer_bytes, kept.optimizer_bytes);
  EXPECT_DOUBLE_EQ(reshard.gradients_bytes, kept.gradients_bytes);
  // pp = 2, one stage of 40 layers.
  Plan q = p;
  q.pp = 2;
  StageShape half;
  half.layers = 40;
  half.has_embedding = true;
  half.inflight_microbatches = 2;
  q.reshard_after_forward = true;
  const MemoryBreakdown pp_reshard = stage_memory(m, q, workload(64, 8192), half, kAnyGpu);
  q.reshard_after_forward = false;
  const MemoryBreakdown pp_resident = stage_memory(m, q, workload(64, 8192), half, kAnyGpu);
  EXPECT_LT(pp_reshard.total(), pp_resident.total());
  const double stage_params = stage_parameters(m, q, half).total();
  EXPECT_DOUBLE_EQ(pp_resident.weights_bytes, 2.0 * stage_params);
  EXPECT_DOUBLE_EQ(pp_resident.gradients_bytes, 4.0 * stage_params);
  EXPECT_LT(rel_err(pp_reshard.gradients_bytes, 4.0 * stage_params / 16.0), 1e-12);
  // ZeRO-1 holds everything but the optimizer state unsharded: more than any ZeRO-3 variant
  // that reshards.
  Plan z1 = q;
  z1.zero = OptimizerSharding::zero1;
  EXPECT_LT(pp_reshard.total(), stage_memory(m, z1, workload(64, 8192), half, kAnyGpu).total());
}

// FP8 GEMMs keep FP8 copies of the weights next to the 16-bit ones; --fp8-param-gather stores the
// parameters in FP8 only. Norms and embeddings stay 16-bit.
TEST(MemoryModel, Fp8WeightCopiesAndParamGather) {
  const ModelSpec m = builtin_model("llama3-70b");
  Plan p;
  p.tp = 8;
  const MemoryBreakdown bf16 = stage_memory(m, p, workload(8, 8192), whole_model(m), kAnyGpu);
  const StageParameters params = stage_parameters(m, p, whole_model(m));
  p.precision = Precision::fp8;
  const MemoryBreakdown fp8 = stage_memory(m, p, workload(8, 8192), whole_model(m), kAnyGpu);
  EXPECT_LT(rel_err(fp8.weights_bytes - bf16.weights_bytes, 2.0 * (params.gemm_dense + params.gemm_expert)), 1e-12);
  p.fp8_param_gather = true;
  const MemoryBreakdown gather = stage_memory(m, p, workload(8, 8192), whole_model(m), kAnyGpu);
  EXPECT_DOUBLE_EQ(gather.weights_bytes, bf16.weights_bytes);  // 2 FP8 layouts = one 16-bit copy
  EXPECT_LT(gather.weights_bytes, fp8.weights_bytes);
  p.fp8_recipe = Fp8Recipe::mxfp8;
  EXPECT_GT(stage_memory(m, p, workload(8, 8192), whole_model(m), kAnyGpu).weights_bytes, gather.weights_bytes);
  EXPECT_LT(params.gemm_dense, params.dense);  // norms, embedding and head are not GEMM weights
}

// A larger capacity factor (padded expert inputs) never reduces a stage's memory.
TEST(MemoryModel, LargerCapacityFactorNeverReducesMemory) {
  const ModelSpec m = builtin_model("mixtral-8x7b");
  Plan p;
  p.tp = 2;
  p.sequence_parallel = true;
  p.ep = 4;
  p.dp = 4;
  double previous = 0;
  for (double cf : {1.0, 1.25, 1.5, 2.0, 3.0}) {
    p.capacity_factor = cf;
    const double total = stage_memory(m, p, workload(16, 4096), whole_model(m), kAnyGpu).total();
    EXPECT_GT(total, previous) << cf;
    previous = total;
  }
}

// MTP modules live on the last stage: their parameters (ParameterCount::mtp) and activations.
TEST(MemoryModel, MtpModulesOnTheLastStage) {
  ModelSpec m = builtin_model("mixtral-8x7b");
  Plan p;
  p.pp = 2;
  StageShape last;
  last.layers = 16;
  last.moe_layers = 16;
  last.has_output_head = true;
  last.inflight_microbatches = 1;
  const MemoryBreakdown without = stage_memory(m, p, workload(8, 4096), last, kAnyGpu);
  const double params_without = stage_parameters(m, p, last).total();
  m.mtp_layers = 1;
  const MemoryBreakdown with = stage_memory(m, p, workload(8, 4096), last, kAnyGpu);
  EXPECT_LT(rel_err(stage_parameters(m, p, last).total() - params_without, count_parameters(m).mtp), 1e-9);
  EXPECT_GT(with.activations_bytes, without.activations_bytes);
  EXPECT_GT(with.logits_bytes, without.logits_bytes);
  StageShape first = last;
  first.has_output_head = false;
  first.has_embedding = true;
  m.mtp_layers = 0;
  const double first_without = stage_memory(m, p, workload(8, 4096), first, kAnyGpu).total();
  m.mtp_layers = 1;
  EXPECT_DOUBLE_EQ(stage_memory(m, p, workload(8, 4096), first, kAnyGpu).total(), first_without);
}

// The runtime reserve: CUDA context and workspaces, plus NCCL buffers per communicator used.
TEST(MemoryModel, RuntimeReserveCountsCommunicators) {
  Plan single;
  EXPECT_DOUBLE_EQ(runtime_reserve_bytes(single), kCudaContextBytes + kWorkspaceBytes);
  Plan p;
  p.tp = 8;
  p.pp = 4;
  p.dp = 2;
  EXPECT_DOUBLE_EQ(runtime_reserve_bytes(p), kCudaContextBytes + kWorkspaceBytes + 3 * kNcclBytesPerCommunicator);
}

// memory_reserve_gib moves every stage's framework reserve, and so its peak, by exactly that many
// GiB (negative down to minus the CUDA context + workspaces: the reserve stays >= 0), and no other
// term of the breakdown.
TEST(MemoryModel, MeasuredReserveShiftsEveryStageByExactlyItsSize) {
  const ModelSpec m = builtin_model("llama3-70b");
  Plan p;
  p.tp = 8;
  p.pp = 4;
  p.dp = 2;
  p.sequence_parallel = true;
  const LayerSplit split = split_layers(p, m.layers);
  for (const double gib : {3.0, -physical::kMaxNegativeReserveGib}) {
    GpuSpec calibrated;
    calibrated.memory_reserve_gib = gib;
    for (i64 s = 0; s < p.pp; ++s) {
      StageShape shape;
      shape.layers = split.physical_stage_layers(s);
      shape.has_embedding = s == 0;
      shape.has_output_head = s == p.pp - 1;
      shape.inflight_microbatches = static_cast<double>(p.pp - s);
      const MemoryBreakdown a = stage_memory(m, p, workload(64, 8192), shape, kAnyGpu);
      const MemoryBreakdown b = stage_memory(m, p, workload(64, 8192), shape, calibrated);
      // Exact up to rounding of the sums (a few ulps of the total).
      EXPECT_NEAR(b.total() - a.total(), gib * units::kGiB, 1e-12 * a.total()) << "stage " << s;
      EXPECT_NEAR(b.framework_bytes - a.framework_bytes, gib * units::kGiB, 1e-12 * a.total());
      EXPECT_GE(b.framework_bytes, 0.0);
      EXPECT_EQ(b.weights_bytes, a.weights_bytes);
      EXPECT_EQ(b.gradients_bytes, a.gradients_bytes);
      EXPECT_EQ(b.optimizer_bytes, a.optimizer_bytes);
      EXPECT_EQ(b.activations_bytes, a.activations_bytes);
      EXPECT_EQ(b.logits_bytes, a.logits_bytes);
      EXPECT_EQ(b.buffers_bytes, a.buffers_bytes);
    }
  }
  EXPECT_EQ(measured_reserve_bytes(kAnyGpu), 0.0);
}

// torchtitan's loss on the last stage, by hand (memory_model.cpp): 12 fp32 bytes per logit of
// plain cross_entropy at tp 1; 16 under loss parallel (tp > 1: saved log-softmax, zero-filled
// gradient, exp and their sum, pytorch torch/distributed/tensor/parallel/loss.py); and under
// pipelining every micro-batch's 16-bit output logits kept in output_chunks to the step's end.
TEST(MemoryModel, TorchtitanLossParallelAndPipelineOutputChunksByHand) {
  const ModelSpec m = builtin_model("llama3-8b");
  const Workload w = workload(64, 8192);
  StageShape last;
  last.layers = 4;
  last.has_output_head = true;
  last.inflight_microbatches = 1;
  last.framework = TrainingFramework::torchtitan;
  Plan p;
  p.framework = TrainingFramework::torchtitan;
  p.micro_batch = 2;
  p.dp = 4;
  const auto logits_per_element = [&](const Plan& plan) {
    const double tokens = static_cast<double>(plan.micro_batch) * 8192.0;
    const double elements = tokens * static_cast<double>(m.vocab) / static_cast<double>(plan.tp);
    const double hidden_inputs = tokens * units::kBytesBf16 * static_cast<double>(m.hidden) *
                                 (1.0 / (plan.sequence_parallel ? static_cast<double>(plan.tp) : 1.0) + 1.0);
    return (stage_memory(m, plan, w, last, kAnyGpu).logits_bytes - hidden_inputs) / elements;
  };
  EXPECT_NEAR(logits_per_element(p), 12.0, 1e-9);
  p.tp = 2;
  p.sequence_parallel = true;
  EXPECT_NEAR(logits_per_element(p), 16.0, 1e-9);
  p.pp = 2;  // 64 / (4 x 2) = 8 micro-batches, each output kept at 2 bytes per logit
  EXPECT_NEAR(logits_per_element(p), 16.0 + 8.0 * units::kBytesBf16, 1e-9);
  StageShape first = last;
  first.has_output_head = false;
  EXPECT_DOUBLE_EQ(stage_memory(m, p, w, first, kAnyGpu).logits_bytes, 0.0);
}

}  // namespace
}  // namespace tessera

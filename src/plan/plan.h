// Plan: how one training job is laid out: parallel degrees, micro-batch, recompute, optimizer
// sharding, precision and overlap switches. Workload: what is trained (global batch, sequence).
// Value types, validated once against a model and a cluster.
#pragma once

#include <cstdint>
#include <algorithm>
#include <string>
#include <vector>

#include "core/checks.h"
#include "hardware/cluster.h"
#include "model/flops.h"
#include "model/model_spec.h"
#include "plan/fine_tuning.h"
#include "plan/memory_tiers.h"

namespace tessera {

enum class OptimizerSharding { none, zero1, zero2, zero3 };
// The training software a plan runs on (the validation schema's `framework` column). Each prices
// what it does differently: Megatron-Core (the default: Transformer Engine's fused kernels, 18 B
// of state per parameter, overlapped collectives); the Megatron-DeepSpeed fork and DeepSpeed's own
// engine (blocking pipeline p2p with whole activations, gradients reduced after the flush, ZeRO-3
// gathers on the compute stream); torchtitan (op-level selective activation checkpointing, FSDP2
// as zero3); NeMo AutoModel (FSDP2 as torchtitan runs it); plain PyTorch (a DDP / FSDP / one-GPU
// loop with AMP on Hugging Face models: fp32 parameters and 16 B of state per parameter, bf16
// autocast copies, eager unfused kernels, the loss over fp32 logits; cost/eager_pytorch_memory.h);
// MegaTrain (arXiv 2604.05091: host memory holds every parameter and the optimizer, the GPU streams
// one layer at a time; cost/layer_streaming.h).
enum class TrainingFramework { megatron, megatron_deepspeed, deepspeed, torchtitan, nemo_automodel, pytorch, megatrain };
const char* to_string(TrainingFramework value);
TrainingFramework parse_training_framework(const std::string& text);  // Error("framework", ...)
// The engines whose pipeline and collectives DeepSpeed schedules.
constexpr bool deepspeed_engine(TrainingFramework f) {
  return f == TrainingFramework::deepspeed || f == TrainingFramework::megatron_deepspeed;
}
// The frameworks that shard with PyTorch FSDP2 (the sharded parameter is the fp32 master).
constexpr bool fsdp2_framework(TrainingFramework f) {
  return f == TrainingFramework::torchtitan || f == TrainingFramework::nemo_automodel;
}
enum class Precision { bf16, fp8 };
// FP8 scaling recipes of Transformer Engine as Megatron-Core names them (--fp8-recipe, r0.13+):
// per-tensor delayed scaling (amax history), per-tensor current scaling ("tensorwise"),
// DeepSeek-V3's block-wise scaling (1x128 activation tiles, 128x128 weight blocks) and MXFP8
// (32-element blocks with E8M0 scales; Blackwell only).
enum class Fp8Recipe { delayed, tensorwise, blockwise, mxfp8 };
// Megatron-Core's MoE token dispatchers (--moe-token-dispatcher-type): all-gather of every
// token over the EP x ETP group, all-to-all among EP ranks, or "flex" (DeepEP / HybridEP fused
// kernels that send each token once per destination node and forward it over NVLink).
enum class MoeDispatcher { alltoall, allgather, flex };
// Megatron --recompute-modules (with --recompute-granularity selective), as a bit set.
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1u << 0,       // attention core (Korthikanti's selective recompute)
  kRecomputeMoeAct = 1u << 1,         // the experts' activation function
  kRecomputeLayernorm = 1u << 2,      // input norms of attention and MLP
  kRecomputeMlaUpProj = 1u << 3,      // MLA's q / kv up-projections (and rope)
  kRecomputeMlp = 1u << 4,            // a dense MLP
  kRecomputeMoe = 1u << 5,            // the whole MoE layer (router, dispatch, experts)
  kRecomputeSharedExperts = 1u << 6,  // the shared experts
};
constexpr unsigned kAllRecomputeModules = (1u << 7) - 1;

const char* to_string(Fp8Recipe value);
const char* to_string(MoeDispatcher value);
Fp8Recipe parse_fp8_recipe(const std::string& text);            // Error("fp8_recipe", ...)
MoeDispatcher parse_moe_dispatcher(const std::string& text);    // Error("dispatcher", ...)
// "core_attn+moe_act" <-> bits; "" <-> 0.
unsigned parse_recompute_modules(const std::string& text);      // Error("recompute_modules", ...)
std::string recompute_modules_text(unsigned modules);

const char* to_string(OptimizerSharding value);
const char* to_string(Precision value);
OptimizerSharding parse_optimizer_sharding(const std::string& text);  // Error("zero", ...)
Precision parse_precision(const std::string& text);                   // Error("precision", ...)

// Sequences of one global batch: 65,536, the largest published (You et al., arXiv 1904.00962:
// BERT at 65,536 x 128 tokens with LAMB), 4x DeepSeek-V3's 15,360 (arXiv 2412.19437 section 4.2).
// The planner prices a pipeline per micro-batch, so its work grows with the batch: at this limit a
// mixed cluster's search takes seconds (README "Limits"); 10^6 took minutes and 1.5 GB.
inline constexpr std::int64_t kMaxGlobalBatch = 65'536;

struct Workload {
  std::int64_t global_batch = 0;  // sequences per optimizer step
  std::int64_t seq_len = 0;       // tokens per sequence
  double tokens() const { return static_cast<double>(global_batch) * seq_len; }
  void validate() const;
};

struct Plan {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  std::int64_t cp = 1;
  std::int64_t ep = 1;   // carved from dp x cp x tp of a stage (Megatron-Core), adds no GPUs
  // Expert tensor parallelism (Megatron --expert-tensor-parallel-size, "MoE parallel folding"):
  // expert layers regroup the stage's tp x cp x dp ranks as etp x ep x edp. 0 = tp (Megatron's
  // default). expert_tp() gives the value in force.
  std::int64_t etp = 0;
  std::int64_t vpp = 1;  // model chunks per pipeline stage (1 = plain 1F1B)
  std::int64_t micro_batch = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::none;
  // With recompute = full: recompute only the first N layers of each model chunk (Megatron's
  // --recompute-method block --recompute-num-layers N); 0 = every layer.
  std::int64_t recompute_layers = 0;
  OptimizerSharding zero = OptimizerSharding::none;
  Precision precision = Precision::bf16;
  bool overlap_grad_reduce = true;   // Megatron --overlap-grad-reduce
  bool overlap_param_gather = true;  // Megatron --overlap-param-gather
  bool overlap_tp_comm = false;      // Megatron --tp-comm-overlap (opt-in, needs TE userbuffers)
  bool overlap_p2p = true;           // async send/recv between stages
  // MoE: the dispatcher, capacity (0 = dropless; > 0: tokens beyond capacity_factor x the mean
  // load are dropped and expert buffers padded to it, Megatron --moe-expert-capacity-factor with
  // --moe-pad-expert-input-to-capacity), forced balanced routing (--moe-router-force-load-balancing,
  // what benchmark runs use), and the all-to-all overlapped with another micro-batch's compute
  // (--overlap-moe-expert-parallel-comm, which needs --delay-wgrad-compute's split backward).
  MoeDispatcher dispatcher = MoeDispatcher::alltoall;
  double capacity_factor = 0;
  bool force_balance = false;
  bool overlap_ep = false;
  bool delay_wgrad = false;
  // FP8 (precision = fp8): the scaling recipe and whether parameters are kept and all-gathered in
  // FP8 (--fp8-param-gather: no 16-bit weight copy).
  Fp8Recipe fp8_recipe = Fp8Recipe::tensorwise;
  bool fp8_param_gather = false;
  // With recompute = selective: the Megatron modules recomputed (RecomputeModule bits); 0 means
  // Megatron's default, core_attn.
  unsigned recompute_modules = 0;
  // ZeRO-3: re-shard parameters after each forward (FSDP reshard_after_forward, the default) or
  // keep them gathered until the backward is done.
  bool reshard_after_forward = true;
  TrainingFramework framework = TrainingFramework::megatron;
  bool flash_attention = true;       // fused attention (no s x s scores in memory)
  // Send 1/tp of each activation between stages and all-gather it over NVLink (SC'21 §4.1);
  // sequence parallelism gives the same split. DeepSpeed's pipeline engine sends it whole.
  bool p2p_scatter_gather = true;
  // Uneven split (Megatron --decoder-first/last-pipeline-num-layers); 0 = Megatron's default.
  std::int64_t first_stage_layers = 0;
  std::int64_t last_stage_layers = 0;
  // Megatron's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split:
  // the embedding and the loss each count as one layer; the L + 1 (+ 1) slots split evenly over
  // the pp x vpp virtual stages, and the first / last virtual stage builds one transformer layer
  // fewer (possibly none). Exclusive with first_stage_layers / last_stage_layers.
  bool account_embedding = false;
  bool account_loss = false;
  // Offload tiers (plan/memory_tiers.h) and the fine-tuning task (plan/fine_tuning.h).
  StatePlacement offload;
  FineTuning tuning;

  std::int64_t gpus() const { return saturating_product({tp, pp, dp, cp}); }
  std::int64_t expert_tp() const { return etp == 0 ? tp : etp; }
  // Expert-data-parallel ranks: the stage's tp x cp x dp ranks over etp x ep.
  std::int64_t expert_dp() const { return tp * cp * dp / (expert_tp() * ep); }
  unsigned selective_modules() const {
    return recompute != Recompute::selective ? 0u : (recompute_modules == 0 ? unsigned{kRecomputeCoreAttn} : recompute_modules);
  }
  std::int64_t microbatches(const Workload& w) const { return w.global_batch / (dp * micro_batch); }
  // Layers of a chunk of `chunk_layers` whose forward is recomputed in backward (full recompute).
  std::int64_t recomputed_layers(std::int64_t chunk_layers) const {
    if (recompute != Recompute::full) return 0;
    return recompute_layers == 0 ? chunk_layers : std::min(recompute_layers, chunk_layers);
  }
};

// Throws Error naming the field and the valid values when the plan's shape is invalid for this
// model, cluster and workload (a plan that merely does not fit in memory is valid).
// Context parallelism as Megatron-Core runs it (Transformer Engine's ring attention): it needs a
// fused attention kernel (TE asserts "Context parallelism is only implemented with Flash Attention
// and Fused Attention"), and a causal sequence is cut into 2*cp load-balanced chunks, so the
// sequence must divide by 2*cp.
constexpr bool context_parallel_supported(std::int64_t cp, std::int64_t seq_len, bool flash_attention) {
  return cp == 1 || (cp > 1 && flash_attention && seq_len % (2 * cp) == 0);
}

void validate_plan(const Plan& plan, const ModelSpec& model, const Cluster& cluster,
                   const Workload& workload);

// The part of validate_plan about offload tiers: what the plan's framework can move where
// (plan/memory_tiers.cpp) and whether the cluster's nodes have those tiers. Throws Error
// naming the offload key.
void check_offload(const Plan& plan, const Cluster& cluster);

// The part of validate_plan about what is trained (Plan::tuning): the LoRA rank within 1 .. the
// hidden size, targets, and a framework and precision that train adapters. Throws Error naming the key.
void check_fine_tuning(const Plan& plan, const ModelSpec& model);

// The plan as its framework runs it: the switches a framework fixes whatever the user asked for.
// DeepSpeed's engines (deepspeed, megatron-deepspeed, DeepSpeed edaa7221): with pp > 1 the
// PipelineEngine runs a fixed instruction schedule (runtime/pipe/schedule.py TrainSchedule):
// blocking send / recv of whole activations between compute steps, ReduceGrads after the flush;
// ZeRO-1/2 all-gather the updated parameters at the end of step(), not under the next forward.
// ZeRO-3's gathers are priced unhidden, as the published DeepSpeed ZeRO-3 runs measured (SC'21
// Table 2: communication-bound, time flat from 768 to 1,536 GPUs), although current DeepSpeed
// prefetches them on a stream of their own (runtime/zero/config.py overlap_comm_valid,
// parameter_offload.py). The cost model prices this plan (cost_model.cpp estimate_with).
Plan as_run_by_framework(const Plan& plan);

// Megatron's split of L layers over pp physical stages of vpp chunks (virtual stages) each,
// allocation-free (the cost model's hot path). Two levels, as Megatron-Core places them
// (megatron/core/transformer/transformer_block.py get_num_layers_to_build with
// --decoder-first/last-pipeline-num-layers, at d98e8a64):
//  1. physical stages: the middle ones take ceil(L / pp); the first and last take fewer (the
//     embedding and the output layer + loss sit there), shared between them with the last taking
//     the smaller part. When that leaves them under vpp layers each, they keep vpp and the
//     `light_middles` middle stages right after stage 0 take one layer fewer.
//  2. chunks of a stage: its layers as even as the stage allows (ceil or floor of T / vpp); the
//     lighter chunks come first on stage 0 (the embedding's chunk) and last elsewhere (the loss's
//     chunk is the last stage's last).
// So no chunk holds more than ceil(L / (pp vpp)) layers, and every chunk holds at least one.
// With explicit first_stage_layers / last_stage_layers (the physical first / last stage, as
// Megatron's flags count them), the middle stages share the rest equally. With the embedding and
// the loss accounted as layers (Plan::account_embedding / account_loss; get_num_layers_to_build
// and get_transformer_layer_offset at d98e8a64), every virtual stage holds (L + accounted) /
// (pp vpp) slots: the first chunk of stage 0 and the last chunk of stage pp - 1 one layer fewer,
// which can leave them with the embedding or the loss alone.
struct LayerSplit {
  std::int64_t first = 0;          // layers of physical stage 0
  std::int64_t middle = 0;         // layers of each full middle stage
  std::int64_t last = 0;           // layers of physical stage pp - 1 (pp > 1)
  std::int64_t light_middles = 0;  // middle stages 1 .. light_middles hold middle - 1
  std::int64_t pp = 1;
  std::int64_t vpp = 1;
  std::int64_t virtual_stages = 1;

  // The chunks of one physical stage: each holds `widest` layers but `light` of them, which hold
  // one fewer (the first ones on stage 0, the last ones elsewhere).
  struct StageChunks {
    std::int64_t widest = 0;
    std::int64_t light = 0;
    std::int64_t vpp = 1;
    bool first_stage = false;
    std::int64_t layers(std::int64_t round) const {
      const bool is_light = first_stage ? round < light : round >= vpp - light;
      return widest - (is_light ? 1 : 0);
    }
  };

  // Layers on physical stage s (0-based), summed over its chunks.
  std::int64_t physical_stage_layers(std::int64_t s) const;
  StageChunks stage_chunks(std::int64_t s) const;
  // Layers of virtual stage k (chunk k / pp of physical stage k % pp), and its first layer.
  std::int64_t virtual_stage_layers(std::int64_t k) const;
  std::int64_t virtual_stage_start(std::int64_t k) const;
  // Every virtual stage holds the same number of layers.
  bool even() const;
};
LayerSplit split_layers(const Plan& plan, std::int64_t layers);  // throws Error if impossible

// Transformer layers per virtual stage, in pipeline order (pp * vpp entries; virtual stage k runs
// on physical stage k % pp), as LayerSplit places them.
std::vector<std::int64_t> layers_per_virtual_stage(const Plan& plan, std::int64_t layers);

}  // namespace tessera

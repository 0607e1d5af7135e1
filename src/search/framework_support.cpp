#include "search/framework_support.h"

#include <array>
#include <span>
#include <string>
#include <utility>

#include "core/error.h"

namespace tessera {
namespace {

// Sources below are pytorch/torchtitan files at commit b5bcd76c66d0acb1a08b176d9639425bc55e0b2a.
// Shapes: torchtitan/models/llama3/__init__.py (_8b, _70b, _405b), qwen3/__init__.py (_30b_a3b,
// _235b_a22b), deepseek_v3/__init__.py (_671b), gpt_oss/__init__.py (_120b, _build_gptoss_layers
// defaults n_heads 64, n_kv_heads 8), kimi_k2_7/__init__.py (_kimi_k2_5: a DeepSeek-V3-style text
// tower plus a MoonViT3d vision tower, pipelined by pipeline_vlm).
constexpr std::array<TorchtitanFlavor, 8> kFlavors{{
    {"llama3", "8B", 32, 4096, 32, 8, 128256, 0, AttentionKind::gqa, "flex", false, false},
    {"llama3", "70B", 80, 8192, 64, 8, 128256, 0, AttentionKind::gqa, "flex", false, false},
    {"llama3", "405B", 126, 16384, 128, 8, 128256, 0, AttentionKind::gqa, "flex", false, false},
    {"qwen3", "30B-A3B", 48, 2048, 32, 4, 151936, 128, AttentionKind::gqa, "flex", false, false},
    {"qwen3", "235B-A22B", 94, 4096, 64, 4, 151936, 128, AttentionKind::gqa, "flex", false, false},
    {"deepseek_v3", "671B", 61, 7168, 128, 128, 129280, 256, AttentionKind::mla, "flex", true, false},
    {"gpt_oss", "120b", 36, 2880, 64, 8, 201088, 128, AttentionKind::gqa_swa, "varlen", false, false},
    {"kimi_k2_7", "Kimi-K2.5", 61, 7168, 64, 64, 163840, 384, AttentionKind::mla, "flex", false, true},
}};

bool same_shape(const TorchtitanFlavor& f, const ModelSpec& m) {
  const std::int64_t experts = m.is_moe() ? m.moe.experts : 0;
  return f.layers == m.layers && f.hidden == m.hidden && f.heads == m.heads && f.kv_heads == m.kv_heads &&
         f.vocab == m.vocab && f.experts == experts && f.attention == m.attention;
}

// Model-level reasons (no plan involved).
const char* model_reason(const ModelSpec& m, const TorchtitanFlavor* f) {
  if (f == nullptr)
    return "torchtitan ships no model of this architecture (torchtitan/models: llama3 8B/70B/405B, qwen3, "
           "deepseek_v3 671B, gpt_oss 120b; Llama 4, Mixtral, Qwen2.5, GPT-3-style models are absent)";
  if (f->vision_language_only)
    return "torchtitan ships this architecture only inside a vision-language model (models/kimi_k2_7 "
           "Kimi-K2.5, pipelined by pipeline_vlm), not as a text-only model";
  if (m.mtp_layers > 0 && !f->has_mtp) return "torchtitan builds multi-token prediction only for deepseek_v3";
  return nullptr;
}

// Data-parallel sharding. torchtitan has DDP (dp_replicate), FSDP2 (dp_shard) and HSDP; FSDP2 is
// ZeRO-3 with reshard_after_forward always / never (distributed/fsdp.py,
// get_fsdp_reshard_after_forward_policy). There is no optimizer-only or gradient-only sharding.
const char* sharding_reason(const ModelSpec& m, const Plan& p) {
  if (p.zero == OptimizerSharding::zero1)
    return "torchtitan has no ZeRO-1 (optimizer-only sharding): FSDP2 shards parameters, gradients and "
           "optimizer state (use zero=3, or zero=none for DDP)";
  if (p.zero == OptimizerSharding::zero2)
    return "torchtitan has no ZeRO-2: its nearest, FSDP2 with reshard_after_forward=never, is zero=3 with "
           "reshard_after_forward off";
  if (p.zero == OptimizerSharding::none && p.cp > 1)
    return "torchtitan FSDP-shards parameters over the cp ranks whenever cp > 1 "
           "(distributed/parallel_dims.py fsdp_enabled = dp_shard > 1 or cp > 1): needs zero=3";
  if (p.zero == OptimizerSharding::none && p.ep > 1 && m.is_moe())
    return "torchtitan FSDP-shards experts over efsdp = dp_shard*cp*tp/ep whenever ep > 1 "
           "(parallel_dims.py _mesh_exist): needs zero=3";
  return nullptr;
}

// MoE: EP borrows ranks from dp_shard x cp x tp (config/configs.py expert_parallel_degree); with
// EP experts are sharded on EP only, without it TP-sharded like dense MLPs
// (models/common/MOE_SHARDING.md); dispatch is dropless all-to-all ("standard") unless DeepEP /
// HybridEP are chosen, which Tessera does not export.
const char* moe_reason(const ModelSpec& m, const Plan& p) {
  if (!m.is_moe()) return nullptr;
  if (p.ep > 1 && p.expert_tp() != 1)
    return "torchtitan has no expert tensor parallelism: with ep > 1 experts are sharded on ep only (etp must be 1)";
  if (p.ep == 1 && p.expert_tp() != p.tp)
    return "without expert parallelism torchtitan TP-shards the experts like dense MLPs (etp must equal tp)";
  const std::int64_t dp_shard = p.zero == OptimizerSharding::zero3 ? p.dp : 1;
  if ((dp_shard * p.cp * p.tp) % p.ep != 0)
    return "expert_parallel_degree must divide dp_shard * cp * tp (distributed/parallel_dims.py _validate)";
  if (p.ep > 1 && p.dispatcher != MoeDispatcher::alltoall)
    return "only torchtitan's standard all-to-all token dispatch is exported (no all-gather dispatcher)";
  if (p.capacity_factor > 0) return "torchtitan's MoE is dropless (no expert capacity factor)";
  if (p.overlap_ep || p.delay_wgrad)
    return "torchtitan has no EP all-to-all overlap with delayed weight gradients";
  return nullptr;
}

// Activation checkpointing: None, SelectiveAC (its own per-op policy) or FullAC (every block)
// (distributed/activation_checkpoint.py ActivationCheckpointingConfig).
const char* recompute_reason(const Plan& p) {
  if (p.recompute == Recompute::full && p.recompute_layers > 0)
    return "torchtitan's FullAC recomputes every transformer block (no per-layer count)";
  if (p.recompute == Recompute::selective && p.recompute_modules != 0 && p.recompute_modules != kRecomputeCoreAttn)
    return "torchtitan's SelectiveAC has one fixed per-op policy (no Megatron module sets)";
  return nullptr;
}

// Float8: Float8LinearConverter recipes "rowwise" / "rowwise_with_gw_hp" (dynamic, current
// scaling; components/quantization/float8.py) and MXFP8LinearConverter (components/quantization/
// mx.py). Tessera's tensorwise (current scaling) is exported as rowwise, the nearest: the same FP8
// GEMMs and casts, finer scales.
const char* precision_reason(const Plan& p) {
  if (p.precision != Precision::fp8) return nullptr;
  if (p.fp8_recipe == Fp8Recipe::delayed) return "torchtitan's float8 has no delayed (amax-history) scaling";
  if (p.fp8_recipe == Fp8Recipe::blockwise) return "torchtitan's float8 has no 128x128 block-wise recipe";
  if (p.fp8_param_gather) return "torchtitan's rowwise / MXFP8 converters do not all-gather parameters in FP8";
  return nullptr;
}

const char* layout_reason(const ModelSpec& m, const Plan& p) {
  // models/deepseek_v3/mtp.py update_from_config: NotImplementedError for pp > 1 and cp > 1.
  if (m.mtp_layers > 0 && (p.pp > 1 || p.cp > 1))
    return "torchtitan's multi-token prediction does not support pipeline or context parallelism yet";
  // models/common/decoder.py update_from_config: weight tying refused with pp > 1.
  if (m.tied_embeddings && p.pp > 1) return "torchtitan refuses weight tying with pipeline parallelism";
  // decoder.py: CP only with FlexAttention. A sliding-window model's masks are a dict that the
  // PTRR load balancer needs a mask key for (context_parallel/api.py); not exported.
  if (p.cp > 1 && m.sliding_window > 0)
    return "context parallelism for sliding-window models needs a per-mask PTRR key torchtitan does not default";
  if (!p.flash_attention) return "torchtitan has no unfused attention path (sdpa / flex / varlen kernels only)";
  return nullptr;
}

}  // namespace

std::span<const TorchtitanFlavor> torchtitan_flavors() { return kFlavors; }

const TorchtitanFlavor* torchtitan_flavor(const ModelSpec& model) {
  for (const TorchtitanFlavor& f : kFlavors)
    if (same_shape(f, model)) return &f;
  return nullptr;
}

const char* torchtitan_unsupported_reason(const ModelSpec& model, const Plan& plan) {
  const TorchtitanFlavor* f = torchtitan_flavor(model);
  if (const char* r = model_reason(model, f)) return r;
  if (const char* r = sharding_reason(model, plan)) return r;
  if (const char* r = moe_reason(model, plan)) return r;
  if (const char* r = recompute_reason(plan)) return r;
  if (const char* r = precision_reason(plan)) return r;
  return layout_reason(model, plan);
}

bool torchtitan_can_run(const ModelSpec& model, const Plan& plan) {
  return torchtitan_unsupported_reason(model, plan) == nullptr;
}

namespace {
// Frameworks that run one Hugging Face model per GPU (pytorch, megatrain): no tensor, pipeline,
// context or expert parallelism, bf16 without FP8, whole layers recomputed. A pin the framework
// cannot run stays pinned and is refused by validate_plan with the key's name.
PlanConstraints one_model_per_gpu(PlanConstraints fix) {
  for (std::optional<std::int64_t>* degree : {&fix.tp, &fix.pp, &fix.cp, &fix.ep, &fix.vpp})
    if (!*degree) *degree = 1;
  if (!fix.precision) fix.precision = Precision::bf16;
  if (!fix.recompute_layers) fix.recompute_layers = 0;
  if (!fix.fp8_param_gather) fix.fp8_param_gather = false;
  return fix;
}

// A plain PyTorch loop (plan.cpp check_framework): data parallelism only (DDP, FSDP, one GPU),
// AMP in bf16, whole-layer gradient checkpointing or none.
PlanConstraints pytorch_constraints(PlanConstraints fix) {
  fix = one_model_per_gpu(std::move(fix));
  if (fix.recompute_choices.empty()) fix.recompute_choices = {Recompute::none, Recompute::full};
  return fix;
}

// MegaTrain (plan.cpp check_megatrain): one GPU, whole blocks recomputed, no sharding, and its
// own placement (parameters and optimizer in host memory), so every search of it (plan, adapt,
// --compare-profile) prices plans it can run; a pinned tier stays pinned, for check_offload to
// refuse. Only the micro-batch is the search's to choose.
PlanConstraints megatrain_constraints(PlanConstraints fix) {
  fix = one_model_per_gpu(std::move(fix));
  if (!fix.recompute) fix.recompute = Recompute::full;
  if (!fix.zero) fix.zero = OptimizerSharding::none;
  fix.defaults.offload = {fix.offload_optimizer.value_or(MemoryTier::cpu), fix.offload_params.value_or(MemoryTier::cpu),
                          fix.offload_activations.value_or(MemoryTier::gpu)};
  return fix;
}
}  // namespace

// The search space of the framework a caller plans for (fix.defaults.framework). torchtitan
// (search/framework_support.h) has FSDP2 or DDP only (no ZeRO-1/2), the all-to-all dispatcher
// without EP overlap, no FP8 parameter gather, no partial full recompute, and MTP only without
// pipeline or context parallelism; the rest of its rules filter each candidate.
PlanConstraints framework_constraints(const ModelSpec& model, PlanConstraints fix) {
  if (fix.defaults.framework == TrainingFramework::pytorch) return pytorch_constraints(fix);
  if (fix.defaults.framework == TrainingFramework::megatrain) return megatrain_constraints(fix);
  // DeepSpeed's config has fp16 and bf16 modes only (DeepSpeed edaa7221 runtime/config.py): FP8
  // GEMMs would need Transformer Engine inside the model code, which no exported config says, so
  // the search prices bf16 unless precision is pinned.
  if (deepspeed_engine(fix.defaults.framework) && !fix.precision) fix.precision = Precision::bf16;
  if (fix.defaults.framework != TrainingFramework::torchtitan) return fix;
  if (const TorchtitanFlavor* flavor = torchtitan_flavor(model); flavor == nullptr || flavor->vision_language_only) {
    const char* why = torchtitan_unsupported_reason(model, Plan{});
    throw Error("--framework", "torchtitan cannot run " + model.name + (why != nullptr ? std::string(": ") + why : ""),
                "megatron, or a model torchtitan ships (search/framework_support.h)");
  }
  if (fix.zero_choices.empty()) fix.zero_choices = {OptimizerSharding::none, OptimizerSharding::zero3};
  if (!fix.dispatcher) fix.dispatcher = MoeDispatcher::alltoall;
  if (!fix.overlap_ep) fix.overlap_ep = false;
  if (!fix.delay_wgrad) fix.delay_wgrad = false;
  if (!fix.fp8_param_gather) fix.fp8_param_gather = false;
  if (!fix.recompute_layers) fix.recompute_layers = 0;
  if (model.mtp_layers > 0) {
    if (!fix.pp) fix.pp = 1;
    if (!fix.cp) fix.cp = 1;
  }
  return fix;
}

}  // namespace tessera

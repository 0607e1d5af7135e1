#include "plan/plan.h"

#include <numeric>

#include "core/checks.h"
#include "core/error.h"

namespace tessera {

namespace {
constexpr std::int64_t kMaxDegree = 1'000'000;

std::string divisors_of(std::int64_t n, std::int64_t limit = 64) {
  std::string list;
  int shown = 0;
  for (std::int64_t d = 1; d <= n && shown < limit; ++d) {
    if (n % d == 0) {
      list += (list.empty() ? "" : ", ") + std::to_string(d);
      ++shown;
    }
  }
  return list;
}
}  // namespace

const char* to_string(OptimizerSharding value) {
  switch (value) {
    case OptimizerSharding::none: return "none";
    case OptimizerSharding::zero1: return "zero1";
    case OptimizerSharding::zero2: return "zero2";
    case OptimizerSharding::zero3: return "zero3";
  }
  return "?";
}
const char* to_string(Precision value) { return value == Precision::bf16 ? "bf16" : "fp8"; }

OptimizerSharding parse_optimizer_sharding(const std::string& text) {
  if (text == "0" || text == "none") return OptimizerSharding::none;
  if (text == "1" || text == "zero1") return OptimizerSharding::zero1;
  if (text == "2" || text == "zero2") return OptimizerSharding::zero2;
  if (text == "3" || text == "zero3" || text == "fsdp") return OptimizerSharding::zero3;
  throw Error("zero", "unknown value '" + text + "'", "0|none, 1|zero1, 2|zero2, 3|zero3|fsdp");
}

Precision parse_precision(const std::string& text) {
  if (text == "bf16" || text == "fp16") return Precision::bf16;
  if (text == "fp8") return Precision::fp8;
  throw Error("precision", "unknown value '" + text + "'", "bf16, fp16, fp8");
}

namespace {
struct FrameworkName {
  TrainingFramework value;
  const char* text;
};
// The validation schema's `framework` values (../shared/validation/README.md §1), in its order,
// then megatrain, which no validation file has run.
constexpr FrameworkName kFrameworkNames[] = {
    {TrainingFramework::megatron, "megatron"},         {TrainingFramework::megatron_deepspeed, "megatron-deepspeed"},
    {TrainingFramework::deepspeed, "deepspeed"},       {TrainingFramework::torchtitan, "torchtitan"},
    {TrainingFramework::nemo_automodel, "nemo-automodel"}, {TrainingFramework::pytorch, "pytorch"},
    {TrainingFramework::megatrain, "megatrain"},
};
}  // namespace

const char* to_string(TrainingFramework value) {
  for (const FrameworkName& f : kFrameworkNames)
    if (f.value == value) return f.text;
  return "megatron";
}

TrainingFramework parse_training_framework(const std::string& text) {
  std::string allowed;
  for (const FrameworkName& f : kFrameworkNames) {
    if (text == f.text) return f.value;
    allowed += (allowed.empty() ? "" : ", ") + std::string(f.text);
  }
  throw Error("framework", "unknown value '" + text + "'", allowed);
}

const char* to_string(Fp8Recipe value) {
  switch (value) {
    case Fp8Recipe::delayed: return "delayed";
    case Fp8Recipe::tensorwise: return "tensorwise";
    case Fp8Recipe::blockwise: return "blockwise";
    case Fp8Recipe::mxfp8: return "mxfp8";
  }
  return "?";
}
const char* to_string(MoeDispatcher value) {
  switch (value) {
    case MoeDispatcher::alltoall: return "alltoall";
    case MoeDispatcher::allgather: return "allgather";
    case MoeDispatcher::flex: return "flex";
  }
  return "?";
}
Fp8Recipe parse_fp8_recipe(const std::string& text) {
  if (text == "delayed") return Fp8Recipe::delayed;
  if (text == "tensorwise" || text == "current") return Fp8Recipe::tensorwise;
  if (text == "blockwise") return Fp8Recipe::blockwise;
  if (text == "mxfp8") return Fp8Recipe::mxfp8;
  throw Error("fp8_recipe", "unknown value '" + text + "'", "delayed, tensorwise (current), blockwise, mxfp8");
}
MoeDispatcher parse_moe_dispatcher(const std::string& text) {
  if (text == "alltoall") return MoeDispatcher::alltoall;
  if (text == "allgather") return MoeDispatcher::allgather;
  if (text == "flex") return MoeDispatcher::flex;
  throw Error("dispatcher", "unknown value '" + text + "'", "alltoall, allgather, flex");
}

namespace {
constexpr const char* kRecomputeModuleNames[] = {"core_attn", "moe_act", "layernorm", "mla_up_proj",
                                                 "mlp", "moe", "shared_experts"};
}  // namespace

unsigned parse_recompute_modules(const std::string& text) {
  unsigned bits = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t plus = text.find('+', start);
    const std::string name = text.substr(start, plus == std::string::npos ? std::string::npos : plus - start);
    unsigned bit = 0;
    for (unsigned i = 0; i < std::size(kRecomputeModuleNames); ++i)
      if (name == kRecomputeModuleNames[i]) bit = 1u << i;
    if (bit == 0)
      throw Error("recompute_modules", "unknown module '" + name + "'",
                  "core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts joined by '+'");
    if (bits & bit) throw Error("recompute_modules", "'" + name + "' given twice", "each module once");
    bits |= bit;
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  return bits;
}

std::string recompute_modules_text(unsigned modules) {
  std::string text;
  for (unsigned i = 0; i < std::size(kRecomputeModuleNames); ++i)
    if (modules & (1u << i)) {
      if (!text.empty()) text += '+';
      text += kRecomputeModuleNames[i];
    }
  return text;
}

void Workload::validate() const {
  require_positive("gbs", global_batch, kMaxGlobalBatch);
  require_positive("seq", seq_len, 100'000'000);
}

namespace {
constexpr double kMaxCapacityFactor = 1000.0;
// Below 1% of the balanced load an expert keeps almost no token: a smaller non-zero factor (e.g. a
// denormal) is a unit slip, not a plan.
constexpr double kMinCapacityFactor = 0.01;

// Expert layouts and MoE switches, with Megatron-Core's rules (megatron/core/transformer/
// transformer_config.py __post_init__ and megatron/training/arguments.py, Megatron-LM main at
// d98e8a64, 2026-08).
void validate_moe_plan(const Plan& p, const ModelSpec& m) {
  require_non_negative("etp", p.etp, kMaxDegree);
  if (!m.is_moe()) {
    if (p.etp > 1) throw Error("etp", "expert tensor parallelism needs an MoE model", "0 or 1");
    if (p.overlap_ep) throw Error("overlap_ep", "needs an MoE model", "0");
    if (p.capacity_factor != 0) throw Error("capacity_factor", "needs an MoE model", "0");
  }
  const std::int64_t ranks = saturating_product({p.dp, p.cp, p.tp});
  if (m.is_moe() && ranks % saturating_product({p.expert_tp(), p.ep}) != 0)
    throw Error("etp", "etp*ep = " + std::to_string(p.expert_tp() * p.ep) + " does not divide tp*cp*dp = " +
                           std::to_string(ranks),
                "etp with etp*ep dividing " + std::to_string(ranks) + ": " + divisors_of(ranks / p.ep));
  if (!(p.capacity_factor == 0 ||
        (p.capacity_factor >= kMinCapacityFactor && p.capacity_factor <= kMaxCapacityFactor)))
    throw Error("capacity_factor", "got " + number_text(p.capacity_factor),
                "0 (dropless) or a factor from 0.01 to 1000");
  if (p.overlap_ep) {
    if (p.ep <= 1) throw Error("overlap_ep", "is only supported with expert parallelism (ep > 1)", "0 when ep = 1");
    if (p.dispatcher == MoeDispatcher::allgather)
      throw Error("overlap_ep", "is supported with the alltoall and flex dispatchers only", "0 with dispatcher=allgather");
    if (p.recompute == Recompute::full)
      throw Error("overlap_ep", "cannot be combined with full recompute", "0 with recompute=full");
    if (p.selective_modules() & kRecomputeMoe)
      throw Error("overlap_ep", "cannot be combined with recomputing the moe module", "0 with recompute_modules containing moe");
    if (p.pp > 1 && p.vpp <= 1)
      throw Error("overlap_ep", "needs an interleaved pipeline (vpp > 1) when pp > 1", "0, or vpp > 1");
    if (m.mtp_layers > 1)
      throw Error("overlap_ep", "supports at most one MTP layer", "0 for models with more than one MTP layer");
  }
  if (p.delay_wgrad && !p.overlap_ep)
    throw Error("delay_wgrad", "needs overlap_ep (Megatron: delay_wgrad_compute requires overlap_moe_expert_parallel_comm)",
                "0, or overlap_ep=1");
  if (p.recompute_modules != 0 && p.recompute != Recompute::selective)
    throw Error("recompute_modules", "only applies to selective recompute", "empty unless recompute=selective");
  if (p.recompute_modules & ~kAllRecomputeModules)
    throw Error("recompute_modules", "unknown module bits", recompute_modules_text(kAllRecomputeModules));
  if ((p.selective_modules() & kRecomputeMlaUpProj) && m.attention != AttentionKind::mla)
    throw Error("recompute_modules", "mla_up_proj needs multi-head latent attention", "modules without mla_up_proj");
  const unsigned moe_only = kRecomputeMoeAct | kRecomputeMoe | kRecomputeSharedExperts;
  if ((p.selective_modules() & moe_only) && !m.is_moe())
    throw Error("recompute_modules", "moe_act, moe and shared_experts need an MoE model", "core_attn, layernorm, mlp");
  if (p.fp8_param_gather && p.precision != Precision::fp8)
    throw Error("fp8_param_gather", "needs precision=fp8", "0 unless precision=fp8");
  // arguments.py: "--fp8-param-gather only supported with distributed optimizer, torch fsdp2,
  // megatron fsdp".
  if (p.fp8_param_gather && p.zero == OptimizerSharding::none)
    throw Error("fp8_param_gather", "needs a sharded optimizer (Megatron's distributed optimizer or FSDP)",
                "0 with zero=none, or zero=zero1|zero2|zero3");
  // transformer_config.py: "Delayed scaling does not support moe_act and layernorm recompute".
  if (p.precision == Precision::fp8 && p.fp8_recipe == Fp8Recipe::delayed &&
      (p.selective_modules() & (kRecomputeMoeAct | kRecomputeLayernorm)))
    throw Error("fp8_recipe", "delayed scaling does not support recomputing moe_act or layernorm",
                "tensorwise, blockwise or mxfp8 with those modules, or modules without them");
}

// MegaTrain (DLYuanGod/MegaTrain 919520f, infinity/model/cpu_master.py, examples/sft/configs/
// README.md): one Hugging Face model in bf16 streamed layer by layer through each GPU, no tensor,
// pipeline, context or expert parallelism; every block of layers checkpointed (checkpoint_interval)
// and recomputed; parameters and Adam in host memory. Its multi-GPU mode shares that host copy
// among spawned workers without NCCL, which Tessera does not model, so one GPU.
void check_megatrain(const Plan& p) {
  const std::pair<const char*, std::int64_t> degrees[] = {{"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp}, {"ep", p.ep}, {"dp", p.dp}};
  for (const auto& [key, value] : degrees)
    if (value != 1)
      throw Error(key, "framework megatrain streams one model through one GPU (its shared-memory data parallelism is not modelled)",
                  std::string(key) + "=1 on a one-GPU cluster");
  if (p.precision == Precision::fp8)
    throw Error("precision", "framework megatrain computes in the model's dtype", "bf16");
  if (p.recompute != Recompute::full || p.recompute_layers != 0)
    throw Error("recompute", "framework megatrain checkpoints every block of layers and recomputes it (checkpoint_interval)",
                "full, with recompute_layers=0");
  if (p.zero != OptimizerSharding::none)
    throw Error("zero", "framework megatrain keeps one unsharded optimizer in host memory", "none");
}

// What each framework can run, where it is narrower than Megatron-Core.
// - pytorch: a plain loop (torch.nn.parallel.DistributedDataParallel, FSDP / fully_shard, or one
//   GPU) over a Hugging Face model has no tensor, pipeline, context or expert parallelism of its
//   own, and AMP has no FP8 GEMMs (torch.autocast casts to bf16 / fp16 only).
// - deepspeed, megatron-deepspeed: DeepSpeed's engine has no ring context parallelism (its
//   sequence parallelism is Ulysses, over heads; Megatron-DeepSpeed has no Megatron-Core cp).
void check_framework(const Plan& p) {
  const char* name = to_string(p.framework);
  if (p.framework == TrainingFramework::pytorch) {
    const std::pair<const char*, std::int64_t> degrees[] = {{"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp}, {"ep", p.ep}};
    for (const auto& [key, value] : degrees)
      if (value != 1)
        throw Error(key, std::string("framework ") + name + " (a plain DDP / FSDP loop) has no " + key + " parallelism",
                    std::string(key) + "=1, or a framework that has it (megatron, torchtitan)");
    if (p.precision == Precision::fp8)
      throw Error("precision", std::string("framework ") + name + " runs AMP, which has no FP8 GEMMs",
                  "bf16, or a framework with FP8 (megatron, torchtitan)");
    // transformers' gradient_checkpointing_enable() checkpoints whole decoder layers.
    if (p.recompute == Recompute::selective)
      throw Error("recompute", std::string("framework ") + name + " checkpoints whole layers (Hugging Face gradient checkpointing)",
                  "none, full");
  }
  if (deepspeed_engine(p.framework) && p.cp != 1)
    throw Error("cp", std::string("framework ") + name + " has no context parallelism", "cp=1, or framework megatron");
  if (p.framework == TrainingFramework::megatrain) check_megatrain(p);
}

}  // namespace

// LoRA / QLoRA (plan/fine_tuning.h): an adapter of rank 1 .. hidden on frameworks that attach one
// (PEFT under a plain loop or DeepSpeed, NeMo AutoModel's PEFT); QLoRA's 4-bit base needs
// bitsandbytes (PEFT) and computes in bf16.
void check_fine_tuning(const Plan& p, const ModelSpec& m) {
  const FineTuning& t = p.tuning;
  if (!t.adapters()) {
    if (t.lora_rank != 0)
      throw Error("lora_rank", "only applies to task lora or qlora (task is " + std::string(to_string(t.task)) + ")",
                  "0, or task=lora|qlora");
    return;
  }
  if (t.lora_rank < 1 || t.lora_rank > m.hidden)
    throw Error("lora_rank", "got " + std::to_string(t.lora_rank), "1 .. " + std::to_string(m.hidden) + " (the hidden size)");
  if (t.lora_targets == 0 || (t.lora_targets & ~kLoraAllLinear) != 0)
    throw Error("lora_targets", "no module targeted", "all-linear, attention, or a '+' list of q, k, v, o, gate, up, down");
  if (m.attention == AttentionKind::mla)
    throw Error("task", "LoRA targets of MLA attention (q_a_proj, kv_b_proj, ...) are not modelled", "pretrain or full-finetune for an MLA model");
  const bool peft = p.framework == TrainingFramework::pytorch || deepspeed_engine(p.framework) ||
                    p.framework == TrainingFramework::nemo_automodel;
  if (!peft || p.framework == TrainingFramework::megatron_deepspeed)
    throw Error("task", std::string("framework ") + to_string(p.framework) + " trains every parameter (no LoRA adapters)",
                "pretrain or full-finetune, or framework pytorch, deepspeed, nemo-automodel for lora");
  if (t.quantized_base() && p.precision != Precision::bf16)
    throw Error("precision", "QLoRA dequantizes its 4-bit weights to bf16 for every GEMM", "bf16");
  if (t.quantized_base() && p.framework == TrainingFramework::nemo_automodel)
    throw Error("task", "QLoRA's 4-bit base runs through bitsandbytes under PEFT", "lora, or framework pytorch / deepspeed");
}

Plan as_run_by_framework(const Plan& plan) {
  Plan p = plan;
  if (!deepspeed_engine(p.framework)) return p;
  if (p.pp > 1) {
    p.overlap_p2p = false;
    p.p2p_scatter_gather = false;
    p.overlap_grad_reduce = false;
  }
  p.overlap_param_gather = false;
  return p;
}

void validate_plan(const Plan& p, const ModelSpec& m, const Cluster& c, const Workload& w) {
  w.validate();
  check_framework(p);
  check_offload(p, c);
  check_fine_tuning(p, m);
  require_positive("tp", p.tp, kMaxDegree);
  require_positive("pp", p.pp, kMaxDegree);
  require_positive("dp", p.dp, kMaxDegree);
  require_positive("cp", p.cp, kMaxDegree);
  require_positive("ep", p.ep, kMaxDegree);
  require_positive("vpp", p.vpp, kMaxDegree);
  require_positive("mb", p.micro_batch, 1'000'000);
  if (p.gpus() != c.gpus())
    throw Error("dp", "tp*pp*dp*cp = " + (p.gpus() >= kMaxCount ? std::string("over 10^12") : std::to_string(p.gpus())) + " but the cluster has " +
                          std::to_string(c.gpus()) + " GPUs",
                "degrees whose product is " + std::to_string(c.gpus()));
  if (m.heads % p.tp != 0)
    throw Error("tp", std::to_string(p.tp) + " does not divide the " + std::to_string(m.heads) +
                          " attention heads", divisors_of(m.heads));
  if (m.attention != AttentionKind::mla && m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
    throw Error("tp", std::to_string(p.tp) + " neither divides nor is a multiple of the " +
                          std::to_string(m.kv_heads) + " kv heads",
                divisors_of(m.kv_heads) + " (or multiples of " + std::to_string(m.kv_heads) + ")");
  // Every virtual stage needs a layer, or the embedding / loss when they are accounted as one.
  const std::int64_t slots = m.layers + (p.account_embedding ? 1 : 0) + (p.account_loss ? 1 : 0);
  if (p.pp * p.vpp > slots)
    throw Error(p.vpp > 1 ? "vpp" : "pp",
                "pp*vpp = " + std::to_string(p.pp * p.vpp) + " exceeds the " + std::to_string(m.layers) +
                    " layers" + (slots > m.layers ? " + accounted embedding / loss" : ""),
                "pp*vpp <= " + std::to_string(slots));
  if (p.vpp > 1 && p.pp == 1)
    throw Error("vpp", "interleaving needs pp > 1", "1 when pp = 1");
  if (p.sequence_parallel && p.tp == 1)
    throw Error("sp", "sequence parallelism needs tp > 1", "0 when tp = 1");
  // Megatron-LM validate_args (arguments.py, d98e8a64): "Tensor parallel communication/GEMM
  // overlap can happen only when sequence parallelism is enabled".
  if (p.overlap_tp_comm && !p.sequence_parallel)
    throw Error("overlap_tp", "TP-communication overlap needs sequence parallelism", "0, or sp=1 with tp > 1");
  if (p.cp > 1 && !p.flash_attention)
    throw Error("cp", "context parallelism needs fused (flash) attention, and the plan has flash=0",
                "1 when flash=0");
  if (!context_parallel_supported(p.cp, w.seq_len, p.flash_attention))
    throw Error("cp", "2*cp = " + std::to_string(2 * p.cp) + " does not divide seq " + std::to_string(w.seq_len) +
                          " (causal load balancing cuts the sequence into 2*cp chunks)",
                "1, or a cp with seq divisible by 2*cp");
  if (p.ep > 1) {
    if (!m.is_moe()) throw Error("ep", "expert parallelism needs an MoE model", "1");
    if (m.moe.experts % p.ep != 0)
      throw Error("ep", std::to_string(p.ep) + " does not divide the " +
                            std::to_string(m.moe.experts) + " experts",
                  divisors_of(m.moe.experts));
    if (saturating_product({p.dp, p.cp, p.tp}) % p.ep != 0)
      throw Error("ep", std::to_string(p.ep) + " does not divide dp*cp*tp = " +
                            std::to_string(p.dp * p.cp * p.tp),
                  divisors_of(p.dp * p.cp * p.tp));
  }
  validate_moe_plan(p, m);
  if (w.global_batch % saturating_product({p.dp, p.micro_batch}) != 0)
    throw Error("gbs", "global batch " + std::to_string(w.global_batch) +
                           " is not a multiple of dp*mb = " + std::to_string(p.dp * p.micro_batch),
                "a multiple of " + std::to_string(p.dp * p.micro_batch));
  if (p.vpp > 1 && p.microbatches(w) % p.pp != 0)
    throw Error("mb", "the interleaved schedule needs micro-batches per step (" +
                          std::to_string(p.microbatches(w)) + ") to be a multiple of pp (" +
                          std::to_string(p.pp) + ")",
                "gbs/(dp*mb) a multiple of pp");
  if (p.precision == Precision::fp8 && c.gpu.fp8_tflops <= 0)
    throw Error("precision", "fp8 is not supported on " + c.gpu.key, "bf16");
  if (p.precision == Precision::fp8 && p.fp8_recipe == Fp8Recipe::mxfp8 && !c.gpu.mxfp8)
    throw Error("fp8_recipe", "mxfp8 needs Blackwell-class tensor cores, not " + c.gpu.key,
                "delayed, tensorwise, blockwise");
  require_non_negative("recompute_layers", p.recompute_layers, m.layers);
  if (p.recompute_layers > 0 && p.recompute != Recompute::full)
    throw Error("recompute_layers", "only applies to full recompute", "0 unless recompute=full");
  if (p.first_stage_layers < 0 || p.last_stage_layers < 0)
    throw Error("first_stage_layers", "negative", "0 (Megatron default) or a positive count");
  (void)split_layers(p, m.layers);  // throws if a requested uneven split is impossible
}

namespace {
// Physical stages with explicit first / last counts (Megatron's --decoder-first/last-pipeline-
// num-layers): the unspecified end takes the middle stages' share, the middles share the rest.
LayerSplit explicit_physical_split(const Plan& p, std::int64_t layers) {
  std::int64_t first = p.first_stage_layers;
  std::int64_t last = p.last_stage_layers;
  if (first == 0 || last == 0) {
    const std::int64_t known = first + last;
    const std::int64_t remaining = layers - known;
    const std::int64_t middle_count = p.pp - 1;
    if (remaining < middle_count || remaining % middle_count != 0)
      throw Error(first == 0 ? "last_stage_layers" : "first_stage_layers",
                  "the remaining " + std::to_string(remaining) + " layers do not divide evenly over " +
                      std::to_string(middle_count) + " stages",
                  "a count leaving a multiple of " + std::to_string(middle_count));
    const std::int64_t each = remaining / middle_count;
    if (first == 0) first = each;
    if (last == 0) last = each;
  }
  const std::int64_t remaining = layers - first - last;
  const std::int64_t middle_count = p.pp - 2;
  if (remaining < 0 || (middle_count == 0 && remaining != 0) ||
      (middle_count > 0 && (remaining < middle_count || remaining % middle_count != 0)))
    throw Error("first_stage_layers",
                "first + last = " + std::to_string(first + last) + " leaves " + std::to_string(remaining) +
                    " layers for " + std::to_string(middle_count) + " middle stages",
                "values leaving an equal positive count per middle stage");
  LayerSplit s;
  s.first = first;
  s.last = last;
  s.middle = middle_count > 0 ? remaining / middle_count : 0;
  const std::int64_t smallest = std::min({first, last, middle_count > 0 ? s.middle : first});
  if (smallest < p.vpp)
    throw Error(first < p.vpp ? "first_stage_layers" : "last_stage_layers",
                "a stage of " + std::to_string(smallest) + " layers cannot fill its " + std::to_string(p.vpp) +
                    " chunks",
                "at least vpp = " + std::to_string(p.vpp) + " layers on every stage");
  return s;
}

// Physical stages with the embedding and / or the loss counted as a layer each: (L + accounted)
// slots over pp x vpp virtual stages, which must divide them (Megatron's TransformerConfig check).
LayerSplit accounted_physical_split(const Plan& p, std::int64_t layers) {
  const char* field = p.account_embedding ? "account_embedding" : "account_loss";
  if (p.first_stage_layers != 0 || p.last_stage_layers != 0)
    throw Error(field, "cannot be combined with first_stage_layers / last_stage_layers",
                "either the accounted split or explicit first / last stage layers");
  const std::int64_t embedding = p.account_embedding ? 1 : 0, loss = p.account_loss ? 1 : 0;
  const std::int64_t slots = layers + embedding + loss;
  const std::int64_t chunks = p.pp * p.vpp;
  if (slots % chunks != 0)
    throw Error(field,
                std::to_string(layers) + " layers + " + std::to_string(embedding + loss) + " accounted = " +
                    std::to_string(slots) + " slots do not divide by pp x vpp = " + std::to_string(chunks),
                "pp x vpp dividing the layers plus the accounted embedding and loss");
  const std::int64_t per_stage = slots / p.pp;
  LayerSplit s;
  s.middle = per_stage;
  s.first = per_stage - embedding;
  s.last = per_stage - loss;
  return s;
}

// Physical stages by Megatron's rule: middles ceil(L / pp), the first and last fewer.
LayerSplit default_physical_split(const Plan& p, std::int64_t layers) {
  LayerSplit s;
  const std::int64_t widest = (layers + p.pp - 1) / p.pp;
  const std::int64_t deficit = p.pp * widest - layers;  // layers the stages hold fewer than widest
  s.middle = widest;
  // The first and last share what the middles leave, keeping at least one layer per chunk.
  const std::int64_t ends = 2 * widest - deficit;
  if (ends >= 2 * p.vpp) {
    s.last = ends / 2;
    s.first = ends - s.last;
  } else {
    s.first = s.last = p.vpp;
    s.light_middles = deficit - 2 * (widest - p.vpp);
  }
  return s;
}

// A stage's chunks that hold one layer fewer than ceil(T / vpp): the first ones on stage 0 (the
// embedding's chunk first), the last ones on every other stage (the loss's chunk last).
std::int64_t widest_chunk(std::int64_t stage_layers, std::int64_t vpp) { return (stage_layers + vpp - 1) / vpp; }
LayerSplit::StageChunks chunks_of(bool first_stage, std::int64_t stage_layers, std::int64_t vpp) {
  const std::int64_t widest = widest_chunk(stage_layers, vpp);
  return LayerSplit::StageChunks{widest, vpp * widest - stage_layers, vpp, first_stage};
}
std::int64_t light_chunks_before(bool first_stage, std::int64_t r, std::int64_t light, std::int64_t vpp) {
  return first_stage ? std::min(r, light) : std::max<std::int64_t>(0, r - (vpp - light));
}
// Layers in chunks 0 .. r - 1 of a stage of `stage_layers`.
std::int64_t layers_before_round(bool first_stage, std::int64_t stage_layers, std::int64_t r, std::int64_t vpp) {
  const LayerSplit::StageChunks chunks = chunks_of(first_stage, stage_layers, vpp);
  return r * chunks.widest - light_chunks_before(first_stage, r, chunks.light, vpp);
}
std::int64_t chunk_layers(bool first_stage, std::int64_t stage_layers, std::int64_t r, std::int64_t vpp) {
  return chunks_of(first_stage, stage_layers, vpp).layers(r);
}
}  // namespace

LayerSplit split_layers(const Plan& p, std::int64_t layers) {
  LayerSplit s;
  if (p.pp == 1) {
    s.first = s.middle = s.last = layers;
  } else if (p.account_embedding || p.account_loss) {
    s = accounted_physical_split(p, layers);
  } else if (p.first_stage_layers == 0 && p.last_stage_layers == 0) {
    s = default_physical_split(p, layers);
  } else {
    s = explicit_physical_split(p, layers);
  }
  s.pp = p.pp;
  s.vpp = p.vpp;
  s.virtual_stages = p.pp * p.vpp;
  return s;
}

std::int64_t LayerSplit::physical_stage_layers(std::int64_t s) const {
  if (s == 0) return first;
  if (s == pp - 1) return last;
  return s <= light_middles ? middle - 1 : middle;
}

LayerSplit::StageChunks LayerSplit::stage_chunks(std::int64_t s) const {
  return chunks_of(s == 0, physical_stage_layers(s), vpp);
}

std::int64_t LayerSplit::virtual_stage_layers(std::int64_t k) const { return stage_chunks(k % pp).layers(k / pp); }

// Chunks before k in pipeline order: every stage's rounds before k's round, then the stages
// before k's stage in that round. Stages of one kind (the light middles, the full middles) hold
// the same chunks, so each kind is counted once.
std::int64_t LayerSplit::virtual_stage_start(std::int64_t k) const {
  const std::int64_t s = k % pp, r = k / pp;
  if (pp == 1) return layers_before_round(true, first, r, vpp);
  const std::int64_t full_middles = pp - 2 - light_middles;
  std::int64_t start = layers_before_round(true, first, r, vpp) + layers_before_round(false, last, r, vpp) +
                       light_middles * layers_before_round(false, middle - 1, r, vpp) +
                       full_middles * layers_before_round(false, middle, r, vpp);
  if (s == 0) return start;
  start += chunk_layers(true, first, r, vpp);
  const std::int64_t light_before = std::min(s - 1, light_middles);
  const std::int64_t full_before = s - 1 - light_before;
  return start + light_before * chunk_layers(false, middle - 1, r, vpp) + full_before * chunk_layers(false, middle, r, vpp);
}

bool LayerSplit::even() const {
  if (light_middles != 0 || first % vpp != 0) return false;
  return pp == 1 || (last == first && (pp == 2 || middle == first));
}

std::vector<std::int64_t> layers_per_virtual_stage(const Plan& p, std::int64_t layers) {
  const LayerSplit split = split_layers(p, layers);
  std::vector<std::int64_t> out;
  for (std::int64_t k = 0; k < split.virtual_stages; ++k) out.push_back(split.virtual_stage_layers(k));
  return out;
}

}  // namespace tessera

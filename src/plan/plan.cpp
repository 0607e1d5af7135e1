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
  require_positive("gbs", global_batch, 1'000'000'000);
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
}  // namespace

void validate_plan(const Plan& p, const ModelSpec& m, const Cluster& c, const Workload& w) {
  w.validate();
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
  if (p.pp * p.vpp > m.layers)
    throw Error(p.vpp > 1 ? "vpp" : "pp",
                "pp*vpp = " + std::to_string(p.pp * p.vpp) + " exceeds the " +
                    std::to_string(m.layers) + " layers",
                "pp*vpp <= " + std::to_string(m.layers));
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

LayerSplit split_layers(const Plan& p, std::int64_t layers) {
  const std::int64_t stages = p.pp * p.vpp;
  if (stages == 1) return {layers, 0, 0, 1};
  std::int64_t first = p.first_stage_layers;
  std::int64_t last = p.last_stage_layers;
  if (first == 0 && last == 0 && layers % stages == 0) {
    const std::int64_t each = layers / stages;
    return {each, each, each, stages};
  }
  if (first == 0 && last == 0) {
    // Middle stages take ceil(L/S); the rest is shared by the first and last, which take fewer
    // (the last, which also computes the logits and loss, takes the smaller share).
    std::int64_t middle = (layers + stages - 1) / stages;
    std::int64_t rest = layers - (stages - 2) * middle;
    while (rest < 2 && middle > 1) {
      --middle;
      rest = layers - (stages - 2) * middle;
    }
    last = rest / 2;
    first = rest - last;
  } else {
    if (first == 0 || last == 0) {
      const std::int64_t known = first + last;
      const std::int64_t remaining = layers - known;
      // The unspecified end gets the middle stages' share (Megatron semantics).
      const std::int64_t middle_count = stages - 1;
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
    const std::int64_t middle_count = stages - 2;
    if (remaining < 0 || (middle_count == 0 && remaining != 0) ||
        (middle_count > 0 && (remaining < middle_count || remaining % middle_count != 0)))
      throw Error("first_stage_layers",
                  "first + last = " + std::to_string(first + last) + " leaves " +
                      std::to_string(remaining) + " layers for " + std::to_string(middle_count) +
                      " middle stages",
                  "values leaving an equal positive count per middle stage");
  }
  const std::int64_t middle = stages > 2 ? (layers - first - last) / (stages - 2) : 0;
  return {first, middle, last, stages};
}

std::int64_t LayerSplit::physical_stage_layers(std::int64_t s, std::int64_t pp) const {
  if (virtual_stages == 1) return first;
  const std::int64_t chunks = virtual_stages / pp;
  std::int64_t total = chunks * middle;
  if (s == 0) total += first - middle;
  if (s == pp - 1) total += last - middle;
  return total;
}

std::vector<std::int64_t> layers_per_virtual_stage(const Plan& p, std::int64_t layers) {
  const LayerSplit split = split_layers(p, layers);
  std::vector<std::int64_t> out;
  for (std::int64_t k = 0; k < split.virtual_stages; ++k) out.push_back(split.virtual_stage_layers(k));
  return out;
}

}  // namespace tessera

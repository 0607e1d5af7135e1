#include "export/megatron_launch.h"

#include <fmt/core.h>

#include "core/error.h"

namespace tessera {

namespace {

void add(std::vector<std::string>& out, const char* flag, std::int64_t value) {
  out.emplace_back(flag);
  out.push_back(std::to_string(value));
}

// Megatron-Core names of the recompute modules (transformer_config.py recompute_modules, d98e8a64),
// which are Tessera's names.
void add_recompute_modules(std::vector<std::string>& out, unsigned modules) {
  out.emplace_back("--recompute-modules");
  const std::string text = recompute_modules_text(modules);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t plus = text.find('+', start);
    out.push_back(text.substr(start, plus == std::string::npos ? std::string::npos : plus - start));
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
}

// Megatron's --moe-layer-freq as an explicit per-layer list (1 = MoE). Megatron's integer form N
// puts the MoE layer first in each group of N (layer i is MoE when i % N == 0,
// transformer_config.py moe_layer_freq), Tessera's layer_freq the last (Llama 4's
// interleave_moe_layer_step), and leading dense layers have no integer form at all.
std::string moe_layer_pattern(const ModelSpec& m) {
  std::string list = "[";
  for (std::int64_t i = 0; i < m.layers; ++i) {
    if (i > 0) list += ',';
    list += m.is_moe_layer(i) ? '1' : '0';
  }
  return list + "]";
}

}  // namespace

std::vector<std::string> megatron_args(const ModelSpec& m, const Plan& p, const Workload& w) {
  std::vector<std::string> a;
  add(a, "--tensor-model-parallel-size", p.tp);
  add(a, "--pipeline-model-parallel-size", p.pp);
  add(a, "--context-parallel-size", p.cp);
  if (p.ep > 1) add(a, "--expert-model-parallel-size", p.ep);
  // Megatron's default expert tensor parallelism is tp; stated for every MoE plan (MoE parallel
  // folding: etp x ep must divide tp x cp x dp, which validate_plan checks).
  if (m.is_moe()) add(a, "--expert-tensor-parallel-size", p.expert_tp());
  const LayerSplit split = split_layers(p, m.layers);
  const bool uneven = split.virtual_stages > 1 && (split.first != split.middle || split.last != split.middle);
  if (p.vpp > 1) {
    if (!uneven) add(a, "--num-layers-per-virtual-pipeline-stage", m.layers / (p.pp * p.vpp));
    else add(a, "--num-virtual-stages-per-pipeline-rank", p.vpp);
  }
  if (uneven) {
    add(a, "--decoder-first-pipeline-num-layers", split.first);
    add(a, "--decoder-last-pipeline-num-layers", split.last);
  }
  if (p.sequence_parallel) a.emplace_back("--sequence-parallel");
  add(a, "--micro-batch-size", p.micro_batch);
  add(a, "--global-batch-size", w.global_batch);
  add(a, "--seq-length", w.seq_len);
  switch (p.recompute) {
    case Recompute::none: break;
    case Recompute::selective:
      a.insert(a.end(), {"--recompute-granularity", "selective"});
      // Megatron's default list is core_attn; other sets are named.
      if (p.recompute_modules != 0) add_recompute_modules(a, p.recompute_modules);
      break;
    case Recompute::full:
      if (p.recompute_layers > 0) {
        a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "block"});
        add(a, "--recompute-num-layers", p.recompute_layers);
      } else {
        a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "uniform"});
        add(a, "--recompute-num-layers", 1);
      }
      break;
  }
  if (p.zero == OptimizerSharding::zero1 || p.zero == OptimizerSharding::zero2)
    a.emplace_back("--use-distributed-optimizer");
  if (p.zero == OptimizerSharding::zero3) {
    // ZeRO-3 is Megatron-FSDP sharding optimizer state, gradients and parameters. Not
    // --use-torch-fsdp2, which Megatron rejects with pipeline or expert parallelism, and it
    // needs the fsdp_dtensor checkpoint format (arguments.py validate_args, d98e8a64).
    a.insert(a.end(), {"--use-megatron-fsdp", "--data-parallel-sharding-strategy", "optim_grads_params",
                       "--ckpt-format", "fsdp_dtensor"});
  }
  if (p.overlap_grad_reduce) a.emplace_back("--overlap-grad-reduce");
  // Megatron: --overlap-param-gather needs the distributed optimizer or Megatron-FSDP, and
  // --overlap-grad-reduce with it.
  if (p.overlap_param_gather && p.overlap_grad_reduce && p.zero != OptimizerSharding::none)
    a.emplace_back("--overlap-param-gather");
  if (p.overlap_tp_comm) a.emplace_back("--tp-comm-overlap");
  if (!p.overlap_p2p) a.emplace_back("--no-overlap-p2p-communication");
  a.emplace_back("--bf16");
  if (p.precision == Precision::fp8) {
    // E4M3 forward, E5M2 gradients; the recipe by name (Megatron's default is delayed).
    a.insert(a.end(), {"--fp8-format", "hybrid", "--fp8-recipe", to_string(p.fp8_recipe)});
    if (p.fp8_param_gather) {
      if (p.zero == OptimizerSharding::none)
        throw Error("fp8_param_gather", "Megatron supports it only with the distributed optimizer or FSDP",
                    "zero=1 or zero=3 with fp8_param_gather=1, or fp8_param_gather=0");
      a.emplace_back("--fp8-param-gather");
    }
  }
  if (p.precision == Precision::fp8 && p.fp8_recipe == Fp8Recipe::delayed &&
      (p.selective_modules() & (kRecomputeMoeAct | kRecomputeLayernorm)))
    throw Error("fp8_recipe", "delayed scaling cannot recompute moe_act or layernorm (Megatron-Core)",
                "tensorwise, blockwise or mxfp8 with those modules, or other recompute_modules");
  if (!p.flash_attention) a.insert(a.end(), {"--attention-backend", "unfused"});
  // Model shape.
  add(a, "--num-layers", m.layers);
  add(a, "--hidden-size", m.hidden);
  if (m.ffn_hidden > 0) add(a, "--ffn-hidden-size", m.ffn_hidden);
  add(a, "--num-attention-heads", m.heads);
  if (m.kv_heads != m.heads && m.attention != AttentionKind::mla) {
    a.emplace_back("--group-query-attention");
    add(a, "--num-query-groups", m.kv_heads);
  }
  if (m.head_dim * m.heads != m.hidden) add(a, "--kv-channels", m.head_dim);
  add(a, "--max-position-embeddings", m.max_context);
  add(a, "--vocab-size", m.vocab);
  if (m.mlp == MlpType::swiglu) a.emplace_back("--swiglu");
  if (m.mlp == MlpType::relu2) a.emplace_back("--squared-relu");
  a.insert(a.end(), {"--normalization", m.norm == NormType::rmsnorm ? "RMSNorm" : "LayerNorm"});
  a.insert(a.end(), {"--position-embedding-type", m.position == PositionEmbedding::rope ? "rope" : "learned_absolute"});
  if (!m.tied_embeddings) a.emplace_back("--untie-embeddings-and-output-weights");
  if (!m.linear_bias) a.emplace_back("--disable-bias-linear");
  if (m.qkv_bias && !m.linear_bias) a.emplace_back("--add-qkv-bias");
  if (!m.dropout) a.insert(a.end(), {"--attention-dropout", "0", "--hidden-dropout", "0"});
  if (m.is_moe()) {
    add(a, "--num-experts", m.moe.experts);
    add(a, "--moe-router-topk", m.moe.top_k);
    add(a, "--moe-ffn-hidden-size", m.moe.expert_ffn_hidden);
    if (m.moe.shared_experts > 0)
      add(a, "--moe-shared-expert-intermediate-size", m.moe.shared_experts * m.moe.expert_ffn_hidden);
    if (m.moe.dense_layers > 0 || m.moe.layer_freq > 1) a.insert(a.end(), {"--moe-layer-freq", moe_layer_pattern(m)});
    // Tessera costs grouped expert GEMMs; Megatron also needs them to recompute moe_act.
    a.emplace_back("--moe-grouped-gemm");
    // Megatron's default dispatcher is allgather: always named.
    a.insert(a.end(), {"--moe-token-dispatcher-type", to_string(p.dispatcher)});
    if (p.dispatcher == MoeDispatcher::flex) {
      // DeepEP cannot pad expert inputs to capacity; HybridEP can (transformer_config.py,
      // d98e8a64). (HybridEP is also the backend for multi-node NVLink domains.)
      a.insert(a.end(), {"--moe-flex-dispatcher-backend", p.capacity_factor > 0 ? "hybridep" : "deepep"});
    }
    if (p.capacity_factor > 0) {
      a.insert(a.end(), {"--moe-expert-capacity-factor", fmt::format("{}", p.capacity_factor),
                         "--moe-pad-expert-input-to-capacity"});
    }
    if (p.force_balance) a.emplace_back("--moe-router-force-load-balancing");
    if (p.overlap_ep) a.emplace_back("--overlap-moe-expert-parallel-comm");
    if (p.delay_wgrad) a.emplace_back("--delay-wgrad-compute");
    if (m.moe.scoring == RouterScoring::sigmoid) a.insert(a.end(), {"--moe-router-score-function", "sigmoid"});
    // Megatron: "Please use --moe-router-pre-softmax when topk is 1" (softmax scoring).
    if (m.moe.top_k == 1 && m.moe.scoring == RouterScoring::softmax) a.emplace_back("--moe-router-pre-softmax");
    if (m.moe.groups > 0) {
      add(a, "--moe-router-num-groups", m.moe.groups);
      add(a, "--moe-router-group-topk", m.moe.topk_groups);
    }
    // With sigmoid scores the router bias is DeepSeek-V3's aux-loss-free expert bias (§2.1.2),
    // Megatron's --moe-router-enable-expert-bias, which Megatron allows only with sigmoid (or
    // sqrtsoftplus) scores; with softmax it is a bias on the router's logits (GPT-OSS), which
    // has no Megatron flag.
    if (m.moe.router_bias && m.moe.scoring == RouterScoring::sigmoid) a.emplace_back("--moe-router-enable-expert-bias");
  }
  if (m.mtp_layers > 0) add(a, "--mtp-num-layers", m.mtp_layers);
  if (m.qk_norm) a.emplace_back("--qk-layernorm");
  if (m.attention == AttentionKind::mla) {
    a.emplace_back("--multi-latent-attention");
    if (m.mla.q_lora_rank > 0) add(a, "--q-lora-rank", m.mla.q_lora_rank);
    add(a, "--kv-lora-rank", m.mla.kv_lora_rank);
    add(a, "--qk-head-dim", m.mla.qk_nope_head_dim);
    add(a, "--qk-pos-emb-head-dim", m.mla.qk_rope_head_dim);
    add(a, "--v-head-dim", m.mla.v_head_dim);
  }
  return a;
}

std::string megatron_command_line(const ModelSpec& model, const Plan& plan, const Workload& workload) {
  std::string line;
  for (const auto& arg : megatron_args(model, plan, workload)) {
    if (!line.empty()) line += ' ';
    const bool quote = arg.find_first_of("()*+[], ") != std::string::npos;
    line += quote ? "\"" + arg + "\"" : arg;
  }
  return line;
}

}  // namespace tessera

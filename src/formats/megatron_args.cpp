#include "formats/megatron_args.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/core.h>

#include "core/error.h"
#include "export/megatron_rules.h"
#include "formats/integer_text.h"

namespace tessera {

namespace {

// Flags that take a value, and switches; the parser accepts exactly these.
const std::set<std::string>& value_flags() {
  static const std::set<std::string> flags = {
      "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size",
      "--expert-model-parallel-size", "--num-layers-per-virtual-pipeline-stage",
      "--num-virtual-stages-per-pipeline-rank", "--micro-batch-size", "--global-batch-size",
      "--seq-length", "--recompute-granularity", "--recompute-method", "--recompute-num-layers",
      "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers", "--fp8-format",
      "--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads",
      "--num-query-groups", "--kv-channels", "--max-position-embeddings", "--vocab-size",
      "--normalization", "--position-embedding-type", "--num-experts", "--moe-router-topk",
      "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size", "--moe-layer-freq",
      "--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim",
      "--attention-dropout", "--hidden-dropout", "--attention-backend", "--window-size",
      "--data-parallel-size", "--expert-tensor-parallel-size", "--moe-token-dispatcher-type",
      "--moe-flex-dispatcher-backend", "--moe-expert-capacity-factor", "--fp8-recipe", "--mtp-num-layers",
      "--moe-router-score-function", "--moe-router-num-groups", "--moe-router-group-topk",
      "--data-parallel-sharding-strategy", "--ckpt-format", "--pipeline-model-parallel-layout",
      // Model definition (export/megatron_model_flags.h): accepted and ignored.
      "--padded-vocab-size", "--make-vocab-size-divisible-by", "--norm-epsilon", "--rotary-base",
      "--rope-type", "--rope-scaling-factor", "--rotary-scaling-factor", "--mscale", "--mscale-all-dim",
      "--yarn-original-max-position-embeddings", "--yarn-beta-fast", "--yarn-beta-slow",
      "--rotary-seq-len-interpolation-factor", "--glu-linear-offset", "--activation-func-clamp-value",
      "--softmax-type", "--softmax-scale", "--window-attn-skip-freq", "--moe-router-dtype",
      "--moe-router-topk-scaling-factor", "--moe-router-load-balancing-type", "--moe-aux-loss-coeff",
      "--megatron-fsdp-version"};
  return flags;
}
const std::set<std::string>& switch_flags() {
  static const std::set<std::string> flags = {
      "--sequence-parallel", "--use-distributed-optimizer", "--use-torch-fsdp2",
      "--overlap-grad-reduce", "--overlap-param-gather", "--tp-comm-overlap",
      "--overlap-p2p-communication", "--bf16", "--fp16", "--swiglu", "--squared-relu",
      "--group-query-attention", "--untie-embeddings-and-output-weights", "--disable-bias-linear",
      "--add-qkv-bias", "--multi-latent-attention", "--no-overlap-p2p-communication", "--moe-grouped-gemm",
      "--moe-pad-expert-input-to-capacity", "--moe-router-force-load-balancing",
      "--overlap-moe-expert-parallel-comm", "--delay-wgrad-compute", "--fp8-param-gather", "--use-megatron-fsdp",
      "--moe-router-enable-expert-bias", "--moe-router-pre-softmax", "--qk-layernorm", "--quick-geglu",
      "--use-rope-scaling", "--no-gradient-accumulation-fusion", "--account-for-embedding-in-pipeline-split",
      "--account-for-loss-in-pipeline-split"};
  return flags;
}

// --recompute-modules takes a list (nargs): the tokens up to the next flag.
constexpr const char* kRecomputeModulesFlag = "--recompute-modules";

}  // namespace

PlanRequest plan_from_megatron_args(const std::vector<std::string>& args, const ModelSpec& model,
                                    const Cluster& cluster) {
  std::map<std::string, std::string> values;
  std::set<std::string> switches;
  std::string modules;
  std::set<std::string> given;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    // argparse keeps the last of two values silently; Tessera's one rule for every input is that
    // a key given twice is an error, so a pasted command line with a conflict is not half-read.
    if ((flag == kRecomputeModulesFlag || value_flags().count(flag) || switch_flags().count(flag)) &&
        !given.insert(flag).second)
      throw Error(flag, "given twice", "each flag once");
    if (flag == kRecomputeModulesFlag) {
      for (; i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0; ++i) modules += (modules.empty() ? "" : "+") + args[i + 1];
      if (modules.empty()) throw Error(flag, "missing its modules", "one or more of " + recompute_modules_text(kAllRecomputeModules));
    } else if (value_flags().count(flag)) {
      if (i + 1 >= args.size()) throw Error(flag, "missing its value", "a value after the flag");
      values[flag] = args[++i];
    } else if (switch_flags().count(flag)) {
      switches.insert(flag);
    } else {
      throw Error(flag, "not a Megatron-LM flag Tessera reads",
                  "the parallelism, batch, recompute, precision, overlap and model-shape flags");
    }
  }
  auto get = [&](const char* flag, std::int64_t fallback) {
    const auto it = values.find(flag);
    return it == values.end() ? fallback : parse_integer(it->second, flag);
  };
  // Rebuild the shorthand so one parser validates both.
  std::string s = fmt::format("tp={},pp={},cp={},ep={},mb={},gbs={},seq={}",
                              get("--tensor-model-parallel-size", 1), get("--pipeline-model-parallel-size", 1),
                              get("--context-parallel-size", 1), get("--expert-model-parallel-size", 1),
                              get("--micro-batch-size", 1), get("--global-batch-size", 0),
                              get("--seq-length", model.max_context));
  // Expert tensor parallelism is part of the layout (etp x ep must divide tp x cp x dp).
  if (model.is_moe() && values.count("--expert-tensor-parallel-size"))
    s += ",etp=" + values.at("--expert-tensor-parallel-size");
  const std::int64_t pp = get("--pipeline-model-parallel-size", 1);
  if (pp < 1 || pp > model.layers)  // before any division by it (found by fuzz_megatron_args)
    throw Error("--pipeline-model-parallel-size", "got " + std::to_string(pp),
                "1 to the model's " + std::to_string(model.layers) + " layers");
  // An explicit layout (uneven virtual stages): its stage count is pp x vpp; the transformer
  // layers of the first and last physical stages (virtual stages k % pp == 0 and pp - 1) are the
  // plan's first / last stage layers, as Megatron's --decoder-first/last-pipeline-num-layers count.
  std::int64_t layout_first = 0, layout_last = 0;
  if (values.count("--pipeline-model-parallel-layout")) {
    const auto stages = megatron_layout_stages(values.at("--pipeline-model-parallel-layout"));
    const auto stage_count = static_cast<std::int64_t>(stages.size());
    if (pp < 1 || stage_count % pp != 0)
      throw Error("--pipeline-model-parallel-layout", "its stages do not divide by the pipeline size",
                  "pp x vpp stages separated by |");
    s += fmt::format(",vpp={}", stage_count / pp);
    for (std::size_t k = 0; k < stages.size(); ++k) {
      const auto decoders = std::count(stages[k].begin(), stages[k].end(), 't');
      if (static_cast<std::int64_t>(k) % pp == 0) layout_first += decoders;
      if (static_cast<std::int64_t>(k) % pp == pp - 1) layout_last += decoders;
    }
  } else if (values.count("--num-virtual-stages-per-pipeline-rank"))
    s += fmt::format(",vpp={}", get("--num-virtual-stages-per-pipeline-rank", 1));
  else if (values.count("--num-layers-per-virtual-pipeline-stage")) {
    const std::int64_t per_chunk = get("--num-layers-per-virtual-pipeline-stage", 1);
    if (per_chunk < 1 || per_chunk > model.layers || model.layers % (pp * per_chunk) != 0)
      throw Error("--num-layers-per-virtual-pipeline-stage", "does not divide the layers over the stages",
                  "a divisor of layers / pipeline size");
    s += fmt::format(",vpp={}", model.layers / (pp * per_chunk));
  }
  if (switches.count("--account-for-embedding-in-pipeline-split")) s += ",account_embedding=1";
  if (switches.count("--account-for-loss-in-pipeline-split")) s += ",account_loss=1";
  // Uneven split flags: kept only when they differ from Megatron's default split for this
  // layout, so an exported plan reads back to the same plan.
  PlanRequest layout = load_plan(s + ",sp=0,zero=0", model, cluster);
  const LayerSplit default_split = split_layers(layout.plan, model.layers);
  const std::int64_t first = layout_first ? layout_first : get("--decoder-first-pipeline-num-layers", 0);
  const std::int64_t last = layout_last ? layout_last : get("--decoder-last-pipeline-num-layers", 0);
  const bool is_default = (first == 0 || first == default_split.first) && (last == 0 || last == default_split.last);
  if (!is_default) {
    if (first) s += fmt::format(",first_stage_layers={}", first);
    if (last) s += fmt::format(",last_stage_layers={}", last);
  }
  s += fmt::format(",sp={}", switches.count("--sequence-parallel") ? 1 : 0);
  const auto granularity = values.find("--recompute-granularity");
  s += ",recompute=" + (granularity == values.end() ? std::string("none") : granularity->second);
  const auto method = values.find("--recompute-method");
  if (method != values.end() && method->second == "block")
    s += fmt::format(",recompute_layers={}", get("--recompute-num-layers", 0));
  if (!modules.empty()) s += ",recompute_modules=" + modules;
  const bool fsdp = switches.count("--use-torch-fsdp2") || switches.count("--use-megatron-fsdp");
  // Megatron-FSDP's optim_grads shards optimizer state and gradients (ZeRO-2); optim_grads_params
  // (its default) parameters too.
  const auto strategy = values.find("--data-parallel-sharding-strategy");
  const bool grads_only = strategy != values.end() && strategy->second == "optim_grads";
  s += fsdp ? (grads_only ? ",zero=2" : ",zero=3") : (switches.count("--use-distributed-optimizer") ? ",zero=1" : ",zero=0");
  s += values.count("--fp8-format") ? ",precision=fp8" : ",precision=bf16";
  if (values.count("--fp8-format")) {
    // Megatron's default recipe is delayed scaling.
    const auto recipe = values.find("--fp8-recipe");
    s += ",fp8_recipe=" + (recipe == values.end() ? std::string("delayed") : recipe->second);
    if (switches.count("--fp8-param-gather")) s += ",fp8_param_gather=1";
  }
  if (model.is_moe()) {
    // Megatron's default dispatcher is allgather.
    const auto dispatcher = values.find("--moe-token-dispatcher-type");
    s += ",dispatcher=" + (dispatcher == values.end() ? std::string("allgather") : dispatcher->second);
    const auto capacity = values.find("--moe-expert-capacity-factor");
    if (capacity != values.end()) s += ",capacity_factor=" + capacity->second;
    if (switches.count("--moe-router-force-load-balancing")) s += ",force_balance=1";
    if (switches.count("--overlap-moe-expert-parallel-comm")) s += ",overlap_ep=1";
    if (switches.count("--delay-wgrad-compute")) s += ",delay_wgrad=1";
  }
  s += fmt::format(",overlap_grad={},overlap_tp={},overlap_p2p={}", switches.count("--overlap-grad-reduce") ? 1 : 0,
                   switches.count("--tp-comm-overlap") ? 1 : 0, switches.count("--no-overlap-p2p-communication") ? 0 : 1);
  // Megatron gathers parameters per step only with the distributed optimizer; the flag is moot otherwise.
  const bool sharded = fsdp || switches.count("--use-distributed-optimizer");
  s += fmt::format(",overlap_param={}", sharded ? (switches.count("--overlap-param-gather") ? 1 : 0) : 1);
  const auto backend = values.find("--attention-backend");
  s += fmt::format(",flash={}", backend != values.end() && backend->second == "unfused" ? 0 : 1);
  return load_plan(s, model, cluster);
}

}  // namespace tessera

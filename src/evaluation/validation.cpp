#include "evaluation/validation.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include "catalog/gpu_catalog.h"
#include "core/divisors.h"
#include "core/error.h"
#include "cost/cost_model.h"
#include "evaluation/validation_metric.h"
#include "formats/integer_text.h"
#include "formats/plan_text.h"
#include "formats/validation_row.h"
#include "hardware/physical_ranges.h"

namespace tessera {

namespace {

// The sliding window GPT-OSS uses on its local layers (model card); the schema has no column.
constexpr std::int64_t kAssumedSlidingWindow = 128;
// DeepSeek-V3's attention and routing (arXiv 2412.19437 §2.1, §4.2; HF config.json).
constexpr MlaSpec kDeepSeekV3Mla{1536, 512, 128, 64, 128};
constexpr std::int64_t kDeepSeekV3ExpertGroups = 8;
constexpr std::int64_t kDeepSeekV3TopkGroups = 4;

ModelSpec row_model(const ValidationRow& r, std::map<std::string, std::string>& assumed) {
  ModelSpec m;
  m.name = r.get("model_name");
  m.layers = r.integer("n_layers");
  m.hidden = r.integer("hidden");
  m.ffn_hidden = r.integer_or("ffn_hidden", 0);
  m.heads = r.integer("n_heads");
  m.kv_heads = r.integer("n_kv_heads");
  m.head_dim = r.integer_or("head_dim", m.heads > 0 ? m.hidden / m.heads : 0);
  m.vocab = r.integer("vocab");
  m.max_context = r.integer("seq_len");
  m.mlp = parse_mlp_type(r.get("mlp"));
  m.attention = parse_attention_kind(r.get("attention"));
  const bool gpt_style = m.mlp == MlpType::gelu;
  m.norm = gpt_style ? NormType::layernorm : NormType::rmsnorm;
  m.linear_bias = gpt_style;
  m.dropout = gpt_style;  // Megatron's GPT default (hidden and attention dropout 0.1)
  m.position = gpt_style ? PositionEmbedding::learned : PositionEmbedding::rope;
  // The schema has no column for it; a model named "(tied embeddings)" shares its embedding with
  // the LM head (Llama 3.2 1B / 3B: tie_word_embeddings in their configs).
  m.tied_embeddings = m.name.find("tied embeddings") != std::string::npos;
  if (m.tied_embeddings) assumed["tied_embeddings"] = "yes (model_name)";
  const std::int64_t experts = r.integer_or("n_experts", 0);
  if (experts > 1) {
    m.moe.experts = experts;
    m.moe.top_k = r.integer("top_k");
    m.moe.expert_ffn_hidden = r.integer("moe_ffn_hidden");
    m.moe.shared_experts = r.integer_or("n_shared_experts", 0);
    m.moe.dense_layers = r.integer_or("n_dense_layers", 0);
  }
  if (experts > 1 && r.has("moe_layer_freq")) m.moe.layer_freq = r.integer_or("moe_layer_freq", 1);
  const std::string notes = r.get("notes");
  if (m.attention == AttentionKind::mla) {
    // Every mla row uses DeepSeek-V3's published dimensions (validation README §1).
    m.mla = kDeepSeekV3Mla;
    assumed["attention"] = "mla with DeepSeek-V3's dimensions (q/kv LoRA 1536/512, qk 128+64, v 128)";
  }
  // Multi-token prediction: the schema has no column; the DeepSeek-V3 recipes' notes name it
  // ("recipe with MTP (1 layer ...)").
  if (notes.find("with MTP (1 layer") != std::string::npos) {
    m.mtp_layers = 1;
    assumed["mtp_layers"] = "1 (from the notes)";
  }
  if (notes.find("QK-norm") != std::string::npos) m.qk_norm = true;
  if (m.is_moe() && notes.find("DeepSeek-V3 arch") != std::string::npos) {
    // DeepSeek-V3 §2.1.2: sigmoid scores with a per-expert bias, 8 groups, top-4 groups.
    m.moe.scoring = RouterScoring::sigmoid;
    m.moe.router_bias = true;
    m.moe.groups = kDeepSeekV3ExpertGroups;
    m.moe.topk_groups = kDeepSeekV3TopkGroups;
  }
  if (m.attention == AttentionKind::gqa_swa) {
    m.sliding_window = kAssumedSlidingWindow;
    assumed["sliding_window"] = std::to_string(kAssumedSlidingWindow) + " on every other layer (GPT-OSS)";
  }
  m.validate();
  return m;
}

// The modules of the first "--recompute-modules a b ..." in a row's notes (Megatron's flag: module
// names separated by spaces, up to the first word that is not one); 0 when the notes name none.
unsigned recompute_modules_flag(const std::string& notes) {
  constexpr std::string_view kFlag = "--recompute-modules";
  const std::size_t at = notes.find(kFlag);
  if (at == std::string::npos) return 0;
  unsigned modules = 0;
  std::size_t pos = at + kFlag.size();
  while (pos < notes.size()) {
    while (pos < notes.size() && notes[pos] == ' ') ++pos;
    std::size_t end = pos;
    while (end < notes.size() && (std::isalnum(static_cast<unsigned char>(notes[end])) || notes[end] == '_')) ++end;
    if (end == pos) break;
    try {
      modules |= parse_recompute_modules(notes.substr(pos, end - pos));
    } catch (const Error&) {
      break;  // the first word that names no module ends the list
    }
    pos = end;
  }
  return modules;
}

// MoE and FP8 settings the schema states in columns (etp) or only in the notes (routing,
// capacity, dispatcher, EP overlap, FP8 scaling, recompute modules). Each reading is reported.
void set_moe_and_fp8_knobs(const ValidationRow& r, const ModelSpec& model, Plan& p, std::map<std::string, std::string>& assumed) {
  const std::string notes = r.get("notes");
  const auto says = [&notes](const char* text) { return notes.find(text) != std::string::npos; };
  if (model.is_moe()) {
    if (r.has("etp") && !r.empty("etp")) p.etp = r.integer("etp");
    if (says("Force-balanced") || says("force-balanced") || says("--moe-router-force-load-balancing")) {
      p.force_balance = true;
      assumed["routing"] = "force-balanced (notes)";
    } else if (says("capacity factor 1.0") || says("capacity 1.0")) {
      p.capacity_factor = 1.0;
      assumed["routing"] = "capacity factor 1.0 with padding (notes)";
    }
    // DeepEP is Megatron's flex dispatcher (--moe-token-dispatcher-type flex with the DeepEP
    // backend); a row that names plain all-to-all "not DeepEP" keeps the all-to-all.
    if (says("flex dispatcher") || (says("DeepEP") && !says("not DeepEP"))) p.dispatcher = MoeDispatcher::flex;
    if (says("moe_a2a_overlap True")) p.overlap_ep = p.delay_wgrad = true;
    if (p.dispatcher != MoeDispatcher::alltoall || p.overlap_ep)
      assumed["dispatcher"] = std::string(to_string(p.dispatcher)) + (p.overlap_ep ? " with EP overlap" : "") + " (notes)";
  }
  if (p.precision == Precision::fp8 && says("delayed scaling")) p.fp8_recipe = Fp8Recipe::delayed;
  if (says("recompute of mla_up_proj") || says("RM='mla_up_proj'")) {
    p.recompute_modules = kRecomputeMlaUpProj;
    assumed["recompute_modules"] = "mla_up_proj (notes)";
  }
  // Megatron's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split
  // (written "--account-for-embedding/loss-in-pipeline-split" for both).
  if (says("account-for-embedding")) p.account_embedding = true;
  if (says("account-for-loss") || says("account-for-embedding/loss")) p.account_loss = true;
  if (p.account_embedding || p.account_loss)
    assumed["pipeline_split"] = std::string(p.account_embedding && p.account_loss ? "embedding and loss"
                                            : p.account_embedding                 ? "embedding"
                                                                                  : "loss") +
                                " counted as layers (notes)";
  // The ModelZoo's shorthand for --recompute-modules moe_act layernorm.
  if (says("recompute 'norm, act'")) p.recompute_modules = kRecomputeMoeAct | kRecomputeLayernorm;
  if (const unsigned modules = recompute_modules_flag(notes); modules != 0) {
    p.recompute_modules = modules;
    assumed["recompute_modules"] = recompute_modules_text(modules) + " (notes: --recompute-modules)";
  }
}

// The row's `framework` column (validation README §1). `other` (in-house software) and a file
// without the column are priced as Megatron-Core, and say so.
TrainingFramework row_framework(const ValidationRow& r, std::map<std::string, std::string>& assumed) {
  if (!r.has("framework") || r.empty("framework")) {
    assumed["framework"] = "megatron (no framework column)";
    return TrainingFramework::megatron;
  }
  const std::string text = r.get("framework");
  if (text == "other") {
    assumed["framework"] = "megatron (framework 'other': in-house software priced as Megatron-Core)";
    return TrainingFramework::megatron;
  }
  try {
    return parse_training_framework(text);
  } catch (const Error& e) {
    throw Error("framework", "unknown value '" + text + "'", e.allowed() + ", other");
  }
}

// Expert tensor parallel sizes to try when the row leaves etp empty: Megatron's default (tp)
// where the layout allows it, else 1.
std::vector<std::int64_t> etp_candidates(const ValidationRow& r, const ModelSpec& model, const Plan& base) {
  if (!model.is_moe() || (r.has("etp") && !r.empty("etp"))) return {base.etp};
  std::vector<std::int64_t> out;
  const std::int64_t ranks = base.tp * base.cp * base.dp;
  for (std::int64_t e : {base.tp, std::int64_t{1}})
    if (ranks % (e * base.ep) == 0 && std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  return out;
}

constexpr std::int64_t kMaxAssumedMicroBatch = 16;
constexpr std::int64_t kMaxAssumedVpp = 24;
// Candidates re-scored with the simulated pipeline after ranking by the closed form.
constexpr std::size_t kRescoredCandidates = 8;

const GpuSpec& row_gpu(const std::string& key, const std::vector<GpuSpec>* overrides) {
  if (overrides != nullptr)
    for (const GpuSpec& g : *overrides)
      if (g.key == key) return g;
  return find_gpu(key);
}

// The row's cluster: its GPU, count and node size, and its NIC (empty: the catalog's, said in
// `assumed`; a given rate is a physical link rate).
Cluster row_cluster(const ValidationRow& r, const GpuSpec& gpu, ValidationResult& out) {
  const std::int64_t n = r.integer("n_gpus");
  out.n_gpus = n;
  const double nic = r.empty("inter_node_gbps") ? 0.0 : r.number("inter_node_gbps");
  if (r.empty("inter_node_gbps"))
    out.assumed["inter_node_gbps"] = fmt::format("{} (catalog default)", gpu.network_gbps_per_gpu);
  else if (!(nic >= physical::kMinBandwidthGbps && nic <= physical::kMaxBandwidthGbps))
    throw Error("csv.inter_node_gbps", fmt::format("got {:g}", nic),
                fmt::format("empty (the catalog's NIC) or a rate from {:g} to {:g} Gbit/s per GPU",
                            physical::kMinBandwidthGbps, physical::kMaxBandwidthGbps));
  const std::int64_t gpus_per_node = r.integer("gpus_per_node");
  require_positive("csv.gpus_per_node", gpus_per_node, physical::kMaxGpusPerNode);
  out.network_gbps_per_gpu = nic;
  return make_cluster(gpu, n, gpus_per_node, nic);
}

// The knobs the row states (degrees, precision, MoE and FP8 settings, framework) and what its
// software era implies; the unknown ones are searched (KnobCandidates).
Plan row_base_plan(const ValidationRow& r, const ModelSpec& model, const GpuSpec& gpu, std::map<std::string, std::string>& assumed) {
  Plan base;
  base.tp = r.integer("tp");
  base.pp = r.integer("pp");
  base.dp = r.integer("dp");
  base.cp = r.integer("cp");
  base.ep = r.integer_or("ep", 1);
  base.precision = parse_precision(r.get("precision"));
  set_moe_and_fp8_knobs(r, model, base, assumed);
  base.framework = row_framework(r, assumed);
  // The schema has no attention-kernel column. FlashAttention (Dao et al., arXiv 2205.14135,
  // 2022) reached Megatron-LM and DeepSpeed as an option in 2023 and became the default with
  // Transformer Engine on Hopper; the Ampere runs on record (2021-2023 Megatron-LM, DeepSpeed,
  // Megatron-DeepSpeed) used the fused-softmax kernel that materialises the s x s scores.
  base.flash_attention = gpu.key.rfind("a100", 0) != 0;
  if (!base.flash_attention) {
    assumed["attention_kernel"] = "unfused softmax (Ampere-era run)";
    // The same software era ran pipeline send/recv synchronously between compute steps
    // (Megatron-LM added --overlap-p2p-communication with Megatron-Core in 2023).
    base.overlap_p2p = false;
  }
  // DeepSpeed's engines fix their own schedule (plan.h as_run_by_framework); with pp = 1 the
  // engine's overlap_comm (reduce buckets during backward) is a config value no row publishes: an
  // unknown knob, filled like the others with the faster setting (overlapped).
  if (deepspeed_engine(base.framework))
    assumed["engine"] = base.pp > 1 ? "DeepSpeed pipeline engine (blocking p2p, gradients reduced after the flush)"
                                    : "DeepSpeed (gradient reduction overlapped: overlap_comm assumed on; ZeRO-3 gathers unhidden)";
  return base;
}

// Candidate values for every knob the row leaves empty (one value for each it states).
struct KnobCandidates {
  std::vector<std::int64_t> micro_batches, vpps, etps;
  std::vector<Recompute> recomputes;
  std::vector<bool> sequence_parallel, fp8_gathers;
  std::vector<OptimizerSharding> zeros;
};

KnobCandidates knob_candidates(const ValidationRow& r, const ModelSpec& model, const Plan& base, const Workload& w) {
  KnobCandidates k;
  const std::int64_t per_rank = w.global_batch / std::max<std::int64_t>(1, base.dp);
  k.micro_batches = r.empty("micro_batch") ? divisors(per_rank, kMaxAssumedMicroBatch)
                                           : std::vector<std::int64_t>{r.integer("micro_batch")};
  if (!r.empty("vpp")) {
    k.vpps = {r.integer("vpp")};
  } else {
    // Interleaving with Megatron's uneven split where pp * vpp does not divide the layers.
    k.vpps = {1};
    for (std::int64_t v = 2; v <= kMaxAssumedVpp && base.pp > 1 && base.pp * v <= model.layers; ++v) k.vpps.push_back(v);
  }
  if (r.empty("recompute")) k.recomputes = {Recompute::none, Recompute::selective, Recompute::full};
  else k.recomputes = {parse_recompute(r.get("recompute"))};
  if (base.tp == 1) k.sequence_parallel = {false};
  else if (r.empty("sequence_parallel")) k.sequence_parallel = {false, true};
  else k.sequence_parallel = {r.get("sequence_parallel") == "yes"};
  if (r.empty("dist_optimizer")) k.zeros = {OptimizerSharding::none, OptimizerSharding::zero1};
  else k.zeros = {parse_optimizer_sharding(r.get("dist_optimizer"))};
  k.etps = etp_candidates(r, model, base);
  // The schema has no column for FP8 parameter gathering (--fp8-param-gather): for FP8 rows it
  // is an unknown knob like the others.
  k.fp8_gathers = base.precision == Precision::fp8 ? std::vector<bool>{false, true} : std::vector<bool>{false};
  return k;
}

struct RowCandidate {
  Plan plan;
  Estimate estimate;
};

// Every valid combination of the candidate knobs ranked with the closed form, the best few
// re-scored with the pipeline model asked for (the simulator by default), as the planner does;
// fitting plans first. Throws the plain row's own error when no combination is valid.
RowCandidate best_candidate(const ModelSpec& model, const Cluster& cluster, const Workload& w, const Plan& base,
                            const KnobCandidates& k, PipelineModel pipeline) {
  std::vector<RowCandidate> candidates;
  for (bool fp8_gather : k.fp8_gathers)
    for (auto etp : k.etps)
      for (auto mb : k.micro_batches)
        for (auto v : k.vpps)
          for (auto rc : k.recomputes)
            for (bool sp : k.sequence_parallel)
              for (auto z : k.zeros) {
                Plan p = base;
                p.etp = etp;
                p.fp8_param_gather = fp8_gather;
                p.micro_batch = mb;
                p.vpp = v;
                p.recompute = rc;
                if (rc != Recompute::selective) p.recompute_modules = 0;
                p.sequence_parallel = sp;
                p.zero = z;
                try {
                  validate_plan(p, model, cluster, w);
                } catch (const Error&) {
                  continue;
                }
                candidates.push_back({p, estimate_analytical(model, cluster, p, w)});
              }
  const auto faster = [](const RowCandidate& a, const RowCandidate& b) {
    if (a.estimate.fits != b.estimate.fits) return a.estimate.fits;
    return a.estimate.iteration_time_s < b.estimate.iteration_time_s;
  };
  std::sort(candidates.begin(), candidates.end(), faster);
  if (candidates.size() > kRescoredCandidates) candidates.resize(kRescoredCandidates);
  if (pipeline == PipelineModel::simulated)
    for (auto& c : candidates) c.estimate = estimate(model, cluster, c.plan, w);
  std::sort(candidates.begin(), candidates.end(), faster);
  if (candidates.empty()) {
    // Re-validate the plain row to surface the reason.
    Plan p = base;
    p.micro_batch = k.micro_batches.empty() ? 1 : k.micro_batches.front();
    validate_plan(p, model, cluster, w);
    throw Error("plan", "no valid value for the unknown knobs", "");
  }
  return candidates.front();
}

// The values taken for the knobs the row left empty.
void record_assumed_knobs(const ValidationRow& r, const ModelSpec& model, const Plan& base, const RowCandidate& best,
                          std::map<std::string, std::string>& assumed) {
  const Plan& p = best.plan;
  if (r.empty("micro_batch")) assumed["micro_batch"] = std::to_string(p.micro_batch);
  if (base.precision == Precision::fp8) assumed["fp8_param_gather"] = p.fp8_param_gather ? "1" : "0";
  if (model.is_moe() && (!r.has("etp") || r.empty("etp"))) assumed["etp"] = std::to_string(p.expert_tp());
  if (r.empty("vpp")) assumed["vpp"] = std::to_string(p.vpp);
  if (r.empty("recompute")) assumed["recompute"] = to_string(p.recompute);
  if (r.empty("sequence_parallel") && base.tp > 1) assumed["sequence_parallel"] = p.sequence_parallel ? "yes" : "no";
  if (r.empty("dist_optimizer")) assumed["dist_optimizer"] = to_string(p.zero);
  if (!best.estimate.fits) assumed["memory"] = "no candidate fits in memory; the fastest was taken";
}

ValidationResult validate_row(const ValidationRow& r, PipelineModel pipeline, const std::vector<GpuSpec>* gpu_overrides) {
  ValidationResult out;
  out.id = r.get("id");
  out.source = r.get("source");
  out.model_name = r.get("model_name");
  out.metric = r.get("measured_metric");
  // A row with neither metric nor value describes a configuration only (a run that did not
  // finish, e.g. out of memory): its plan is estimated, nothing is compared.
  const bool configuration_only = out.metric.empty() && r.empty("measured_value");
  out.measured = configuration_only ? 0.0 : r.number("measured_value");
  const ModelSpec model = row_model(r, out.assumed);
  const GpuSpec& gpu = row_gpu(r.get("gpu"), gpu_overrides);
  const Cluster cluster = row_cluster(r, gpu, out);
  Workload w;
  w.global_batch = r.integer("global_batch");
  w.seq_len = r.integer("seq_len");
  out.global_batch = w.global_batch;
  const Plan base = row_base_plan(r, model, gpu, out.assumed);
  const RowCandidate best = best_candidate(model, cluster, w, base, knob_candidates(r, model, base, w), pipeline);
  record_assumed_knobs(r, model, base, best, out.assumed);
  out.fits = best.estimate.fits;
  out.plan = plan_to_shorthand(best.plan, w);
  out.estimate = best.estimate;
  out.model = model;
  out.cluster = cluster;
  out.workload = w;
  out.plan_value = best.plan;
  out.predicted_time_s = best.estimate.iteration_time_s;
  if (configuration_only) {
    out.predicted = out.predicted_time_s;
    return out;
  }
  const InMetric m = in_metric(out.metric, out.measured, model, gpu, parse_precision(r.get("precision")), w, out.n_gpus,
                               best.estimate.iteration_time_s);
  out.measured_time_s = m.measured_time_s;
  out.predicted = m.predicted;
  out.error_pct = 100.0 * (out.predicted - out.measured) / out.measured;
  return out;
}

}  // namespace

namespace {
std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}
}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return 0.0;
  const auto ra = average_ranks(a), rb = average_ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (va == 0 || vb == 0) return 0.0;
  return cov / std::sqrt(va * vb);
}

std::string gemm_family(const std::string& key) {
  if (key.rfind("a100", 0) == 0) return "ampere";
  if (key.rfind("h100", 0) == 0 || key == "h800" || key == "h200") return "hopper";
  return "";
}

std::string accuracy_class(const ValidationResult& row) {
  if (row.model.is_moe()) return "moe";
  if (row.plan_value.framework == TrainingFramework::pytorch) return "dense-pytorch";
  if (row.plan_value.precision == Precision::fp8) return "dense-fp8";
  const std::string family = gemm_family(row.cluster.gpu.key);
  if (family == "ampere") return "dense-a100";
  if (family == "hopper") return "dense-h100";
  return "dense-other";
}

ClassSummary abs_error_summary(std::string name, const std::vector<double>& abs_errors) {
  ClassSummary s{std::move(name), abs_errors.size(), percentile(abs_errors, 50), percentile(abs_errors, 90), 0.0};
  if (!abs_errors.empty()) s.max_abs_error_pct = *std::max_element(abs_errors.begin(), abs_errors.end());
  return s;
}

std::vector<ClassSummary> summarize_by_class(const ValidationReport& report) {
  std::vector<ClassSummary> out;
  for (const char* name : kAccuracyClassOrder) {
    std::vector<double> errors;
    for (const auto& row : report.rows)
      if (accuracy_class(row) == name) errors.push_back(std::fabs(row.error_pct));
    if (!errors.empty()) out.push_back(abs_error_summary(name, errors));
  }
  return out;
}

ValidationReport validate_runs(const CsvTable& table, PipelineModel pipeline,
                               const std::vector<GpuSpec>* gpu_overrides) {
  ValidationReport report;
  const int id_col = table.column("id");
  if (id_col < 0) throw Error("csv.id", "column missing", "the validation README §1 columns");
  std::set<std::string> ids;
  for (const auto& cells : table.rows)
    if (!ids.insert(cells[static_cast<std::size_t>(id_col)]).second)
      throw Error("csv.id", "'" + cells[static_cast<std::size_t>(id_col)] + "' given twice", "an id unique in the file");
  for (const auto& cells : table.rows) {
    const ValidationRow r{table, cells};
    try {
      ValidationResult row = validate_row(r, pipeline, gpu_overrides);
      (row.metric.empty() ? report.configurations : report.rows).push_back(std::move(row));
    } catch (const Error& e) {
      report.skipped.push_back({cells[static_cast<std::size_t>(id_col)], e.what(), e.field(), e.problem(), e.allowed()});
    }
  }
  summarize_report(report);
  return report;
}

void summarize_report(ValidationReport& report) {
  std::vector<double> abs_errors;
  for (const auto& row : report.rows) abs_errors.push_back(std::fabs(row.error_pct));
  auto& s = report.summary;
  s.n = report.rows.size();
  const ClassSummary all = abs_error_summary("all", abs_errors);
  s.median_abs_error_pct = all.median_abs_error_pct;
  s.p90_abs_error_pct = all.p90_abs_error_pct;
  s.max_abs_error_pct = all.max_abs_error_pct;

  // Mean Spearman correlation over groups of rows sharing `key`, groups of 3 or more rows.
  auto mean_spearman = [&](auto key, double& mean, std::size_t& count) {
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
    for (const auto& row : report.rows) {
      auto& g = groups[key(row)];
      g.first.push_back(row.predicted_time_s);
      g.second.push_back(row.measured_time_s);
    }
    double total = 0;
    count = 0;
    for (const auto& [name, g] : groups) {
      if (g.first.size() < 3) continue;
      total += spearman(g.first, g.second);
      ++count;
    }
    mean = count ? total / static_cast<double>(count) : 0.0;
  };
  mean_spearman([](const ValidationResult& r) { return fmt::format("{}|{}|{}", r.model_name, r.n_gpus, r.global_batch); },
                s.mean_group_spearman, s.spearman_groups);
  mean_spearman([](const ValidationResult& r) { return fmt::format("{}|{}", r.model_name, r.n_gpus); },
                s.mean_model_gpus_spearman, s.model_gpus_groups);
}

ValidationReport validate_files(const std::vector<CsvTable>& tables, PipelineModel pipeline) {
  ValidationReport all;
  std::set<std::string> ids;
  auto take = [&ids](const std::string& id) {
    if (!ids.insert(id).second) throw Error("csv.id", "'" + id + "' given twice", "ids unique across the files");
  };
  for (const CsvTable& table : tables) {
    ValidationReport one = validate_runs(table, pipeline);
    for (auto& r : one.rows) {
      take(r.id);
      all.rows.push_back(std::move(r));
    }
    for (auto& r : one.configurations) {
      take(r.id);
      all.configurations.push_back(std::move(r));
    }
    for (auto& k : one.skipped) {
      take(k.id);
      all.skipped.push_back(std::move(k));
    }
  }
  summarize_report(all);
  return all;
}

}  // namespace tessera

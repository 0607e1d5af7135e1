// tessera plan --model M --cluster C --gbs B [--seq S] [--top K] [--json] [--quiet]
//              [--emit megatron|torchtitan|deepspeed|peft|json|rank-layout] [--fix tp=8,...] [--max-memory-gib X]
//              [--failures] [--mtbf-node-h X] [--ckpt-gbps Y] [--restart-s Z] [--node-write-gbps W]
//              [--async-ckpt] [--no-fully-parallel-save] [--spare-nodes N] [--replacement-wait-s S]
// --failures (or any of the flags after it) ranks plans by expected goodput under failures
// (reliability/goodput_ranking.h) and prints the recommended checkpoint interval.
// A multimodal model (or --data MIX) plans per-module GPU groups against the monolithic layout:
// tessera plan --model mllm-72b-gen --data caption-like --cluster h800:1296 --gbs 1920 [--json] [--trace OUT]
//              [--emit megatron]
// The recommended strategy (disaggregated, monolithic or colocated, search/multimodal_planner.h) is
// printed first, traced, and emitted (monolithic only, or colocated with every module on the
// backbone's layout: Megatron-LM has no per-module GPU groups or layouts).
// Measured links (formats/calibration_profile_json.h "links"): --intra-node-gbps, --inter-node-gbps,
// --inter-pool-gbps (achieved bus bandwidth, Gbit/s) and --intra-node-latency-us,
// --inter-node-latency-us, --inter-pool-latency-us replace the cluster's tiers (every pool's node
// tiers; over the --profile's links). --compare-profile OLD.json plans under OLD's conditions (the
// catalog with OLD applied, no link flags) and under the current ones (--profile, the link flags),
// and prints both best plans and the cost of keeping the old one (report/profile_comparison_report.h).
#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/core.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "catalog/multimodal_models.h"
#include "cli/multimodal_plan_command.h"
#include "cli/profile_note.h"
#include "cli/subcommands.h"
#include "core/checks.h"
#include "core/error.h"
#include "core/units.h"
#include "export/deepspeed_config.h"
#include "export/megatron_launch.h"
#include "export/peft_lora_config.h"
#include "export/torchtitan_config.h"
#include "formats/cross_pool_plan_json.h"
#include "formats/json_fields.h"
#include "formats/multimodal_json.h"
#include "formats/plan_constraints_text.h"
#include "formats/plan_text.h"
#include "formats/schema.h"
#include "hardware/physical_ranges.h"
#include "reliability/goodput_ranking.h"
#include "report/html_file.h"
#include "report/plan_page.h"
#include "report/plan_report.h"
#include "report/offload_report.h"
#include "report/profile_comparison_report.h"
#include "search/offload_search.h"
#include "search/plan_comparison.h"
#include "search/planner.h"

namespace tessera::cli {

namespace {
constexpr std::int64_t kDefaultGbs = 1536;
constexpr int kProgressWidth = 40;
constexpr std::int64_t kDefaultMultimodalTop = 3;
// --failures re-ranks the planner's list: ask it for at least as many plans as it re-scores with
// the simulator (PlannerOptions::rescored), so the walk down the list can reach its stopping rule.
constexpr std::size_t kFailureRankingPlans = 64;
// Bounds of the failure flags: beyond them a value is a unit slip, not a cluster.
constexpr double kMaxMtbfNodeH = 1e7;        // ~1,100 years per node
// A node failing every 3.6 s could not finish one step; below it the rates leave the failure
// model's range (reliability/failure_rates.cpp: at most 1,000 failures per hour).
constexpr double kMinMtbfNodeH = 1e-3;
constexpr double kMaxRestartS = 30 * 86400;  // a month
constexpr double kMaxStorageFlagGbps = 1e6;  // 1 PB/s

// The failure flags as given (0 / false = not given).
struct FailureFlags {
  bool on = false, async = false, no_fully_parallel = false;
  double mtbf_node_h = 0, ckpt_gbps = 0, node_write_gbps = 0, restart_s = 0, replacement_wait_s = 0;
  std::int64_t spare_nodes = 0;
};

// The failure model the flags describe. --mtbf-node-h sets one node's MTBF (its GPUs included),
// keeping the default split between GPU and rest-of-node failures; --ckpt-gbps the storage's
// aggregate write and read bandwidth; --restart-s the whole restart before the load (detection +
// relaunch).
FailureModel failure_model(const FailureFlags& f, const CLI::App& sub, const Cluster& cluster) {
  FailureModel m;
  if (given(sub, "--mtbf-node-h")) {
    require_in_range("--mtbf-node-h", f.mtbf_node_h, kMinMtbfNodeH, kMaxMtbfNodeH, "hours");
    const double per_node_now = m.rates.per_gpu_hour * static_cast<double>(cluster.gpus_per_node) + m.rates.per_node_hour;
    const double scale = (1.0 / f.mtbf_node_h) / per_node_now;
    m.rates.per_gpu_hour *= scale;
    m.rates.per_node_hour *= scale;
  }
  if (given(sub, "--ckpt-gbps")) {
    require_in_range("--ckpt-gbps", f.ckpt_gbps, physical::kMinBandwidthGbps, kMaxStorageFlagGbps, "GB/s");
    m.storage.write_gbps = m.storage.read_gbps = f.ckpt_gbps;
  }
  if (given(sub, "--node-write-gbps")) {
    require_in_range("--node-write-gbps", f.node_write_gbps, physical::kMinBandwidthGbps, kMaxStorageFlagGbps, "GB/s");
    m.storage.node_write_gbps = f.node_write_gbps;
  }
  if (given(sub, "--restart-s")) {
    require_positive_real("--restart-s", f.restart_s, kMaxRestartS);
    m.restart.detection_s = 0;
    m.restart.relaunch_s = f.restart_s;
  }
  if (given(sub, "--replacement-wait-s")) {
    require_non_negative_real("--replacement-wait-s", f.replacement_wait_s, kMaxRestartS);
    m.restart.replacement_wait_s = f.replacement_wait_s;
  }
  m.restart.spare_nodes = f.spare_nodes;
  m.save.async = f.async;
  m.save.fully_parallel = !f.no_fully_parallel;
  return m;
}

// The failure options refine --failures and are refused without it.
bool failures_requested(const FailureFlags& f, const CLI::App& sub) {
  for (const char* flag : {"--mtbf-node-h", "--ckpt-gbps", "--node-write-gbps", "--restart-s", "--replacement-wait-s",
                           "--spare-nodes", "--async-ckpt", "--no-fully-parallel-save"})
    require_prerequisite(sub, flag, "--failures");
  return f.on;
}

// --spare-nodes N: the job runs on the cluster's nodes less N; the spares replace failed nodes.
Cluster without_spares(const Cluster& cluster, std::int64_t spares) {
  require_non_negative("--spare-nodes", spares, std::max<std::int64_t>(0, cluster.nodes - 1));
  Cluster c = cluster;
  c.nodes -= spares;
  return c;
}

// The measured-link flags as given (read only when given).
struct LinkFlags {
  double intra_node_gbps = 0, inter_node_gbps = 0, inter_pool_gbps = 0;
  double intra_node_latency_us = 0, inter_node_latency_us = 0, inter_pool_latency_us = 0;
};

// The link overrides the flags describe, each checked against the profile's bounds.
LinkOverrides link_overrides(const LinkFlags& f, const CLI::App& sub) {
  LinkOverrides links;
  const auto bandwidth = [&](const char* flag, double value, std::optional<double>& out) {
    if (sub.get_option(flag)->count() == 0) return;
    require_link_gbps(flag, value);
    out = value;
  };
  bandwidth("--intra-node-gbps", f.intra_node_gbps, links.every_pool.intra_node_gbps);
  bandwidth("--inter-node-gbps", f.inter_node_gbps, links.every_pool.inter_node_gbps);
  bandwidth("--inter-pool-gbps", f.inter_pool_gbps, links.inter_pool_gbps);
  const auto latency = [&](const char* flag, double value, std::optional<double>& out, bool inter_pool) {
    if (sub.get_option(flag)->count() == 0) return;
    if (inter_pool) require_inter_pool_latency_us(flag, value);
    else require_node_latency_us(flag, value);
    out = value;
  };
  latency("--intra-node-latency-us", f.intra_node_latency_us, links.every_pool.intra_node_latency_us, false);
  latency("--inter-node-latency-us", f.inter_node_latency_us, links.every_pool.inter_node_latency_us, false);
  latency("--inter-pool-latency-us", f.inter_pool_latency_us, links.inter_pool_latency_us, true);
  return links;
}

// plan --compare-profile: what it needs beyond the plain search's inputs.
struct ComparisonRequest {
  const ModelSpec& model;
  const std::string& cluster;       // as given: loaded again under the old profile
  const MixedCluster& current;      // loaded under the current conditions
  const Workload& workload;
  const PlanConstraints& constraints;
  const PlannerOptions& options;
  const std::string& old_profile;   // --compare-profile
  const LinkOverrides& link_flags;
  bool json = false;
};

// The same cluster seen through the old profile alone (the catalog with it applied, no link flags).
MixedCluster cluster_under_old_profile(const std::string& cluster, const std::string& path) {
  const LoadedProfile old = profile_from_json(json_fields::parse_file(path, "--compare-profile"), path);
  const ScopedProfile scope(old);
  return load_mixed_cluster(cluster);
}

int print_profile_comparison(const ComparisonRequest& r, const CommandOutput& io) {
  const MixedCluster old = cluster_under_old_profile(r.cluster, r.old_profile);
  const LoadedProfile* current_profile = active_profile();
  const ComparedConditions conditions{r.old_profile, current_profile ? current_profile->file : "", r.link_flags};
  nlohmann::json j;
  std::string table;
  if (r.current.pools.size() > 1) {
    const MixedPlanComparison c = compare_mixed_plans(r.model, old, r.current, r.workload, r.constraints, r.options);
    if (r.json) j = mixed_plan_comparison_to_json(c, r.model, old, r.current, r.workload, conditions);
    else table = mixed_plan_comparison_to_table(c, r.model, old, r.current, r.workload, conditions);
  } else {
    const Cluster &before = old.pools.front(), &now = r.current.pools.front();
    const PlanComparison c = compare_plans(r.model, before, now, r.workload, r.constraints, r.options);
    if (r.json) j = plan_comparison_to_json(c, r.model, before, now, r.workload, conditions);
    else table = plan_comparison_to_table(c, r.model, before, now, r.workload, conditions);
  }
  if (r.json) {
    j["schema_version"] = kSchemaVersion;
    note_profile(j);
    io.print("{}\n", json_fields::to_text(j, 2));
  } else {
    io.print("{}{}", table, profile_note());
  }
  return 0;
}

struct FailureRequest {
  const PlanSearch& search;
  const ModelSpec& model;
  const Cluster& cluster;
  const Workload& workload;
  const FailureModel& failures;
};

// An --emit with nothing to emit: the GPU peak that would fit, or the host memory / NVMe that binds.
Error no_plan_fits(const PlanSearch& s) {
  if (s.min_peak_memory_bytes == 0)
    return Error("plan", "no plan fits: every plan's offloaded state is larger than a node's host memory or NVMe",
                 "nodes with more host memory or NVMe (a cluster JSON's \"host\"), or more nodes");
  return Error("plan", fmt::format("no plan fits in {:.1f} GiB per GPU; the smallest peak is {:.1f} GiB",
                                   s.memory_limit_bytes / units::kGiB, s.min_peak_memory_bytes / units::kGiB),
               "a larger --max-memory-gib or more GPUs");
}

// plan --failures: the planner's list re-ranked by expected goodput, then printed or emitted
// like the plain ranking (the export with the checkpoint flags of the winner).
int print_failure_ranking(const FailureRequest& r, const std::string& emit, bool json, std::int64_t top,
                          std::size_t asked, const CommandOutput& io) {
  const bool complete = r.search.plans.size() < asked;
  const GoodputRanking ranking =
      rank_by_goodput(r.search, r.model, r.cluster, r.failures, static_cast<std::size_t>(top), complete);
  const double limit_gib = r.search.memory_limit_bytes / units::kGiB;
  if (!emit.empty()) {
    if (ranking.plans.empty())
      throw no_plan_fits(r.search);
    const GoodputPlan& best = ranking.plans[0];
    const MegatronCheckpointing ckpt = megatron_checkpointing(best.failures, r.failures);
    if (emit == "megatron") io.print("{}", megatron_launch_script(r.model, r.cluster, best.ranked.plan, r.workload, ckpt));
    if (emit == "torchtitan")
      io.print("{}", torchtitan_job_text(torchtitan_job(r.model, best.ranked.plan, r.workload, r.cluster)));
    if (emit == "json") {
      const nlohmann::json full = goodput_ranking_to_json(ranking, r.search, r.model, r.cluster, r.workload, r.failures);
      nlohmann::json j = {{"schema_version", kSchemaVersion},
                          {"model", r.model.name},
                          {"cluster", {{"gpu", r.cluster.gpu.key}, {"gpus", r.cluster.gpus()}}},
                          {"plan", plan_to_json(best.ranked.plan, r.workload)},
                          {"iteration_time_s", best.ranked.estimate.iteration_time_s},
                          {"failures", full.at("plans").at(0).at("failures")}};
      io.print("{}\n", json_fields::to_text(j, 2));
    }
    return 0;
  }
  if (json) {
    auto j = goodput_ranking_to_json(ranking, r.search, r.model, r.cluster, r.workload, r.failures);
    j["schema_version"] = kSchemaVersion;
    note_profile(j);
    io.print("{}\n", json_fields::to_text(j, 2));
  } else {
    io.print("{}{}", goodput_ranking_to_table(ranking, r.search, r.model, r.cluster, r.workload, r.failures, limit_gib),
             profile_note());
  }
  return 0;
}

// plan --html: the page from the same document --json prints, every feasible plan's closed-form
// time and memory (the search ran exhaustive with record_feasible) and the winner's launch script.
void write_plan_html(const std::string& path, const nlohmann::json& doc, const PlanSearch& search,
                     const ModelSpec& model, const Cluster& cluster, const Workload& w) {
  report::PlanPageInputs in;
  in.title = "Tessera plan: " + model.name + " on " + std::to_string(cluster.gpus()) + " x " + cluster.gpu.key;
  in.subtitle = fmt::format("global batch {} x {} tokens", w.global_batch, w.seq_len);
  in.feasible.reserve(search.feasible_points.size());
  for (const FeasiblePoint& p : search.feasible_points)
    in.feasible.push_back({p.peak_memory_bytes / units::kGiB, p.iteration_time_s});
  if (!search.plans.empty()) in.launch_script = megatron_launch_script(model, cluster, search.plans[0].plan, w);
  write_html_file(path, report::plan_page_html(doc, in));
}

}  // namespace

namespace {

struct PlanOptions {
  std::string model = kDefaultModel, cluster = kDefaultCluster, emit, fix, data, trace, html, framework = "megatron";
  std::string task = "pretrain";
  std::int64_t gbs = kDefaultGbs, seq = 0, top = 5, seed = 1;
  double max_memory_gib = 0;
  bool json = false, quiet = false, cross_node_tp = false;
  FailureFlags failures;
  LinkFlags links;
  std::string compare_profile;
};

void add_search_options(CLI::App& sub, PlanOptions& o) {
  sub.add_option("--model", o.model, "Zoo name, Tessera model JSON or HF config.json")->capture_default_str();
  sub.add_option("--cluster", o.cluster, "GPU:COUNT or a cluster JSON")->capture_default_str();
  sub.add_option("--gbs", o.gbs, "Global batch (sequences per step)")->capture_default_str();
  sub.add_option("--seq", o.seq, "Sequence length (default: the model's context)");
  sub.add_option("--top", o.top, "Plans to print")->capture_default_str();
  sub.add_option("--emit", o.emit,
                 "Print only the best plan as megatron | torchtitan | deepspeed | peft | json (multimodal: megatron, when monolithic is "
                 "recommended; several pools: rank-layout, when a cross-pool pipeline is)");
  sub.add_option("--fix", o.fix, "Pin degrees or switches, e.g. tp=8,recompute=full");
  sub.add_option("--framework", o.framework,
                 "Search what this framework can run, priced as it runs: megatron | megatron-deepspeed | deepspeed | "
                 "torchtitan | nemo-automodel | pytorch | megatrain")
      ->capture_default_str();
  sub.add_option("--task", o.task,
                 "What is trained: pretrain | full-finetune | lora | qlora (adapters: --fix lora_rank=N,lora_targets=...)")
      ->capture_default_str();
  sub.add_option("--max-memory-gib", o.max_memory_gib,
                 "Per-GPU memory limit, exactly (default: the GPU's usable memory less a 5% headroom)");
  sub.add_flag("--allow-cross-node-tp", o.cross_node_tp, "Let tensor parallelism span nodes");
  sub.add_flag("--json", o.json, "Print one JSON document");
  sub.add_flag("--quiet", o.quiet, "No progress bar");
  sub.add_option("--html", o.html,
                 "Write a self-contained HTML report (top plans, time vs memory of every feasible plan, breakdowns)");
  sub.add_option("--data", o.data, "Multimodal data mix: built-in name, mix .json or samples .jsonl (default caption-like)");
  sub.add_option("--trace", o.trace, "Multimodal: write the recommended strategy's step as a Chrome/Perfetto trace");
  sub.add_option("--seed", o.seed, "Multimodal: seed of the samples drawn from the mix")->capture_default_str();
  sub.add_option("--compare-profile", o.compare_profile,
                 "Plan under this older profile's conditions too: both best plans and the cost of keeping the old one");
}

void add_failure_options(CLI::App& sub, FailureFlags& f) {
  sub.add_flag("--failures", f.on,
               "Rank plans by expected goodput under failures (Llama 3 fleet rates) and print the checkpoint interval");
  sub.add_option("--mtbf-node-h", f.mtbf_node_h, "Failures: one node's MTBF in hours, GPUs included");
  sub.add_option("--ckpt-gbps", f.ckpt_gbps, "Failures: storage write and read bandwidth, GB/s (default 2000)");
  sub.add_option("--node-write-gbps", f.node_write_gbps, "Failures: one node's write bandwidth, GB/s (default 25)");
  sub.add_option("--restart-s", f.restart_s, "Failures: detection + relaunch per failure, s (default 600 + 300)");
  sub.add_option("--replacement-wait-s", f.replacement_wait_s,
                 "Failures: wait for a replacement node when no spare is left, s (default 0)");
  sub.add_option("--spare-nodes", f.spare_nodes, "Failures: nodes kept out of the job as spares");
  sub.add_flag("--async-ckpt", f.async, "Failures: asynchronous checkpoint save (Megatron --async-save)");
  sub.add_flag("--no-fully-parallel-save", f.no_fully_parallel,
               "Failures: only the first data-parallel replica writes (Megatron --no-ckpt-fully-parallel-save)");
}

void add_link_options(CLI::App& sub, LinkFlags& l) {
  sub.add_option("--intra-node-gbps", l.intra_node_gbps,
                 "Measured link: achieved bus bandwidth per GPU inside a node, Gbit/s (every pool)");
  sub.add_option("--inter-node-gbps", l.inter_node_gbps,
                 "Measured link: achieved bus bandwidth per GPU between nodes, Gbit/s (every pool)");
  sub.add_option("--inter-pool-gbps", l.inter_pool_gbps, "Measured link: aggregate bandwidth between two pools, Gbit/s");
  sub.add_option("--intra-node-latency-us", l.intra_node_latency_us,
                 "Measured link: per-message latency inside a node, us (every pool)");
  sub.add_option("--inter-node-latency-us", l.inter_node_latency_us,
                 "Measured link: per-message latency between nodes, us (every pool)");
  sub.add_option("--inter-pool-latency-us", l.inter_pool_latency_us, "Measured link: per-message latency between pools, us");
}

bool multimodal_request(const PlanOptions& o) { return !o.data.empty() || !o.trace.empty() || is_multimodal_model(o.model); }

void check_memory_and_seq(const PlanOptions& o, const CLI::App& sub) {
  // NaN, inf and 1e-308 parse as doubles: a memory limit must be physical (physical_ranges.h).
  if (given(sub, "--max-memory-gib"))
    require_in_range("--max-memory-gib", o.max_memory_gib, physical::kMinMemoryGib, physical::kMaxMemoryGib, "GiB");
  // 0 is not "not given": a sequence has at least one token (leaving --seq out means the context).
  if (given(sub, "--seq") && o.seq < 1)
    throw Error("--seq", "got " + std::to_string(o.seq), "a positive integer (leave --seq out for the model's context)");
}

// Options that cannot go together, refused before anything is loaded.
void check_plan_flags(const PlanOptions& o, const CLI::App& sub, bool failures_on) {
  if (!o.compare_profile.empty()) {
    for (const auto& [other, set] :
         {std::pair{"--emit", !o.emit.empty()}, {"--html", !o.html.empty()}, {"--failures", failures_on},
          {"--top", given(sub, "--top")}, {"--data or --trace (multimodal)", multimodal_request(o)}})
      if (set)
        throw Error("--compare-profile", std::string("not available with ") + other,
                    "a language model's plan, as text or --json (it reports the best plan of each side)");
  }
  if (!o.html.empty()) {
    for (const auto& [other, set] : {std::pair{"--failures", failures_on}, {"--emit", !o.emit.empty()}})
      if (set) throw Error("--html", std::string("not available yet with ") + other, "a plan search on one GPU pool");
  }
  if (failures_on && multimodal_request(o)) throw Error("--failures", "not available for multimodal plans", "a language model");
}

int multimodal_plan_command(const PlanOptions& o, const CLI::App& sub, const LinkOverrides& links, const CommandOutput& io) {
  if (!is_multimodal_model(o.model)) {
    // A file that is not even JSON: say so rather than "not a multimodal model".
    std::error_code ec;
    if (std::filesystem::is_regular_file(o.model, ec)) (void)json_fields::parse_file(o.model, "model");
    throw Error("--model", "'" + o.model + "' is not a multimodal model (--data and --trace need one)",
                "a built-in multimodal model or a multimodal model JSON");
  }
  // Multimodal plans list the best of distinct backbone GPU counts: three unless asked.
  const std::int64_t top = given(sub, "--top") ? o.top : kDefaultMultimodalTop;
  return run_multimodal_plan({o.model, o.cluster, o.data, o.trace, o.fix, o.emit, o.html, o.gbs, o.seq, top, o.seed,
                              o.max_memory_gib, o.json, links},
                             io);
}

// --emit, --top and --framework, checked against the cluster; the pins of --fix with them.
PlanConstraints plan_constraints(const PlanOptions& o, const MixedCluster& mixed) {
  if (o.top < 1 || o.top > 1000) throw Error("--top", "got " + std::to_string(o.top), "1 to 1000");
  static const std::set<std::string> kFormats = {"megatron", "torchtitan", "deepspeed", "peft", "json", "rank-layout"};
  if (!o.emit.empty() && !kFormats.contains(o.emit))
    throw Error("--emit", "unknown format '" + o.emit + "'", "megatron, torchtitan, deepspeed, peft, json, rank-layout");
  if (o.emit == "rank-layout" && mixed.pools.size() < 2)
    throw Error("--emit", "rank-layout describes a pipeline across pools", "a cluster of several pools");
  PlanConstraints fix = parse_constraints(o.fix);
  try {
    fix.defaults.framework = parse_training_framework(o.framework);
  } catch (const Error& e) {
    throw Error("--framework", "unknown framework '" + o.framework + "'", e.allowed());
  }
  fix.allow_cross_node_tp = o.cross_node_tp;
  if (o.max_memory_gib != 0) fix.max_memory_gib = o.max_memory_gib;
  try {
    fix.defaults.tuning.task = parse_training_task(o.task);
  } catch (const Error& e) {
    throw Error("--task", "unknown task '" + o.task + "'", e.allowed());
  }
  return fix;
}

// --emit against the framework and task the search runs (after the fine-tuning defaults).
void check_emit_format(const std::string& emit, const Plan& defaults) {
  const TrainingFramework fw = defaults.framework;
  if (emit == "torchtitan" && fw != TrainingFramework::torchtitan)
    throw Error("--emit", "torchtitan needs a plan torchtitan can run", "--framework torchtitan --emit torchtitan");
  if (emit == "megatron" && fw != TrainingFramework::megatron)
    throw Error("--emit", "megatron needs a Megatron plan", "--framework megatron (the default) with --emit megatron");
  if (emit == "deepspeed" && !deepspeed_engine(fw))
    throw Error("--emit", "deepspeed needs a plan DeepSpeed runs", "--framework deepspeed or megatron-deepspeed");
  if (emit == "peft" && !defaults.tuning.adapters())
    throw Error("--emit", "peft writes a LoRA adapter's config", "--task lora or --task qlora with --emit peft");
}

// Fine-tuning defaults, each said (DefaultNote): without --framework, a full fine-tune runs on
// DeepSpeed (the Hugging Face Trainer's engine for ZeRO and ZeRO-Offload) and LoRA / QLoRA under
// a plain PyTorch loop with PEFT; the rank is PEFT's LoraConfig default r = 8 (peft/tuners/lora/
// config.py); the targets every linear layer (kDefaultLoraTargets).
void fill_tuning_defaults(PlanConstraints& fix, const std::string& fix_text, const CLI::App& sub, DefaultNote& framework_note,
                          DefaultNote& rank_note) {
  const TrainingTask task = fix.defaults.tuning.task;
  if (task != TrainingTask::pretrain && !given(sub, "--framework")) {
    const bool full = task == TrainingTask::full_finetune;
    fix.defaults.framework = full ? TrainingFramework::deepspeed : TrainingFramework::pytorch;
    framework_note.set("--framework", full ? "deepspeed, the Hugging Face Trainer's engine for a full fine-tune"
                                           : "pytorch, PEFT's LoRA under a plain PyTorch loop");
  }
  if (!fix.defaults.tuning.adapters()) return;
  if (fix_text.find("lora_rank") == std::string::npos) {
    fix.defaults.tuning.lora_rank = kPeftDefaultLoraRank;
    rank_note.set("--fix lora_rank", std::to_string(kPeftDefaultLoraRank) + ", PEFT's LoraConfig default");
  }
}

// The search's progress on a terminal's stderr: a bar redrawn when it grows, never back (a
// command that runs several searches keeps the furthest).
struct ProgressBar {
  std::mutex mutex;
  int shown = -1;
};

PlannerOptions planner_options(const PlanOptions& o, bool failures_on, ProgressBar& bar, const CommandOutput& io) {
  PlannerOptions options;
  // The page draws the plans this search costed: no exhaustive search for a report (an exhaustive
  // DeepSeek-V3 search on 1,024 GPUs ran past 30 s where the plain one takes 1 s).
  options.record_feasible = !o.html.empty();
  options.top_k = failures_on ? std::max(static_cast<std::size_t>(o.top), kFailureRankingPlans) : static_cast<std::size_t>(o.top);
  if (!o.quiet && io.err_is_terminal()) {
    options.progress = [&bar, &io](std::int64_t done, std::int64_t total) {
      std::lock_guard<std::mutex> lock(bar.mutex);
      const int filled = total > 0 ? static_cast<int>(kProgressWidth * done / total) : kProgressWidth;
      if (filled <= bar.shown) return;
      bar.shown = filled;
      io.print_error("\rsearching [{}{}] {:3d}%", std::string(static_cast<std::size_t>(filled), '#'),
                     std::string(static_cast<std::size_t>(kProgressWidth - filled), ' '),
                     filled * 100 / kProgressWidth);
      if (filled == kProgressWidth) io.print_error("\n");
    };
  }
  return options;
}

int mixed_plan_command(const PlanOptions& o, const ModelSpec& model, const MixedCluster& mixed, const Workload& w,
                       const PlanConstraints& fix, const PlannerOptions& options, const CommandOutput& io) {
  if (!o.emit.empty() && o.emit != "rank-layout")
    throw Error("--emit", "'" + o.emit + "' is not available for a cluster of several pools",
                "rank-layout (a cross-pool pipeline's ranks), or --json for each pool's Megatron arguments");
  if (!o.html.empty()) throw Error("--html", "not available yet for a cluster of several pools", "a plan search on one GPU pool");
  const MixedPlan plan = search_mixed_plans(model, mixed, w, fix, options);
  if (!o.emit.empty()) {
    if (plan.strategy != MixedStrategy::cross_pool)
      throw Error("--emit", std::string("the answer is ") + to_string(plan.strategy) + ", not a cross-pool pipeline",
                  "--json (each pool's plan and Megatron arguments)");
    io.print("{}\n", json_fields::to_text(cross_pool_layout_to_json(*plan.cross_pool, mixed), 2));
    return 0;
  }
  if (o.json) {
    auto j = mixed_plan_to_json(plan, mixed, model, w);
    j["schema_version"] = kSchemaVersion;
    note_profile(j);
    io.print("{}\n", json_fields::to_text(j, 2));
  } else {
    io.print("{}{}", mixed_plan_to_table(plan, mixed, model, w), profile_note());
  }
  return 0;
}

// --emit: only the best plan, as a launch script, a torchtitan job or JSON.
void emit_best_plan(const std::string& format, const PlanSearch& search, const ModelSpec& model, const Cluster& cluster,
                    const Workload& w, const CommandOutput& io) {
  if (search.plans.empty())
    throw no_plan_fits(search);
  const Plan& best = search.plans[0].plan;
  if (format == "megatron") io.print("{}", megatron_launch_script(model, cluster, best, w));
  if (format == "torchtitan") io.print("{}", torchtitan_job_text(torchtitan_job(model, best, w, cluster)));
  if (format == "deepspeed") io.print("{}\n", json_fields::to_text(deepspeed_config(model, best, w, cluster), 2));
  if (format == "peft") io.print("{}\n", json_fields::to_text(peft_export(model, best), 2));
  if (format == "json") {
    nlohmann::json j = {{"schema_version", kSchemaVersion},
                        {"model", model.name},
                        {"cluster", {{"gpu", cluster.gpu.key}, {"gpus", cluster.gpus()}}},
                        {"plan", plan_to_json(best, w)},
                        {"iteration_time_s", search.plans[0].estimate.iteration_time_s}};
    io.print("{}\n", json_fields::to_text(j, 2));
  }
}

int plan_command(const PlanOptions& o, const CLI::App& sub, const CommandOutput& io) {
  check_memory_and_seq(o, sub);
  const bool failures_on = failures_requested(o.failures, sub);
  const LinkOverrides link_flags = link_overrides(o.links, sub);
  check_plan_flags(o, sub, failures_on);
  if (multimodal_request(o)) return multimodal_plan_command(o, sub, link_flags, io);
  const ModelSpec model = load_model(o.model);
  const MixedCluster mixed = load_mixed_cluster(o.cluster, link_flags);
  if (failures_on && mixed.pools.size() > 1)
    throw Error("--failures", "not available for a cluster of several pools", "one GPU type");
  const Cluster cluster = failures_on ? without_spares(mixed.pools.front(), o.failures.spare_nodes) : mixed.pools.front();
  const FailureModel failures = failures_on ? failure_model(o.failures, sub, cluster) : FailureModel{};
  Workload w{o.gbs, o.seq == 0 ? model.max_context : o.seq};
  if (o.seq < 0) throw Error("--seq", "got " + std::to_string(o.seq), "a positive integer");
  w.validate();
  DefaultNote seq_note(io);
  if (!given(sub, "--seq")) seq_note.set("--seq", std::to_string(w.seq_len) + " tokens, the model's context");
  PlanConstraints fix = plan_constraints(o, mixed);
  DefaultNote framework_note(io), rank_note(io);
  fill_tuning_defaults(fix, o.fix, sub, framework_note, rank_note);
  check_emit_format(o.emit, fix.defaults);
  ProgressBar bar;
  const PlannerOptions options = planner_options(o, failures_on, bar, io);
  if (!o.compare_profile.empty())
    return print_profile_comparison({model, o.cluster, mixed, w, fix, options, o.compare_profile, link_flags, o.json}, io);
  if (mixed.pools.size() > 1) return mixed_plan_command(o, model, mixed, w, fix, options, io);
  const OffloadSearch offload = search_plans_with_offload(model, cluster, w, fix, options);
  const PlanSearch& search = offload.search;
  if (search.evaluated == 0)
    throw Error(o.fix.empty() ? "cluster" : "fix",
                "no valid plan shape for " + model.name + " on " + std::to_string(cluster.gpus()) + " GPUs with gbs " +
                    std::to_string(w.global_batch) + (o.fix.empty() ? "" : " and --fix " + o.fix),
                "degrees that divide the GPU count, the heads and the batch");
  if (failures_on) return print_failure_ranking({search, model, cluster, w, failures}, o.emit, o.json, o.top, options.top_k, io);
  if (!o.emit.empty()) {
    emit_best_plan(o.emit, search, model, cluster, w, io);
    return 0;
  }
  if (o.json || !o.html.empty()) {
    auto j = plan_search_to_json(search, model, cluster, w);
    j["offload_steps"] = offload_steps_to_json(offload);
    j["schema_version"] = kSchemaVersion;
    note_profile(j);
    if (!o.html.empty()) write_plan_html(o.html, j, search, model, cluster, w);
    if (o.json) {
      io.print("{}\n", json_fields::to_text(j, 2));
      return 0;
    }
  }
  io.print("{}{}{}", offload_steps_text(offload, search.memory_limit_bytes),
           plan_search_to_table(search, model, cluster, w, search.memory_limit_bytes / units::kGiB), profile_note());
  return 0;
}

}  // namespace

void register_plan(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("plan", "Search every valid plan and rank them");
  auto o = std::make_shared<PlanOptions>();
  add_search_options(*sub, *o);
  add_failure_options(*sub, o->failures);
  add_link_options(*sub, o->links);
  commands.add(sub, [o, sub, &io = commands.output()]() { return plan_command(*o, *sub, io); });
}

}  // namespace tessera::cli

// tessera plan --model M --cluster C --gbs B [--seq S] [--top K] [--json] [--quiet]
//              [--emit megatron|torchtitan|json|rank-layout] [--fix tp=8,...] [--max-memory-gib X]
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
// Measured links (io/calibration_profile_json.h "links"): --intra-node-gbps, --inter-node-gbps,
// --inter-pool-gbps (achieved bus bandwidth, Gbit/s) and --intra-node-latency-us,
// --inter-node-latency-us, --inter-pool-latency-us replace the cluster's tiers (every pool's node
// tiers; over the --profile's links). --compare-profile OLD.json plans under OLD's conditions (the
// catalog with OLD applied, no link flags) and under the current ones (--profile, the link flags),
// and prints both best plans and the cost of keeping the old one (io/profile_comparison_report.h).
#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>

#include <fmt/core.h>

#include "cli/profile_note.h"
#include "cli/subcommands.h"
#include "core/checks.h"
#include "core/error.h"
#include "core/units.h"
#include "hardware/physical_ranges.h"
#include "io/chrome_trace.h"
#include "io/data_mix_json.h"
#include "io/gpu_catalog.h"
#include "io/html_file.h"
#include "io/json_fields.h"
#include "io/multimodal_json.h"
#include "io/multimodal_report.h"
#include "export/megatron_launch.h"
#include "export/torchtitan_config.h"
#include "io/cross_pool_plan_json.h"
#include "io/model_source.h"
#include "io/plan_report.h"
#include "io/plan_text.h"
#include "io/profile_comparison_report.h"
#include "io/report_timeline.h"
#include "io/schema.h"
#include "reliability/goodput_ranking.h"
#include "report/multimodal_page.h"
#include "report/plan_page.h"
#include "search/multimodal_planner.h"
#include "search/plan_comparison.h"
#include "search/planner.h"

namespace tessera::cli {

namespace {
constexpr const char* kDefaultModel = "gpt3-175b";
constexpr const char* kDefaultCluster = "a100-sxm-80gb:1024";
constexpr std::int64_t kDefaultGbs = 1536;
constexpr int kProgressWidth = 40;
constexpr const char* kDefaultDataMix = "caption-like";
constexpr std::int64_t kDefaultMultimodalTop = 3;
constexpr std::int64_t kMaxSeed = 1'000'000'000'000LL;
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
  const auto given = [&](const char* flag) { return sub.get_option(flag)->count() > 0; };
  if (given("--mtbf-node-h")) {
    require_in_range("--mtbf-node-h", f.mtbf_node_h, kMinMtbfNodeH, kMaxMtbfNodeH, "hours");
    const double per_node_now = m.rates.per_gpu_hour * static_cast<double>(cluster.gpus_per_node) + m.rates.per_node_hour;
    const double scale = (1.0 / f.mtbf_node_h) / per_node_now;
    m.rates.per_gpu_hour *= scale;
    m.rates.per_node_hour *= scale;
  }
  if (given("--ckpt-gbps")) {
    require_in_range("--ckpt-gbps", f.ckpt_gbps, physical::kMinBandwidthGbps, kMaxStorageFlagGbps, "GB/s");
    m.storage.write_gbps = m.storage.read_gbps = f.ckpt_gbps;
  }
  if (given("--node-write-gbps")) {
    require_in_range("--node-write-gbps", f.node_write_gbps, physical::kMinBandwidthGbps, kMaxStorageFlagGbps, "GB/s");
    m.storage.node_write_gbps = f.node_write_gbps;
  }
  if (given("--restart-s")) {
    require_positive_real("--restart-s", f.restart_s, kMaxRestartS);
    m.restart.detection_s = 0;
    m.restart.relaunch_s = f.restart_s;
  }
  if (given("--replacement-wait-s")) {
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

struct MultimodalRequest {
  std::string model, cluster, data, trace, fix, emit, html;
  std::int64_t gbs = 0, seq = 0, top = 0, seed = 0;
  double max_memory_gib = 0;
  bool json = false;
  LinkOverrides links;
};

// --trace: the recommended strategy's step. Disaggregated: the extended pipeline (encoders first,
// generator last); monolithic: the backbone plan's pipeline as `estimate --trace` simulates it.
TraceSize write_multimodal_trace(const std::string& path, const MultimodalSpec& model, const Cluster& cluster,
                            const DataMix& mix, const MultimodalRequest& r, const MultimodalSearch& search) {
  const MultimodalStrategy chosen = recommended_strategy(search);
  if (chosen == MultimodalStrategy::none) throw Error("--trace", "no plan fits", "a request with a plan");
  const MultimodalPlan& plan = strategy_plan(search, chosen);
  TraceLabels labels;
  if (plan.disaggregated) {
    labels.process_name = "tessera " + model.name + " disaggregated (stage 0 = encoders, last = generator)";
    labels.schedule = "1f1b";
    return write_chrome_trace(disaggregated_timeline(model, cluster, mix, r.gbs, plan, static_cast<std::uint64_t>(r.seed)),
                              path, labels);
  }
  const Workload w{search.sequences, mix.sequence_tokens};
  // A colocated plan's trace is its backbone pipeline (with the shared modules folded in); the
  // own-layout modules' phases run before and after it.
  labels.process_name = "tessera " + model.name + (plan.colocated ? " colocated (backbone pipeline)" : " monolithic") +
                        " on " + std::to_string(plan.backbone_gpus) + " GPUs, backbone " +
                        plan_to_shorthand(plan.backbone_plan, w);
  labels.schedule = plan.backbone_plan.vpp > 1 ? "interleaved" : "1f1b";
  return write_chrome_trace(monolithic_backbone_timeline(model, cluster, mix, r.gbs, plan), path, labels);
}

// --emit megatron: the recommended plan's backbone arguments, when Megatron-LM can run it (a
// monolithic layout is one Megatron job; per-module GPU groups are not).
std::string multimodal_megatron(const MultimodalSpec& model, const DataMix& mix, const MultimodalSearch& search) {
  const MultimodalStrategy chosen = recommended_strategy(search);
  if (chosen == MultimodalStrategy::none) throw Error("plan", "no plan fits", "more GPUs or a smaller --gbs");
  const MultimodalPlan& plan = strategy_plan(search, chosen);
  if (plan.disaggregated)
    throw Error("--emit", "the recommended plan is disaggregated, and Megatron-LM cannot express per-module GPU groups",
                "--json for the per-module plans");
  const bool own_layout = std::any_of(plan.modules.begin(), plan.modules.end(),
                                      [](const ModulePlacement& m) { return m.own_layout; });
  if (own_layout)
    throw Error("--emit", "the recommended plan is colocated with an encoder on its own layout, which Megatron-LM "
                          "cannot express",
                "--json for the per-module layouts");
  return megatron_command_line(model.backbone().transformer, plan.backbone_plan,
                               Workload{search.sequences, mix.sequence_tokens});
}

struct FailureRequest {
  const PlanSearch& search;
  const ModelSpec& model;
  const Cluster& cluster;
  const Workload& workload;
  const FailureModel& failures;
};

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
      throw Error("plan", fmt::format("no plan fits in {:.1f} GiB per GPU; the smallest peak is {:.1f} GiB", limit_gib,
                                      r.search.min_peak_memory_bytes / units::kGiB),
                  "a larger --max-memory-gib or more GPUs");
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

// plan --html for a multimodal model: the page from the document --json prints, with the
// simulated steps of the best disaggregated plan and of the monolithic layout on every GPU.
void write_multimodal_html(const std::string& path, const nlohmann::json& doc, const MultimodalSpec& model,
                           const Cluster& cluster, const DataMix& mix, const MultimodalRequest& r,
                           const MultimodalSearch& search) {
  report::MultimodalPageInputs in;
  in.title = "Tessera plan: " + model.name + " on " + std::to_string(cluster.gpus()) + " x " + cluster.gpu.key;
  if (!search.plans.empty())
    in.disaggregated = report_timeline(
        disaggregated_timeline(model, cluster, mix, r.gbs, search.plans[0], static_cast<std::uint64_t>(r.seed)),
        "best disaggregated plan: " + std::to_string(search.plans[0].gpus_used) + " GPUs");
  if (search.monolithic_found)
    in.monolithic = report_timeline(monolithic_backbone_timeline(model, cluster, mix, r.gbs, search.monolithic),
                                    "monolithic layout on every GPU");
  write_html_file(path, report::multimodal_page_html(doc, in));
}

int run_multimodal_plan(const MultimodalRequest& r, const CommandOutput& io) {
  for (const auto& [flag, set] : {std::pair{"--fix", !r.fix.empty()}, {"--max-memory-gib", r.max_memory_gib != 0}})
    if (set)
      throw Error(flag, "not available for multimodal models", "--data, --top, --seq, --seed, --json, --trace, --emit megatron");
  const MultimodalSpec model = load_multimodal_model(r.model);
  DataMix mix = load_data_mix(r.data.empty() ? kDefaultDataMix : r.data);
  const ModelSpec& backbone = model.backbone().transformer;
  if (r.seq < 0 || r.seq > backbone.max_context)
    throw Error("--seq", "got " + std::to_string(r.seq), "1 to the backbone's context " + std::to_string(backbone.max_context));
  // The mix's packed length, or the backbone's context when that is shorter (LLaVA's 4096).
  mix.sequence_tokens = r.seq > 0 ? r.seq : std::min(mix.sequence_tokens, backbone.max_context);
  if (r.seed < 0 || r.seed > kMaxSeed) throw Error("--seed", "got " + std::to_string(r.seed), "0 to 10^12");
  if (r.top < 1 || r.top > 100) throw Error("--top", "got " + std::to_string(r.top), "1 to 100 for multimodal plans");
  if (!r.emit.empty() && r.emit != "megatron")
    throw Error("--emit", "unknown format '" + r.emit + "' for a multimodal model", "megatron");
  const MixedCluster mixed = load_mixed_cluster(r.cluster, r.links);
  if (mixed.pools.size() > 1) throw Error("--cluster", "multimodal plans need one GPU type", "GPU:COUNT or a one-pool cluster");
  const Cluster& cluster = mixed.pools.front();
  MultimodalOptions options;
  options.top_k = static_cast<std::size_t>(r.top);
  options.seed = static_cast<std::uint64_t>(r.seed);
  const MultimodalSearch search = search_multimodal_plans(model, cluster, mix, r.gbs, options);
  // The emitted text first: a refused --emit leaves no trace file behind.
  const std::string emitted = r.emit.empty() ? "" : multimodal_megatron(model, mix, search);
  if (!r.trace.empty()) io.print_error("{}", trace_truncation_note(write_multimodal_trace(r.trace, model, cluster, mix, r, search)));
  if (!r.emit.empty()) {
    io.print("{}\n", emitted);
    return 0;
  }
  if (r.json || !r.html.empty()) {
    auto j = multimodal_search_to_json(search, model, mix, cluster);
    j["schema_version"] = kSchemaVersion;
    note_profile(j);
    if (!r.html.empty()) write_multimodal_html(r.html, j, model, cluster, mix, r, search);
    if (r.json) {
      io.print("{}\n", json_fields::to_text(j, 2));
      return 0;
    }
  }
  io.print("{}{}", multimodal_search_to_table(search, model, mix, cluster), profile_note());
  if (!r.trace.empty()) io.print("trace written to {}\n", r.trace);
  return 0;
}
}  // namespace

void register_plan(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("plan", "Search every valid plan and rank them");
  struct Options {
    std::string model = kDefaultModel, cluster = kDefaultCluster, emit, fix, data, trace, html, framework = "megatron";
    std::int64_t gbs = kDefaultGbs, seq = 0, top = 5, seed = 1;
    double max_memory_gib = 0;
    bool json = false, quiet = false, cross_node_tp = false;
    FailureFlags failures;
    LinkFlags links;
    std::string compare_profile;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("--model", o->model, "Zoo name, Tessera model JSON or HF config.json")->capture_default_str();
  sub->add_option("--cluster", o->cluster, "GPU:COUNT or a cluster JSON")->capture_default_str();
  sub->add_option("--gbs", o->gbs, "Global batch (sequences per step)")->capture_default_str();
  sub->add_option("--seq", o->seq, "Sequence length (default: the model's context)");
  sub->add_option("--top", o->top, "Plans to print")->capture_default_str();
  sub->add_option("--emit", o->emit,
                  "Print only the best plan as megatron | torchtitan | json (multimodal: megatron, when monolithic is "
                  "recommended; several pools: rank-layout, when a cross-pool pipeline is)");
  sub->add_option("--fix", o->fix, "Pin degrees or switches, e.g. tp=8,recompute=full");
  sub->add_option("--framework", o->framework,
                  "Search what this framework can run, priced as it runs: megatron | megatron-deepspeed | deepspeed | "
                  "torchtitan | nemo-automodel | pytorch")
      ->capture_default_str();
  sub->add_option("--max-memory-gib", o->max_memory_gib,
                  "Per-GPU memory limit, exactly (default: the GPU's usable memory less a 5% headroom)");
  sub->add_flag("--allow-cross-node-tp", o->cross_node_tp, "Let tensor parallelism span nodes");
  sub->add_flag("--json", o->json, "Print one JSON document");
  sub->add_flag("--quiet", o->quiet, "No progress bar");
  sub->add_option("--html", o->html,
                  "Write a self-contained HTML report (top plans, time vs memory of every feasible plan, breakdowns)");
  sub->add_option("--data", o->data, "Multimodal data mix: built-in name, mix .json or samples .jsonl (default caption-like)");
  sub->add_option("--trace", o->trace, "Multimodal: write the recommended strategy's step as a Chrome/Perfetto trace");
  sub->add_option("--seed", o->seed, "Multimodal: seed of the samples drawn from the mix")->capture_default_str();
  sub->add_flag("--failures", o->failures.on,
                "Rank plans by expected goodput under failures (Llama 3 fleet rates) and print the checkpoint interval");
  sub->add_option("--mtbf-node-h", o->failures.mtbf_node_h, "Failures: one node's MTBF in hours, GPUs included");
  sub->add_option("--ckpt-gbps", o->failures.ckpt_gbps, "Failures: storage write and read bandwidth, GB/s (default 2000)");
  sub->add_option("--node-write-gbps", o->failures.node_write_gbps, "Failures: one node's write bandwidth, GB/s (default 25)");
  sub->add_option("--restart-s", o->failures.restart_s, "Failures: detection + relaunch per failure, s (default 600 + 300)");
  sub->add_option("--replacement-wait-s", o->failures.replacement_wait_s,
                  "Failures: wait for a replacement node when no spare is left, s (default 0)");
  sub->add_option("--spare-nodes", o->failures.spare_nodes, "Failures: nodes kept out of the job as spares");
  sub->add_flag("--async-ckpt", o->failures.async, "Failures: asynchronous checkpoint save (Megatron --async-save)");
  sub->add_flag("--no-fully-parallel-save", o->failures.no_fully_parallel,
                "Failures: only the first data-parallel replica writes (Megatron --no-ckpt-fully-parallel-save)");
  sub->add_option("--intra-node-gbps", o->links.intra_node_gbps,
                  "Measured link: achieved bus bandwidth per GPU inside a node, Gbit/s (every pool)");
  sub->add_option("--inter-node-gbps", o->links.inter_node_gbps,
                  "Measured link: achieved bus bandwidth per GPU between nodes, Gbit/s (every pool)");
  sub->add_option("--inter-pool-gbps", o->links.inter_pool_gbps,
                  "Measured link: aggregate bandwidth between two pools, Gbit/s");
  sub->add_option("--intra-node-latency-us", o->links.intra_node_latency_us,
                  "Measured link: per-message latency inside a node, us (every pool)");
  sub->add_option("--inter-node-latency-us", o->links.inter_node_latency_us,
                  "Measured link: per-message latency between nodes, us (every pool)");
  sub->add_option("--inter-pool-latency-us", o->links.inter_pool_latency_us,
                  "Measured link: per-message latency between pools, us");
  sub->add_option("--compare-profile", o->compare_profile,
                  "Plan under this older profile's conditions too: both best plans and the cost of keeping the old one");
  commands.add(sub, [o, sub, &io = commands.output()]() {
    // NaN, inf and 1e-308 parse as doubles: a memory limit must be physical (physical_ranges.h).
    if (sub->get_option("--max-memory-gib")->count() > 0)
      require_in_range("--max-memory-gib", o->max_memory_gib, physical::kMinMemoryGib, physical::kMaxMemoryGib, "GiB");
    // 0 is not "not given": a sequence has at least one token (leaving --seq out means the context).
    if (sub->get_option("--seq")->count() > 0 && o->seq < 1)
      throw Error("--seq", "got " + std::to_string(o->seq), "a positive integer (leave --seq out for the model's context)");
    const bool failures_on = failures_requested(o->failures, *sub);
    const LinkOverrides link_flags = link_overrides(o->links, *sub);
    const bool comparing = !o->compare_profile.empty();
    if (comparing) {
      for (const auto& [other, set] :
           {std::pair{"--emit", !o->emit.empty()}, {"--html", !o->html.empty()}, {"--failures", failures_on},
            {"--top", sub->get_option("--top")->count() > 0},
            {"--data or --trace (multimodal)", !o->data.empty() || !o->trace.empty() || is_multimodal_model(o->model)}})
        if (set)
          throw Error("--compare-profile", std::string("not available with ") + other,
                      "a language model's plan, as text or --json (it reports the best plan of each side)");
    }
    if (!o->html.empty()) {
      for (const auto& [other, set] : {std::pair{"--failures", failures_on}, {"--emit", !o->emit.empty()}})
        if (set) throw Error("--html", std::string("not available yet with ") + other, "a plan search on one GPU pool");
    }
    if (failures_on && (!o->data.empty() || !o->trace.empty() || is_multimodal_model(o->model)))
      throw Error("--failures", "not available for multimodal plans", "a language model");
    if (!o->data.empty() || !o->trace.empty() || is_multimodal_model(o->model)) {
      if (!is_multimodal_model(o->model)) {
        // A file that is not even JSON: say so rather than "not a multimodal model".
        std::error_code ec;
        if (std::filesystem::is_regular_file(o->model, ec)) (void)json_fields::parse_file(o->model, "model");
        throw Error("--model", "'" + o->model + "' is not a multimodal model (--data and --trace need one)",
                    "a built-in multimodal model or a multimodal model JSON");
      }
      // Multimodal plans list the best of distinct backbone GPU counts: three unless asked.
      const std::int64_t top = sub->get_option("--top")->count() > 0 ? o->top : kDefaultMultimodalTop;
      return run_multimodal_plan({o->model, o->cluster, o->data, o->trace, o->fix, o->emit, o->html, o->gbs, o->seq,
                                  top, o->seed, o->max_memory_gib, o->json, link_flags},
                                 io);
    }
    const ModelSpec model = load_model(o->model);
    const MixedCluster mixed = load_mixed_cluster(o->cluster, link_flags);
    if (failures_on && mixed.pools.size() > 1)
      throw Error("--failures", "not available for a cluster of several pools", "one GPU type");
    const Cluster cluster = failures_on ? without_spares(mixed.pools.front(), o->failures.spare_nodes) : mixed.pools.front();
    const FailureModel failures = failures_on ? failure_model(o->failures, *sub, cluster) : FailureModel{};
    Workload w{o->gbs, o->seq == 0 ? model.max_context : o->seq};
    if (o->seq < 0) throw Error("--seq", "got " + std::to_string(o->seq), "a positive integer");
    w.validate();
    if (o->top < 1 || o->top > 1000) throw Error("--top", "got " + std::to_string(o->top), "1 to 1000");
    if (!o->emit.empty() && o->emit != "megatron" && o->emit != "torchtitan" && o->emit != "json" &&
        o->emit != "rank-layout")
      throw Error("--emit", "unknown format '" + o->emit + "'", "megatron, torchtitan, json, rank-layout");
    if (o->emit == "rank-layout" && mixed.pools.size() < 2)
      throw Error("--emit", "rank-layout describes a pipeline across pools", "a cluster of several pools");
    PlanConstraints fix = parse_constraints(o->fix);
    try {
      fix.defaults.framework = parse_training_framework(o->framework);
    } catch (const Error& e) {
      throw Error("--framework", "unknown framework '" + o->framework + "'", e.allowed());
    }
    if (o->emit == "torchtitan" && fix.defaults.framework != TrainingFramework::torchtitan)
      throw Error("--emit", "torchtitan needs a plan torchtitan can run", "--framework torchtitan --emit torchtitan");
    if (o->emit == "megatron" && fix.defaults.framework != TrainingFramework::megatron)
      throw Error("--emit", "megatron needs a Megatron plan", "--framework megatron (the default) with --emit megatron");
    fix.allow_cross_node_tp = o->cross_node_tp;
    if (o->max_memory_gib != 0) fix.max_memory_gib = o->max_memory_gib;
    PlannerOptions options;
    // The report's scatter shows every feasible plan: cost all of them (the ranking is the same).
    // The page draws the plans this search costed: no exhaustive search for a report (an exhaustive
    // DeepSeek-V3 search on 1,024 GPUs ran past 30 s where the plain one takes 1 s).
    options.record_feasible = !o->html.empty();
    options.top_k = failures_on ? std::max(static_cast<std::size_t>(o->top), kFailureRankingPlans)
                                : static_cast<std::size_t>(o->top);
    std::mutex progress_mutex;
    int shown = -1;
    if (!o->quiet) {
      options.progress = [&](std::int64_t done, std::int64_t total) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        const int filled = total > 0 ? static_cast<int>(kProgressWidth * done / total) : kProgressWidth;
        if (filled == shown) return;
        shown = filled;
        io.print_error("\rsearching [{}{}] {:3d}%", std::string(static_cast<std::size_t>(filled), '#'),
                       std::string(static_cast<std::size_t>(kProgressWidth - filled), ' '),
                       static_cast<int>(100 * done / std::max<std::int64_t>(1, total)));
        if (done == total) io.print_error("\n");
      };
    }
    if (comparing)
      return print_profile_comparison({model, o->cluster, mixed, w, fix, options, o->compare_profile, link_flags, o->json},
                                      io);
    if (mixed.pools.size() > 1) {
      if (!o->emit.empty() && o->emit != "rank-layout")
        throw Error("--emit", "'" + o->emit + "' is not available for a cluster of several pools",
                    "rank-layout (a cross-pool pipeline's ranks), or --json for each pool's Megatron arguments");
      if (!o->html.empty())
        throw Error("--html", "not available yet for a cluster of several pools", "a plan search on one GPU pool");
      const MixedPlan plan = search_mixed_plans(model, mixed, w, fix, options);
      if (!o->emit.empty()) {
        if (plan.strategy != MixedStrategy::cross_pool)
          throw Error("--emit", std::string("the answer is ") + to_string(plan.strategy) + ", not a cross-pool pipeline",
                      "--json (each pool's plan and Megatron arguments)");
        io.print("{}\n", json_fields::to_text(cross_pool_layout_to_json(*plan.cross_pool, mixed), 2));
        return 0;
      }
      if (o->json) {
        auto j = mixed_plan_to_json(plan, mixed, model, w);
        j["schema_version"] = kSchemaVersion;
        note_profile(j);
        io.print("{}\n", json_fields::to_text(j, 2));
      } else {
        io.print("{}{}", mixed_plan_to_table(plan, mixed, model, w), profile_note());
      }
      return 0;
    }
    const PlanSearch search = search_plans(model, cluster, w, fix, options);
    if (search.evaluated == 0)
      throw Error(o->fix.empty() ? "cluster" : "fix",
                  "no valid plan shape for " + model.name + " on " + std::to_string(cluster.gpus()) + " GPUs with gbs " +
                      std::to_string(w.global_batch) + (o->fix.empty() ? "" : " and --fix " + o->fix),
                  "degrees that divide the GPU count, the heads and the batch");
    const double limit_gib = search.memory_limit_bytes / units::kGiB;
    if (failures_on)
      return print_failure_ranking({search, model, cluster, w, failures}, o->emit, o->json, o->top, options.top_k, io);
    if (!o->emit.empty()) {
      if (search.plans.empty())
        throw Error("plan", fmt::format("no plan fits in {:.1f} GiB per GPU; the smallest peak is {:.1f} GiB",
                                        limit_gib, search.min_peak_memory_bytes / units::kGiB),
                    "a larger --max-memory-gib or more GPUs");
      const Plan& best = search.plans[0].plan;
      if (o->emit == "megatron") io.print("{}", megatron_launch_script(model, cluster, best, w));
      if (o->emit == "torchtitan") io.print("{}", torchtitan_job_text(torchtitan_job(model, best, w, cluster)));
      if (o->emit == "json") {
        nlohmann::json j = {{"schema_version", kSchemaVersion},
                            {"model", model.name},
                            {"cluster", {{"gpu", cluster.gpu.key}, {"gpus", cluster.gpus()}}},
                            {"plan", plan_to_json(best, w)},
                            {"iteration_time_s", search.plans[0].estimate.iteration_time_s}};
        io.print("{}\n", json_fields::to_text(j, 2));
      }
      return 0;
    }
    if (o->json || !o->html.empty()) {
      auto j = plan_search_to_json(search, model, cluster, w);
      j["schema_version"] = kSchemaVersion;
      note_profile(j);
      if (!o->html.empty()) write_plan_html(o->html, j, search, model, cluster, w);
      if (o->json) {
        io.print("{}\n", json_fields::to_text(j, 2));
        return 0;
      }
    }
    io.print("{}{}", plan_search_to_table(search, model, cluster, w, limit_gib), profile_note());
    return 0;
  });
}

}  // namespace tessera::cli

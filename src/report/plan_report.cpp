#include "report/plan_report.h"

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include "core/checks.h"
#include "core/error.h"
#include "core/units.h"
#include "evaluation/accuracy_classes.h"
#include "formats/cross_pool_plan_json.h"
#include "formats/integer_text.h"
#include "formats/json_fields.h"
#include "formats/plan_text.h"
#include "report/estimate_report.h"
#include "report/megatron_args_json.h"
#include "search/plan_space.h"

namespace tessera {

namespace {

struct Term {
  const char* name;
  double TimeBreakdown::*field;
};
constexpr Term kTerms[] = {
    {"compute", &TimeBreakdown::compute_s},           {"tensor-parallel comm", &TimeBreakdown::tp_comm_s},
    {"context-parallel comm", &TimeBreakdown::cp_comm_s}, {"expert-parallel comm", &TimeBreakdown::ep_comm_s},
    {"pipeline p2p", &TimeBreakdown::pp_comm_s},      {"pipeline bubble", &TimeBreakdown::bubble_s},
    {"data-parallel comm", &TimeBreakdown::dp_comm_s}, {"optimizer step", &TimeBreakdown::optimizer_s}};

std::string short_plan(const Plan& p) {
  std::string s = fmt::format("tp={},pp={},dp={}", p.tp, p.pp, p.dp);
  if (p.cp > 1) s += fmt::format(",cp={}", p.cp);
  if (p.ep > 1) s += fmt::format(",ep={}", p.ep);
  if (p.vpp > 1) s += fmt::format(",vpp={}", p.vpp);
  if (p.etp != 0 && p.etp != p.tp) s += fmt::format(",etp={}", p.etp);
  s += fmt::format(",mb={},recompute={}", p.micro_batch, to_string(p.recompute));
  if (p.recompute_layers > 0) s += fmt::format(":{}", p.recompute_layers);
  if (p.recompute == Recompute::selective && p.recompute_modules != 0)
    s += fmt::format(":{}", recompute_modules_text(p.recompute_modules));
  s += fmt::format(",zero={}", to_string(p.zero));
  // The MoE and FP8 keys where they are not the defaults (they matter only then).
  if (p.ep > 1 && p.dispatcher != MoeDispatcher::alltoall) s += fmt::format(",dispatcher={}", to_string(p.dispatcher));
  if (p.overlap_ep) s += p.delay_wgrad ? ",overlap_ep+delay_wgrad" : ",overlap_ep";
  if (p.overlap_tp_comm) s += ",overlap_tp";
  if (p.capacity_factor > 0) s += fmt::format(",capacity_factor={}", p.capacity_factor);
  if (p.precision == Precision::fp8) {
    s += fmt::format(",fp8={}", to_string(p.fp8_recipe));
    if (p.fp8_param_gather) s += "+param_gather";
  }
  // Offload tiers and adapters (plan/memory_tiers.h, plan/fine_tuning.h) where used.
  const std::pair<const char*, MemoryTier> tiers[] = {
      {"optimizer", p.offload.optimizer}, {"params", p.offload.params}, {"activations", p.offload.activations}};
  for (const auto& [name, tier] : tiers)
    if (tier != MemoryTier::gpu) s += fmt::format(",{}@{}", name, to_string(tier));
  if (p.tuning.adapters()) s += fmt::format(",{}:r{}", to_string(p.tuning.task), p.tuning.lora_rank);
  return s;
}

}  // namespace

namespace {

// Time terms within this fraction of the runner-up's iteration time are not named as reasons.
constexpr double kNegligibleTermFraction = 1e-4;
// Memory differences below this are not named (the table prints one decimal of GiB).
constexpr double kNegligibleMemoryGib = 0.05;
constexpr std::size_t kTermsShown = 3;
// The plan column of the ranked table: most plans fit; a longer one widens it.
constexpr std::size_t kPlanColumnWidth = 72;

// "tp=1,cp=2 (runner-up tp=2,cp=1)": the plan keys whose values differ.
std::string differing_keys(const Plan& winner, const Plan& runner_up, const Workload& w) {
  const nlohmann::json a = plan_to_json(winner, w), b = plan_to_json(runner_up, w);
  std::string mine, theirs;
  for (const auto& [key, value] : a.items()) {
    if (b.contains(key) && b.at(key) == value) continue;
    const auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : json_fields::to_text(v); };
    mine += fmt::format("{}{}={}", mine.empty() ? "" : ",", key, text(value));
    theirs += fmt::format("{}{}={}", theirs.empty() ? "" : ",", key, b.contains(key) ? text(b.at(key)) : "-");
  }
  return mine.empty() ? "" : fmt::format("{} (runner-up {})", mine, theirs);
}

std::string why(const PlanSearch& search, const Cluster& cluster, const Workload& workload) {
  if (search.plans.size() < 2) return "";
  const RankedPlan& first = search.plans[0];
  const RankedPlan& second = search.plans[1];
  const Estimate& a = first.estimate;
  const Estimate& b = second.estimate;
  const double gap = b.iteration_time_s - a.iteration_time_s;
  const bool tie = std::abs(gap) <= kTimeTieFraction * std::max(a.iteration_time_s, b.iteration_time_s);
  std::string out =
      tie ? fmt::format("{} ranks above {}: equal time within {:g}% ({:.3f} s vs {:.3f} s);", short_plan(first.plan),
                        short_plan(second.plan), 100 * kTimeTieFraction, a.iteration_time_s, b.iteration_time_s)
          : fmt::format("{} beats {} by {:.3f} s ({:.1f}%):", short_plan(first.plan), short_plan(second.plan), gap,
                        100.0 * gap / b.iteration_time_s);
  struct Diff {
    const char* name;
    double seconds;
  };
  std::vector<Diff> diffs;
  for (const Term& t : kTerms) diffs.push_back({t.name, b.time.*t.field - a.time.*t.field});
  std::sort(diffs.begin(), diffs.end(), [](const Diff& x, const Diff& y) { return std::abs(x.seconds) > std::abs(y.seconds); });
  std::size_t shown = 0;
  for (const Diff& d : diffs) {
    if (shown == kTermsShown || std::abs(d.seconds) < kNegligibleTermFraction * std::max(1e-9, b.iteration_time_s)) break;
    out += fmt::format("{} {} {:.3f} s {}", shown ? "," : "", d.name, std::abs(d.seconds), d.seconds > 0 ? "less" : "more");
    ++shown;
  }
  if (shown == 0) out += " every time term equal";
  const double mem = (b.peak_memory_bytes - a.peak_memory_bytes) / units::kGiB;
  if (std::abs(mem) >= kNegligibleMemoryGib) out += fmt::format("; {:.1f} GiB {} memory", std::abs(mem), mem > 0 ? "less" : "more");
  else if (tie) out += "; the same memory";
  const int ca = cross_node_groups(first.plan, cluster), cb = cross_node_groups(second.plan, cluster);
  if (ca != cb)
    out += fmt::format("; {} {} tp/cp/expert group(s) crossing nodes", std::abs(ca - cb), ca < cb ? "fewer" : "more");
  const std::string keys = differing_keys(first.plan, second.plan, workload);
  if (!keys.empty()) out += fmt::format("; differs in {}", keys);
  return out;
}

nlohmann::json search_json(const PlanSearch& s, const ModelSpec& model, const Cluster& cluster, const Workload& w) {
  nlohmann::json plans = nlohmann::json::array();
  for (const auto& r : s.plans) {
    const Estimate& e = r.estimate;
    nlohmann::json entry = {{"plan", plan_to_json(r.plan, w)},
                            {"iteration_time_s", e.iteration_time_s},
                            {"mfu", e.mfu},
                            {"tokens_per_s", e.tokens_per_s},
                            {"peak_memory_gib", e.peak_memory_bytes / units::kGiB},
                            {"fits", e.fits},
                            {"estimate", estimate_to_json(e)}};
    add_megatron_args(entry, model, r.plan, w);
    entry["confidence"] = confidence_to_json(estimate_confidence(model, cluster, r.plan, w, &r.estimate));
    entry["cross_node_groups"] = cross_node_groups(r.plan, cluster);
    plans.push_back(std::move(entry));
  }
  nlohmann::json out = {{"evaluated", s.evaluated},
                        {"feasible", s.feasible},
                        {"search_time_s", s.search_time_s},
                        {"plans_per_s", s.search_time_s > 0 ? static_cast<double>(s.evaluated) / s.search_time_s : 0.0},
                        {"memory_limit_gib", s.memory_limit_bytes / units::kGiB},
                        {"headroom_gib", s.headroom_bytes / units::kGiB},
                        {"aliases", s.aliases},
                        {"plans", plans},
                        {"why", why(s, cluster, w)}};
  if (s.plans.empty())  // null: no plan's offloaded state fits the nodes' host memory and NVMe
    out["min_peak_memory_gib"] = s.min_peak_memory_bytes > 0 ? nlohmann::json(s.min_peak_memory_bytes / units::kGiB)
                                                             : nlohmann::json(nullptr);
  return out;
}

// "fit in 75.2 GiB (79.2 usable less 5% headroom)" or "fit in 60.0 GiB (--max-memory-gib)".
std::string limit_text(const PlanSearch& s, double fallback_limit_gib) {
  if (s.memory_limit_bytes <= 0) return fmt::format("{:.1f} GiB", fallback_limit_gib);
  const double limit = s.memory_limit_bytes / units::kGiB;
  if (s.headroom_bytes <= 0) return fmt::format("{:.1f} GiB (--max-memory-gib)", limit);
  return fmt::format("{:.1f} GiB ({:.1f} usable less {:g}% headroom)", limit, limit + s.headroom_bytes / units::kGiB,
                     100 * kDefaultMemoryHeadroomFraction);
}

// One confidence line for the whole list when every plan has the same, else one per plan.
// The ranked plans, one row each: the plan column as wide as the longest plan (a long plan string
// must not push the figures out of their columns), and each plan's memory margin (usable less its
// peak), marked '!' when the framework's measured peak error is larger than the margin.
std::string plan_rows(const PlanSearch& s, const std::vector<Confidence>& confidences) {
  std::size_t width = kPlanColumnWidth;
  for (const auto& r : s.plans) width = std::max(width, short_plan(r.plan).size());
  std::string out = fmt::format("\n{:>3}  {:<{}} {:>10} {:>6} {:>10} {:>8} {:>9}\n", "#", "plan", width, "time_s", "MFU",
                                "tokens/s", "mem_GiB", "free_GiB");
  bool any_marked = false;
  for (std::size_t i = 0; i < s.plans.size(); ++i) {
    const auto& r = s.plans[i];
    const Confidence& c = confidences[i];
    any_marked = any_marked || c.memory_margin_inside_error;
    out += fmt::format("{:>3}  {:<{}} {:>10.3f} {:>5.1f}% {:>10.0f} {:>8.1f} {:>8.1f}{}\n", i + 1, short_plan(r.plan), width,
                       r.estimate.iteration_time_s, 100 * r.estimate.mfu, r.estimate.tokens_per_s,
                       r.estimate.peak_memory_bytes / units::kGiB, c.memory_margin_gib,
                       c.memory_margin_inside_error ? "!" : " ");
  }
  if (any_marked)
    out += "! the margin is inside this framework's measured peak-memory error: the fit verdict could go either way\n";
  return out;
}

std::string confidence_lines(const std::vector<Confidence>& confidences) {
  std::vector<std::string> lines;
  for (const Confidence& c : confidences) lines.push_back(confidence_text(c));
  if (lines.empty()) return "";
  if (std::all_of(lines.begin(), lines.end(), [&](const std::string& l) { return l == lines.front(); }))
    return fmt::format("confidence (every plan above): {}\n", lines.front());
  std::string out = "confidence:\n";
  for (std::size_t i = 0; i < lines.size(); ++i) out += fmt::format("{:>3}  {}\n", i + 1, lines[i]);
  return out;
}

}  // namespace

std::string why_winner(const PlanSearch& search, const Cluster& cluster, const Workload& workload) {
  return why(search, cluster, workload);
}

nlohmann::json plan_search_to_json(const PlanSearch& s, const ModelSpec& model, const Cluster& cluster,
                                   const Workload& w) {
  return search_json(s, model, cluster, w);
}

std::string plan_search_to_table(const PlanSearch& s, const ModelSpec& model, const Cluster& cluster,
                                 const Workload& w, double memory_limit_gib) {
  std::string out;
  out += fmt::format("searched {} plans ({} fit in {}) in {:.3f} s: {:.0f} plans/s\n", s.evaluated,
                     s.feasible, limit_text(s, memory_limit_gib), s.search_time_s,
                     s.search_time_s > 0 ? static_cast<double>(s.evaluated) / s.search_time_s : 0.0);
  if (s.plans.empty() && s.min_peak_memory_bytes == 0) {
    out += "no plan fits: every plan's offloaded state is larger than a node's host memory or NVMe; it needs "
           "nodes with more host memory or NVMe (a cluster JSON's \"host\"), or more nodes\n";
    return out;
  }
  if (s.plans.empty()) {
    out += fmt::format("no plan fits: the smallest peak is {:.1f} GiB per GPU ({}); it needs GPUs with at "
                       "least that much usable memory, or more GPUs\n",
                       s.min_peak_memory_bytes / units::kGiB, short_plan(s.min_memory_plan));
    return out;
  }
  // Each plan's confidence once: its memory margin in the table, its text below.
  std::vector<Confidence> confidences;
  for (const auto& r : s.plans) confidences.push_back(estimate_confidence(model, cluster, r.plan, w, &r.estimate));
  out += plan_rows(s, confidences);
  if (std::any_of(s.plans.begin(), s.plans.end(), [](const RankedPlan& r) { return r.estimate.mfu_fp8_peak > 0; }))
    out += "MFU against the 16-bit dense peak for every plan, FP8 ones too (their FP8-peak figure: --json "
           "mfu_fp8_peak)\n";
  out += fmt::format("\n{}", confidence_lines(confidences));
  const std::string reason = why_winner(s, cluster, w);
  if (!reason.empty()) out += fmt::format("\n{}\n", reason);
  out += "\nbest plan in full:\n";
  out += estimate_to_table(s.plans[0].estimate, model, cluster, s.plans[0].plan, w);
  out += "\nMegatron-LM arguments:\n" + megatron_command_or_reason(model, s.plans[0].plan, w) + "\n";
  return out;
}

namespace {

nlohmann::json failure_inputs_json(const FailureModel& f) {
  return {{"per_gpu_hour", f.rates.per_gpu_hour},
          {"per_node_hour", f.rates.per_node_hour},
          {"planned_per_node_hour", f.rates.planned_per_node_hour},
          {"storage_write_gbps", f.storage.write_gbps},
          {"storage_read_gbps", f.storage.read_gbps},
          {"node_write_gbps", f.storage.node_write_gbps},
          {"device_to_host_gbps", f.storage.device_to_host_gbps},
          {"async_save", f.save.async},
          {"fully_parallel_save", f.save.fully_parallel},
          {"detection_s", f.restart.detection_s},
          {"relaunch_s", f.restart.relaunch_s},
          {"replacement_wait_s", f.restart.replacement_wait_s},
          {"node_repair_h", f.restart.node_repair_h},
          {"spare_nodes", f.restart.spare_nodes}};
}

nlohmann::json outcome_json(const FailureOutcome& o) {
  return {{"checkpoint_interval_steps", o.interval_steps},
          {"checkpoint_interval_s", o.interval_s},
          {"checkpoint_write_s", o.checkpoint.write_s},
          {"checkpoint_blocking_s", o.checkpoint.blocking_s},
          {"checkpoint_load_s", o.checkpoint.load_s},
          {"checkpoint_gb", o.checkpoint.total_bytes / units::kGB},
          {"checkpoint_writers", o.checkpoint.writers},
          {"restart_s", o.restart_s},
          {"mtbf_h", o.mtbf_s / units::kSecondsPerHour},
          {"young_interval_s", o.young_interval_s},
          {"daly_interval_s", o.daly_interval_s},
          {"optimal_interval_s", o.optimal_interval_s},
          {"expected_goodput_fraction", o.useful_fraction}};
}

}  // namespace

MegatronCheckpointing megatron_checkpointing(const FailureOutcome& o, const FailureModel& f) {
  return {o.interval_steps, f.save.async, f.save.fully_parallel};
}

std::string why_goodput_winner(const GoodputRanking& r) {
  if (r.plans.empty()) return "";
  const GoodputPlan& win = r.plans[0];
  const auto fastest = std::min_element(r.plans.begin(), r.plans.end(),
                                        [](const GoodputPlan& a, const GoodputPlan& b) { return a.time_rank < b.time_rank; });
  const auto detail = [](const GoodputPlan& g) {
    return fmt::format("useful {:.2f}% of wall-clock, checkpoint stall {:.2f} s per save ({} writer(s)), restart {:.0f} s",
                       100 * g.failures.useful_fraction, g.failures.checkpoint.blocking_s, g.failures.checkpoint.writers,
                       g.failures.restart_s);
  };
  if (fastest == r.plans.begin() || fastest->time_rank == win.time_rank)
    return fmt::format("the fastest plan {} also has the best expected goodput ({:.0f} tokens/s): {}",
                       short_plan(win.ranked.plan), win.goodput_tokens_per_s, detail(win));
  const double step_gap = win.ranked.estimate.iteration_time_s / fastest->ranked.estimate.iteration_time_s - 1;
  return fmt::format("{} ranks above the fastest plan {} under failures: expected goodput {:.0f} vs {:.0f} tokens/s "
                     "({:+.2f}%) with a {:.2f}% slower step: {} vs {}",
                     short_plan(win.ranked.plan), short_plan(fastest->ranked.plan), win.goodput_tokens_per_s,
                     fastest->goodput_tokens_per_s, 100 * (win.goodput_tokens_per_s / fastest->goodput_tokens_per_s - 1),
                     100 * step_gap, detail(win), detail(*fastest));
}

nlohmann::json goodput_ranking_to_json(const GoodputRanking& r, const PlanSearch& search, const ModelSpec& model,
                                       const Cluster& cluster, const Workload& w, const FailureModel& f) {
  nlohmann::json j = search_json(reordered_search(search, r), model, cluster, w);
  for (std::size_t i = 0; i < r.plans.size(); ++i) {
    nlohmann::json& entry = j["plans"][i];
    const GoodputPlan& g = r.plans[i];
    entry["failures"] = outcome_json(g.failures);
    entry["expected_goodput_tokens_per_s"] = g.goodput_tokens_per_s;
    entry["step_time_rank"] = g.time_rank + 1;
    if (!entry["megatron_args"].is_null()) entry["megatron_args"] = megatron_args(model, g.ranked.plan, w, megatron_checkpointing(g.failures, f));
  }
  const std::string reason = why_goodput_winner(r);
  j["why"] = reason;
  j["failures"] = {{"ranking", "expected_goodput"},
                   {"walked", r.walked},
                   {"exact", r.exact},
                   {"inputs", failure_inputs_json(f)},
                   {"why", reason}};
  return j;
}

std::string goodput_ranking_to_table(const GoodputRanking& r, const PlanSearch& search, const ModelSpec& model,
                                     const Cluster& cluster, const Workload& w, const FailureModel& f,
                                     double memory_limit_gib) {
  const PlanSearch s = reordered_search(search, r);
  std::string out = fmt::format("searched {} plans ({} fit in {}) in {:.3f} s; ranked by expected goodput under failures "
                                "({} of the fastest priced{})\n",
                                s.evaluated, s.feasible, limit_text(s, memory_limit_gib), s.search_time_s, r.walked,
                                r.exact ? ", exact" : "; more plans may follow: raise --top");
  if (r.plans.empty()) return out + "no plan fits\n";
  const FailureOutcome& best = r.plans[0].failures;
  out += fmt::format("job MTBF {:.2f} h ({:.3f} failures/h, {:.3f} planned/h); checkpoint {:.0f} GB\n",
                     best.mtbf_s / units::kSecondsPerHour, best.failures_per_hour, best.planned_per_hour,
                     best.checkpoint.total_bytes / units::kGB);
  out += fmt::format("\n{:>3}  {:<96} {:>8} {:>10} {:>8} {:>8} {:>9} {:>7} {:>10}\n", "#", "plan", "time_s", "tokens/s",
                     "ckpt_s", "stall_s", "interval", "useful", "goodput");
  for (std::size_t i = 0; i < r.plans.size(); ++i) {
    const GoodputPlan& g = r.plans[i];
    out += fmt::format("{:>3}  {:<96} {:>8.3f} {:>10.0f} {:>8.2f} {:>8.2f} {:>9} {:>6.2f}% {:>10.0f}\n", i + 1,
                       short_plan(g.ranked.plan), g.ranked.estimate.iteration_time_s, g.ranked.estimate.tokens_per_s,
                       g.failures.checkpoint.write_s, g.failures.checkpoint.blocking_s, g.failures.interval_steps,
                       100 * g.failures.useful_fraction, g.goodput_tokens_per_s);
  }
  out += fmt::format("\n{}\n", why_goodput_winner(r));
  out += fmt::format("recommended checkpoint interval: every {} steps ({:.0f} s; Young {:.0f} s, Daly {:.0f} s, "
                     "exact optimum {:.0f} s)\n",
                     best.interval_steps, best.interval_s, best.young_interval_s, best.daly_interval_s,
                     best.optimal_interval_s);
  out += "\nbest plan in full:\n";
  out += estimate_to_table(s.plans[0].estimate, model, cluster, s.plans[0].plan, w);
  std::string args;
  try {
    args = megatron_command_line(model, s.plans[0].plan, w, megatron_checkpointing(best, f));
  } catch (const Error& e) {
    args = std::string("(not expressible in Megatron-LM: ") + e.what() + ")";
  }
  out += "\nMegatron-LM arguments:\n" + args + "\n";
  return out;
}

namespace {

nlohmann::json cross_pool_to_json(const MixedPlan& m, const MixedCluster& cluster, const ModelSpec& model,
                                  const Workload& workload) {
  if (!m.cross_pool) return nullptr;
  const CrossPoolPlan& plan = *m.cross_pool;
  const CrossPoolEstimate& e = m.cross_pool_estimate;
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& st : e.stages)
    stages.push_back({{"pool", st.pool},
                      {"gpu", cluster.pools[st.pool].gpu.key},
                      {"tp", st.tp},
                      {"first_layer", st.first_layer},
                      {"layers", st.layers},
                      {"forward_s", st.forward_s},
                      {"backward_s", st.backward_s},
                      {"dp_sync_s", st.dp_sync_s},
                      {"peak_memory_gib", st.peak_memory_bytes / units::kGiB},
                      {"usable_memory_gib", st.usable_memory_bytes / units::kGiB},
                      {"fits", st.fits}});
  return {{"iteration_time_s", e.iteration_time_s},
          {"tokens_per_s", e.tokens_per_s},
          {"mfu", e.mfu},
          {"dp", plan.base.dp},
          {"micro_batch", plan.base.micro_batch},
          {"recompute", to_string(plan.base.recompute)},
          {"zero", to_string(plan.base.zero)},
          {"pipeline_s", e.pipeline_s},
          {"bubble_s", e.bubble_s},
          {"dp_sync_s", e.dp_sync_s},
          {"tail_s", e.tail_s},
          {"boundary_p2p_s", e.boundary_p2p_s},
          {"segments", cross_pool_segments_to_json(plan, cluster)},
          {"stages", stages},
          {"rank_layout", cross_pool_layout_to_json(plan, cluster)},
          {"confidence", confidence_to_json(cross_pool_confidence(model, cluster, plan, workload))},
          {"evaluated", m.cross_pool_evaluated},
          {"simulated", m.cross_pool_simulated}};
}

double ratio_or_zero(double numerator, double denominator) {
  return numerator > 0 && denominator > 0 ? numerator / denominator : 0.0;
}

}  // namespace

nlohmann::json mixed_plan_to_json(const MixedPlan& m, const MixedCluster& cluster, const ModelSpec& model,
                                  const Workload& w) {
  nlohmann::json pools = nlohmann::json::array();
  for (const auto& a : m.pools) {
    const Workload share{a.global_batch, w.seq_len};
    nlohmann::json pool = {{"pool", a.pool},
                     {"gpu", cluster.pools[a.pool].gpu.key},
                     {"gpus", cluster.pools[a.pool].gpus()},
                     {"global_batch", a.global_batch},
                     {"plan", plan_to_json(a.plan.plan, share)},
                     {"iteration_time_s", a.plan.estimate.iteration_time_s},
                     {"peak_memory_gib", a.plan.estimate.peak_memory_bytes / units::kGiB},
                     {"confidence", confidence_to_json(estimate_confidence(model, cluster.pools[a.pool], a.plan.plan,
                                                                           share, &a.plan.estimate))}};
    add_megatron_args(pool, model, a.plan.plan, share);
    pools.push_back(std::move(pool));
  }
  nlohmann::json left = nlohmann::json::array();
  for (auto p : m.left_out) left.push_back({{"pool", p}, {"gpu", cluster.pools[p].gpu.key}});
  return {{"strategy", to_string(m.strategy)},
          {"iteration_time_s", m.iteration_time_s},
          {"tokens_per_s", m.tokens_per_s},
          {"replica_time_s", m.replica_time_s},
          {"cross_pool_sync_s", m.sync_time_s},
          {"cross_pool_must_beat_s", std::isfinite(m.cross_pool_must_beat_s) ? nlohmann::json(m.cross_pool_must_beat_s)
                                                                              : nlohmann::json()},
          {"pools", pools},
          {"cross_pool", cross_pool_to_json(m, cluster, model, w)},
          {"left_out", left},
          {"best_single_pool", {{"pool", m.best_single_pool},
                                {"gpu", cluster.pools[m.best_single_pool].gpu.key},
                                {"iteration_time_s", m.best_single_time_s}}},
          {"speedup_over_best_single_pool", ratio_or_zero(m.best_single_time_s, m.iteration_time_s)},
          {"speedup_over_whole_replicas", ratio_or_zero(m.replica_time_s, m.iteration_time_s)},
          {"search_time_s", m.search_time_s}};
}

namespace {

std::string replica_lines(const MixedPlan& m, const MixedCluster& cluster, const ModelSpec& model,
                          const Workload& w) {
  std::string out;
  for (const auto& a : m.pools) {
    const Cluster& c = cluster.pools[a.pool];
    out += fmt::format("  pool {} ({} x {}): {} sequences, {}, {:.3f} s, {:.1f} GiB\n    confidence: {}\n", a.pool,
                       c.gpus(), c.gpu.key, a.global_batch, short_plan(a.plan.plan), a.plan.estimate.iteration_time_s,
                       a.plan.estimate.peak_memory_bytes / units::kGiB,
                       confidence_text(estimate_confidence(model, c, a.plan.plan, {a.global_batch, w.seq_len}, &a.plan.estimate)));
  }
  if (m.pools.size() > 1) out += fmt::format("  cross-pool gradient sync {:.3f} s\n", m.sync_time_s);
  return out;
}

std::string cross_pool_lines(const MixedPlan& m, const MixedCluster& cluster, const ModelSpec& model,
                             const Workload& w) {
  const CrossPoolPlan& plan = *m.cross_pool;
  const CrossPoolEstimate& e = m.cross_pool_estimate;
  std::string out = fmt::format("  dp={} mb={} recompute={} zero={}; bubble {:.3f} s, pool boundary {:.1f} ms per "
                                "micro-batch; {} candidates bounded, {} simulated\n",
                                plan.base.dp, plan.base.micro_batch, to_string(plan.base.recompute),
                                to_string(plan.base.zero), e.bubble_s, 1e3 * e.boundary_p2p_s, m.cross_pool_evaluated,
                                m.cross_pool_simulated);
  std::size_t stage = 0;
  for (const auto& seg : plan.segments) {
    const Cluster& c = cluster.pools[seg.pool];
    double fwd_bwd = 0, peak = 0;
    for (std::int64_t i = 0; i < seg.stages; ++i, ++stage) {
      fwd_bwd = std::max(fwd_bwd, e.stages[stage].forward_s + e.stages[stage].backward_s);
      peak = std::max(peak, e.stages[stage].peak_memory_bytes);
    }
    out += fmt::format("  stages on pool {} ({} x {}): {} stage{} x tp={} x dp={}, {}, {} layers ({:.1f} per stage), "
                       "{:.1f} ms per micro-batch, {:.1f} of {:.1f} GiB\n",
                       seg.pool, c.gpus(), c.gpu.key, seg.stages, seg.stages == 1 ? "" : "s", seg.tp, plan.base.dp,
                       segment_precision_text(seg), seg.layers,
                       static_cast<double>(seg.layers) / static_cast<double>(seg.stages), 1e3 * fwd_bwd,
                       peak / units::kGiB, c.gpu.usable_memory_gib);
  }
  out += "  confidence: " + confidence_text(cross_pool_confidence(model, cluster, plan, w)) + "\n";
  return out;
}

// Which strategy wins and by how much over the others found.
std::string verdict_line(const MixedPlan& m) {
  if (m.strategy == MixedStrategy::cross_pool)
    return m.replica_time_s > 0
               ? fmt::format("cross-pool pipeline wins: {:.3f} s vs {:.3f} s with whole replicas per pool ({:.2f}x)\n",
                             m.iteration_time_s, m.replica_time_s, m.replica_time_s / m.iteration_time_s)
               : "cross-pool pipeline wins: no whole replica fits any pool or combination of pools\n";
  if (m.cross_pool)
    return fmt::format("whole replicas per pool win: the best cross-pool pipeline takes {:.3f} s ({:.2f}x slower)\n",
                       m.cross_pool_estimate.iteration_time_s, m.cross_pool_estimate.iteration_time_s / m.iteration_time_s);
  if (std::isfinite(m.cross_pool_must_beat_s))
    return fmt::format("whole replicas per pool win: no cross-pool pipeline that fits is faster than {:.3f} s\n",
                       m.cross_pool_must_beat_s);
  return "no cross-pool pipeline fits\n";
}

}  // namespace

std::string mixed_plan_to_table(const MixedPlan& m, const MixedCluster& cluster, const ModelSpec& model,
                                const Workload& w) {
  if (m.strategy == MixedStrategy::none) return "no plan fits on any pool, combination of pools or pipeline across pools\n";
  const bool cross = m.strategy == MixedStrategy::cross_pool;
  std::string out = fmt::format("iteration time {:.3f} s, {} ({:.0f} tokens/s), searched in {:.2f} s\n",
                                m.iteration_time_s,
                                cross ? fmt::format("one pipeline across {} pools", m.cross_pool->segments.size())
                                      : fmt::format("whole replicas on {} pool(s)", m.pools.size()),
                                m.tokens_per_s, m.search_time_s);
  if (cross) {
    out += cross_pool_lines(m, cluster, model, w);
  } else {
    out += replica_lines(m, cluster, model, w);
  }
  for (auto p : m.left_out)
    out += fmt::format("  pool {} ({} x {}) left out: it would slow the job down\n", p, cluster.pools[p].gpus(),
                       cluster.pools[p].gpu.key);
  out += verdict_line(m);
  if (cross && !m.pools.empty()) out += "whole replicas per pool:\n" + replica_lines(m, cluster, model, w);
  if (!cross && m.cross_pool) out += "best cross-pool pipeline:\n" + cross_pool_lines(m, cluster, model, w);
  if (m.best_single_time_s > 0)
    out += fmt::format("best single pool: pool {} ({}) alone takes {:.3f} s: {:.2f}x {}\n", m.best_single_pool,
                       cluster.pools[m.best_single_pool].gpu.key, m.best_single_time_s,
                       m.best_single_time_s / m.iteration_time_s,
                       m.strategy == MixedStrategy::single_pool ? "(the plan above)" : "faster mixed");
  else
    out += "no single pool can run the whole batch alone\n";
  return out;
}

}  // namespace tessera

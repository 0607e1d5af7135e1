#include "report/profile_comparison_report.h"

#include <cmath>

#include <fmt/core.h>

#include "core/units.h"
#include "formats/cross_pool_plan_json.h"
#include "formats/json_fields.h"
#include "formats/plan_text.h"

namespace tessera {

namespace {

double tier_gbps(const LinkTier& tier) { return tier.bandwidth_bytes_per_s / units::gbps_to_bytes_per_s(1.0); }
double tier_latency_us(const LinkTier& tier) { return tier.latency_s / units::kMicrosecond; }

MixedCluster one_pool(const Cluster& cluster) {
  MixedCluster mixed;
  mixed.pools.push_back(cluster);
  return mixed;
}

nlohmann::json links_json(const MixedCluster& cluster) {
  nlohmann::json pools = nlohmann::json::array();
  for (std::size_t i = 0; i < cluster.pools.size(); ++i) {
    const Cluster& p = cluster.pools[i];
    pools.push_back({{"pool", i},
                     {"gpu", p.gpu.key},
                     {"gpus", p.gpus()},
                     {"intra_node_gbps", tier_gbps(p.intra_node)},
                     {"intra_node_latency_us", tier_latency_us(p.intra_node)},
                     {"inter_node_gbps", tier_gbps(p.inter_node)},
                     {"inter_node_latency_us", tier_latency_us(p.inter_node)}});
  }
  const bool mixed = cluster.pools.size() > 1;
  return {{"pools", pools},
          {"inter_pool_gbps", mixed ? nlohmann::json(tier_gbps(cluster.inter_pool)) : nlohmann::json()},
          {"inter_pool_latency_us", mixed ? nlohmann::json(tier_latency_us(cluster.inter_pool)) : nlohmann::json()}};
}

nlohmann::json conditions_json(const ComparedConditions& c, const MixedCluster& old_cluster,
                               const MixedCluster& new_cluster) {
  return {{"old_conditions", {{"profile", c.old_profile}, {"links", links_json(old_cluster)}}},
          {"current_conditions",
           {{"profile", c.current_profile.empty() ? nlohmann::json() : nlohmann::json(c.current_profile)},
            {"link_flags", links_to_json(c.link_flags)},
            {"links", links_json(new_cluster)}}}};
}

// The old plan now and the cost of keeping it; nulls where it no longer fits.
void add_keeping(nlohmann::json& doc, const KeepingCost& k, bool fits) {
  const bool finite = fits && std::isfinite(k.old_plan_now_s);
  doc["old_plan_now"] = {{"iteration_time_s", finite ? nlohmann::json(k.old_plan_now_s) : nlohmann::json()},
                         {"fits", fits}};
  doc["cost_of_keeping_old_plan"] = finite
                                        ? nlohmann::json{{"per_step_s", k.per_step_s()},
                                                         {"percent", 100.0 * k.fraction()},
                                                         {"per_1000_steps_s", kComparisonReportSteps * k.per_step_s()}}
                                        : nlohmann::json();
}

nlohmann::json single_plan_json(const std::optional<RankedPlan>& best, const Workload& w) {
  if (!best) return nullptr;  // no plan fits under these conditions
  const RankedPlan& p = *best;
  return {{"plan", plan_to_json(p.plan, w)},
          {"shorthand", plan_to_shorthand(p.plan, w)},
          {"iteration_time_s", p.estimate.iteration_time_s},
          {"peak_memory_gib", p.estimate.peak_memory_bytes / units::kGiB}};
}

nlohmann::json mixed_plan_json(const MixedPlan& m, const MixedCluster& cluster, const Workload& w) {
  nlohmann::json pools = nlohmann::json::array(), left = nlohmann::json::array(), cross;
  if (m.strategy != MixedStrategy::cross_pool)
    for (const auto& a : m.pools)
      pools.push_back({{"pool", a.pool},
                       {"gpu", cluster.pools[a.pool].gpu.key},
                       {"global_batch", a.global_batch},
                       {"plan", plan_to_shorthand(a.plan.plan, {a.global_batch, w.seq_len})},
                       {"iteration_time_s", a.plan.estimate.iteration_time_s}});
  if (m.strategy == MixedStrategy::cross_pool && m.cross_pool) {
    const Plan& base = m.cross_pool->base;
    cross = {{"dp", base.dp},
             {"micro_batch", base.micro_batch},
             {"recompute", to_string(base.recompute)},
             {"zero", to_string(base.zero)},
             {"segments", cross_pool_segments_to_json(*m.cross_pool, cluster)}};
  }
  for (auto p : m.left_out) left.push_back(p);
  return {{"strategy", to_string(m.strategy)},
          {"iteration_time_s", m.iteration_time_s},
          {"pools", pools},
          {"cross_pool", cross},
          {"left_out", left}};
}

// "800 Gbit/s, 10 us".
std::string tier_text(const LinkTier& tier) {
  return fmt::format("{:.4g} Gbit/s, {:.4g} us", tier_gbps(tier), tier_latency_us(tier));
}

// One tier on both sides, marked when it changed.
std::string link_row(const std::string& name, const LinkTier& old_tier, const LinkTier& new_tier) {
  const bool same =
      old_tier.bandwidth_bytes_per_s == new_tier.bandwidth_bytes_per_s && old_tier.latency_s == new_tier.latency_s;
  return fmt::format("  {:<40} {:<26} {}{}\n", name, tier_text(old_tier), tier_text(new_tier),
                     same ? "" : "  (changed)");
}

std::string links_table(const MixedCluster& old_cluster, const MixedCluster& new_cluster, const ComparedConditions& c) {
  std::string out = fmt::format("{:<42} {:<26} {}\n", "links (achieved bus bandwidth, latency)", "old", "current");
  for (std::size_t i = 0; i < new_cluster.pools.size(); ++i) {
    const Cluster &o = old_cluster.pools[i], &n = new_cluster.pools[i];
    const std::string pool = fmt::format("pool {} ({} x {})", i, n.gpus(), n.gpu.key);
    out += link_row(pool + " intra-node", o.intra_node, n.intra_node);
    out += link_row(pool + " inter-node", o.inter_node, n.inter_node);
  }
  if (new_cluster.pools.size() > 1) out += link_row("inter-pool", old_cluster.inter_pool, new_cluster.inter_pool);
  out +=
      fmt::format("old conditions: profile {}; current: {}{}\n", c.old_profile,
                  c.current_profile.empty() ? "the catalog" : "profile " + c.current_profile,
                  c.link_flags.empty() ? "" : " with link flags " + json_fields::to_text(links_to_json(c.link_flags)));
  return out;
}

// Which sides have no plan that fits, as the verdict line; empty when both have one.
std::string no_fit_text(bool old_fits, bool new_fits) {
  if (old_fits && new_fits) return "";
  const char* sides = !old_fits && !new_fits ? "the old or the current" : !old_fits ? "the old" : "the current";
  return fmt::format("no plan fits under {} conditions: nothing to compare (a larger --max-memory-gib, more GPUs "
                     "or a smaller --gbs would give one)\n", sides);
}

std::string plan_line(const std::optional<RankedPlan>& p, const Workload& w) {
  if (!p) return "no plan fits\n";
  return fmt::format("{:.3f} s, {:.1f} GiB, {}\n", p->estimate.iteration_time_s, p->estimate.peak_memory_bytes / units::kGiB,
                     plan_to_shorthand(p->plan, w));
}

std::string verdict_text(bool changed, const KeepingCost& k, bool fits) {
  std::string out = changed ? "the recommendation changed\n" : "the recommendation did not change\n";
  if (!fits || !std::isfinite(k.old_plan_now_s))
    return out + "the old plan no longer fits under the current conditions\n";
  const double per_run_s = kComparisonReportSteps * k.per_step_s();
  return out + fmt::format(
                   "keeping the old plan: {:.3f} s per step now, {:+.3f} s ({:+.2f}%) per step, {:+.0f} s "
                   "({:+.2f} h) per {:.0f} steps\n",
                   k.old_plan_now_s, k.per_step_s(), 100.0 * k.fraction(), per_run_s,
                   per_run_s / units::kSecondsPerHour, kComparisonReportSteps);
}

std::string mixed_plan_text(const MixedPlan& m, const MixedCluster& cluster, const Workload& w) {
  std::string out = fmt::format("{:.3f} s, {}\n", m.iteration_time_s, to_string(m.strategy));
  if (m.strategy == MixedStrategy::cross_pool && m.cross_pool) {
    const Plan& base = m.cross_pool->base;
    out += fmt::format("    one pipeline: dp={} mb={} recompute={} zero={}\n", base.dp, base.micro_batch,
                       to_string(base.recompute), to_string(base.zero));
    for (const auto& s : m.cross_pool->segments)
      out += fmt::format("    pool {} ({}): tp {} x {} stages, {} layers, {}\n", s.pool, cluster.pools[s.pool].gpu.key,
                         s.tp, s.stages, s.layers, segment_precision_text(s));
  } else {
    for (const auto& a : m.pools)
      out += fmt::format("    pool {} ({}): {} sequences, {}, {:.3f} s\n", a.pool, cluster.pools[a.pool].gpu.key,
                         a.global_batch, plan_to_shorthand(a.plan.plan, {a.global_batch, w.seq_len}),
                         a.plan.estimate.iteration_time_s);
  }
  for (auto p : m.left_out) out += fmt::format("    pool {} ({}) left out\n", p, cluster.pools[p].gpu.key);
  return out;
}

std::string heading(const ModelSpec& model, const MixedCluster& cluster, const Workload& w) {
  std::string pools;
  for (const auto& p : cluster.pools)
    pools += (pools.empty() ? "" : " + ") + fmt::format("{} x {}", p.gpus(), p.gpu.key);
  return fmt::format("re-planning check: {} on {}, global batch {} x {} tokens\n", model.name, pools, w.global_batch,
                     w.seq_len);
}

}  // namespace

nlohmann::json plan_comparison_to_json(const PlanComparison& c, const ModelSpec& model, const Cluster& old_cluster,
                                       const Cluster& new_cluster, const Workload& w,
                                       const ComparedConditions& conditions) {
  nlohmann::json doc = {{"model", model.name},
                        {"workload", {{"global_batch", w.global_batch}, {"seq_len", w.seq_len}}},
                        {"cluster_kind", "single_pool"}};
  doc.update(conditions_json(conditions, one_pool(old_cluster), one_pool(new_cluster)));
  doc["old_best"] = single_plan_json(c.old_best, w);
  doc["new_best"] = single_plan_json(c.new_best, w);
  doc["recommendation_changed"] = c.changed;
  add_keeping(doc, c.keeping, c.old_plan_fits_now);
  if (!c.old_best || !c.new_best) doc["old_plan_now"] = doc["cost_of_keeping_old_plan"] = nullptr;
  return doc;
}

std::string plan_comparison_to_table(const PlanComparison& c, const ModelSpec& model, const Cluster& old_cluster,
                                     const Cluster& new_cluster, const Workload& w,
                                     const ComparedConditions& conditions) {
  std::string out = heading(model, one_pool(new_cluster), w);
  out += links_table(one_pool(old_cluster), one_pool(new_cluster), conditions);
  out += "old best (old conditions): " + plan_line(c.old_best, w);
  out += "new best (current):        " + plan_line(c.new_best, w);
  if (!c.old_best || !c.new_best) return out + no_fit_text(c.old_best.has_value(), c.new_best.has_value());
  return out + verdict_text(c.changed, c.keeping, c.old_plan_fits_now);
}

nlohmann::json mixed_plan_comparison_to_json(const MixedPlanComparison& c, const ModelSpec& model,
                                             const MixedCluster& old_cluster, const MixedCluster& new_cluster,
                                             const Workload& w, const ComparedConditions& conditions) {
  nlohmann::json doc = {{"model", model.name},
                        {"workload", {{"global_batch", w.global_batch}, {"seq_len", w.seq_len}}},
                        {"cluster_kind", "mixed"}};
  doc.update(conditions_json(conditions, old_cluster, new_cluster));
  doc["old_best"] = c.old_best.strategy == MixedStrategy::none ? nlohmann::json() : mixed_plan_json(c.old_best, old_cluster, w);
  doc["new_best"] = c.new_best.strategy == MixedStrategy::none ? nlohmann::json() : mixed_plan_json(c.new_best, new_cluster, w);
  doc["recommendation_changed"] = c.changed;
  add_keeping(doc, c.keeping, std::isfinite(c.keeping.old_plan_now_s));
  if (!c.both_fit()) doc["old_plan_now"] = doc["cost_of_keeping_old_plan"] = nullptr;
  return doc;
}

std::string mixed_plan_comparison_to_table(const MixedPlanComparison& c, const ModelSpec& model,
                                           const MixedCluster& old_cluster, const MixedCluster& new_cluster,
                                           const Workload& w, const ComparedConditions& conditions) {
  std::string out = heading(model, new_cluster, w);
  out += links_table(old_cluster, new_cluster, conditions);
  const bool old_fits = c.old_best.strategy != MixedStrategy::none, new_fits = c.new_best.strategy != MixedStrategy::none;
  out += "old best (old conditions): " + (old_fits ? mixed_plan_text(c.old_best, old_cluster, w) : "no plan fits\n");
  out += "new best (current):        " + (new_fits ? mixed_plan_text(c.new_best, new_cluster, w) : "no plan fits\n");
  if (!c.both_fit()) return out + no_fit_text(old_fits, new_fits);
  return out + verdict_text(c.changed, c.keeping, std::isfinite(c.keeping.old_plan_now_s));
}

}  // namespace tessera

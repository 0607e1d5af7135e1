#include "report/multimodal_report.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "core/units.h"
#include "formats/plan_text.h"
#include "report/megatron_args_json.h"
#include "search/plan_space.h"

namespace tessera {

namespace {

nlohmann::json module_plan_to_json(const ModulePlacement& m, const MultimodalPlan& p, const Workload& w) {
  if (m.role == ModuleRole::backbone) return plan_to_json(p.backbone_plan, w);
  return {{"tp", m.plan.tp}, {"dp", m.plan.dp}, {"recompute", to_string(m.plan.recompute)}};
}

const char* plan_strategy(const MultimodalPlan& p) {
  return p.disaggregated ? "disaggregated" : p.colocated ? "colocated" : "monolithic";
}

nlohmann::json plan_json(const MultimodalPlan& p, const MultimodalSpec& model, const Workload& w) {
  nlohmann::json modules = nlohmann::json::array();
  for (const auto& m : p.modules) {
    nlohmann::json module = {{"name", m.name},
                             {"role", to_string(m.role)},
                             {"gpus", m.gpus},
                             {"plan", module_plan_to_json(m, p, w)},
                             {"busy_s", m.busy_s}};
    if (p.colocated) module["own_layout"] = m.own_layout;
    modules.push_back(module);
  }
  nlohmann::json out = {{"strategy", plan_strategy(p)},
          {"plan", plan_to_json(p.backbone_plan, w)},
          {"iteration_time_s", p.iteration_time_s},
          {"mfu", p.mfu},
          {"tokens_per_s", p.tokens_per_s},
          {"samples_per_s", p.samples_per_s},
          {"peak_memory_gib", p.peak_memory_bytes / units::kGiB},
          {"fits", p.fits},
          {"gpus_used", p.gpus_used},
          {"gpus_idle", p.gpus_idle},
          {"modules", modules}};
  if (p.colocated) {
    out["module_phases_s"] = p.module_phases_s;
    out["boundary_s"] = p.boundary_s;
  }
  add_megatron_args(out, model.backbone().transformer, p.backbone_plan, w);
  return out;
}

std::string module_text(const ModulePlacement& m, const MultimodalPlan& p, const Workload& w) {
  if (m.role == ModuleRole::backbone) return plan_to_shorthand(p.backbone_plan, w);
  if (m.gpus == 0) return "idle (no work in this mix)";
  const std::string layout = fmt::format("tp={},dp={},recompute={}", m.plan.tp, m.plan.dp, to_string(m.plan.recompute));
  if (!p.colocated) return layout;
  return layout + (m.own_layout ? " (own layout, its own phases)" : " (the backbone's layout, in its stage)");
}

std::string strategy_name(const MultimodalSearch& s, MultimodalStrategy strategy) {
  switch (strategy) {
    case MultimodalStrategy::disaggregated: return "disaggregated";
    case MultimodalStrategy::monolithic: return "monolithic";
    case MultimodalStrategy::monolithic_subset: return "monolithic on " + std::to_string(s.subset_gpus) + " GPUs";
    case MultimodalStrategy::colocated: return "colocated";
    case MultimodalStrategy::none: break;
  }
  return "none";
}

// Two strategies that come to one plan (colocated with every module in the backbone's layout is
// the monolithic layout): the same step, backbone plan and module placements.
bool same_plan(const MultimodalPlan& a, const MultimodalPlan& b) {
  if (a.iteration_time_s != b.iteration_time_s || a.modules.size() != b.modules.size() ||
      !same_configuration(a.backbone_plan, b.backbone_plan))
    return false;
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    const ModulePlacement &x = a.modules[i], &y = b.modules[i];
    if (x.gpus != y.gpus || x.own_layout || y.own_layout || x.plan.tp != y.plan.tp || x.plan.dp != y.plan.dp ||
        x.plan.recompute != y.plan.recompute)
      return false;
  }
  return true;
}

// The strategies fastest first, each a different plan (issue 32: "monolithic by 0.0% over the
// runner-up, colocated" named one plan twice); `same` gets each dropped one and the one it equals.
std::vector<MultimodalStrategy> distinct_strategies(const MultimodalSearch& s,
                                                    std::vector<std::pair<MultimodalStrategy, MultimodalStrategy>>* same) {
  std::vector<MultimodalStrategy> out;
  for (MultimodalStrategy candidate : ranked_strategies(s)) {
    const auto kept = std::find_if(out.begin(), out.end(), [&](MultimodalStrategy k) {
      return same_plan(strategy_plan(s, k), strategy_plan(s, candidate));
    });
    if (kept == out.end()) out.push_back(candidate);
    else if (same != nullptr) same->emplace_back(candidate, *kept);
  }
  return out;
}

// The runner-up's step time over the winner's, less one (0 for a tie); absent with one plan.
double margin_over_runner_up(const MultimodalSearch& s, const std::vector<MultimodalStrategy>& ranked) {
  return strategy_plan(s, ranked[1]).iteration_time_s / strategy_plan(s, ranked[0]).iteration_time_s - 1.0;
}

}  // namespace

nlohmann::json multimodal_search_to_json(const MultimodalSearch& s, const MultimodalSpec& model, const DataMix& mix,
                                         const Cluster& cluster) {
  const Workload w{s.sequences, mix.sequence_tokens};
  nlohmann::json plans = nlohmann::json::array();
  for (const auto& p : s.plans) plans.push_back(plan_json(p, model, w));
  nlohmann::json out = {{"model", model.name},
                        {"data", mix.name},
                        {"cluster", {{"gpu", cluster.gpu.key}, {"gpus", cluster.gpus()}}},
                        {"global_batch", s.sequences},
                        {"sequence_tokens", mix.sequence_tokens},
                        {"samples_per_step", s.samples},
                        {"media_token_fraction", s.media_token_fraction},
                        {"evaluated", s.evaluated},
                        {"feasible", static_cast<std::int64_t>(s.plans.size())},
                        {"simulated", s.simulated},
                        {"search_time_s", s.search_time_s},
                        {"plans", plans},
                        {"backbone_only_mfu", s.backbone_only_mfu}};
  const MultimodalStrategy chosen = recommended_strategy(s);
  out["recommended"] = strategy_name(s, chosen);
  out["recommended_plan"] =
      chosen == MultimodalStrategy::none ? nlohmann::json(nullptr) : plan_json(strategy_plan(s, chosen), model, w);
  const std::vector<MultimodalStrategy> ranked = distinct_strategies(s, nullptr);
  out["runner_up"] = ranked.size() > 1 ? nlohmann::json(strategy_name(s, ranked[1])) : nlohmann::json(nullptr);
  out["margin_over_runner_up"] =
      ranked.size() > 1 ? nlohmann::json(margin_over_runner_up(s, ranked)) : nlohmann::json(nullptr);
  out["baseline_monolithic"] = s.monolithic_found ? plan_json(s.monolithic, model, w) : nlohmann::json(nullptr);
  out["colocated"] = s.colocated_found ? plan_json(s.colocated, model, w) : nlohmann::json(nullptr);
  if (s.monolithic_found && !s.plans.empty())
    out["speedup_over_monolithic"] = s.monolithic.iteration_time_s / s.plans.front().iteration_time_s;
  if (s.subset_gpus > 0) {
    nlohmann::json subset = {{"gpus", s.subset_gpus}, {"backbone_only_mfu", s.backbone_only_subset_mfu}};
    subset["baseline_monolithic"] =
        s.monolithic_subset_found ? plan_json(s.monolithic_subset, model, w) : nlohmann::json(nullptr);
    if (s.monolithic_subset_found && !s.plans.empty())
      subset["speedup_over_monolithic"] = s.monolithic_subset.iteration_time_s / s.plans.front().iteration_time_s;
    out["on_fewer_gpus"] = subset;
  }
  return out;
}

std::string multimodal_search_to_table(const MultimodalSearch& s, const MultimodalSpec& model, const DataMix& mix,
                                       const Cluster& cluster) {
  const Workload w{s.sequences, mix.sequence_tokens};
  std::string out = fmt::format(
      "model {} on {} x {}, data {}: {} sequences of {} tokens per step ({} samples, {:.0f}% media tokens)\n"
      "searched {} splits ({} simulated) in {:.3f} s\n\n",
      model.name, cluster.gpus(), cluster.gpu.key, mix.name, s.sequences, mix.sequence_tokens, s.samples,
      100.0 * s.media_token_fraction, s.evaluated, s.simulated, s.search_time_s);
  auto block = [&](const char* title, const MultimodalPlan& p) {
    out += fmt::format("{}: {:.3f} s/step  MFU {:.1f}%  {:.0f} samples/s  peak {:.1f} GiB{}  ({} GPUs used, {} idle)\n",
                       title, p.iteration_time_s, 100.0 * p.mfu, p.samples_per_s, p.peak_memory_bytes / units::kGiB,
                       p.fits ? "" : " (does not fit)", p.gpus_used, p.gpus_idle);
    for (const auto& m : p.modules)
      out += fmt::format("  {:<10} {:<20} {:>6} GPUs  {}\n", to_string(m.role), m.name, m.gpus, module_text(m, p, w));
  };
  // The recommended strategy first (its line, then its block), then the others in search order.
  const MultimodalStrategy chosen = recommended_strategy(s);
  out += "recommended: " + strategy_name(s, chosen) + "\n";
  std::vector<std::pair<MultimodalStrategy, MultimodalStrategy>> same;
  const std::vector<MultimodalStrategy> ranked = distinct_strategies(s, &same);
  if (ranked.size() > 1)
    out += fmt::format("winner {} by {:.1f}% over the runner-up, {} ({:.3f} vs {:.3f} s/step)\n",
                       strategy_name(s, ranked[0]), 100.0 * margin_over_runner_up(s, ranked),
                       strategy_name(s, ranked[1]), strategy_plan(s, ranked[0]).iteration_time_s,
                       strategy_plan(s, ranked[1]).iteration_time_s);
  else if (!same.empty())
    out += "one plan: every strategy found comes to it\n";
  for (const auto& [dropped, equal] : same)
    out += strategy_name(s, dropped) + " is the same plan as " + strategy_name(s, equal) + "\n";
  out += "\n";
  const std::string subset_title = fmt::format("monolithic on {} GPUs", s.subset_gpus);
  auto strategy_block = [&](MultimodalStrategy strategy) {
    switch (strategy) {
      case MultimodalStrategy::disaggregated:
        if (s.plans.empty()) out += "disaggregated: no plan fits\n";
        for (std::size_t i = 0; i < s.plans.size(); ++i)
          block(i == 0 ? "disaggregated (best)" : "disaggregated (runner-up)", s.plans[i]);
        break;
      case MultimodalStrategy::monolithic:
        if (s.monolithic_found) block("monolithic baseline (every GPU)", s.monolithic);
        else out += "monolithic baseline: no layout fits\n";
        break;
      case MultimodalStrategy::monolithic_subset:
        if (s.monolithic_subset_found) block(subset_title.c_str(), s.monolithic_subset);
        break;
      case MultimodalStrategy::colocated:
        if (s.colocated_found) {
          block("colocated (every GPU, per-module layouts)", s.colocated);
          out += fmt::format("  own-layout phases {:.3f} s, boundary reshapes {:.3f} s per step\n",
                             s.colocated.module_phases_s, s.colocated.boundary_s);
        } else {
          out += "colocated: no layout fits\n";
        }
        break;
      case MultimodalStrategy::none:
        break;
    }
  };
  if (chosen != MultimodalStrategy::none) {
    strategy_block(chosen);
    out += "\n";
  }
  for (MultimodalStrategy other : {MultimodalStrategy::disaggregated, MultimodalStrategy::monolithic,
                                   MultimodalStrategy::monolithic_subset, MultimodalStrategy::colocated})
    if (other != chosen) strategy_block(other);
  out += fmt::format("\nbackbone alone (text only) on every GPU: MFU {:.1f}%\n", 100.0 * s.backbone_only_mfu);
  if (s.subset_gpus > 0)
    out += fmt::format("backbone alone (text only) on {} GPUs: MFU {:.1f}% of the whole cluster\n", s.subset_gpus,
                       100.0 * s.backbone_only_subset_mfu);
  if (!s.plans.empty()) {
    const MultimodalPlan& d = s.plans.front();
    if (s.monolithic_found)
      out += fmt::format("disaggregated vs monolithic on every GPU: {:.2f}x the step rate; MFU {:.2f}x the backbone alone's\n",
                         s.monolithic.iteration_time_s / d.iteration_time_s,
                         s.backbone_only_mfu > 0 ? d.mfu / s.backbone_only_mfu : 0.0);
    if (s.monolithic_subset_found)
      out += fmt::format("disaggregated vs monolithic on {} GPUs: {:.2f}x the step rate; MFU {:.2f}x the backbone alone's there\n",
                         s.subset_gpus, s.monolithic_subset.iteration_time_s / d.iteration_time_s,
                         s.backbone_only_subset_mfu > 0 ? d.mfu / s.backbone_only_subset_mfu : 0.0);
  }
  if (s.colocated_found && s.monolithic_found)
    out += fmt::format("colocated vs monolithic on every GPU: {:.2f}x the step rate\n",
                       s.monolithic.iteration_time_s / s.colocated.iteration_time_s);
  return out;
}

}  // namespace tessera

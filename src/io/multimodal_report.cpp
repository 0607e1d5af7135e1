#include "io/multimodal_report.h"

#include <fmt/core.h>

#include "core/units.h"
#include "io/megatron_args.h"
#include "io/plan_text.h"

namespace tessera {

namespace {

nlohmann::json module_plan_to_json(const ModulePlacement& m, const MultimodalPlan& p, const Workload& w) {
  if (m.role == ModuleRole::backbone) return plan_to_json(p.backbone_plan, w);
  return {{"tp", m.plan.tp}, {"dp", m.plan.dp}, {"recompute", to_string(m.plan.recompute)}};
}

nlohmann::json plan_json(const MultimodalPlan& p, const MultimodalSpec& model, const Workload& w) {
  nlohmann::json modules = nlohmann::json::array();
  for (const auto& m : p.modules)
    modules.push_back({{"name", m.name},
                       {"role", to_string(m.role)},
                       {"gpus", m.gpus},
                       {"plan", module_plan_to_json(m, p, w)},
                       {"busy_s", m.busy_s}});
  return {{"strategy", p.disaggregated ? "disaggregated" : "monolithic"},
          {"plan", plan_to_json(p.backbone_plan, w)},
          {"iteration_time_s", p.iteration_time_s},
          {"mfu", p.mfu},
          {"tokens_per_s", p.tokens_per_s},
          {"samples_per_s", p.samples_per_s},
          {"peak_memory_gib", p.peak_memory_bytes / units::kGiB},
          {"fits", p.fits},
          {"gpus_used", p.gpus_used},
          {"gpus_idle", p.gpus_idle},
          {"modules", modules},
          {"megatron_args", megatron_args(model.backbone().transformer, p.backbone_plan, w)}};
}

std::string module_text(const ModulePlacement& m, const MultimodalPlan& p, const Workload& w) {
  if (m.role == ModuleRole::backbone) return plan_to_shorthand(p.backbone_plan, w);
  if (m.gpus == 0) return "idle (no work in this mix)";
  return fmt::format("tp={},dp={},recompute={}", m.plan.tp, m.plan.dp, to_string(m.plan.recompute));
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
  const bool disaggregated_wins =
      !s.plans.empty() && (!s.monolithic_found || s.plans.front().iteration_time_s < s.monolithic.iteration_time_s);
  out["recommended"] = disaggregated_wins ? "disaggregated" : (s.monolithic_found ? "monolithic" : "none");
  if (s.monolithic_found) {
    out["baseline_monolithic"] = plan_json(s.monolithic, model, w);
    if (!s.plans.empty())
      out["speedup_over_monolithic"] = s.monolithic.iteration_time_s / s.plans.front().iteration_time_s;
  } else {
    out["baseline_monolithic"] = nullptr;
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
  if (s.plans.empty()) out += "disaggregated: no plan fits\n";
  for (std::size_t i = 0; i < s.plans.size(); ++i)
    block(i == 0 ? "disaggregated (best)" : "disaggregated (runner-up)", s.plans[i]);
  out += "\n";
  if (s.monolithic_found) block("monolithic baseline", s.monolithic);
  else out += "monolithic baseline: no layout fits\n";
  out += fmt::format("\nbackbone alone (text only, same GPUs): MFU {:.1f}%\n", 100.0 * s.backbone_only_mfu);
  if (s.monolithic_found && !s.plans.empty()) {
    const double speedup = s.monolithic.iteration_time_s / s.plans.front().iteration_time_s;
    out += fmt::format("disaggregated runs a step {:.2f}x as fast as monolithic; its MFU is {:.2f}x the backbone alone's\n",
                       speedup, s.backbone_only_mfu > 0 ? s.plans.front().mfu / s.backbone_only_mfu : 0.0);
    out += speedup > 1.0 ? "recommended: disaggregated\n" : "recommended: monolithic (disaggregation does not pay here)\n";
  }
  return out;
}

}  // namespace tessera

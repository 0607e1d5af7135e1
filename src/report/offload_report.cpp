#include "report/offload_report.h"

#include <fmt/core.h>

#include "core/units.h"

namespace tessera {

namespace {
std::string placement_text(const StatePlacement& p) {
  if (!p.any_offload()) return "every tensor on the GPUs";
  std::string out;
  const std::pair<const char*, MemoryTier> tiers[] = {
      {"optimizer", p.optimizer}, {"parameters", p.params}, {"activations", p.activations}};
  for (const auto& [name, tier] : tiers) {
    if (tier == MemoryTier::gpu) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} to {}", name, to_string(tier));
  }
  return out;
}

// A step that fits says so; one that does not, its leanest plan. (A search that finds plans
// prunes by time, so how many it costed and its leanest costed plan depend on thread timing.)
std::string step_line(const OffloadStep& step) {
  if (step.feasible > 0) return fmt::format("  {}: plans fit\n", placement_text(step.placement));
  if (step.min_peak_memory_bytes == 0)
    return fmt::format("  {}: none fits, the offloaded state is larger than a node's host memory or NVMe\n",
                       placement_text(step.placement));
  return fmt::format("  {}: none fits, leanest plan {:.1f} GiB per GPU\n", placement_text(step.placement),
                     step.min_peak_memory_bytes / units::kGiB);
}
}  // namespace

std::string offload_steps_text(const OffloadSearch& s, double memory_limit_bytes) {
  if (!s.pinned && s.steps.size() < 2) return "";
  std::string out = s.pinned ? fmt::format("offload pinned (--fix):\n")
                             : fmt::format("offload: no plan fits in {:.1f} GiB per GPU with every tensor on the GPUs; "
                                           "moving state off the GPU, one tier at a time:\n",
                                           memory_limit_bytes / units::kGiB);
  for (const auto& step : s.steps) out += step_line(step);
  return out + "\n";
}

nlohmann::json offload_steps_to_json(const OffloadSearch& s) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& step : s.steps)
    out.push_back({{"optimizer", to_string(step.placement.optimizer)},
                   {"params", to_string(step.placement.params)},
                   {"activations", to_string(step.placement.activations)},
                   {"min_peak_gib", step.feasible > 0 || step.min_peak_memory_bytes == 0 ? nlohmann::json(nullptr)
                                                      : nlohmann::json(step.min_peak_memory_bytes / units::kGiB)},
                   {"fits", step.feasible > 0},
                   {"pinned", s.pinned}});
  return out;
}

}  // namespace tessera

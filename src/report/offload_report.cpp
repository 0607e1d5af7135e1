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

std::string step_line(const OffloadStep& step) {
  const std::string leanest = fmt::format("leanest plan {:.1f} GiB per GPU", step.min_peak_memory_bytes / units::kGiB);
  return fmt::format("  {}: {}: {}\n", placement_text(step.placement), leanest, step.feasible > 0 ? "fits" : "none fits");
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
                   {"min_peak_gib", step.min_peak_memory_bytes / units::kGiB},
                   {"fits", step.feasible > 0},
                   {"pinned", s.pinned}});
  return out;
}

}  // namespace tessera

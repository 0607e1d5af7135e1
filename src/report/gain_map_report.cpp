#include "report/gain_map_report.h"

#include <algorithm>

#include <fmt/core.h>

#include "core/units.h"
#include "report/adapt_report.h"

namespace tessera {

namespace {

enum class Verdict { pays, negligible, no_fit };

Verdict verdict_of(const GainMapCell& c) {
  if (!c.fits) return Verdict::no_fit;
  return c.gain.worthwhile() ? Verdict::pays : Verdict::negligible;
}

template <typename T, typename Key>
std::vector<T> distinct(const std::vector<GainMapCell>& cells, Key key) {
  std::vector<T> out;
  for (const GainMapCell& c : cells)
    if (std::find(out.begin(), out.end(), key(c)) == out.end()) out.push_back(key(c));
  return out;
}

// "llama3-70b at 4096 and 8192 GPUs; llama3.1-405b at 8192 GPUs" for the cells with this verdict.
std::string cells_text(const std::vector<GainMapCell>& cells, Verdict verdict) {
  std::string text;
  for (const std::string& model : distinct<std::string>(cells, [](const GainMapCell& c) { return c.model; })) {
    std::string counts;
    for (const GainMapCell& c : cells)
      if (c.model == model && verdict_of(c) == verdict) counts += (counts.empty() ? "" : ", ") + std::to_string(c.gpus);
    if (!counts.empty()) text += fmt::format("{}{} at {} GPUs", text.empty() ? "" : "; ", model, counts);
  }
  return text;
}

std::string cell_text(const GainMapCell& c) {
  if (!c.fits) return "no fit";
  return fmt::format("{:+.1f}% ({:+.1f}/{:+.1f})", 100.0 * c.gain.total_fraction(),
                     100.0 * c.gain.from_batch_fraction(), 100.0 * c.gain.from_plan_fraction());
}

}  // namespace

std::string gain_map_conclusion(const std::vector<GainMapCell>& cells) {
  const std::string pays = cells_text(cells, Verdict::pays);
  const std::string negligible = cells_text(cells, Verdict::negligible);
  const std::string no_fit = cells_text(cells, Verdict::no_fit);
  const double threshold_pct = 100.0 * kWorthwhileGainFraction;
  std::string text = fmt::format("co-adapting pays (>= {:.0f}% faster than fixed) {}", threshold_pct,
                                 pays.empty() ? std::string("nowhere here") : "for " + pays);
  if (!negligible.empty()) text += fmt::format("; it is negligible (< {:.0f}%) for {}", threshold_pct, negligible);
  if (!no_fit.empty()) text += "; no plan fits for " + no_fit;
  return text;
}

nlohmann::json gain_map_to_json(const std::vector<GainMapCell>& cells, const std::string& gpu) {
  nlohmann::json rows = nlohmann::json::array();
  for (const GainMapCell& c : cells)
    rows.push_back({{"model", c.model},
                    {"parameters", c.parameters},
                    {"gpus", c.gpus},
                    {"scenario", c.scenario},
                    {"fits", c.fits},
                    {"gain", c.fits ? gain_to_json(c.gain) : nlohmann::json(nullptr)},
                    {"batch_changes", c.batch_changes},
                    {"plan_changes", c.plan_changes},
                    {"negligible", verdict_of(c) == Verdict::negligible},
                    {"plans_evaluated", c.plans_evaluated},
                    {"simulation_s", c.simulation_s}});
  return {{"gpu", gpu}, {"cells", rows}, {"conclusion", gain_map_conclusion(cells)}};
}

std::string gain_map_to_table(const std::vector<GainMapCell>& cells, const std::string& gpu) {
  constexpr int kCellWidth = 22;
  const auto models = distinct<std::string>(cells, [](const GainMapCell& c) { return c.model; });
  const auto counts = distinct<std::int64_t>(cells, [](const GainMapCell& c) { return c.gpus; });
  std::string out = fmt::format(
      "co-adapting batch and plan vs the best fixed configuration on {}: time saved to the "
      "target, % of fixed's (points from the batch / from the plan)\n\n",
      gpu);
  out += fmt::format("{:<16} {:>8}", "model", "params");
  for (std::int64_t n : counts) out += fmt::format(" {:>{}}", fmt::format("{} GPUs", n), kCellWidth);
  out += "\n";
  double total_s = 0;
  std::int64_t evaluated = 0;
  for (const std::string& model : models) {
    const auto first = std::find_if(cells.begin(), cells.end(), [&](const GainMapCell& c) { return c.model == model; });
    out += fmt::format("{:<16} {:>7.0f}B", model, first->parameters / units::kGiga);
    for (std::int64_t n : counts) {
      const auto cell = std::find_if(cells.begin(), cells.end(),
                                     [&](const GainMapCell& c) { return c.model == model && c.gpus == n; });
      out += fmt::format(" {:>{}}", cell == cells.end() ? std::string("") : cell_text(*cell), kCellWidth);
      if (cell == cells.end()) continue;
      total_s += cell->simulation_s;
      evaluated += cell->plans_evaluated;
    }
    out += "\n";
  }
  std::string scenarios;
  for (const std::string& name : distinct<std::string>(cells, [](const GainMapCell& c) { return c.scenario; }))
    scenarios += (scenarios.empty() ? "" : ", ") + name;
  // Cells run in parallel: their times add up to more than the command's.
  out += fmt::format("\nscenarios: {} ({} cells, {} plans costed, {:.1f} s of simulation in all)\n", scenarios,
                     cells.size(), evaluated, total_s);
  out += "conclusion " + gain_map_conclusion(cells) + "\n";
  return out;
}

}  // namespace tessera

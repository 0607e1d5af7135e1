#include "report/adapt_report.h"

#include <cmath>

#include <fmt/core.h>

#include "adapt/batch_schedule.h"
#include "adapt/gain_accounting.h"
#include "core/units.h"
#include "formats/plan_text.h"
#include "formats/scenario_file.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {

constexpr double kSecondsPerDay = 86400.0;

// "tp=1,pp=1,dp=32,mb=2,zero3" style: the fields that tell plans apart.
std::string compact_plan(const Plan& p) {
  std::string s = fmt::format("tp={},pp={},dp={}", p.tp, p.pp, p.dp);
  if (p.cp > 1) s += fmt::format(",cp={}", p.cp);
  if (p.ep > 1) s += fmt::format(",ep={}", p.ep);
  if (p.vpp > 1) s += fmt::format(",vpp={}", p.vpp);
  s += fmt::format(",mb={}", p.micro_batch);
  if (p.recompute != Recompute::none) {
    s += fmt::format(",recompute={}", to_string(p.recompute));
    if (p.recompute_layers > 0) s += fmt::format(":{}", p.recompute_layers);
  }
  if (p.zero != OptimizerSharding::none) s += fmt::format(",{}", to_string(p.zero));
  return s;
}

std::string duration(double seconds) {
  if (seconds >= kSecondsPerDay) return fmt::format("{:.0f} s ({:.1f} d)", seconds, seconds / kSecondsPerDay);
  return fmt::format("{:.0f} s ({:.1f} h)", seconds, seconds / units::kSecondsPerHour);
}

nlohmann::json policy_to_json(const PolicyRun& run, const RunSimulation& sim) {
  const CandidateSet& set = sim.world.candidates;
  nlohmann::json segments = nlohmann::json::array();
  for (const RunSegment& s : run.segments) {
    const Candidate& c = set.candidates[s.candidate];
    segments.push_back({{"start_tokens", s.start_tokens},
                        {"global_batch", c.global_batch},
                        {"plan", plan_to_shorthand(set.plan(c), set.workload(c))},
                        {"predicted_step_time_s", c.predicted_step_time_s},
                        {"real_step_time_s", sim.world.true_step_time_s[s.candidate]}});
  }
  const double optimum = sim.offline_optimum.time_to_target_s;
  return {{"time_to_target_s", run.time_to_target_s},
          {"vs_offline_optimum_pct", 100.0 * (run.time_to_target_s / optimum - 1.0)},
          {"schedule", megatron_batch_schedule(batch_schedule(run, set))},
          {"consumed_tokens", run.consumed_tokens},
          {"steps", std::round(run.steps)},
          {"batch_changes", run.batch_changes},
          {"plan_changes", run.plan_changes},
          {"reconfiguration_s", run.reconfiguration_s},
          {"windows", run.windows},
          {"long_windows", run.long_windows},
          {"segments", segments}};
}

// Plan changes listed in the conclusion before "and N more".
constexpr std::size_t kListedPlanChanges = 3;

std::string tokens_text(double tokens) {
  if (tokens >= 1e12) return fmt::format("{:.3g}T", tokens / 1e12);
  if (tokens >= 1e9) return fmt::format("{:.3g}B", tokens / 1e9);
  return fmt::format("{:.3g}M", tokens / 1e6);
}

}  // namespace

nlohmann::json gain_to_json(const GainAccounting& g) {
  return {{"total_s", g.total_s},
          {"total_pct", 100.0 * g.total_fraction()},
          {"from_batch_s", g.from_batch_s},
          {"from_batch_pct", 100.0 * g.from_batch_fraction()},
          {"from_plan_s", g.from_plan_s},
          {"from_plan_pct", 100.0 * g.from_plan_fraction()},
          {"offline_optimum_s", g.optimum_s},
          {"offline_optimum_pct", 100.0 * g.optimum_fraction()},
          {"worthwhile", g.worthwhile()}};
}

std::string run_conclusion(const RunSimulation& sim) {
  const GainAccounting g = gain_accounting(sim);
  const CandidateSet& set = sim.world.candidates;
  const double hours = 1.0 / units::kSecondsPerHour;
  if (!g.worthwhile())
    return fmt::format("co-adapting gains nothing worth a restart here: {:+.2f}% vs fixed (below {:.0f}%; the "
                       "offline optimum, which bounds every policy, gains {:.2f}%)",
                       100.0 * g.total_fraction(), 100.0 * kWorthwhileGainFraction, 100.0 * g.optimum_fraction());
  std::string text = fmt::format("co-adapting saves {:.1f} h of {:.1f} h ({:.1f}%: {:.1f} points from the batch, "
                                 "{:.1f} from the plan)",
                                 g.total_s * hours, g.fixed_s * hours, 100.0 * g.total_fraction(),
                                 100.0 * g.from_batch_fraction(), 100.0 * g.from_plan_fraction());
  const PolicyRun& run = sim.of(Policy::coadaptive);
  const std::vector<RunChange> changes = run_changes(run);
  std::string batches, plans;
  std::size_t plan_count = 0;
  for (const RunChange& c : changes) {
    const Candidate& from = set.candidates[c.from];
    const Candidate& to = set.candidates[c.to];
    if (from.global_batch != to.global_batch)
      batches += fmt::format("{}{} at {}", batches.empty() ? "" : ", ", to.global_batch, tokens_text(c.consumed_tokens));
    if (from.plan_index != to.plan_index && ++plan_count <= kListedPlanChanges)
      plans += fmt::format("{}at {} from {} to {}", plans.empty() ? "" : "; ", tokens_text(c.consumed_tokens),
                           compact_plan(set.plan(from)), compact_plan(set.plan(to)));
  }
  const std::int64_t first = set.candidates[run.segments.front().candidate].global_batch;
  if (!batches.empty())
    text += fmt::format("; the batch goes from {} sequences to {} (consumed tokens)", first, batches);
  if (!plans.empty()) text += "; the plan changes " + plans;
  if (plan_count > kListedPlanChanges) text += fmt::format(" and {} more times", plan_count - kListedPlanChanges);
  return text;
}

nlohmann::json run_simulation_to_json(const RunSimulation& sim, const ModelSpec& model, const Cluster& cluster) {
  const CandidateSet& set = sim.world.candidates;
  nlohmann::json policies = nlohmann::json::object();
  for (Policy p : kPolicies) policies[to_string(p)] = policy_to_json(sim.of(p), sim);
  const Candidate& hindsight = set.candidates[sim.hindsight_static_candidate];
  return {{"model", model.name},
          {"cluster", {{"gpu", cluster.gpu.key}, {"gpus", cluster.gpus()}}},
          {"scenario", scenario_to_json(sim.world.scenario)},
          {"candidates",
           {{"batches", set.batches},
            {"plans", set.plans.size()},
            {"configurations", set.candidates.size()},
            {"plans_evaluated", set.plans_evaluated},
            {"search_time_s", set.search_time_s}}},
          {"reconfiguration",
           {{"batch_change_s", sim.world.cost.batch_change_s},
            {"plan_change_s", sim.world.cost.plan_change_s},
            {"checkpoint_bytes", sim.world.cost.checkpoint_bytes}}},
          {"policies", policies},
          {"gain_over_fixed", gain_to_json(gain_accounting(sim))},
          {"conclusion", run_conclusion(sim)},
          {"offline_optimum", policy_to_json(sim.offline_optimum, sim)},
          {"best_static_in_hindsight",
           {{"time_to_target_s", sim.hindsight_static_time_s},
            {"global_batch", hindsight.global_batch},
            {"plan", plan_to_shorthand(set.plan(hindsight), set.workload(hindsight))}}}};
}

std::string run_simulation_to_table(const RunSimulation& sim, const ModelSpec& model, const Cluster& cluster) {
  const CandidateSet& set = sim.world.candidates;
  const NoiseScaleScenario& s = sim.world.scenario;
  std::string out;
  out += fmt::format("model      {} ({:.1f}B params) on {} x {}\n", model.name,
                     count_parameters(model).total() / units::kGiga, cluster.gpus(), cluster.gpu.key);
  out += fmt::format("scenario   {}: {}\n", s.name, s.description);
  out += fmt::format("           budget {:.3g} tokens at reference batch {} x {} tokens; batches {} to {} ({} on the "
                     "grid, {} configurations of {} plans)\n",
                     s.token_budget, s.reference_batch, s.seq_len, set.batches.front(), set.batches.back(),
                     set.batches.size(), set.candidates.size(), set.plans.size());
  out += fmt::format("restart    {:.0f} s per plan change ({:.0f} GB checkpoint saved and loaded, + {:.0f} s); "
                     "batch-only change {:.0f} s\n",
                     sim.world.cost.plan_change_s, sim.world.cost.checkpoint_bytes / units::kGB, kRestartTimeS,
                     sim.world.cost.batch_change_s);
  std::int64_t long_windows = 0;
  for (Policy p : kPolicies) long_windows += sim.of(p).long_windows;
  if (long_windows > 0)
    out += fmt::format("decisions  every {} steps, or longer in {} windows (at most {} candidate evaluations per "
                       "policy)\n",
                       kDecisionIntervalSteps, long_windows, kMaxPolicyEvaluations);
  out += "\n";
  const double optimum = sim.offline_optimum.time_to_target_s;
  const double fixed = sim.of(Policy::fixed).time_to_target_s;
  out += fmt::format("{:<16} {:>22} {:>11} {:>10} {:>8}  {}\n", "policy", "time to target", "vs optimum", "vs fixed",
                     "changes", "last configuration");
  auto row = [&](const char* name, const PolicyRun& run) {
    const Candidate& last = set.candidates[run.segments.back().candidate];
    out += fmt::format("{:<16} {:>22} {:>+10.2f}% {:>+9.2f}% {:>4}/{:<3}  {} x {}\n", name,
                       duration(run.time_to_target_s), 100.0 * (run.time_to_target_s / optimum - 1.0),
                       100.0 * (run.time_to_target_s / fixed - 1.0), run.batch_changes, run.plan_changes,
                       last.global_batch, compact_plan(set.plan(last)));
  };
  for (Policy p : kPolicies) row(to_string(p), sim.of(p));
  row("offline optimum", sim.offline_optimum);
  out += "(changes: batch / plan, as in the schedules below; vs fixed < 0 is faster)\n\n";
  const GainAccounting g = gain_accounting(sim);
  out += fmt::format("gain       coadaptive vs fixed {:.2f}% = {:.2f} points from the batch (batch-only) + {:.2f} "
                     "from the plan; the offline optimum gains {:.2f}%\n",
                     100.0 * g.total_fraction(), 100.0 * g.from_batch_fraction(), 100.0 * g.from_plan_fraction(),
                     100.0 * g.optimum_fraction());
  out += "conclusion " + run_conclusion(sim) + "\n\n";
  out += "global batch schedules (Megatron-LM --step-batch-size-schedule, thresholds in consumed tokens):\n";
  for (Policy p : kPolicies)
    out += fmt::format("  {:<16} {}\n", to_string(p), megatron_batch_schedule(batch_schedule(sim.of(p), set)));
  out += fmt::format("  {:<16} {}\n", "offline optimum",
                     megatron_batch_schedule(batch_schedule(sim.offline_optimum, set)));
  out += "plan changes (restarts; consumed tokens: new plan):\n";
  auto plan_changes = [&](const char* name, const PolicyRun& run) {
    std::string line;
    for (const RunChange& c : run_changes(run))
      if (set.candidates[c.from].plan_index != set.candidates[c.to].plan_index)
        line += fmt::format("{}{}: {}", line.empty() ? "" : ", ", tokens_text(c.consumed_tokens),
                            compact_plan(set.plan(set.candidates[c.to])));
    out += fmt::format("  {:<16} {}\n", name, line.empty() ? "none" : line);
  };
  for (Policy p : kPolicies) plan_changes(to_string(p), sim.of(p));
  plan_changes("offline optimum", sim.offline_optimum);
  return out;
}

}  // namespace tessera

#include "io/adapt_report.h"

#include <cmath>

#include <fmt/core.h>

#include "adapt/batch_schedule.h"
#include "core/units.h"
#include "io/plan_text.h"
#include "io/scenario_file.h"
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
  return fmt::format("{:.0f} s ({:.1f} h)", seconds, seconds / 3600.0);
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

}  // namespace

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
  out += "(changes: batch-only / plan; vs fixed < 0 is faster)\n\n";
  out += "global batch schedules (Megatron-LM --step-batch-size-schedule, thresholds in consumed tokens):\n";
  for (Policy p : kPolicies)
    out += fmt::format("  {:<16} {}\n", to_string(p), megatron_batch_schedule(batch_schedule(sim.of(p), set)));
  out += fmt::format("  {:<16} {}\n", "offline optimum",
                     megatron_batch_schedule(batch_schedule(sim.offline_optimum, set)));
  return out;
}

}  // namespace tessera

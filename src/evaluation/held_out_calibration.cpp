#include "evaluation/held_out_calibration.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "core/error.h"
#include "core/parallel_tasks.h"
#include "core/percentile.h"
#include "core/seeded_random.h"
#include "core/work_budget.h"
#include "evaluation/calibration_runs.h"

namespace tessera {

namespace {

// Spearman over groups of equal (model, GPUs, batch) with >= 3 rows, of `predicted` against the
// rows' measured time.
struct RankAgreement {
  double mean = 0;
  std::size_t groups = 0;
};
constexpr std::size_t kMinRankGroup = 3;
RankAgreement rank_agreement(const std::vector<const ValidationResult*>& rows, const std::vector<double>& predicted) {
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::pair<std::vector<double>, std::vector<double>>> groups;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto& g = groups[{rows[i]->model_name, rows[i]->n_gpus, rows[i]->global_batch}];
    g.first.push_back(predicted[i]);
    g.second.push_back(rows[i]->measured_time_s);
  }
  RankAgreement out;
  double sum = 0;
  for (const auto& [key, g] : groups) {
    if (g.first.size() < kMinRankGroup) continue;
    sum += spearman(g.first, g.second);
    ++out.groups;
  }
  out.mean = out.groups ? sum / static_cast<double>(out.groups) : 0.0;
  return out;
}

// The error of a prediction of `row` whose iteration time is `predicted_time_s`, in the row's own
// metric as validate reports it: a time metric errs by predicted / measured - 1, a rate metric
// (TFLOP/s, MFU, tokens/s, all proportional to 1 / time) by measured / predicted time - 1.
double metric_error_pct(const ValidationResult& row, double predicted_time_s) {
  const double ratio = row.metric == "iter_time_s" ? predicted_time_s / row.measured_time_s
                                                   : row.measured_time_s / predicted_time_s;
  return 100.0 * (ratio - 1.0);
}

// One draw with the absolute errors of its predicted rows, before and after.
struct DrawResult {
  HeldOutDraw draw;
  std::vector<double> before_err, after_err;
};

DrawResult run_draw(const std::string& group, const std::vector<const ValidationResult*>& members,
                    std::uint64_t seed, const HeldOutOptions& options, std::atomic<std::int64_t>* budget) {
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), 0);
  SeededRandom random(seed);
  random.shuffle(std::span<std::size_t>(order));
  HeldOutDraw draw;
  draw.group = group;
  draw.seed = seed;
  CalibrationData data;
  for (std::size_t i = 0; i < options.rows_per_draw; ++i) {
    data.runs.push_back(run_measurement(*members[order[i]], ""));
    draw.fitted_on.push_back(members[order[i]]->id);
  }
  CalibrationOptions calibration = options.calibration;
  calibration.work_budget = budget;
  const CalibrationProfile profile = calibrate(data, calibration);
  draw.parameters = profile.parameters;
  std::vector<const ValidationResult*> rest;
  std::vector<double> before_t, after_t, before_err, after_err;
  draw.work = profile.work;
  for (std::size_t i = options.rows_per_draw; i < order.size(); ++i) {
    const ValidationResult& row = *members[order[i]];
    const RunMeasurement run = run_measurement(row, "");
    take_work(budget, prediction_work(run), kCalibrationWorkField);  // the draws' shared budget
    draw.work += prediction_work(run);
    const double after = predict_iteration_time_s(run, calibrated_gpu(run.gpu, profile));
    rest.push_back(&row);
    before_t.push_back(row.predicted_time_s);
    after_t.push_back(after);
    before_err.push_back(std::abs(row.error_pct));
    after_err.push_back(std::abs(metric_error_pct(row, after)));
  }
  draw.predicted = rest.size();
  draw.median_abs_error_before_pct = median(before_err);
  draw.median_abs_error_after_pct = median(after_err);
  const RankAgreement rb = rank_agreement(rest, before_t), ra = rank_agreement(rest, after_t);
  draw.mean_spearman_before = rb.mean;
  draw.mean_spearman_after = ra.mean;
  draw.spearman_groups = ra.groups;
  return {std::move(draw), std::move(before_err), std::move(after_err)};
}

struct DrawTask {
  const std::string* group = nullptr;
  const std::vector<const ValidationResult*>* members = nullptr;
  std::uint64_t seed = 0;
};

Error over_budget(const HeldOutOptions& options, std::size_t tasks) {
  return Error(kHeldOutBudgetField,
               std::to_string(tasks) + " draws cost more than " + std::to_string(options.work_budget) +
                   " simulated pipeline operations, the most one check may cost (to answer within 10 s on 2 cores)",
               "fewer --draws, fewer --fit-rows, or a file of fewer groups");
}

// Runs the draws in parallel (each on its own seed: the same results in any order). With a
// budget, the draws' fits and predictions share it, and the first to overdraw it stops them all.
std::vector<DrawResult> run_draws(const std::vector<DrawTask>& tasks, const HeldOutOptions& options) {
  std::vector<DrawResult> results(tasks.size());
  std::atomic<std::int64_t> left{options.work_budget};
  std::atomic<std::int64_t>* budget = options.work_budget > 0 ? &left : nullptr;
  try {
    run_parallel_tasks(tasks.size(), options.threads, [&](std::size_t i) {
      results[i] = run_draw(*tasks[i].group, *tasks[i].members, tasks[i].seed, options, budget);
    });
  } catch (...) {
    // Overdrawn: the draws together need more than the budget, whichever draw noticed it first.
    if (budget != nullptr && left.load() < 0) throw over_budget(options, tasks.size());
    throw;
  }
  return results;
}

}  // namespace

HeldOutCalibration held_out_calibration(const std::vector<ValidationResult>& rows,
                                        const std::function<std::string(const ValidationResult&)>& group_of,
                                        const HeldOutOptions& options) {
  std::map<std::string, std::vector<const ValidationResult*>> groups;
  for (const auto& row : rows) groups[group_of(row)].push_back(&row);
  std::vector<DrawTask> tasks;
  for (const auto& [group, members] : groups) {
    if (members.size() <= options.rows_per_draw) continue;
    for (std::size_t d = 0; d < options.draws; ++d) tasks.push_back({&group, &members, options.seed + d});
  }
  HeldOutCalibration out;
  std::vector<double> before_all, after_all;
  double spearman_before = 0, spearman_after = 0;
  std::size_t spearman_draws = 0;
  for (DrawResult& r : run_draws(tasks, options)) {
    before_all.insert(before_all.end(), r.before_err.begin(), r.before_err.end());
    after_all.insert(after_all.end(), r.after_err.begin(), r.after_err.end());
    if (r.draw.spearman_groups > 0) {
      spearman_before += r.draw.mean_spearman_before;
      spearman_after += r.draw.mean_spearman_after;
      ++spearman_draws;
    }
    out.work += r.draw.work;
    out.draws.push_back(std::move(r.draw));
  }
  out.median_abs_error_before_pct = median(before_all);
  out.median_abs_error_after_pct = median(after_all);
  if (spearman_draws) {
    out.mean_spearman_before = spearman_before / static_cast<double>(spearman_draws);
    out.mean_spearman_after = spearman_after / static_cast<double>(spearman_draws);
  }
  return out;
}

}  // namespace tessera

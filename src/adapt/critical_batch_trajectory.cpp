#include "adapt/critical_batch_trajectory.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace tessera {

namespace {

// DeepSeek LLM (arXiv 2401.02954), section 3.1, eq. 1: B_opt = 0.2920 * C^0.3271 tokens. Their C
// counts non-embedding FLOPs per token (M) times tokens; we take M = 6N (attention FLOPs left out,
// a few percent at 4K context for these model sizes).
constexpr double kDeepSeekBatchCoefficient = 0.2920;
constexpr double kDeepSeekBatchExponent = 0.3271;
constexpr double kFlopsPerParamPerToken = 6.0;
// Llama 3 (arXiv 2407.21783), section 3.4.1: 4M-token batches, doubled to 8M after 252M tokens and to
// 16M after 2.87T tokens of 15.6T (section 3.1). 2^22 etc.: their "4M" is 1,024 sequences of 4,096.
constexpr double kLlama3RunTokens = 15.6e12;
constexpr double kLlama3FirstDoublingTokens = 252e6;
constexpr double kLlama3SecondDoublingTokens = 2.87e12;
constexpr double kLlama3StartBatchTokens = 4194304.0;
// A step is drawn as a rise over this fraction of the position it happens at (log-linear between
// points), steep enough to act as a step, wide enough to keep tokens strictly increasing.
constexpr double kStepWidthFraction = 1e-3;
// kaplan and deepseek: tabulated at this many points, log-spaced from this fraction of the budget.
constexpr int kLogPoints = 64;
constexpr double kLogStartFraction = 1e-6;
// merrill: the linear rise is tabulated at this many points.
constexpr int kRisePoints = 32;

constexpr Trajectory kAll[] = {Trajectory::kaplan, Trajectory::deepseek, Trajectory::llama3, Trajectory::merrill};

std::vector<NoiseScalePoint> log_spaced(double budget, auto&& noise_scale_tokens) {
  const double start = budget * kLogStartFraction;
  std::vector<NoiseScalePoint> points{{0.0, noise_scale_tokens(start)}};
  for (int i = 0; i < kLogPoints; ++i) {
    const double tokens = start * std::pow(budget / start, static_cast<double>(i) / (kLogPoints - 1));
    points.push_back({tokens, noise_scale_tokens(tokens)});
  }
  return points;
}

std::vector<NoiseScalePoint> llama3_points(double run_tokens, double budget) {
  std::vector<NoiseScalePoint> points{{0.0, kLlama3StartBatchTokens}};
  double batch = kLlama3StartBatchTokens;
  for (double at : {kLlama3FirstDoublingTokens, kLlama3SecondDoublingTokens}) {
    const double tokens = run_tokens * at / kLlama3RunTokens;
    if (tokens >= budget) break;
    points.push_back({tokens, batch});
    batch *= 2.0;
    points.push_back({tokens * (1.0 + kStepWidthFraction), batch});
  }
  return points;
}

std::vector<NoiseScalePoint> merrill_points(double non_embedding_params, double run_tokens, double budget) {
  const double plateau = deepseek_optimal_batch_tokens(kFlopsPerParamPerToken * non_embedding_params * run_tokens);
  const double start = kMerrillStartFraction * plateau;
  const double knee = kMerrillKneeFraction * run_tokens;
  std::vector<NoiseScalePoint> points{{0.0, start}};
  for (int i = 1; i <= kRisePoints; ++i) {
    const double f = static_cast<double>(i) / kRisePoints;
    if (knee * f > budget) break;
    points.push_back({knee * f, start + f * (plateau - start)});
  }
  return points;
}

}  // namespace

std::vector<std::string> trajectory_names() {
  std::vector<std::string> names;
  for (Trajectory t : kAll) names.emplace_back(to_string(t));
  return names;
}

const char* to_string(Trajectory trajectory) {
  switch (trajectory) {
    case Trajectory::kaplan: return "kaplan";
    case Trajectory::deepseek: return "deepseek";
    case Trajectory::llama3: return "llama3";
    case Trajectory::merrill: return "merrill";
  }
  return "?";
}

Trajectory parse_trajectory(const std::string& name) {
  for (Trajectory t : kAll)
    if (name == to_string(t)) return t;
  throw Error("--trajectory", "got '" + name + "'", "kaplan, deepseek, llama3 or merrill");
}

std::string trajectory_source(Trajectory trajectory) {
  switch (trajectory) {
    case Trajectory::kaplan: return "Kaplan et al. 2020's critical batch B_crit(L(N, D))";
    case Trajectory::deepseek: return "DeepSeek LLM 2024's optimal batch 0.292 C^0.3271 at the compute spent so far";
    case Trajectory::llama3: return "Llama 3 405B's batch schedule (4M, 8M, 16M tokens) at the same fractions of the run";
    case Trajectory::merrill:
      return "Merrill et al. 2025's shape (near 0, rising, then a plateau): linear to DeepSeek's B_opt over the "
             "first 20% of the run, then flat";
  }
  return "?";
}

double deepseek_optimal_batch_tokens(double compute_flops) {
  return kDeepSeekBatchCoefficient * std::pow(compute_flops, kDeepSeekBatchExponent);
}

std::vector<NoiseScalePoint> trajectory_points(Trajectory trajectory, double non_embedding_params, double run_tokens,
                                               double budget_tokens) {
  switch (trajectory) {
    case Trajectory::kaplan:
      return log_spaced(budget_tokens,
                        [&](double t) { return kaplan_critical_batch_tokens(non_embedding_params, t); });
    case Trajectory::deepseek:
      return log_spaced(budget_tokens, [&](double t) {
        return deepseek_optimal_batch_tokens(kFlopsPerParamPerToken * non_embedding_params * t);
      });
    case Trajectory::llama3: return llama3_points(run_tokens, budget_tokens);
    case Trajectory::merrill: return merrill_points(non_embedding_params, run_tokens, budget_tokens);
  }
  return {};
}

}  // namespace tessera

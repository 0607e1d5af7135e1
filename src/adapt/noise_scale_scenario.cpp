#include "adapt/noise_scale_scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "adapt/batch_grid.h"
#include "adapt/critical_batch_trajectory.h"
#include "core/checks.h"
#include "core/error.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {

// Kaplan et al. 2020 (arXiv 2001.08361). Loss after D tokens for N non-embedding parameters,
// section 4: L(N, D) = [(N_c / N)^(alpha_N / alpha_D) + D_c / D]^alpha_D, with N_c = 8.8e13,
// alpha_N = 0.076, D_c = 5.4e13 tokens, alpha_D = 0.095. Critical batch, section 5.1:
// B_crit(L) = B_* / L^(1 / alpha_B), B_* = 2e8 tokens, alpha_B = 0.21. The critical batch is the
// noise scale B_noise up to a factor of order one (McCandlish et al. 2018, section 2.3); we take
// them equal. D counts tokens at Kaplan's batch of 2^19 tokens (512 x 1024, section 2.3), so that
// is the reference batch the built-in budgets are counted at.
constexpr double kKaplanNc = 8.8e13;
constexpr double kKaplanAlphaN = 0.076;
constexpr double kKaplanDcTokens = 5.4e13;
constexpr double kKaplanAlphaD = 0.095;
constexpr double kKaplanBStarTokens = 2.0e8;
constexpr double kKaplanAlphaB = 0.21;
constexpr double kKaplanBatchTokens = 524288.0;
// Compute-optimal budget: about 20 tokens per parameter (Hoffmann et al. 2022, Chinchilla, table 3).
constexpr double kChinchillaTokensPerParam = 20.0;
// Pre-training sequence length: 4,096 (Llama 2; Qwen2.5's pre-training before its context
// extension), or the model's context if shorter.
constexpr std::int64_t kScenarioSeqLen = 4096;
// Batch bounds in tokens: 2^16 (a few sequences per GPU of a small cluster) to 2^24, the 16M-token
// batch Llama 3 405B ended pre-training with (arXiv 2407.21783, section 3.4.1).
constexpr double kMinBatchTokens = 65536.0;
constexpr double kMaxBatchTokens = 16777216.0;
// warmup: the first 2% of the run. GPT-3 ramped its batch over the first 4-12B of 300B tokens,
// 1.3-4% (Brown et al. 2020, appendix B).
constexpr double kWarmupFraction = 0.02;
// plateau: a continued-pretraining run of 2 tokens per parameter (a tenth of Chinchilla's).
constexpr double kPlateauTokensPerParam = 2.0;
// zero3-slower: ZeRO-3 (FSDP) plans take 18.2% longer than predicted: the largest error of the cost
// model on a published run, the SC'21 ZeRO-3 175B row (README "Accuracy": +18.2% in TFLOP/s).
constexpr double kZero3TimeScale = 1.182;
// Bounds for validation. Tokens (kMaxScenarioTokens, in the header): 1e16, 700x Llama 3 405B's
// 15.6T-token pre-training (arXiv 2407.21783, section 3.1); the simulator's work does not grow
// with them (decision windows and optimum segments are bounded in number). Sequence length
// (kMaxScenarioSeqLen): 2^24, above any model's context.
// Trajectory points: each is read by binary search, the bound only keeps files reasonable.
// Scales: from 100x faster to 10x slower than described, the what-ifs that mean something (a
// zero or denormal scale would make step times vanish and throughput infinite).
constexpr std::size_t kMaxTrajectoryPoints = 10000;
constexpr double kMinScale = 0.01;
constexpr double kMaxScale = 10.0;
constexpr double kMaxJitter = 0.5;
constexpr double kMaxNoiseDimension = 1e9;

constexpr const char* kBuiltinNames[] = {"pretrain", "warmup", "plateau", "zero3-slower"};
constexpr const char* kLargeClusterNames[] = {"cbs-pretrain", "cbs-ramp", "deepseek-pretrain", "llama3-schedule"};
// Large-cluster batch bounds: up to 2^25 tokens, twice Llama 3 405B's final 16M-token batch
// (arXiv 2407.21783, section 3.4.1) and one 4,096-token sequence per GPU at 8,192 GPUs.
constexpr double kLargeClusterMaxBatchTokens = 33554432.0;
// cbs-ramp: the rise of the merrill trajectory, its first kMerrillKneeFraction of the run.

// A number to 3 significant digits, for descriptions.
std::string short_number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return text;
}

void require_finite_in(const std::string& field, double value, double low, double high, const std::string& allowed) {
  if (!std::isfinite(value) || value < low || value > high) throw Error(field, "got " + number_text(value), allowed);
}

}  // namespace

double non_embedding_parameters(const ModelSpec& model) {
  // Kaplan et al.'s N: the main model's active non-embedding weights (MTP modules are a training
  // aid, not part of the model whose loss the scaling law describes).
  const ParameterCount p = count_parameters(model);
  return p.main_active() - p.embedding - p.output_head;
}

double StepTimeScale::of(const Plan& plan) const {
  double scale = all;
  if (plan.tp > 1) scale *= tp;
  if (plan.pp > 1) scale *= pp;
  if (plan.cp > 1) scale *= cp;
  if (plan.ep > 1) scale *= ep;
  if (plan.vpp > 1) scale *= vpp;
  if (plan.zero == OptimizerSharding::zero1) scale *= zero1;
  if (plan.zero == OptimizerSharding::zero3) scale *= zero3;
  return scale;
}

double kaplan_critical_batch_tokens(double non_embedding_params, double tokens) {
  const double loss = std::pow(std::pow(kKaplanNc / non_embedding_params, kKaplanAlphaN / kKaplanAlphaD) +
                                   kKaplanDcTokens / tokens,
                               kKaplanAlphaD);
  return kKaplanBStarTokens / std::pow(loss, 1.0 / kKaplanAlphaB);
}

void NoiseScaleScenario::validate() const {
  if (name.empty()) throw Error("scenario.name", "empty", "a name");
  require_positive("scenario.seq_len", seq_len, kMaxScenarioSeqLen);
  if (!std::isfinite(token_budget) || token_budget < 1.0 || token_budget > kMaxScenarioTokens)
    throw Error("scenario.token_budget", "got " + number_text(token_budget), "a number of tokens from 1 to 1e16");
  require_positive("scenario.reference_batch", reference_batch, kMaxGridBatch);
  require_positive("scenario.min_batch", min_batch, kMaxGridBatch);
  require_positive("scenario.max_batch", max_batch, kMaxGridBatch);
  if (max_batch < min_batch)
    throw Error("scenario.max_batch", "got " + std::to_string(max_batch) + " below min_batch " + std::to_string(min_batch),
                "an integer from min_batch to " + std::to_string(kMaxGridBatch));
  if (noise_scale.empty()) throw Error("scenario.noise_scale", "no points", "at least one {tokens, noise_scale_tokens}");
  if (noise_scale.size() > kMaxTrajectoryPoints)
    throw Error("scenario.noise_scale", std::to_string(noise_scale.size()) + " points",
                "at most " + std::to_string(kMaxTrajectoryPoints) + " points");
  for (std::size_t i = 0; i < noise_scale.size(); ++i) {
    const std::string at = "scenario.noise_scale[" + std::to_string(i) + "]";
    require_finite_in(at + ".tokens", noise_scale[i].tokens, 0.0, kMaxScenarioTokens, "tokens from 0 to 1e16");
    if (i > 0 && noise_scale[i].tokens <= noise_scale[i - 1].tokens)
      throw Error(at + ".tokens", "got " + number_text(noise_scale[i].tokens) + " after " +
                                     number_text(noise_scale[i - 1].tokens),
                  "tokens increasing from point to point");
    if (!std::isfinite(noise_scale[i].noise_scale_tokens) || noise_scale[i].noise_scale_tokens <= 0.0 ||
        noise_scale[i].noise_scale_tokens > kMaxScenarioTokens)
      throw Error(at + ".noise_scale_tokens", "got " + number_text(noise_scale[i].noise_scale_tokens),
                  "a number of tokens greater than 0 and at most 1e16");
  }
  const std::pair<const char*, double> scales[] = {
      {"network_bandwidth_scale", network_bandwidth_scale}, {"step_time_scale.all", step_time_scale.all},
      {"step_time_scale.tp", step_time_scale.tp},           {"step_time_scale.pp", step_time_scale.pp},
      {"step_time_scale.cp", step_time_scale.cp},           {"step_time_scale.ep", step_time_scale.ep},
      {"step_time_scale.vpp", step_time_scale.vpp},         {"step_time_scale.zero1", step_time_scale.zero1},
      {"step_time_scale.zero3", step_time_scale.zero3}};
  for (const auto& [field, value] : scales)
    require_finite_in(std::string("scenario.") + field, value, kMinScale, kMaxScale, "a number from 0.01 to 10");
  require_finite_in("scenario.step_time_jitter", step_time_jitter, 0.0, kMaxJitter, "a fraction from 0 to 0.5");
  require_finite_in("scenario.gradient_noise_dimension", gradient_noise_dimension, 1.0, kMaxNoiseDimension,
                    "a number from 1 to 1e9");
}

double NoiseScaleScenario::noise_scale_at(double tokens) const {
  const auto after = std::upper_bound(noise_scale.begin(), noise_scale.end(), tokens,
                                      [](double t, const NoiseScalePoint& p) { return t < p.tokens; });
  double tokens_b = 0;
  if (after == noise_scale.begin()) {
    tokens_b = noise_scale.front().noise_scale_tokens;
  } else if (after == noise_scale.end()) {
    tokens_b = noise_scale.back().noise_scale_tokens;
  } else {
    const NoiseScalePoint& a = *(after - 1);
    const NoiseScalePoint& b = *after;
    const double f = (tokens - a.tokens) / (b.tokens - a.tokens);
    tokens_b = std::exp(std::log(a.noise_scale_tokens) + f * (std::log(b.noise_scale_tokens) - std::log(a.noise_scale_tokens)));
  }
  return tokens_b / static_cast<double>(seq_len);
}

BatchBounds default_batch_bounds(std::int64_t seq_len) {
  require_positive("seq_len", seq_len);
  const double seq = static_cast<double>(seq_len);
  BatchBounds b;
  // In sequences, within the grid's limit (short sequences would otherwise ask for more).
  auto sequences = [seq](double tokens) {
    return std::clamp<std::int64_t>(std::llround(tokens / seq), 1, kMaxGridBatch);
  };
  b.reference_batch = sequences(kKaplanBatchTokens);
  b.min_batch = sequences(kMinBatchTokens);
  b.max_batch = sequences(kMaxBatchTokens);
  return b;
}

namespace {

std::int64_t scenario_seq_len(const ModelSpec& model, std::int64_t seq_len) {
  if (seq_len != 0) {
    require_positive("seq_len", seq_len, kMaxScenarioSeqLen);
    return seq_len;
  }
  return std::min(kScenarioSeqLen, model.max_context);
}

std::string names_text(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : ", ") + names[i];
  return text;
}

void set_bounds(NoiseScaleScenario& s, const BatchBounds& bounds) {
  s.reference_batch = bounds.reference_batch;
  s.min_batch = bounds.min_batch;
  s.max_batch = bounds.max_batch;
}

std::string range_text(const NoiseScaleScenario& s) {
  double low = s.noise_scale.front().noise_scale_tokens, high = low;
  for (const NoiseScalePoint& p : s.noise_scale) {
    low = std::min(low, p.noise_scale_tokens);
    high = std::max(high, p.noise_scale_tokens);
  }
  return short_number(low) + " to " + short_number(high) + " tokens per batch";
}

NoiseScaleScenario large_cluster_scenario(const std::string& name, const ModelSpec& model, std::int64_t seq_len) {
  const double n = non_embedding_parameters(model);
  const double run_tokens = kChinchillaTokensPerParam * count_parameters(model).total();
  NoiseScaleScenario s;
  s.name = name;
  s.seq_len = scenario_seq_len(model, seq_len);
  set_bounds(s, large_cluster_batch_bounds(s.seq_len));
  Trajectory trajectory = Trajectory::merrill;
  if (name == "deepseek-pretrain") trajectory = Trajectory::deepseek;
  if (name == "llama3-schedule") trajectory = Trajectory::llama3;
  s.token_budget = name == "cbs-ramp" ? kMerrillKneeFraction * run_tokens : run_tokens;
  s.noise_scale = trajectory_points(trajectory, n, run_tokens, s.token_budget);
  s.description = (name == "cbs-ramp" ? "the first 20% of Chinchilla-sized pre-training (" : "pre-training to "
                   "Chinchilla's 20 tokens per parameter (") + short_number(s.token_budget) +
                  " tokens) on a large cluster; noise scale = " + trajectory_source(trajectory) + ": " + range_text(s);
  s.validate();
  return s;
}

NoiseScaleScenario small_cluster_scenario(const std::string& name, const ModelSpec& model, std::int64_t seq_len) {
  const ParameterCount params = count_parameters(model);
  const double n = non_embedding_parameters(model);
  const double chinchilla_tokens = kChinchillaTokensPerParam * params.total();
  NoiseScaleScenario s;
  s.name = name;
  s.seq_len = scenario_seq_len(model, seq_len);
  const BatchBounds bounds = default_batch_bounds(s.seq_len);
  s.reference_batch = bounds.reference_batch;
  s.min_batch = bounds.min_batch;
  s.max_batch = bounds.max_batch;
  const std::string law = "noise scale = Kaplan et al. 2020's critical batch B_crit(L(N, D)) for N = " +
                          short_number(n) + " non-embedding parameters";
  auto range = [&s]() {
    return short_number(s.noise_scale.front().noise_scale_tokens) + " to " +
           short_number(s.noise_scale.back().noise_scale_tokens) + " tokens per batch";
  };
  if (name == "pretrain" || name == "zero3-slower") {
    s.token_budget = chinchilla_tokens;
    s.noise_scale = trajectory_points(Trajectory::kaplan, n, s.token_budget, s.token_budget);
    s.description = "pre-training to Chinchilla's 20 tokens per parameter (" + short_number(s.token_budget) +
                    " tokens); " + law + ": " + range();
    if (name == "zero3-slower") {
      s.step_time_scale.zero3 = kZero3TimeScale;
      s.description += "; on the real cluster ZeRO-3 plans take 18.2% longer than the cost model predicts (its "
                       "largest error on a published run, SC'21's ZeRO-3 175B), which policies learn only by "
                       "measuring step times";
    }
  } else if (name == "warmup") {
    s.token_budget = kWarmupFraction * chinchilla_tokens;
    s.noise_scale = trajectory_points(Trajectory::kaplan, n, s.token_budget, s.token_budget);
    s.description = "the first 2% of Chinchilla-sized pre-training (" + short_number(s.token_budget) +
                    " tokens), where the noise scale grows fastest; " + law + ": " + range();
  } else {
    s.token_budget = kPlateauTokensPerParam * params.total();
    const double b = kaplan_critical_batch_tokens(n, chinchilla_tokens);
    s.noise_scale = {{0.0, b}};
    s.description = "continued pre-training for 2 tokens per parameter (" + short_number(s.token_budget) +
                    " tokens) at the noise scale pretrain ends with, " + short_number(b) +
                    " tokens per batch, constant: nothing to adapt to";
  }
  s.validate();
  return s;
}

}  // namespace

std::vector<std::string> builtin_scenario_names() { return {std::begin(kBuiltinNames), std::end(kBuiltinNames)}; }

std::vector<std::string> large_cluster_scenario_names() {
  return {std::begin(kLargeClusterNames), std::end(kLargeClusterNames)};
}

std::vector<std::string> all_builtin_scenario_names() {
  std::vector<std::string> names = builtin_scenario_names();
  for (const std::string& name : large_cluster_scenario_names()) names.push_back(name);
  return names;
}

const char* default_scenario_name(std::int64_t gpus) {
  return gpus >= kLargeClusterGpus ? kDefaultLargeClusterScenario : kDefaultScenario;
}

BatchBounds large_cluster_batch_bounds(std::int64_t seq_len) {
  BatchBounds b = default_batch_bounds(seq_len);
  b.max_batch = std::clamp<std::int64_t>(std::llround(kLargeClusterMaxBatchTokens / static_cast<double>(seq_len)), 1,
                                         kMaxGridBatch);
  return b;
}

NoiseScaleScenario builtin_scenario(const std::string& name, const ModelSpec& model, std::int64_t seq_len) {
  const auto small = builtin_scenario_names(), large = large_cluster_scenario_names();
  if (std::find(small.begin(), small.end(), name) != small.end()) return small_cluster_scenario(name, model, seq_len);
  if (std::find(large.begin(), large.end(), name) != large.end()) return large_cluster_scenario(name, model, seq_len);
  throw Error("scenario", "no built-in scenario '" + name + "'", names_text(all_builtin_scenario_names()));
}

NoiseScaleScenario described_scenario(const ScenarioDescription& d, const ModelSpec& model) {
  const double n = non_embedding_parameters(model);
  NoiseScaleScenario s;
  s.name = "described";
  s.seq_len = scenario_seq_len(model, d.seq_len);
  set_bounds(s, large_cluster_batch_bounds(s.seq_len));
  s.token_budget = d.token_budget > 0 ? d.token_budget : kChinchillaTokensPerParam * count_parameters(model).total();
  require_finite_in("scenario.token_budget", s.token_budget, 1.0, kMaxScenarioTokens, "a number of tokens from 1 to 1e16");
  if (d.noise_scale_start_tokens > 0 && d.noise_scale_end_tokens > 0) {
    s.noise_scale = {{0.0, d.noise_scale_start_tokens}, {s.token_budget, d.noise_scale_end_tokens}};
    s.description = "described by flags: " + short_number(s.token_budget) + " tokens; noise scale log-linear in "
                    "tokens: " + range_text(s);
  } else {
    const Trajectory trajectory = parse_trajectory(d.trajectory);
    s.noise_scale = trajectory_points(trajectory, n, s.token_budget, s.token_budget);
    s.description = "described by flags: " + short_number(s.token_budget) + " tokens; noise scale = " +
                    trajectory_source(trajectory) + ": " + range_text(s);
  }
  s.validate();
  return s;
}

NoiseScaleScenario with_batch_bounds(NoiseScaleScenario s, std::int64_t min_batch, std::int64_t max_batch) {
  const std::string allowed = "a global batch in sequences from 1 to " + std::to_string(kMaxGridBatch);
  if (min_batch < 0 || min_batch > kMaxGridBatch) throw Error("--min-gbs", "got " + std::to_string(min_batch), allowed);
  if (max_batch < 0 || max_batch > kMaxGridBatch) throw Error("--max-gbs", "got " + std::to_string(max_batch), allowed);
  if (min_batch > 0) s.min_batch = min_batch;
  if (max_batch > 0) s.max_batch = max_batch;
  if (s.min_batch > s.max_batch)
    throw Error(max_batch > 0 ? "--max-gbs" : "--min-gbs",
                "the bounds are " + std::to_string(s.min_batch) + " to " + std::to_string(s.max_batch) + " sequences",
                "a minimum at most the maximum");
  s.validate();
  return s;
}

}  // namespace tessera

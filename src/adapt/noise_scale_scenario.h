// A training run for the run simulator: how the gradient noise scale grows with the progress made
// (tokens consumed at the reference batch), the token budget to the target, the batch bounds, and
// how the real cluster departs from the catalog. Built-in scenarios are sized to the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Step-to-step variation of a synchronous step's time (relative standard deviation). A documented
// assumption: data-dependent kernel times and host jitter on a healthy cluster without stragglers.
inline constexpr double kStepTimeJitter = 0.02;
// Effective number of independent directions of gradient noise the simulated squared norms see. It
// sets how noisy one step's noise-scale estimate is: the |G|^2 estimate scatters by about
// (B_noise / B) sqrt(2 / d) (0.45 at B = B_noise / 10), so it must be averaged over many steps, as
// McCandlish et al. 2018 (appendix A.1) find for real gradients.
inline constexpr double kGradientNoiseDimension = 1000.0;

// Longest sequence a scenario may have, in tokens.
inline constexpr std::int64_t kMaxScenarioSeqLen = std::int64_t{1} << 24;
// Most tokens a scenario's budget, progress points and noise scales may count.
inline constexpr double kMaxScenarioTokens = 1e16;

struct NoiseScalePoint {
  double tokens = 0;              // progress: tokens consumed at the reference batch
  double noise_scale_tokens = 0;  // B_noise there, in tokens (sequences x seq_len)
};

// How much slower than the cost model's prediction plans with a feature really run, multiplied over
// the features a plan has (1: as predicted). A what-if for the real cluster.
struct StepTimeScale {
  double all = 1;    // every plan
  double tp = 1;     // tp > 1
  double pp = 1;     // pp > 1
  double cp = 1;     // cp > 1
  double ep = 1;     // ep > 1
  double vpp = 1;    // interleaved (vpp > 1)
  double zero1 = 1;  // distributed optimizer
  double zero3 = 1;  // fully sharded (FSDP)
  double of(const Plan& plan) const;
};

struct NoiseScaleScenario {
  std::string name;
  std::string description;
  std::int64_t seq_len = 0;          // tokens per sequence
  double token_budget = 0;           // progress to the target, tokens at the reference batch
  std::int64_t reference_batch = 0;  // B0, sequences: the batch the budget is counted at
  std::int64_t min_batch = 0;        // grid bounds, sequences
  std::int64_t max_batch = 0;
  // B_noise along the run; log(B_noise) is interpolated linearly in tokens between points and held
  // constant before the first and after the last. Tokens strictly increasing.
  std::vector<NoiseScalePoint> noise_scale;
  // The real cluster: its scale-out bandwidth over the catalog's, and plan features that run slower
  // than predicted (1: as described). Policies learn these only by measuring step times.
  double network_bandwidth_scale = 1.0;
  StepTimeScale step_time_scale;
  double step_time_jitter = kStepTimeJitter;
  double gradient_noise_dimension = kGradientNoiseDimension;
  std::uint64_t seed = 1;

  // Throws Error("scenario.<field>", ...) outside the limits: seq_len 1 to 2^24; token_budget 1
  // to 1e16 tokens; reference_batch, min_batch <= max_batch from 1 to kMaxGridBatch (8,192)
  // sequences; 1 to 10,000 noise-scale points, tokens 0 to 1e16 strictly increasing, noise scale
  // above 0 and at most 1e16 tokens; scales 0.01 to 10; jitter 0 to 0.5; noise dimension 1 to 1e9.
  void validate() const;
  // B_noise in sequences after `tokens` of progress.
  double noise_scale_at(double tokens) const;
};

// The reference batch and grid bounds the built-in scenarios use (and scenario files default to),
// in sequences of seq_len tokens: Kaplan et al.'s 2^19-token batch, and 2^16 to 2^24 tokens, each
// at least 1 and at most kMaxGridBatch sequences (batch_grid.h).
struct BatchBounds {
  std::int64_t reference_batch = 0;
  std::int64_t min_batch = 0;
  std::int64_t max_batch = 0;
};
BatchBounds default_batch_bounds(std::int64_t seq_len);

// Built-in scenarios, sized to the model from Kaplan et al. 2020's fits (see the .cpp):
//   pretrain      Chinchilla budget (20 tokens per parameter), noise scale from the loss law
//   warmup        the first 2% of that run, where the noise scale grows fastest
//   plateau       a continued-pretraining run at the noise scale pretrain ends with (constant)
//   zero3-slower  pretrain on a cluster where ZeRO-3 plans run 18% slower than the cost model says
std::vector<std::string> builtin_scenario_names();
// Large-cluster scenarios (512 GPUs and more), from published critical-batch measurements
// (critical_batch_trajectory.h), batches 2^16 to 2^25 tokens (large_cluster_batch_bounds):
//   cbs-pretrain       Chinchilla budget, merrill trajectory (rise over the first 20%, then plateau)
//   cbs-ramp           the first 20% of that run: the rise alone, where batch warm-up pays
//   deepseek-pretrain  Chinchilla budget, deepseek trajectory (B_opt at the compute spent so far)
//   llama3-schedule    Chinchilla budget, Llama 3 405B's batch schedule as the critical batch
std::vector<std::string> large_cluster_scenario_names();
// Every built-in name, small-cluster ones first.
std::vector<std::string> all_builtin_scenario_names();
// seq_len 0: min(4,096, the model's context). Error("scenario", ...) for an unknown name.
NoiseScaleScenario builtin_scenario(const std::string& name, const ModelSpec& model, std::int64_t seq_len = 0);
inline constexpr const char* kDefaultScenario = "pretrain";
// Without --scenario: clusters of kLargeClusterGpus GPUs or more get kDefaultLargeClusterScenario
// (the regime where a small early batch cannot fill the machine by data parallelism alone: at
// 4,096-token sequences, 512 GPUs need 512 sequences, 2M tokens, for one sequence per GPU, above
// the early critical batch of every trajectory here), smaller ones kDefaultScenario.
inline constexpr std::int64_t kLargeClusterGpus = 512;
inline constexpr const char* kDefaultLargeClusterScenario = "cbs-pretrain";
const char* default_scenario_name(std::int64_t gpus);

// The large-cluster batch bounds in sequences: reference 2^19 tokens (as default_batch_bounds),
// 2^16 to 2^25 tokens (at 4,096 tokens 16 to 8,192 sequences: one sequence per GPU at 8,192 GPUs),
// each within 1 to kMaxGridBatch.
BatchBounds large_cluster_batch_bounds(std::int64_t seq_len);

// A scenario described by its parts (`tessera adapt simulate --tokens/--trajectory/...`):
// token_budget 0 = Chinchilla's 20 tokens per parameter; seq_len 0 = min(4,096, context); with
// noise_scale_start_tokens and noise_scale_end_tokens both > 0, B_noise moves log-linearly between
// them over the budget, else it follows `trajectory` for a run of that budget. Large-cluster batch
// bounds. Throws Error("scenario.<field>", ...) as validate() does.
struct ScenarioDescription {
  std::int64_t seq_len = 0;
  double token_budget = 0;
  std::string trajectory = "merrill";  // critical_batch_trajectory.h names
  double noise_scale_start_tokens = 0;
  double noise_scale_end_tokens = 0;
};
NoiseScaleScenario described_scenario(const ScenarioDescription& description, const ModelSpec& model);

// The scenario with its grid bounds replaced (a bound of 0 keeps the scenario's), in sequences: for
// `--min-gbs` / `--max-gbs`. Throws Error("--min-gbs" / "--max-gbs", ...) for a bound outside 1 to
// kMaxGridBatch or a minimum above the maximum; the reference batch (where the budget is counted)
// is kept.
NoiseScaleScenario with_batch_bounds(NoiseScaleScenario scenario, std::int64_t min_batch, std::int64_t max_batch);

// Kaplan's N: the main model's active non-embedding weights.
double non_embedding_parameters(const ModelSpec& model);

// Kaplan et al. 2020's critical batch in tokens after `tokens` of training for a model with
// `non_embedding_params` parameters (section 4 for L(N, D), section 5.1 for B_crit(L)).
double kaplan_critical_batch_tokens(double non_embedding_params, double tokens);

}  // namespace tessera

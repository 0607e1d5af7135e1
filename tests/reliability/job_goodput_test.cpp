// The failure model against the one public fleet figure with every input stated:
//
// Llama 3 405B pre-training (Dubey et al., "The Llama 3 Herd of Models", arXiv 2407.21783):
//   - 16,384 H100 GPUs, 8 per Grand Teton server: 2,048 nodes (section 3.3.1, 3.3.4);
//   - a 54-day snapshot: 466 interruptions, 47 planned, 419 unexpected; GPUs 58.7% of the
//     unexpected (section 3.3.4, Table 5) -> failure_rates.h defaults;
//   - checkpoints: Tectonic, 2 TB/s sustained (section 3.3.1); 1 MB to 4 GB per GPU; our
//     14 B/param (bf16 weights, fp32 master, two Adam moments) gives ~350 MB per GPU;
//   - the layout: tp 8, cp 1, pp 16, dp 128 at 16,384 GPUs, 16M-token batches, 400 TFLOPs/GPU
//     (Table 4) -> a step of 6 N T / (GPUs x 400 TFLOP/s) ~ 6.2 s (attention FLOPs left out);
//   - published: "higher than 90% effective training time" (section 3.3.4).
// Restart (not given by the paper): detection up to PyTorch's 10-minute NCCL watchdog default
// (pytorch/pytorch PR #110947) + a 300 s relaunch (TrainMover, arXiv 2412.12636) + the load;
// restart_time.h. Prediction: see Llama3EffectiveTrainingTime.
#include <gtest/gtest.h>

#include <cmath>

#include "catalog/model_source.h"
#include "common/thrown_field.h"
#include "model/parameter_count.h"
#include "reliability/checkpoint_interval.h"
#include "reliability/job_goodput.h"

namespace tessera {
namespace {

constexpr std::int64_t kLlama3Gpus = 16384;
constexpr std::int64_t kGpusPerNode = 8;
constexpr double kLlama3TokensPerStep = 2048.0 * 8192.0;  // 16M tokens (Table 4)
constexpr double kLlama3FlopsPerGpu = 400e12;             // Table 4, 16,384 GPUs
constexpr double kPublishedEffectiveTraining = 0.90;      // section 3.3.4, "higher than 90%"

Plan llama3_plan() {
  Plan p;
  p.tp = 8;
  p.pp = 16;
  p.dp = 128;
  p.zero = OptimizerSharding::zero1;
  return p;
}

double llama3_step_s(const ModelSpec& m) {
  return 6.0 * count_parameters(m).total() * kLlama3TokensPerStep / (kLlama3Gpus * kLlama3FlopsPerGpu);
}

CheckpointCost llama3_checkpoint(const ModelSpec& m, const FailureModel& f) {
  return checkpoint_cost(m, llama3_plan(), kGpusPerNode, f.storage, f.save);
}

TEST(JobGoodput, Llama3EffectiveTrainingTime) {
  const ModelSpec m = load_model("llama3.1-405b");
  const FailureModel f;
  const double step = llama3_step_s(m);
  EXPECT_NEAR(step, 6.2, 0.3);
  const FailureOutcome o = failure_outcome(f, llama3_checkpoint(m, f), kLlama3Gpus, kGpusPerNode, step);
  EXPECT_NEAR(o.mtbf_s / 3600, 54.0 * 24 / 419, 1e-9);
  // The published figure within 3 points.
  EXPECT_NEAR(o.useful_fraction, kPublishedEffectiveTraining, 0.03) << o.useful_fraction;
  // The recommended interval is whole steps around the exact optimum.
  EXPECT_NEAR(o.interval_s, o.optimal_interval_s, step);
  RecordProperty("predicted_effective_training", std::to_string(o.useful_fraction));
}

// The prediction rests on the restart time the paper does not give: between a bare relaunch
// (crash faults seen at once) and a full watchdog wait it stays within [0.87, 0.96] -- the
// published "higher than 90%" is inside, and the fraction falls as the restart grows.
TEST(JobGoodput, Llama3FigureAcrossRestartAssumptions) {
  const ModelSpec m = load_model("llama3.1-405b");
  double previous = 1.0;
  for (const double detection : {0.0, 300.0, 600.0}) {
    FailureModel f;
    f.restart.detection_s = detection;
    const auto o = failure_outcome(f, llama3_checkpoint(m, f), kLlama3Gpus, kGpusPerNode, llama3_step_s(m));
    EXPECT_GT(o.useful_fraction, 0.87) << detection;
    EXPECT_LT(o.useful_fraction, 0.96) << detection;
    EXPECT_LT(o.useful_fraction, previous);
    previous = o.useful_fraction;
  }
}

// Property: goodput falls as the MTBF falls (higher failure rates) and as the checkpoint slows
// (lower storage bandwidth), each at its own recommended interval.
TEST(JobGoodput, FallsWithFailureRateAndCheckpointTime) {
  const ModelSpec m = load_model("llama3.1-405b");
  double previous = 1.0;
  for (const double scale : {0.25, 0.5, 1.0, 2.0, 4.0}) {
    FailureModel f;
    f.rates.per_gpu_hour *= scale;
    f.rates.per_node_hour *= scale;
    const double frac =
        failure_outcome(f, llama3_checkpoint(m, f), kLlama3Gpus, kGpusPerNode, llama3_step_s(m)).useful_fraction;
    EXPECT_LT(frac, previous) << scale;
    previous = frac;
  }
  previous = 1.0;
  for (const double gbps : {8000.0, 2000.0, 500.0, 100.0, 20.0}) {
    FailureModel f;
    f.storage.write_gbps = gbps;
    const double frac =
        failure_outcome(f, llama3_checkpoint(m, f), kLlama3Gpus, kGpusPerNode, llama3_step_s(m)).useful_fraction;
    EXPECT_LT(frac, previous) << gbps;
    previous = frac;
  }
}

// With async save the stall is the copy; the interval is still at least one durable write, and
// the fraction is at least the synchronous one when the write is long (slow storage).
TEST(JobGoodput, AsyncSaveHelpsWhenWritesAreSlow) {
  const ModelSpec m = load_model("llama3.1-405b");
  FailureModel sync;
  sync.storage.write_gbps = 100;
  FailureModel async = sync;
  async.save.async = true;
  const double step = llama3_step_s(m);
  const auto a = failure_outcome(async, llama3_checkpoint(m, async), kLlama3Gpus, kGpusPerNode, step);
  const auto s = failure_outcome(sync, llama3_checkpoint(m, sync), kLlama3Gpus, kGpusPerNode, step);
  EXPECT_GE(a.interval_s + a.checkpoint.blocking_s, a.checkpoint.write_s);
  EXPECT_GT(a.useful_fraction, s.useful_fraction);
}

// Planned interruptions cost their share of wall-clock: with none, the fraction is Daly's.
TEST(JobGoodput, PlannedInterruptionsCostTheirRestart) {
  const ModelSpec m = load_model("llama3.1-405b");
  FailureModel f;
  f.rates.planned_per_node_hour = 0;
  const double step = llama3_step_s(m);
  const auto o = failure_outcome(f, llama3_checkpoint(m, f), kLlama3Gpus, kGpusPerNode, step);
  EXPECT_NEAR(o.useful_fraction, useful_fraction(o.interval_s, o.checkpoint.blocking_s, o.restart_s, o.mtbf_s), 1e-15);
  const FailureModel with_planned;
  const auto p = failure_outcome(with_planned, llama3_checkpoint(m, f), kLlama3Gpus, kGpusPerNode, step);
  const double share = p.planned_per_hour * (300 + p.checkpoint.load_s + p.checkpoint.blocking_s) / 3600;
  EXPECT_NEAR(p.useful_fraction, o.useful_fraction * (1 - share), 1e-12);
}

TEST(JobGoodput, BadStepTimeNamesTheField) {
  const ModelSpec m = load_model("llama3-8b");
  const FailureModel f;
  const CheckpointCost c = checkpoint_cost(m, llama3_plan(), kGpusPerNode, f.storage, f.save);
  EXPECT_EQ(testing::thrown_field([&] { failure_outcome(f, c, 16384, 8, 0); }), "step_time_s");
  EXPECT_EQ(testing::thrown_field([&] { failure_outcome(f, c, 16384, 8, std::nan("")); }), "step_time_s");
}

}  // namespace
}  // namespace tessera

// A stream of training steps drawn from data mixes (plan/data_mix.h), run two ways on the same G
// GPUs: the static plan (one cp degree for the whole stream, the best one chosen with hindsight)
// and per-batch context parallelism (balance/per_batch_parallelism.h, re-chosen every step).
//
// Samples become backbone documents: a sample's text and its images' ViT-H/14 tokens ((px / 14)^2
// per image, balance/module_shape.h) form one causal span; generated images run on the generator,
// not on the backbone's cp ring, and are left out; audio is refused (no encoder shape here).
// Documents are packed next fit into sequences of the mix's sequence_tokens (a text-only document
// longer than the room left flows on into the next sequence, as plan/data_mix.h's pack_sequences);
// each sequence is one micro-batch. A step holds sequences until their capacity reaches
// step_tokens. Each step draws from one mix (chosen by weight) or, with mix_per_sequence, each
// sequence does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "balance/per_batch_parallelism.h"
#include "plan/data_mix.h"

namespace tessera {

struct WeightedMix {
  DataMix mix;
  double weight = 1;
};

struct PerBatchStreamSettings {
  std::vector<WeightedMix> mixes;
  std::int64_t steps = 1000;
  std::int64_t step_tokens = 262'144;  // global batch in tokens (e.g. 32 x 8K or 2 x 128K)
  bool mix_per_sequence = false;
  std::uint64_t seed = 0;
  void validate() const;  // throws Error naming the field
};

inline constexpr std::int64_t kMaxPerBatchSteps = 100'000;
inline constexpr std::int64_t kMaxPerBatchStepTokens = 1LL << 26;  // 64M tokens per step
// A ViT-H/14 patch is 14 x 14 px (Dosovitskiy et al. 2021, Table 1).
inline constexpr double kVitPatchPx = 14.0;

// One step of the stream: its micro-batches and, for the exactly-once check, the samples whose
// first token each micro-batch holds (sample ids count up from 0 over the stream).
struct StreamStep {
  StepBatch batch;
  std::vector<std::vector<std::int64_t>> samples;
};

struct DrawnStream {
  std::vector<StreamStep> steps;
  std::int64_t drawn_samples = 0;      // ids 0 .. drawn_samples - 1
  std::vector<std::int64_t> unplaced;  // drawn but waiting for the next sequence at the end
};

// Draws the whole stream (deterministic for the seed).
DrawnStream draw_stream(const PerBatchStreamSettings& settings);

struct StaticDegreeTime {
  int degree = 0;
  double time_s = 0;  // whole stream; infinite when some micro-batch does not fit this degree
};

struct PerBatchStreamResult {
  std::int64_t steps = 0, microbatches = 0, samples = 0;
  double tokens = 0;
  std::vector<StaticDegreeTime> statics;
  int best_static_degree = 0;
  double static_time_s = 0, per_batch_time_s = 0, lower_bound_time_s = 0;  // sums over steps
  double gain = 0;                                                         // static_time / per_batch_time - 1
  double gain_bound = 0;  // static_time / lower_bound_time - 1: no grouping can gain more
  std::int64_t heterogeneous_steps = 0, static_degree_changes = 0;
  std::vector<std::int64_t> microbatches_at_degree;                       // index = degree
  double decision_mean_ms = 0, decision_p99_ms = 0, decision_max_ms = 0;  // per step, one core
  std::vector<std::string> violations;  // decision_violations and exactly-once over the stream
  double static_tokens_per_s() const { return static_time_s > 0 ? tokens / static_time_s : 0; }
  double per_batch_tokens_per_s() const { return per_batch_time_s > 0 ? tokens / per_batch_time_s : 0; }
};

// Runs the stream both ways. Step times exclude the gradient sync (identical for both: the same
// G GPUs reduce the same gradients), so the gain is of the compute + cp part of the step.
PerBatchStreamResult run_per_batch_stream(const DrawnStream& stream, PerBatchCpPlanner& planner);

// A long-video mix for the stream where per-batch cp pays: 200 to 500 frames at 224 px (256
// ViT-H/14 tokens each: 51K-128K tokens), as long-video instruction data sampled at 1 frame per
// second (LLaVA-Video / LongVA style); one video per 131,072-token sequence.
DataMix long_video_mix();

}  // namespace tessera

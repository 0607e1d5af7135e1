// Speed of the per-batch context-parallel decision (issue 17): one step's decision -- costing its
// micro-batches at every allowed degree, every static grouping and the heterogeneous bisection --
// must take <= 5 ms on one core. Steps from the streams of `tessera balance --per-batch-cp`:
// video-like (32 x 8K sequences) on 16 GPUs, long videos mixed with captions inside a step
// (64 x 8K capacity) on 32 GPUs, and a 64-GPU caption step. Time is per decision.
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "balance/per_batch_stream.h"
#include "catalog/data_mixes.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "formats/data_mix_json.h"

namespace {

using namespace tessera;

constexpr std::int64_t kSteps = 64;

void decide_steps(benchmark::State& state, const PerBatchStreamSettings& settings, int gpus) {
  const Cluster cluster = make_cluster(find_gpu("h100-sxm-80gb"), gpus);
  PerBatchCpPlanner planner(make_cp_cost_model(builtin_model("llama3-8b"), cluster, gpus, Recompute::full), gpus);
  const DrawnStream stream = draw_stream(settings);
  std::size_t next = 0;
  for (auto _ : state) {
    planner.cost_step(stream.steps[next].batch);
    benchmark::DoNotOptimize(planner.per_batch_decision().step_time_s);
    next = (next + 1) % stream.steps.size();
  }
}

void BM_PerBatchCpVideoLike16Gpus(benchmark::State& state) {
  PerBatchStreamSettings s;
  s.mixes = {{load_data_mix("video-like"), 1.0}};
  s.steps = kSteps;
  decide_steps(state, s, 16);
}
BENCHMARK(BM_PerBatchCpVideoLike16Gpus)->Unit(benchmark::kMillisecond);

void BM_PerBatchCpLongVideoWithCaptions32Gpus(benchmark::State& state) {
  PerBatchStreamSettings s;
  s.mixes = {{long_video_mix(), 0.25}, {load_data_mix("caption-like"), 0.75}};
  s.mix_per_sequence = true;
  s.step_tokens = 524'288;
  s.steps = kSteps;
  decide_steps(state, s, 32);
}
BENCHMARK(BM_PerBatchCpLongVideoWithCaptions32Gpus)->Unit(benchmark::kMillisecond);

void BM_PerBatchCpCaptions64Gpus(benchmark::State& state) {
  PerBatchStreamSettings s;
  s.mixes = {{load_data_mix("caption-like"), 1.0}};
  s.step_tokens = 524'288;
  s.steps = kSteps;
  decide_steps(state, s, 64);
}
BENCHMARK(BM_PerBatchCpCaptions64Gpus)->Unit(benchmark::kMillisecond);

}  // namespace

// Speed of the pipeline simulator (issue 3): 64 stages x 1,024 micro-batches, Megatron interleaved
// 1F1B with v = 4 (524,288 operations) must simulate in <= 20 ms on one core. The planner calls
// makespan() on a reused simulator; run() also builds the full timeline (ops, p2p, summaries,
// critical path). Time is per simulation, in ms; items are operations.
#include <random>

#include <benchmark/benchmark.h>

#include "schedule/pipeline_simulator.h"

namespace {

constexpr int kStages = 64;
constexpr int kMicrobatches = 1024;
constexpr int kChunks = 4;

// Uneven costs (+-20% per virtual stage and micro-batch), with or without p2p on every boundary
// (with it, the timeline also holds ~0.5 million transfer events).
tessera::PipelineCosts bench_costs(double p2p_s) {
  auto c = tessera::PipelineCosts::uniform(tessera::Schedule::interleaved, kStages, kMicrobatches, kChunks, 1.0, 2.0);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  for (double& t : c.forward_s) t *= jitter(rng);
  for (double& t : c.backward_s) t *= jitter(rng);
  c.p2p_s.assign(kStages, p2p_s);
  c.validate();
  return c;
}

void report(benchmark::State& state, const tessera::PipelineCosts& c) {
  const double ops = static_cast<double>(c.virtual_stages()) * c.microbatches * 2;
  state.SetItemsProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * ops));
}

void BM_SimulateInterleaved64x1024v4_Makespan(benchmark::State& state) {
  const tessera::PipelineCosts c = bench_costs(state.range(0) ? 0.01 : 0.0);
  tessera::PipelineSimulator sim;
  for (auto _ : state) {
    double pipeline = 0;
    benchmark::DoNotOptimize(sim.makespan(c, &pipeline));
    benchmark::DoNotOptimize(pipeline);
  }
  report(state, c);
}
BENCHMARK(BM_SimulateInterleaved64x1024v4_Makespan)->ArgName("p2p")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_SimulateInterleaved64x1024v4_Timeline(benchmark::State& state) {
  const tessera::PipelineCosts c = bench_costs(state.range(0) ? 0.01 : 0.0);
  tessera::PipelineSimulator sim;
  for (auto _ : state) {
    const tessera::Timeline t = sim.run(c);
    benchmark::DoNotOptimize(t.makespan_s);
  }
  report(state, c);
}
BENCHMARK(BM_SimulateInterleaved64x1024v4_Timeline)->ArgName("p2p")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

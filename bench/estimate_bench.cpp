// Throughput of the analytical cost model: the planner ranks plans with it, so it must sustain
// >= 1,000,000 estimates per second on one core for a 70B dense model (issue 2).
#include <benchmark/benchmark.h>

#include "cost/cost_model.h"
#include "io/gpu_catalog.h"
#include "io/model_source.h"

namespace {

void BM_EstimateLlama70B(benchmark::State& state) {
  const tessera::ModelSpec model = tessera::builtin_model("llama3-70b");
  const tessera::Cluster cluster = tessera::make_cluster(tessera::find_gpu("h100-sxm-80gb"), 1024);
  tessera::Plan plan;
  plan.tp = 8;
  plan.pp = 4;
  plan.dp = 32;
  plan.vpp = 5;
  plan.micro_batch = 1;
  plan.sequence_parallel = true;
  plan.recompute = tessera::Recompute::selective;
  plan.zero = tessera::OptimizerSharding::zero1;
  const tessera::Workload workload{1024, 8192};
  tessera::validate_plan(plan, model, cluster, workload);
  for (auto _ : state) {
    benchmark::DoNotOptimize(plan);
    const tessera::Estimate e = tessera::estimate(model, cluster, plan, workload);
    benchmark::DoNotOptimize(e.iteration_time_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateLlama70B);

void BM_EstimateDeepSeekV3(benchmark::State& state) {
  const tessera::ModelSpec model = tessera::builtin_model("deepseek-v3");
  const tessera::Cluster cluster = tessera::make_cluster(tessera::find_gpu("h800"), 2048);
  tessera::Plan plan;
  plan.tp = 1;
  plan.pp = 16;
  plan.dp = 128;
  plan.ep = 64;
  plan.micro_batch = 1;
  plan.recompute = tessera::Recompute::full;
  plan.zero = tessera::OptimizerSharding::zero1;
  plan.first_stage_layers = 4;
  plan.last_stage_layers = 0;
  const tessera::Workload workload{15360, 4096};
  plan.first_stage_layers = 0;
  tessera::validate_plan(plan, model, cluster, workload);
  for (auto _ : state) {
    benchmark::DoNotOptimize(plan);
    const tessera::Estimate e = tessera::estimate(model, cluster, plan, workload);
    benchmark::DoNotOptimize(e.iteration_time_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateDeepSeekV3);

}  // namespace

// Throughput of the cost model. The analytical path (closed-form pipeline) ranks plans in the
// planner and must sustain >= 1,000,000 estimates per second on one core for a 70B dense model
// (issues 2 and 3) and >= 300,000 for DeepSeek-V3 (issue 11); the simulated path (what `tessera
// estimate` prints) is memoised.
#include <benchmark/benchmark.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cost/cost_model.h"

namespace {

struct Job {
  tessera::ModelSpec model;
  tessera::Cluster cluster;
  tessera::Plan plan;
  tessera::Workload workload;
};

Job llama70b() {
  Job j{tessera::builtin_model("llama3-70b"),
        tessera::make_cluster(tessera::find_gpu("h100-sxm-80gb"), 1024), {}, {1024, 8192}};
  j.plan.tp = 8;
  j.plan.pp = 4;
  j.plan.dp = 32;
  j.plan.vpp = 5;
  j.plan.micro_batch = 1;
  j.plan.sequence_parallel = true;
  j.plan.recompute = tessera::Recompute::selective;
  j.plan.zero = tessera::OptimizerSharding::zero1;
  tessera::validate_plan(j.plan, j.model, j.cluster, j.workload);
  return j;
}

Job deepseek_v3() {
  Job j{tessera::builtin_model("deepseek-v3"),
        tessera::make_cluster(tessera::find_gpu("h800"), 2048), {}, {15360, 4096}};
  j.plan.tp = 1;
  j.plan.pp = 16;
  j.plan.dp = 128;
  j.plan.ep = 64;
  j.plan.micro_batch = 1;
  j.plan.recompute = tessera::Recompute::full;
  j.plan.zero = tessera::OptimizerSharding::zero1;
  tessera::validate_plan(j.plan, j.model, j.cluster, j.workload);
  return j;
}

// NVIDIA's DGX Cloud DeepSeek-V3 recipe on 1024 H100 (the planner's issue-11 reference): MoE
// parallel folding (etp = 1 under tp = 2), selective recompute of MLA's up-projections, capacity
// factor 1 with padding, Megatron's uneven 3 + 2 layer end stages.
Job deepseek_v3_h100() {
  Job j{tessera::builtin_model("deepseek-v3"),
        tessera::make_cluster(tessera::find_gpu("h100-sxm-80gb"), 1024), {}, {8192, 4096}};
  j.plan.tp = 2;
  j.plan.pp = 16;
  j.plan.dp = 32;
  j.plan.ep = 64;
  j.plan.etp = 1;
  j.plan.micro_batch = 1;
  j.plan.sequence_parallel = true;
  j.plan.recompute = tessera::Recompute::selective;
  j.plan.recompute_modules = tessera::kRecomputeMlaUpProj;
  j.plan.zero = tessera::OptimizerSharding::zero1;
  j.plan.capacity_factor = 1.0;
  j.plan.first_stage_layers = 3;
  j.plan.last_stage_layers = 2;
  tessera::validate_plan(j.plan, j.model, j.cluster, j.workload);
  return j;
}

// The 70B job on GPUs that carry a calibration profile's measured GEMM table: a probe's sweep of
// LLM shapes (m 4,096 and 16,384 tokens; 14 (n, k) pairs), bf16 and fp8, 56 rows
// (cost/measured_gemm_scale.h prices every GEMM from the rows near it).
Job llama70b_measured_gemms() {
  Job j = llama70b();
  const double pairs[][2] = {{3072, 2048}, {2048, 2048}, {16384, 2048}, {2048, 8192}, {128256, 2048},
                             {5120, 3072}, {3072, 3072}, {16384, 3072}, {3072, 8192}, {6144, 4096},
                             {4096, 4096}, {28672, 4096}, {4096, 14336}, {128256, 4096}};
  for (const double m : {4096.0, 16384.0})
    for (const auto& nk : pairs)
      for (const bool fp8 : {false, true})
        j.cluster.gpu.measured_gemms.push_back({m, nk[0], nk[1], fp8, fp8 ? 1200.0 : 650.0});
  j.cluster.gpu.validate();
  return j;
}

template <tessera::Estimate (*Estimator)(const tessera::ModelSpec&, const tessera::Cluster&,
                                         const tessera::Plan&, const tessera::Workload&)>
void run(benchmark::State& state, const Job& j) {
  for (auto _ : state) {
    const tessera::Estimate e = Estimator(j.model, j.cluster, j.plan, j.workload);
    benchmark::DoNotOptimize(e.iteration_time_s);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AnalyticalLlama70B(benchmark::State& state) { run<tessera::estimate_analytical>(state, llama70b()); }
BENCHMARK(BM_AnalyticalLlama70B);
void BM_AnalyticalDeepSeekV3(benchmark::State& state) { run<tessera::estimate_analytical>(state, deepseek_v3()); }
BENCHMARK(BM_AnalyticalDeepSeekV3);
void BM_AnalyticalDeepSeekV3H100(benchmark::State& state) { run<tessera::estimate_analytical>(state, deepseek_v3_h100()); }
BENCHMARK(BM_AnalyticalDeepSeekV3H100);
void BM_AnalyticalLlama70BMeasuredGemms(benchmark::State& state) {
  run<tessera::estimate_analytical>(state, llama70b_measured_gemms());
}
BENCHMARK(BM_AnalyticalLlama70BMeasuredGemms);
// Memoised after the first call: a hash of the pipeline's costs and a table lookup.
void BM_SimulatedLlama70B(benchmark::State& state) { run<tessera::estimate>(state, llama70b()); }
BENCHMARK(BM_SimulatedLlama70B);

}  // namespace

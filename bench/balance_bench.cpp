// Speed of the data balancer (issue 6). The target: one step of 1,000,000 mllm-like samples over
// 1,024 ranks x 1 micro-batch with longest processing time in <= 1 s on one core (what
// `tessera balance --synthetic mllm-like --n 1000000 --dp 1024 --microbatches 1 --method lpt`
// reports as time_ms: sample costs plus the balancer). Also: a 50-step wlb-like stream at 128K
// tokens per micro-batch (outlier queues, carry-over), Karmarkar-Karp at its size limit, the
// 1F1B micro-batch order and the context-parallel sharding choice. Time is per call.
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "balance/context_parallel_sharding.h"
#include "balance/largest_differencing.h"
#include "balance/microbatch_order.h"
#include "balance/sample_cost.h"
#include "balance/stream_balancer.h"
#include "balance/synthetic_mix.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"

namespace {

using namespace tessera;

constexpr std::int64_t kMllmSamples = 1'000'000;
constexpr int kMllmRanks = 1024;
constexpr std::int64_t kWlbCapTokens = 131072;

SampleCostModel cost_model(std::int64_t packed_tokens) {
  return make_sample_cost_model(builtin_model("llama3-8b"), find_gpu("h100-sxm-80gb"), packed_tokens);
}

void BM_MllmLike1MSamplesLpt1024Ranks(benchmark::State& state) {
  const auto samples = synthetic_samples(SyntheticMix::mllm_like, kMllmSamples, 0);
  const SampleCostModel costs = cost_model(builtin_model("llama3-8b").max_context);
  StreamSettings st;
  st.dp = kMllmRanks;
  st.one_step = true;
  st.method = BalanceMethod::lpt;
  std::vector<std::int64_t> tokens(samples.size());
  std::vector<double> time(samples.size());
  for (auto _ : state) {
    for (std::size_t i = 0; i < samples.size(); ++i) {  // sample costs are part of balancing
      tokens[i] = samples[i].backbone_tokens();
      time[i] = sample_cost(costs, samples[i]).total_s();
    }
    const StreamResult r = balance_stream(tokens, time, st);
    benchmark::DoNotOptimize(r.n_assigned);
  }
  state.SetItemsProcessed(state.iterations() * kMllmSamples);
}
BENCHMARK(BM_MllmLike1MSamplesLpt1024Ranks)->Unit(benchmark::kMillisecond);

void BM_WlbLike50StepsWlb(benchmark::State& state) {
  const auto samples = synthetic_samples(SyntheticMix::wlb_like, 8000, 0);
  const SampleCostModel costs = cost_model(kWlbCapTokens);
  std::vector<std::int64_t> tokens;
  std::vector<double> time;
  for (const SampleTokens& s : samples) {
    tokens.push_back(s.backbone_tokens());
    time.push_back(sample_cost(costs, s).total_s());
  }
  StreamSettings st;
  st.microbatches = 4;
  st.max_tokens = kWlbCapTokens;
  st.steps = 50;
  st.method = BalanceMethod::wlb;
  st.filler_s_per_token = costs.backbone.linear_s_per_token;
  for (auto _ : state) benchmark::DoNotOptimize(balance_stream(tokens, time, st).n_assigned);
}
BENCHMARK(BM_WlbLike50StepsWlb)->Unit(benchmark::kMillisecond);

void BM_KarmarkarKarp8192x1024(benchmark::State& state) {
  const auto samples = synthetic_samples(SyntheticMix::mllm_like, kMaxDifferencingEntries / kMllmRanks, 1);
  const SampleCostModel costs = cost_model(8192);
  std::vector<double> time;
  for (const SampleTokens& s : samples) time.push_back(sample_cost(costs, s).total_s());
  for (auto _ : state) benchmark::DoNotOptimize(assign_largest_differencing(time, kMllmRanks).data());
}
BENCHMARK(BM_KarmarkarKarp8192x1024)->Unit(benchmark::kMillisecond);

void BM_MicrobatchOrder8Stages64(benchmark::State& state) {
  std::vector<double> time;
  for (int k = 0; k < 64; ++k) time.push_back(1.0 + (k * 37 % 64) / 16.0);
  PipelineSimulator sim;
  for (auto _ : state) benchmark::DoNotOptimize(order_microbatches(time, 8, sim).makespan_s);
}
BENCHMARK(BM_MicrobatchOrder8Stages64)->Unit(benchmark::kMicrosecond);

void BM_CpShardingChoice(benchmark::State& state) {
  const auto samples = synthetic_samples(SyntheticMix::wlb_like, 40, 2);
  std::vector<std::int64_t> documents;
  for (const SampleTokens& s : samples) documents.push_back(s.text_tokens[0]);
  const SpanCost cost = cost_model(kWlbCapTokens).backbone;
  for (auto _ : state) benchmark::DoNotOptimize(choose_cp_sharding(documents, 8, cost).per_document_s);
}
BENCHMARK(BM_CpShardingChoice)->Unit(benchmark::kMicrosecond);

}  // namespace

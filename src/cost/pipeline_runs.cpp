#include "cost/pipeline_runs.h"

#include <bit>
#include <cstdint>
#include <unordered_map>
#include <utility>

namespace tessera {

PipelineSimulator& thread_pipeline_simulator() {
  thread_local PipelineSimulator sim;
  return sim;
}

PipelineCosts& thread_simulation_costs() {
  thread_local PipelineCosts costs;
  return costs;
}

double simulate_into(const PipelineCosts& costs, Timeline& timeline, double& pipeline_s) {
  timeline = thread_pipeline_simulator().run(costs);
  pipeline_s = timeline.pipeline_makespan_s;
  return timeline.makespan_s;
}

double memoised_makespan(const PipelineCosts& costs, double& pipeline_s) {
  constexpr std::size_t kMaxEntries = 1 << 14;
  thread_local std::unordered_map<std::uint64_t, std::pair<double, double>> memo;
  std::uint64_t hash = 1469598103934665603ULL;
  auto mix = [&hash](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      hash ^= (v >> (8 * i)) & 0xFF;
      hash *= 1099511628211ULL;
    }
  };
  auto mix_double = [&mix](double d) { mix(std::bit_cast<std::uint64_t>(d)); };
  mix(static_cast<std::uint64_t>(costs.schedule));
  mix(static_cast<std::uint64_t>(costs.stages));
  mix(static_cast<std::uint64_t>(costs.microbatches));
  mix(static_cast<std::uint64_t>(costs.chunks));
  mix(costs.dp_sync_overlap ? 1 : 0);
  const std::size_t m = static_cast<std::size_t>(costs.microbatches);
  for (std::size_t k = 0; k < costs.virtual_stages(); ++k) {
    mix_double(costs.forward_s[k * m]);
    mix_double(costs.backward_s[k * m]);
  }
  for (double v : costs.p2p_s) mix_double(v);
  for (double v : costs.dp_sync_s) mix_double(v);
  mix(costs.dp_sync_tail_s.size());
  for (double v : costs.dp_sync_tail_s) mix_double(v);
  if (const auto it = memo.find(hash); it != memo.end()) {
    pipeline_s = it->second.second;
    return it->second.first;
  }
  const double with_sync = thread_pipeline_simulator().makespan(costs, &pipeline_s);
  if (memo.size() >= kMaxEntries) memo.clear();
  memo.emplace(hash, std::make_pair(with_sync, pipeline_s));
  return with_sync;
}

}  // namespace tessera

#include "balance/microbatch_order.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "schedule/pipeline_schedule.h"

namespace tessera {

namespace {

std::vector<std::int32_t> by_time(std::span<const double> time_s) {
  std::vector<std::int32_t> order(time_s.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return time_s[static_cast<std::size_t>(a)] < time_s[static_cast<std::size_t>(b)];
  });
  return order;
}

std::vector<std::int32_t> heuristic_order(std::span<const double> time_s, int stages) {
  const std::vector<std::int32_t> rising = by_time(time_s);
  const std::size_t m = rising.size();
  const std::size_t p = static_cast<std::size_t>(stages);
  std::vector<std::int32_t> order;
  order.reserve(m);
  if (p == 1) return rising;  // one stage: every order takes the sum
  if (m <= p) {  // no steady state: smallest first, then decreasing
    order.push_back(rising[0]);
    for (std::size_t k = m; k-- > 1;) order.push_back(rising[k]);
    return order;
  }
  order.push_back(rising[0]);
  std::vector<std::int32_t> middle(rising.begin() + static_cast<std::ptrdiff_t>(p), rising.end());  // increasing
  double middle_sum = 0;
  for (std::int32_t j : middle) middle_sum += time_s[static_cast<std::size_t>(j)];
  const double pair_target = 2.0 * middle_sum / static_cast<double>(middle.size());
  while (!middle.empty()) {
    const std::size_t position = order.size();
    const double partner = position >= p - 1 ? time_s[static_cast<std::size_t>(order[position - (p - 1)])]
                                             : pair_target / 2.0;
    const double want = pair_target - partner;
    std::size_t best = 0;
    for (std::size_t k = 1; k < middle.size(); ++k)
      if (std::fabs(time_s[static_cast<std::size_t>(middle[k])] - want) <
          std::fabs(time_s[static_cast<std::size_t>(middle[best])] - want))
        best = k;
    order.push_back(middle[best]);
    middle.erase(middle.begin() + static_cast<std::ptrdiff_t>(best));
  }
  for (std::size_t k = p; k-- > 1;) order.push_back(rising[k]);
  return order;
}

}  // namespace

double pipeline_makespan_s(std::span<const double> time_s, std::span<const std::int32_t> order, int stages,
                           PipelineSimulator& simulator) {
  const int m = static_cast<int>(order.size());
  PipelineCosts costs;
  costs.schedule = Schedule::one_f_one_b;
  costs.stages = stages;
  costs.microbatches = m;
  costs.chunks = 1;
  costs.forward_s.resize(static_cast<std::size_t>(stages) * m);
  costs.backward_s.resize(costs.forward_s.size());
  costs.p2p_s.assign(static_cast<std::size_t>(stages), 0.0);
  const double forward_share = 1.0 / (static_cast<double>(stages) * (1.0 + kPipelineBackwardOverForward));
  for (int s = 0; s < stages; ++s)
    for (int k = 0; k < m; ++k) {
      const std::size_t at = static_cast<std::size_t>(s) * m + k;
      costs.forward_s[at] = time_s[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] * forward_share;
      costs.backward_s[at] = kPipelineBackwardOverForward * costs.forward_s[at];
    }
  return simulator.makespan(costs);
}

MicrobatchOrder order_microbatches(std::span<const double> time_s, int stages, PipelineSimulator& simulator) {
  validate_schedule_shape(Schedule::one_f_one_b, stages, static_cast<std::int64_t>(time_s.size()), 1);
  std::vector<std::int32_t> given(time_s.size());
  std::iota(given.begin(), given.end(), 0);
  std::vector<std::int32_t> falling = by_time(time_s);
  std::reverse(falling.begin(), falling.end());

  MicrobatchOrder best;
  best.given_makespan_s = pipeline_makespan_s(time_s, given, stages, simulator);
  for (const std::vector<std::int32_t>& candidate : {heuristic_order(time_s, stages), by_time(time_s), falling, given}) {
    const double makespan = candidate == given ? best.given_makespan_s
                                               : pipeline_makespan_s(time_s, candidate, stages, simulator);
    if (best.order.empty() || makespan < best.makespan_s) {
      best.order = candidate;
      best.makespan_s = makespan;
    }
  }
  return best;
}

}  // namespace tessera

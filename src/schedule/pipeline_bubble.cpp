#include "schedule/pipeline_bubble.h"

#include <algorithm>

namespace tessera {

PipelineTimes pipeline_closed_form(double stage_sum_s, double stage_max_s, long microbatches,
                                   long chunks_per_stage, double chunk_bubble_s) {
  PipelineTimes t;
  t.steady_s = static_cast<double>(microbatches) * stage_max_s;
  t.bubble_s = std::max((stage_sum_s - stage_max_s) / static_cast<double>(chunks_per_stage), chunk_bubble_s);
  t.makespan_s = t.steady_s + t.bubble_s;
  return t;
}

}  // namespace tessera

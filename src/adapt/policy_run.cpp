#include "adapt/policy_run.h"

namespace tessera {

std::vector<BatchScheduleEntry> batch_schedule(const PolicyRun& run, const CandidateSet& candidates) {
  std::vector<BatchScheduleEntry> entries;
  for (const RunSegment& s : run.segments)
    entries.push_back(BatchScheduleEntry{s.start_tokens, candidates.candidates[s.candidate].global_batch});
  return entries;
}

}  // namespace tessera

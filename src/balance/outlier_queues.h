// Multi-level outlier queues (WLB-LLM, Wang et al., OSDI'25, §4.1, "outlier document delay"): a
// sample whose backbone tokens reach a level's threshold does not enter the step it arrives in but
// waits in that level's queue until one such sample can go to every slot of a step, so no single
// slot carries a long document alone while the others idle.
//
// Release rule (Tessera's): within a level, the oldest waiting sample leaves with its nearest
// neighbours in predicted time (one per slot) once that group is balanceable: the slowest member
// minus each other member is at most what the short samples that fill the rest of that member's
// slot (max_tokens - its tokens, at filler_s_per_token) can make up. A sample that has waited
// max_wait_steps leaves with its neighbours whether or not they balance (the group may then be
// smaller than the slots), so no queued sample waits longer than max_wait_steps: every due group
// leaves, plus at most one balanceable group per step. release_all empties the queues (the end of
// the stream: nothing new will come to balance them).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

struct OutlierPolicy {
  std::vector<std::int64_t> level_min_tokens;  // ascending thresholds, one per queue
  int max_wait_steps = 0;
};

// Two levels, at 1/4 and 1/2 of the slot's token cap, and at most 16 steps of waiting (Tessera's
// choice: on wlb-like, 1 x 4 slots of 128K tokens, 1,000 steps, mean imbalance 1.018 at a mean
// delay of 0.28 step; 10 steps of waiting give 1.032 at 0.24, 24 give 1.011 at 0.36).
inline constexpr std::int64_t kOutlierLevelDivisors[] = {4, 2};
inline constexpr int kDefaultMaxWaitSteps = 16;
OutlierPolicy default_outlier_policy(std::int64_t max_tokens);

struct QueuedItem {
  std::int64_t item = 0;
  std::int64_t tokens = 0;
  double time_s = 0;
  int arrival_step = 0;
};
// Arrival order: the earlier step first, then the lower item id (a total order, so ties are stable).
inline bool queued_earlier(const QueuedItem& a, const QueuedItem& b) {
  return a.arrival_step != b.arrival_step ? a.arrival_step < b.arrival_step : a.item < b.item;
}

class OutlierQueues {
 public:
  explicit OutlierQueues(OutlierPolicy policy);

  // The queue a sample of `tokens` waits in, or -1 when it is not an outlier.
  int level_of(std::int64_t tokens) const;
  void push(const QueuedItem& item, int level);
  // Appends to `out` every due group, then at most one balanceable group (the release rule above).
  // Work: O(queued x (queued / slots + 1)).
  void release(int step, int slots, std::int64_t max_tokens, double filler_s_per_token, std::vector<QueuedItem>& out);
  void release_all(std::vector<QueuedItem>& out);
  // Appends the group of the oldest waiting sample, balanceable or not (a queue that is full).
  void release_oldest(int slots, std::int64_t max_tokens, double filler_s_per_token, std::vector<QueuedItem>& out);

  std::size_t size() const;
  int levels_used() const;  // queues that have ever held a sample
  void append_waiting(std::vector<std::int64_t>& items) const;  // every waiting sample, level by level

 private:
  struct Window {
    std::size_t begin = 0, size = 0;
    double shortfall_s = 0;  // <= 0: balanceable
  };
  Window best_window(const std::vector<QueuedItem>& level, int slots, std::int64_t max_tokens,
                     double filler_s_per_token) const;
  void settle();  // merges the samples pushed since the last release into their levels
  void take(std::size_t level, const Window& window, std::vector<QueuedItem>& out);

  OutlierPolicy policy_;
  std::vector<std::vector<QueuedItem>> levels_;  // each kept in increasing (time, item) once settled
  std::vector<std::vector<QueuedItem>> pending_;  // pushed, not yet merged (a push is O(1))
  std::vector<bool> used_;
};

}  // namespace tessera

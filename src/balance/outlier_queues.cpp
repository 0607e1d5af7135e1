#include "balance/outlier_queues.h"

#include <algorithm>
#include <limits>

namespace tessera {

namespace {
bool faster(const QueuedItem& a, const QueuedItem& b) {
  return a.time_s != b.time_s ? a.time_s < b.time_s : a.item < b.item;
}
bool older(const QueuedItem& a, const QueuedItem& b) {
  return a.arrival_step != b.arrival_step ? a.arrival_step < b.arrival_step : a.item < b.item;
}
std::size_t oldest_index(const std::vector<QueuedItem>& level) {
  return static_cast<std::size_t>(std::min_element(level.begin(), level.end(), older) - level.begin());
}
}  // namespace

OutlierPolicy default_outlier_policy(std::int64_t max_tokens) {
  OutlierPolicy policy;
  for (std::int64_t divisor : kOutlierLevelDivisors) policy.level_min_tokens.push_back(max_tokens / divisor);
  policy.max_wait_steps = kDefaultMaxWaitSteps;
  return policy;
}

OutlierQueues::OutlierQueues(OutlierPolicy policy)
    : policy_(std::move(policy)), levels_(policy_.level_min_tokens.size()), used_(policy_.level_min_tokens.size()) {}

int OutlierQueues::level_of(std::int64_t tokens) const {
  int level = -1;
  for (std::size_t k = 0; k < policy_.level_min_tokens.size(); ++k)
    if (tokens >= policy_.level_min_tokens[k]) level = static_cast<int>(k);
  return level;
}

void OutlierQueues::push(const QueuedItem& item, int level) {
  auto& queue = levels_[static_cast<std::size_t>(level)];
  queue.insert(std::upper_bound(queue.begin(), queue.end(), item, faster), item);
  used_[static_cast<std::size_t>(level)] = true;
}

OutlierQueues::Window OutlierQueues::best_window(const std::vector<QueuedItem>& level, int slots,
                                                 std::int64_t max_tokens, double filler_s_per_token) const {
  const std::size_t oldest = oldest_index(level);
  const std::size_t size = std::min(level.size(), static_cast<std::size_t>(slots));
  const std::size_t first = oldest + 1 >= size ? oldest + 1 - size : 0;
  const std::size_t last = std::min(oldest, level.size() - size);
  Window best{first, size, std::numeric_limits<double>::infinity()};
  for (std::size_t begin = first; begin <= last; ++begin) {
    const double slowest = level[begin + size - 1].time_s;
    double shortfall = -std::numeric_limits<double>::infinity();
    for (std::size_t k = begin; k < begin + size; ++k) {
      const double room_s = static_cast<double>(max_tokens - level[k].tokens) * filler_s_per_token;
      shortfall = std::max(shortfall, slowest - level[k].time_s - room_s);
    }
    if (shortfall < best.shortfall_s) best = {begin, size, shortfall};
  }
  return best;
}

void OutlierQueues::release(int step, int slots, std::int64_t max_tokens, double filler_s_per_token,
                            std::vector<QueuedItem>& out) {
  std::size_t chosen = levels_.size();
  Window window;
  QueuedItem chosen_oldest;
  for (std::size_t k = 0; k < levels_.size(); ++k) {
    const auto& level = levels_[k];
    if (level.empty()) continue;
    const QueuedItem& oldest = level[oldest_index(level)];
    const bool due = step - oldest.arrival_step >= policy_.max_wait_steps;
    const bool full = level.size() >= static_cast<std::size_t>(slots);
    if (!due && !full) continue;
    const Window w = best_window(level, slots, max_tokens, filler_s_per_token);
    if (!due && w.shortfall_s > 0) continue;
    if (chosen == levels_.size() || older(oldest, chosen_oldest)) {
      chosen = k;
      window = w;
      chosen_oldest = oldest;
    }
  }
  if (chosen == levels_.size()) return;
  auto& level = levels_[chosen];
  const auto begin = level.begin() + static_cast<std::ptrdiff_t>(window.begin);
  const auto end = begin + static_cast<std::ptrdiff_t>(window.size);
  out.insert(out.end(), begin, end);
  level.erase(begin, end);
}

std::size_t OutlierQueues::size() const {
  std::size_t total = 0;
  for (const auto& level : levels_) total += level.size();
  return total;
}

int OutlierQueues::levels_used() const {
  return static_cast<int>(std::count(used_.begin(), used_.end(), true));
}

void OutlierQueues::append_waiting(std::vector<std::int64_t>& items) const {
  for (const auto& level : levels_)
    for (const QueuedItem& q : level) items.push_back(q.item);
}

}  // namespace tessera

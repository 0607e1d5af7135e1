#include "balance/outlier_queues.h"

#include <algorithm>
#include <deque>
#include <limits>

namespace tessera {

namespace {
bool faster(const QueuedItem& a, const QueuedItem& b) {
  return a.time_s != b.time_s ? a.time_s < b.time_s : a.item < b.item;
}
std::size_t oldest_index(const std::vector<QueuedItem>& level) {
  return static_cast<std::size_t>(std::min_element(level.begin(), level.end(), queued_earlier) - level.begin());
}
}  // namespace

OutlierPolicy default_outlier_policy(std::int64_t max_tokens) {
  OutlierPolicy policy;
  for (std::int64_t divisor : kOutlierLevelDivisors) policy.level_min_tokens.push_back(max_tokens / divisor);
  policy.max_wait_steps = kDefaultMaxWaitSteps;
  return policy;
}

OutlierQueues::OutlierQueues(OutlierPolicy policy)
    : policy_(std::move(policy)),
      levels_(policy_.level_min_tokens.size()),
      pending_(policy_.level_min_tokens.size()),
      used_(policy_.level_min_tokens.size()) {}

int OutlierQueues::level_of(std::int64_t tokens) const {
  int level = -1;
  for (std::size_t k = 0; k < policy_.level_min_tokens.size(); ++k)
    if (tokens >= policy_.level_min_tokens[k]) level = static_cast<int>(k);
  return level;
}

void OutlierQueues::push(const QueuedItem& item, int level) {
  pending_[static_cast<std::size_t>(level)].push_back(item);
  used_[static_cast<std::size_t>(level)] = true;
}

void OutlierQueues::settle() {
  for (std::size_t k = 0; k < levels_.size(); ++k) {
    auto& fresh = pending_[k];
    if (fresh.empty()) continue;
    auto& level = levels_[k];
    std::sort(fresh.begin(), fresh.end(), faster);
    const auto middle = static_cast<std::ptrdiff_t>(level.size());
    level.insert(level.end(), fresh.begin(), fresh.end());
    std::inplace_merge(level.begin(), level.begin() + middle, level.end(), faster);
    fresh.clear();
  }
}

// The shortfall of window [b, b + size) is its slowest member minus the least of (time + filler
// room) over its members: a sliding-window minimum (monotone deque), O(level) for all windows.
OutlierQueues::Window OutlierQueues::best_window(const std::vector<QueuedItem>& level, int slots,
                                                 std::int64_t max_tokens, double filler_s_per_token) const {
  const std::size_t oldest = oldest_index(level);
  const std::size_t size = std::min(level.size(), static_cast<std::size_t>(slots));
  const std::size_t first = oldest + 1 >= size ? oldest + 1 - size : 0;
  const std::size_t last = std::min(oldest, level.size() - size);
  auto reach_s = [&](std::size_t k) {
    return level[k].time_s + static_cast<double>(max_tokens - level[k].tokens) * filler_s_per_token;
  };
  Window best{first, size, std::numeric_limits<double>::infinity()};
  std::deque<std::size_t> lowest;  // indices of increasing reach_s: front = the window's minimum
  for (std::size_t k = first; k < last + size; ++k) {
    while (!lowest.empty() && reach_s(lowest.back()) >= reach_s(k)) lowest.pop_back();
    lowest.push_back(k);
    if (k + 1 < first + size) continue;
    const std::size_t begin = k + 1 - size;
    while (lowest.front() < begin) lowest.pop_front();
    const double shortfall = level[k].time_s - reach_s(lowest.front());
    if (shortfall < best.shortfall_s) best = {begin, size, shortfall};
  }
  return best;
}

void OutlierQueues::take(std::size_t level, const Window& window, std::vector<QueuedItem>& out) {
  auto& queue = levels_[level];
  const auto begin = queue.begin() + static_cast<std::ptrdiff_t>(window.begin);
  const auto end = begin + static_cast<std::ptrdiff_t>(window.size);
  out.insert(out.end(), begin, end);
  queue.erase(begin, end);
}

void OutlierQueues::release(int step, int slots, std::int64_t max_tokens, double filler_s_per_token,
                            std::vector<QueuedItem>& out) {
  settle();
  auto due = [&](const std::vector<QueuedItem>& level) {
    return !level.empty() && step - level[oldest_index(level)].arrival_step >= policy_.max_wait_steps;
  };
  for (std::size_t k = 0; k < levels_.size(); ++k)
    while (due(levels_[k])) take(k, best_window(levels_[k], slots, max_tokens, filler_s_per_token), out);

  std::size_t chosen = levels_.size();
  Window window;
  QueuedItem chosen_oldest;
  for (std::size_t k = 0; k < levels_.size(); ++k) {
    const auto& level = levels_[k];
    if (level.size() < static_cast<std::size_t>(slots)) continue;
    const Window w = best_window(level, slots, max_tokens, filler_s_per_token);
    if (w.shortfall_s > 0) continue;
    const QueuedItem& oldest = level[oldest_index(level)];
    if (chosen == levels_.size() || queued_earlier(oldest, chosen_oldest)) {
      chosen = k;
      window = w;
      chosen_oldest = oldest;
    }
  }
  if (chosen < levels_.size()) take(chosen, window, out);
}

void OutlierQueues::release_oldest(int slots, std::int64_t max_tokens, double filler_s_per_token,
                                   std::vector<QueuedItem>& out) {
  settle();
  std::size_t chosen = levels_.size();
  for (std::size_t k = 0; k < levels_.size(); ++k)
    if (!levels_[k].empty() &&
        (chosen == levels_.size() ||
         queued_earlier(levels_[k][oldest_index(levels_[k])], levels_[chosen][oldest_index(levels_[chosen])])))
      chosen = k;
  if (chosen < levels_.size()) take(chosen, best_window(levels_[chosen], slots, max_tokens, filler_s_per_token), out);
}

void OutlierQueues::release_all(std::vector<QueuedItem>& out) {
  settle();
  for (auto& level : levels_) {
    out.insert(out.end(), level.begin(), level.end());
    level.clear();
  }
}

std::size_t OutlierQueues::size() const {
  std::size_t total = 0;
  for (std::size_t k = 0; k < levels_.size(); ++k) total += levels_[k].size() + pending_[k].size();
  return total;
}

int OutlierQueues::levels_used() const {
  return static_cast<int>(std::count(used_.begin(), used_.end(), true));
}

void OutlierQueues::append_waiting(std::vector<std::int64_t>& items) const {
  for (std::size_t k = 0; k < levels_.size(); ++k) {
    for (const QueuedItem& q : levels_[k]) items.push_back(q.item);
    for (const QueuedItem& q : pending_[k]) items.push_back(q.item);
  }
}

}  // namespace tessera

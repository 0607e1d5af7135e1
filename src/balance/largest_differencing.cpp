#include "balance/largest_differencing.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace tessera {

namespace {

constexpr std::int32_t kNoItem = -1;

// One subset of a tuple: its sum and its items as a linked list (head .. tail through next[]).
struct Subset {
  double sum;
  std::int32_t head;
  std::int32_t tail;
};

struct Spread {
  double spread;
  std::int32_t tuple;
};

// Max-heap on spread; among equal spreads the lower tuple first.
bool narrower(const Spread& a, const Spread& b) {
  return a.spread != b.spread ? a.spread < b.spread : a.tuple > b.tuple;
}

// Subsets in decreasing sum; equal sums by their first item (empty subsets last).
bool fuller(const Subset& a, const Subset& b) {
  if (a.sum != b.sum) return a.sum > b.sum;
  return static_cast<std::uint32_t>(a.head) < static_cast<std::uint32_t>(b.head);
}

// The starting tuples: one per item (its cost and m - 1 empty subsets), or with equal counts one
// per run of m items in decreasing cost (one item per subset, the last run padded with empties).
std::size_t initial_tuples(std::span<const double> cost, std::size_t m, bool equal_count,
                           std::vector<Subset>& tuples, std::vector<Spread>& heap) {
  const std::size_t n = cost.size();
  std::vector<std::int32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::int32_t>(i);
  if (equal_count)
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
      return cost[static_cast<std::size_t>(a)] > cost[static_cast<std::size_t>(b)];
    });
  const std::size_t per_tuple = equal_count ? m : 1;
  const std::size_t count = (n + per_tuple - 1) / per_tuple;
  tuples.assign(count * m, Subset{0.0, kNoItem, kNoItem});
  heap.reserve(count);
  for (std::size_t t = 0; t < count; ++t) {
    for (std::size_t k = 0; k < per_tuple && t * per_tuple + k < n; ++k) {
      const std::int32_t item = order[t * per_tuple + k];
      tuples[t * m + k] = {cost[static_cast<std::size_t>(item)], item, item};
    }
    heap.push_back({tuples[t * m].sum - tuples[t * m + m - 1].sum, static_cast<std::int32_t>(t)});
  }
  std::make_heap(heap.begin(), heap.end(), narrower);
  return count;
}

}  // namespace

std::vector<std::int32_t> assign_largest_differencing(std::span<const double> cost, int slots,
                                                      bool equal_count) {
  const std::size_t n = cost.size();
  const auto m = static_cast<std::size_t>(slots);
  if (static_cast<double>(n) * static_cast<double>(m) > static_cast<double>(kMaxDifferencingEntries))
    throw Error("method", "kk holds items x slots = " + std::to_string(n) + " x " + std::to_string(m) +
                              " subset sums, more than " + std::to_string(kMaxDifferencingEntries),
                "lpt for larger batches");
  std::vector<std::int32_t> slot_of(n, 0);
  if (n == 0) return slot_of;

  std::vector<Subset> tuples;  // tuple t: tuples[t * m .. t * m + m), decreasing sums
  std::vector<std::int32_t> next(n, kNoItem);
  std::vector<Spread> heap;
  initial_tuples(cost, m, equal_count, tuples, heap);

  std::vector<Subset> merged(m);
  while (heap.size() > 1) {
    std::pop_heap(heap.begin(), heap.end(), narrower);
    const std::size_t a = static_cast<std::size_t>(heap.back().tuple) * m;
    heap.pop_back();
    std::pop_heap(heap.begin(), heap.end(), narrower);
    const std::size_t b = static_cast<std::size_t>(heap.back().tuple) * m;
    heap.pop_back();
    // The k-th largest of a with the k-th smallest of b.
    for (std::size_t k = 0; k < m; ++k) {
      const Subset& x = tuples[a + k];
      const Subset& y = tuples[b + m - 1 - k];
      Subset s{x.sum + y.sum, x.head, x.tail};
      if (y.head != kNoItem) {
        if (s.head == kNoItem) {
          s.head = y.head;
        } else {
          next[static_cast<std::size_t>(s.tail)] = y.head;
        }
        s.tail = y.tail;
      }
      merged[k] = s;
    }
    std::sort(merged.begin(), merged.end(), fuller);
    std::copy(merged.begin(), merged.end(), tuples.begin() + static_cast<std::ptrdiff_t>(a));
    heap.push_back({merged.front().sum - merged.back().sum, static_cast<std::int32_t>(a / m)});
    std::push_heap(heap.begin(), heap.end(), narrower);
  }

  const std::size_t last = static_cast<std::size_t>(heap.front().tuple) * m;
  for (std::size_t k = 0; k < m; ++k)
    for (std::int32_t item = tuples[last + k].head; item != kNoItem; item = next[static_cast<std::size_t>(item)])
      slot_of[static_cast<std::size_t>(item)] = static_cast<std::int32_t>(k);
  return slot_of;
}

}  // namespace tessera

// Largest differencing (Karmarkar & Karp 1982, "The differencing method of set partitioning",
// UC Berkeley UCB/CSD 82/113), m-way form as Korf describes it ("Multi-way number partitioning",
// IJCAI 2009, §2.2): every item starts as an m-tuple of subset sums (its cost and m - 1 zeros);
// repeatedly take the two tuples with the largest spread (largest - smallest sum) and merge them,
// the largest sum of one with the smallest of the other, until one tuple remains: its m subsets
// are the slots. Tighter than longest processing time on most inputs; O(n m log m) time and n x m
// memory, so it is refused above kMaxDifferencingEntries.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

// items x slots bound: 8 M tuple entries of 16 bytes (128 MiB).
inline constexpr std::int64_t kMaxDifferencingEntries = 1LL << 23;

// slot_of[i] = the slot of item i. Throws Error("method", ...) when items x slots is above
// kMaxDifferencingEntries. Ties go to the lower index: a pure function of the input.
//
// equal_count: the balanced form (Zhang, Mouratidis & Pang, "Heuristic algorithms for balanced
// multi-way number partitioning", IJCAI 2011, §3, BLDM): items sorted by decreasing cost are cut
// into runs of `slots`, each run one tuple with one item per subset; every merge then adds one
// subset of each tuple to one subset of the other, so each slot ends with one item of every run:
// slot counts differ by at most one.
std::vector<std::int32_t> assign_largest_differencing(std::span<const double> cost, int slots,
                                                      bool equal_count = false);

}  // namespace tessera

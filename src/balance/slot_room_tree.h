// The room left in each slot of a step (tokens under the cap), as a max segment tree: the largest
// room in O(1), the lowest slot with at least t tokens of room and an update in O(log slots).
// First fit and the capped greedy use it so that a sample that fits nowhere costs O(1), not a
// scan of every slot (a step may have a million slots).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

class SlotRoomTree {
 public:
  void reset(int slots, std::int64_t room_each);
  std::int64_t largest_room() const { return tree_[1]; }
  std::int64_t room(int slot) const { return tree_[leaves_ + static_cast<std::size_t>(slot)]; }
  // The lowest slot with room >= tokens, or -1.
  int first_with_room(std::int64_t tokens) const;
  void take(int slot, std::int64_t tokens);

 private:
  std::size_t leaves_ = 1;
  std::vector<std::int64_t> tree_;  // tree_[1] the root; leaves at [leaves_, 2 leaves_); padding -1
};

}  // namespace tessera

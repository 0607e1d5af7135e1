#include "balance/slot_room_tree.h"

#include <algorithm>

namespace tessera {

namespace {
constexpr std::int64_t kNoSlot = -1;  // room of the padding leaves: nothing fits there
}

void SlotRoomTree::reset(int slots, std::int64_t room_each) {
  leaves_ = 1;
  while (leaves_ < static_cast<std::size_t>(slots)) leaves_ *= 2;
  tree_.assign(2 * leaves_, kNoSlot);
  std::fill(tree_.begin() + static_cast<std::ptrdiff_t>(leaves_),
            tree_.begin() + static_cast<std::ptrdiff_t>(leaves_) + slots, room_each);
  for (std::size_t v = leaves_ - 1; v >= 1; --v) tree_[v] = std::max(tree_[2 * v], tree_[2 * v + 1]);
}

int SlotRoomTree::first_with_room(std::int64_t tokens) const {
  if (tree_[1] < tokens) return -1;
  std::size_t v = 1;
  while (v < leaves_) v = tree_[2 * v] >= tokens ? 2 * v : 2 * v + 1;
  return static_cast<int>(v - leaves_);
}

void SlotRoomTree::take(int slot, std::int64_t tokens) {
  std::size_t v = leaves_ + static_cast<std::size_t>(slot);
  tree_[v] -= tokens;
  for (v /= 2; v >= 1; v /= 2) tree_[v] = std::max(tree_[2 * v], tree_[2 * v + 1]);
}

}  // namespace tessera

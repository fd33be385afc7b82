// Counter: which positions of [0, size) are marked, with counts of the
// marked positions below any point (not public API).
//
//   positions   0 1 2 3 4 5 6 7 8 9
//   marked        x   x x     x
//   Before(5) = 3  (positions 1, 3, 4)     Before(10) = 4
//
// The gap index keeps two: the placed buffers by the rank of their start
// and by the rank of their end. The placed buffers alive during a lifetime
// are those that start before its end, less those that end by its start:
// two Before() calls.
//
// How it works:
//   1. A bit per position, 64 to a word.
//   2. A Fenwick tree over the words holds how many bits each word has set.
//   3. Mark sets a bit and adds 1 along the tree: O(log(size / 64)).
//   4. Before(end) adds the tree's prefix sum of the words below end's word
//      to a popcount of the bits below end inside that word.
// The tree is 64 times smaller than one over the positions, so its walks
// stay in cache. Limits: a position is marked at most once (marking it
// again counts it twice) and never unmarked.

#ifndef MEMPLAN_PLACEMENT_COUNTER_H_
#define MEMPLAN_PLACEMENT_COUNTER_H_

#include <bit>
#include <cstdint>
#include <vector>

namespace memplan::internal {

class Counter {
 public:
  // Positions [0, size), none marked.
  explicit Counter(int32_t size)
      : bits_(size / 64 + 1, 0), words_(bits_.size() + 1, 0) {}

  // Marks `position` (not marked yet).
  void Mark(int32_t position) {
    bits_[position / 64] |= uint64_t{1} << (position % 64);
    for (int32_t i = position / 64 + 1; i < static_cast<int32_t>(words_.size());
         i += i & -i) {
      ++words_[i];
    }
  }

  // Marked positions in [0, end), 0 <= end <= size.
  int64_t Before(int32_t end) const {
    int64_t total =
        std::popcount(bits_[end / 64] & ((uint64_t{1} << (end % 64)) - 1));
    for (int32_t i = end / 64; i > 0; i -= i & -i) total += words_[i];
    return total;
  }

 private:
  std::vector<uint64_t> bits_;
  std::vector<int32_t> words_;  // Fenwick tree over the words of bits_
};

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_COUNTER_H_

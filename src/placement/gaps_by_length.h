// GapsByLength: the free gaps between the runs of a run set, grouped by
// length (not public API).
//
//   offset  0    10        30   35        60      80
//           |free|run      |free|run      |free   |run ...
//   gaps:   owner 10, length 10;  owner 35, length 5;  owner 80, length 20
//
// A gap is keyed by its owner, the begin of the run above it (the space
// above the last run is no gap). When the run below grows into the gap the
// owner stays put and only the length changes. The best-fit searches of
// the gap index ask for the gaps at least as long as a buffer, shortest
// first: the classes from ClassOf(size) on.
//
// How it works:
//   1. Lengths fall in classes of four per power of two: class
//      4 * bit_width(length) + the two bits below the leading one. The
//      lengths of one class are within 25 % of each other; classes are in
//      order of length.
//   2. Each class is an unordered vector of gaps, and a bit per class says
//      whether it holds any: NextClass finds the next non-empty class by a
//      scan of four words.
//   3. A hash map from owner to (class, index) finds a gap: Resize within
//      its class is one lookup, a move to another class appends it there
//      and fills its old place with the class's last gap.
// Limits: no order within a class (a search takes a class whole and
// checks each gap's exact length); owners must be distinct.

#ifndef MEMPLAN_PLACEMENT_GAPS_BY_LENGTH_H_
#define MEMPLAN_PLACEMENT_GAPS_BY_LENGTH_H_

#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "memplan/types.h"

namespace memplan::internal {

class GapsByLength {
 public:
  struct Gap {
    Offset owner;  // the begin of the run above
    Bytes length;
    Offset begin() const { return owner - length; }
  };
  static constexpr int kClasses = 256;

  // The class of a gap of `length` bytes (> 0).
  static int ClassOf(Bytes length) {
    const int bits = std::bit_width(static_cast<uint64_t>(length));
    if (bits < 3) return bits << 2;
    return (bits << 2) |
           static_cast<int>((static_cast<uint64_t>(length) >> (bits - 3)) & 3);
  }
  // The shortest length of class `c`.
  static Bytes ClassMin(int c) {
    const int bits = c >> 2;
    if (bits < 3) return Bytes{1} << (bits - 1);
    return Bytes{4 | (c & 3)} << (bits - 3);
  }

  // A new gap of `length` bytes (> 0) below the run that begins at `owner`.
  void Add(Offset owner, Bytes length) {
    where_[owner] = Append({owner, length});
  }
  // The gap below `owner` (present) is gone.
  void Remove(Offset owner) {
    auto it = where_.find(owner);
    const uint64_t at = it->second;
    where_.erase(it);
    RemoveAt(static_cast<int>(at >> 32), static_cast<uint32_t>(at));
  }
  // The gap below `owner` (present) is now `length` bytes (> 0) long.
  void Resize(Offset owner, Bytes length) {
    auto it = where_.find(owner);
    const int c = static_cast<int>(it->second >> 32);
    const auto i = static_cast<uint32_t>(it->second);
    const int to = ClassOf(length);
    if (to == c) {
      buckets_[c][i].length = length;
      return;
    }
    it->second = Append({owner, length});
    RemoveAt(c, i);
  }
  // No gaps.
  void Clear();

  // The first class at or after `c` that holds a gap, kClasses when none.
  int NextClass(int c) const {
    for (; c < kClasses; c = (c | 63) + 1) {
      const uint64_t word = nonempty_[c >> 6] >> (c & 63);
      if (word != 0) return c + std::countr_zero(word);
    }
    return kClasses;
  }
  // The gaps of class `c`, in no particular order.
  std::span<const Gap> Class(int c) const { return buckets_[c]; }

  // How many gaps are `size` bytes or longer, counted up to `limit` + 1.
  int32_t CountAtLeast(Bytes size, int32_t limit) const;

 private:
  static uint64_t Pack(int c, size_t i) {
    return (static_cast<uint64_t>(c) << 32) | static_cast<uint32_t>(i);
  }
  // Puts `gap` at the end of its class; returns where (for where_).
  uint64_t Append(const Gap& gap) {
    const int c = ClassOf(gap.length);
    buckets_[c].push_back(gap);
    nonempty_[c >> 6] |= uint64_t{1} << (c & 63);
    return Pack(c, buckets_[c].size() - 1);
  }
  void RemoveAt(int c, uint32_t i) {
    std::vector<Gap>& bucket = buckets_[c];
    if (i + 1 != bucket.size()) {
      bucket[i] = bucket.back();
      where_[bucket[i].owner] = Pack(c, i);
    }
    bucket.pop_back();
    if (bucket.empty()) nonempty_[c >> 6] &= ~(uint64_t{1} << (c & 63));
  }

  std::array<std::vector<Gap>, kClasses> buckets_;
  std::array<uint64_t, kClasses / 64> nonempty_ = {};
  absl::flat_hash_map<Offset, uint64_t> where_;  // owner -> (class, index)
};

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_GAPS_BY_LENGTH_H_

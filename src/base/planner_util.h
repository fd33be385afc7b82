// Small helpers shared by the planners and the core (not public API).

#ifndef MEMPLAN_BASE_PLANNER_UTIL_H_
#define MEMPLAN_BASE_PLANNER_UTIL_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "effort/budget.h"
#include "memplan/planner.h"
#include "memplan/types.h"

namespace memplan::internal {

// `value` rounded up to a multiple of `alignment` (a power of two, >= 1).
// The caller guarantees no overflow (sizes and offsets are validated).
inline Offset RoundUp(Offset value, Bytes alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

inline bool IsPowerOfTwo(int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

// "buffer "x" (1024 bytes, alive [3, 7))".
std::string DescribeBuffer(const Problem& problem, BufferId buffer);

// The ResourceExhausted error of a buffer that fits in no allowed pool.
// `usage[p]` is the bytes pool p already holds during the buffer's lifetime
// (for instance the highest offset + size among buffers alive then).
absl::Status NoFitError(const Problem& problem, BufferId buffer,
                        std::span<const Bytes> usage);

// A search's start (verified, with its statistics: Incumbent::Get) as the
// search's own plan, when the search returns it unsearched: renamed, and
// proven optimal exactly when the bound proves it (AtTheBound).
Plan StartAsPlanOf(const Problem& problem, Plan start,
                   std::string_view planner);

// Calls visit(node) for the nodes of a perfect binary tree over `leaves`
// leaves (node 1 the root, node v's children 2v and 2v+1, leaf i at
// leaves + i) that together cover the leaves [lo, hi), lo < hi: the largest
// such nodes, at most two per level, in the order a segment tree's range
// query meets them.
template <typename Visit>
void ForEachCoverNode(int32_t leaves, int32_t lo, int32_t hi, Visit&& visit) {
  for (int32_t a = lo + leaves, b = hi + leaves; a < b; a >>= 1, b >>= 1) {
    if (a & 1) visit(a++);
    if (b & 1) visit(--b);
  }
}

// Sorts `items` stably by key(item), an unsigned 64-bit integer: an LSD
// radix sort over the bytes in which the keys differ, a few linear passes
// (at 10^6 items several times faster than a comparison sort). `scratch`
// is working space, kept by callers that sort often.
template <typename T, typename Key>
void RadixSortBy(std::vector<T>& items, std::vector<T>& scratch, Key&& key) {
  uint64_t all_or = 0;
  uint64_t all_and = ~uint64_t{0};
  for (const T& item : items) {
    all_or |= key(item);
    all_and &= key(item);
  }
  const uint64_t varying = all_or ^ all_and;  // bits not shared by all
  if (varying == 0) return;
  scratch.resize(items.size());
  std::vector<T>* from = &items;
  std::vector<T>* to = &scratch;
  for (int shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xff) == 0) continue;
    size_t count[257] = {};
    for (const T& item : *from) ++count[((key(item) >> shift) & 0xff) + 1];
    for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
    for (const T& item : *from)
      (*to)[count[(key(item) >> shift) & 0xff]++] = item;
    std::swap(from, to);
  }
  if (from != &items) items.swap(scratch);
}

// Under a wall-clock limit, set-up that cannot stop halfway (sorting,
// building an index) is begun only when the deadline leaves it time:
// DeadlineExceeded, saying that `what` was not begun, when less than
// `per_buffer` per buffer of `problem` is left before `budget`'s deadline.
// Always OK without a deadline.
absl::Status TimeForSetUp(const Budget& budget, const Problem& problem,
                          absl::Duration per_buffer, std::string_view what);

// What placement's set-up (the PlacementIndex and the sorted order, and on
// dense problems the gap index its first search makes) costs per buffer on
// a typical core: at 10^6 dense training-like buffers about 0.2 us for the
// index and the order and 0.11 us for the gap index, at 10^6 random
// intervals 0.27 us for the index and the order (bench/NOTES.md). The
// margin is kept from when the index and the order took 0.45 us.
inline constexpr absl::Duration kPlacementSetUpPerBuffer =
    absl::Nanoseconds(600);

}  // namespace memplan::internal

#endif  // MEMPLAN_BASE_PLANNER_UTIL_H_

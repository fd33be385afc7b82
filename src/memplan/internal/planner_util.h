// Small helpers shared by the planners and the core (not public API).

#ifndef MEMPLAN_INTERNAL_PLANNER_UTIL_H_
#define MEMPLAN_INTERNAL_PLANNER_UTIL_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
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
// proven optimal exactly when at the lower bound.
Plan StartAsPlanOf(Plan start, std::string_view planner);

// Under a wall-clock limit, set-up that cannot stop halfway (sorting,
// building an index) is begun only when the deadline leaves it time:
// DeadlineExceeded, saying that `what` was not begun, when less than
// `per_buffer` per buffer of `problem` is left before `budget`'s deadline.
// Always OK without a deadline.
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

absl::Status TimeForSetUp(const Budget& budget, const Problem& problem,
                          absl::Duration per_buffer, std::string_view what);

// What placement's set-up (the PlacementIndex and the sorted order, and on
// dense problems the gap index its first search makes) costs per buffer on
// a typical core: at 10^6 dense training-like buffers about 0.45 us for the
// index and the order and 0.11 us for the gap index (bench/NOTES.md).
inline constexpr absl::Duration kPlacementSetUpPerBuffer =
    absl::Nanoseconds(600);

}  // namespace memplan::internal

#endif  // MEMPLAN_INTERNAL_PLANNER_UTIL_H_

// Small helpers shared by the planners and the core (not public API).

#ifndef MEMPLAN_INTERNAL_PLANNER_UTIL_H_
#define MEMPLAN_INTERNAL_PLANNER_UTIL_H_

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
absl::Status TimeForSetUp(const Budget& budget, const Problem& problem,
                          absl::Duration per_buffer, std::string_view what);

// What placement's set-up (the PlacementIndex and the sorted order) costs
// per buffer on a typical core, with room to spare: about 0.3 us measured
// at 10^6 buffers, dense or sparse.
inline constexpr absl::Duration kPlacementSetUpPerBuffer =
    absl::Nanoseconds(600);

}  // namespace memplan::internal

#endif  // MEMPLAN_INTERNAL_PLANNER_UTIL_H_

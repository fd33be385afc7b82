// Small helpers shared by the planners and the core (not public API).

#ifndef MEMPLAN_INTERNAL_PLANNER_UTIL_H_
#define MEMPLAN_INTERNAL_PLANNER_UTIL_H_

#include <span>
#include <string>

#include "absl/status/status.h"
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

}  // namespace memplan::internal

#endif  // MEMPLAN_INTERNAL_PLANNER_UTIL_H_

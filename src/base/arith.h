// Integer arithmetic on sizes and offsets (not public API).

#ifndef MEMPLAN_BASE_ARITH_H_
#define MEMPLAN_BASE_ARITH_H_

#include <cstdint>

namespace memplan::internal {

// `value` rounded up to a multiple of `alignment` (a power of two, >= 1).
// The caller guarantees no overflow (sizes and offsets are validated).
inline int64_t RoundUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

inline bool IsPowerOfTwo(int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

}  // namespace memplan::internal

#endif  // MEMPLAN_BASE_ARITH_H_

// Set-up that cannot stop halfway, under a wall-clock limit (not public
// API; defined in budget.cc).

#ifndef MEMPLAN_EFFORT_SET_UP_H_
#define MEMPLAN_EFFORT_SET_UP_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "effort/budget.h"
#include "memplan/types.h"

namespace memplan::internal {

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

#endif  // MEMPLAN_EFFORT_SET_UP_H_

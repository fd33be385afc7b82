// The cheap pass: what a planner gives when its budget cannot pay for a
// whole greedy pass (not public API; defined in packed.cc).
//
//   offset ^  class 2: [s0: a ][s0: d   ]       every buffer not yet placed
//          |           [s1:   b    ]            goes to a slot of its size
//          |  class 1: [s0: c][s0: e]           class (sizes up to a power
//          |  placed:  ~~~~~~~~~~~~~~~~~~       of two), above the placed
//          +-----------------------------> time ones; a slot is reused once
//                                               its buffer has died.
//
// Sorting and a heap per class: O(r log r) for r buffers, whatever the
// density, so that a deadline or a work limit too short for a greedy pass
// still gets a plan that reuses memory; the naive plan only when the
// packing is larger (every buffer alive at once) or fails.

#ifndef MEMPLAN_PLANNERS_PACKED_H_
#define MEMPLAN_PLANNERS_PACKED_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "memplan/planner.h"
#include "memplan/types.h"

namespace memplan::internal {

// Work units the packing of `buffers` buffers counts: r * bit_width(r) /
// kPackingWorkDivisor (a comparison of its sort costs about a quarter of
// a work unit; S_1's 28526 buffers: about 3 ms).
inline constexpr int64_t kPackingWorkDivisor = 4;
int64_t PackingWork(int64_t buffers);

// What packing takes per buffer on a typical core, sorting, the heaps, the
// naive plan it is compared with, statistics and verification included
// (10^6 short intervals: about 0.35 s).
inline constexpr absl::Duration kPackingPerBuffer = absl::Nanoseconds(500);

// `assignments` (one per buffer, in buffer order) where `placed[b]`, and
// every other buffer packed by size class above the placed ones, in its
// first allowed pool (a buffer with explicit conflicts in a slot of its
// own). The smaller of that plan and the naive one, with its statistics,
// named "naive" when naive's; ResourceExhausted when neither fits the
// capacities. Counters: packed (buffers packed), or naive_plan = 1.
absl::StatusOr<Plan> PackRest(const Problem& problem,
                              std::vector<Assignment> assignments,
                              const std::vector<bool>& placed);

// The packing of every buffer: the planner best and the searches' starts
// fall back on when not even one placement pass can run.
std::unique_ptr<Planner> MakePackedPlanner();

}  // namespace memplan::internal

#endif  // MEMPLAN_PLANNERS_PACKED_H_

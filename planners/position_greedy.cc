// position_greedy: position_based_greedy_with_hierarchy of ExecuTorch's
// Cadence memory planner.
//
//   * Fixed placements first, never moved.
//   * The other buffers in decreasing size; equal sizes keep the buffer order
//     (the original sorts the tensor list with a stable sort on size alone).
//   * For each buffer the offset starts at 0; while a placed buffer it
//     conflicts with overlaps [offset, offset + size), the offset jumps to the
//     end of that buffer (rounded up to the alignment).
//   * Pools in preference order: the first allowed pool where the offset ends
//     under the capacity; ResourceExhausted when none has room.
//
// Every offset a jump passes over overlaps the buffer jumped past, so the
// loop ends at the lowest aligned offset where the buffer fits: the first-fit
// gap search computes that offset directly, in O(k log k) instead of the
// loop's O(k^2) (k = placed buffers alive at the same time). What sets
// position_greedy apart from first_fit is therefore only its order: ties in
// size go by buffer id, not by the earlier start.
//
//   offset ^                      four buffers of equal size, lifetimes
//          |        [  3  ]       0 [0,2), 1 [5,7), 2 [1,4), 3 [3,6).
//          |    [  2  ]           In id order 0 and 1 go to 0, 2 above 0,
//          | [ 0 ]          [ 1 ] 3 above 2 (it overlaps 2 and 1): three
//          +-------------------> time   levels. first_fit (by start: 0, 2,
//                                 3, 1) puts 3 at 0 and 1 above it: two.
//
// Not guaranteed optimal.

#include <memory>

#include "greedy_by_size.h"
#include "planners.h"

namespace memplan::internal {

std::unique_ptr<Planner> MakePositionGreedyPlanner() {
  return MakeGreedyPlanner(
      {.order = PlacementOrder::kSizeThenId, .fit = Fit::kFirst});
}

}  // namespace memplan::internal

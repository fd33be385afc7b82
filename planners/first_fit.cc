// first_fit: the rule of TinyEngine's memory scheduler and TensorFlow Lite
// Micro's greedy planner.
//
//   * Fixed placements first, never moved.
//   * The other buffers in decreasing size (ties: earlier start, then id).
//   * Each takes the lowest offset (a multiple of its effective alignment)
//     where it overlaps no placed buffer it conflicts with.
//   * Pools in preference order; ResourceExhausted when none has room.
//
//   offset ^        [ c ]        x (size 2): the lowest offset that fits is
//          |   [   b    ]        0, under a, although the gap between a and
//          | [ a ]               b would fit it more tightly (greedy_by_size
//          |                     takes that one)
//          +----------------> time
//
// Same cost as greedy_by_size: O(n log n + sum of k log k), k = placed
// buffers alive at the same time. Not guaranteed optimal.

#include <memory>

#include "greedy_by_size.h"
#include "planners.h"

namespace memplan::internal {

std::unique_ptr<Planner> MakeFirstFitPlanner() {
  return MakeGreedyPlanner(
      {.order = PlacementOrder::kSize, .fit = Fit::kFirst});
}

}  // namespace memplan::internal

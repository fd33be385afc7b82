// greedy_by_size: the offset-calculation heuristic of Pisarchyk & Lee 2020
// ("Efficient Memory Management for Deep Neural Net Inference"), with pool
// hierarchies as in ExecuTorch's Cadence planner.
//
//   * Fixed placements go in first and are never moved.
//   * The other buffers in decreasing size (ties: earlier start, then id).
//   * Each takes the smallest gap between the placed buffers it conflicts
//     with (lifetime overlap or explicit conflict) that fits it, the gap below
//     the lowest of them included; when none fits, it goes right above the
//     highest of them.
//   * Pools in preference order: the first allowed pool where it fits under
//     the capacity (offsets are multiples of the buffer's and the pool's
//     alignment); ResourceExhausted when none has room.
//
//   offset ^        [ c ]        x (size 2) needs the smallest gap that fits:
//          |   [   b    ]        the 3-byte gap between a and b is smaller
//          |                     than the 4-byte gap under a...
//          | [ a ]  ...x goes between a and b, not at 0 (first_fit would)
//          +----------------> time
//
// Cost: O(n log n + sum over buffers of k log k), k = placed buffers alive at
// the same time (an interval index finds them). Not guaranteed optimal; it
// reaches the lower bound on typical inference graphs.
//
// Time: a pass still going at the time limit or deadline is abandoned
// (DeadlineExceeded, saying how many buffers it placed).
//
// The same machinery with other orders (area = size x lifetime, lifetime
// length, size classes; memplan/placement.h) and first-fit placement gives
// the variants `best` tries.

#ifndef MEMPLAN_PLANNERS_GREEDY_BY_SIZE_H_
#define MEMPLAN_PLANNERS_GREEDY_BY_SIZE_H_

#include <memory>
#include <string_view>

#include "memplan/placement.h"
#include "memplan/planner.h"

namespace memplan {

struct GreedyOptions {
  PlacementOrder order = PlacementOrder::kSize;
  Fit fit = Fit::kBest;
};

// The planner's name for `options`: "greedy_by_size" (size, best fit),
// "first_fit" (size, first fit), "greedy_by_area", "first_fit_by_area",
// "greedy_by_lifetime", "first_fit_by_lifetime", "greedy_by_size_then_id",
// "position_greedy" (size with ties by id, first fit), "greedy_by_size_class",
// "first_fit_by_size_class".
std::string_view GreedyPlannerName(const GreedyOptions& options);

// A greedy planner with `options`.
std::unique_ptr<Planner> MakeGreedyPlanner(const GreedyOptions& options);

}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_GREEDY_BY_SIZE_H_

// hill_climb: an improvement search over placement orders, after the hill
// climb of TVM's unified static memory planner.
//
//   * Start: the smallest plan among greedy placements with several orders
//     and fits (by default size, area, lifetime x best fit, first fit, then
//     size classes with best fit; greedy_by_size.h). Its order and fit are
//     kept from then on.
//   * Each round perturbs the order around the peak: pick (seeded) one of the
//     buffers whose end is the top of its pool, then either swap it with a
//     buffer beneath it that it conflicts with and that comes earlier in the
//     order, or move it to an earlier position. Only the order from the first
//     changed position on is placed again (the prefix's placement cannot
//     change).
//   * A round that does not raise the peak is kept (plateaus are walked);
//     one that raises it, or that no longer fits the capacities, is undone.
//   * Stops at the lower bound, after `max_rounds`, after
//     `max_rounds_without_gain` rounds without a smaller peak, or when the
//     work done (obstacles examined by the gap searches, from the start's
//     own placement on) reaches WorkLimit(PlanOptions).
//
// Determinism: the rounds, the stagnation limit and the work budget are
// counted, not timed, so the same problem, seed and options give the same
// plan on any machine. Only a time limit or deadline set by the caller
// reads the clock: a start still going at the deadline is abandoned (no
// further starts; DeadlineExceeded when no start has finished), and a round
// still placing at it is undone; the result then depends on the machine's
// speed.
//
// Never worse than its start; not guaranteed optimal.

#ifndef MEMPLAN_PLANNERS_HILL_CLIMB_H_
#define MEMPLAN_PLANNERS_HILL_CLIMB_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "greedy_by_size.h"
#include "memplan/compose.h"
#include "memplan/planner.h"

namespace memplan {

struct HillClimbOptions {
  // Greedy placements to start from; the smallest wins (ties: the first).
  std::vector<GreedyOptions> starts = DefaultStarts();
  int64_t max_rounds = 20000;
  int64_t max_rounds_without_gain = 4000;

  static std::vector<GreedyOptions> DefaultStarts();
};

std::unique_ptr<SearchPlanner> MakeHillClimbPlanner(
    const HillClimbOptions& options);

}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_HILL_CLIMB_H_

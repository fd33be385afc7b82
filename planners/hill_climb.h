// hill_climb: an improvement search over placement orders, after the hill
// climb of TVM's unified static memory planner.
//
//   * Start: the smallest plan among greedy placements with several orders
//     and fits (by default the six of greedy_by_size.h: size, area, lifetime
//     x best fit, first fit). Its order and fit are kept from then on.
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
//     work done (obstacles examined by the gap searches) reaches
//     `work_per_second` x the time limit.
//
// Determinism: the rounds, the stagnation limit and the work budget are
// counted, not timed, so the same problem, seed and time limit give the same
// plan on any machine. The wall clock is only a safety cap (the time limit
// itself): the first start always completes, a later start still going at
// the deadline is abandoned (no further starts), and a round still placing
// at it is undone. When a very slow or loaded machine (or a dense problem,
// whose greedy runs take seconds) reaches it first, the result is still a
// valid plan, but may differ from one run to the next.
//
// Never worse than its start; not guaranteed optimal.

#ifndef MEMPLAN_PLANNERS_HILL_CLIMB_H_
#define MEMPLAN_PLANNERS_HILL_CLIMB_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "greedy_by_size.h"
#include "memplan/planner.h"

namespace memplan {

struct HillClimbOptions {
  // Greedy placements to start from; the smallest wins (ties: the first).
  std::vector<GreedyOptions> starts = DefaultStarts();
  int64_t max_rounds = 20000;
  int64_t max_rounds_without_gain = 4000;
  // Deterministic effort per second of PlanOptions::time_limit, in obstacles
  // examined. Calibrated so that the budget takes well under the time limit
  // on a typical core.
  int64_t work_per_second = 40'000'000;
  // When set, the wall-clock safety cap (instead of the start + the time
  // limit): for compositions that spent part of their time limit already.
  std::optional<absl::Time> deadline;

  static std::vector<GreedyOptions> DefaultStarts();
};

std::unique_ptr<Planner> NewHillClimbPlanner(const HillClimbOptions& options);

}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_HILL_CLIMB_H_

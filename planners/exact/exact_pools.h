// exact across several pools (not public; see exact.h): which buffers go to
// which pool, so that the fewest bytes spill out of the faster pools
// (SpillsLess, memplan/problem.h), proven where the search completes.
//
//   offset ^  fast pool (capacity C)      the search decides, buffer by
//        C +--------------------------    buffer (largest first), the pool
//          |  [ a ]   [   c   ]           of each, in preference order;
//          |  [    b    ] [ d ]           every node is a plan of the pools
//          +------------------------->    with a capacity (first fit, else a
//                               time      re-packing of the pool by exact's
//                                         own search under the capacity).
//
//   * Buffers with one unbounded pool to go to, and fixed buffers, are
//     decided before the search; the others are cut into parts wherever none
//     of them crosses a point in time (none with explicit conflicts): each
//     part is searched on its own (the lexicographic order adds up).
//   * Bound: the bytes a node already holds in each pool, plus, in the last
//     pool, what the faster pools cannot take: at a set of steps that every
//     undecided buffer's lifetime crosses, at most the free capacity there.
//     A node that cannot end strictly below the best plan so far is cut.
//   * A pool that cannot take a buffer under its capacity (max-live over the
//     buffer's lifetime, or exact proving that no packing exists) is not
//     tried; exact out of nodes there makes the part unproven.
//   * The pools without a capacity are planned last, each by exact's
//     single-pool search; their tops (and the faster pools' packings) are
//     not claimed optimal: proven_optimal says that no plan spills fewer
//     bytes.
// The better of the search's plan and the incumbent (SpillsLess) is
// returned. Effort: the counted work of the options (a node costs as an
// exact node, plus the buffers it scans; a re-packing what its search
// counts, or its whole cap when it finds none).

#ifndef MEMPLAN_PLANNERS_EXACT_POOLS_H_
#define MEMPLAN_PLANNERS_EXACT_POOLS_H_

#include "absl/status/statusor.h"
#include "exact.h"
#include "memplan/compose.h"
#include "memplan/planner.h"
#include "memplan/types.h"

namespace memplan::internal::exact {

absl::StatusOr<Plan> SolveAcrossPools(const Problem& problem,
                                      const PlanOptions& plan_options,
                                      const ExactOptions& options,
                                      Incumbent& incumbent);

}  // namespace memplan::internal::exact

#endif  // MEMPLAN_PLANNERS_EXACT_POOLS_H_

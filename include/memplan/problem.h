// From a Graph to a Problem: lifetimes, buffers, conflicts and bounds.
//
// Time semantics (op i executes at step i; lifetimes are [start, end)):
//   * a tensor produced by op p and last read by op c is alive [p, c + 1);
//   * graph inputs are alive from step 0, graph outputs until step N (= #ops);
//   * a tensor produced and never read is alive [p, p + 1);
//   * constants are planned only with `plan_constants`, alive from their
//     producer (or step 0) to their last reader;
//   * scratch tensors of op i are alive [i, i + 1);
//   * alias (view) hints always merge the view into its base's buffer (as large
//     as the base, alive over the union); in-place hints merge when the input
//     is read for the last time by that op, is no graph input or output, and
//     the output is not larger. Otherwise the two stay separate buffers.
// Two buffers conflict when their lifetimes overlap or an explicit conflict
// names them.

#ifndef MEMPLAN_PROBLEM_H_
#define MEMPLAN_PROBLEM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/types.h"

namespace memplan {

// Limits beyond which no sane plan exists; they keep every offset a planner
// computes inside int64. A problem's highest fixed byte plus every buffer's
// size and alignment may not exceed kMaxBytes; alignments are at most
// kMaxAlignment; lifetimes lie in [0, kMaxStep].
inline constexpr Bytes kMaxBytes = Bytes{1} << 62;
inline constexpr Bytes kMaxAlignment = Bytes{1} << 32;
inline constexpr Step kMaxStep = Step{1} << 62;

struct BuildOptions {
  bool plan_inputs = true;
  bool plan_outputs = true;
  bool plan_constants = false;
  // Default alignment of every buffer (a power of two); a tensor's own
  // alignment raises it. Sizes are rounded up to the buffer's alignment.
  Bytes alignment = 1;
  // When set, replaces the graph's pools (empty = keep the graph's).
  std::vector<Pool> pools;
  // When > 0, the capacity of the single default pool (only when the graph
  // and `pools` name no pools).
  Bytes capacity = 0;
};

absl::StatusOr<Problem> BuildProblem(const Graph& graph,
                                     const BuildOptions& options = {});

// The pools a problem built with `options` gets: options.pools, else
// `declared`, else one unbounded "default" pool; options.capacity (when > 0)
// becomes the capacity of the single pool. Checks the options' alignment and
// capacity and the resulting pools.
absl::StatusOr<std::vector<Pool>> ResolvePools(
    const std::vector<Pool>& declared, const BuildOptions& options);

// Unique non-empty names, non-negative capacities, power-of-two alignments.
absl::Status ValidatePools(const std::vector<Pool>& pools);

// Checks a Problem made by hand or read from a file; the error names the
// buffer and the pool:
//   * a non-empty pool list, power-of-two alignments, sizes that are
//     multiples of their alignment, 0 <= start < end;
//   * valid pool and buffer references, every tensor span inside its
//     buffer, the limits above;
//   * fixed placements that can be honoured: aligned, in an allowed pool,
//     inside its capacity, no two conflicting fixed buffers sharing a byte.
absl::Status ValidateProblem(const Problem& problem);

// True when the graph declares dims or has a tensor with a symbolic size.
bool IsSymbolic(const Graph& graph);

// OK for a concrete graph; otherwise InvalidArgument naming the dims still
// to bind: `graph "g" has symbolic dims seq: bind them with --dim seq=N`.
absl::Status CheckConcrete(const Graph& graph);

// Sum of all buffer sizes: the peak of a plan without reuse.
Bytes NaiveTotal(const Problem& problem);

// The largest sum of sizes of buffers alive at one step (O(n log n)).
Bytes LowerBound(const Problem& problem);

// The alignment an offset of `buffer` in `pool` must respect.
Bytes EffectiveAlignment(const Problem& problem, BufferId buffer, PoolId pool);

// The pools `buffer` may live in, in preference order.
std::vector<PoolId> AllowedPools(const Problem& problem, BufferId buffer);

// Fills pool_used, peak, naive_total and lower_bound of `plan` from its
// assignments, and marks the plan proven optimal when its peak meets the
// lower bound. Planners call it before returning.
void ComputePlanStatistics(const Problem& problem, Plan& plan);

// Bytes held in each pool: the sum of the sizes of the buffers `plan` puts
// there (0 for a pool nothing goes to; assignments the verifier would reject
// are skipped).
std::vector<Bytes> PoolBytes(const Problem& problem, const Plan& plan);

// The order of plans across pools that exact and cpsat minimise: fewer
// bytes spilled out of the faster pools first, lexicographically (fewer
// bytes held in the last pool, then in the one before, ...), then a smaller
// peak (the sum of the pools' tops). With one pool: a smaller peak.
// `a_bytes` and `b_bytes` are PoolBytes() of the two plans.
bool SpillsLess(const std::vector<Bytes>& a_bytes, Bytes a_peak,
                const std::vector<Bytes>& b_bytes, Bytes b_peak);
bool SpillsLess(const Problem& problem, const Plan& a, const Plan& b);

// True when the lower bound alone proves `plan` optimal: its peak (the sum
// of the pools' tops, ComputePlanStatistics) is at most LowerBound(problem),
// and no buffer sits in a pool when one before it is among its allowed
// pools. With several pools that makes it optimal in SpillsLess's order as
// well as by the sum of tops: each later pool holds only buffers that no
// plan could place earlier, and no plan's peak is below the bound.
bool AtTheBound(const Problem& problem, const Plan& plan);

}  // namespace memplan

#endif  // MEMPLAN_PROBLEM_H_

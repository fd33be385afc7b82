// Graphs with symbolic sizes (dynamic shapes), DESIGN.md "Symbolic sizes".
//
// A graph may declare named dims with ranges (Graph::dims) and give tensor
// sizes as expressions in them (Tensor::symbolic_size, memplan/dim_expr.h).
// Such a graph is planned by binding every dim to a value first: BindDims()
// gives an ordinary graph, which builds, plans and verifies as any other.
// The tool's `--dim NAME=VALUE` and LoadOptions::dims do this for graph JSON
// as they do for ONNX models' dim_params.

#ifndef MEMPLAN_SYMBOLIC_H_
#define MEMPLAN_SYMBOLIC_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "memplan/dim_expr.h"
#include "memplan/problem.h"
#include "memplan/tensor_placement.h"
#include "memplan/types.h"

namespace memplan {

// Checks the dims (names, ranges) and the symbolic sizes: each uses only
// declared dims, has no negative term (DESIGN.md's grammar), and its value at
// the dims' maxima fits in int64. The error names the tensor and the dim.
absl::Status ValidateSymbolicSizes(const Graph& graph);

// The graph with the dims of `values` bound: every size that no longer uses
// a dim becomes an integer, and the bound dims leave Graph::dims. Each value
// must lie in its dim's range; a dim the graph does not declare is an error.
// Binding every dim gives a concrete graph; binding none returns it as is.
absl::StatusOr<Graph> BindDims(const Graph& graph, const DimValues& values);
// The same, binding `graph` itself instead of a copy of it (a graph of 10^6
// ops holds 0.6 GB).
absl::StatusOr<Graph> BindDims(Graph&& graph, const DimValues& values);

// ---------------------------------------------------------------------------
// Symbolic problems and plans: one plan valid for every value of the dims.
// docs/symbolic.md states what is supported and why the verifier is exact.
// Internal API: not yet in plan files or the Python module; the tool's
// stats and report of a symbolic graph use it.

// A buffer whose size is an expression in the problem's dims.
struct SymbolicBuffer {
  std::string name;  // the tensor it came from
  std::vector<std::string> tensors;
  // Bytes reserved: >= the buffer's size rounded up to `alignment` and a
  // multiple of `alignment` at every value of the dims (ReserveSize()).
  DimExpr size;
  Bytes alignment = 1;  // the buffer's and the pool's
  Lifetime lifetime;
  // The base tensor's size before the reserve (BuildSymbolicProblem sets
  // it): Narrowed() reserves it again over narrower ranges. Unset, the
  // reserve over the whole ranges is kept.
  std::optional<DimExpr> tensor_size;
  bool operator==(const SymbolicBuffer&) const = default;
};

// One pool; lifetimes and conflicts do not depend on the dims.
struct SymbolicProblem {
  std::string name;
  DimRanges dims;
  std::vector<SymbolicBuffer> buffers;
  Pool pool;
  std::vector<BufferConflict> conflicts;  // explicit, beyond lifetimes
  bool operator==(const SymbolicProblem&) const = default;

  // The ordinary problem at one value of every dim: each buffer's reserved
  // size at `values`.
  absl::StatusOr<Problem> At(const DimValues& values) const;
  // The same with each buffer's tensor size at `values` rounded up to its
  // alignment (its reserve where the tensor size is unset): the problem of
  // the graph bound to `values`, whose lower bound plans are measured
  // against.
  absl::StatusOr<Problem> Rounded(const DimValues& values) const;

  // The problem over narrower ranges (a bucket's): every dim's range inside
  // this one's, each size reserved again over `dims` (ReserveSize() of the
  // tensor's size). The new reserve is exact at the new minima and nowhere
  // larger than the old one (docs/symbolic.md), so a plan of this problem
  // over the whole ranges is a plan of the narrowed one too.
  absl::StatusOr<SymbolicProblem> Narrowed(const DimRanges& dims) const;

  // The problem with some dims counted in steps (docs/symbolic.md,
  // "Steps"): each dim of `steps` with a step m >= 2 is replaced by two,
  // StepDivName() in [min / m, max / m] and StepModName() in [0, m - 1],
  // the value being m * div + mod, and each size is the tensor's there,
  // reserved again over the new ranges. Every value of the old dim is
  // one such pair, so offsets proven over the new ranges hold at every
  // value. Counted so, 8*seq*seq bytes become 128*div*div + 64*div*mod +
  // 8*mod*mod at m = 4, whose binomial coefficients are multiples of 64 but
  // for the last, small one. A step of 1 leaves the dim as it is; a step
  // must be in [1, 2^20].
  absl::StatusOr<SymbolicProblem> Stepped(const DimValues& steps) const;
};

// `values` as a problem stepped by `steps` (SymbolicProblem::Stepped) takes
// them: each dim of `steps` replaced by its StepDivName() at value / step
// and its StepModName() at value % step, the others as they are.
DimValues StepValues(const DimValues& values, const DimValues& steps);

// The ranges of a problem over `dims` stepped by `steps` (SymbolicProblem::
// Stepped): each dim of `steps` with a step >= 2 replaced by its
// StepDivName() and StepModName(). The error names a dim `dims` lacks, a
// step outside [1, 2^20], or a new name `dims` already has.
absl::StatusOr<DimRanges> SteppedDims(const DimRanges& dims,
                                      const DimValues& steps);

// The dims a problem counted in steps of `dim` has instead: "seq_div" and
// "seq_mod" for "seq", so that seq = step * seq_div + seq_mod.
std::string StepDivName(const std::string& dim);
std::string StepModName(const std::string& dim);

// The reserve of a size of `alignment` bytes (a power of two) over `dims`:
// the size in the binomial basis at the dims' minima, each coefficient
// rounded up (docs/symbolic.md). Exact at the minima; >= the size rounded
// up to `alignment` everywhere; a multiple of `alignment` everywhere.
absl::StatusOr<DimExpr> ReserveSize(const DimExpr& size, Bytes alignment,
                                    const DimRanges& dims);

// The symbolic problem of a graph: the buffers, lifetimes and conflicts of
// BuildProblem() (which must be the same at the dims' minima and maxima:
// merges and in-place decisions that depend on the sizes are refused, naming
// the tensor), sizes reserved as ReserveSize(). One pool, no fixed
// placements, no per-tensor pool lists.
absl::StatusOr<SymbolicProblem> BuildSymbolicProblem(
    const Graph& graph, const BuildOptions& options = {});

// The naive total (a plan without reuse) as a function of the dims: the sum
// of the reserved sizes, NaiveTotal(problem.At(values)) at every value.
absl::StatusOr<DimExpr> SymbolicNaiveTotal(const SymbolicProblem& problem);

// The lower bound as a function of the dims. At each step the bytes alive
// are a polynomial (the sum of the reserves of the buffers alive there); the
// bound at a value is the largest of them there, a piecewise polynomial.
// Only the distinct step polynomials that no other one is proven to reach
// over the whole box (binomial-basis test, memplan/binomial_poly.h) are
// kept: those alone can be the largest somewhere in the ranges.
struct SymbolicLowerBoundPiece {
  DimExpr bytes;  // the bytes alive at `step`
  Step step = 0;  // the first step where those bytes are alive
  bool operator==(const SymbolicLowerBoundPiece&) const = default;
};
struct SymbolicBound {
  DimRanges dims;
  // By decreasing value at the dims' maxima (ties: by step).
  std::vector<SymbolicLowerBoundPiece> pieces;
  bool operator==(const SymbolicBound&) const = default;

  // LowerBound(problem.At(values)): the largest piece at `values` (0 without
  // pieces). Every dim must be given, inside its range.
  absl::StatusOr<Bytes> Evaluate(const DimValues& values) const;
  // The index of the piece that is largest at `values` (the first of
  // equals), or -1 without pieces.
  absl::StatusOr<int> Largest(const DimValues& values) const;
};
absl::StatusOr<SymbolicBound> SymbolicLowerBound(
    const SymbolicProblem& problem);

struct SymbolicPlan {
  std::vector<DimExpr> offsets;  // per buffer, bytes from the pool's base
  DimExpr peak;  // >= every buffer's offset + size at every value
  std::string planner;
  bool operator==(const SymbolicPlan&) const = default;

  // The ordinary plan at `values`, a plan of problem.At(values) (and of the
  // graph bound to `values`): offsets evaluated, used size the highest
  // offset + size there.
  absl::StatusOr<Plan> At(const SymbolicProblem& problem,
                          const DimValues& values) const;
};

// Buckets: the range of one dim cut into a few sub-ranges, each with a plan
// of its own (of the problem narrowed to its ranges, SymbolicProblem::
// Narrowed).
struct SymbolicBucket {
  DimRanges dims;  // the problem's dims, one of them narrowed
  // Dims the plan counts in steps (each step >= 2; empty: none): the plan
  // is one of ProblemOf(), its expressions in the dims of that problem,
  // taken at StepValues().
  DimValues steps;
  SymbolicPlan plan;
  bool operator==(const SymbolicBucket&) const = default;

  // The problem `plan` is a plan of: whole.Narrowed(dims).Stepped(steps).
  absl::StatusOr<SymbolicProblem> ProblemOf(const SymbolicProblem& whole) const;
  // The peak at `values` of the dims (not stepped): the plan's peak at
  // StepValues(values, steps).
  absl::StatusOr<int64_t> PeakAt(const DimValues& values) const;
};

// The planners: memplan/symbolic_planner.h.

// A plan of a symbolic graph: buckets that cover the dims' ranges, in order
// of the cut dim's values, each a plan of problem.Narrowed(its dims),
// proven over its own ranges.
struct SymbolicGraphPlan {
  SymbolicProblem problem;  // over the graph's whole ranges
  std::vector<SymbolicBucket> buckets;
  std::string planner;
  bool operator==(const SymbolicGraphPlan&) const = default;

  // The bucket whose ranges hold `values` (every dim given), or nullptr.
  const SymbolicBucket* Find(const DimValues& values) const;

  // The ordinary plan of `graph` (the graph this plan was made from) bound to
  // `values`: the bucket's offsets evaluated there, every tensor placed. Its
  // problem is problem.Narrowed(bucket's dims).At(values) (sizes reserved
  // over the bucket), which the ordinary verifier checks as any other. Every
  // dim must be given, inside its range.
  absl::StatusOr<GraphPlan> At(const Graph& graph,
                               const DimValues& values) const;
};

// The largest peak / lower bound of `plan` over sample values of
// `problem`'s ranges: each dim at its ends and at points spread between.
// The bound is that of problem.Rounded() (the sizes, not their reserves),
// so a reserve that grows faster than its size shows in the ratio.
absl::StatusOr<double> WorstSampledRatio(const SymbolicProblem& problem,
                                         const SymbolicPlan& plan);
// The same of a bucket of `problem`: over samples of the bucket's ranges,
// its plan's peak at StepValues() over the lower bound of the sizes.
absl::StatusOr<double> WorstSampledRatio(const SymbolicProblem& problem,
                                         const SymbolicBucket& bucket);

}  // namespace memplan

#endif  // MEMPLAN_SYMBOLIC_H_

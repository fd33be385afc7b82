// The vocabulary of memplan: plain value types shared by every part.
//
// Two levels:
//   * Graph level: what a compiler hands over (Tensor, Op, Graph).
//   * Problem level: what planners see (Buffer, Pool, Problem), built from a
//     Graph by BuildProblem() (memplan/problem.h) or read from a buffer CSV.
// A planner turns a Problem into a Plan: one Assignment per buffer.
//
// Every lifetime in memplan is half-open: [start, end) in op steps. Two
// buffers whose lifetimes merely touch (a.end == b.start) do not conflict.

#ifndef MEMPLAN_TYPES_H_
#define MEMPLAN_TYPES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "memplan/dim_expr.h"

namespace memplan {

using Bytes = int64_t;     // a size in bytes
using Offset = int64_t;    // bytes from the pool's base
using Step = int64_t;      // an op step (op i executes at step i)
using BufferId = int32_t;  // index into Problem::buffers
using PoolId = int32_t;    // index into Problem::pools

// ---------------------------------------------------------------------------
// Graph level.

enum class TensorKind {
  kActivation,  // produced by one op, read by later ops
  kInput,       // graph input: alive from step 0
  kOutput,      // graph output: alive until the last step
  kConstant,    // weights; not planned unless BuildOptions::plan_constants
  kScratch,     // an op's workspace, alive only while that op runs
};

// A placement the planner must keep, named at graph level.
// "activation", "input", "output", "constant" or "scratch" (the JSON names).
constexpr std::string_view TensorKindName(TensorKind kind) {
  switch (kind) {
    case TensorKind::kActivation:
      return "activation";
    case TensorKind::kInput:
      return "input";
    case TensorKind::kOutput:
      return "output";
    case TensorKind::kConstant:
      return "constant";
    case TensorKind::kScratch:
      return "scratch";
  }
  return "activation";
}

struct FixedTensorPlacement {
  std::string pool;  // empty = the first pool
  Offset offset = 0;
  bool operator==(const FixedTensorPlacement&) const = default;
};

// Where a tensor comes from in the program it was traced from (informative,
// shown by reports): the qualified name of the module that made it
// ("layer1.0.conv1"), the source file and line of the call. Empty strings
// and line 0 mean unknown.
struct TensorSource {
  std::string module;
  std::string file;
  int64_t line = 0;
  bool operator==(const TensorSource&) const = default;
};

struct Tensor {
  std::string name;
  Bytes size = 0;
  TensorKind kind = TensorKind::kActivation;
  Bytes alignment = 0;  // 0 = the default of BuildOptions
  std::vector<std::string>
      pools;  // allowed pools in preference order; empty = all
  std::optional<FixedTensorPlacement> fixed;
  // Informative only.
  std::vector<int64_t> shape;
  std::string dtype;
  // A size that is an expression in the graph's dims ("512*seq"); `size` is
  // then 0 until BindDims() (memplan/symbolic.h) gives the dims values.
  std::optional<DimExpr> symbolic_size;
  std::optional<TensorSource> source;  // informative
  bool operator==(const Tensor&) const = default;
};

// "Output `output` of the op may reuse / is a view of input `input`"
// (indices into Op::outputs and Op::inputs).
struct OperandPair {
  int output = 0;
  int input = 0;
  bool operator==(const OperandPair&) const = default;
};

struct Op {
  std::string name;
  std::string type;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string>
      scratch;  // workspace tensors alive only during the op
  std::vector<OperandPair> inplace;  // output may reuse input's bytes
  std::vector<OperandPair> alias;    // output is a view of input's bytes
  // Indices into `inputs` whose bytes the op writes (an in-place ATen op,
  // an optimizer step, a KV-cache update): a reordering keeps every reader
  // of those bytes (the tensor, its base, every view of it) on its side of
  // the op, and the writers of the same bytes in their order.
  std::vector<int> writes;
  // The op has a side effect (a print, an assert, a draw from a random
  // generator, I/O): a reordering keeps the pinned ops of a graph in their
  // relative order. Its data dependencies are kept either way.
  bool pinned = false;
  // What running the op costs: a non-negative finite number, FLOPs where
  // the front end knows them, else any unit consistent within the graph;
  // absent when unknown. Informative for planning without a budget.
  std::optional<double> cost;
  // Running the op again on the same inputs gives the same outputs (pure:
  // no writes, no random draw unless its generator state is replayed), so
  // a budgeted plan may recompute it. An op with `writes` never is: the
  // readers and BuildProblem refuse the two together.
  bool recomputable = false;
  bool operator==(const Op&) const = default;
};

struct Pool {
  std::string name;
  Bytes capacity = 0;   // 0 = unbounded
  Bytes alignment = 1;  // every offset in the pool is a multiple of this
  bool operator==(const Pool&) const = default;
};

struct TensorConflict {
  std::string a;
  std::string b;
  bool operator==(const TensorConflict&) const = default;
};

// The ops are in execution order, which must be a topological order.
struct Graph {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  std::vector<Pool> pools;  // empty = one unbounded "default" pool
  std::vector<TensorConflict> conflicts;  // explicit extra conflicts
  // Named dims the tensors' symbolic sizes use, with their ranges; empty for
  // a concrete graph. BuildProblem() needs a concrete one (BindDims()).
  DimRanges dims;
  bool operator==(const Graph&) const = default;
};

// ---------------------------------------------------------------------------
// Problem level.

struct Lifetime {
  Step start = 0;  // first step the buffer is alive
  Step end = 0;    // first step it is no longer alive (half-open)
  bool operator==(const Lifetime&) const = default;
};

// True when the half-open lifetimes share a step.
inline bool Overlaps(const Lifetime& a, const Lifetime& b) {
  return a.start < b.end && b.start < a.end;
}

struct Placement {
  PoolId pool = 0;
  Offset offset = 0;
  bool operator==(const Placement&) const = default;
};

// Where one tensor of a buffer lives: the first `size` bytes of the buffer
// (views and in-place outputs start at their base's first byte), during its
// own lifetime.
struct TensorSpan {
  Bytes size = 0;  // not rounded up: the tensor's own bytes
  Lifetime lifetime;
  bool operator==(const TensorSpan&) const = default;
};

struct Buffer {
  std::string name;  // the name of the tensor it came from
  std::vector<std::string>
      tensors;          // every tensor living in it (in-place/alias)
  Bytes size = 0;       // bytes reserved: already rounded up to `alignment`
  Bytes alignment = 1;  // power of two; the pool's alignment applies as well
  Lifetime lifetime;
  std::vector<PoolId>
      pools;  // allowed pools in preference order; empty = all, in order
  std::optional<Placement> fixed;
  // One per entry of `tensors` when known (BuildProblem fills it); empty when
  // the buffer's only tensor spans all of it for its whole lifetime (CSV
  // inputs). The verifier checks that every tensor lies inside its buffer.
  std::vector<TensorSpan> spans;
  bool operator==(const Buffer&) const = default;
};

struct BufferConflict {
  BufferId a = 0;
  BufferId b = 0;
  bool operator==(const BufferConflict&) const = default;
};

// Buffers are identified by their index. A Problem always has at least one
// pool once built; pools are listed fastest first.
struct Problem {
  std::string name;
  std::vector<Buffer> buffers;
  std::vector<Pool> pools;
  std::vector<BufferConflict> conflicts;  // explicit conflicts beyond lifetimes
  bool operator==(const Problem&) const = default;
};

// ---------------------------------------------------------------------------
// Result.

struct Assignment {
  BufferId buffer = 0;
  PoolId pool = 0;
  Offset offset = 0;
  bool operator==(const Assignment&) const = default;
};

struct Plan {
  // One per buffer; planners emit them in buffer order (assignments[i].buffer
  // == i).
  std::vector<Assignment> assignments;
  std::vector<Bytes>
      pool_used;          // per pool: the highest byte used (offset + size)
  Bytes peak = 0;         // sum of pool_used: the memory the plan needs
  Bytes naive_total = 0;  // every buffer its own bytes
  Bytes lower_bound = 0;  // max-live bytes; no single-pool plan is smaller
  std::string planner;
  absl::Duration wall_time = absl::ZeroDuration();
  // The planner proved no valid plan has a smaller peak; across several
  // pools, for exact and cpsat, that no valid plan spills fewer bytes out
  // of the faster pools (SpillsLess, memplan/problem.h).
  bool proven_optimal = false;
  // What the solve did, by name, as the planner that made the plan counts it
  // (`memplan planners NAME` and the planners' headers list theirs): exact's
  // "nodes", "parts", "searches" and "restarts"; the shared-object planners'
  // (caffe2_*) "shared_objects". Statistics, not part of the placement.
  std::map<std::string, int64_t> counters;
  bool operator==(const Plan&) const = default;
};

}  // namespace memplan

#endif  // MEMPLAN_TYPES_H_

// LowerBoundOverOrders: the bytes every op ordering needs at some step. See
// memplan/reorder.h.
//
// A buffer is alive at op v in every order when one of the ops that start
// it (its producers; graph inputs from the start) runs no later than v in
// every order, and one of the ops that end it (its readers; graph outputs
// until the end) no earlier: an ancestor (or v) and a descendant (or v) in
// the DAG every ordering keeps (order/op_dag.h). Summed at each op, the
// largest sum is a bound on the peak of every such order. So is the sum
// of the graph outputs, all alive at every order's last step (one per
// in-place merge set, the largest).
//
// Views always share their base's bytes, so a view group is one buffer in
// every order. An in-place merge depends on the order (the input must die at
// the op), so the groups an in-place hint may join count as one: at each op
// the largest of them alive there. Merged, their buffer is as large as the
// largest (an output reuses an input no smaller); apart, each is alive on
// its own. Either way that many bytes are alive.
//
// Ancestry is computed for a chunk of kChunkWords * 64 ops at a time as
// bitsets over the chunk's ops: about ops * edges / 64 word operations in
// all, and as much memory as 2 * ops * kChunkWords words.

#include "order/order_bound.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "effort/budget.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "order/cut_bound.h"
#include "order/op_dag.h"
#include "order/order_effort.h"

namespace memplan {
namespace {

using internal::BuildDag;
using internal::ByteGroups;
using internal::Dag;
using internal::TensorIndex;
using internal::ViewGroup;
using internal::ViewGroups;

constexpr int kNone = -1;
constexpr int kChunkWords = 16;
constexpr int kChunkOps = 64 * kChunkWords;

// Per op of one chunk of the graph's order: the bytes alive there in every
// order. `descendants[x]` holds the chunk's ops that x precedes (or is),
// `ancestors[x]` those that precede x (or are x), kChunkWords words each.
class Chunk {
 public:
  Chunk(int begin, int end) : begin_(begin), end_(end), live_(end - begin) {}

  // Adds `group`'s size at the chunk's ops where it is alive in every order
  // and no group of `covered` (its merge set's, larger) was; adds those ops
  // to `covered`. Returns the work done.
  int64_t Add(const ViewGroup& group, const std::vector<uint64_t>& descendants,
              const std::vector<uint64_t>& ancestors, uint64_t* covered) {
    uint64_t alive[kChunkWords];
    uint64_t ended[kChunkWords];
    std::fill(alive, alive + kChunkWords, group.from_start ? ~uint64_t{0} : 0);
    std::fill(ended, ended + kChunkWords, group.to_end ? ~uint64_t{0} : 0);
    int64_t work = 0;
    if (!group.from_start) {
      for (int s : group.starts) {
        if (s >= end_) break;
        const uint64_t* d = &descendants[static_cast<size_t>(s) * kChunkWords];
        for (int w = 0; w < kChunkWords; ++w) alive[w] |= d[w];
        work += kChunkWords;
      }
    }
    if (!group.to_end) {
      for (auto it = group.ends.rbegin(); it != group.ends.rend(); ++it) {
        if (*it < begin_) break;
        const uint64_t* a = &ancestors[static_cast<size_t>(*it) * kChunkWords];
        for (int w = 0; w < kChunkWords; ++w) ended[w] |= a[w];
        work += kChunkWords;
      }
    }
    for (int w = 0; w < kChunkWords; ++w) {
      uint64_t bits = alive[w] & ended[w] & ~covered[w];
      covered[w] |= alive[w] & ended[w];
      for (; bits != 0; bits &= bits - 1) {
        const int v = w * 64 + __builtin_ctzll(bits);
        if (v < end_ - begin_) live_[v] += group.size;
        ++work;
      }
    }
    return work;
  }

  Bytes live(int v) const { return live_[v - begin_]; }

  // The most bytes alive at one op of the chunk, and that op.
  std::pair<Bytes, int> Max() const {
    std::pair<Bytes, int> best = {0, kNone};
    for (int v = 0; v < end_ - begin_; ++v) {
      if (live_[v] > best.first) best = {live_[v], begin_ + v};
    }
    return best;
  }

 private:
  int begin_;
  int end_;
  std::vector<Bytes> live_;
};

// Fills, for the chunk [begin, end) of the order, `descendants[x]` (the
// chunk's ops that x precedes or is) and `ancestors[x]` (those that precede
// x or are it), kChunkWords words per op.
void FillChunkAncestry(const Dag& dag,
                       const std::vector<std::vector<int>>& pred, int begin,
                       int end, std::vector<uint64_t>& descendants,
                       std::vector<uint64_t>& ancestors) {
  const int n = static_cast<int>(pred.size());
  // Every edge points forward: only ops before the chunk's end precede
  // one of its ops, only ops from its beginning follow one.
  for (int x = end - 1; x >= 0; --x) {
    uint64_t* d = &descendants[static_cast<size_t>(x) * kChunkWords];
    std::fill(d, d + kChunkWords, 0);
    if (x >= begin) d[(x - begin) / 64] |= uint64_t{1} << ((x - begin) % 64);
    for (int s : dag.succ[x]) {
      if (s >= end) break;  // sorted
      const uint64_t* ds = &descendants[static_cast<size_t>(s) * kChunkWords];
      for (int w = 0; w < kChunkWords; ++w) d[w] |= ds[w];
    }
  }
  for (int x = begin; x < n; ++x) {
    uint64_t* a = &ancestors[static_cast<size_t>(x) * kChunkWords];
    std::fill(a, a + kChunkWords, 0);
    if (x < end) a[(x - begin) / 64] |= uint64_t{1} << ((x - begin) % 64);
    for (int p : pred[x]) {
      if (p < begin) continue;
      const uint64_t* ap = &ancestors[static_cast<size_t>(p) * kChunkWords];
      for (int w = 0; w < kChunkWords; ++w) a[w] |= ap[w];
    }
  }
}

// The groups' indices, each merge set's groups together, largest first.
std::vector<int> ByMergeSet(const std::vector<ViewGroup>& groups) {
  std::vector<int> by_set(groups.size());
  std::iota(by_set.begin(), by_set.end(), 0);
  std::sort(by_set.begin(), by_set.end(), [&](int a, int b) {
    if (groups[a].merge_set != groups[b].merge_set) {
      return groups[a].merge_set < groups[b].merge_set;
    }
    if (groups[a].size != groups[b].size)
      return groups[a].size > groups[b].size;
    return a < b;
  });
  return by_set;
}

// Every order's last step holds every graph output: the largest of each
// merge set's (`by_set` as ByMergeSet() gives it).
Bytes OutputsAtTheEnd(const std::vector<ViewGroup>& groups,
                      const std::vector<int>& by_set) {
  Bytes outputs = 0;
  int set = kNone;
  for (int g : by_set) {
    if (!groups[g].to_end || groups[g].merge_set == set) continue;
    set = groups[g].merge_set;
    outputs += groups[g].size;
  }
  return outputs;
}

// The sums: per op, the bytes alive there in every order (into
// `every_order`), chunk by chunk, and the largest of them in `bound`.
// False when `work` (counted by `meter`) passes `max_work` or the deadline.
bool SumsOverChunks(const Dag& dag, const std::vector<std::vector<int>>& pred,
                    const std::vector<ViewGroup>& groups,
                    const std::vector<int>& by_set, int64_t max_work,
                    internal::StepMeter& meter, int64_t& work,
                    std::vector<Bytes>& every_order, OrderLowerBound& bound) {
  const int n = static_cast<int>(pred.size());
  every_order.assign(n, 0);
  std::vector<uint64_t> descendants(static_cast<size_t>(n) * kChunkWords);
  std::vector<uint64_t> ancestors(static_cast<size_t>(n) * kChunkWords);
  for (int begin = 0; begin < n; begin += kChunkOps) {
    if (meter.OutOfTime(work)) return false;
    const int end = std::min(n, begin + kChunkOps);
    FillChunkAncestry(dag, pred, begin, end, descendants, ancestors);
    Chunk chunk(begin, end);
    uint64_t covered[kChunkWords];
    int set = kNone;
    for (int g : by_set) {
      const ViewGroup& group = groups[g];
      if (group.merge_set != set) {
        set = group.merge_set;
        std::fill(covered, covered + kChunkWords, 0);
      }
      // Alive in every order means alive in the graph's order.
      if (group.last <= begin || group.first >= end) continue;
      work += chunk.Add(group, descendants, ancestors, covered);
      if (work > max_work || meter.OutOfTime(work)) return false;
    }
    for (int v = begin; v < end; ++v) every_order[v] = chunk.live(v);
    const auto [bytes, op] = chunk.Max();
    if (bytes > bound.bytes) {
      bound.bytes = bytes;
      bound.op = op;
    }
  }
  return true;
}

}  // namespace

namespace internal {

absl::StatusOr<std::optional<OrderBounds>> ComputeOrderBounds(
    const Graph& graph, const BuildOptions& options, Budget& budget) {
  StepMeter meter(budget, kBoundStepsPerUnit);
  const int64_t max_work = meter.max_steps();
  // The ancestry's work from the data edges alone (at most one per input),
  // before building anything: a graph far beyond the work costs nothing.
  const int n = static_cast<int>(graph.ops.size());
  const int64_t chunks = (n + kChunkOps - 1) / kChunkOps;
  int64_t inputs = 0;
  for (const Op& op : graph.ops) {
    inputs += static_cast<int64_t>(op.inputs.size());
  }
  if (chunks * 2 * (inputs + n) * kChunkWords > max_work) return std::nullopt;
  MEMPLAN_ASSIGN_OR_RETURN(const Problem problem, BuildProblem(graph, options));
  absl::flat_hash_map<std::string, int> index;
  for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
    index.emplace(graph.tensors[t].name, t);
  }
  const Dag dag = BuildDag(graph, index, ByteGroups(graph, problem, index));
  std::vector<std::vector<int>> pred(n);
  int64_t edges = 0;
  for (int x = 0; x < n; ++x) {
    for (int s : dag.succ[x]) pred[s].push_back(x);
    edges += static_cast<int64_t>(dag.succ[x].size());
  }
  std::vector<ViewGroup> groups = ViewGroups(graph, problem, options, index);
  const std::vector<int> by_set = ByMergeSet(groups);
  // The ancestry alone, before any work: one pass over the edges per chunk.
  int64_t work = chunks * (2 * (edges + n) * kChunkWords);
  if (work > max_work) return std::nullopt;
  meter.Finish(work);
  OrderLowerBound bound;
  std::vector<Bytes> every_order;
  if (!SumsOverChunks(dag, pred, groups, by_set, max_work, meter, work,
                      every_order, bound)) {
    meter.Finish(work);
    return std::nullopt;
  }
  if (const Bytes outputs = OutputsAtTheEnd(groups, by_set);
      outputs > bound.bytes) {
    bound.bytes = outputs;
    bound.op = kNone;  // no one op: the last step, whichever op runs there
  }
  OrderBounds bounds;
  bounds.sums = bound.bytes;
  // The cut refinement, the ops alive with the most in every order first.
  std::vector<int> ops_first(n);
  std::iota(ops_first.begin(), ops_first.end(), 0);
  std::stable_sort(ops_first.begin(), ops_first.end(), [&](int a, int b) {
    return every_order[a] > every_order[b];
  });
  internal::CutBound(dag, groups, ops_first,
                     std::min(max_work, work + internal::kCutBoundWork), work,
                     bound.bytes, bound.op);
  bound.cut = work > max_work || meter.OutOfTime(work);
  meter.Finish(work);
  bound.work = (work + kBoundStepsPerUnit - 1) / kBoundStepsPerUnit;
  bounds.bound = bound;
  return bounds;
}

}  // namespace internal

absl::StatusOr<std::optional<OrderLowerBound>> LowerBoundOverOrders(
    const Graph& graph, const BuildOptions& options,
    const PlanOptions& effort) {
  Budget budget(internal::WithDefaultWork(effort, internal::kBoundDefaultWork));
  MEMPLAN_ASSIGN_OR_RETURN(
      const std::optional<internal::OrderBounds> bounds,
      internal::ComputeOrderBounds(graph, options, budget));
  if (!bounds.has_value()) return std::nullopt;
  return bounds->bound;
}

}  // namespace memplan

// LowerBoundOverOrders: the bytes every op ordering needs at some step. See
// memplan/reorder.h.
//
// A buffer is alive at op v in every order when one of the ops that start
// it (its producers; graph inputs from the start) runs no later than v in
// every order, and one of the ops that end it (its readers; graph outputs
// until the end) no earlier: an ancestor (or v) and a descendant (or v) in
// the DAG every ordering keeps (model/op_dag.h). Summed at each op, the
// largest sum is a bound on the peak of every such order.
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

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "base/planner_util.h"
#include "base/status_macros.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "model/op_dag.h"

namespace memplan {
namespace {

using internal::BuildDag;
using internal::ByteGroups;
using internal::Dag;
using internal::TensorIndex;

constexpr int kNone = -1;
constexpr int kChunkWords = 16;
constexpr int kChunkOps = 64 * kChunkWords;

// Bytes that share one buffer in every order: a tensor with its views.
struct ViewGroup {
  Bytes size = 0;  // aligned as BuildProblem aligns its buffer
  bool from_start = false;  // alive from the first step (a graph input)
  bool to_end = false;      // alive to the last (a graph output)
  std::vector<int> starts;  // ops that start it
  std::vector<int> ends;    // ops that may end it
  Step first = std::numeric_limits<Step>::max();  // in the graph's order
  Step last = 0;                                  // exclusive
  int merge_set = kNone;  // the groups its in-place hints may join
};

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Unite(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

// The planned view groups of `graph`, which BuildProblem built into
// `problem`, and per tensor its group (kNone when unplanned).
std::vector<ViewGroup> ViewGroups(
    const Graph& graph, const Problem& problem, const BuildOptions& options,
    const absl::flat_hash_map<std::string, int>& index) {
  const int t_count = static_cast<int>(graph.tensors.size());
  const int n = static_cast<int>(graph.ops.size());
  UnionFind views(t_count);
  for (const Op& op : graph.ops) {
    for (const OperandPair& pair : op.alias) {
      views.Unite(TensorIndex(index, op.outputs[pair.output]),
                  TensorIndex(index, op.inputs[pair.input]));
    }
  }
  std::vector<bool> planned(t_count, false);
  for (const Buffer& buffer : problem.buffers) {
    for (const std::string& name : buffer.tensors) {
      planned[TensorIndex(index, name)] = true;
    }
  }
  std::vector<int> producer(t_count, kNone);
  std::vector<int> scratch_op(t_count, kNone);
  std::vector<std::vector<int>> readers(t_count);
  for (int i = 0; i < n; ++i) {
    for (const std::string& name : graph.ops[i].outputs) {
      producer[TensorIndex(index, name)] = i;
    }
    for (const std::string& name : graph.ops[i].scratch) {
      scratch_op[TensorIndex(index, name)] = i;
    }
    for (const std::string& name : graph.ops[i].inputs) {
      std::vector<int>& r = readers[TensorIndex(index, name)];
      if (r.empty() || r.back() != i) r.push_back(i);
    }
  }
  std::vector<int> group_of_root(t_count, kNone);
  std::vector<ViewGroup> groups;
  std::vector<Bytes> alignment;
  std::vector<int> group_of(t_count, kNone);
  for (int t = 0; t < t_count; ++t) {
    if (!planned[t]) continue;
    const int root = views.Find(t);
    if (group_of_root[root] == kNone) {
      group_of_root[root] = static_cast<int>(groups.size());
      groups.emplace_back();
      alignment.push_back(options.alignment);
    }
    const int g = group_of[t] = group_of_root[root];
    ViewGroup& group = groups[g];
    const Tensor& tensor = graph.tensors[t];
    group.size = std::max(group.size, tensor.size);  // a view spans no more
    alignment[g] = std::max(alignment[g], tensor.alignment);
    // As BuildProblem's lifetimes: [start, last reader + 1), outputs to the
    // end, a tensor nobody reads over its producer's step alone.
    int start = producer[t];
    if (tensor.kind == TensorKind::kScratch) start = scratch_op[t];
    if (start == kNone) {
      group.from_start = true;
    } else {
      group.starts.push_back(start);
    }
    group.ends.insert(group.ends.end(), readers[t].begin(), readers[t].end());
    if (tensor.kind == TensorKind::kOutput) group.to_end = true;
    if (readers[t].empty() && start != kNone) group.ends.push_back(start);
    const Step first = start == kNone ? 0 : start;
    Step last = readers[t].empty() ? first + 1 : readers[t].back() + 1;
    if (tensor.kind == TensorKind::kOutput) last = n;
    group.first = std::min(group.first, first);
    group.last = std::max({group.last, last, first + 1});
  }
  UnionFind merges(static_cast<int>(groups.size()));
  for (const Op& op : graph.ops) {
    for (const OperandPair& pair : op.inplace) {
      const int out = group_of[TensorIndex(index, op.outputs[pair.output])];
      const int in = group_of[TensorIndex(index, op.inputs[pair.input])];
      if (out != kNone && in != kNone) merges.Unite(out, in);
    }
  }
  for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
    ViewGroup& group = groups[g];
    group.size = internal::RoundUp(group.size, alignment[g]);
    group.merge_set = merges.Find(g);
    for (std::vector<int>* ops : {&group.starts, &group.ends}) {
      std::sort(ops->begin(), ops->end());
      ops->erase(std::unique(ops->begin(), ops->end()), ops->end());
    }
  }
  return groups;
}

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

}  // namespace

absl::StatusOr<std::optional<OrderLowerBound>> LowerBoundOverOrders(
    const Graph& graph, const BuildOptions& options, int64_t max_work) {
  // The ancestry's work from the data edges alone (at most one per input),
  // before building anything: a graph far beyond the work costs nothing.
  const int n = static_cast<int>(graph.ops.size());
  const int64_t chunks = (n + kChunkOps - 1) / kChunkOps;
  int64_t inputs = 0;
  for (const Op& op : graph.ops) inputs += static_cast<int64_t>(op.inputs.size());
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
  // Each merge set's groups together, largest first.
  std::vector<int> by_set(groups.size());
  std::iota(by_set.begin(), by_set.end(), 0);
  std::sort(by_set.begin(), by_set.end(), [&](int a, int b) {
    if (groups[a].merge_set != groups[b].merge_set) {
      return groups[a].merge_set < groups[b].merge_set;
    }
    if (groups[a].size != groups[b].size) return groups[a].size > groups[b].size;
    return a < b;
  });
  // The ancestry alone, before any work: one pass over the edges per chunk.
  int64_t work = chunks * (2 * (edges + n) * kChunkWords);
  if (work > max_work) return std::nullopt;

  OrderLowerBound bound;
  std::vector<uint64_t> descendants(static_cast<size_t>(n) * kChunkWords);
  std::vector<uint64_t> ancestors(static_cast<size_t>(n) * kChunkWords);
  for (int begin = 0; begin < n; begin += kChunkOps) {
    const int end = std::min(n, begin + kChunkOps);
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
      if (work > max_work) return std::nullopt;
    }
    const auto [bytes, op] = chunk.Max();
    if (bytes > bound.bytes) {
      bound.bytes = bytes;
      bound.op = op;
    }
  }
  return bound;
}

}  // namespace memplan

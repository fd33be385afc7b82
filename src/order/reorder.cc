// Op orderings: longest_path (memonger's idea), reverse_postorder (the
// baseline of the scheduling literature) and a memory-aware list scheduler.
// See memplan/reorder.h.

#include "memplan/reorder.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "memplan/problem.h"
#include "order/op_dag.h"
#include "order/order_effort.h"

namespace memplan {
namespace {

using internal::BuildDag;
using internal::ByteGroups;
using internal::Dag;
using internal::TensorIndex;

// The reverse postorder of a depth-first search over the DAG, which is
// topological: sources and each op's successors are visited in the order
// `visit_first` gives, so the branch visited last runs first.
template <typename VisitFirst>
std::vector<int> DepthFirstOrder(const Dag& dag, VisitFirst visit_first) {
  const int n = static_cast<int>(dag.succ.size());
  std::vector<std::vector<int>> children = dag.succ;
  for (auto& c : children) std::sort(c.begin(), c.end(), visit_first);
  std::vector<int> sources;
  for (int i = 0; i < n; ++i) {
    if (dag.indegree[i] == 0) sources.push_back(i);
  }
  std::sort(sources.begin(), sources.end(), visit_first);

  std::vector<int> postorder;
  postorder.reserve(n);
  std::vector<bool> visited(n, false);
  std::vector<std::pair<int, size_t>> stack;  // (op, next child)
  for (int source : sources) {
    if (visited[source]) continue;
    visited[source] = true;
    stack.emplace_back(source, 0);
    while (!stack.empty()) {
      auto& [op, next] = stack.back();
      if (next < children[op].size()) {
        const int child = children[op][next++];
        if (!visited[child]) {
          visited[child] = true;
          stack.emplace_back(child, 0);
        }
      } else {
        postorder.push_back(op);
        stack.pop_back();
      }
    }
  }
  std::reverse(postorder.begin(), postorder.end());
  return postorder;
}

// memonger's idea: branches are visited shortest (to a sink) first, so the
// longest runs first; ties by the later original index.
std::vector<int> LongestPathOrder(const Dag& dag) {
  const int n = static_cast<int>(dag.succ.size());
  // Ops are in a topological order already: heights in one backward pass.
  std::vector<int> height(n, 0);
  for (int i = n - 1; i >= 0; --i) {
    for (int j : dag.succ[i]) height[i] = std::max(height[i], height[j] + 1);
  }
  return DepthFirstOrder(dag, [&](int a, int b) {
    if (height[a] != height[b]) return height[a] < height[b];
    return a > b;
  });
}

// Live bytes as the scheduler sees them: views share their base's bytes (one
// group per base), a group is allocated when its base is produced (graph
// inputs and constants from the start) and freed once every op touching it
// has run, unless it holds a graph output. Constants weigh nothing (they are
// not planned by default).
class MemoryModel {
 public:
  MemoryModel(const Graph& graph,
              const absl::flat_hash_map<std::string, int>& index)
      : graph_(graph) {
    const int t_count = static_cast<int>(graph.tensors.size());
    group_.resize(t_count);
    std::iota(group_.begin(), group_.end(), 0);
    for (const Op& op : graph.ops) {
      for (const OperandPair& pair : op.alias) {
        const int out = Find(TensorIndex(index, op.outputs[pair.output]));
        const int in = Find(TensorIndex(index, op.inputs[pair.input]));
        if (out != in) group_[out] = in;
      }
    }
    for (int t = 0; t < t_count; ++t) group_[t] = Find(t);
    size_.assign(t_count, 0);
    keep_.assign(t_count, false);
    for (int t = 0; t < t_count; ++t) {
      const Tensor& tensor = graph.tensors[t];
      if (tensor.kind == TensorKind::kOutput) keep_[group_[t]] = true;
      if (group_[t] != t) continue;
      if (tensor.kind != TensorKind::kConstant) size_[t] = tensor.size;
    }
    const int n = static_cast<int>(graph.ops.size());
    touches_.assign(n, {});
    allocates_.assign(n, {});
    scratch_.assign(n, 0);
    for (int i = 0; i < n; ++i) {
      const Op& op = graph.ops[i];
      for (const std::string& name : op.inputs) {
        touches_[i].push_back(group_[TensorIndex(index, name)]);
      }
      for (const std::string& name : op.outputs) {
        const int t = TensorIndex(index, name);
        if (group_[t] == t) {
          allocates_[i].push_back(t);
        } else {
          touches_[i].push_back(group_[t]);
        }
      }
      for (const std::string& name : op.scratch) {
        scratch_[i] += graph.tensors[TensorIndex(index, name)].size;
      }
      std::sort(touches_[i].begin(), touches_[i].end());
      touches_[i].erase(std::unique(touches_[i].begin(), touches_[i].end()),
                        touches_[i].end());
    }
  }

  // Runs the ops, choosing at each step the ready op of the least key:
  // (bytes alive after it, bytes alive while it runs, index) when
  // `after_first`, else (while it runs, after it, index). The bytes alive
  // before the step are the same for every ready op, so the keys are what
  // the op allocates and frees: an op's key changes only when another op's
  // run leaves it the last toucher of a group. A heap with lazy updates then
  // makes each step O(log n), where a scan of every ready op made a fan of
  // w branches cost w^2.
  std::vector<int> Schedule(const Dag& dag, bool after_first) const {
    const int n = static_cast<int>(graph_.ops.size());
    std::vector<int> remaining(group_.size(), 0);
    std::vector<std::vector<int>> touchers(group_.size());
    for (int i = 0; i < n; ++i) {
      for (int g : touches_[i]) {
        ++remaining[g];
        touchers[g].push_back(i);
      }
    }
    std::vector<Bytes> allocated(n, 0);
    std::vector<Bytes> freed(n, 0);
    for (int i = 0; i < n; ++i) {
      for (int g : allocates_[i]) {
        allocated[i] += size_[g];
        // Produced and never touched again: freed right after the op.
        if (remaining[g] == 0 && !keep_[g]) freed[i] += size_[g];
      }
      for (int g : touches_[i]) {
        if (remaining[g] == 1 && !keep_[g]) freed[i] += size_[g];
      }
    }
    using Key = std::tuple<Bytes, Bytes, int>;
    auto key = [&](int op) {
      const Bytes after = allocated[op] - freed[op];
      const Bytes during = allocated[op] + scratch_[op];
      return after_first ? Key{after, during, op} : Key{during, after, op};
    };
    // Entries (key, version); an op's entry is current while its version is.
    using Entry = std::pair<Key, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    std::vector<int> version(n, 0);
    std::vector<bool> ready(n, false);
    std::vector<bool> done(n, false);
    std::vector<int> indegree = dag.indegree;
    for (int i = 0; i < n; ++i) {
      if (indegree[i] == 0) {
        ready[i] = true;
        heap.emplace(key(i), version[i]);
      }
    }
    std::vector<int> order;
    order.reserve(n);
    while (!heap.empty()) {
      const auto [top, v] = heap.top();
      heap.pop();
      const int op = std::get<2>(top);
      if (done[op] || v != version[op]) continue;
      done[op] = true;
      order.push_back(op);
      for (int g : touches_[op]) {
        if (--remaining[g] != 1 || keep_[g]) continue;
        // Its last toucher now frees it.
        for (int t : touchers[g]) {
          if (done[t]) continue;
          freed[t] += size_[g];
          if (ready[t]) heap.emplace(key(t), ++version[t]);
          break;
        }
      }
      for (int j : dag.succ[op]) {
        if (--indegree[j] == 0) {
          ready[j] = true;
          heap.emplace(key(j), version[j]);
        }
      }
    }
    return order;
  }

 private:
  int Find(int t) {
    while (group_[t] != t) t = group_[t] = group_[group_[t]];
    return t;
  }

  const Graph& graph_;
  std::vector<int> group_;  // tensor -> its group's base tensor
  std::vector<Bytes> size_;
  std::vector<bool> keep_;
  std::vector<std::vector<int>> touches_;    // per op: groups read or viewed
  std::vector<std::vector<int>> allocates_;  // per op: groups it produces
  std::vector<Bytes> scratch_;
};

absl::StatusOr<Bytes> LowerBoundOf(const Graph& graph,
                                   const BuildOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(Problem problem, BuildProblem(graph, options));
  return LowerBound(problem);
}

}  // namespace

std::vector<std::string> OrderingNames() {
  return {"longest_path", "memory", "optimal", "window", "reverse_postorder"};
}

Graph PermuteOps(const Graph& graph, const std::vector<int>& order) {
  Graph out = graph;
  for (size_t k = 0; k < order.size(); ++k) out.ops[k] = graph.ops[order[k]];
  return out;
}

absl::StatusOr<std::vector<int>> ComputeOpOrder(const Graph& graph,
                                                std::string_view ordering,
                                                const BuildOptions& options,
                                                const PlanOptions& effort) {
  const std::vector<std::string> names = OrderingNames();
  if (std::find(names.begin(), names.end(), ordering) == names.end()) {
    return absl::NotFoundError(
        absl::StrCat("unknown op ordering \"", std::string(ordering),
                     "\"; valid orderings: ", absl::StrJoin(names, ", ")));
  }
  if (ordering == "optimal") {
    MEMPLAN_ASSIGN_OR_RETURN(OptimalOrder optimal,
                             ComputeOptimalOpOrder(graph, options, effort));
    return std::move(optimal.order);
  }
  if (ordering == "window") {
    MEMPLAN_ASSIGN_OR_RETURN(WindowOrder window,
                             ComputeWindowOpOrder(graph, options, effort));
    return std::move(window.order);
  }
  // BuildProblem names the first malformed item (and checks the order).
  MEMPLAN_ASSIGN_OR_RETURN(const Problem problem, BuildProblem(graph, options));
  const Bytes original_bound = LowerBound(problem);
  absl::flat_hash_map<std::string, int> index;
  for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
    index.emplace(graph.tensors[t].name, t);
  }
  const Dag dag = BuildDag(graph, index, ByteGroups(graph, problem, index));
  if (ordering == "longest_path") return LongestPathOrder(dag);
  if (ordering == "reverse_postorder") {
    return DepthFirstOrder(dag, std::less<int>());
  }

  MEMPLAN_ASSIGN_OR_RETURN(
      auto memory,
      internal::MemoryOrder(graph, options, original_bound, index, dag));
  return std::move(memory.first);
}

absl::Status CheckOpOrder(const Graph& graph, const std::vector<int>& order,
                          const BuildOptions& options) {
  const int n = static_cast<int>(graph.ops.size());
  std::vector<int> step(n, -1);
  if (static_cast<int>(order.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "an op order of ", order.size(), " ops for a graph of ", n));
  }
  for (int k = 0; k < n; ++k) {
    if (order[k] < 0 || order[k] >= n || step[order[k]] >= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the op order is not a permutation of the graph's ops (at step ", k,
          ")"));
    }
    step[order[k]] = k;
  }
  MEMPLAN_ASSIGN_OR_RETURN(const Problem problem, BuildProblem(graph, options));
  absl::flat_hash_map<std::string, int> index;
  for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
    index.emplace(graph.tensors[t].name, t);
  }
  const Dag dag = BuildDag(graph, index, ByteGroups(graph, problem, index));
  for (int u = 0; u < n; ++u) {
    for (int v : dag.succ[u]) {
      if (step[v] < step[u]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the op order runs \"", graph.ops[v].name, "\" before \"",
            graph.ops[u].name, "\", which every order keeps before it"));
      }
    }
  }
  return absl::OkStatus();
}

namespace internal {

absl::StatusOr<std::pair<std::vector<int>, Bytes>> MemoryOrder(
    const Graph& graph, const BuildOptions& options, Bytes original_bound,
    const absl::flat_hash_map<std::string, int>& index, const Dag& dag) {
  const MemoryModel model(graph, index);
  const std::vector<std::vector<int>> candidates = {
      model.Schedule(dag, /*after_first=*/true),
      model.Schedule(dag, /*after_first=*/false)};
  std::vector<int> best(graph.ops.size());
  std::iota(best.begin(), best.end(), 0);
  Bytes best_bound = original_bound;
  for (const std::vector<int>& order : candidates) {
    MEMPLAN_ASSIGN_OR_RETURN(const Bytes bound,
                             LowerBoundOf(PermuteOps(graph, order), options));
    if (bound < best_bound) {
      best = order;
      best_bound = bound;
    }
  }
  return std::make_pair(std::move(best), best_bound);
}

}  // namespace internal

PlanOptions SplitOrderingEffort(std::string_view ordering, PlanOptions& plan) {
  if (!internal::HasLimit(plan) ||
      (ordering != "optimal" && ordering != "window")) {
    return {};
  }
  PlanOptions effort;
  effort.deadline = plan.deadline;
  if (plan.work_limit > 0) {
    effort.work_limit = std::max<int64_t>(1, plan.work_limit / 2);
    plan.work_limit = std::max<int64_t>(1, plan.work_limit - effort.work_limit);
  }
  if (plan.time_limit != absl::InfiniteDuration()) {
    effort.time_limit = plan.time_limit / 2;
    plan.time_limit -= effort.time_limit;
  }
  return effort;
}

absl::StatusOr<Graph> ReorderGraph(const Graph& graph,
                                   std::string_view ordering,
                                   const BuildOptions& options,
                                   const PlanOptions& effort) {
  MEMPLAN_ASSIGN_OR_RETURN(const std::vector<int> order,
                           ComputeOpOrder(graph, ordering, options, effort));
  return PermuteOps(graph, order);
}

}  // namespace memplan

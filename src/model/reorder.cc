// Op orderings: longest_path (memonger's idea) and a memory-aware list
// scheduler. See memplan/reorder.h.

#include "memplan/reorder.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "memplan/problem.h"
#include "model/op_dag.h"

namespace memplan {
namespace {

using internal::BuildDag;
using internal::ByteGroups;
using internal::Dag;
using internal::TensorIndex;

// memonger's idea as a depth-first topological sort: the reverse postorder of
// a DFS is topological, and the branch visited last comes first, so branches
// are visited shortest (to a sink) first, ties by the later original index.
std::vector<int> LongestPathOrder(const Dag& dag) {
  const int n = static_cast<int>(dag.succ.size());
  // Ops are in a topological order already: heights in one backward pass.
  std::vector<int> height(n, 0);
  for (int i = n - 1; i >= 0; --i) {
    for (int j : dag.succ[i]) height[i] = std::max(height[i], height[j] + 1);
  }
  auto visit_first = [&](int a, int b) {
    if (height[a] != height[b]) return height[a] < height[b];
    return a > b;
  };
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
    initially_live_.assign(t_count, false);
    for (int t = 0; t < t_count; ++t) {
      const Tensor& tensor = graph.tensors[t];
      if (tensor.kind == TensorKind::kOutput) keep_[group_[t]] = true;
      if (group_[t] != t) continue;
      if (tensor.kind != TensorKind::kConstant) size_[t] = tensor.size;
      if (tensor.kind == TensorKind::kInput ||
          tensor.kind == TensorKind::kConstant) {
        initially_live_[t] = true;
      }
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

  struct Effect {
    Bytes peak = 0;  // live bytes while the op runs
    Bytes after = 0;
  };

  // Runs the ops in `order` choosing, at each step, among the ready ops by
  // `better` over their effects; returns the order.
  template <typename Better>
  std::vector<int> Schedule(const Dag& dag, Better better) const {
    const int n = static_cast<int>(graph_.ops.size());
    std::vector<int> remaining(group_.size(), 0);
    for (int i = 0; i < n; ++i) {
      for (int g : touches_[i]) ++remaining[g];
    }
    Bytes live = 0;
    for (size_t g = 0; g < group_.size(); ++g) {
      if (initially_live_[g] && static_cast<int>(g) == group_[g])
        live += size_[g];
    }
    std::vector<int> indegree = dag.indegree;
    std::vector<int> ready;
    for (int i = 0; i < n; ++i) {
      if (indegree[i] == 0) ready.push_back(i);
    }
    std::vector<int> order;
    order.reserve(n);
    while (!ready.empty()) {
      size_t best = 0;
      Effect best_effect = Evaluate(ready[0], live, remaining);
      for (size_t k = 1; k < ready.size(); ++k) {
        const Effect e = Evaluate(ready[k], live, remaining);
        if (better(e, ready[k], best_effect, ready[best])) {
          best = k;
          best_effect = e;
        }
      }
      const int op = ready[best];
      ready.erase(ready.begin() + best);
      order.push_back(op);
      live = best_effect.after;
      for (int g : touches_[op]) --remaining[g];
      for (int j : dag.succ[op]) {
        if (--indegree[j] == 0) ready.push_back(j);
      }
    }
    return order;
  }

 private:
  int Find(int t) {
    while (group_[t] != t) t = group_[t] = group_[group_[t]];
    return t;
  }

  Effect Evaluate(int op, Bytes live, const std::vector<int>& remaining) const {
    Bytes allocated = 0;
    for (int g : allocates_[op]) allocated += size_[g];
    Bytes freed = 0;
    for (int g : touches_[op]) {
      if (remaining[g] == 1 && !keep_[g]) freed += size_[g];
    }
    for (int g : allocates_[op]) {
      // Produced and never touched again: freed right after the op.
      if (remaining[g] == 0 && !keep_[g]) freed += size_[g];
    }
    return Effect{.peak = live + allocated + scratch_[op],
                  .after = live + allocated - freed};
  }

  const Graph& graph_;
  std::vector<int> group_;  // tensor -> its group's base tensor
  std::vector<Bytes> size_;
  std::vector<bool> keep_;
  std::vector<bool> initially_live_;
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

std::vector<std::string> OrderingNames() { return {"longest_path", "memory"}; }

Graph PermuteOps(const Graph& graph, const std::vector<int>& order) {
  Graph out = graph;
  for (size_t k = 0; k < order.size(); ++k) out.ops[k] = graph.ops[order[k]];
  return out;
}

absl::StatusOr<std::vector<int>> ComputeOpOrder(const Graph& graph,
                                                std::string_view ordering,
                                                const BuildOptions& options) {
  const std::vector<std::string> names = OrderingNames();
  if (std::find(names.begin(), names.end(), ordering) == names.end()) {
    return absl::NotFoundError(
        absl::StrCat("unknown op ordering \"", std::string(ordering),
                     "\"; valid orderings: ", absl::StrJoin(names, ", ")));
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

  const MemoryModel model(graph, index);
  using Effect = MemoryModel::Effect;
  const std::vector<std::vector<int>> candidates = {
      model.Schedule(dag,
                     [](const Effect& a, int ia, const Effect& b, int ib) {
                       if (a.after != b.after) return a.after < b.after;
                       if (a.peak != b.peak) return a.peak < b.peak;
                       return ia < ib;
                     }),
      model.Schedule(dag, [](const Effect& a, int ia, const Effect& b, int ib) {
        if (a.peak != b.peak) return a.peak < b.peak;
        if (a.after != b.after) return a.after < b.after;
        return ia < ib;
      })};
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
  return best;
}

absl::StatusOr<Graph> ReorderGraph(const Graph& graph,
                                   std::string_view ordering,
                                   const BuildOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(const std::vector<int> order,
                           ComputeOpOrder(graph, ordering, options));
  return PermuteOps(graph, order);
}

}  // namespace memplan

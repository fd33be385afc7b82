// The rules of what may run again (remat/eligible.h).

#include "remat/eligible.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "memplan/types.h"

namespace memplan::remat {
namespace {

void JoinPairs(const Op& op, const std::vector<OperandPair>& pairs,
               GraphIndex& index, std::vector<bool>& paired) {
  for (const OperandPair& p : pairs) {
    const int out = index.Of(op.outputs[p.output]);
    const int in = index.Of(op.inputs[p.input]);
    if (out == kNoIndex || in == kNoIndex) continue;
    paired[out] = paired[in] = true;
    index.parent[index.Find(out)] = index.Find(in);
  }
}

}  // namespace

GraphIndex IndexGraph(const Graph& graph) {
  GraphIndex index;
  const int n = static_cast<int>(graph.tensors.size());
  for (int t = 0; t < n; ++t) index.tensor.emplace(graph.tensors[t].name, t);
  index.producer.assign(n, kNoIndex);
  index.readers.resize(n);
  index.parent.resize(n);
  for (int t = 0; t < n; ++t) index.parent[t] = t;
  std::vector<bool> paired(n, false);
  std::vector<std::pair<int, int>> writes;  // (tensor, op)
  for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
    const Op& op = graph.ops[i];
    for (const std::string& name : op.inputs) {
      const int t = index.Of(name);
      if (t != kNoIndex &&
          (index.readers[t].empty() || index.readers[t].back() != i))
        index.readers[t].push_back(i);
    }
    for (const std::string& name : op.outputs) {
      if (const int t = index.Of(name); t != kNoIndex) index.producer[t] = i;
    }
    JoinPairs(op, op.inplace, index, paired);
    JoinPairs(op, op.alias, index, paired);
    for (int j : op.writes) writes.emplace_back(index.Of(op.inputs[j]), i);
  }
  index.shared.assign(n, false);
  index.writers.resize(n);
  index.group.resize(n);
  for (int t = 0; t < n; ++t) index.group[index.Find(t)].push_back(t);
  for (int t = 0; t < n; ++t) {
    if (paired[t]) index.shared[index.Find(t)] = true;
  }
  for (const auto& [t, op] : writes) {
    if (t == kNoIndex) continue;
    index.shared[index.Find(t)] = true;
    index.writers[index.Find(t)].push_back(op);
  }
  for (const TensorConflict& c : graph.conflicts) {
    index.in_conflicts.insert(c.a);
    index.in_conflicts.insert(c.b);
  }
  return index;
}

namespace {

// Whether tensor t may be dropped and made again: an activation, not
// fixed, in no conflict.
bool Droppable(const Graph& graph, const GraphIndex& index, int t) {
  if (t == kNoIndex) return false;
  const Tensor& tensor = graph.tensors[t];
  return tensor.kind == TensorKind::kActivation && !tensor.fixed.has_value() &&
         !index.in_conflicts.contains(tensor.name);
}

// Whether op q is a view of the group `root`: pure, reading and making
// only tensors of the group (through alias or in-place hints).
bool IsView(const Op& q, GraphIndex& index, int root) {
  if (!q.recomputable || q.pinned || !q.writes.empty() || !q.scratch.empty() ||
      (q.alias.empty() && q.inplace.empty())) {
    return false;
  }
  for (const std::string& name : q.inputs) {
    const int t = index.Of(name);
    if (t == kNoIndex || index.Find(t) != root) return false;
  }
  for (const std::string& name : q.outputs) {
    const int t = index.Of(name);
    if (t == kNoIndex || index.Find(t) != root) return false;
  }
  return true;
}

// The ops that make the other tensors sharing the bytes of op p's output
// t, added to `views`: ops run again with p (their outputs aliasing its
// output again). False when the group holds a tensor that is not a view
// of t made by such an op, is written, or spans more than one buffer.
bool ViewsOf(const Graph& graph, GraphIndex& index,
             const std::vector<int>& buffer_of, int p, int t,
             std::vector<int>& views) {
  const int root = index.Find(t);
  if (!index.shared[root]) return true;
  if (!index.writers[root].empty()) return false;
  for (int u : index.group[root]) {
    if (u == t) continue;
    const int q = index.producer[u];
    if (q == kNoIndex || q == p || buffer_of[t] == kNoIndex ||
        buffer_of[u] != buffer_of[t] || !Droppable(graph, index, u) ||
        !IsView(graph.ops[q], index, root)) {
      return false;
    }
    views.push_back(q);
  }
  return true;
}

}  // namespace

bool Eligible(const Graph& graph, int i, GraphIndex& index,
              const std::vector<int>& buffer_of, std::vector<int>& views) {
  const Op& op = graph.ops[i];
  if (!op.recomputable || op.pinned || !op.writes.empty() ||
      !op.scratch.empty() || !op.inplace.empty() || !op.alias.empty() ||
      op.outputs.empty()) {
    return false;
  }
  views.clear();
  for (const std::string& name : op.outputs) {
    const int t = index.Of(name);
    if (!Droppable(graph, index, t) ||
        !ViewsOf(graph, index, buffer_of, i, t, views)) {
      return false;
    }
  }
  std::sort(views.begin(), views.end());
  views.erase(std::unique(views.begin(), views.end()), views.end());
  return true;
}

}  // namespace memplan::remat

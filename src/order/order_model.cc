#include "order/order_model.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "order/op_dag.h"

namespace memplan::internal {

namespace {
constexpr int kNone = -1;
}  // namespace

OrderGraph BuildOrderGraph(const Graph& graph, const Problem& problem,
                           const BuildOptions& options) {
  OrderGraph result;
  for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
    result.index.emplace(graph.tensors[t].name, t);
  }
  result.dag =
      BuildDag(graph, result.index, ByteGroups(graph, problem, result.index));
  result.groups =
      ViewGroups(graph, problem, options, result.index, &result.group_of);
  return result;
}

LiveModel BuildLiveModel(const Graph& graph,
                         const std::vector<ViewGroup>& groups,
                         const std::vector<int>& group_of, const Dag& dag) {
  const int n = static_cast<int>(graph.ops.size());
  LiveModel model;
  model.starts.assign(n, {});
  model.ends.assign(n, {});
  model.pred.assign(n, {});
  model.inplace.assign(n, {});
  for (int x = 0; x < n; ++x) {
    for (int s : dag.succ[x]) model.pred[s].push_back(x);
  }
  const int g_count = static_cast<int>(groups.size());
  for (int g = 0; g < g_count; ++g) {
    const ViewGroup& group = groups[g];
    if (group.from_start && group.ends.empty() && !group.to_end) {
      model.first_only += group.size;
    } else if (group.from_start) {
      model.initial += group.size;
    } else {
      for (int s : group.starts) model.starts[s].push_back(g);
    }
    if (!group.to_end) {
      for (int e : group.ends) model.ends[e].push_back(g);
    }
  }
  absl::flat_hash_map<std::string, int> index;
  for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
    index.emplace(graph.tensors[t].name, t);
  }
  // What keeps BuildProblem from merging whatever the order: a fixed
  // placement, an explicit conflict, an output larger than an input that
  // is its own buffer (one that is itself no in-place output).
  std::vector<Bytes> raw_size(g_count, 0);
  std::vector<bool> fixed(g_count, false);
  for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
    const int g = group_of[t];
    if (g == kNone) continue;
    raw_size[g] = std::max(raw_size[g], graph.tensors[t].size);
    if (graph.tensors[t].fixed.has_value()) fixed[g] = true;
  }
  std::vector<bool> inplace_output(g_count, false);
  for (const Op& op : graph.ops) {
    for (const OperandPair& pair : op.inplace) {
      const int out = group_of[index.at(op.outputs[pair.output])];
      if (out != kNone) inplace_output[out] = true;
    }
  }
  absl::flat_hash_set<std::pair<int, int>> conflicts;
  for (const TensorConflict& c : graph.conflicts) {
    auto a = index.find(c.a);
    auto b = index.find(c.b);
    if (a == index.end() || b == index.end()) continue;
    const int ga = group_of[a->second];
    const int gb = group_of[b->second];
    if (ga == kNone || gb == kNone) continue;
    conflicts.emplace(std::min(ga, gb), std::max(ga, gb));
  }
  for (int i = 0; i < n; ++i) {
    const Op& op = graph.ops[i];
    for (const OperandPair& pair : op.inplace) {
      const int in = group_of[index.at(op.inputs[pair.input])];
      const int out = group_of[index.at(op.outputs[pair.output])];
      if (in == kNone || out == kNone || in == out) continue;
      if (groups[in].from_start || groups[in].to_end) continue;
      if (fixed[in] || fixed[out]) continue;
      if (conflicts.contains({std::min(in, out), std::max(in, out)})) continue;
      if (!inplace_output[in] && raw_size[out] > raw_size[in]) continue;
      model.inplace[i].emplace_back(in, out);
    }
  }
  return model;
}

absl::StatusOr<Bytes> OrderPeak(const Graph& graph,
                                const std::vector<int>& order,
                                const BuildOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(const Problem problem,
                           BuildProblem(PermuteOps(graph, order), options));
  return LowerBound(problem);
}

}  // namespace memplan::internal

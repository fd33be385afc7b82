// PlaceTensors: a plan's buffers back to the graph's tensors
// (memplan/tensor_placement.h).

#include "memplan/tensor_placement.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace memplan {

absl::StatusOr<std::vector<TensorPlacement>> PlaceTensors(
    const Graph& graph, const Problem& problem, const Plan& plan) {
  if (plan.assignments.size() != problem.buffers.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan places ", plan.assignments.size(),
                     " buffers, the problem has ", problem.buffers.size()));
  }
  std::vector<TensorPlacement> tensors;
  tensors.reserve(graph.tensors.size());
  absl::flat_hash_map<absl::string_view, int32_t> index;
  for (const Tensor& t : graph.tensors) {
    index.emplace(absl::string_view(t.name),
                  static_cast<int32_t>(tensors.size()));
    tensors.push_back({.name = t.name, .kind = t.kind, .size = t.size});
  }
  for (const Assignment& a : plan.assignments) {
    if (a.buffer < 0 ||
        a.buffer >= static_cast<BufferId>(problem.buffers.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("the plan assigns buffer ", a.buffer,
                       ", which the problem does not have"));
    }
    for (const std::string& name : problem.buffers[a.buffer].tensors) {
      auto it = index.find(absl::string_view(name));
      if (it == index.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffer \"", problem.buffers[a.buffer].name, "\" holds tensor \"",
            name, "\", which the graph does not have"));
      }
      TensorPlacement& t = tensors[it->second];
      t.buffer = a.buffer;
      t.pool = a.pool;
      t.offset = a.offset;
    }
  }
  return tensors;
}

const TensorPlacement* GraphPlan::Find(std::string_view name) const {
  auto it = std::lower_bound(
      tensors_by_name.begin(), tensors_by_name.end(), name,
      [&](int32_t t, std::string_view n) { return tensors[t].name < n; });
  if (it == tensors_by_name.end() || tensors[*it].name != name) return nullptr;
  return &tensors[*it];
}

void GraphPlan::IndexTensors() {
  tensors_by_name.resize(tensors.size());
  std::iota(tensors_by_name.begin(), tensors_by_name.end(), 0);
  std::sort(
      tensors_by_name.begin(), tensors_by_name.end(),
      [&](int32_t a, int32_t b) { return tensors[a].name < tensors[b].name; });
}

}  // namespace memplan

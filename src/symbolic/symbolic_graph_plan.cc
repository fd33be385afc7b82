// SymbolicGraphPlan: a bucket by its dims' values, and the ordinary plan of
// the graph at given values.

#include <numeric>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/symbolic.h"
#include "memplan/tensor_placement.h"
#include "memplan/verify.h"
#include "symbolic/range_text.h"

namespace memplan {

using internal::RangeText;

const SymbolicBucket* SymbolicGraphPlan::Find(const DimValues& values) const {
  for (const SymbolicBucket& b : buckets) {
    bool inside = true;
    for (const auto& [name, range] : b.dims) {
      auto it = values.find(name);
      if (it == values.end() || it->second < range.min ||
          it->second > range.max) {
        inside = false;
        break;
      }
    }
    if (inside) return &b;
  }
  return nullptr;
}

absl::StatusOr<GraphPlan> SymbolicGraphPlan::At(const Graph& graph,
                                                const DimValues& values) const {
  MEMPLAN_RETURN_IF_ERROR(CheckDimValues(problem.dims, values));
  for (const auto& [name, range] : problem.dims) {
    if (!values.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no value for dim \"", name, "\" (range ", RangeText(range),
          "): give every dim of the plan a value"));
    }
  }
  const SymbolicBucket* bucket = Find(values);
  if (bucket == nullptr) {
    return absl::InternalError("no bucket of the plan holds the values");
  }
  MEMPLAN_ASSIGN_OR_RETURN(Graph bound, BindDims(graph, values));
  GraphPlan result;
  MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem sub,
                           bucket->ProblemOf(problem));
  const DimValues stepped = StepValues(values, bucket->steps);
  MEMPLAN_ASSIGN_OR_RETURN(result.problem, sub.At(stepped));
  MEMPLAN_ASSIGN_OR_RETURN(result.plan, bucket->plan.At(sub, stepped));
  MEMPLAN_RETURN_IF_ERROR(VerifyPlan(result.problem, result.plan));
  result.op_order.resize(bound.ops.size());
  std::iota(result.op_order.begin(), result.op_order.end(), 0);
  MEMPLAN_ASSIGN_OR_RETURN(result.tensors,
                           PlaceTensors(bound, result.problem, result.plan));
  result.IndexTensors();
  return result;
}

}  // namespace memplan

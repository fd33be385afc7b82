// PlanSymbolicUpperBound: the baseline, greedy_by_size at the dims' maxima
// with its constant offsets used at every value.

#include <memory>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_planner.h"
#include "memplan/symbolic_verify.h"
#include "memplan/verify.h"

namespace memplan {

absl::StatusOr<SymbolicPlan> PlanSymbolicUpperBound(
    const SymbolicProblem& problem) {
  DimValues maxima;
  for (const auto& [name, range] : problem.dims) maxima[name] = range.max;
  MEMPLAN_ASSIGN_OR_RETURN(Problem at_max, problem.At(maxima));
  MEMPLAN_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner,
                           CreatePlanner("greedy_by_size"));
  MEMPLAN_ASSIGN_OR_RETURN(Plan plan, planner->Solve(at_max, PlanOptions{}));
  MEMPLAN_RETURN_IF_ERROR(VerifyPlan(at_max, plan));
  SymbolicPlan out;
  out.planner = "upper_bound";
  for (const Assignment& a : plan.assignments) {
    out.offsets.push_back(DimExpr(a.offset));
  }
  out.peak = DimExpr(plan.peak);
  MEMPLAN_RETURN_IF_ERROR(VerifySymbolicPlan(problem, out));
  return out;
}

}  // namespace memplan

// PlanMemory: build, solve, verify.

#include "memplan/memplan.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "memplan/internal/status_macros.h"
#include "memplan/reorder.h"

namespace memplan {

absl::StatusOr<Plan> PlanMemory(const Graph& graph,
                                const PlanMemoryOptions& options) {
  if (!options.reorder.empty()) {
    MEMPLAN_ASSIGN_OR_RETURN(Graph reordered,
                             ReorderGraph(graph, options.reorder, options.build));
    PlanMemoryOptions rest = options;
    rest.reorder.clear();
    return PlanMemory(reordered, rest);
  }
  MEMPLAN_ASSIGN_OR_RETURN(Problem problem, BuildProblem(graph, options.build));
  return PlanMemory(problem, options);
}

absl::StatusOr<Plan> PlanMemory(const Problem& problem,
                                const PlanMemoryOptions& options) {
  if (!options.reorder.empty()) {
    return absl::InvalidArgumentError(
        "an op ordering applies to graphs; a problem has no ops to reorder");
  }
  const std::string name = options.planner.empty()
                               ? std::string(DefaultPlannerName())
                               : options.planner;
  MEMPLAN_ASSIGN_OR_RETURN(auto planner, CreatePlanner(name));
  return PlanMemory(problem, *planner, options.plan);
}

absl::StatusOr<Plan> PlanMemory(const Problem& problem, const Planner& planner,
                                const PlanOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(ValidateProblem(problem));
  if (options.time_limit < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("the time limit is negative");
  }
  const std::string name(planner.name());
  const absl::Time start = absl::Now();
  MEMPLAN_ASSIGN_OR_RETURN(Plan plan, planner.Solve(problem, options));
  plan.wall_time = absl::Now() - start;
  plan.planner = name;
  if (absl::Status status = VerifyPlan(problem, plan); !status.ok()) {
    return absl::InternalError(absl::StrCat(
        "planner \"", name, "\" produced an invalid plan: ", status.message()));
  }
  return plan;
}

}  // namespace memplan

// A user's program linking the installed memplan package: PlanMemory() with
// the default planner, and a planner built with its own options.
#include <cstdio>

#include "memplan/memplan.h"
#include "memplan/planners/cp.h"

int main() {
  memplan::Graph graph{
      .tensors = {{.name = "x", .size = 100, .kind = memplan::TensorKind::kInput},
                  {.name = "y", .size = 200},
                  {.name = "z", .size = 100, .kind = memplan::TensorKind::kOutput}},
      .ops = {{.name = "f", .inputs = {"x"}, .outputs = {"y"}},
              {.name = "g", .inputs = {"y"}, .outputs = {"z"}}},
  };
  absl::StatusOr<memplan::GraphPlan> planned = memplan::PlanMemory(graph);
  if (!planned.ok() || planned->Find("y") == nullptr ||
      !planned->Find("y")->planned()) {
    return 1;
  }
  const memplan::Plan* plan = &planned->plan;
  if (plan->peak < plan->lower_bound) return 1;

  absl::StatusOr<memplan::Problem> problem = memplan::BuildProblem(graph);
  if (!problem.ok()) return 1;
  memplan::CpOptions options;
  options.lowest_offset_first = true;
  absl::StatusOr<memplan::Plan> cp =
      memplan::MakeCpPlanner(options)->Solve(*problem, memplan::PlanOptions{});
  if (!cp.ok() || !memplan::VerifyPlan(*problem, *cp).ok() || !cp->proven_optimal) {
    return 1;
  }
  std::printf("peak %lld, cp %lld (proven), lower bound %lld\n",
              static_cast<long long>(plan->peak), static_cast<long long>(cp->peak),
              static_cast<long long>(plan->lower_bound));
  return 0;
}

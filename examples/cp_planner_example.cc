// The optional cp planner (Gecode): link memplan::cp, register it once, then
// ask for it by name like any other planner.
//
// It plans a small graph with "cp" and prints the arena and whether the
// plan is proven optimal.

#include <cstdio>
#include <string>

#include "memplan/memplan.h"
#include "memplan/planners/cp.h"

int main() {
  // Once, before looking planners up.
  absl::Status s = memplan::RegisterCpPlanner();
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  memplan::Graph graph{
      .name = "branches",
      .tensors =
          {{.name = "x", .size = 1024, .kind = memplan::TensorKind::kInput},
           {.name = "a", .size = 4096},
           {.name = "b", .size = 2048},
           {.name = "y", .size = 1024, .kind = memplan::TensorKind::kOutput}},
      .ops = {{.name = "split", .inputs = {"x"}, .outputs = {"a", "b"}},
              {.name = "join", .inputs = {"a", "b"}, .outputs = {"y"}}},
  };
  memplan::PlanMemoryOptions options;
  options.planner = "cp";
  absl::StatusOr<memplan::GraphPlan> result =
      memplan::PlanMemory(graph, options);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(result.status().message()).c_str());
    return 1;
  }
  std::printf("cp: %lld bytes, proven optimal: %s\n",
              static_cast<long long>(result->plan.peak),
              result->plan.proven_optimal ? "yes" : "no");
  return 0;
}

// A user's program linking the installed memplan package.
#include <cstdio>

#include "memplan/memplan.h"

int main() {
  memplan::Graph graph{
      .tensors = {{.name = "x", .size = 100, .kind = memplan::TensorKind::kInput},
                  {.name = "y", .size = 200},
                  {.name = "z", .size = 100, .kind = memplan::TensorKind::kOutput}},
      .ops = {{.name = "f", .inputs = {"x"}, .outputs = {"y"}},
              {.name = "g", .inputs = {"y"}, .outputs = {"z"}}},
  };
  absl::StatusOr<memplan::Plan> plan = memplan::PlanMemory(graph);
  if (!plan.ok() || plan->peak < plan->lower_bound) return 1;
  std::printf("peak %lld lower bound %lld\n", static_cast<long long>(plan->peak),
              static_cast<long long>(plan->lower_bound));
  return 0;
}

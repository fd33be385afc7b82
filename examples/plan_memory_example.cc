// A compiler's view of memplan: hand over the ops, get offsets back.
//
//   input -> conv -> relu -> pool -> output
//
// Build it with the library (see README) and run it: it prints each tensor's
// offset and the arena size the program needs.

#include <cstdio>

#include "memplan/memplan.h"

int main() {
  using memplan::TensorKind;
  memplan::Graph graph{
      .name = "tiny_cnn",
      .tensors = {{.name = "input", .size = 602112, .kind = TensorKind::kInput},
                  {.name = "conv", .size = 3211264},
                  {.name = "relu", .size = 3211264},
                  {.name = "pool",
                   .size = 802816,
                   .kind = TensorKind::kOutput}},
      .ops = {{.name = "conv1",
               .type = "Conv",
               .inputs = {"input"},
               .outputs = {"conv"}},
              {.name = "relu1",
               .type = "Relu",
               .inputs = {"conv"},
               .outputs = {"relu"},
               .inplace = {{.output = 0, .input = 0}}},
              {.name = "pool1",
               .type = "MaxPool",
               .inputs = {"relu"},
               .outputs = {"pool"}}},
  };
  memplan::PlanMemoryOptions options;
  options.build.alignment = 64;
  absl::StatusOr<memplan::Plan> plan = memplan::PlanMemory(graph, options);
  if (!plan.ok()) {
    std::fprintf(stderr, "%s\n", std::string(plan.status().message()).c_str());
    return 1;
  }
  memplan::Problem problem = *memplan::BuildProblem(graph, options.build);
  for (const memplan::Assignment& a : plan->assignments) {
    std::printf("%-8s offset %8lld\n", problem.buffers[a.buffer].name.c_str(),
                static_cast<long long>(a.offset));
  }
  std::printf("arena: %lld bytes (naive %lld, lower bound %lld), planner %s\n",
              static_cast<long long>(plan->peak),
              static_cast<long long>(plan->naive_total),
              static_cast<long long>(plan->lower_bound), plan->planner.c_str());
  return 0;
}

// A compiler's view of memplan: hand over the ops, get offsets back.
//
//   input -> conv -> relu -> pool -> output
//
// Build it with the library (docs/building.md) and run it: it prints each
// tensor's offset (relu shares conv's bytes: the op may work in place) and
// the arena size the program needs. The weights are constants, which the
// runtime keeps elsewhere: they are not planned.

#include <cstdio>

#include "memplan/memplan.h"

int main() {
  using memplan::TensorKind;
  memplan::Graph graph{
      .name = "tiny_cnn",
      .tensors = {{.name = "input", .size = 602112, .kind = TensorKind::kInput},
                  {.name = "conv1.weight",
                   .size = 37632,
                   .kind = TensorKind::kConstant},
                  {.name = "conv", .size = 3211264},
                  {.name = "relu", .size = 3211264},
                  {.name = "pool",
                   .size = 802816,
                   .kind = TensorKind::kOutput}},
      .ops = {{.name = "conv1",
               .type = "Conv",
               .inputs = {"input", "conv1.weight"},
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
  absl::StatusOr<memplan::GraphPlan> result =
      memplan::PlanMemory(graph, options);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(result.status().message()).c_str());
    return 1;
  }
  for (const memplan::TensorPlacement& t : result->tensors) {
    if (t.planned()) {
      std::printf("%-13s offset %8lld\n", t.name.c_str(),
                  static_cast<long long>(t.offset));
    } else {
      std::printf("%-13s not planned\n", t.name.c_str());
    }
  }
  // One tensor by name.
  const memplan::TensorPlacement* pool = result->Find("pool");
  std::printf("pool's output at %lld\n", static_cast<long long>(pool->offset));
  const memplan::Plan& plan = result->plan;
  std::printf("arena: %lld bytes (naive %lld, lower bound %lld), planner %s\n",
              static_cast<long long>(plan.peak),
              static_cast<long long>(plan.naive_total),
              static_cast<long long>(plan.lower_bound), plan.planner.c_str());
  return 0;
}

// A training step fitted into a memory budget by recomputing activations.
//
//   x -> f1 -> a1 -> f2 -> a2 -> f3 -> a3 -> loss -> b3 -> b2 -> b1 -> gx
//
// The backward ops b3..b1 read the forward activations again, so without
// recomputation x and a1..a3 are all alive at the loss. Rematerialize
// drops some of them after their forward use and runs their (pure,
// costed) ops again before the backward pass needs them; it prints the
// rewritten op list, the peak reached and what the recomputation costs.
// RematerializeExact then searches for the least cost at the same budget.

#include <cstdio>
#include <string>

#include "memplan/remat.h"
#include "memplan/remat_exact.h"

int main() {
  using memplan::Op;
  using memplan::TensorKind;
  memplan::Graph graph{
      .name = "tiny_training_step",
      .tensors = {{.name = "x", .size = 1000, .kind = TensorKind::kInput},
                  {.name = "a1", .size = 1000},
                  {.name = "a2", .size = 1000},
                  {.name = "a3", .size = 1000},
                  {.name = "loss", .size = 4},
                  {.name = "g3", .size = 1000},
                  {.name = "g2", .size = 1000},
                  {.name = "gx", .size = 1000, .kind = TensorKind::kOutput}},
  };
  auto forward = [](const char* name, const char* in, const char* out) {
    // "cost": FLOPs (any consistent unit); "recomputable": pure.
    return Op{.name = name,
              .inputs = {in},
              .outputs = {out},
              .cost = 2e6,
              .recomputable = true};
  };
  graph.ops = {forward("f1", "x", "a1"),
               forward("f2", "a1", "a2"),
               forward("f3", "a2", "a3"),
               forward("head", "a3", "loss"),
               {.name = "b3", .inputs = {"loss", "a3"}, .outputs = {"g3"}},
               {.name = "b2", .inputs = {"g3", "a2"}, .outputs = {"g2"}},
               {.name = "b1", .inputs = {"g2", "a1", "x"}, .outputs = {"gx"}}};

  absl::StatusOr<memplan::RematResult> fitted =
      memplan::Rematerialize(graph, /*budget=*/4000);
  if (!fitted.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(fitted.status().message()).c_str());
    return 1;
  }
  std::printf("peak %lld bytes without recomputation, %lld with it\n",
              static_cast<long long>(fitted->peak_without),
              static_cast<long long>(fitted->plan.plan.peak));
  std::printf("added cost %g, ops run again: %zu\n", fitted->added_cost,
              fitted->recomputed.size());
  for (const Op& op : fitted->graph.ops) std::printf("  %s\n", op.name.c_str());

  memplan::RematExactOptions limits;
  limits.work_limit = 1'000'000;  // work units; 0: about 10 s of CPU
  absl::StatusOr<memplan::RematExactResult> least =
      memplan::RematerializeExact(graph, /*budget=*/4000, limits);
  if (!least.ok()) {
    std::fprintf(stderr, "%s\n", std::string(least.status().message()).c_str());
    return 1;
  }
  // proven: no rewrite of the search's model costs less (remat_exact.h).
  std::printf("exact: added cost %g, %s\n", least->remat.added_cost,
              least->proven ? "proven least" : "not proven");
  return fitted->plan.plan.peak <= 4000 &&
                 least->remat.plan.plan.peak <= 4000 &&
                 least->remat.added_cost <= fitted->added_cost
             ? 0
             : 1;
}

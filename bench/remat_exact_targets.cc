// Exact rematerialization's target: the least recompute cost
// proven at 5 budgets of a training step of at most 60 ops, each solve
// within 10 s of CPU (see the top of memplan_bench.cc).

#include <time.h>

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench_util.h"
#include "memplan/formats.h"
#include "memplan/memplan.h"
#include "remat/remat_exact.h"
#include "workloads/byte_costs.h"

namespace memplan::bench {
namespace {

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// training/mlp_train.json (61 ops; the views of the weights and the
// gradient outputs are not recomputed) with every op that writes nothing
// recomputable at a cost of the bytes it makes; its inputs and outputs
// are the caller's.
absl::StatusOr<Graph> MlpStep() {
  absl::StatusOr<std::string> text =
      ReadFile(absl::StrCat(settings().data_dir, "/training/mlp_train.json"));
  if (!text.ok()) return text.status();
  absl::StatusOr<Graph> graph = ParseGraphJson(*text);
  if (!graph.ok()) return graph.status();
  return WithByteCosts(*std::move(graph));
}

// The 5 solves at 0.9, 0.8, 0.7, 0.6 and 0.5 of the placed peak (0.5: the
// least any rewrite reaches), default limits: counters proven (of 5),
// max_solve_cpu_s, work (all 5), cost_0.5 (the added cost at the least
// budget, in bytes made again).
void BM_remat_exact_mlp_train(benchmark::State& state) {
  absl::StatusOr<Graph> graph = MlpStep();
  if (!graph.ok()) {
    state.SkipWithError(std::string(graph.status().message()).c_str());
    return;
  }
  RematExactOptions options;
  options.plan.build.plan_inputs = false;
  options.plan.build.plan_outputs = false;
  absl::StatusOr<GraphPlan> plain = PlanMemory(*graph, options.plan);
  if (!plain.ok()) {
    state.SkipWithError(std::string(plain.status().message()).c_str());
    return;
  }
  int proven = 0;
  double slowest = 0, cost = 0;
  int64_t work = 0;
  for (auto _ : state) {
    proven = 0;
    slowest = 0;
    work = 0;
    for (double fraction : {0.9, 0.8, 0.7, 0.6, 0.5}) {
      const double start = CpuSeconds();
      absl::StatusOr<RematExactResult> result = RematerializeExact(
          *graph, static_cast<Bytes>(plain->plan.peak * fraction), options);
      slowest = std::max(slowest, CpuSeconds() - start);
      if (!result.ok()) {
        state.SkipWithError(std::string(result.status().message()).c_str());
        return;
      }
      proven += result->proven ? 1 : 0;
      work += result->work;
      cost = result->remat.added_cost;
    }
  }
  state.counters["proven"] = proven;
  state.counters["max_solve_cpu_s"] = slowest;
  state.counters["work"] = static_cast<double>(work);
  state.counters["cost_0.5"] = cost;
}

}  // namespace

void RegisterRematExactTargets() {
  ThreeRuns(benchmark::RegisterBenchmark("BM_remat_exact_mlp_train",
                                         BM_remat_exact_mlp_train));
}

}  // namespace memplan::bench

// Every registered planner on the bundled inputs, and the synthetic
// families by size: the planners, BuildProblem and VerifyPlan (see the top of
// memplan_bench.cc).

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench_util.h"
#include "memplan/memplan.h"
#include "memplan/synthetic.h"

namespace memplan::bench {
namespace {

// Every planner up to its size cap on the family `kind`, 10^3 to 10^6
// buffers.
void RegisterPlannerScaling(SyntheticKind kind,
                            const std::vector<std::string>& planners) {
  const std::string family(SyntheticKindName(kind));
  for (const std::string& planner : planners) {
    const Policy policy = PolicyFor(planner);
    const int64_t max = std::min(policy.max_buffers, kMaxSynthetic);
    if (max < kMinSynthetic) continue;
    const std::string key = absl::StrCat(planner, "_", family);
    auto* b = benchmark::RegisterBenchmark(
        absl::StrCat("BM_", key).c_str(),
        [planner, kind, key](benchmark::State& state) {
          const Problem& p = cache().Get(kind, state.range(0));
          RunPlanner(state, planner, p, key);
          state.SetComplexityN(state.range(0));
        });
    b->RangeMultiplier(10)
        ->Range(kMinSynthetic, max)
        ->Unit(benchmark::kMillisecond);
    if (max > kMinSynthetic) b->Complexity(benchmark::oNLogN);
    if (policy.search) b->MinTime(0.01);
  }
}

// BuildProblem on the family's graphs, when the family has graphs.
void RegisterBuildProblem(SyntheticKind kind) {
  const std::string family(SyntheticKindName(kind));
  if (SyntheticGraph(kind, {.buffers = kMinSynthetic}).ok()) {
    benchmark::RegisterBenchmark(
        absl::StrCat("BM_BuildProblem_", family).c_str(),
        [kind](benchmark::State& state) {
          const Graph& g = cache().GetGraph(kind, state.range(0));
          for (auto _ : state) {
            absl::StatusOr<Problem> p = BuildProblem(g);
            if (!p.ok()) {
              state.SkipWithError(std::string(p.status().message()).c_str());
              break;
            }
            benchmark::DoNotOptimize(p->buffers.data());
          }
          state.SetComplexityN(state.range(0));
        })
        ->RangeMultiplier(10)
        ->Range(kMinSynthetic, kMaxSynthetic)
        ->Unit(benchmark::kMillisecond)
        ->Complexity(benchmark::oNLogN);
  }
}

// VerifyPlan on a plan of the family's problems.
void RegisterVerifyPlan(SyntheticKind kind,
                        const std::vector<std::string>& planners) {
  const std::string family(SyntheticKindName(kind));
  benchmark::RegisterBenchmark(
      absl::StrCat("BM_VerifyPlan_", family).c_str(),
      [kind, planners](benchmark::State& state) {
        const Problem& p = cache().Get(kind, state.range(0));
        // A compact plan, so the verifier sees reuse; naive when no
        // heuristic is registered.
        const bool greedy = std::find(planners.begin(), planners.end(),
                                      "greedy_by_size") != planners.end();
        PlanMemoryOptions options;
        options.planner = greedy ? "greedy_by_size" : "naive";
        absl::StatusOr<Plan> plan = PlanMemory(p, options);
        if (!plan.ok()) {
          state.SkipWithError(std::string(plan.status().message()).c_str());
          return;
        }
        state.SetLabel(options.planner);
        for (auto _ : state) {
          absl::Status s = VerifyPlan(p, *plan);
          if (!s.ok()) {
            state.SkipWithError(std::string(s.message()).c_str());
            break;
          }
        }
        state.SetComplexityN(state.range(0));
      })
      ->RangeMultiplier(10)
      ->Range(kMinSynthetic, kMaxSynthetic)
      ->Unit(benchmark::kMillisecond)
      ->Complexity(benchmark::oNLogN);
}

}  // namespace

void RegisterBundledRuns(const std::vector<std::string>& planners,
                         const std::vector<Workload>& bundled) {
  for (const std::string& planner : planners) {
    const Policy policy = PolicyFor(planner);
    for (const Workload& w : bundled) {
      if (static_cast<int64_t>(w.problem.buffers.size()) > policy.max_buffers)
        continue;
      auto* b = benchmark::RegisterBenchmark(
          absl::StrCat("BM_", planner, "_", w.name).c_str(),
          [planner, &w](benchmark::State& state) {
            RunPlanner(state, planner, w.problem);
          });
      b->Unit(benchmark::kMillisecond);
      if (policy.search) b->MinTime(0.01);
    }
  }
}

// Family-major, so the cache holds one family at a time.
void RegisterSyntheticRuns(const std::vector<std::string>& planners) {
  for (SyntheticKind kind : AllSyntheticKinds()) {
    RegisterPlannerScaling(kind, planners);
    RegisterBuildProblem(kind);
    RegisterVerifyPlan(kind, planners);
  }
}

}  // namespace memplan::bench

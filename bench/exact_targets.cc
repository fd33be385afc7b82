// The exact planner's targets, with --memplan_exact_targets (see the top of
// memplan_bench.cc).

#include <time.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "bench_util.h"
#include "memplan/memplan.h"
#include "memplan/registry.h"

namespace memplan::bench {
namespace {

// The process's CPU time.
double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// MiniMalloc's CPU seconds under capacity 1048576 (google/minimalloc at
// 9f5cf81 built with -O2, the same 2-CPU machine at load 3-4, medians of 3;
// bench/NOTES.md), A to K.
double MiniMallocCpuSeconds(const std::string& workload) {
  static const auto* seconds = new std::map<std::string, double>{
      {"minimalloc_A", 5.30}, {"minimalloc_B", 3.77}, {"minimalloc_C", 0.69},
      {"minimalloc_D", 3.42}, {"minimalloc_E", 3.60}, {"minimalloc_F", 5.84},
      {"minimalloc_G", 1.27}, {"minimalloc_H", 1.93}, {"minimalloc_I", 4.04},
      {"minimalloc_J", 1.36}, {"minimalloc_K", 0.57}};
  auto it = seconds->find(workload);
  return it == seconds->end() ? 0 : it->second;
}

void RunExact(benchmark::State& state, const ExactRun& run) {
  std::vector<Problem> problems;
  for (const Problem* p : run.problems) {
    problems.push_back(*p);
    if (run.capacity > 0) problems.back().pools[0].capacity = run.capacity;
  }
  PlanOptions plan_options;
  plan_options.time_limit = run.time_limit;
  plan_options.work_limit = run.work_limit;
  int solved = 0, optimal = 0;
  int64_t nodes = 0;
  double ratio = 1;
  Bytes peak = 0;
  double cpu = 0;
  for (auto _ : state) {
    solved = optimal = 0;
    nodes = 0;
    const double start = CpuSeconds();
    for (const Problem& problem : problems) {
      absl::StatusOr<std::unique_ptr<Planner>> planner =
          CreatePlanner(run.planner, OptionsFor(run.planner, run.options));
      if (!planner.ok()) {
        state.SkipWithError(std::string(planner.status().message()).c_str());
        return;
      }
      absl::StatusOr<Plan> plan = (*planner)->Solve(problem, plan_options);
      if (!plan.ok()) {
        // Out of nodes or time under a capacity: counted as not solved.
        if (run.capacity > 0 &&
            plan.status().code() != absl::StatusCode::kInternal) {
          continue;
        }
        state.SkipWithError(std::string(plan.status().message()).c_str());
        return;
      }
      if (absl::Status v = VerifyPlan(problem, *plan); !v.ok()) {
        state.SkipWithError(
            absl::StrCat("invalid plan: ", v.message()).c_str());
        return;
      }
      ++solved;
      // The nodes of the solved instances (a failed one returns no plan
      // and so no counters).
      if (auto it = plan->counters.find("nodes"); it != plan->counters.end())
        nodes += it->second;
      optimal += plan->proven_optimal ? 1 : 0;
      peak = plan->peak;
      ratio = plan->lower_bound > 0
                  ? static_cast<double>(plan->peak) / plan->lower_bound
                  : 1.0;
    }
    cpu = CpuSeconds() - start;
  }
  state.counters["solved"] = solved;
  state.counters["cpu_s"] = cpu;
  if (run.minimalloc_cpu_s > 0) {
    state.counters["minimalloc_cpu_s"] = run.minimalloc_cpu_s;
    state.counters["cpu_vs_minimalloc"] = cpu / run.minimalloc_cpu_s;
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["optimal"] = optimal;
  if (problems.size() == 1) {
    state.SetLabel(absl::StrCat("peak ", peak, " bytes"));  // exact, unlike
    state.counters["peak"] = static_cast<double>(peak);     // the counter
    state.counters["lb_ratio"] = ratio;
  }
}

}  // namespace

void AddExactRun(const std::string& name, ExactRun run) {
  benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
      name.c_str(), [run](benchmark::State& state) { RunExact(state, run); });
  run.one_run ? OneRun(b) : ThreeRuns(b);
}

std::vector<const Problem*> MiniMallocProblems(
    const std::vector<Workload>& bundled) {
  std::vector<const Problem*> minimalloc;
  for (const Workload& w : bundled) {
    if (w.name.starts_with("minimalloc_")) minimalloc.push_back(&w.problem);
  }
  return minimalloc;
}

void RegisterExactTargets(const std::vector<Workload>& bundled) {
  const std::vector<const Problem*> minimalloc = MiniMallocProblems(bundled);
  const absl::Duration limit = settings().exact_time_limit;
  for (const Workload& w : bundled) {
    if (!w.name.starts_with("minimalloc_")) continue;
    AddExactRun(absl::StrCat("BM_exact_capacity_", w.name),
                {.problems = {&w.problem},
                 .capacity = 1048576,
                 .options = {},
                 .planner = "exact",
                 .time_limit = limit,
                 .minimalloc_cpu_s = MiniMallocCpuSeconds(w.name)});
  }
  AddExactRun("BM_exact_capacity_minimalloc_all", {.problems = minimalloc,
                                                   .capacity = 1048576,
                                                   .options = {},
                                                   .planner = "exact",
                                                   .time_limit = limit});
  // The constraint planners on the same instances, beside exact, when this
  // build registers them (cp: Gecode; cpsat: OR-tools' CP-SAT).
  for (const PlannerInfo& info : RegisteredPlanners()) {
    const std::string planner(info.name);
    if (planner != "cp" && planner != "cpsat") continue;
    for (const Workload& w : bundled) {
      if (!w.name.starts_with("minimalloc_")) continue;
      AddExactRun(absl::StrCat("BM_", planner, "_capacity_", w.name),
                  {.problems = {&w.problem},
                   .capacity = 1048576,
                   .options = {},
                   .planner = planner,
                   .time_limit = limit,
                   .minimalloc_cpu_s = MiniMallocCpuSeconds(w.name)});
    }
  }
  // The search alone: no heuristic to fall back on when it fails. 10^8
  // work units per instance: 0.7 to 1.4 million nodes of their 154 to 454
  // buffers (a node costs a quarter of a unit per buffer plus 32).
  const PlannerOptions capped = {{"warm_start", "false"}};
  constexpr int64_t kAblationWork = 100'000'000;
  AddExactRun("BM_exact_ablation_none_minimalloc_all",
              {.problems = minimalloc,
               .capacity = 1048576,
               .options = capped,
               .time_limit = limit,
               .work_limit = kAblationWork});
  for (const char* name : {"section_inference", "symmetry", "decomposition",
                           "failure_cache", "restarts"}) {
    PlannerOptions off = capped;
    off[name] = "false";
    AddExactRun(absl::StrCat("BM_exact_ablation_", name, "_minimalloc_all"),
                {.problems = minimalloc,
                 .capacity = 1048576,
                 .options = off,
                 .time_limit = limit,
                 .work_limit = kAblationWork});
  }
  for (const Workload& w : bundled) {
    if (w.name.starts_with("minimalloc_") || w.name.starts_with("trace_") ||
        w.problem.buffers.size() <= 2000) {
      if (w.name == "trace_S_1") continue;
      AddExactRun(absl::StrCat("BM_exact_minimise_", w.name),
                  {.problems = {&w.problem},
                   .capacity = 0,
                   .options = {},
                   .planner = "exact",
                   .time_limit = limit});
    }
  }
  for (const Workload& w : bundled) {
    if (w.name != "trace_S_1") continue;
    for (const char* planner : {"exact", "best"}) {
      AddExactRun(absl::StrCat("BM_", planner, "_trace_S_1_10s"),
                  {.problems = {&w.problem},
                   .capacity = 0,
                   .options = {},
                   .planner = planner,
                   .time_limit = absl::Seconds(10)});
    }
  }
}

}  // namespace memplan::bench

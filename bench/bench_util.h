// Shared by memplan_bench's benchmark groups: the suite's settings (from
// memplan's own flags), the planners' size policy, the synthetic workload
// cache, the bundled inputs and the timed Solve every group builds on.

#ifndef MEMPLAN_BENCH_BENCH_UTIL_H_
#define MEMPLAN_BENCH_BENCH_UTIL_H_

#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "memplan/memplan.h"
#include "memplan/synthetic.h"

namespace memplan::bench {

struct Settings {
  std::string data_dir = MEMPLAN_BENCH_DATA_DIR;
  bool targets = false;
  absl::Duration time_limit = absl::Seconds(1);
  double budget_seconds = 60;
  bool exact_targets = false;
  bool order_targets = false;
  absl::Duration exact_time_limit = absl::Seconds(60);
  // --memplan_option=NAME=VALUE: for every planner that declares NAME.
  PlannerOptions options;
};
Settings& settings();

struct Policy {
  int64_t max_buffers;
  bool search;  // its run time is set by the time limit, not by the input
};

// From the registry's metadata: the size a planner's cost class handles
// within a benchmark's time, and whether its run time follows the budget.
Policy PolicyFor(std::string_view planner);

constexpr int64_t kMinSynthetic = 1000;
constexpr int64_t kMaxSynthetic = 1000000;
constexpr uint64_t kSyntheticSeed = 1;

// Synthetic workloads are generated once per (family, size) and kept while
// benchmarks of that family run (the families are registered one after the
// other), so at most one family's problems are in memory.
class SyntheticCache {
 public:
  const Problem& Get(SyntheticKind kind, int64_t n) {
    return Lookup(kind, n, problems_, SyntheticProblem);
  }
  const Graph& GetGraph(SyntheticKind kind, int64_t n) {
    return Lookup(kind, n, graphs_, SyntheticGraph);
  }
  // Drops every cached workload and gives the memory back to the system.
  void Clear() {
    kind_.reset();
    problems_.clear();
    graphs_.clear();
    malloc_trim(0);
  }

 private:
  // The cached (or newly generated) workload of `kind` and size `n`; a new
  // family first drops the previous one's.
  template <typename T, typename Generate>
  const T& Lookup(SyntheticKind kind, int64_t n, std::map<int64_t, T>& cache,
                  Generate generate) {
    if (kind != kind_) {
      problems_.clear();
      graphs_.clear();
      kind_ = kind;
    }
    auto it = cache.find(n);
    if (it == cache.end()) {
      absl::StatusOr<T> made = generate(
          kind, SyntheticOptions{.buffers = n, .seed = kSyntheticSeed});
      if (!made.ok()) {
        fprintf(stderr, "memplan_bench: %s\n",
                std::string(made.status().message()).c_str());
        std::abort();  // the generator's own options: an internal error
      }
      it = cache.emplace(n, std::move(*made)).first;
    }
    return it->second;
  }
  std::optional<SyntheticKind> kind_;
  std::map<int64_t, Problem> problems_;
  std::map<int64_t, Graph> graphs_;
};
SyntheticCache& cache();

// `row`'s options of planner `name`, with those of --memplan_option that
// the planner declares and the row does not set.
PlannerOptions OptionsFor(std::string_view name, PlannerOptions row = {});

// Times `planner` on `problem`; verifies the last plan. A non-empty `family`
// names a synthetic family whose earlier sizes predict this one's time (a
// size over --memplan_budget is skipped).
void RunPlanner(benchmark::State& state, const std::string& planner_name,
                const Problem& problem, const std::string& family = "",
                std::optional<PlanOptions> plan_options = std::nullopt);

struct Workload {
  std::string name;
  Problem problem;
};

// Every bundled input, in a fixed order (sorted file names per folder).
std::vector<Workload> LoadBundled();

// The targets' timing: 3 runs of one iteration each, medians reported.
void ThreeRuns(benchmark::internal::Benchmark* b);
// One run of one iteration: rows of a minute or more.
void OneRun(benchmark::internal::Benchmark* b);

// One of the exact planner's targets (see the top of memplan_bench.cc).
struct ExactRun {
  std::vector<const Problem*> problems;
  Bytes capacity = 0;      // 0: minimise
  PlannerOptions options;  // the planner's own (warm_start=false: exact's
                           // search alone)
  std::string planner = "exact";  // or a registered planner to compare with
  absl::Duration time_limit;
  int64_t work_limit = 0;  // per instance; 0: the time limit's
  // MiniMalloc's CPU seconds on the same run, recorded (bench/NOTES.md); 0:
  // none. Counters minimalloc_cpu_s and cpu_vs_minimalloc beside cpu_s.
  double minimalloc_cpu_s = 0;
  bool one_run = false;  // OneRun instead of ThreeRuns
};

// Registers `run` as the benchmark `name`, timed as ThreeRuns (or OneRun)
// says.
void AddExactRun(const std::string& name, ExactRun run);

// The MiniMalloc instances among `bundled`, in its order.
std::vector<const Problem*> MiniMallocProblems(
    const std::vector<Workload>& bundled);

// The groups, each registered by one function (memplan_bench.cc calls them
// in this order).
//   planner_benchmarks.cc: every planner on the bundled inputs, and the
//   synthetic families (planners, BuildProblem, VerifyPlan) by size.
void RegisterBundledRuns(const std::vector<std::string>& planners,
                         const std::vector<Workload>& bundled);
void RegisterSyntheticRuns(const std::vector<std::string>& planners);
//   exact_targets.cc: --memplan_exact_targets.
void RegisterExactTargets(const std::vector<Workload>& bundled);
//   scale_targets.cc: --memplan_targets.
void RegisterTargets(const std::vector<Workload>& bundled);
//   remat_targets.cc: --memplan_targets' rematerialization sweeps.
void RegisterRematTargets();
//   order_targets.cc: --memplan_order_targets.
void RegisterOrderTargets();
//   remat_exact_targets.cc: --memplan_targets' exact rematerialization at
//   5 budgets.
void RegisterRematExactTargets();

}  // namespace memplan::bench

#endif  // MEMPLAN_BENCH_BENCH_UTIL_H_

// memplan_bench: how fast every registered planner is, and how it scales.
//
// Benchmarks (registered at start-up from RegisteredPlanners(), so a new
// planner joins without an edit here):
//   BM_<planner>_<model>            bench/data/models/*.json, training/*.json
//   BM_<planner>_minimalloc_<X>     bench/data/minimalloc/[A-K].1048576.csv,
//                                   planned in one UNBOUNDED pool: the timing
//                                   is comparable across planners; the counter
//                                   `fits_1MiB` says whether the plan also fits
//                                   the benchmark's capacity 1048576.
//   BM_<planner>_trace_<name>       bench/data/traces/*.csv
//   BM_<planner>_<family>/N         synthetic chain, branchy, training and
//                                   intervals problems (memplan/synthetic.h,
//                                   seed 1) of N = 10^3, 10^4, 10^5, 10^6
//                                   buffers, with the complexity fitted
//                                   (oNLogN)
//   BM_BuildProblem_<family>/N      BuildProblem on the synthetic graphs
//   BM_VerifyPlan_<family>/N        VerifyPlan on a plan of the synthetic
//   problems
//   With --memplan_exact_targets, the exact planner's targets, each run 3
//   times (one iteration per run; medians reported), wall time:
//   BM_exact_capacity_minimalloc_<X>   under capacity 1048576
//   BM_exact_capacity_minimalloc_all   the 11 instances one after the other
//   BM_exact_ablation_<switch>_minimalloc_all
//                                      the same with one inference off
//                                      (work limit 10^8 per instance, about
//                                      10^6 nodes; no heuristic
//                                      fallback; the counter
//                                      `solved` counts the fits)
//   BM_exact_minimise_minimalloc_<X>   no capacity: the least peak, with
//   BM_exact_minimise_trace_<name>     --memplan_exact_time_limit (default
//   BM_exact_minimise_<model>          60 s); S_1 also against best,
//   BM_best_trace_S_1_at_exact_limit   both with a 10 s limit
//   With --memplan_targets, the performance targets at scale, each run 3
//   times (one iteration per run; medians reported), wall time:
//   BM_target_greedy_by_size_dense_training/N   Solve alone, N = 10^4..10^6
//   BM_target_tool_<planner>_<family>/N         the whole `memplan plan` on
//                                  the workload written as a buffer CSV
//                                  (read, validate, plan, verify, write),
//                                  run as a child process: counter
//                                  max_rss_mb is its peak resident memory
//   BM_target_time_limit_<planner>_<family>/N   every planner with a 1 s
//                                  limit on the 10^6-buffer dense_training
//                                  and intervals problems: counter
//                                  limit_ratio is the time over the limit,
//                                  plan whether a plan came back
//   BM_target_best_<input>                      best with the default time
//                                  limit on S_1, somas_resnet50 and
//                                  MiniMalloc's D and J
//   BM_target_exact_capacity_minimalloc_{all,J} exact under capacity
//                                  1048576: the 11 instances in a row, and J
//   BM_target_exact_minimise_minimalloc_{D,J}   exact's least peak of D
//                                  and J (--memplan_exact_time_limit,
//                                  default 60 s)
// Only Solve() is timed (no validation, no verification); every plan is
// verified once after timing, and a rejected plan fails the benchmark.
// Counters: buffers, peak, lb_ratio (peak / lower bound), optimal.
//
// Keeping the suite finite:
//   * the search planners (hill_climb, best, caffe2_dp, cp, exact) get a
//     time limit per plan (--memplan_time_limit=SECONDS, default 1) and run
//     with a short minimum time, so they repeat only when a plan is fast; a
//     one-pass heuristic runs to the end (its time is the measurement);
//   * planners have a size cap: cp and exact up to 10^3 buffers; caffe2_dp,
//     hill_climb and best up to 10^4 (the last two start from every heuristic,
//     some of which grow quadratically on training-like problems, and their
//     time limit hides that growth from the guard below); the heuristics up
//     to 10^6; any planner not listed here up to 10^5. Larger workloads
//     (synthetic sizes, or the 28526-buffer trace S_1) are not registered;
//   * a size is skipped ("skipped: ...") when the previous sizes of the same
//     family predict more than --memplan_budget=SECONDS (default 60) per plan
//     (10x the last time, or more when the last two sizes grew faster).
// A planner that fails (Unimplemented, ResourceExhausted, ...) reports the
// error for that benchmark and the suite goes on.
//
//   memplan_bench --benchmark_filter='greedy|naive' --benchmark_min_time=0.05
//   memplan_bench --memplan_data_dir=/path/to/bench/data
//   memplan_bench --memplan_option=symmetry=false   (NAME=VALUE, repeatable:
//                  an option for every planner that declares it; the
//                  registry checks the value)

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "memplan/synthetic.h"
#ifdef MEMPLAN_HAVE_CP
#include "memplan/planners/cp.h"
#endif

namespace memplan {
namespace {

struct Settings {
  std::string data_dir = MEMPLAN_BENCH_DATA_DIR;
  bool targets = false;
  absl::Duration time_limit = absl::Seconds(1);
  double budget_seconds = 60;
  bool exact_targets = false;
  absl::Duration exact_time_limit = absl::Seconds(60);
  // --memplan_option=NAME=VALUE: for every planner that declares NAME.
  PlannerOptions options;
};
Settings& settings() {
  static Settings* s = new Settings;
  return *s;
}

struct Policy {
  int64_t max_buffers;
  bool search;  // its run time is set by the time limit, not by the input
};

// From the registry's metadata: the size a planner's cost class handles
// within a benchmark's time, and whether its run time follows the budget.
Policy PolicyFor(std::string_view planner) {
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name != planner) continue;
    const bool search = info.kind != PlannerKind::kHeuristic;
    switch (info.cost) {
      case PlannerCost::kLight:
        return {1000000, search};
      case PlannerCost::kBudgeted:
        return {10000, search};
      case PlannerCost::kModel:
        return {1000, search};
    }
  }
  return Policy{100000, false};
}

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
SyntheticCache& cache() {
  static SyntheticCache* c = new SyntheticCache;
  return *c;
}

// Seconds per Solve of the sizes run so far in each synthetic family.
std::map<std::string, std::vector<double>>& family_seconds() {
  static auto* m = new std::map<std::string, std::vector<double>>;
  return *m;
}

// The time the next size (10x more buffers) should take: the last time grown
// by the larger of 10 and the growth seen between the last two sizes, so a
// quadratic planner is stopped one size earlier than a linear one.
double PredictNextSeconds(const std::vector<double>& seconds) {
  if (seconds.empty()) return 0;
  double growth = 10;
  if (seconds.size() >= 2 && seconds[seconds.size() - 2] > 0) {
    growth = std::max(growth, seconds.back() / seconds[seconds.size() - 2]);
  }
  return seconds.back() * growth;
}

// `row`'s options of planner `name`, with those of --memplan_option that
// the planner declares and the row does not set.
PlannerOptions OptionsFor(std::string_view name, PlannerOptions row = {}) {
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name != name) continue;
    for (const PlannerOption& option : info.options) {
      auto given = settings().options.find(option.name);
      if (given != settings().options.end()) row.insert(*given);
    }
  }
  return row;
}

// Times `planner` on `problem`; verifies the last plan.
void RunPlanner(benchmark::State& state, const std::string& planner_name,
                const Problem& problem, const std::string& family = "",
                std::optional<PlanOptions> plan_options = std::nullopt) {
  absl::StatusOr<std::unique_ptr<Planner>> planner =
      CreatePlanner(planner_name, OptionsFor(planner_name));
  if (!planner.ok()) {
    state.SkipWithError(std::string(planner.status().message()).c_str());
    return;
  }
  if (!family.empty()) {
    const std::vector<double>& seconds = family_seconds()[family];
    if (const double next = PredictNextSeconds(seconds);
        next > settings().budget_seconds) {
      const std::string why = absl::StrCat(
          "skipped: the previous size took ", seconds.back(),
          " s per plan, this one would take about ", static_cast<int64_t>(next),
          " s, over the ", settings().budget_seconds, " s budget");
      state.SkipWithError(why.c_str());
      return;
    }
  }
  // The suite's time limit bounds the search planners; a one-pass
  // heuristic's time is what is measured, so it runs to the end.
  PlanOptions options;
  if (PolicyFor(planner_name).search)
    options.time_limit = settings().time_limit;
  if (plan_options.has_value()) options = *plan_options;
  std::optional<Plan> last;
  absl::Duration total;
  int64_t runs = 0;
  for (auto _ : state) {
    const absl::Time start = absl::Now();
    absl::StatusOr<Plan> plan = (*planner)->Solve(problem, options);
    total += absl::Now() - start;
    ++runs;
    if (!plan.ok()) {
      state.SkipWithError(
          absl::StrCat(absl::StatusCodeToString(plan.status().code()), ": ",
                       std::string(plan.status().message().substr(0, 200)))
              .c_str());
      break;
    }
    last = std::move(*plan);
  }
  if (!family.empty() && runs > 0) {
    family_seconds()[family].push_back(absl::ToDoubleSeconds(total) / runs);
  }
  if (!last.has_value()) return;
  if (absl::Status s = VerifyPlan(problem, *last); !s.ok()) {
    state.SkipWithError(
        absl::StrCat("invalid plan: ", std::string(s.message())).c_str());
    return;
  }
  state.counters["buffers"] = static_cast<double>(problem.buffers.size());
  state.counters["peak"] = static_cast<double>(last->peak);
  state.counters["lb_ratio"] =
      last->lower_bound > 0
          ? static_cast<double>(last->peak) / last->lower_bound
          : 1.0;
  state.counters["optimal"] = last->proven_optimal ? 1 : 0;
  if (problem.name.starts_with("minimalloc_")) {
    state.counters["fits_1MiB"] = last->peak <= 1048576 ? 1 : 0;
  }
}

struct Workload {
  std::string name;
  Problem problem;
};

// Every bundled input, in a fixed order (sorted file names per folder).
std::vector<Workload> LoadBundled() {
  std::vector<Workload> out;
  namespace fs = std::filesystem;
  auto files = [&](const std::string& dir, const std::string& ext) {
    std::vector<std::string> paths;
    std::error_code ec;
    for (const auto& e :
         fs::directory_iterator(settings().data_dir + "/" + dir, ec)) {
      if (e.path().extension() == ext) paths.push_back(e.path().string());
    }
    std::sort(paths.begin(), paths.end());
    return paths;
  };
  auto add = [&](const std::string& path, const std::string& name) {
    absl::StatusOr<LoadedInput> input = LoadInput(path, BuildOptions{});
    if (!input.ok()) {
      fprintf(stderr, "memplan_bench: skipping %s: %s\n", path.c_str(),
              std::string(input.status().message()).c_str());
      return;
    }
    input->problem.name = name;
    out.push_back({name, std::move(input->problem)});
  };
  for (const char* dir : {"models", "training"}) {
    for (const std::string& p : files(dir, ".json"))
      add(p, fs::path(p).stem().string());
  }
  for (const std::string& p : files("minimalloc", ".csv")) {
    const std::string stem = fs::path(p).stem().string();  // "A.1048576"
    if (stem.find(".1048576") == std::string::npos) continue;
    add(p, absl::StrCat("minimalloc_", stem.substr(0, stem.find('.'))));
  }
  for (const std::string& p : files("traces", ".csv")) {
    add(p, absl::StrCat("trace_", fs::path(p).stem().string()));
  }
  if (out.empty()) {
    fprintf(stderr, "memplan_bench: no bundled inputs under %s\n",
            settings().data_dir.c_str());
  }
  return out;
}

// The exact planner's targets (see the top of the file).
struct ExactRun {
  std::vector<const Problem*> problems;
  Bytes capacity = 0;  // 0: minimise
  PlannerOptions options;  // the planner's own (warm_start=false: exact's
                           // search alone)
  std::string planner = "exact";  // or a registered planner to compare with
  absl::Duration time_limit;
  int64_t work_limit = 0;  // per instance; 0: the time limit's
};

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
  for (auto _ : state) {
    solved = optimal = 0;
    nodes = 0;
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
  }
  state.counters["solved"] = solved;
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["optimal"] = optimal;
  if (problems.size() == 1) {
    state.SetLabel(absl::StrCat("peak ", peak, " bytes"));  // exact, unlike
    state.counters["peak"] = static_cast<double>(peak);     // the counter
    state.counters["lb_ratio"] = ratio;
  }
}

// The targets' timing: 3 runs of one iteration each, medians reported.
void ThreeRuns(benchmark::internal::Benchmark* b) {
  b->Iterations(1)
      ->Repetitions(3)
      ->ReportAggregatesOnly(true)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

void AddExactRun(const std::string& name, ExactRun run) {
  ThreeRuns(benchmark::RegisterBenchmark(
      name.c_str(), [run](benchmark::State& state) { RunExact(state, run); }));
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
                 .time_limit = limit});
  }
  AddExactRun("BM_exact_capacity_minimalloc_all", {.problems = minimalloc,
                                                   .capacity = 1048576,
                                                   .options = {},
                                                   .planner = "exact",
                                                   .time_limit = limit});
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

// The performance targets at scale (see the top of the file).
void RunTool(benchmark::State& state, const std::string& planner,
             SyntheticKind kind, int64_t n) {
#ifdef MEMPLAN_BENCH_TOOL
  // The CSV is written once, outside the timing.
  const std::string csv =
      (std::filesystem::temp_directory_path() /
       absl::StrCat("memplan_bench_", getpid(), "_",
                    std::string(SyntheticKindName(kind)), "_", n, ".csv"))
          .string();
  const std::string out = csv + ".plan.csv";
  {
    absl::StatusOr<Problem> problem =
        SyntheticProblem(kind, {.buffers = n, .seed = kSyntheticSeed});
    if (!problem.ok() || !WriteFile(csv, BufferCsvText(*problem)).ok()) {
      state.SkipWithError("could not write the workload's CSV");
      return;
    }
  }
  const std::string planner_flag = absl::StrCat("--planner=", planner);
  const std::string out_flag = absl::StrCat("--out=", out);
  // A forked child's peak resident memory counts the pages it shares with
  // this process: the cached workloads go first.
  cache().Clear();
  double max_rss_mb = 0;
  for (auto _ : state) {
    const pid_t child = fork();
    if (child == 0) {
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      execl(MEMPLAN_BENCH_TOOL, MEMPLAN_BENCH_TOOL, "plan", csv.c_str(),
            planner_flag.c_str(), out_flag.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    struct rusage usage {};
    if (child < 0 || wait4(child, &status, 0, &usage) != child ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("memplan plan failed");
      break;
    }
    max_rss_mb = std::max(max_rss_mb, usage.ru_maxrss / 1024.0);
  }
  std::filesystem::remove(csv);
  std::filesystem::remove(out);
  state.counters["buffers"] = static_cast<double>(n);
  state.counters["max_rss_mb"] = max_rss_mb;
#else
  (void)planner;
  (void)kind;
  (void)n;
  state.SkipWithError("built without the memplan tool");
#endif
}

// One Solve of `planner_name` with a wall-clock limit of `limit`, timed:
// the counter `limit_ratio` is the time taken over the limit (the target is
// at most 1.1, or the limit plus 100 ms); `plan` says whether a plan came
// back (a one-pass heuristic still going at the limit returns
// DeadlineExceeded, which is an answer within the limit, not a failure).
void RunUnderLimit(benchmark::State& state, const std::string& planner_name,
                   const Problem& problem, absl::Duration limit) {
  absl::StatusOr<std::unique_ptr<Planner>> planner =
      CreatePlanner(planner_name, OptionsFor(planner_name));
  if (!planner.ok()) {
    state.SkipWithError(std::string(planner.status().message()).c_str());
    return;
  }
  PlanOptions options;
  options.time_limit = limit;
  double worst = 0;
  std::optional<absl::StatusOr<Plan>> last;
  for (auto _ : state) {
    const absl::Time start = absl::Now();
    last = (*planner)->Solve(problem, options);
    worst = std::max(worst, absl::ToDoubleSeconds(absl::Now() - start) /
                                absl::ToDoubleSeconds(limit));
    if (!last->ok() && !absl::IsDeadlineExceeded(last->status())) {
      state.SkipWithError(
          absl::StrCat(absl::StatusCodeToString(last->status().code()), ": ",
                       std::string(last->status().message().substr(0, 200)))
              .c_str());
      return;
    }
  }
  if (last.has_value() && last->ok()) {
    if (absl::Status s = VerifyPlan(problem, **last); !s.ok()) {
      state.SkipWithError(
          absl::StrCat("invalid plan: ", std::string(s.message())).c_str());
      return;
    }
    state.counters["peak"] = static_cast<double>((*last)->peak);
  }
  state.counters["buffers"] = static_cast<double>(problem.buffers.size());
  state.counters["plan"] = last.has_value() && last->ok() ? 1 : 0;
  state.counters["limit_ratio"] = worst;
}

void RegisterTargets(const std::vector<Workload>& bundled) {
  for (int64_t n : {10000, 100000, 1000000}) {
    ThreeRuns(benchmark::RegisterBenchmark(
        absl::StrCat("BM_target_greedy_by_size_dense_training/", n).c_str(),
        [n](benchmark::State& state) {
          RunPlanner(state, "greedy_by_size",
                     cache().Get(SyntheticKind::kDenseTraining, n), "",
                     PlanOptions{});
        }));
  }
  for (const auto& [kind, n] :
       {std::pair{SyntheticKind::kDenseTraining, int64_t{1000000}},
        std::pair{SyntheticKind::kIntervals, int64_t{1000000}}}) {
    ThreeRuns(benchmark::RegisterBenchmark(
        absl::StrCat("BM_target_tool_greedy_by_size_",
                     std::string(SyntheticKindName(kind)), "/", n)
            .c_str(),
        [kind = kind, n = n](benchmark::State& state) {
          RunTool(state, "greedy_by_size", kind, n);
        }));
  }
  // Every planner under a one-second limit on the largest inputs.
  // Family-major, as the cache wants.
  for (SyntheticKind kind :
       {SyntheticKind::kDenseTraining, SyntheticKind::kIntervals}) {
    for (const PlannerInfo& info : RegisteredPlanners()) {
      const int64_t n = 1000000;
      const std::string name(info.name);
      ThreeRuns(benchmark::RegisterBenchmark(
          absl::StrCat("BM_target_time_limit_", name, "_",
                       std::string(SyntheticKindName(kind)), "/", n)
              .c_str(),
          [name, kind, n](benchmark::State& state) {
            RunUnderLimit(state, name, cache().Get(kind, n), absl::Seconds(1));
          }));
    }
  }
  for (const Workload& w : bundled) {
    if (w.name != "trace_S_1" && w.name != "trace_somas_resnet50" &&
        w.name != "minimalloc_D" && w.name != "minimalloc_J")
      continue;
    ThreeRuns(benchmark::RegisterBenchmark(
        absl::StrCat("BM_target_best_", w.name).c_str(),
        [&w](benchmark::State& state) {
          // best's own default time limit, not the suite's.
          RunPlanner(state, "best", w.problem, "", PlanOptions{});
        }));
  }
  // exact on MiniMalloc's set: under the benchmark capacity (all 11 in a
  // row, and J alone), and minimising D and J with the exact targets' limit.
  const absl::Duration limit = settings().exact_time_limit;
  AddExactRun("BM_target_exact_capacity_minimalloc_all",
              {.problems = MiniMallocProblems(bundled),
               .capacity = 1048576,
               .options = {},
               .planner = "exact",
               .time_limit = limit});
  for (const Workload& w : bundled) {
    if (w.name == "minimalloc_J") {
      AddExactRun("BM_target_exact_capacity_minimalloc_J",
                  {.problems = {&w.problem},
                   .capacity = 1048576,
                   .options = {},
                   .planner = "exact",
                   .time_limit = limit});
    }
  }
  for (const Workload& w : bundled) {
    if (w.name != "minimalloc_D" && w.name != "minimalloc_J") continue;
    AddExactRun(absl::StrCat("BM_target_exact_minimise_", w.name),
                {.problems = {&w.problem},
                 .capacity = 0,
                 .options = {},
                 .planner = "exact",
                 .time_limit = limit});
  }
}

void RegisterAll() {
  static const std::vector<Workload>* bundled =
      new std::vector<Workload>(LoadBundled());
  std::vector<std::string> planners;
  for (const PlannerInfo& info : RegisteredPlanners())
    planners.emplace_back(info.name);

  for (const std::string& planner : planners) {
    const Policy policy = PolicyFor(planner);
    for (const Workload& w : *bundled) {
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

  if (settings().exact_targets) RegisterExactTargets(*bundled);
  if (settings().targets) RegisterTargets(*bundled);

  // Synthetic scaling, family-major so the cache holds one family at a time.
  for (SyntheticKind kind : AllSyntheticKinds()) {
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
}

// Takes memplan's own flags out of argv (Google Benchmark rejects unknown
// ones).
bool ParseOwnFlags(int* argc, char** argv) {
  if (const char* env = std::getenv("MEMPLAN_DATA_DIR");
      env != nullptr && *env) {
    settings().data_dir = env;
  }
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const std::string& flag) -> std::optional<std::string> {
      if (arg.rfind(flag + "=", 0) == 0) return arg.substr(flag.size() + 1);
      return std::nullopt;
    };
    // A positive number of seconds, or an error for the flag.
    auto seconds = [&](const std::string& text) -> std::optional<double> {
      double value = 0;
      if (absl::SimpleAtod(text, &value) && value > 0) return value;
      fprintf(stderr, "memplan_bench: %s is not a positive number of seconds\n",
              arg.c_str());
      return std::nullopt;
    };
    if (auto v = value("--memplan_data_dir")) {
      settings().data_dir = *v;
    } else if (auto v = value("--memplan_time_limit")) {
      const std::optional<double> s = seconds(*v);
      if (!s.has_value()) return false;
      settings().time_limit = absl::Seconds(*s);
    } else if (arg == "--memplan_targets") {
      settings().targets = true;
    } else if (arg == "--memplan_exact_targets") {
      settings().exact_targets = true;
    } else if (auto v = value("--memplan_exact_time_limit")) {
      const std::optional<double> s = seconds(*v);
      if (!s.has_value()) return false;
      settings().exact_time_limit = absl::Seconds(*s);
    } else if (auto v = value("--memplan_option")) {
      const size_t eq = v->find('=');
      bool declared = false;
      for (const PlannerInfo& info : RegisteredPlanners()) {
        for (const PlannerOption& option : info.options) {
          declared |= eq != std::string::npos && option.name == v->substr(0, eq);
        }
      }
      if (!declared) {
        fprintf(stderr,
                "memplan_bench: %s is not NAME=VALUE with an option some "
                "planner declares (memplan planners NAME lists them)\n",
                arg.c_str());
        return false;
      }
      settings().options[v->substr(0, eq)] = v->substr(eq + 1);
    } else if (auto v = value("--memplan_budget")) {
      const std::optional<double> s = seconds(*v);
      if (!s.has_value()) return false;
      settings().budget_seconds = *s;
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  return true;
}

}  // namespace
}  // namespace memplan

int main(int argc, char** argv) {
#ifdef MEMPLAN_HAVE_CP
  // The optional planners this build links, before anything looks one up.
  if (absl::Status s = memplan::RegisterCpPlanner(); !s.ok()) {
    fprintf(stderr, "memplan_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }
#endif
  if (!memplan::ParseOwnFlags(&argc, argv)) return 1;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  memplan::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

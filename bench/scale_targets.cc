// The performance targets at scale, with --memplan_targets (see the top of
// memplan_bench.cc).

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench_util.h"
#include "effort/budget.h"
#include "memplan/formats.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "memplan/registry.h"
#include "memplan/synthetic.h"
#include "memplan/verify.h"

namespace memplan::bench {
namespace {

#ifdef MEMPLAN_BENCH_TOOL
// `memplan plan INPUT --planner=PLANNER --out=OUT --quiet` in a child, once
// per iteration: the counters max_rss_mb and cpu_s (the child's CPU time,
// which a loaded machine stretches less than the wall time). False (the
// state skipped) when the tool failed.
bool RunToolOn(benchmark::State& state, const std::string& planner,
               const std::string& input, const std::string& out) {
  const std::string planner_flag = absl::StrCat("--planner=", planner);
  const std::string out_flag = absl::StrCat("--out=", out);
  double max_rss_mb = 0;
  double child_cpu_s = 0;
  for (auto _ : state) {
    const pid_t child = fork();
    if (child == 0) {
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      execl(MEMPLAN_BENCH_TOOL, MEMPLAN_BENCH_TOOL, "plan", input.c_str(),
            planner_flag.c_str(), out_flag.c_str(), "--quiet",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    struct rusage usage {};
    if (child < 0 || wait4(child, &status, 0, &usage) != child ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("memplan plan failed");
      return false;
    }
    max_rss_mb = std::max(max_rss_mb, usage.ru_maxrss / 1024.0);
    child_cpu_s =
        absl::ToDoubleSeconds(absl::DurationFromTimeval(usage.ru_utime)) +
        absl::ToDoubleSeconds(absl::DurationFromTimeval(usage.ru_stime));
  }
  state.counters["max_rss_mb"] = max_rss_mb;
  state.counters["cpu_s"] = child_cpu_s;
  return true;
}
#endif

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
  // A forked child's peak resident memory counts the pages it shares with
  // this process: the cached workloads go first.
  cache().Clear();
  RunToolOn(state, planner, csv, out);
  std::filesystem::remove(csv);
  std::filesystem::remove(out);
  state.counters["buffers"] = static_cast<double>(n);
#else
  (void)planner;
  (void)kind;
  (void)n;
  state.SkipWithError("built without the memplan tool");
#endif
}

// The whole tool on a bundled file (bench/data/`relative`), planned by
// `planner`: cpu_s, max_rss_mb, and the peak and ratio to the lower bound
// of the plan it wrote, read back for `problem` and verified. A graph's
// plan is written as JSON, as the tool writes it by default (the summary's
// bound over op orders included), a buffer CSV's as CSV.
void RunToolOnFile(benchmark::State& state, const std::string& planner,
                   const std::string& relative, const Problem& problem) {
#ifdef MEMPLAN_BENCH_TOOL
  const bool graph = absl::StrContains(relative, ".json");
  const std::string out = (std::filesystem::temp_directory_path() /
                           absl::StrCat("memplan_bench_", getpid(),
                                        "_tool_plan", graph ? ".json" : ".csv"))
                              .string();
  if (!RunToolOn(state, planner, settings().data_dir + "/" + relative, out)) {
    return;
  }
  absl::StatusOr<std::string> text = ReadFile(out);
  std::filesystem::remove(out);
  absl::StatusOr<Plan> plan = !text.ok() ? absl::StatusOr<Plan>(text.status())
                              : graph    ? ParsePlanJson(*text, problem)
                                         : ParsePlanCsv(*text, problem);
  absl::Status valid = plan.ok() ? VerifyPlan(problem, *plan) : plan.status();
  if (!valid.ok()) {
    state.SkipWithError(
        absl::StrCat("the tool's plan: ", std::string(valid.message()))
            .c_str());
    return;
  }
  const Bytes peak = plan->peak;
  const Bytes lower_bound = LowerBound(problem);
  state.counters["peak"] = static_cast<double>(peak);
  state.counters["ratio"] =
      lower_bound > 0 ? static_cast<double>(peak) / lower_bound : 1.0;
#else
  (void)planner;
  (void)relative;
  (void)problem;
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

// The inputs of the work limit's bound at 10^5 buffers, made once (seeded):
//   all_alive: every buffer alive at step n (starts in [0, n), ends in
//     [n, 2n)), sizes in [1, 2^16): each placement search meets all the
//     buffers placed before it, and exact's first cell all of them;
//   random_intervals: lifetimes with both ends uniform in [0, n), about a
//     third of the buffers alive at once in the middle.
const Problem& WorkLimitProblem(std::string_view kind, int64_t n) {
  static auto* made = new std::map<std::pair<std::string, int64_t>, Problem>;
  auto [it, inserted] = made->try_emplace({std::string(kind), n});
  if (!inserted) return it->second;
  Problem& problem = it->second;
  problem.pools = {Pool{.name = "default"}};
  std::mt19937_64 rng(kSyntheticSeed);
  for (int64_t i = 0; i < n; ++i) {
    Step start = static_cast<Step>(rng() % n);
    Step end = static_cast<Step>(n + rng() % n);
    if (kind == "random_intervals") {
      end = static_cast<Step>(rng() % n);
      if (end < start) std::swap(start, end);
      ++end;
    }
    Buffer& buffer = problem.buffers.emplace_back();
    buffer.name = absl::StrCat("b", i);
    buffer.size = static_cast<Bytes>(1 + rng() % 65535);
    buffer.lifetime = {start, end};
  }
  return problem;
}

// The process's CPU time.
double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The default planner as it answers by default, and when its plans first
// reach `height` (CPU seconds since Solve began, from its progress
// callback): counters reach_cpu_s (-1: never) and cpu_s, the whole Solve.
void RunReach(benchmark::State& state, const Problem& problem, Bytes height) {
  absl::StatusOr<std::unique_ptr<Planner>> planner = CreatePlanner("best", {});
  if (!planner.ok()) {
    state.SkipWithError(std::string(planner.status().message()).c_str());
    return;
  }
  double start = 0, reach = -1, cpu = 0;
  PlanOptions options;
  options.progress = [&](const Progress& progress) {
    if (reach < 0 && progress.peak <= height) reach = CpuSeconds() - start;
  };
  std::optional<Plan> last;
  for (auto _ : state) {
    reach = -1;
    start = CpuSeconds();
    absl::StatusOr<Plan> plan = (*planner)->Solve(problem, options);
    cpu = CpuSeconds() - start;
    if (!plan.ok()) {
      state.SkipWithError(std::string(plan.status().message()).c_str());
      return;
    }
    last = std::move(*plan);
  }
  if (absl::Status s = VerifyPlan(problem, *last); !s.ok()) {
    state.SkipWithError(
        absl::StrCat("invalid plan: ", std::string(s.message())).c_str());
    return;
  }
  state.counters["height"] = static_cast<double>(height);
  state.counters["reach_cpu_s"] = reach;
  state.counters["cpu_s"] = cpu;
  state.counters["peak"] = static_cast<double>(last->peak);
}

// One Solve of `planner_name` under `work_limit` (0: the default), its
// work counted as it goes (internal::WorkMeter): counter counted_ratio, the
// work units counted over the limit (the target: at most 1.1, whatever the
// size and density), with counted and limit themselves.
void RunCounted(benchmark::State& state, const std::string& planner_name,
                const Problem& problem, int64_t work_limit) {
  absl::StatusOr<std::unique_ptr<Planner>> planner =
      CreatePlanner(planner_name, OptionsFor(planner_name));
  if (!planner.ok()) {
    state.SkipWithError(std::string(planner.status().message()).c_str());
    return;
  }
  const PlanOptions options{.work_limit = work_limit};
  int64_t counted = 0;
  std::optional<absl::StatusOr<Plan>> last;
  for (auto _ : state) {
    internal::WorkMeter meter;
    last = (*planner)->Solve(problem, options);
    counted = meter.counted();
  }
  if (!last.has_value() || !last->ok()) {
    state.SkipWithError(
        last.has_value()
            ? std::string(last->status().message().substr(0, 200)).c_str()
            : "no Solve");
    return;
  }
  if (absl::Status s = VerifyPlan(problem, **last); !s.ok()) {
    state.SkipWithError(
        absl::StrCat("invalid plan: ", std::string(s.message())).c_str());
    return;
  }
  const int64_t limit = WorkLimit(options);
  state.counters["counted"] = static_cast<double>(counted);
  state.counters["limit"] = static_cast<double>(limit);
  state.counters["counted_ratio"] =
      static_cast<double>(counted) / static_cast<double>(limit);
  state.counters["peak"] = static_cast<double>((*last)->peak);
}

// Every planner's counted work against its work limit (issue 47: at most
// 1.1x): 10^5 and 10^6 buffers all alive at once, random intervals (a third
// alive at once) or short intervals (the synthetic family, about 20 alive),
// under 10^7 and 4x10^7 work units and the default limit. No clock: the
// counts are the same on any machine.
void RegisterCountedTargets() {
  for (const int64_t n : {100000, 1000000}) {
    for (const std::string_view kind :
         {"all_alive", "random_intervals", "short_intervals"}) {
      for (const PlannerInfo& info : RegisteredPlanners()) {
        for (const int64_t limit :
             {int64_t{10'000'000}, int64_t{40'000'000}, int64_t{0}}) {
          const std::string name(info.name);
          benchmark::RegisterBenchmark(
              absl::StrCat("BM_target_counted_", name, "_", std::string(kind),
                           "_", limit == 0 ? "default" : absl::StrCat(limit),
                           "/", n)
                  .c_str(),
              [name, kind, n, limit](benchmark::State& state) {
                RunCounted(state, name,
                           kind == "short_intervals"
                               ? cache().Get(SyntheticKind::kIntervals, n)
                               : WorkLimitProblem(kind, n),
                           limit);
              })
              ->Iterations(1)
              ->UseRealTime()
              ->Unit(benchmark::kSecond);
        }
      }
    }
  }
}

// Every planner with the default work limit and no clock: the limit bounds
// each at any density (about 10 s of work on a typical core); exact and best
// under a one-second limit on the same inputs.
void RegisterLimitTargets() {
  for (const std::string_view kind : {"all_alive", "random_intervals"}) {
    for (const PlannerInfo& info : RegisteredPlanners()) {
      const int64_t n = 100000;
      const std::string name(info.name);
      benchmark::RegisterBenchmark(absl::StrCat("BM_target_work_limit_", name,
                                                "_", std::string(kind), "/", n)
                                       .c_str(),
                                   [name, kind, n](benchmark::State& state) {
                                     RunPlanner(state, name,
                                                WorkLimitProblem(kind, n), "",
                                                PlanOptions{});
                                   })
          ->Iterations(1)
          ->UseRealTime()
          ->Unit(benchmark::kSecond);
    }
  }
  for (const std::string_view kind : {"all_alive", "random_intervals"}) {
    for (const std::string name : {"exact", "best"}) {
      const int64_t n = 100000;
      ThreeRuns(benchmark::RegisterBenchmark(
          absl::StrCat("BM_target_time_limit_", name, "_", std::string(kind),
                       "/", n)
              .c_str(),
          [name, kind, n](benchmark::State& state) {
            RunUnderLimit(state, name, WorkLimitProblem(kind, n),
                          absl::Seconds(1));
          }));
    }
  }
}

// greedy_by_size on dense training inputs, the whole tool, and every
// planner under a one-second limit on the largest synthetic inputs.
void RegisterSyntheticTargets() {
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
    // The default beside greedy_by_size: the whole tool, each.
    for (const std::string planner : {"greedy_by_size", "best"}) {
      ThreeRuns(benchmark::RegisterBenchmark(
          absl::StrCat("BM_target_tool_", planner, "_",
                       std::string(SyntheticKindName(kind)), "/", n)
              .c_str(),
          [planner, kind = kind, n = n](benchmark::State& state) {
            RunTool(state, planner, kind, n);
          }));
    }
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
}

// The default planner, as it answers by default (no time limit, its own
// patience), on every bundled input: --memplan_option=patience=0 gives the
// same rows with its whole budget. Then when it first reaches the heights of
// MiniMalloc's D and J that its whole budget reached before (1.0218x and
// 1.0424x the bound).
void RegisterBestTargets(const std::vector<Workload>& bundled) {
  for (const Workload& w : bundled) {
    ThreeRuns(benchmark::RegisterBenchmark(
        absl::StrCat("BM_target_best_", w.name).c_str(),
        [&w](benchmark::State& state) {
          // best's own default time limit, not the suite's.
          RunPlanner(state, "best", w.problem, "", PlanOptions{});
        }));
  }
  // The default's whole run (`memplan plan FILE`, reading and writing
  // included) where exact closes gaps: at most 2 s of CPU on MiniMalloc's
  // D and J at no more than 1007616 and 1030144 bytes, bert_base at its
  // bound, pangu_2.6B within 1.005x.
  for (const auto& [name, relative] :
       std::vector<std::pair<std::string, std::string>>{
           {"minimalloc_D", "minimalloc/D.1048576.csv"},
           {"minimalloc_J", "minimalloc/J.1048576.csv"},
           {"trace_bert_base", "traces/bert_base.csv"},
           {"trace_pangu_2.6B", "traces/pangu_2.6B.csv"}}) {
    for (const Workload& w : bundled) {
      if (w.name != name) continue;
      ThreeRuns(benchmark::RegisterBenchmark(
          absl::StrCat("BM_target_tool_best_", name).c_str(),
          [&w, relative = relative](benchmark::State& state) {
            RunToolOnFile(state, "best", relative, w.problem);
          }));
    }
  }
  for (const Workload& w : bundled) {
    const Bytes height = w.name == "minimalloc_D"   ? 1007616
                         : w.name == "minimalloc_J" ? 1031168
                                                    : 0;
    if (height == 0) continue;
    ThreeRuns(benchmark::RegisterBenchmark(
        absl::StrCat("BM_target_best_reach_", w.name).c_str(),
        [&w, height](benchmark::State& state) {
          RunReach(state, w.problem, height);
        }));
  }
}

// exact on MiniMalloc's set: under the benchmark capacity (all 11 in a row,
// and J alone), and minimising D and J with the exact targets' limit.
void RegisterExactScaleTargets(const std::vector<Workload>& bundled) {
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
    // One run each: the limit's minute is the measurement.
    AddExactRun(absl::StrCat("BM_target_exact_minimise_", w.name),
                {.problems = {&w.problem},
                 .capacity = 0,
                 .options = {},
                 .planner = "exact",
                 .time_limit = limit,
                 .work_limit = 0,
                 .minimalloc_cpu_s = 0,
                 .one_run = true});
  }
}

// The default planner under `options`, as an anytime planner: counters
// ratio (peak over the lower bound; issue targets 1.05 and 1.2), cpu_s and
// wall_s of the Solve, cut (1 when a limit decided the plan), max_rss_mb
// (the process's peak resident memory so far: the Solve's when the row
// runs alone, its input included).
void RunAnytime(benchmark::State& state, const Problem& problem,
                const PlanOptions& options) {
  absl::StatusOr<std::unique_ptr<Planner>> planner = CreatePlanner("best", {});
  if (!planner.ok()) {
    state.SkipWithError(std::string(planner.status().message()).c_str());
    return;
  }
  double cpu = 0, wall = 0;
  std::optional<Plan> last;
  for (auto _ : state) {
    const double start = CpuSeconds();
    const absl::Time began = absl::Now();
    absl::StatusOr<Plan> plan = (*planner)->Solve(problem, options);
    cpu = CpuSeconds() - start;
    wall = absl::ToDoubleSeconds(absl::Now() - began);
    if (!plan.ok()) {
      state.SkipWithError(std::string(plan.status().message()).c_str());
      return;
    }
    last = std::move(*plan);
  }
  if (absl::Status s = VerifyPlan(problem, *last); !s.ok()) {
    state.SkipWithError(
        absl::StrCat("invalid plan: ", std::string(s.message())).c_str());
    return;
  }
  state.counters["ratio"] =
      static_cast<double>(last->peak) / static_cast<double>(last->lower_bound);
  state.counters["cpu_s"] = cpu;
  state.counters["wall_s"] = wall;
  state.counters["cut"] = last->counters.count("cut_by_work_limit") +
                          last->counters.count("cut_by_time_limit");
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["max_rss_mb"] = usage.ru_maxrss / 1024.0;
}

// Random intervals with about 1000 buffers alive at each step (lifetimes
// log-uniform up to 10^4 steps), made once per size.
const Problem& DenseIntervals(int64_t n) {
  static auto* made = new std::map<int64_t, Problem>;
  auto [it, inserted] = made->try_emplace(n);
  if (inserted) {
    it->second = *SyntheticProblem(
        SyntheticKind::kIntervals,
        {.buffers = n, .seed = kSyntheticSeed, .max_lifetime = 10000});
  }
  return it->second;
}

// The anytime default (issue 45): S_1, pangu_2.6B and Y_1 under 2 s, S_1 under
// 10^6 work units, 10^6 short intervals under 1 s, dense intervals with no
// limit (one run each: a run takes a minute on a loaded machine).
void RegisterAnytimeTargets(const std::vector<Workload>& bundled) {
  for (const Workload& w : bundled) {
    if (w.name != "trace_S_1" && w.name != "trace_pangu_2.6B" &&
        w.name != "trace_Y_1") {
      continue;
    }
    ThreeRuns(benchmark::RegisterBenchmark(
        absl::StrCat("BM_target_anytime_time_limit_2s_", w.name).c_str(),
        [&w](benchmark::State& state) {
          RunAnytime(state, w.problem, {.time_limit = absl::Seconds(2)});
        }));
    if (w.name != "trace_S_1") continue;
    ThreeRuns(benchmark::RegisterBenchmark(
        "BM_target_anytime_work_limit_1e6_trace_S_1",
        [&w](benchmark::State& state) {
          RunAnytime(state, w.problem, {.work_limit = 1'000'000});
        }));
  }
  ThreeRuns(benchmark::RegisterBenchmark(
      "BM_target_anytime_time_limit_1s_intervals/1000000",
      [](benchmark::State& state) {
        RunAnytime(state, cache().Get(SyntheticKind::kIntervals, 1000000),
                   {.time_limit = absl::Seconds(1)});
      }));
  for (const int64_t n : {300000, 1000000}) {
    OneRun(benchmark::RegisterBenchmark(
        absl::StrCat("BM_target_anytime_dense_intervals/", n).c_str(),
        [n](benchmark::State& state) {
          RunAnytime(state, DenseIntervals(n), {});
        }));
  }
}

// The training steps the default plans at once (issue 45: at most 0.1 s
// CPU each): training/*.json, the traced steps of order/ and
// training_steps/, loaded once when the suite starts.
struct TrainingStep {
  Workload workload;
  std::string relative;  // its file under bench/data
};

const std::vector<TrainingStep>& TrainingSteps() {
  static auto* steps = [] {
    namespace fs = std::filesystem;
    auto* out = new std::vector<TrainingStep>;
    std::vector<fs::path> paths;
    for (const char* dir : {"training", "order", "training_steps"}) {
      std::error_code ec;
      for (const auto& e :
           fs::directory_iterator(settings().data_dir + "/" + dir, ec)) {
        const std::string file = e.path().filename().string();
        const bool json =
            absl::EndsWith(file, ".json") || absl::EndsWith(file, ".json.gz");
        if (json && (std::string_view(dir) != "order" ||
                     absl::StrContains(file, "_step"))) {
          paths.push_back(e.path());
        }
      }
    }
    std::sort(paths.begin(), paths.end());
    for (const fs::path& path : paths) {
      absl::StatusOr<LoadedInput> input =
          LoadInput(path.string(), BuildOptions{});
      if (!input.ok()) {
        fprintf(stderr, "memplan_bench: skipping %s: %s\n",
                path.string().c_str(),
                std::string(input.status().message()).c_str());
        continue;
      }
      std::string name = path.filename().string();
      name = name.substr(0, name.find('.'));
      out->push_back({{name, std::move(input->problem)},
                      absl::StrCat(path.parent_path().filename().string(), "/",
                                   path.filename().string())});
    }
    return out;
  }();
  return *steps;
}

// The default planner on each training step, as it answers by default:
// counters cpu_s (the Solve's CPU seconds), ratio (to the lower bound).
// Then the whole `memplan plan FILE` on each, as a child (cpu_s: its CPU,
// target 0.1 s): reading the graph, the summary's bound over op orders
// and writing the plan JSON included.
void RegisterTrainingTargets() {
  for (const TrainingStep& step : TrainingSteps()) {
    const Workload& w = step.workload;
    ThreeRuns(benchmark::RegisterBenchmark(
        absl::StrCat("BM_target_best_training_", w.name).c_str(),
        [&w](benchmark::State& state) { RunAnytime(state, w.problem, {}); }));
  }
  for (const TrainingStep& step : TrainingSteps()) {
    ThreeRuns(benchmark::RegisterBenchmark(
        absl::StrCat("BM_target_tool_best_training_", step.workload.name)
            .c_str(),
        [&step](benchmark::State& state) {
          RunToolOnFile(state, "best", step.relative, step.workload.problem);
        }));
  }
}

}  // namespace

void RegisterTargets(const std::vector<Workload>& bundled) {
  RegisterAnytimeTargets(bundled);
  RegisterTrainingTargets();
  RegisterRematTargets();
  RegisterRematExactTargets();
  RegisterLimitTargets();
  RegisterCountedTargets();
  RegisterSyntheticTargets();
  RegisterBestTargets(bundled);
  RegisterExactScaleTargets(bundled);
}

}  // namespace memplan::bench

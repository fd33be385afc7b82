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
//   BM_cp_capacity_minimalloc_<X>      cp and cpsat (when built) on the
//   BM_cpsat_capacity_minimalloc_<X>   same, default work limit, beside exact
//                                      (every row: counter cpu_s, the
//                                      process's CPU seconds; on D and J
//                                      also MiniMalloc's, recorded:
//                                      minimalloc_cpu_s, cpu_vs_minimalloc)
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
//   BM_target_anytime_<limit>_<input>   best as an anytime planner: S_1
//                                  at 2 s and 10^6 work units, pangu_2.6B and
//                                  Y_1 at 2 s, 10^6 short intervals at 1 s,
//                                  dense intervals (about 1000 alive a
//                                  step) at 3x10^5 and 10^6 with no limit
//                                  (one run each): counters ratio (to the
//                                  lower bound), cpu_s, wall_s, cut,
//                                  max_rss_mb (the process's peak)
//   BM_target_counted_<planner>_<input>_<limit>/N   every planner under
//                                  10^7 and 4x10^7 work units and the
//                                  default limit, N = 10^5 and 10^6 buffers
//                                  all alive, random or short intervals,
//                                  one run:
//                                  counter counted_ratio is the work its
//                                  Solve counted over the limit (target
//                                  1.1; the same on any machine)
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
//   BM_target_tool_best_<input>                 the whole `memplan plan
//                                  FILE` by default, as a child, on
//                                  MiniMalloc's D and J, bert_base and
//                                  pangu_2.6B: counters cpu_s (the child's),
//                                  max_rss_mb, peak and ratio of the plan
//                                  it wrote (read back, verified)
//   BM_target_best_training_<graph>             best by default on every
//                                  training step (training/, the steps of
//                                  order/, training_steps/): counters
//                                  cpu_s (target: 0.1 s), ratio
//   BM_target_tool_best_training_<graph>        the whole `memplan plan
//                                  FILE` by default on the same steps, as
//                                  a child, the plan written as JSON:
//                                  counter cpu_s (target: 0.1 s), peak,
//                                  ratio, max_rss_mb
//   BM_target_remat_<graph>                     RematSweep of 8 budgets on
//                                  each step of remat/ (op costs), each
//                                  budget fitted again alone: counters
//                                  max_point_cpu_s (target: 2 s at 2,500
//                                  ops), peak_ratio_k, cost_pct_k (the cost
//                                  curve), smallest_ratio (remat_targets.cc)
//   BM_target_best_reach_minimalloc_{D,J}      best by default: counter
//                                  reach_cpu_s, the CPU seconds until its
//                                  plan is at 1007616 (D) or 1031168 (J),
//                                  the heights of its whole budget before
//                                  (-1: never); cpu_s, the whole Solve
//   BM_target_exact_capacity_minimalloc_{all,J} exact under capacity
//                                  1048576: the 11 instances in a row, and J
//   BM_target_exact_minimise_minimalloc_{D,J}   exact's least peak of D
//                                  and J (--memplan_exact_time_limit,
//                                  default 60 s; one run each)
//   With --memplan_order_targets, the op orderings, each run 3 times (one
//   iteration per run; medians reported), wall time:
//   BM_order_<ordering>_<graph>    traced (the graph's own order),
//                                  reverse_postorder, memory, optimal and
//                                  window on the training graphs, five
//                                  seeded RandWire-style graphs of 3 stages
//                                  of 32 nodes, three of 3 stages of 64
//                                  (randwire64_*), DARTS- and NASNet-like
//                                  cell graphs, a 20000-wide fan; traced,
//                                  memory and window on graphs of 2,500 and
//                                  10^5 ops (randwire_wide_*: 4 stages;
//                                  cells_*: a chain of DARTS-style cells;
//                                  fan_*): counters traced, peak (lower
//                                  bounds of the orders), ratio, any_order
//                                  (LowerBoundOverOrders), placed (the
//                                  default planner's peak in that order, up
//                                  to 2,500 ops), for optimal proven, bound
//                                  and work, for window passes and work
//   BM_order_<ordering>_order_<graph>   the same, one run each, on the
//                                  traced PyTorch graphs of bench/data/order
//                                  (scripts/order_results.py tabulates them
//                                  into bench/order_results.md)
//   BM_remat_exact_mlp_train       --memplan_targets: RematerializeExact on the
//                                  MLP's training step (61 ops) at 0.9 to
//                                  0.5 of its peak, 3 runs of one
//                                  iteration (the 5 solves): counters
//                                  proven (of 5), max_solve_cpu_s (target
//                                  10 s), work, cost_0.5
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
//
// Sources: this file (main, memplan's own flags, the registration order);
// planner_benchmarks.cc, exact_targets.cc, scale_targets.cc,
// order_targets.cc and remat_targets.cc (one group
// each); bench_util.h (what the groups share).

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "bench_util.h"
#include "memplan/memplan.h"
#include "memplan/registry.h"
#ifdef MEMPLAN_HAVE_CP
#include "memplan/planners/cp.h"
#endif
#ifdef MEMPLAN_HAVE_CPSAT
#include "memplan/planners/cpsat.h"
#endif

namespace memplan::bench {
namespace {

// The groups, in the order the suite has always listed them.
void RegisterAll() {
  static const std::vector<Workload>* bundled =
      new std::vector<Workload>(LoadBundled());
  std::vector<std::string> planners;
  for (const PlannerInfo& info : RegisteredPlanners())
    planners.emplace_back(info.name);

  RegisterBundledRuns(planners, *bundled);
  if (settings().exact_targets) RegisterExactTargets(*bundled);
  if (settings().targets) RegisterTargets(*bundled);
  if (settings().order_targets) RegisterOrderTargets();
  RegisterSyntheticRuns(planners);
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
    } else if (arg == "--memplan_order_targets") {
      settings().order_targets = true;
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
          declared |=
              eq != std::string::npos && option.name == v->substr(0, eq);
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
}  // namespace memplan::bench

int main(int argc, char** argv) {
#ifdef MEMPLAN_HAVE_CP
  // The optional planners this build links, before anything looks one up.
  if (absl::Status s = memplan::RegisterCpPlanner(); !s.ok()) {
    fprintf(stderr, "memplan_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }
#endif
#ifdef MEMPLAN_HAVE_CPSAT
  if (absl::Status s = memplan::RegisterCpsatPlanner(); !s.ok()) {
    fprintf(stderr, "memplan_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }
#endif
  if (!memplan::bench::ParseOwnFlags(&argc, argv)) return 1;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  memplan::bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

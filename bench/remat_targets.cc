// --memplan_targets' rematerialization rows: BM_target_remat_<graph>, one
// per training step of bench/data/remat (steps with op costs), the sweep of
// 8 budgets from the peak without recomputation down to the smallest peak
// reached (RematSweep), each budget then fitted again alone and timed.
// Counters: max_point_cpu_s (the slowest budget's CPU seconds; target 2 s
// at 2,500 ops), mean_point_cpu_s, sweep_cpu_s (the whole RematSweep),
// smallest_ratio (the smallest peak over the peak without recomputation),
// and per budget k (0 = no recomputation) peak_ratio_k and cost_pct_k (the
// added cost in % of the graph's total cost): the cost curve.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench_util.h"
#include "memplan/load.h"
#include "memplan/remat.h"
#include "memplan/verify.h"

namespace memplan::bench {
namespace {

constexpr int kSweepPoints = 8;

double ProcessCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Step {
  std::string name;
  Graph graph;
};

const std::vector<Step>& RematSteps() {
  static auto* steps = [] {
    namespace fs = std::filesystem;
    auto* out = new std::vector<Step>;
    std::vector<fs::path> paths;
    std::error_code ec;
    for (const auto& e :
         fs::directory_iterator(settings().data_dir + "/remat", ec)) {
      const std::string file = e.path().filename().string();
      if (absl::EndsWith(file, ".json") || absl::EndsWith(file, ".json.gz")) {
        paths.push_back(e.path());
      }
    }
    std::sort(paths.begin(), paths.end());
    for (const fs::path& path : paths) {
      absl::StatusOr<LoadedInput> input =
          LoadInput(path.string(), BuildOptions{});
      if (!input.ok() || !input->graph.has_value()) {
        fprintf(stderr, "memplan_bench: skipping %s: %s\n",
                path.string().c_str(),
                input.ok() ? "no graph"
                           : std::string(input.status().message()).c_str());
        continue;
      }
      std::string name = path.filename().string();
      name = name.substr(0, name.find('.'));
      out->push_back({name, *std::move(input->graph)});
    }
    return out;
  }();
  return *steps;
}

void RunSweep(benchmark::State& state, const Graph& graph) {
  double total_cost = 0;
  for (const Op& op : graph.ops) total_cost += op.cost.value_or(0);
  std::vector<RematSweepPoint> sweep;
  double sweep_cpu = 0;
  for (auto _ : state) {
    const double start = ProcessCpuSeconds();
    absl::StatusOr<std::vector<RematSweepPoint>> made =
        RematSweep(graph, kSweepPoints);
    sweep_cpu = ProcessCpuSeconds() - start;
    if (!made.ok()) {
      state.SkipWithError(std::string(made.status().message()).c_str());
      return;
    }
    sweep = *std::move(made);
  }
  double max_cpu = 0, sum_cpu = 0;
  for (size_t k = 0; k < sweep.size(); ++k) {
    const double start = ProcessCpuSeconds();
    absl::StatusOr<RematResult> fitted = Rematerialize(graph, sweep[k].budget);
    const double cpu = ProcessCpuSeconds() - start;
    if (!fitted.ok() ||
        !VerifyPlan(fitted->plan.problem, fitted->plan.plan).ok() ||
        fitted->plan.plan.peak != sweep[k].peak) {
      state.SkipWithError(absl::StrCat("budget ", sweep[k].budget,
                                       ": not the sweep's verified plan")
                              .c_str());
      return;
    }
    max_cpu = std::max(max_cpu, cpu);
    sum_cpu += cpu;
    const double top = static_cast<double>(sweep.front().peak);
    state.counters[absl::StrCat("peak_ratio_", k)] =
        static_cast<double>(sweep[k].peak) / top;
    state.counters[absl::StrCat("cost_pct_", k)] =
        total_cost > 0 ? 100 * sweep[k].added_cost / total_cost : 0;
  }
  state.counters["points"] = static_cast<double>(sweep.size());
  state.counters["max_point_cpu_s"] = max_cpu;
  state.counters["mean_point_cpu_s"] =
      sum_cpu / static_cast<double>(sweep.size());
  state.counters["sweep_cpu_s"] = sweep_cpu;
  state.counters["smallest_ratio"] = static_cast<double>(sweep.back().peak) /
                                     static_cast<double>(sweep.front().peak);
}

}  // namespace

void RegisterRematTargets() {
  for (const Step& step : RematSteps()) {
    benchmark::RegisterBenchmark(
        absl::StrCat("BM_target_remat_", step.name).c_str(),
        [&step](benchmark::State& state) { RunSweep(state, step.graph); })
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
}

}  // namespace memplan::bench

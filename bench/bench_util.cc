#include "bench_util.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "memplan/io.h"
#include "memplan/registry.h"

namespace memplan::bench {
namespace {

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

}  // namespace

Settings& settings() {
  static Settings* s = new Settings;
  return *s;
}

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

SyntheticCache& cache() {
  static SyntheticCache* c = new SyntheticCache;
  return *c;
}

PlannerOptions OptionsFor(std::string_view name, PlannerOptions row) {
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name != name) continue;
    for (const PlannerOption& option : info.options) {
      auto given = settings().options.find(option.name);
      if (given != settings().options.end()) row.insert(*given);
    }
  }
  return row;
}

void RunPlanner(benchmark::State& state, const std::string& planner_name,
                const Problem& problem, const std::string& family,
                std::optional<PlanOptions> plan_options) {
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

void ThreeRuns(benchmark::internal::Benchmark* b) {
  b->Iterations(1)
      ->Repetitions(3)
      ->ReportAggregatesOnly(true)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

void OneRun(benchmark::internal::Benchmark* b) {
  b->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace memplan::bench

// symbolic_bench: symbolic plans of graphs with a symbolic sequence length,
// and the symbolic verifier's speed.
//
//   symbolic_bench [--layers=N] [--alignment=N] [--verify-buffers=N] [PATH...]
//   symbolic_bench --time-limits=0.1,1,0 [--alignment=N] [PATH...]
//
// PATH: a graph JSON file with dims, or a directory whose *.json files are
// (in name order). Besides them, the generated workloads: a transformer
// encoder, the same with a KV cache per layer, and a Llama-style decoder.
// Per graph, at seq = 1, 2, 3, 7, 64, 500, 1024, 2048 (the values inside
// the graph's range of its first dim, and its maximum; other dims at their
// maxima): the
// peak of the plan PlanSymbolicMemory chooses (buckets allowed), of one
// plan (one bucket), of the greedy's one plan, and of the upper-bound
// baseline, each over the lower bound of the graph bound there; the chosen
// plan's worst ratio over every value of the dim, and where; the time to
// plan and to verify. Then a summary table, and the verifier row: a plan
// of 10^4 buffers proven and a mutated one refuted. Markdown throughout.
// With --time-limits, only a table of PlanSymbolicMemory at each time limit
// (0: none) per graph (the PATHs', else the generated ones): its CPU time
// over the limit, which the budget keeps within about 1.1x.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "memplan/formats.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_memplan.h"
#include "memplan/symbolic_planner.h"
#include "memplan/symbolic_verify.h"
#include "workloads/symbolic_decoder.h"
#include "workloads/symbolic_transformer.h"

namespace memplan {
namespace {

constexpr int64_t kValues[] = {1, 2, 3, 7, 64, 500, 1024, 2048};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

void Fail(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(),
               std::string(status.message()).c_str());
  std::exit(1);
}

template <typename T>
T Check(const std::string& what, absl::StatusOr<T> value) {
  if (!value.ok()) Fail(what, value.status());
  return *std::move(value);
}

struct Summary {
  std::string graph;
  size_t buffers = 0;
  std::string buckets;
  double chosen_worst = 0, chosen_end = 0;
  double one_worst = 0, greedy_worst = 0, upper_worst = 0;
  // The lower bound of the reserved sizes (the symbolic problem at s) over
  // the graph's own: what no symbolic plan can go below.
  double reserve_worst = 0;
  // The chosen plan's worst peak / LB over every value of the cut dim (the
  // others at their maxima), not only the listed ones, and where.
  double every_worst = 0;
  int64_t every_worst_at = 0;
  double plan_seconds = 0, verify_seconds = 0;
  bool meets = false;
};

std::string Ratio(double r) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", r);
  return text;
}

// The peak of `plan` (a SymbolicGraphPlan's bucket holding `at`) at `at`.
int64_t PeakAt(const std::string& what, const SymbolicGraphPlan& plan,
               const DimValues& at) {
  const SymbolicBucket* bucket = plan.Find(at);
  if (bucket == nullptr) Fail(what, absl::InternalError("no bucket"));
  return Check(what, bucket->PeakAt(at));
}

// The four plans Measure() compares, the chosen one timed and verified.
struct Plans {
  SymbolicGraphPlan chosen, one, greedy;
  SymbolicPlan upper;
};

Plans PlanAll(const Graph& g, SymbolicPlanMemoryOptions options,
              Summary& summary) {
  const std::string& name = g.name;
  Plans plans;
  auto start = std::chrono::steady_clock::now();
  plans.chosen = Check(name, PlanSymbolicMemory(g, options));
  summary.plan_seconds = Seconds(start);
  start = std::chrono::steady_clock::now();
  if (absl::Status s = VerifySymbolicGraphPlan(plans.chosen); !s.ok()) {
    Fail(name, s);
  }
  summary.verify_seconds = Seconds(start);
  options.max_buckets = 1;
  plans.one = Check(name, PlanSymbolicMemory(g, options));
  options.planner = "symbolic_greedy";
  plans.greedy = Check(name, PlanSymbolicMemory(g, options));
  plans.upper = Check(name, PlanSymbolicUpperBound(plans.chosen.problem));
  return plans;
}

// The chosen plan's buckets of `dim`: "[1, 128], [129, 2048] in steps of 4".
std::string BucketsText(const SymbolicGraphPlan& chosen,
                        const std::string& dim) {
  std::string text;
  for (const SymbolicBucket& b : chosen.buckets) {
    const DimRange r = b.dims.at(dim);
    absl::StrAppend(&text, text.empty() ? "" : ", ", "[", r.min, ", ", r.max,
                    "]");
    if (auto step = b.steps.find(dim); step != b.steps.end()) {
      absl::StrAppend(&text, " in steps of ", step->second);
    }
  }
  return text;
}

// The dims with `dim` at s, the others at their maxima, and the lower bound
// of the graph bound there (at least 1).
std::pair<DimValues, double> BoundAt(const Graph& g, const Plans& plans,
                                     const BuildOptions& build,
                                     const std::string& dim, int64_t s) {
  DimValues at;
  for (const auto& [d, r] : plans.chosen.problem.dims) at[d] = r.max;
  at[dim] = s;
  const Problem bound =
      Check(g.name, BuildProblem(Check(g.name, BindDims(g, at)), build));
  return {at, static_cast<double>(std::max<int64_t>(1, LowerBound(bound)))};
}

// One row of the table: the plans' peaks at s over the lower bound there.
void MeasureAt(const Graph& g, const Plans& plans, const BuildOptions& build,
               const std::string& dim, int64_t s, bool last, Summary& summary) {
  const std::string& name = g.name;
  const auto [at, lb] = BoundAt(g, plans, build, dim, s);
  // The sizes as the chosen plan reserves them: its bucket's.
  const SymbolicBucket* holding = plans.chosen.Find(at);
  const SymbolicProblem bucket =
      Check(name, holding->ProblemOf(plans.chosen.problem));
  const double reserved = static_cast<double>(
      LowerBound(Check(name, bucket.At(StepValues(at, holding->steps)))));
  summary.reserve_worst = std::max(summary.reserve_worst, reserved / lb);
  const int64_t peak = PeakAt(name, plans.chosen, at);
  const int64_t one_peak = PeakAt(name, plans.one, at);
  const int64_t greedy_peak = PeakAt(name, plans.greedy, at);
  const int64_t upper_peak = Check(name, plans.upper.peak.Evaluate(at));
  const double r = peak / lb;
  summary.chosen_worst = std::max(summary.chosen_worst, r);
  if (last) summary.chosen_end = r;
  summary.one_worst = std::max(summary.one_worst, one_peak / lb);
  summary.greedy_worst = std::max(summary.greedy_worst, greedy_peak / lb);
  summary.upper_worst = std::max(summary.upper_worst, upper_peak / lb);
  summary.meets = summary.meets && r <= 1.05 && (!last || r <= 1.02);
  std::printf("| %lld | %.0f | %lld | %s | %lld | %s | %s | %lld | %s |\n",
              static_cast<long long>(s), lb, static_cast<long long>(peak),
              Ratio(r).c_str(), static_cast<long long>(one_peak),
              Ratio(one_peak / lb).c_str(), Ratio(greedy_peak / lb).c_str(),
              static_cast<long long>(upper_peak),
              Ratio(upper_peak / lb).c_str());
}

Summary Measure(const Graph& g, Bytes alignment) {
  const std::string& name = g.name;
  SymbolicPlanMemoryOptions options;
  options.build.alignment = alignment;
  Summary summary;
  const Plans plans = PlanAll(g, options, summary);
  const SymbolicGraphPlan& chosen = plans.chosen;
  const std::string dim = chosen.problem.dims.begin()->first;
  const DimRange range = chosen.problem.dims.begin()->second;
  summary.graph = name;
  summary.buffers = chosen.problem.buffers.size();
  summary.buckets = BucketsText(chosen, dim);
  std::printf(
      "### %s\n\n%zu buffers, %s in [%lld, %lld], alignment %lld; "
      "planner %s, %zu bucket%s: %s %s\n\n",
      name.c_str(), summary.buffers, dim.c_str(),
      static_cast<long long>(range.min), static_cast<long long>(range.max),
      static_cast<long long>(alignment), chosen.planner.c_str(),
      chosen.buckets.size(), chosen.buckets.size() == 1 ? "" : "s", dim.c_str(),
      summary.buckets.c_str());
  std::printf(
      "| %s | LB(s) | chosen peak(s) | / LB | one plan | / LB | "
      "greedy one plan / LB | upper bound | / LB |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      dim.c_str());
  summary.meets = true;
  // The listed values inside the range, and its maximum.
  std::vector<int64_t> values;
  for (int64_t s : kValues) {
    if (s >= range.min && s <= range.max) values.push_back(s);
  }
  if (values.empty() || values.back() != range.max) values.push_back(range.max);
  for (int64_t s : values) {
    MeasureAt(g, plans, options.build, dim, s, s == range.max, summary);
  }
  for (int64_t s = range.min; s <= range.max; ++s) {
    const auto [at, lb] = BoundAt(g, plans, options.build, dim, s);
    const double r = static_cast<double>(PeakAt(name, chosen, at)) / lb;
    if (r > summary.every_worst) {
      summary.every_worst = r;
      summary.every_worst_at = s;
    }
  }
  std::printf(
      "\nworst chosen peak / LB over every %s in [%lld, %lld]: %s at "
      "%s = %lld\n",
      dim.c_str(), static_cast<long long>(range.min),
      static_cast<long long>(range.max), Ratio(summary.every_worst).c_str(),
      dim.c_str(), static_cast<long long>(summary.every_worst_at));
  std::printf("\nplanned in %.3f s, verified in %.3f s\n\n",
              summary.plan_seconds, summary.verify_seconds);
  std::fflush(stdout);
  return summary;
}

// CPU seconds this process has used.
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// PlanSymbolicMemory of each graph at each time limit: the CPU and wall
// time it took over the limit (at most 1.1 is the contract), and the plan's
// worst sampled peak / LB over its buckets against the unlimited one's.
void TimeLimits(const std::vector<Graph>& graphs, Bytes alignment,
                const std::vector<double>& limits) {
  std::printf(
      "### Time limits\n\n| graph | buffers | time limit | CPU | "
      "CPU / limit | wall / limit | buckets | worst peak/LB |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Graph& g : graphs) {
    for (double limit : limits) {
      SymbolicPlanMemoryOptions options;
      options.build.alignment = alignment;
      if (limit > 0) options.search.time_limit = absl::Seconds(limit);
      const double cpu = CpuSeconds();
      const auto start = std::chrono::steady_clock::now();
      const SymbolicGraphPlan plan =
          Check(g.name, PlanSymbolicMemory(g, options));
      const double used = CpuSeconds() - cpu, wall = Seconds(start);
      double worst = 0;
      for (const SymbolicBucket& b : plan.buckets) {
        worst =
            std::max(worst, Check(g.name, WorstSampledRatio(plan.problem, b)));
      }
      std::printf("| %s | %zu | %s | %.3f s | %s | %s | %zu | %s |\n",
                  g.name.c_str(), plan.problem.buffers.size(),
                  limit > 0 ? absl::StrCat(limit, " s").c_str() : "none", used,
                  limit > 0 ? Ratio(used / limit).c_str() : "-",
                  limit > 0 ? Ratio(wall / limit).c_str() : "-",
                  plan.buckets.size(), Ratio(worst).c_str());
      std::fflush(stdout);
    }
  }
  std::printf("\n");
}

void VerifySpeed(int buffers) {
  // No KV cache: 14 short-lived buffers a layer.
  const int layers = (buffers + 13) / 14;
  const Graph g =
      internal::SymbolicTransformer({.layers = layers, .kv_cache = false});
  BuildOptions build;
  build.alignment = 64;
  const SymbolicProblem p = Check(g.name, BuildSymbolicProblem(g, build));
  auto start = std::chrono::steady_clock::now();
  const SymbolicPlan greedy = Check(g.name, PlanSymbolicGreedy(p));
  const double plan_seconds = Seconds(start);
  start = std::chrono::steady_clock::now();
  const absl::Status ok = VerifySymbolicPlan(p, greedy);
  const double proven = Seconds(start);
  // A refuted plan: the last buffer moved onto the bytes of a buffer alive
  // with it.
  SymbolicPlan wrong = greedy;
  const SymbolicBuffer& last = p.buffers.back();
  for (size_t j = p.buffers.size() - 1; j-- > 0;) {
    const Lifetime& l = p.buffers[j].lifetime;
    if (l.start < last.lifetime.end && last.lifetime.start < l.end) {
      wrong.offsets.back() = wrong.offsets[j];
      break;
    }
  }
  start = std::chrono::steady_clock::now();
  const absl::Status refuted = VerifySymbolicPlan(p, wrong);
  const double refuted_seconds = Seconds(start);
  std::printf(
      "### Symbolic verifier\n\n| buffers | greedy plan | proven | mutated "
      "plan |\n|---:|---:|---:|---:|\n| %zu | %.3f s | %s in %.3f s | %s in "
      "%.3f s |\n",
      p.buffers.size(), plan_seconds, ok.ok() ? "proven" : "REFUSED", proven,
      refuted.ok() ? "ACCEPTED" : "refuted", refuted_seconds);
  if (!refuted.ok()) {
    std::printf("\n(%s)\n", std::string(refuted.message()).c_str());
  }
}

std::vector<std::string> JsonFiles(const std::string& path) {
  std::vector<std::string> files;
  if (std::filesystem::is_directory(path)) {
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  return files;
}

Graph ReadGraph(const std::string& path) {
  std::ifstream in(path);
  if (!in) Fail(path, absl::NotFoundError("cannot open the file"));
  std::stringstream text;
  text << in.rdbuf();
  Graph g = Check(path, ParseGraphJson(text.str()));
  if (g.dims.empty()) Fail(path, absl::InvalidArgumentError("no dims"));
  if (g.name.empty()) g.name = std::filesystem::path(path).stem();
  return g;
}

}  // namespace
}  // namespace memplan

int main(int argc, char** argv) {
  using namespace memplan;
  int layers = 8;
  int buffers = 10000;
  Bytes alignment = 64;
  std::vector<std::string> paths;
  std::vector<double> limits;  // --time-limits=0.1,1: that table alone
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--time-limits=", 0) == 0) {
      for (absl::string_view l : absl::StrSplit(arg.substr(14), ',')) {
        limits.push_back(std::atof(std::string(l).c_str()));
      }
    } else if (arg.rfind("--layers=", 0) == 0) {
      layers = std::atoi(arg.c_str() + 9);
    } else if (arg.rfind("--alignment=", 0) == 0) {
      alignment = std::atoll(arg.c_str() + 12);
    } else if (arg.rfind("--verify-buffers=", 0) == 0) {
      buffers = std::atoi(arg.c_str() + 17);
    } else {
      paths.push_back(arg);
    }
  }
  std::vector<Graph> graphs = {
      internal::SymbolicTransformer({.layers = layers, .kv_cache = false}),
      internal::SymbolicTransformer({.layers = layers}),
      internal::SymbolicDecoder({.layers = layers})};
  graphs[0].name += "_encoder";
  graphs[1].name += "_kv_cache";
  if (!limits.empty() && !paths.empty()) graphs.clear();
  for (const std::string& path : paths) {
    for (const std::string& file : JsonFiles(path)) {
      graphs.push_back(ReadGraph(file));
    }
  }
  if (!limits.empty()) {
    TimeLimits(graphs, alignment, limits);
    return 0;
  }
  std::vector<Summary> summaries;
  for (const Graph& g : graphs) summaries.push_back(Measure(g, alignment));
  std::printf(
      "### Summary\n\n| graph | buffers | buckets | chosen: worst "
      "peak/LB | at the maximum | one plan | greedy one plan | upper "
      "bound | reserved LB / LB | every value: worst (at) | plan | "
      "verify | targets |\n"
      "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
      "\n");
  for (const Summary& s : summaries) {
    std::printf(
        "| %s | %zu | %s | %s | %s | %s | %s | %s | %s | %s (%lld) | "
        "%.2f s | %.3f s | %s |\n",
        s.graph.c_str(), s.buffers, s.buckets.c_str(),
        Ratio(s.chosen_worst).c_str(), Ratio(s.chosen_end).c_str(),
        Ratio(s.one_worst).c_str(), Ratio(s.greedy_worst).c_str(),
        Ratio(s.upper_worst).c_str(), Ratio(s.reserve_worst).c_str(),
        Ratio(s.every_worst).c_str(), static_cast<long long>(s.every_worst_at),
        s.plan_seconds, s.verify_seconds, s.meets ? "met" : "missed");
  }
  std::printf("\n");
  VerifySpeed(buffers);
  return 0;
}

// memplan: the command-line tool.
//
//   memplan plan INPUT [build flags] [--planner=NAME] [--time-limit=SECONDS]
//                [--seed=N] [--threads=N] [--out=FILE.json|FILE.csv]
//                [--node-limit=N] [--exact-off=NAME,...]   (exact only)
//   memplan verify INPUT PLAN [build flags]
//   memplan stats INPUT [build flags]
//   memplan planners
//   memplan compare INPUT... [--planners=a,b,...] [--time-limit=SECONDS]
//                [--format=table|markdown|csv|summary[,...]] [--seed=N]
//                [--threads=N] [build flags]
//
// Build flags: --alignment=N --plan-constants --no-plan-inputs
// --no-plan-outputs --pool=NAME:CAPACITY:ALIGNMENT (repeatable) --capacity=N.
// Every error is one line on stderr and a non-zero exit status.

#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "memplan/compare.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "memplan/planners/exact.h"
#include "memplan/reorder.h"

namespace memplan {
namespace {

constexpr char kUsage[] =
    "usage:\n"
    "  memplan plan INPUT [--planner=NAME] [--time-limit=SECONDS] [--seed=N]\n"
    "               [--threads=N] [--out=FILE.json|FILE.csv]\n"
    "               [--graph-out=FILE.json] [build flags]\n"
    "               exact only: [--node-limit=N] [--exact-off=NAME,...] with\n"
    "               NAME in section_inference, symmetry, decomposition,\n"
    "               failure_cache, restarts, warm_start\n"
    "  memplan verify INPUT PLAN.json|PLAN.csv [build flags]\n"
    "  memplan stats INPUT [build flags]\n"
    "  memplan planners\n"
    "  memplan compare INPUT... [--planners=a,b,...] [--time-limit=SECONDS]\n"
    "               [--format=table|markdown|csv|summary[,...]] [--seed=N]\n"
    "               [--threads=N] [build flags]\n"
    "build flags: --alignment=N --plan-constants --no-plan-inputs "
    "--no-plan-outputs\n"
    "             --pool=NAME:CAPACITY:ALIGNMENT (repeatable) --capacity=N\n"
    "             --reorder=longest_path|memory (graphs: plan another op "
    "order)\n"
    "INPUT: a memplan-graph-v1 JSON (.json, .json.gz) or a buffer CSV (.csv)\n";

// Flags of the form --name=value or --name, and positional arguments.
struct CommandLine {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> flags;

  bool Has(const std::string& name) const { return flags.count(name) > 0; }
  std::string Get(const std::string& name,
                  const std::string& fallback = "") const {
    auto it = flags.find(name);
    return it == flags.end() ? fallback : it->second;
  }
  std::vector<std::string> All(const std::string& name) const {
    std::vector<std::string> out;
    auto [lo, hi] = flags.equal_range(name);
    for (auto it = lo; it != hi; ++it) out.push_back(it->second);
    return out;
  }
};

absl::StatusOr<CommandLine> ParseCommandLine(
    int argc, char** argv, int first, const std::set<std::string>& known) {
  CommandLine line;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      line.positional.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    std::string name =
        arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (known.count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    line.flags.emplace(name, value);
  }
  return line;
}

absl::StatusOr<int64_t> IntFlag(const CommandLine& line,
                                const std::string& name, int64_t fallback) {
  if (!line.Has(name)) return fallback;
  int64_t value = 0;
  if (!absl::SimpleAtoi(line.Get(name), &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, "=", line.Get(name), " is not an integer"));
  }
  return value;
}

// --time-limit (seconds), --seed and --threads; absent flags keep `options`.
absl::Status ReadPlanOptions(const CommandLine& line, PlanOptions& options) {
  if (line.Has("time-limit")) {
    double seconds = 0;
    if (!absl::SimpleAtod(line.Get("time-limit"), &seconds) || seconds < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--time-limit=", line.Get("time-limit"),
                       " is not a number of seconds"));
    }
    options.time_limit = absl::Seconds(seconds);
  }
  absl::StatusOr<int64_t> seed = IntFlag(line, "seed", 0);
  if (!seed.ok()) return seed.status();
  options.seed = static_cast<uint64_t>(*seed);
  absl::StatusOr<int64_t> threads = IntFlag(line, "threads", 1);
  if (!threads.ok()) return threads.status();
  if (*threads < 1 || *threads > 1024) {
    return absl::InvalidArgumentError("--threads must be between 1 and 1024");
  }
  options.threads = static_cast<int>(*threads);
  return absl::OkStatus();
}

const std::set<std::string> kBuildFlags = {
    "alignment", "plan-constants", "no-plan-inputs", "no-plan-outputs",
    "pool",      "capacity",       "reorder"};

absl::StatusOr<BuildOptions> BuildOptionsFrom(const CommandLine& line) {
  BuildOptions options;
  absl::StatusOr<int64_t> alignment = IntFlag(line, "alignment", 1);
  if (!alignment.ok()) return alignment.status();
  options.alignment = *alignment;
  absl::StatusOr<int64_t> capacity = IntFlag(line, "capacity", 0);
  if (!capacity.ok()) return capacity.status();
  options.capacity = *capacity;
  options.plan_constants = line.Has("plan-constants");
  options.plan_inputs = !line.Has("no-plan-inputs");
  options.plan_outputs = !line.Has("no-plan-outputs");
  for (const std::string& spec : line.All("pool")) {
    std::vector<std::string> parts = absl::StrSplit(spec, ':');
    Pool pool;
    if (parts.empty() || parts.size() > 3 || parts[0].empty() ||
        (parts.size() > 1 && !absl::SimpleAtoi(parts[1], &pool.capacity)) ||
        (parts.size() > 2 && !absl::SimpleAtoi(parts[2], &pool.alignment))) {
      return absl::InvalidArgumentError(
          absl::StrCat("--pool=", spec,
                       " is not NAME[:CAPACITY[:ALIGNMENT]] with integers"));
    }
    pool.name = parts[0];
    options.pools.push_back(pool);
  }
  return options;
}

absl::StatusOr<LoadedInput> Load(const CommandLine& line, size_t index) {
  absl::StatusOr<BuildOptions> options = BuildOptionsFrom(line);
  if (!options.ok()) return options.status();
  absl::StatusOr<LoadedInput> input =
      LoadInput(line.positional[index], *options);
  if (!input.ok() || !line.Has("reorder")) return input;
  // --reorder: the problem of the graph with its ops in another order.
  if (!input->graph.has_value()) {
    return absl::InvalidArgumentError(
        "--reorder needs a graph INPUT; a buffer CSV has no ops");
  }
  absl::StatusOr<Graph> graph =
      ReorderGraph(*input->graph, line.Get("reorder"));
  if (!graph.ok()) return graph.status();
  absl::StatusOr<Problem> problem = BuildProblem(*graph, *options);
  if (!problem.ok()) return problem.status();
  input->graph = std::move(*graph);
  input->problem = std::move(*problem);
  return input;
}

// --node-limit=N and --exact-off=NAME,... for the exact planner.
absl::StatusOr<ExactOptions> ExactOptionsFrom(const CommandLine& line) {
  ExactOptions options;
  absl::StatusOr<int64_t> node_limit = IntFlag(line, "node-limit", 0);
  if (!node_limit.ok()) return node_limit.status();
  if (*node_limit < 0) {
    return absl::InvalidArgumentError("--node-limit must not be negative");
  }
  options.node_limit = *node_limit;
  const std::map<std::string, bool*> switches = {
      {"section_inference", &options.section_inference},
      {"symmetry", &options.symmetry},
      {"decomposition", &options.decomposition},
      {"failure_cache", &options.failure_cache},
      {"warm_start", &options.heuristic_warm_start},
  };
  for (const std::string& flag : line.All("exact-off")) {
    for (absl::string_view name :
         absl::StrSplit(flag, ',', absl::SkipEmpty())) {
      if (name == "restarts") {
        options.restarts_per_round = 0;
        continue;
      }
      auto it = switches.find(std::string(name));
      if (it == switches.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--exact-off: unknown \"", name,
            "\"; valid: section_inference, symmetry, decomposition, "
            "failure_cache, restarts, warm_start"));
      }
      *it->second = false;
    }
  }
  return options;
}

std::string Summary(const Plan& plan) {
  const double naive_pct =
      plan.naive_total > 0 ? 100.0 * plan.peak / plan.naive_total : 100.0;
  const double ratio = plan.lower_bound > 0
                           ? static_cast<double>(plan.peak) / plan.lower_bound
                           : 1.0;
  return absl::StrFormat(
      "planner %s: peak %d bytes, %.2f%% of naive total %d, %.4fx lower bound "
      "%d, "
      "proven optimal: %s, %.1f ms",
      plan.planner, plan.peak, naive_pct, plan.naive_total, ratio,
      plan.lower_bound, plan.proven_optimal ? "yes" : "no",
      absl::ToDoubleMilliseconds(plan.wall_time));
}

absl::Status RunPlan(int argc, char** argv) {
  std::set<std::string> known = kBuildFlags;
  known.insert({"planner", "time-limit", "seed", "threads", "out", "graph-out",
                "node-limit", "exact-off"});
  absl::StatusOr<CommandLine> line = ParseCommandLine(argc, argv, 2, known);
  if (!line.ok()) return line.status();
  if (line->positional.size() != 1) {
    return absl::InvalidArgumentError("plan takes exactly one INPUT");
  }
  absl::StatusOr<LoadedInput> input = Load(*line, 0);
  if (!input.ok()) return input.status();
  PlanMemoryOptions options;
  options.planner = line->Get("planner");
  if (absl::Status s = ReadPlanOptions(*line, options.plan); !s.ok()) return s;
  absl::StatusOr<Plan> plan;
  ExactStats stats;
  const bool exact = options.planner == "exact";
  if (exact) {
    absl::StatusOr<ExactOptions> exact_options = ExactOptionsFrom(*line);
    if (!exact_options.ok()) return exact_options.status();
    plan = PlanMemory(input->problem, *MakeExactPlanner(*exact_options, &stats),
                      options.plan);
  } else if (line->Has("node-limit") || line->Has("exact-off")) {
    return absl::InvalidArgumentError(
        "--node-limit and --exact-off apply to --planner=exact");
  } else {
    plan = PlanMemory(input->problem, options);
  }
  if (!plan.ok()) return plan.status();
  const std::string out = line->Get("out");
  std::string text;
  const bool csv =
      out.size() >= 4 && (out.ends_with(".csv") || out.ends_with(".csv.gz"));
  text = csv ? BufferCsvText(input->problem, &*plan)
             : PlanToJson(input->problem, *plan);
  if (out.empty()) {
    std::cout << text;
  } else if (absl::Status s = WriteFile(out, text); !s.ok()) {
    return s;
  }
  if (line->Has("graph-out")) {  // the op order the plan's steps refer to
    if (!input->graph.has_value()) {
      return absl::InvalidArgumentError("--graph-out needs a graph INPUT");
    }
    absl::Status s =
        WriteFile(line->Get("graph-out"), GraphToJson(*input->graph));
    if (!s.ok()) return s;
  }
  std::cerr << Summary(*plan) << "\n";
  if (exact) {
    std::cerr << absl::StrFormat(
        "exact search: %d nodes, %d searches (%d under random orders), "
        "parts: %d\n",
        stats.nodes, stats.searches, stats.restarts, stats.parts);
  }
  return absl::OkStatus();
}

absl::Status RunVerify(int argc, char** argv) {
  absl::StatusOr<CommandLine> line =
      ParseCommandLine(argc, argv, 2, kBuildFlags);
  if (!line.ok()) return line.status();
  if (line->positional.size() != 2) {
    return absl::InvalidArgumentError("verify takes INPUT and PLAN");
  }
  absl::StatusOr<LoadedInput> input = Load(*line, 0);
  if (!input.ok()) return input.status();
  const std::string& path = line->positional[1];
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  Plan plan;
  const std::string plain =
      path.ends_with(".gz") ? path.substr(0, path.size() - 3) : path;
  if (plain.ends_with(".csv")) {
    absl::StatusOr<BufferCsv> csv = ParseBufferCsv(*text);
    if (!csv.ok()) return csv.status();
    if (!csv->plan.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " has no offset column"));
    }
    if (csv->problem.buffers.size() != input->problem.buffers.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, " places ", csv->problem.buffers.size(),
          " buffers, the input has ", input->problem.buffers.size()));
    }
    for (size_t b = 0; b < csv->problem.buffers.size(); ++b) {
      if (csv->problem.buffers[b].name != input->problem.buffers[b].name) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, " row ", b + 1, " is buffer \"", csv->problem.buffers[b].name,
            "\", the input's is \"", input->problem.buffers[b].name, "\""));
      }
    }
    plan = std::move(*csv->plan);
    ComputePlanStatistics(input->problem, plan);
  } else {
    absl::StatusOr<Plan> parsed = ParsePlanJson(*text, input->problem);
    if (!parsed.ok()) return parsed.status();
    plan = std::move(*parsed);
  }
  if (absl::Status s = VerifyPlan(input->problem, plan); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid plan: ", s.message()));
  }
  std::cout << absl::StrFormat(
      "valid plan: %d buffers, peak %d bytes, lower bound %d\n",
      plan.assignments.size(), plan.peak, LowerBound(input->problem));
  return absl::OkStatus();
}

absl::Status RunStats(int argc, char** argv) {
  absl::StatusOr<CommandLine> line =
      ParseCommandLine(argc, argv, 2, kBuildFlags);
  if (!line.ok()) return line.status();
  if (line->positional.size() != 1) {
    return absl::InvalidArgumentError("stats takes exactly one INPUT");
  }
  absl::StatusOr<LoadedInput> input = Load(*line, 0);
  if (!input.ok()) return input.status();
  if (input->graph.has_value()) {
    std::cout << "ops: " << input->graph->ops.size() << "\n"
              << "tensors: " << input->graph->tensors.size() << "\n";
  }
  std::cout << "planned buffers: " << input->problem.buffers.size() << "\n"
            << "naive total: " << NaiveTotal(input->problem) << "\n"
            << "lower bound: " << LowerBound(input->problem) << "\n";
  // memonger's statistics: baseline (naive total) and optimized bytes of the
  // shared-object planners.
  for (const char* planner : {"caffe2_greedy", "caffe2_dp"}) {
    PlanMemoryOptions options;
    options.planner = planner;
    absl::StatusOr<Plan> plan = PlanMemory(input->problem, options);
    if (!plan.ok()) {  // e.g. the objects exceed a capacity: still a statistic
      std::cout << "shared objects (" << planner
                << "): " << plan.status().message() << "\n";
      continue;
    }
    std::cout << absl::StrFormat(
        "shared objects (%s): %d objects, %d bytes (%.2f%% of naive total)\n",
        planner, plan->shared_objects, plan->peak,
        plan->naive_total > 0 ? 100.0 * plan->peak / plan->naive_total : 100.0);
  }
  return absl::OkStatus();
}

absl::Status RunPlanners() {
  for (const PlannerInfo& info : RegisteredPlanners()) {
    std::cout << absl::StrFormat("%-16s %s\n", info.name, info.description);
  }
  return absl::OkStatus();
}

// Every planner (or --planners) on every INPUT, one row per input x planner.
// A planner that fails is a row saying so; the exit status is 1 only when an
// input cannot be read or a plan fails verification.
absl::Status RunCompare(int argc, char** argv) {
  std::set<std::string> known = kBuildFlags;
  known.insert({"planners", "time-limit", "format", "seed", "threads"});
  absl::StatusOr<CommandLine> line = ParseCommandLine(argc, argv, 2, known);
  if (!line.ok()) return line.status();
  if (line->positional.empty()) {
    return absl::InvalidArgumentError("compare takes at least one INPUT");
  }
  // --format=a,b prints the tables one after the other (one run).
  std::vector<CompareFormat> formats;
  for (absl::string_view name :
       absl::StrSplit(line->Get("format", "table"), ',', absl::SkipEmpty())) {
    absl::StatusOr<CompareFormat> format =
        ParseCompareFormat(std::string(name));
    if (!format.ok()) return format.status();
    formats.push_back(*format);
  }
  if (formats.empty()) formats.push_back(CompareFormat::kTable);
  CompareOptions options;
  absl::StatusOr<BuildOptions> build = BuildOptionsFrom(*line);
  if (!build.ok()) return build.status();
  options.build = *build;
  if (line->Has("planners")) {
    options.planners =
        absl::StrSplit(line->Get("planners"), ',', absl::SkipEmpty());
  }
  options.plan.time_limit = absl::Seconds(5);
  if (absl::Status s = ReadPlanOptions(*line, options.plan); !s.ok()) return s;
  absl::StatusOr<std::vector<CompareRow>> rows =
      CompareInputs(line->positional, options);
  if (!rows.ok()) return rows.status();
  for (size_t i = 0; i < formats.size(); ++i) {
    std::cout << (i > 0 ? "\n" : "") << FormatComparison(*rows, formats[i]);
  }
  std::cout << std::flush;
  if (AnyUnverified(*rows)) {
    return absl::InternalError("a plan failed verification (see the table)");
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" ||
      std::string(argv[1]) == "help") {
    std::cerr << kUsage;
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  absl::Status status;
  if (command == "plan") {
    status = RunPlan(argc, argv);
  } else if (command == "verify") {
    status = RunVerify(argc, argv);
  } else if (command == "stats") {
    status = RunStats(argc, argv);
  } else if (command == "planners") {
    status = RunPlanners();
  } else if (command == "compare") {
    status = RunCompare(argc, argv);
  } else {
    std::cerr << "memplan: unknown command \"" << command << "\"\n" << kUsage;
    return 2;
  }
  if (!status.ok()) {
    std::cerr << "memplan " << command << ": " << status.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace memplan

int main(int argc, char** argv) { return memplan::Main(argc, argv); }

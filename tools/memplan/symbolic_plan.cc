#include "symbolic_plan.h"

#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "input.h"
#include "memplan/formats.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/verify.h"

ABSL_FLAG(int32_t, buckets, 4,
          "N: a graph with dims: at most N buckets (ranges of one dim, each "
          "with its own plan); 1 = one plan over the whole range");
ABSL_FLAG(std::vector<std::string>, at, {},
          "NAME=VALUE: a graph with dims: also print the lower bound and the "
          "peak with dim NAME at VALUE (the other dims at their maxima); "
          "repeatable. Unlike --dim it binds nothing");

namespace memplan::tool {
namespace {

// The planners of symbolic graphs: the greedy (the default, with buckets)
// and the upper-bound baseline.
constexpr absl::string_view kSymbolicGreedy = "symbolic_greedy";
constexpr absl::string_view kUpperBound = "upper_bound";

absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> AtFromFlags() {
  std::vector<std::pair<std::string, int64_t>> at;
  for (const std::string& binding : absl::GetFlag(FLAGS_at)) {
    std::vector<std::string> parts = absl::StrSplit(binding, '=');
    int64_t value = 0;
    if (parts.size() != 2 || parts[0].empty() ||
        !absl::SimpleAtoi(parts[1], &value) || value < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--at=", binding, ": expected NAME=VALUE with VALUE >= 0"));
    }
    at.emplace_back(parts[0], value);
  }
  return at;
}

std::string RangesText(const DimRanges& dims) {
  std::vector<std::string> parts;
  for (const auto& [name, range] : dims) {
    parts.push_back(absl::StrCat(name, " in [", range.min, ", ", range.max, "]"));
  }
  return absl::StrJoin(parts, ", ");
}

std::string ValuesText(const DimValues& values) {
  return absl::StrJoin(values, ", ", absl::PairFormatter("="));
}

// The rows of the summary's table: every dim at its minimum, at its maximum,
// then each --at value with the other dims at their maxima.
absl::StatusOr<std::vector<DimValues>> SummaryValues(const DimRanges& dims) {
  DimValues low, high;
  for (const auto& [name, range] : dims) {
    low[name] = range.min;
    high[name] = range.max;
  }
  std::vector<DimValues> rows = {low};
  if (high != low) rows.push_back(high);
  absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> at =
      AtFromFlags();
  if (!at.ok()) return at.status();
  for (const auto& [name, value] : *at) {
    DimValues row = high;
    row[name] = value;
    if (absl::Status s = CheckDimValues(dims, row); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--at=", name, "=", value, ": ", s.message()));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The summary: each bucket's peak as an expression, and a table of the lower
// bound of the graph bound at some values, the plan's peak there and their
// ratio.
absl::StatusOr<std::string> SymbolicSummary(const SymbolicGraphPlan& plan,
                                            const Graph& graph,
                                            const BuildOptions& build) {
  std::string out = absl::StrFormat(
      "planner %s: %d buffers, %s, %d bucket%s\n", plan.planner,
      plan.problem.buffers.size(), RangesText(plan.problem.dims),
      plan.buckets.size(), plan.buckets.size() == 1 ? "" : "s");
  for (const SymbolicBucket& b : plan.buckets) {
    absl::StrAppend(&out, "  ", RangesText(b.dims), ": peak ",
                    b.plan.peak.ToString(), "\n");
  }
  absl::StatusOr<std::vector<DimValues>> rows =
      SummaryValues(plan.problem.dims);
  if (!rows.ok()) return rows.status();
  absl::StrAppendFormat(&out, "  %-24s %14s %14s %8s\n", "at", "LB", "peak",
                        "peak/LB");
  for (const DimValues& values : *rows) {
    const SymbolicBucket* bucket = plan.Find(values);
    if (bucket == nullptr) {
      return absl::InternalError(
          absl::StrCat("no bucket holds ", ValuesText(values)));
    }
    absl::StatusOr<int64_t> peak = bucket->plan.peak.Evaluate(values);
    if (!peak.ok()) return peak.status();
    absl::StatusOr<Graph> bound = BindDims(graph, values);
    if (!bound.ok()) return bound.status();
    absl::StatusOr<Problem> problem = BuildProblem(*bound, build);
    if (!problem.ok()) return problem.status();
    const Bytes lb = LowerBound(*problem);
    absl::StrAppendFormat(
        &out, "  %-24s %14d %14d %8s\n", ValuesText(values), lb, *peak,
        lb > 0 ? absl::StrFormat("%.4f", static_cast<double>(*peak) / lb)
               : std::string("-"));
  }
  out.pop_back();  // the caller ends the line
  return out;
}

absl::StatusOr<SymbolicGraphPlan> PlanSymbolic(const Graph& graph,
                                               const BuildOptions& build) {
  if (absl::GetFlag(FLAGS_planner) == kUpperBound) {
    SymbolicGraphPlan plan;
    absl::StatusOr<SymbolicProblem> problem = BuildSymbolicProblem(graph, build);
    if (!problem.ok()) return problem.status();
    plan.problem = *std::move(problem);
    absl::StatusOr<SymbolicPlan> one = PlanSymbolicUpperBound(plan.problem);
    if (!one.ok()) return one.status();
    plan.planner = one->planner;
    plan.buckets.push_back({plan.problem.dims, *std::move(one)});
    return plan;
  }
  SymbolicPlanMemoryOptions options;
  options.build = build;
  options.max_buckets = absl::GetFlag(FLAGS_buckets);
  return PlanSymbolicMemory(graph, options);
}

// The build a symbolic plan file's graph is read with: the recorded one
// applied to the graph (checked against its contents), unless build flags
// are given or the plan records none.
absl::StatusOr<BuildOptions> BuildOfPlan(
    const Arguments& args, const PlanFile& file,
    const std::optional<PlanProvenance>& recorded,
    const std::string& input_path, const GraphInput& input,
    std::vector<std::string>* notes) {
  if (!recorded.has_value()) return BuildOptionsFromFlags();
  if (absl::Status s =
          CheckRecordedInput(file, *recorded, input_path, input.content_hash);
      !s.ok()) {
    return s;
  }
  if (AnyBuildFlagGiven(args)) return BuildOptionsFromFlags();
  absl::StatusOr<PlanBuild> build =
      ApplyRecordedBuild(*recorded, &input.graph, input.graph.pools);
  if (!build.ok()) return build.status();
  if (!build->reorder.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.path, " records op ordering \"", build->reorder,
                     "\"; a symbolic plan is of the graph's own order"));
  }
  notes->push_back("with the flags the plan records");
  for (const std::string& note : build->notes) notes->push_back(note);
  return build->build;
}

std::string Said(const std::vector<std::string>& notes) {
  return notes.empty() ? "" : absl::StrCat(" (", absl::StrJoin(notes, "; "), ")");
}

}  // namespace

const std::vector<std::string>& SymbolicPlanFlags() {
  static const auto* const kFlags = new std::vector<std::string>{"buckets", "at"};
  return *kFlags;
}

bool IsSymbolicPlanner(absl::string_view planner) {
  return planner == kSymbolicGreedy || planner == kUpperBound;
}

absl::Status CheckSymbolicPlanFlags() {
  if (absl::GetFlag(FLAGS_buckets) < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--buckets=", absl::GetFlag(FLAGS_buckets), ": at least 1"));
  }
  return AtFromFlags().status();
}

absl::Status CheckNoSymbolicFlags(const Arguments& args) {
  for (const std::string& flag : SymbolicPlanFlags()) {
    if (args.Given(flag)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " applies to a graph with dims that --dim "
                                   "leaves unbound; INPUT has none"));
    }
  }
  if (IsSymbolicPlanner(absl::GetFlag(FLAGS_planner))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--planner=", absl::GetFlag(FLAGS_planner),
        " plans graphs with dims only; INPUT has none left unbound"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<GraphInput>> ReadSymbolicInput(
    const std::string& path, Graph* bound) {
  if (!UncompressedName(path).ends_with(".json")) return std::nullopt;
  // A file that cannot be read or parsed: the ordinary reading's error holds.
  absl::StatusOr<std::string> bytes = ReadFile(path, ReadOptionsFromFlags());
  if (!bytes.ok()) return std::nullopt;
  GraphInput input;
  input.content_hash = ContentHash(*bytes);
  absl::StatusOr<Graph> graph = ParseGraphJson(*bytes);
  if (!graph.ok()) return std::nullopt;
  absl::StatusOr<std::map<std::string, int64_t>> dims = DimsFromFlags();
  if (!dims.ok()) return dims.status();
  absl::StatusOr<Graph> with_values = BindDims(*graph, *dims);
  if (!with_values.ok() || !IsSymbolic(*with_values)) return std::nullopt;
  input.graph = *std::move(graph);
  *bound = *std::move(with_values);
  return input;
}

absl::Status RunSymbolicPlan(const Arguments& args, const GraphInput& input,
                             const Graph& bound) {
  const std::string planner = absl::GetFlag(FLAGS_planner);
  if (!planner.empty() && !IsSymbolicPlanner(planner)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--planner=", planner, " plans graphs at one value of their dims; \"",
        bound.name, "\" has dims ", RangesText(bound.dims),
        ": plan it with ", kSymbolicGreedy, " (the default) or ", kUpperBound,
        ", or bind its dims with --dim"));
  }
  if (args.Given("reorder")) {
    return absl::InvalidArgumentError(
        "--reorder: a graph with dims is planned in its own op order");
  }
  if (args.Given("option")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--option: ", kSymbolicGreedy, " and ", kUpperBound,
        " take no options"));
  }
  if (args.Given("format") && absl::GetFlag(FLAGS_format) != "json") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--format=", absl::GetFlag(FLAGS_format),
        ": a plan of a graph with dims is written as json"));
  }
  const std::string out = absl::GetFlag(FLAGS_out);
  if (!out.empty() && !UncompressedName(out).ends_with(".json")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--out=", out, ": a plan of a graph with dims is written as .json"));
  }
  const BuildOptions build = BuildOptionsFromFlags();
  absl::StatusOr<SymbolicGraphPlan> plan = PlanSymbolic(bound, build);
  if (!plan.ok()) return plan.status();
  if (absl::Status s = VerifySymbolicGraphPlan(*plan); !s.ok()) {
    return absl::InternalError(
        absl::StrCat("the symbolic plan does not verify: ", s.message()));
  }
  PlanJsonOptions json;
  json.provenance = PlanProvenance{.input = args.positional[0],
                                   .input_hash = input.content_hash,
                                   .build = build,
                                   .reorder = ""};
  const std::string text = SymbolicPlanToJson(*plan, json);
  if (out.empty()) {
    std::cout << text;
  } else if (absl::Status s = WriteFile(out, text); !s.ok()) {
    return s;
  }
  if (const std::string graph_out = absl::GetFlag(FLAGS_graph_out);
      !graph_out.empty()) {
    if (absl::Status s = WriteFile(graph_out, GraphToJson(bound)); !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<std::string> summary = SymbolicSummary(*plan, bound, build);
  if (!summary.ok()) return summary.status();
  std::cerr << *summary << "\n";
  return absl::OkStatus();
}

absl::Status VerifySymbolicPlanFile(
    const Arguments& args, const PlanFile& file,
    const std::optional<PlanProvenance>& recorded,
    const std::string& input_path, const GraphInput& input,
    const Graph& bound) {
  const absl::Status ordinary = absl::InvalidArgumentError(absl::StrCat(
      file.path, " is a plan at one value of the dims; ", input_path,
      " has dims ", RangesText(bound.dims),
      ": check the plan there with --dim ", bound.dims.begin()->first, "=N"));
  if (file.csv) return ordinary;
  std::vector<std::string> notes;
  absl::StatusOr<BuildOptions> build =
      BuildOfPlan(args, file, recorded, input_path, input, &notes);
  if (!build.ok()) return build.status();
  absl::StatusOr<SymbolicProblem> rebuilt = BuildSymbolicProblem(bound, *build);
  if (!rebuilt.ok()) return rebuilt.status();
  absl::StatusOr<SymbolicGraphPlan> plan =
      ParseSymbolicPlanJson(file.text, *rebuilt);
  if (!plan.ok()) {
    // Parsed again only on failure: an ordinary plan gets its own answer.
    if (!IsSymbolicPlanJson(file.text)) return ordinary;
    return absl::InvalidArgumentError(
        absl::StrCat(file.path, ": ", plan.status().message()));
  }
  if (absl::Status s = VerifySymbolicGraphPlan(*plan); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid plan: ", s.message()));
  }
  std::cout << absl::StrFormat(
      "valid plan of %s%s over %s: %d buffers, %d bucket%s\n", input_path,
      Said(notes), RangesText(plan->problem.dims), plan->problem.buffers.size(),
      plan->buckets.size(), plan->buckets.size() == 1 ? "" : "s");
  for (const SymbolicBucket& b : plan->buckets) {
    std::cout << "  " << RangesText(b.dims) << ": peak "
              << b.plan.peak.ToString() << "\n";
  }
  return absl::OkStatus();
}

absl::Status VerifySymbolicPlanAt(const PlanFile& file,
                                  const std::string& input_path,
                                  const PlanInput& input) {
  absl::StatusOr<std::string> bytes = ReadFile(input_path, ReadOptionsFromFlags());
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Graph> graph = ParseGraphJson(*bytes);
  if (!graph.ok()) return graph.status();
  if (!IsSymbolic(*graph)) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path, " is a plan over dims, and ", input_path, " has none"));
  }
  absl::StatusOr<std::map<std::string, int64_t>> values = DimsFromFlags();
  if (!values.ok()) return values.status();
  const Problem& problem = input.input.problem;
  absl::StatusOr<SymbolicProblem> rebuilt =
      BuildSymbolicProblem(*graph, input.build.build);
  if (!rebuilt.ok()) return rebuilt.status();
  absl::StatusOr<SymbolicGraphPlan> symbolic =
      ParseSymbolicPlanJson(file.text, *rebuilt);
  if (!symbolic.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.path, ": ", symbolic.status().message()));
  }
  const SymbolicBucket* bucket = symbolic->Find(*values);
  if (bucket == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid plan: no bucket holds ", ValuesText(*values)));
  }
  // The bucket's offsets at the values, placed on the graph bound there.
  std::map<std::string, size_t> by_name;
  for (size_t b = 0; b < rebuilt->buffers.size(); ++b) {
    by_name.emplace(rebuilt->buffers[b].name, b);
  }
  Plan plan;
  plan.planner = symbolic->planner;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    auto it = by_name.find(problem.buffers[b].name);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid plan: buffer \"", problem.buffers[b].name, "\" of ",
          input_path, " at ", ValuesText(*values), " is not in the plan"));
    }
    absl::StatusOr<int64_t> offset =
        bucket->plan.offsets[it->second].Evaluate(*values);
    if (!offset.ok()) return offset.status();
    plan.assignments.push_back({.buffer = b, .pool = 0, .offset = *offset});
  }
  ComputePlanStatistics(problem, plan);
  if (absl::Status s = VerifyPlan(problem, plan); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid plan at ", ValuesText(*values), ": ", s.message()));
  }
  absl::StatusOr<int64_t> peak = bucket->plan.peak.Evaluate(*values);
  if (!peak.ok()) return peak.status();
  if (*peak < plan.peak) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid plan at ", ValuesText(*values), ": its peak ",
        bucket->plan.peak.ToString(), " is ", *peak, " there, below the ",
        plan.peak, " bytes its buffers reach"));
  }
  std::vector<std::string> said;
  if (input.build.recorded) said.push_back("with the flags the plan records");
  for (const std::string& note : input.build.notes) said.push_back(note);
  std::cout << absl::StrFormat(
      "valid plan of %s%s at %s: %d buffers, used %d bytes, peak %d bytes "
      "(%s), lower bound %d\n",
      input_path, Said(said), ValuesText(*values), plan.assignments.size(),
      plan.peak, *peak, bucket->plan.peak.ToString(), LowerBound(problem));
  return absl::OkStatus();
}

}  // namespace memplan::tool

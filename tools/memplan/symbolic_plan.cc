#include "symbolic_plan.h"

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
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
#include "commands.h"
#include "input.h"
#include "memplan/emit.h"
#include "memplan/formats.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_memplan.h"
#include "memplan/symbolic_planner.h"
#include "memplan/symbolic_verify.h"
#include "memplan/verify.h"
#include "progress.h"
#include "symbolic_input.h"

ABSL_FLAG(int32_t, buckets, 4,
          "N: a graph with dims: at most N buckets (ranges of one dim, each "
          "with its own plan); 1 = one plan over the whole range");

namespace memplan::tool {
namespace {

// The symbolic planners' names as a sentence: "symbolic_search (the
// default), symbolic_greedy or upper_bound".
std::string SymbolicPlannerNames() {
  std::string names;
  const std::vector<SymbolicPlannerInfo> infos = RegisteredSymbolicPlanners();
  for (size_t i = 0; i < infos.size(); ++i) {
    if (i > 0) names += i + 1 == infos.size() ? " or " : ", ";
    names += infos[i].name;
    if (infos[i].name == DefaultSymbolicPlannerName()) {
      names += " (the default)";
    }
  }
  return names;
}

// A bucket's ranges, and the steps its expressions count dims in.
std::string BucketText(const SymbolicBucket& b) {
  return RangesText(b.dims) + StepsText(b.steps);
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
    absl::StrAppend(&out, "  ", BucketText(b), ": peak ",
                    b.plan.peak.ToString(), "\n");
  }
  absl::StatusOr<std::vector<DimValues>> rows =
      EvaluationPoints(plan.problem.dims);
  if (!rows.ok()) return rows.status();
  absl::StrAppendFormat(&out, "  %-24s %14s %14s %8s\n", "at", "LB", "peak",
                        "peak/LB");
  for (const DimValues& values : *rows) {
    const SymbolicBucket* bucket = plan.Find(values);
    if (bucket == nullptr) {
      return absl::InternalError(
          absl::StrCat("no bucket holds ", ValuesText(values)));
    }
    absl::StatusOr<int64_t> peak = bucket->PeakAt(values);
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

// The symbolic plan of --planner (the registry's default when none) with
// its --option values, within --time-limit and --work-limit.
absl::StatusOr<SymbolicGraphPlan> PlanSymbolic(const Arguments& args,
                                               const Graph& graph,
                                               const BuildOptions& build) {
  SymbolicPlanMemoryOptions options;
  options.build = build;
  options.max_buckets = absl::GetFlag(FLAGS_buckets);
  options.planner = absl::GetFlag(FLAGS_planner);
  if (options.planner.empty()) options.planner = DefaultSymbolicPlannerName();
  absl::StatusOr<PlannerOptions> planner_options = PlannerOptionsFromFlags();
  if (!planner_options.ok()) return planner_options.status();
  options.planner_options = *std::move(planner_options);
  const PlanOptions limits = PlanOptionsFromFlags(args);
  options.search.work_limit = limits.work_limit;
  options.search.time_limit = limits.time_limit;
  const absl::Time start = absl::Now();
  ProgressLines progress(ProgressWanted(args), 0, options.planner);
  options.progress = progress.StageCallback();
  absl::StatusOr<SymbolicGraphPlan> plan = PlanSymbolicMemory(graph, options);
  progress.Finish(SymbolicStopReason(plan.ok(), limits, absl::Now() - start));
  return plan;
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
  return notes.empty() ? ""
                       : absl::StrCat(" (", absl::StrJoin(notes, "; "), ")");
}

}  // namespace

const std::vector<std::string>& SymbolicPlanFlags() {
  static const auto* const kFlags =
      new std::vector<std::string>{"buckets", "at"};
  return *kFlags;
}

bool IsSymbolicPlanner(absl::string_view planner) {
  for (const SymbolicPlannerInfo& info : RegisteredSymbolicPlanners()) {
    if (info.name == std::string_view(planner.data(), planner.size())) {
      return true;
    }
  }
  return false;
}

absl::Status CheckSymbolicPlanFlags() {
  if (absl::GetFlag(FLAGS_buckets) < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--buckets=", absl::GetFlag(FLAGS_buckets), ": at least 1"));
  }
  return absl::OkStatus();
}

absl::Status CheckNoSymbolicFlags(const Arguments& args) {
  for (const std::string& flag : SymbolicPlanFlags()) {
    if (args.Given(flag)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag,
                       " applies to a graph with dims that --dim "
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
  absl::StatusOr<std::optional<SymbolicToolInput>> loaded =
      LoadSymbolicInput(path, /*bind_values=*/true);
  if (!loaded.ok()) return loaded.status();
  if (!loaded->has_value()) return std::nullopt;
  GraphInput input;
  input.graph = (*loaded)->graph;
  input.content_hash = std::move((*loaded)->content_hash);
  *bound = std::move((*loaded)->graph);
  return input;
}

absl::Status RunSymbolicPlan(const Arguments& args, const GraphInput& input,
                             const Graph& bound) {
  const std::string planner = absl::GetFlag(FLAGS_planner);
  if (!planner.empty() && !IsSymbolicPlanner(planner)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--planner=", planner, " plans graphs at one value of their dims; \"",
        bound.name, "\" has dims ", RangesText(bound.dims), ": plan it with ",
        SymbolicPlannerNames(), ", or bind its dims with --dim"));
  }
  if (args.Given("reorder")) {
    return absl::InvalidArgumentError(
        "--reorder: a graph with dims is planned in its own op order");
  }
  // The planner's own options, checked by the registry as it builds it.
  absl::StatusOr<PlannerOptions> given = PlannerOptionsFromFlags();
  if (!given.ok()) return given.status();
  if (absl::StatusOr<std::unique_ptr<SymbolicPlanner>> built =
          CreateSymbolicPlanner(
              planner.empty() ? DefaultSymbolicPlannerName() : planner, *given);
      !built.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--option: ", built.status().message()));
  }
  // JSON (the plan file) or a C header of macros of the dims.
  const std::string out = absl::GetFlag(FLAGS_out);
  bool header = false;
  if (args.Given("format")) {
    const std::string format = absl::GetFlag(FLAGS_format);
    if (format != "json" && format != "c-header") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--format=", format,
          ": a plan of a graph with dims is written as json or c-header"));
    }
    header = format == "c-header";
  } else if (!out.empty() && !IsWritableStream(out)) {
    const std::string_view plain = UncompressedName(out);
    header = plain.ends_with(".h");
    if (!header && !plain.ends_with(".json")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--out=", out,
          ": a plan of a graph with dims is written as .json or .h"));
    }
  }
  const BuildOptions build = BuildOptionsFromFlags();
  absl::StatusOr<SymbolicGraphPlan> plan = PlanSymbolic(args, bound, build);
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
  const std::string text =
      header
          ? SymbolicPlanToCHeader(
                *plan, bound,
                std::filesystem::path(args.positional[0]).filename().string())
          : SymbolicPlanToJson(*plan, json);
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
    std::cout << "  " << BucketText(b) << ": peak " << b.plan.peak.ToString()
              << "\n";
  }
  return absl::OkStatus();
}

namespace {

// The bucket's offsets at `values`, placed on `problem` (the graph bound
// there), with the plan's statistics; an error names a buffer the plan
// lacks.
absl::StatusOr<Plan> BucketPlanAt(const SymbolicProblem& rebuilt,
                                  const SymbolicBucket& bucket,
                                  const Problem& problem,
                                  const DimValues& values,
                                  const std::string& input_path) {
  // The bucket's offsets at the values, placed on the graph bound there.
  std::map<std::string, size_t> by_name;
  for (size_t b = 0; b < rebuilt.buffers.size(); ++b) {
    by_name.emplace(rebuilt.buffers[b].name, b);
  }
  Plan plan;
  const DimValues taken = StepValues(values, bucket.steps);
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    auto it = by_name.find(problem.buffers[b].name);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid plan: buffer \"", problem.buffers[b].name, "\" of ",
          input_path, " at ", ValuesText(values), " is not in the plan"));
    }
    absl::StatusOr<int64_t> offset =
        bucket.plan.offsets[it->second].Evaluate(taken);
    if (!offset.ok()) return offset.status();
    plan.assignments.push_back({.buffer = b, .pool = 0, .offset = *offset});
  }
  ComputePlanStatistics(problem, plan);
  return plan;
}

}  // namespace

absl::Status VerifySymbolicPlanAt(const PlanFile& file,
                                  const std::string& input_path,
                                  const PlanInput& input) {
  ReadOptions read = ReadOptionsFromFlags();
  read.text = true;  // a graph JSON
  absl::StatusOr<std::string> bytes = ReadFile(input_path, read);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Graph> graph = ParseGraphJson(*bytes);
  if (!graph.ok()) return graph.status();
  if (!IsSymbolic(*graph)) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path, " is a plan over dims, and ", input_path, " has none"));
  }
  absl::StatusOr<DimArguments> dims = DimsFromFlags();
  if (!dims.ok()) return dims.status();
  const DimValues* values = &dims->values;
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
  // Exactly one bucket must hold each value before one is looked up: with
  // overlapping buckets the first listed would otherwise be taken unseen.
  if (absl::Status s = VerifyBucketStructure(*symbolic); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid plan: ", s.message()));
  }
  const SymbolicBucket* bucket = symbolic->Find(*values);
  if (bucket == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid plan: no bucket holds ", ValuesText(*values)));
  }
  absl::StatusOr<Plan> at =
      BucketPlanAt(*rebuilt, *bucket, problem, *values, input_path);
  if (!at.ok()) return at.status();
  Plan& plan = *at;
  plan.planner = symbolic->planner;
  if (absl::Status s = VerifyPlan(problem, plan); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid plan at ", ValuesText(*values), ": ", s.message()));
  }
  absl::StatusOr<int64_t> peak = bucket->PeakAt(*values);
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
      plan.peak, *peak, bucket->plan.peak.ToString() + StepsText(bucket->steps),
      LowerBound(problem));
  return absl::OkStatus();
}

}  // namespace memplan::tool

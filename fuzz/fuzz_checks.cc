#include "fuzz_checks.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "memplan/io.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/reorder.h"
#include "memplan/report.h"
#include "memplan/report_html.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_verify.h"
#include "memplan/types.h"
#include "memplan/verify.h"
#include "symbolic_graphs.h"
#ifdef MEMPLAN_HAVE_ONNX
#include "memplan/onnx.h"
#endif
#ifdef MEMPLAN_HAVE_TFLITE
#include "memplan/tflite.h"
#endif

namespace memplan::fuzz {
namespace {

absl::Status Broken(absl::string_view what, const absl::Status& status) {
  return absl::InternalError(absl::StrCat(what, ": ", status.ToString()));
}

// An error caused by the input must say what is wrong and must not be an
// internal one.
absl::Status CheckError(absl::string_view reader, const absl::Status& status) {
  if (status.ok()) return absl::OkStatus();
  if (status.message().empty()) {
    return absl::InternalError(
        absl::StrCat(reader, " failed without a message"));
  }
  if (status.code() == absl::StatusCode::kInternal)
    return Broken(reader, status);
  return absl::OkStatus();
}

// A small graph that takes every path of the plan reader: two pools, a view
// and an in-place pair merged into one buffer (named by either tensor), a
// fixed tensor, per-tensor alignment and a scratch tensor.
constexpr std::string_view kPlanGraph = R"({"format": "memplan-graph-v1",
 "name": "fuzz_plan",
 "pools": [{"name": "sram", "capacity": 4096, "alignment": 16},
           {"name": "dram", "capacity": 0, "alignment": 64}],
 "tensors": [
  {"name": "in", "size": 256, "kind": "input"},
  {"name": "a", "size": 512, "alignment": 128},
  {"name": "view", "size": 512},
  {"name": "b", "size": 300, "pools": ["dram"]},
  {"name": "ws", "size": 64, "kind": "scratch"},
  {"name": "fixed", "size": 128, "fixed": {"pool": "sram", "offset": 3072}},
  {"name": "out", "size": 300, "kind": "output"}],
 "ops": [
  {"name": "f", "type": "Conv", "inputs": ["in"], "outputs": ["a"], "scratch": ["ws"]},
  {"name": "v", "type": "Reshape", "inputs": ["a"], "outputs": ["view"], "alias": [[0, 0]]},
  {"name": "g", "type": "Relu", "inputs": ["view"], "outputs": ["b", "fixed"]},
  {"name": "h", "type": "Add", "inputs": ["b", "fixed"], "outputs": ["out"], "inplace": [[0, 0]]}]})";

struct PlanProblems {
  std::vector<Problem> problems;
  absl::Status status;
};

const PlanProblems& PlanReaderProblems() {
  static const PlanProblems* problems = [] {
    auto* out = new PlanProblems;
    absl::StatusOr<std::string> seed = ReadFile(
        std::string(MEMPLAN_FUZZ_DATA_DIR) + "/seed/seed000_model.json");
    if (!seed.ok()) {
      out->status = seed.status();
      return out;
    }
    for (const auto& [text, options] :
         {std::pair<std::string_view, BuildOptions>{
              *seed, {.plan_constants = true, .alignment = 4}},
          {kPlanGraph, {}}}) {
      absl::StatusOr<Graph> graph = ParseGraphJson(text);
      if (!graph.ok()) {
        out->status = graph.status();
        return out;
      }
      absl::StatusOr<Problem> problem = BuildProblem(*graph, options);
      if (!problem.ok()) {
        out->status = problem.status();
        return out;
      }
      out->problems.push_back(*std::move(problem));
    }
    return out;
  }();
  return *problems;
}

// The symbolic problem of the symbolic plan reader: the tests' attention
// graph (sizes linear and quadratic in one dim, a constant one), alignment
// 64.
const absl::StatusOr<SymbolicProblem>& SymbolicReaderProblem() {
  static const auto* const problem = new absl::StatusOr<SymbolicProblem>(
      []() -> absl::StatusOr<SymbolicProblem> {
        absl::StatusOr<Graph> graph =
            ParseGraphJson(::memplan::testing::kAttention);
        if (!graph.ok()) return graph.status();
        return BuildSymbolicProblem(*graph, {.alignment = 64});
      }());
  return *problem;
}

// The symbolic plan reader on `input`: its errors name what is wrong, a plan
// the verifier proves writes and reads back the same.
absl::Status CheckSymbolicPlanJson(std::string_view input) {
  const absl::StatusOr<SymbolicProblem>& problem = SymbolicReaderProblem();
  if (!problem.ok())
    return Broken("the fixed symbolic problem", problem.status());
  absl::StatusOr<SymbolicGraphPlan> plan =
      ParseSymbolicPlanJson(input, *problem);
  if (!plan.ok()) return CheckError("ParseSymbolicPlanJson", plan.status());
  absl::Status verified = VerifySymbolicGraphPlan(*plan);
  if (!verified.ok()) return CheckError("VerifySymbolicGraphPlan", verified);
  absl::StatusOr<SymbolicGraphPlan> again =
      ParseSymbolicPlanJson(SymbolicPlanToJson(*plan), *problem);
  if (!again.ok()) {
    return Broken("a valid symbolic plan does not read back", again.status());
  }
  if (!(*again == *plan)) {
    return absl::InternalError("a valid symbolic plan reads back different");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckGraphJson(std::string_view input) {
  absl::StatusOr<Graph> graph = ParseGraphJson(input);
  if (!graph.ok()) return CheckError("ParseGraphJson", graph.status());
  absl::StatusOr<Graph> again = ParseGraphJson(GraphToJson(*graph));
  if (!again.ok())
    return Broken("a graph read does not read back", again.status());
  if (!(*again == *graph)) {
    return absl::InternalError("a graph read reads back different");
  }
  for (const BuildOptions& options :
       {BuildOptions{}, BuildOptions{.plan_constants = true, .alignment = 8}}) {
    absl::StatusOr<Problem> problem = BuildProblem(*graph, options);
    if (!problem.ok()) {
      absl::Status error = CheckError("BuildProblem", problem.status());
      if (!error.ok()) return error;
      continue;
    }
    absl::Status valid = ValidateProblem(*problem);
    if (!valid.ok())
      return Broken("BuildProblem built an invalid problem", valid);
    // The bound over op orders (its cuts included) is at most the bound of
    // the graph's own order, which is one of those orders.
    absl::StatusOr<std::optional<OrderLowerBound>> any_order =
        LowerBoundOverOrders(*graph, options, {.work_limit = 40'000});
    if (!any_order.ok()) {
      return Broken("LowerBoundOverOrders refused a graph BuildProblem took",
                    any_order.status());
    }
    if (any_order->has_value() &&
        ((*any_order)->bytes < 0 ||
         (*any_order)->bytes > LowerBound(*problem))) {
      return absl::InternalError(
          "the bound over op orders is above the graph's own order's");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBufferCsv(std::string_view input) {
  absl::StatusOr<BufferCsv> csv = ParseBufferCsv(input);
  if (!csv.ok()) return CheckError("ParseBufferCsv", csv.status());
  absl::Status valid = ValidateProblem(csv->problem);
  if (!valid.ok())
    return Broken("ParseBufferCsv read an invalid problem", valid);
  const Plan* plan = csv->plan ? &*csv->plan : nullptr;
  if (plan != nullptr) {
    absl::Status error =
        CheckError("VerifyPlan", VerifyPlan(csv->problem, *plan));
    if (!error.ok()) return error;
  }
  absl::StatusOr<BufferCsv> again =
      ParseBufferCsv(BufferCsvText(csv->problem, plan));
  if (!again.ok())
    return Broken("a CSV read does not read back", again.status());
  if (!(again->problem.buffers == csv->problem.buffers)) {
    return absl::InternalError("a CSV read reads back different buffers");
  }
  if (plan != nullptr &&
      (!again->plan || again->plan->assignments != plan->assignments)) {
    return absl::InternalError("a CSV read reads back different offsets");
  }
  return absl::OkStatus();
}

absl::Status CheckPlanJson(std::string_view input) {
  if (absl::Status symbolic = CheckSymbolicPlanJson(input); !symbolic.ok()) {
    return symbolic;
  }
  const PlanProblems& fixed = PlanReaderProblems();
  if (!fixed.status.ok()) return Broken("the fixed problems", fixed.status);
  for (const Problem& problem : fixed.problems) {
    absl::StatusOr<Plan> plan = ParsePlanJson(input, problem);
    if (!plan.ok()) {
      absl::Status error = CheckError("ParsePlanJson", plan.status());
      if (!error.ok()) return error;
      continue;
    }
    absl::Status verified = VerifyPlan(problem, *plan);
    if (!verified.ok()) {
      absl::Status error = CheckError("VerifyPlan", verified);
      if (!error.ok()) return error;
      continue;
    }
    absl::StatusOr<Plan> again =
        ParsePlanJson(PlanToJson(problem, *plan), problem);
    if (!again.ok())
      return Broken("a valid plan does not read back", again.status());
    if (again->assignments != plan->assignments) {
      return absl::InternalError(
          "a valid plan reads back different assignments");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPlanGreedy(std::string_view input) {
  const size_t first = input.find_first_not_of(" \t\r\n");
  Problem problem;
  if (first != std::string_view::npos && input[first] == '{') {
    absl::StatusOr<Graph> graph = ParseGraphJson(input);
    if (!graph.ok()) return CheckError("ParseGraphJson", graph.status());
    absl::StatusOr<Problem> built =
        BuildProblem(*graph, {.plan_constants = true});
    if (!built.ok()) return CheckError("BuildProblem", built.status());
    problem = *std::move(built);
  } else {
    absl::StatusOr<BufferCsv> csv = ParseBufferCsv(input);
    if (!csv.ok()) return CheckError("ParseBufferCsv", csv.status());
    problem = std::move(csv->problem);
  }
  absl::StatusOr<std::unique_ptr<Planner>> planner =
      CreatePlanner("greedy_by_size");
  if (!planner.ok()) return Broken("greedy_by_size", planner.status());
  absl::StatusOr<Plan> plan = (*planner)->Solve(problem, PlanOptions{});
  if (!plan.ok()) return CheckError("greedy_by_size", plan.status());
  absl::Status verified = VerifyPlan(problem, *plan);
  if (!verified.ok()) {
    return Broken("greedy_by_size returned a plan the verifier rejects",
                  verified);
  }
  if (plan->peak < plan->lower_bound) {
    return absl::InternalError(absl::StrCat(
        "peak ", plan->peak, " below the lower bound ", plan->lower_bound));
  }
  return absl::OkStatus();
}

absl::Status CheckReport(std::string_view input) {
  const size_t first = input.find_first_not_of(" \t\r\n");
  Problem problem;
  std::optional<Graph> graph;
  std::optional<Plan> plan;
  if (first != std::string_view::npos && input[first] == '{') {
    absl::StatusOr<Graph> parsed = ParseGraphJson(input);
    if (!parsed.ok()) return CheckError("ParseGraphJson", parsed.status());
    absl::StatusOr<Problem> built = BuildProblem(*parsed, {});
    if (!built.ok()) return CheckError("BuildProblem", built.status());
    graph = *std::move(parsed);
    problem = *std::move(built);
  } else {
    absl::StatusOr<BufferCsv> csv = ParseBufferCsv(input);
    if (!csv.ok()) return CheckError("ParseBufferCsv", csv.status());
    problem = std::move(csv->problem);
    if (csv->plan.has_value()) {
      plan = *std::move(csv->plan);
      absl::Status verified = VerifyPlan(problem, *plan);
      if (!verified.ok()) {
        if (AnalyzePlan(problem, *plan).ok()) {
          return Broken("AnalyzePlan accepted a plan the verifier rejects",
                        verified);
        }
        return CheckError("VerifyPlan", verified);
      }
      ComputePlanStatistics(problem, *plan);
    }
  }
  if (!plan.has_value()) {
    absl::StatusOr<std::unique_ptr<Planner>> planner =
        CreatePlanner("greedy_by_size");
    if (!planner.ok()) return Broken("greedy_by_size", planner.status());
    absl::StatusOr<Plan> solved = (*planner)->Solve(problem, PlanOptions{});
    if (!solved.ok()) return CheckError("greedy_by_size", solved.status());
    plan = *std::move(solved);
  }
  absl::StatusOr<PlanReport> report =
      AnalyzePlan(problem, *plan, graph.has_value() ? &*graph : nullptr);
  if (!report.ok()) return CheckError("AnalyzePlan", report.status());
  for (const TextReportOptions& options :
       {TextReportOptions{}, TextReportOptions{.width = 20,
                             .max_table_rows = 3,
                             .max_chart_rows = 2,
                             .max_peak_tensors = 1}}) {
    if (FormatTextReport(*report, options).empty()) {
      return absl::InternalError("an empty text report");
    }
  }
  HtmlReportInput html{.title = "fuzz", .plans = {*std::move(report)}};
  html.failures.push_back({.planner = "naive", .message = "<none>"});
  if (RenderHtmlReport(html).empty()) {
    return absl::InternalError("an empty HTML report");
  }
  return absl::OkStatus();
}

absl::Status CheckOnnx(std::string_view input) {
#ifdef MEMPLAN_HAVE_ONNX
  for (const OnnxViews views : {OnnxViews::kAlias, OnnxViews::kCopy}) {
    OnnxImportOptions options;
    options.views = views;
    options.inplace = views == OnnxViews::kAlias;
    options.dims = {{"batch", 2}, {"seq", 3}};
    absl::StatusOr<Graph> graph = ImportOnnxFromBytes(input, options);
    if (!graph.ok()) return CheckError("ImportOnnxFromBytes", graph.status());
    absl::StatusOr<Problem> problem = BuildProblem(*graph, {});
    if (!problem.ok()) return CheckError("BuildProblem", problem.status());
    absl::Status valid = ValidateProblem(*problem);
    if (!valid.ok()) return Broken("an imported graph built invalid", valid);
  }
#else
  (void)input;
#endif
  return absl::OkStatus();
}

#ifdef MEMPLAN_HAVE_TFLITE
namespace {

// A model read: planned, written with its plan, read back the same.
absl::Status CheckTfliteRoundTrip(const TfliteModel& model) {
  absl::StatusOr<Problem> problem = BuildProblem(model.graph, {});
  if (!problem.ok())
    return Broken("a model read builds no problem", problem.status());
  absl::StatusOr<std::unique_ptr<Planner>> planner =
      CreatePlanner("greedy_by_size");
  if (!planner.ok()) return Broken("greedy_by_size", planner.status());
  absl::StatusOr<Plan> plan = (*planner)->Solve(*problem, PlanOptions{});
  if (!plan.ok()) return CheckError("greedy_by_size", plan.status());
  absl::StatusOr<std::vector<int32_t>> offsets =
      TfliteOfflineOffsets(model, *problem, *plan);
  if (!offsets.ok())
    return CheckError("TfliteOfflineOffsets", offsets.status());
  absl::StatusOr<std::string> written = WriteTflitePlan(model, *offsets);
  if (!written.ok()) return CheckError("WriteTflitePlan", written.status());
  absl::StatusOr<TfliteModel> again =
      ReadTfliteModelFromBytes(*written, "written");
  if (!again.ok())
    return Broken("the written model reads no more", again.status());
  if (again->graph != model.graph || again->offline_plan != *offsets) {
    return absl::InternalError("the written model reads back otherwise");
  }
  absl::StatusOr<TflitePlanCheck> check = TfliteRecordedPlan(*again);
  if (!check.ok()) return Broken("TfliteRecordedPlan", check.status());
  const absl::Status verified = VerifyPlan(check->problem, check->plan);
  if (!verified.ok()) return Broken("the written offline plan", verified);
  return absl::OkStatus();
}

}  // namespace
#endif

absl::Status CheckTflite(std::string_view input) {
#ifdef MEMPLAN_HAVE_TFLITE
  absl::StatusOr<TfliteModel> model =
      ReadTfliteModelFromBytes(std::string(input), "fuzz.tflite");
  if (!model.ok())
    return CheckError("ReadTfliteModelFromBytes", model.status());
  // An offline plan already in the model: checked, never trusted.
  if (absl::StatusOr<TflitePlanCheck> recorded = TfliteRecordedPlan(*model);
      recorded.ok()) {
    const absl::Status verified = VerifyPlan(recorded->problem, recorded->plan);
    if (absl::Status s = CheckError("VerifyPlan", verified); !s.ok()) return s;
  } else if (absl::Status s =
                 CheckError("TfliteRecordedPlan", recorded.status());
             !s.ok()) {
    return s;
  }
  return CheckTfliteRoundTrip(*model);
#else
  (void)input;
  return absl::OkStatus();
#endif
}

int RunHarness(absl::Status (*check)(std::string_view), const uint8_t* data,
               size_t size) {
  const absl::Status status =
      check(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    std::abort();
  }
  return 0;
}

}  // namespace memplan::fuzz

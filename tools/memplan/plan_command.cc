// memplan plan: plan one input and write the plan.

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "input.h"
#include "memplan/emit.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "progress.h"
#include "symbolic_plan.h"
#ifdef MEMPLAN_HAVE_TFLITE
#include "memplan/tflite.h"
#include "memplan/verify.h"
#endif

namespace memplan::tool {
namespace {

enum class OutputFormat { kJson, kCsv, kCHeader, kTflmOffline, kTfliteModel };

// --format when given, else the format --out's extension names. Unknown
// extensions are an error, so that a typo never writes JSON into "plan.jsn".
absl::StatusOr<OutputFormat> FormatOf(const Arguments& args) {
  const std::string out = absl::GetFlag(FLAGS_out);
  if (args.Given("format")) {
    const std::string format = absl::GetFlag(FLAGS_format);
    if (format == "json") return OutputFormat::kJson;
    if (format == "csv") return OutputFormat::kCsv;
    if (format == "c-header") return OutputFormat::kCHeader;
    if (format == "tflm-offline") {
      if (out.empty()) {
        return absl::InvalidArgumentError(
            "--format=tflm-offline writes binary: give --out=FILE");
      }
      return OutputFormat::kTflmOffline;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("--format=", format,
                     ": unknown; valid: json, csv, c-header, tflm-offline"));
  }
  const std::string_view plain = UncompressedName(out);
  if (out.empty() || plain.ends_with(".json") || IsWritableStream(out)) {
    return OutputFormat::kJson;
  }
  if (plain.ends_with(".csv")) return OutputFormat::kCsv;
  if (plain.ends_with(".h")) return OutputFormat::kCHeader;
  if (absl::EndsWith(out, ".tflite")) {
    if (!absl::EndsWith(args.positional[0], ".tflite")) {
      return absl::InvalidArgumentError(
          absl::StrCat("--out=", out,
                       ": a planned .tflite model needs a "
                       ".tflite INPUT"));
    }
    return OutputFormat::kTfliteModel;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--out=", out,
      ": unknown output format (expected .json, .csv, .h, each optionally "
      ".gz, .tflite, or --format)"));
}

// Usage error when `out` is the file `input` (never overwrite the input).
absl::Status CheckNotInput(const char* flag, const std::string& out,
                           const std::string& input) {
  std::error_code error;
  if (!out.empty() && std::filesystem::equivalent(out, input, error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", out, " is the input file; it is never overwritten"));
  }
  return absl::OkStatus();
}

absl::Status Check(const Arguments& args) {
  if (absl::Status s = FormatOf(args).status(); !s.ok()) {
    return s;
  }
  for (auto [flag, path] :
       {std::pair{"out", absl::GetFlag(FLAGS_out)},
        std::pair{"graph-out", absl::GetFlag(FLAGS_graph_out)}}) {
    if (absl::Status s = CheckNotInput(flag, path, args.positional[0]);
        !s.ok()) {
      return s;
    }
  }
  const std::string graph_out = absl::GetFlag(FLAGS_graph_out);
  const std::string out = absl::GetFlag(FLAGS_out);
  std::error_code error;
  if (!out.empty() && !graph_out.empty() &&
      (std::filesystem::weakly_canonical(out, error) ==
           std::filesystem::weakly_canonical(graph_out, error) ||
       std::filesystem::equivalent(out, graph_out, error))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--out=", out, " and --graph-out=", graph_out,
                     " name one file; the graph would overwrite the plan"));
  }
  if (!graph_out.empty() && !absl::EndsWith(graph_out, ".json") &&
      !absl::EndsWith(graph_out, ".json.gz") && !IsWritableStream(graph_out)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--graph-out=", graph_out,
                     ": a graph is written as .json or .json.gz"));
  }
  const std::string planner = absl::GetFlag(FLAGS_planner);
  if (absl::Status s = CheckSymbolicPlanFlags(); !s.ok()) return s;
  if (!IsSymbolicPlanner(planner)) {  // a graph with dims's: checked later
    if (absl::Status s = CheckPlannerName("planner", planner); !s.ok()) {
      return s;
    }
    // The planner's own options, checked by the registry as it builds it.
    if (absl::Status s = CheckPlannerOptions(planner); !s.ok()) return s;
  }
  if (absl::Status s = CheckPlanningFlags(); !s.ok()) return s;
  return CheckInputFlags(/*placed=*/true);
}

// --reorder=placed: the graph planned in each candidate order, the plan of
// the smallest peak kept with its order; `input` becomes that order's.
// The name of the ordering chosen ("" = the graph's own).
absl::StatusOr<std::string> PlanPlaced(const std::string& path,
                                       const PlanMemoryOptions& options,
                                       LoadedInput& input, Plan& plan) {
  absl::StatusOr<LoadedInput> loaded =
      LoadToolInput(path, BuildOptionsFromFlags(), "");
  if (!loaded.ok()) return loaded.status();
  if (!loaded->graph.has_value()) {
    return absl::InvalidArgumentError(
        "--reorder needs a graph INPUT; a buffer CSV has no ops");
  }
  PlanMemoryOptions placed = options;
  placed.build = BuildOptionsFromFlags();
  placed.reorder = kPlacedOrdering;
  absl::StatusOr<GraphPlan> best = PlanMemory(*loaded->graph, placed);
  if (!best.ok()) return best.status();
  input = *std::move(loaded);
  input.graph = PermuteOps(*input.graph, best->op_order);
  input.op_order = best->op_order;
  input.problem = std::move(best->problem);
  plan = std::move(best->plan);
  return best->reorder;
}

// INPUT, a .tflite model, with the plan as its offline plan and its ops in
// the planned order; the model written is read back and its plan verified.
absl::StatusOr<std::string> PlannedTflite(const std::string& path,
                                          const LoadedInput& input,
                                          const Plan& plan) {
#ifdef MEMPLAN_HAVE_TFLITE
  absl::StatusOr<TfliteModel> model = ReadTfliteModel(path);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::vector<int32_t>> offsets =
      TfliteOfflineOffsets(*model, input.problem, plan);
  if (!offsets.ok()) return offsets.status();
  absl::StatusOr<std::string> bytes =
      WriteTflitePlan(*model, *offsets, input.op_order);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<TfliteModel> written =
      ReadTfliteModelFromBytes(*bytes, "the planned model");
  if (!written.ok()) return written.status();
  absl::StatusOr<TflitePlanCheck> check = TfliteRecordedPlan(*written);
  if (!check.ok()) return check.status();
  if (absl::Status s = VerifyPlan(check->problem, check->plan); !s.ok()) {
    return absl::InternalError(
        absl::StrCat("the planned model's offline plan fails: ", s.message()));
  }
  return bytes;
#else
  (void)input;
  (void)plan;
  return absl::UnimplementedError(absl::StrCat(
      "\"", path, "\": this memplan was built without the TFLite reader"));
#endif
}

// --format=tflm-offline of a .tflite INPUT: the array the planned model's
// metadata holds, one row per flatbuffer tensor (kernel scratch has none).
absl::StatusOr<std::string> TfliteOfflineArray(const std::string& path,
                                               const LoadedInput& input,
                                               const Plan& plan) {
#ifdef MEMPLAN_HAVE_TFLITE
  absl::StatusOr<TfliteModel> model = ReadTfliteModel(path);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::vector<int32_t>> offsets =
      TfliteOfflineOffsets(*model, input.problem, plan);
  if (!offsets.ok()) return offsets.status();
  return TfliteOfflinePlanBytes(*offsets);
#else
  (void)input;
  (void)plan;
  return absl::UnimplementedError(absl::StrCat(
      "\"", path, "\": this memplan was built without the TFLite reader"));
#endif
}

// A JSON plan's options: its provenance, its graph, --wall-time.
PlanJsonOptions JsonOptions(const Arguments& args, const LoadedInput& input,
                            const std::string& reorder) {
  PlanJsonOptions json;
  json.provenance = PlanProvenance{
      .input = args.positional[0],
      .input_hash = input.content_hash,
      .build = BuildOptionsFromFlags(),
      .reorder = reorder,
  };
  json.graph = input.graph.has_value() ? &*input.graph : nullptr;
  json.wall_time = absl::GetFlag(FLAGS_wall_time);
  return json;
}

// The plan file's text, in the format of --out (or --format) but JSON's.
absl::StatusOr<std::string> PlanText(const Arguments& args,
                                     const LoadedInput& input, const Plan& plan,
                                     const std::string& reorder) {
  const Graph* graph = input.graph.has_value() ? &*input.graph : nullptr;
  std::string text;
  const OutputFormat format = *FormatOf(args);
  if (format == OutputFormat::kCsv) {
    text = BufferCsvText(input.problem, &plan);
  } else if (format == OutputFormat::kCHeader) {
    text = PlanToCHeader(
        input.problem, plan, graph,
        std::filesystem::path(args.positional[0]).filename().string());
  } else if (format == OutputFormat::kTfliteModel) {
    return PlannedTflite(args.positional[0], input, plan);
  } else if (format == OutputFormat::kTflmOffline &&
             absl::EndsWith(args.positional[0], ".tflite")) {
    return TfliteOfflineArray(args.positional[0], input, plan);
  } else if (format == OutputFormat::kTflmOffline) {
    absl::StatusOr<std::vector<int32_t>> offsets =
        TflmOfflinePlan(input.problem, plan, graph);
    if (!offsets.ok()) return offsets.status();
    text = TflmOfflinePlanBytes(*offsets);
  } else {
    text = PlanToJson(input.problem, plan, JsonOptions(args, input, reorder));
  }
  return text;
}

// The plan to --out or stdout. A JSON plan is written as it is made, never
// held whole (0.16 GB at 10^6 buffers).
absl::Status WritePlan(const Arguments& args, const LoadedInput& input,
                       const Plan& plan, const std::string& reorder) {
  const std::string out = absl::GetFlag(FLAGS_out);
  if (*FormatOf(args) == OutputFormat::kJson) {
    const PlanJsonOptions json = JsonOptions(args, input, reorder);
    auto contents = [&](const TextSink& write) {
      WritePlanJson(input.problem, plan, json, write);
    };
    if (!out.empty()) return WriteFile(out, contents);
    contents([](std::string_view piece) { std::cout << piece; });
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> text = PlanText(args, input, plan, reorder);
  if (!text.ok()) return text.status();
  if (out.empty()) {
    std::cout << *text;
    return absl::OkStatus();
  }
  return WriteFile(out, *text);
}

// "in-place hints: K of N applied (...)" for a graph with in-place hints,
// saying where they came from: an ONNX model's come from the importer
// unless --onnx-inplace=off, and they make its plan smaller than the same
// graph's without them. Empty when the graph has none.
std::string InplaceHintsLine(const std::string& path,
                             const LoadedInput& input) {
  if (!input.graph.has_value()) return "";
  int64_t hints = 0;
  for (const Op& op : input.graph->ops) hints += op.inplace.size();
  if (hints == 0) return "";
  std::unordered_map<std::string_view, size_t> buffer_of;
  const std::vector<Buffer>& buffers = input.problem.buffers;
  for (size_t b = 0; b < buffers.size(); ++b) {
    for (const std::string& tensor : buffers[b].tensors) {
      buffer_of.emplace(tensor, b);
    }
  }
  int64_t applied = 0;
  for (const Op& op : input.graph->ops) {
    for (const OperandPair& pair : op.inplace) {
      auto out = buffer_of.find(op.outputs[pair.output]);
      auto in = buffer_of.find(op.inputs[pair.input]);
      applied += out != buffer_of.end() && in != buffer_of.end() &&
                 out->second == in->second;
    }
  }
  const std::string source =
      UncompressedName(path).ends_with(".onnx")
          ? "from the ONNX importer's element-wise ops; --onnx-inplace=off "
            "plans without them"
          : "from the graph's \"inplace\" fields";
  return absl::StrCat("in-place hints: ", applied, " of ", hints, " applied (",
                      source, ")");
}

// The summary's lines about the graph (its in-place hints, the bound over
// op orders), worked out before planning: they read the graph's ops, which
// ReleaseUnneededOps may then free.
struct GraphLines {
  std::string inplace;
  absl::StatusOr<std::string> order_bound = std::string();
};

GraphLines LinesOfGraph(const std::string& path, const LoadedInput& input) {
  GraphLines lines{.inplace = InplaceHintsLine(path, input)};
  absl::StatusOr<std::optional<OrderLowerBound>> bound =
      InputOrderBound(input, BuildOptionsFromFlags());
  if (bound.ok()) {
    lines.order_bound = OrderBoundLine(input, *bound);
  } else {
    lines.order_bound = bound.status();
  }
  return lines;
}

// Frees the graph's ops where nothing after planning reads them: a JSON or
// CSV plan of the graph's own order (an ordering's plan records the ops'
// names; a C header names ops) without --graph-out. At 10^6 ops that is
// 0.3 GB the planner and the writer can use.
void ReleaseUnneededOps(const Arguments& args, const std::string& reorder,
                        LoadedInput& input) {
  if (!input.graph.has_value() || !reorder.empty() ||
      !absl::GetFlag(FLAGS_graph_out).empty()) {
    return;
  }
  const OutputFormat format = *FormatOf(args);
  if (format == OutputFormat::kJson || format == OutputFormat::kCsv) {
    std::vector<Op>().swap(input.graph->ops);
  }
}

// A plan a time or work limit decided says so, and what limit would give
// a whole greedy pass (LimitNote).
void WarnWhenLimited(const Plan& plan, const PlanOptions& options) {
  const std::string note = LimitNote(plan, options);
  if (!note.empty()) std::cerr << "memplan plan: warning: " << note << "\n";
}

absl::Status Run(const Arguments& args) {
  PlanMemoryOptions options;
  options.planner = absl::GetFlag(FLAGS_planner);
  options.plan = PlanOptionsFromFlags(args);
  absl::StatusOr<PlannerOptions> planner_options = PlannerOptionsFromFlags();
  if (!planner_options.ok()) return planner_options.status();
  options.planner_options = *std::move(planner_options);
  std::string reorder = absl::GetFlag(FLAGS_reorder);
  absl::StatusOr<LoadedInput> input;
  absl::StatusOr<Plan> plan;
  GraphLines lines;
  if (reorder == kPlacedOrdering) {
    input = LoadedInput();
    plan = Plan();
    absl::StatusOr<std::string> chosen =
        PlanPlaced(args.positional[0], options, *input, *plan);
    if (!chosen.ok()) return chosen.status();
    reorder = *chosen;
    lines = LinesOfGraph(args.positional[0], *input);
    std::cerr << "op order: " << (reorder.empty() ? "the graph's own" : reorder)
              << " (the smallest placed peak)\n";
  } else {
    // --reorder's search and the planning share the limits.
    input = LoadToolInput(args.positional[0], BuildOptionsFromFlags(), reorder,
                          nullptr, SplitOrderingEffort(reorder, options.plan));
    if (!input.ok()) {
      // A graph JSON with dims --dim leaves unbound: one plan for them all.
      Graph bound;
      absl::StatusOr<std::optional<GraphInput>> symbolic =
          ReadSymbolicInput(args.positional[0], &bound);
      if (!symbolic.ok()) return symbolic.status();
      if (symbolic->has_value())
        return RunSymbolicPlan(args, **symbolic, bound);
      return input.status();
    }
    if (absl::Status s = CheckNoSymbolicFlags(args); !s.ok()) return s;
    lines = LinesOfGraph(args.positional[0], *input);
    ReleaseUnneededOps(args, reorder, *input);
    plan = PlanShowingProgress(args, input->problem, options);
    if (!plan.ok()) return plan.status();
  }
  if (absl::Status s = WritePlan(args, *input, *plan, reorder); !s.ok()) {
    return s;
  }
  const std::string graph_out = absl::GetFlag(FLAGS_graph_out);
  if (!graph_out.empty()) {  // the op order the plan's steps refer to
    if (!input->graph.has_value()) {
      return absl::InvalidArgumentError("--graph-out needs a graph INPUT");
    }
    if (absl::Status s = WriteFile(graph_out, GraphToJson(*input->graph));
        !s.ok()) {
      return s;
    }
  }
  std::cerr << PlanSummary(input->problem, *plan) << "\n";
  if (!lines.inplace.empty()) std::cerr << lines.inplace << "\n";
  if (!lines.order_bound.ok()) return lines.order_bound.status();
  if (!lines.order_bound->empty()) std::cerr << *lines.order_bound << "\n";
  if (!plan->counters.empty()) {
    std::cerr << "counters: "
              << absl::StrJoin(plan->counters, ", ", absl::PairFormatter(" "))
              << "\n";
  }
  WarnWhenLimited(*plan, options.plan);
  return absl::OkStatus();
}

}  // namespace

Command PlanCommand() {
  Command command{
      .name = "plan",
      .synopsis = "INPUT [flags]",
      .description =
          "Plans INPUT (a memplan-graph-v1 JSON, .json.gz, a buffer CSV, or a "
          ".tflite model) "
          "and writes the plan to --out or stdout, with a one-line summary "
          "on stderr. The plan is verified before it is written. The format "
          "follows --out's extension or --format: .json or json "
          "(memplan-plan-v1, which records the input's name and hash and the "
          "build flags, so that `memplan verify` needs no flags), .csv or csv "
          "(the buffer CSV with an offset column), .h or c-header (a C99 "
          "header: each pool's arena size, one offset macro per tensor), or "
          "tflm-offline (TFLite Micro's OfflineMemoryAllocation metadata: "
          "little-endian int32 version 0, subgraph 0, the number of tensors, "
          "one arena offset per graph tensor, -1 where the runtime places "
          "it). .json and .csv may end in .gz. With a .tflite INPUT, "
          "--out=FILE.tflite writes the model with the plan as its offline "
          "plan (OfflineMemoryAllocation metadata, one offset per tensor, "
          "-1 where TFLM places it) and its operators in the planned order "
          "(docs/tflite.md); --format=tflm-offline of a .tflite INPUT writes "
          "that metadata's array alone. --out never overwrites INPUT. "
          "--option NAME=VALUE sets an option of the planner (repeatable; "
          "`memplan planners NAME` lists them). A second line on stderr "
          "gives the plan's counters when its planner counts what it did "
          "(search nodes, shared objects). A run over a second shows its "
          "progress on stderr (--progress): one line, rewritten in place on "
          "a terminal (else a line every 5 s), that ends saying why the run "
          "stopped. A graph JSON with dims that --dim leaves unbound "
          "is planned once for every value of their ranges (symbolic_search, "
          "symbolic_greedy, or upper_bound, the plan at the maxima used "
          "everywhere): the plan "
          "file gives sizes, offsets and peak as expressions in the dims, in "
          "up to --buckets ranges of one dim, each with its own plan; the "
          "summary gives each bucket's peak and a table of the lower bound, "
          "the peak and their ratio at the ranges' ends and at each --at.",
      .min_positional = 1,
      .max_positional = 1,
      .check = &Check,
      .run = &Run,
  };
  command.flags = {"planner",   "option",    "out",   "format",
                   "graph_out", "wall_time", "quiet", "progress"};
  for (const std::string& f : PlanningFlags()) command.flags.push_back(f);
  for (const std::string& f : InputFlags()) command.flags.push_back(f);
  for (const std::string& f : SymbolicPlanFlags()) command.flags.push_back(f);
  return command;
}

}  // namespace memplan::tool

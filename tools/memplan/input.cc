#include "input.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "flags.h"
#include "memplan/formats.h"
#include "memplan/memplan.h"
#include "memplan/reorder.h"
#include "memplan/symbolic.h"
#ifdef MEMPLAN_HAVE_ONNX
#include "memplan/onnx.h"
#endif
#ifdef MEMPLAN_HAVE_TFLITE
#include "memplan/tflite.h"
#endif

// ONNX inputs (read when memplan is built with the ONNX importer).
ABSL_FLAG(std::vector<std::string>, dim, {},
          "NAME=VALUE: the value of a symbolic dimension (a graph JSON's "
          "\"dims\", an ONNX dim_param); NAME=MIN:MAX: its range (narrows a "
          "graph JSON's; keeps an ONNX dim_param symbolic); repeatable");
ABSL_FLAG(
    std::string, onnx_views, "alias",
    "alias|copy: ONNX inputs: Reshape, Flatten, Squeeze, Unsqueeze and "
    "Identity share their input's buffer (alias) or get their own (copy)");
ABSL_FLAG(std::string, onnx_inplace, "",
          "on|off: ONNX inputs: in-place hints on element-wise ops (default: "
          "on with --onnx-views=alias, off with copy)");
ABSL_FLAG(int32_t, onnx_data_inputs, -1,
          "N: ONNX inputs: the first N graph inputs carry data, the others "
          "are weights (-1 = all, or 1 for the light models)");

// Every file read: a limit against hostile inputs, not a build option.
ABSL_FLAG(memplan::tool::ByteSize, max_input_size,
          {memplan::kDefaultMaxInputBytes},
          "SIZE: the most bytes an input or plan file may hold, after "
          "decompression (2 GiB); a larger one is an error");

namespace memplan::tool {

const std::vector<std::string>& InputFlags() {
  static const auto* const kFlags = new std::vector<std::string>{
      "alignment",  "plan_constants", "plan_inputs",      "plan_outputs",
      "pool",       "capacity",       "reorder",          "dim",
      "onnx_views", "onnx_inplace",   "onnx_data_inputs", "max_input_size"};
  return *kFlags;
}

ReadOptions ReadOptionsFromFlags() {
  return ReadOptions{.max_bytes = absl::GetFlag(FLAGS_max_input_size).bytes};
}

BuildOptions BuildOptionsFromFlags() {
  BuildOptions options;
  options.alignment = absl::GetFlag(FLAGS_alignment).bytes;
  options.capacity = absl::GetFlag(FLAGS_capacity).bytes;
  options.plan_constants = absl::GetFlag(FLAGS_plan_constants);
  options.plan_inputs = absl::GetFlag(FLAGS_plan_inputs);
  options.plan_outputs = absl::GetFlag(FLAGS_plan_outputs);
  options.pools = absl::GetFlag(FLAGS_pool).pools;
  return options;
}

absl::StatusOr<DimArguments> DimsFromFlags() {
  return ParseDimArguments(absl::GetFlag(FLAGS_dim));
}

namespace {

absl::Status CheckOnnxFlags() {
  const std::string views = absl::GetFlag(FLAGS_onnx_views);
  if (views != "alias" && views != "copy") {
    return absl::InvalidArgumentError(
        absl::StrCat("--onnx-views=", views, ": expected alias or copy"));
  }
  const std::string inplace = absl::GetFlag(FLAGS_onnx_inplace);
  if (!inplace.empty() && inplace != "on" && inplace != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("--onnx-inplace=", inplace, ": expected on or off"));
  }
  return DimsFromFlags().status();
}

#ifdef MEMPLAN_HAVE_ONNX
// The flags' ONNX importer, with the importer's counts into `stats`.
absl::StatusOr<GraphImporter> OnnxImporterFromFlags(OnnxImportStats* stats) {
  OnnxImportOptions options;
  absl::StatusOr<DimArguments> dims = DimsFromFlags();
  if (!dims.ok()) return dims.status();
  options.dims = dims->values;
  options.dim_ranges = dims->ranges;
  options.views = absl::GetFlag(FLAGS_onnx_views) == "copy" ? OnnxViews::kCopy
                                                            : OnnxViews::kAlias;
  const std::string inplace = absl::GetFlag(FLAGS_onnx_inplace);
  options.inplace =
      inplace.empty() ? options.views == OnnxViews::kAlias : inplace == "on";
  options.data_inputs = absl::GetFlag(FLAGS_onnx_data_inputs);
  return OnnxImporter(options, stats);
}

std::string ImportReport(const OnnxImportStats& stats) {
  return absl::StrCat(
      "onnx opset: ", stats.opset, "\nonnx nodes: ", stats.nodes,
      "\nonnx tensors: ", stats.inputs, " input, ", stats.outputs, " output, ",
      stats.constants, " constant, ", stats.activations,
      " activation\nviews merged: ", stats.views,
      "\nin-place hints: ", stats.inplace, "\n");
}
#endif

}  // namespace

absl::Status CheckInputFlags(bool placed) {
  if (absl::Status s = CheckOnnxFlags(); !s.ok()) return s;
  // A bad value is a usage error (exit 2), found before any input is read.
  const Bytes alignment = absl::GetFlag(FLAGS_alignment).bytes;
  if (alignment < 1 || (alignment & (alignment - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--alignment: alignment ", alignment,
                     " is not a power of two (1, 2, 4, ...)"));
  }
  const std::string reorder = absl::GetFlag(FLAGS_reorder);
  std::vector<std::string> names = OrderingNames();
  if (placed) names.push_back(kPlacedOrdering);
  if (!reorder.empty() &&
      std::find(names.begin(), names.end(), reorder) == names.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--reorder=", reorder,
        ": unknown op ordering; valid: ", absl::StrJoin(names, ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadedInput> LoadToolInput(const std::string& path,
                                          std::string* import_report) {
  return LoadToolInput(path, BuildOptionsFromFlags(),
                       absl::GetFlag(FLAGS_reorder), import_report);
}

namespace {

// The options Load() reads `path` with: `options`, `reorder` and, for an
// ONNX model, the importer of the flags (its counts into `stats`).
#ifdef MEMPLAN_HAVE_ONNX
absl::StatusOr<LoadOptions> ToolLoadOptions(const std::string& path,
                                            const BuildOptions& options,
                                            const std::string& reorder,
                                            OnnxImportStats* stats) {
#else
absl::StatusOr<LoadOptions> ToolLoadOptions(const std::string& path,
                                            const BuildOptions& options,
                                            const std::string& reorder) {
#endif
  LoadOptions load;
  load.build = options;
  load.reorder = reorder;
  load.read = ReadOptionsFromFlags();
  absl::StatusOr<DimArguments> dims = DimsFromFlags();
  if (!dims.ok()) return dims.status();
  // Graph JSON binds its dims here; an ONNX model's importer binds its own.
  if (!absl::EndsWith(path, ".onnx")) {
    load.dims = std::move(dims->values);
    load.dim_ranges = std::move(dims->ranges);
  }
#ifdef MEMPLAN_HAVE_TFLITE
  load.importers.push_back(TfliteImporter());
#else
  if (absl::EndsWith(path, ".tflite")) {
    return absl::UnimplementedError(absl::StrCat(
        "\"", path,
        "\": this memplan was built without the TFLite reader (it needs "
        "libflatbuffers-dev and flatbuffers-compiler)"));
  }
#endif
#ifdef MEMPLAN_HAVE_ONNX
  // The --onnx-* flags matter to ONNX models only; the importer
  // is there for any other path too, so that an unknown type's error names
  // .onnx among the types read.
  (void)path;
  absl::StatusOr<GraphImporter> importer = OnnxImporterFromFlags(stats);
  if (!importer.ok()) return importer.status();
  load.importers.push_back(*std::move(importer));
  return load;
#else
  if (!absl::EndsWith(path, ".onnx")) return load;
  return absl::UnimplementedError(absl::StrCat(
      "\"", path,
      "\": this memplan was built without the ONNX importer (it needs "
      "libprotobuf-dev and libonnx-dev)"));
#endif
}

}  // namespace

bool AnyBuildFlagGiven(const Arguments& args) {
  for (const char* name : {"alignment", "plan_constants", "plan_inputs",
                           "plan_outputs", "pool", "capacity", "reorder"}) {
    if (args.Given(name)) return true;
  }
  return false;
}

absl::StatusOr<LoadedInput> LoadToolInput(const std::string& path,
                                          const BuildOptions& options,
                                          const std::string& reorder,
                                          std::string* import_report,
                                          const PlanOptions& effort) {
#ifdef MEMPLAN_HAVE_ONNX
  OnnxImportStats stats;
  absl::StatusOr<LoadOptions> load =
      ToolLoadOptions(path, options, reorder, &stats);
  if (!load.ok()) return load.status();
  load->order_effort = effort;
  absl::StatusOr<LoadedInput> input = Load(path, *load);
  if (input.ok() && absl::EndsWith(path, ".onnx") && import_report != nullptr) {
    *import_report = ImportReport(stats);
  }
  return input;
#else
  (void)import_report;
  absl::StatusOr<LoadOptions> load = ToolLoadOptions(path, options, reorder);
  if (!load.ok()) return load.status();
  load->order_effort = effort;
  return Load(path, *load);
#endif
}

absl::StatusOr<std::optional<SymbolicToolInput>> LoadSymbolicInput(
    const std::string& path, bool bind_values) {
  absl::StatusOr<DimArguments> dims = DimsFromFlags();
  if (!dims.ok()) return dims.status();
  if (absl::EndsWith(path, ".onnx")) {
    // An ONNX model's dim_params are symbolic only where --dim gives ranges.
    if (dims->ranges.empty()) return std::nullopt;
  } else if (UncompressedName(path).ends_with(".json")) {
    // Dims are declared under "dims": without the word, nothing is symbolic,
    // and the ordinary reading parses the file once.
    absl::StatusOr<std::string> text = ReadFile(path, ReadOptionsFromFlags());
    if (!text.ok() || !absl::StrContains(*text, "\"dims\"")) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
#ifdef MEMPLAN_HAVE_ONNX
  OnnxImportStats stats;
  absl::StatusOr<LoadOptions> load =
      ToolLoadOptions(path, BuildOptionsFromFlags(), "", &stats);
#else
  absl::StatusOr<LoadOptions> load =
      ToolLoadOptions(path, BuildOptionsFromFlags(), "");
#endif
  if (!load.ok()) return std::nullopt;
  load->keep_symbolic = true;
  if (!bind_values) load->dims.clear();
  absl::StatusOr<LoadedInput> input = Load(path, *load);
  if (!input.ok() || !input->graph.has_value() || !IsSymbolic(*input->graph)) {
    return std::nullopt;
  }
  return SymbolicToolInput{*std::move(input->graph),
                           std::move(input->content_hash)};
}

absl::StatusOr<PlanInput> LoadInputOfPlan(const std::string& path,
                                          const PlanFile& plan,
                                          const Arguments& args) {
#ifdef MEMPLAN_HAVE_ONNX
  OnnxImportStats stats;
  absl::StatusOr<LoadOptions> load = ToolLoadOptions(
      path, BuildOptionsFromFlags(), absl::GetFlag(FLAGS_reorder), &stats);
#else
  absl::StatusOr<LoadOptions> load = ToolLoadOptions(
      path, BuildOptionsFromFlags(), absl::GetFlag(FLAGS_reorder));
#endif
  if (!load.ok()) return load.status();
  return memplan::LoadInputOfPlan(path, plan, *load, AnyBuildFlagGiven(args));
}

absl::StatusOr<Plan> ParseToolPlan(const PlanFile& plan,
                                   const Problem& problem) {
  return ParsePlanFile(plan, problem);  // its errors name the file
}

}  // namespace memplan::tool

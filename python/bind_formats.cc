// File formats: the graph JSON, the buffer CSV and plan files read and
// written, and ONNX models imported.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "memplan/io.h"
#include "memplan/load.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/units.h"
#include "module.h"
#ifdef MEMPLAN_HAVE_ONNX
#include "memplan/onnx.h"
#endif
#ifdef MEMPLAN_HAVE_TFLITE
#include "memplan/tflite.h"
#endif

namespace memplan::python {
namespace {

#ifdef MEMPLAN_HAVE_ONNX
constexpr bool kHaveOnnx = true;
#else
constexpr bool kHaveOnnx = false;
#endif
#ifdef MEMPLAN_HAVE_TFLITE
constexpr bool kHaveTflite = true;
#else
constexpr bool kHaveTflite = false;
#endif

// A TFLite model (a path, or its bytes) as the tool reads it.
Graph ReadTfliteSource(const py::object& source) {
#ifdef MEMPLAN_HAVE_TFLITE
  if (py::isinstance<py::bytes>(source)) {
    return Take(ReadTfliteFromBytes(source.cast<std::string>()));
  }
  return Take(ReadTflite(source.cast<std::string>()), /*file=*/true);
#else
  (void)source;
  PyErr_SetString(g_error,
                  "this memplan module was built without TFLite support (the "
                  "optional component memplan::tflite needs "
                  "libflatbuffers-dev and flatbuffers-compiler)");
  throw py::error_already_set();
#endif
}

// Python's dim ranges, {name: (min, max)}, as DimRanges.
using PyDimRanges = std::map<std::string, std::pair<int64_t, int64_t>>;
DimRanges ToDimRanges(const PyDimRanges& ranges) {
  DimRanges result;
  for (const auto& [name, range] : ranges) {
    result[name] = DimRange{.min = range.first, .max = range.second};
  }
  return result;
}

Graph ReadOnnx(const py::object& source,
               const std::map<std::string, int64_t>& dims,
               const std::string& views, std::optional<bool> inplace,
               int data_inputs, const PyDimRanges& dim_ranges) {
#ifdef MEMPLAN_HAVE_ONNX
  OnnxImportOptions options;
  options.dims = dims;
  options.dim_ranges = ToDimRanges(dim_ranges);
  if (views != "alias" && views != "copy") {
    throw py::value_error(
        absl::StrCat("views=\"", views, "\": expected alias or copy"));
  }
  options.views = views == "copy" ? OnnxViews::kCopy : OnnxViews::kAlias;
  options.inplace = inplace.value_or(options.views == OnnxViews::kAlias);
  options.data_inputs = data_inputs;
  if (py::isinstance<py::bytes>(source)) {
    const std::string bytes = source.cast<std::string>();
    return Take(ImportOnnxFromBytes(bytes, options));
  }
  // A file that cannot be read is FileNotFoundError, as for the other
  // readers (the importer's own errors are never NotFound). Any name: the
  // caller says it is ONNX.
  return Take(ImportOnnx(source.cast<std::string>(), options), /*file=*/true);
#else
  (void)source;
  (void)dims;
  (void)views;
  (void)inplace;
  (void)data_inputs;
  (void)dim_ranges;
  PyErr_SetString(g_error,
                  "this memplan module was built without ONNX support (the "
                  "optional component memplan::onnx needs libprotobuf-dev and "
                  "libonnx-dev when memplan is configured)");
  throw py::error_already_set();
#endif
}

// read_plan: the plan file `path` for `input` (a Graph, a Problem, or the
// path of the file planned).
PlanResult ReadPlan(const py::object& input, const std::string& path,
                    bool recorded, const std::string& reorder, Bytes alignment,
                    std::optional<std::vector<Pool>> pools, Bytes capacity,
                    bool plan_constants, bool plan_inputs, bool plan_outputs) {
  BuildArgs args{.alignment = alignment,
                 .pools = std::move(pools),
                 .capacity = capacity,
                 .plan_constants = plan_constants,
                 .plan_inputs = plan_inputs,
                 .plan_outputs = plan_outputs};
  PlanResult result;
  result.build = args.Options();
  result.reorder = reorder;
  const PlanFile file = Take(ReadPlanFile(path), /*file=*/true);
  if (py::isinstance<py::str>(input)) {
    // A file, read as `memplan verify` reads it: its contents checked
    // against the hash the plan records.
    const std::string input_path = input.cast<std::string>();
    LoadOptions load;
    load.build = result.build;
    load.reorder = reorder;
#ifdef MEMPLAN_HAVE_ONNX
    load.importers.push_back(OnnxImporter());
#endif
#ifdef MEMPLAN_HAVE_TFLITE
    load.importers.push_back(TfliteImporter());
#endif
    PlanInput in = Take(LoadInputOfPlan(input_path, file, load,
                                        /*use_options=*/!recorded),
                        /*file=*/true);
    result.build = in.build.build;
    result.reorder = in.build.reorder;
    result.notes = in.build.notes;
    result.graph = std::move(in.input.graph);
    result.op_order = std::move(in.input.op_order);
    result.problem = std::move(in.input.problem);
  } else {
    if (recorded) {
      // The build options the plan file records, applied to the
      // input's own declarations as `memplan verify` applies them.
      if (std::optional<PlanProvenance> p = Take(RecordedProvenance(file));
          p.has_value()) {
        const Graph* graph = py::isinstance<Graph>(input)
                                 ? &input.cast<const Graph&>()
                                 : nullptr;
        absl::StatusOr<PlanBuild> build =
            ApplyRecordedBuild(*p, graph, DeclaredPools(input));
        if (!build.ok()) {
          Raise(
              absl::Status(build.status().code(),
                           absl::StrCat(path, ": ", build.status().message())));
        }
        result.build = build->build;
        result.reorder = build->reorder;
        result.notes = build->notes;
      }
    }
    result.graph =
        PlannedGraph(input, result.reorder, result.build, &result.op_order);
    result.problem = result.graph.has_value()
                         ? Take(BuildProblem(*result.graph, result.build))
                         : ProblemOf(input, result.build);
  }
  absl::StatusOr<Plan> plan = ParsePlanFile(file, result.problem);
  if (!plan.ok()) {
    Raise(absl::Status(plan.status().code(),
                       absl::StrCat(path, ": ", plan.status().message())));
  }
  result.plan = *std::move(plan);
  result.from_file = true;
  result.Index();
  return result;
}

Graph ReadGraph(const std::string& path, Bytes max_input_size,
                const std::map<std::string, int64_t>& dims,
                const PyDimRanges& dim_ranges) {
  const std::string text =
      Take(ReadFile(path, {.max_bytes = max_input_size, .text = true}), true);
  absl::StatusOr<Graph> graph = ParseGraphJson(text);
  // Symbolic dims narrowed and bound as the tool's --dim does.
  if (graph.ok()) {
    graph = ApplyDims(*std::move(graph), dims, ToDimRanges(dim_ranges));
  }
  if (!graph.ok()) {
    Raise(absl::Status(graph.status().code(),
                       absl::StrCat(path, ": ", graph.status().message())));
  }
  return *std::move(graph);
}

// A buffer CSV as (Problem, PlanResult of its offset column or None).
py::tuple ReadBufferCsv(const std::string& path, Bytes max_input_size) {
  const std::string text =
      Take(ReadFile(path, {.max_bytes = max_input_size, .text = true}), true);
  BufferCsv csv = Take(ParseBufferCsv(text));
  if (!csv.plan.has_value()) {
    return py::make_tuple(csv.problem, py::none());
  }
  PlanResult result;
  result.problem = csv.problem;
  result.plan = *csv.plan;
  ComputePlanStatistics(result.problem, result.plan);
  result.plan.planner = "csv";
  result.from_file = true;
  result.Index();
  return py::make_tuple(csv.problem, result);
}

void BindGraphFiles(py::module_& m) {
  m.def(
      "graph_from_json",
      [](const std::string& text) { return Take(ParseGraphJson(text)); },
      py::arg("text"), "a memplan-graph-v1 JSON text as a Graph");
  m.def("graph_to_json", &GraphToJson, py::arg("graph"));
  m.def("read_graph", &ReadGraph, py::arg("path"),
        py::arg("max_input_size") = kDefaultMaxInputBytes,
        py::arg("dims") = std::map<std::string, int64_t>{},
        py::arg("dim_ranges") = PyDimRanges{},
        "a memplan-graph-v1 file (.json or .json.gz) of at most "
        "max_input_size bytes (decompressed), its symbolic dims narrowed to "
        "dim_ranges ({name: (min, max)}) and bound to the values of dims");
  m.def(
      "write_graph",
      [](const Graph& graph, const std::string& path) {
        Check(WriteFile(path, GraphToJson(graph)), /*file=*/true);
      },
      py::arg("graph"), py::arg("path"));
}

void BindBufferCsv(py::module_& m) {
  m.def("read_buffer_csv", &ReadBufferCsv, py::arg("path"),
        py::arg("max_input_size") = kDefaultMaxInputBytes,
        "a buffer CSV (id,lower,upper,size[,offset]) of at most max_input_size "
        "bytes (decompressed) as (Problem, PlanResult or None)");
  m.attr("DEFAULT_MAX_INPUT_SIZE") = kDefaultMaxInputBytes;
  m.attr("MAX_NAME_BYTES") = kMaxNameBytes;
  m.def(
      "write_buffer_csv",
      [](const py::object& what, const std::string& path) {
        std::string text;
        if (py::isinstance<PlanResult>(what)) {
          const PlanResult& r = what.cast<const PlanResult&>();
          text = BufferCsvText(r.problem, &r.plan);
        } else {
          text = BufferCsvText(what.cast<const Problem&>());
        }
        Check(WriteFile(path, text), /*file=*/true);
      },
      py::arg("problem_or_plan"), py::arg("path"));
}

void BindPlanFiles(py::module_& m) {
  // The defaults are read_plan's with no build option given: the ones
  // the plan file records fill in what the input leaves open.
  m.def("_read_plan", &ReadPlan, py::arg("input"), py::arg("path"),
        py::kw_only(), py::arg("recorded") = true, py::arg("reorder") = "",
        py::arg("alignment") = 1, py::arg("pools") = py::none(),
        py::arg("capacity") = 0, py::arg("plan_constants") = false,
        py::arg("plan_inputs") = true, py::arg("plan_outputs") = true);
  m.def(
      "_write_file",
      [](const std::string& path, const py::bytes& data) {
        Check(WriteFile(path, std::string(data)), /*file=*/true);
      },
      py::arg("path"), py::arg("data"),
      "writes `data` to `path` (gzipped when the name ends in .gz)");
}

}  // namespace

// Sizes and durations as the tool reads them (memplan/units.h), for the
// Python wrappers' arguments.
void BindUnits(py::module_& m) {
  m.def(
      "_parse_byte_size",
      [](const std::string& text) { return Take(ParseByteSize(text)); },
      py::arg("text"));
  m.def(
      "_parse_seconds",
      [](const std::string& text) {
        return absl::ToDoubleSeconds(Take(ParseDuration(text)));
      },
      py::arg("text"));
}

void BindFormats(py::module_& m) {
  BindUnits(m);
  BindGraphFiles(m);
  BindBufferCsv(m);
  BindPlanFiles(m);
  m.attr("HAVE_ONNX") = kHaveOnnx;
  m.def("read_onnx", &ReadOnnx, py::arg("source"), py::kw_only(),
        py::arg("dims") = std::map<std::string, int64_t>{},
        py::arg("views") = "alias", py::arg("inplace") = py::none(),
        py::arg("data_inputs") = -1, py::arg("dim_ranges") = PyDimRanges{},
        "an ONNX model (a path, or the bytes of a ModelProto) as a Graph, "
        "imported as the tool imports it (memplan/onnx.h): dims binds "
        "symbolic dimensions, dim_ranges ({name: (min, max)}) keeps them "
        "symbolic over a range, views is \"alias\" or \"copy\", inplace "
        "defaults to views == \"alias\", data_inputs as --onnx-data-inputs. "
        "memplan.Error when the module was built without ONNX support "
        "(HAVE_ONNX is False)");
  m.attr("HAVE_TFLITE") = kHaveTflite;
  m.def("read_tflite", &ReadTfliteSource, py::arg("source"),
        "subgraph 0 of a TFLite model (a path, or its bytes) as a Graph, as "
        "`memplan plan model.tflite` reads it (memplan/tflite.h). "
        "memplan.Error when the module was built without TFLite support "
        "(HAVE_TFLITE is False)");
}

}  // namespace memplan::python

// memplan._memplan: the C++ library as a Python extension module.
//
// The value types (Tensor, Op, Pool, Graph, Buffer, Problem) are bound as
// Python classes with keyword constructors; a plan comes back as a PlanResult
// that keeps the problem it was made for, so that every tensor's pool and
// offset can be looked up by name. The pure-Python package `memplan` (next to
// this module) adds the dict conversions and the PyTorch front end.
//
// absl::Status becomes a Python exception carrying the library's message:
//   InvalidArgument, NotFound (an unknown planner), OutOfRange -> ValueError
//   ResourceExhausted (does not fit)  -> memplan.CapacityError
//   DeadlineExceeded (out of time)    -> memplan.TimeLimitError
//   anything else                     -> memplan.Error
// CapacityError and TimeLimitError derive from memplan.Error. File readers
// raise FileNotFoundError for a file that cannot be opened.
//
// A plan of a graph keeps the graph as planned (in the op order planned), so
// that its results by tensor name are those of the C++ GraphPlan
// (memplan/memplan.h: op order and one TensorPlacement per tensor) and the
// plan can be written in every format the tool writes.

#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "memplan/emit.h"
#include "memplan/io.h"
#include "memplan/load.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#ifdef MEMPLAN_HAVE_CP
#include "memplan/planners/cp.h"
#endif
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "memplan/report.h"
#include "memplan/report_html.h"
#include "memplan/types.h"
#include "memplan/verify.h"
#ifdef MEMPLAN_HAVE_ONNX
#include "memplan/onnx.h"
#endif

namespace py = pybind11;

namespace memplan {
namespace {

PyObject* g_error = nullptr;           // memplan.Error
PyObject* g_capacity_error = nullptr;  // memplan.CapacityError
PyObject* g_time_limit_error = nullptr;

[[noreturn]] void Raise(const absl::Status& status, bool file = false) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      if (file) {
        PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
        throw py::error_already_set();
      }
      throw py::value_error(message);
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      throw py::value_error(message);
    case absl::StatusCode::kResourceExhausted:
      if (file) {  // a file over the size limit, or larger than memory
        PyErr_SetString(g_error, message.c_str());
        throw py::error_already_set();
      }
      PyErr_SetString(g_capacity_error, message.c_str());
      throw py::error_already_set();
    case absl::StatusCode::kDeadlineExceeded:
      PyErr_SetString(g_time_limit_error, message.c_str());
      throw py::error_already_set();
    case absl::StatusCode::kUnimplemented:
      PyErr_SetString(PyExc_NotImplementedError, message.c_str());
      throw py::error_already_set();
    default:
      PyErr_SetString(g_error, message.c_str());
      throw py::error_already_set();
  }
}

void Check(const absl::Status& status, bool file = false) {
  if (!status.ok()) Raise(status, file);
}

template <typename T>
T Take(absl::StatusOr<T> value, bool file = false) {
  if (!value.ok()) Raise(value.status(), file);
  return *std::move(value);
}

TensorKind KindFrom(const py::object& kind) {
  if (py::isinstance<TensorKind>(kind)) return kind.cast<TensorKind>();
  const std::string name = py::str(kind);
  for (TensorKind k : {TensorKind::kActivation, TensorKind::kInput,
                       TensorKind::kOutput, TensorKind::kConstant,
                       TensorKind::kScratch}) {
    if (TensorKindName(k) == name) return k;
  }
  throw py::value_error(absl::StrCat(
      "unknown tensor kind \"", name,
      "\"; valid: activation, input, output, constant, scratch"));
}

std::vector<OperandPair> PairsFrom(
    const std::vector<std::pair<int, int>>& pairs) {
  std::vector<OperandPair> out;
  for (const auto& [output, input] : pairs) {
    out.push_back(OperandPair{.output = output, .input = input});
  }
  return out;
}

std::vector<std::pair<int, int>> PairsTo(const std::vector<OperandPair>& ps) {
  std::vector<std::pair<int, int>> out;
  for (const OperandPair& p : ps) out.emplace_back(p.output, p.input);
  return out;
}

// A plan together with the problem it places and the options that built it,
// so that tensors can be found by name and the plan verified or written.
// For a graph, `graph` is the graph as planned (after the op ordering) and
// `placements` are the GraphPlan's; for a problem, every tensor of every
// buffer, in buffer order.
struct PlanResult {
  Problem problem;
  Plan plan;
  BuildOptions build;
  std::string reorder;
  std::optional<Graph> graph;
  std::vector<int> op_order;
  // Read from a plan file: what its record accepts beyond the input's own
  // declarations (PlanBuild::notes of memplan/load.h).
  std::vector<std::string> notes;
  std::vector<TensorPlacement> placements;
  std::map<std::string, BufferId> buffer_of_tensor;
  std::map<std::string, size_t> placement_of_tensor;

  void Index() {
    buffer_of_tensor.clear();
    for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size());
         ++b) {
      buffer_of_tensor.emplace(problem.buffers[b].name, b);
      for (const std::string& t : problem.buffers[b].tensors) {
        buffer_of_tensor.emplace(t, b);
      }
    }
    if (graph.has_value()) {
      placements = Take(PlaceTensors(*graph, problem, plan));
    } else {
      placements.clear();
      for (const Assignment& a : plan.assignments) {
        const Buffer& buffer = problem.buffers[a.buffer];
        const std::vector<std::string> names =
            buffer.tensors.empty() ? std::vector<std::string>{buffer.name}
                                   : buffer.tensors;
        for (const std::string& t : names) {
          placements.push_back({.name = t,
                                .kind = TensorKind::kActivation,
                                .size = buffer.size,
                                .buffer = a.buffer,
                                .pool = a.pool,
                                .offset = a.offset});
        }
      }
    }
    placement_of_tensor.clear();
    for (size_t i = 0; i < placements.size(); ++i) {
      placement_of_tensor.emplace(placements[i].name, i);
    }
  }

  BufferId Find(const std::string& tensor) const {
    auto it = buffer_of_tensor.find(tensor);
    if (it == buffer_of_tensor.end()) {
      throw py::key_error(absl::StrCat(
          "tensor \"", tensor,
          "\" has no planned buffer (unknown, or not planned: constants are "
          "planned only with plan_constants)"));
    }
    return it->second;
  }

  const Assignment& AssignmentOf(BufferId b) const {
    for (const Assignment& a : plan.assignments) {
      if (a.buffer == b) return a;
    }
    throw py::key_error(absl::StrCat("buffer \"", problem.buffers[b].name,
                                     "\" has no assignment"));
  }

  const Graph* GraphOrNull() const {
    return graph.has_value() ? &*graph : nullptr;
  }
};

// A TensorPlacement with its pool's name, as Python sees it.
struct NamedPlacement {
  TensorPlacement tensor;
  std::string pool;  // empty when not planned
};

NamedPlacement PlacementOf(const PlanResult& r, const TensorPlacement& t) {
  return NamedPlacement{.tensor = t,
                   .pool = t.planned() ? r.problem.pools[t.pool].name : ""};
}

struct BuildArgs {
  Bytes alignment = 1;
  std::optional<std::vector<Pool>> pools;
  Bytes capacity = 0;
  bool plan_constants = false;
  bool plan_inputs = true;
  bool plan_outputs = true;

  BuildOptions Options() const {
    BuildOptions options;
    options.alignment = alignment;
    if (pools.has_value()) options.pools = *pools;
    options.capacity = capacity;
    options.plan_constants = plan_constants;
    options.plan_inputs = plan_inputs;
    options.plan_outputs = plan_outputs;
    return options;
  }
};

// The graph planned for `input` (a Graph, in the op order `reorder` names,
// empty = its own) with its op order, or nullopt for a Problem.
std::optional<Graph> PlannedGraph(const py::object& input,
                                  const std::string& reorder,
                                  const BuildOptions& build,
                                  std::vector<int>* op_order) {
  if (!py::isinstance<Graph>(input)) {
    if (!reorder.empty()) {
      throw py::value_error(
          "an op ordering applies to graphs; a problem has no ops to reorder");
    }
    return std::nullopt;
  }
  const Graph& graph = input.cast<const Graph&>();
  if (reorder.empty()) {
    if (op_order != nullptr) {
      op_order->resize(graph.ops.size());
      for (size_t i = 0; i < graph.ops.size(); ++i) (*op_order)[i] = i;
    }
    return graph;
  }
  if (op_order == nullptr) return Take(ReorderGraph(graph, reorder, build));
  *op_order = Take(ComputeOpOrder(graph, reorder, build));
  return PermuteOps(graph, *op_order);
}

// The Problem of a Graph (built with `build`, after the op ordering) or a
// Problem as given (then only its pools and capacity may change).
Problem ProblemOf(const py::object& input, const BuildOptions& build,
                  const std::string& reorder = "") {
  if (py::isinstance<Graph>(input)) {
    return Take(BuildProblem(*PlannedGraph(input, reorder, build, nullptr),
                             build));
  }
  if (py::isinstance<Problem>(input)) {
    if (!reorder.empty()) PlannedGraph(input, reorder, build, nullptr);
    Problem problem = input.cast<Problem>();
    if (!build.pools.empty() || build.capacity > 0) {
      problem.pools = Take(ResolvePools(problem.pools, build));
    }
    Check(ValidateProblem(problem));
    return problem;
  }
  throw py::type_error("expected a memplan.Graph or memplan.Problem");
}

// The pools `input` (a Graph or a Problem) declares: none for a problem
// with the one unbounded "default" pool that an input declaring none gets.
std::vector<Pool> DeclaredPools(const py::object& input) {
  if (py::isinstance<Graph>(input)) return input.cast<const Graph&>().pools;
  const std::vector<Pool>& pools = input.cast<const Problem&>().pools;
  if (pools.size() == 1 &&
      pools[0] == Pool{.name = "default", .capacity = 0, .alignment = 1}) {
    return {};
  }
  return pools;
}

struct SolveArgs {
  std::string planner;
  std::optional<double> time_limit;
  std::optional<int64_t> work_limit;
  uint64_t seed = 0;
  int threads = 1;
  PlannerOptions options;  // the planner's own, as text (OptionText)
  std::string reorder;
};

// A Python value of a planner option as the registry's text: bool as
// true/false, int and float as Python writes them (repr, which round-trips),
// str as it is. The registry parses it by the option's declared type.
std::string OptionText(const std::string& name, const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) {
    return value.cast<bool>() ? "true" : "false";
  }
  if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) {
    return py::repr(value).cast<std::string>();
  }
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  throw py::type_error(absl::StrCat(
      "option ", name, ": expected bool, int, float or str, got ",
      py::type::of(value).attr("__name__").cast<std::string>()));
}

PlannerOptions OptionsOf(const py::dict& options) {
  PlannerOptions out;
  for (const auto& [key, value] : options) {
    if (!py::isinstance<py::str>(key)) {
      throw py::type_error("options: the keys are option names (str)");
    }
    const std::string name = key.cast<std::string>();
    out[name] = OptionText(name, value);
  }
  return out;
}

// What PlanMemory(graph) does (memplan/memplan.h), with the planner's own
// options.
PlanResult RunPlanner(const py::object& input, const SolveArgs& solve,
                      const BuildArgs& args) {
  PlanResult result;
  result.build = args.Options();
  result.reorder = solve.reorder;
  result.graph =
      PlannedGraph(input, solve.reorder, result.build, &result.op_order);
  if (result.graph.has_value()) {
    result.problem = Take(BuildProblem(*result.graph, result.build));
  } else {
    result.problem = ProblemOf(input, result.build);
  }
  PlanOptions options;
  if (solve.time_limit.has_value()) {
    if (*solve.time_limit < 0) throw py::value_error("time_limit is negative");
    options.time_limit = absl::Seconds(*solve.time_limit);
  }
  if (solve.work_limit.has_value()) {
    if (*solve.work_limit < 0) throw py::value_error("work_limit is negative");
    options.work_limit = *solve.work_limit;
  }
  options.seed = solve.seed;
  if (solve.threads < 1) throw py::value_error("threads must be at least 1");
  options.threads = solve.threads;
  const std::string name = solve.planner.empty()
                               ? std::string(DefaultPlannerName())
                               : solve.planner;
  {
    py::gil_scoped_release release;
    PlanMemoryOptions memory_options;
    memory_options.planner = name;
    memory_options.planner_options = solve.options;
    memory_options.plan = options;
    absl::StatusOr<Plan> plan = PlanMemory(result.problem, memory_options);
    py::gil_scoped_acquire acquire;
    result.plan = Take(std::move(plan));
  }
  result.Index();
  return result;
}

void VerifyAgainst(const py::object& input, const PlanResult& result) {
  const Problem problem = ProblemOf(input, result.build, result.reorder);
  // The plan must place this problem's buffers: match them by name, in order.
  if (problem.buffers.size() != result.problem.buffers.size()) {
    throw py::value_error(absl::StrCat(
        "the plan places ", result.problem.buffers.size(),
        " buffers, the graph has ", problem.buffers.size()));
  }
  for (size_t b = 0; b < problem.buffers.size(); ++b) {
    if (problem.buffers[b].name != result.problem.buffers[b].name) {
      throw py::value_error(absl::StrCat(
          "buffer ", b, " of the plan is \"", result.problem.buffers[b].name,
          "\", the graph's is \"", problem.buffers[b].name, "\""));
    }
  }
  Check(VerifyPlan(problem, result.plan));
}

py::dict BufferDict(const PlanResult& r, BufferId b) {
  const Buffer& buffer = r.problem.buffers[b];
  const Assignment& a = r.AssignmentOf(b);
  py::dict d;
  d["name"] = buffer.name;
  d["tensors"] = buffer.tensors;
  d["size"] = buffer.size;
  d["start"] = buffer.lifetime.start;
  d["end"] = buffer.lifetime.end;
  d["pool"] = r.problem.pools[a.pool].name;
  d["offset"] = a.offset;
  return d;
}


// PlanToJson with the graph's tensor table and, when `input` names the file
// planned, the provenance the tool records (so that `memplan verify` needs
// no flags).
std::string PlanJson(const PlanResult& r, const std::optional<std::string>& input,
                     bool wall_time) {
  PlanJsonOptions options;
  options.graph = r.GraphOrNull();
  options.wall_time = wall_time;
  if (input.has_value()) {
    const std::string bytes = Take(ReadFile(*input), /*file=*/true);
    options.provenance = PlanProvenance{.input = *input,
                                        .input_hash = ContentHash(bytes),
                                        .build = r.build,
                                        .reorder = r.reorder};
  }
  return PlanToJson(r.problem, r.plan, options);
}

TextReportOptions TextOptions(int width, int max_table_rows,
                              int max_chart_rows, int max_peak_tensors) {
  if (width < 40) throw py::value_error("width must be at least 40");
  return TextReportOptions{.width = width,
                           .max_table_rows = max_table_rows,
                           .max_chart_rows = max_chart_rows,
                           .max_peak_tensors = max_peak_tensors};
}

PlanReport Analyze(const PlanResult& r) {
  return Take(AnalyzePlan(r.problem, r.plan, r.GraphOrNull()));
}

std::string HtmlReport(const std::vector<const PlanResult*>& plans,
                       const std::string& title,
                       const std::vector<std::pair<std::string, std::string>>&
                           failures) {
  HtmlReportInput input;
  input.title = title;
  for (const PlanResult* r : plans) {
    const Problem& first = plans.front()->problem;
    if (r->problem.buffers.size() != first.buffers.size()) {
      throw py::value_error(
          "the plans of one report must place the same buffers");
    }
    for (size_t b = 0; b < first.buffers.size(); ++b) {
      const Buffer& x = first.buffers[b];
      const Buffer& y = r->problem.buffers[b];
      if (x.name != y.name || x.size != y.size || x.lifetime != y.lifetime) {
        throw py::value_error(absl::StrCat(
            "the plans of one report must place the same buffers: buffer ", b,
            " is \"", x.name, "\" in the first plan, \"", y.name,
            "\" (or of another size or lifetime) in plan \"",
            r->plan.planner, "\""));
      }
    }
    input.plans.push_back(Analyze(*r));
  }
  for (const auto& [planner, message] : failures) {
    input.failures.push_back({planner, message});
  }
  return RenderHtmlReport(input);
}

#ifdef MEMPLAN_HAVE_ONNX
constexpr bool kHaveOnnx = true;
#else
constexpr bool kHaveOnnx = false;
#endif

Graph ReadOnnx(const py::object& source,
               const std::map<std::string, int64_t>& dims,
               const std::string& views, std::optional<bool> inplace,
               int data_inputs) {
#ifdef MEMPLAN_HAVE_ONNX
  OnnxImportOptions options;
  options.dims = dims;
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
  PyErr_SetString(g_error,
                  "this memplan module was built without ONNX support (the "
                  "optional component memplan::onnx needs libprotobuf-dev and "
                  "libonnx-dev when memplan is configured)");
  throw py::error_already_set();
#endif
}

}  // namespace
}  // namespace memplan

PYBIND11_MODULE(_memplan, m) {
  using namespace memplan;
  m.doc() = "memplan: static memory planning for compiled ML programs";
#ifdef MEMPLAN_HAVE_CP
  // The optional planners this module links, before anything looks one up.
  Check(RegisterCpPlanner());
#endif

  static py::exception<void> error(m, "Error", PyExc_RuntimeError);
  static py::exception<void> capacity(m, "CapacityError", error.ptr());
  static py::exception<void> time_limit(m, "TimeLimitError", error.ptr());
  g_error = error.ptr();
  g_capacity_error = capacity.ptr();
  g_time_limit_error = time_limit.ptr();

  py::enum_<TensorKind>(m, "TensorKind")
      .value("activation", TensorKind::kActivation)
      .value("input", TensorKind::kInput)
      .value("output", TensorKind::kOutput)
      .value("constant", TensorKind::kConstant)
      .value("scratch", TensorKind::kScratch);

  py::class_<Tensor>(m, "Tensor")
      .def(py::init([](std::string name, Bytes size, py::object kind,
                       Bytes alignment, std::vector<std::string> pools,
                       std::optional<std::pair<std::string, Offset>> fixed,
                       std::vector<int64_t> shape, std::string dtype) {
             Tensor t{.name = std::move(name),
                      .size = size,
                      .kind = KindFrom(kind),
                      .alignment = alignment,
                      .pools = std::move(pools),
                      .fixed = std::nullopt,
                      .shape = std::move(shape),
                      .dtype = std::move(dtype)};
             if (fixed.has_value()) {
               t.fixed = FixedTensorPlacement{.pool = fixed->first,
                                              .offset = fixed->second};
             }
             return t;
           }),
           py::arg("name"), py::arg("size"), py::kw_only(),
           py::arg("kind") = "activation", py::arg("alignment") = 0,
           py::arg("pools") = std::vector<std::string>{},
           py::arg("fixed") = py::none(),
           py::arg("shape") = std::vector<int64_t>{}, py::arg("dtype") = "")
      .def_readwrite("name", &Tensor::name)
      .def_readwrite("size", &Tensor::size)
      .def_property(
          "kind",
          [](const Tensor& t) { return std::string(TensorKindName(t.kind)); },
          [](Tensor& t, py::object kind) { t.kind = KindFrom(kind); })
      .def_readwrite("alignment", &Tensor::alignment)
      .def_readwrite("pools", &Tensor::pools)
      .def_property(
          "fixed",
          [](const Tensor& t) -> std::optional<std::pair<std::string, Offset>> {
            if (!t.fixed.has_value()) return std::nullopt;
            return std::make_pair(t.fixed->pool, t.fixed->offset);
          },
          [](Tensor& t, std::optional<std::pair<std::string, Offset>> f) {
            if (!f.has_value()) {
              t.fixed.reset();
            } else {
              t.fixed = FixedTensorPlacement{.pool = f->first,
                                             .offset = f->second};
            }
          })
      .def_readwrite("shape", &Tensor::shape)
      .def_readwrite("dtype", &Tensor::dtype)
      .def(py::self == py::self)
      .def("__repr__", [](const Tensor& t) {
        return absl::StrCat("Tensor(\"", t.name, "\", ", t.size, ", kind=\"",
                            std::string(TensorKindName(t.kind)), "\")");
      });

  py::class_<Op>(m, "Op")
      .def(py::init([](std::string name, std::vector<std::string> inputs,
                       std::vector<std::string> outputs, std::string type,
                       std::vector<std::string> scratch,
                       std::vector<std::pair<int, int>> inplace,
                       std::vector<std::pair<int, int>> alias,
                       std::vector<int> writes) {
             return Op{.name = std::move(name),
                       .type = std::move(type),
                       .inputs = std::move(inputs),
                       .outputs = std::move(outputs),
                       .scratch = std::move(scratch),
                       .inplace = PairsFrom(inplace),
                       .alias = PairsFrom(alias),
                       .writes = std::move(writes)};
           }),
           py::arg("name"), py::arg("inputs") = std::vector<std::string>{},
           py::arg("outputs") = std::vector<std::string>{}, py::kw_only(),
           py::arg("type") = "", py::arg("scratch") = std::vector<std::string>{},
           py::arg("inplace") = std::vector<std::pair<int, int>>{},
           py::arg("alias") = std::vector<std::pair<int, int>>{},
           py::arg("writes") = std::vector<int>{})
      .def_readwrite("name", &Op::name)
      .def_readwrite("type", &Op::type)
      .def_readwrite("inputs", &Op::inputs)
      .def_readwrite("outputs", &Op::outputs)
      .def_readwrite("scratch", &Op::scratch)
      .def_property(
          "inplace", [](const Op& op) { return PairsTo(op.inplace); },
          [](Op& op, std::vector<std::pair<int, int>> p) {
            op.inplace = PairsFrom(p);
          })
      .def_property(
          "alias", [](const Op& op) { return PairsTo(op.alias); },
          [](Op& op, std::vector<std::pair<int, int>> p) {
            op.alias = PairsFrom(p);
          })
      .def_readwrite("writes", &Op::writes)
      .def(py::self == py::self)
      .def("__repr__", [](const Op& op) {
        return absl::StrCat("Op(\"", op.name, "\", type=\"", op.type, "\")");
      });

  py::class_<Pool>(m, "Pool")
      .def(py::init([](std::string name, Bytes capacity, Bytes alignment) {
             return Pool{.name = std::move(name),
                         .capacity = capacity,
                         .alignment = alignment};
           }),
           py::arg("name"), py::arg("capacity") = 0, py::arg("alignment") = 1)
      .def_readwrite("name", &Pool::name)
      .def_readwrite("capacity", &Pool::capacity)
      .def_readwrite("alignment", &Pool::alignment)
      .def(py::self == py::self)
      .def("__repr__", [](const Pool& p) {
        return absl::StrCat("Pool(\"", p.name, "\", capacity=", p.capacity,
                            ", alignment=", p.alignment, ")");
      });

  py::class_<Graph>(m, "Graph")
      .def(py::init([](std::string name, std::vector<Tensor> tensors,
                       std::vector<Op> ops, std::vector<Pool> pools,
                       std::vector<std::pair<std::string, std::string>>
                           conflicts) {
             Graph g{.name = std::move(name),
                     .tensors = std::move(tensors),
                     .ops = std::move(ops),
                     .pools = std::move(pools),
                     .conflicts = {}};
             for (auto& [a, b] : conflicts) {
               g.conflicts.push_back(TensorConflict{.a = a, .b = b});
             }
             return g;
           }),
           py::kw_only(), py::arg("name") = "",
           py::arg("tensors") = std::vector<Tensor>{},
           py::arg("ops") = std::vector<Op>{},
           py::arg("pools") = std::vector<Pool>{},
           py::arg("conflicts") =
               std::vector<std::pair<std::string, std::string>>{})
      .def_readwrite("name", &Graph::name)
      .def_readwrite("tensors", &Graph::tensors)
      .def_readwrite("ops", &Graph::ops)
      .def_readwrite("pools", &Graph::pools)
      .def_property(
          "conflicts",
          [](const Graph& g) {
            std::vector<std::pair<std::string, std::string>> out;
            for (const TensorConflict& c : g.conflicts) out.emplace_back(c.a, c.b);
            return out;
          },
          [](Graph& g, std::vector<std::pair<std::string, std::string>> cs) {
            g.conflicts.clear();
            for (auto& [a, b] : cs) {
              g.conflicts.push_back(TensorConflict{.a = a, .b = b});
            }
          })
      .def(py::self == py::self)
      .def("__repr__", [](const Graph& g) {
        return absl::StrCat("Graph(\"", g.name, "\", ", g.tensors.size(),
                            " tensors, ", g.ops.size(), " ops)");
      });

  py::class_<Buffer>(m, "Buffer")
      .def_readonly("name", &Buffer::name)
      .def_readonly("tensors", &Buffer::tensors)
      .def_readonly("size", &Buffer::size)
      .def_readonly("alignment", &Buffer::alignment)
      .def_property_readonly("start",
                             [](const Buffer& b) { return b.lifetime.start; })
      .def_property_readonly("end",
                             [](const Buffer& b) { return b.lifetime.end; })
      .def("__repr__", [](const Buffer& b) {
        return absl::StrCat("Buffer(\"", b.name, "\", size=", b.size, ", [",
                            b.lifetime.start, ", ", b.lifetime.end, "))");
      });

  py::class_<Problem>(m, "Problem")
      .def_readonly("name", &Problem::name)
      .def_readonly("buffers", &Problem::buffers)
      .def_readonly("pools", &Problem::pools)
      .def_property_readonly("naive_total",
                             [](const Problem& p) { return NaiveTotal(p); })
      .def_property_readonly("lower_bound",
                             [](const Problem& p) { return LowerBound(p); })
      .def("__repr__", [](const Problem& p) {
        return absl::StrCat("Problem(\"", p.name, "\", ", p.buffers.size(),
                            " buffers)");
      });

  py::class_<NamedPlacement>(m, "TensorPlacement",
                        "Where one tensor of the graph lives (the C++ "
                        "TensorPlacement, with its pool's name)")
      .def_property_readonly(
          "name", [](const NamedPlacement& p) { return p.tensor.name; })
      .def_property_readonly("kind",
                             [](const NamedPlacement& p) {
                               return std::string(
                                   TensorKindName(p.tensor.kind));
                             })
      .def_property_readonly(
          "size", [](const NamedPlacement& p) { return p.tensor.size; },
          "the tensor's own bytes (its buffer may be larger)")
      .def_property_readonly(
          "planned", [](const NamedPlacement& p) { return p.tensor.planned(); })
      .def_property_readonly(
          "buffer",
          [](const NamedPlacement& p) -> std::optional<BufferId> {
            if (!p.tensor.planned()) return std::nullopt;
            return p.tensor.buffer;
          },
          "index into plan.buffers / plan.problem.buffers; None when not "
          "planned")
      .def_property_readonly(
          "pool",
          [](const NamedPlacement& p) -> std::optional<std::string> {
            if (!p.tensor.planned()) return std::nullopt;
            return p.pool;
          },
          "the pool's name; None when not planned")
      .def_property_readonly(
          "pool_index",
          [](const NamedPlacement& p) -> std::optional<PoolId> {
            if (!p.tensor.planned()) return std::nullopt;
            return p.tensor.pool;
          })
      .def_property_readonly(
          "offset",
          [](const NamedPlacement& p) -> std::optional<Offset> {
            if (!p.tensor.planned()) return std::nullopt;
            return p.tensor.offset;
          },
          "bytes from the pool's base; None when not planned")
      .def("__eq__",
           [](const NamedPlacement& a, const NamedPlacement& b) {
             return a.tensor == b.tensor && a.pool == b.pool;
           })
      .def("__repr__", [](const NamedPlacement& p) {
        if (!p.tensor.planned()) {
          return absl::StrCat("TensorPlacement(\"", p.tensor.name,
                              "\", not planned)");
        }
        return absl::StrCat("TensorPlacement(\"", p.tensor.name, "\", pool=\"",
                            p.pool, "\", offset=", p.tensor.offset, ")");
      });

  py::class_<PlanResult>(m, "PlanResult")
      .def_property_readonly(
          "graph",
          [](const PlanResult& r) -> std::optional<Graph> { return r.graph; },
          "the graph as planned (its ops in the order planned); None for a "
          "problem")
      .def_property_readonly(
          "notes", [](const PlanResult& r) { return r.notes; },
          "read_plan: what the plan file records that the input does not "
          "declare and was accepted (\"graph inputs left to the caller, as "
          "the plan records\"), one clause each; empty otherwise")
      .def_property_readonly(
          "op_order", [](const PlanResult& r) { return r.op_order; },
          "op_order[step]: the index in the caller's graph.ops of the op run "
          "at that step (the identity unless reorder was given)")
      .def_property_readonly(
          "placements",
          [](const PlanResult& r) {
            std::vector<NamedPlacement> out;
            for (const TensorPlacement& t : r.placements) {
              out.push_back(PlacementOf(r, t));
            }
            return out;
          },
          "one TensorPlacement per tensor of the graph, in the graph's order "
          "(unplanned ones too); for a problem, the buffers' tensors")
      .def(
          "find",
          [](const PlanResult& r,
             const std::string& name) -> std::optional<NamedPlacement> {
            auto it = r.placement_of_tensor.find(name);
            if (it == r.placement_of_tensor.end()) return std::nullopt;
            return PlacementOf(r, r.placements[it->second]);
          },
          py::arg("name"),
          "the TensorPlacement of the tensor `name`, None when the graph has "
          "no such tensor (as GraphPlan::Find)")
      .def_property_readonly("peak",
                             [](const PlanResult& r) { return r.plan.peak; })
      .def_property_readonly(
          "lower_bound", [](const PlanResult& r) { return r.plan.lower_bound; })
      .def_property_readonly(
          "naive_total", [](const PlanResult& r) { return r.plan.naive_total; })
      .def_property_readonly(
          "proven_optimal",
          [](const PlanResult& r) { return r.plan.proven_optimal; })
      .def_property_readonly("planner",
                             [](const PlanResult& r) { return r.plan.planner; })
      .def_property_readonly(
          "counters", [](const PlanResult& r) { return r.plan.counters; },
          "{name: count} of what the planner did (exact: nodes, parts, "
          "searches, restarts; caffe2_*: shared_objects)")
      .def_property_readonly(
          "wall_time",
          [](const PlanResult& r) {
            return absl::ToDoubleSeconds(r.plan.wall_time);
          },
          "seconds the planner took")
      .def_property_readonly(
          "pool_used", [](const PlanResult& r) { return r.plan.pool_used; })
      .def_property_readonly("problem",
                             [](const PlanResult& r) { return r.problem; })
      .def_property_readonly(
          "tensors",
          [](const PlanResult& r) {
            py::dict d;
            for (const auto& [tensor, b] : r.buffer_of_tensor) {
              const Assignment& a = r.AssignmentOf(b);
              d[py::str(tensor)] =
                  py::make_tuple(r.problem.pools[a.pool].name, a.offset);
            }
            return d;
          },
          "{tensor name: (pool name, offset)} of every planned tensor")
      .def_property_readonly(
          "buffers",
          [](const PlanResult& r) {
            py::list out;
            for (BufferId b = 0;
                 b < static_cast<BufferId>(r.problem.buffers.size()); ++b) {
              out.append(BufferDict(r, b));
            }
            return out;
          },
          "one dict per buffer: name, tensors, size, start, end, pool, offset")
      .def(
          "offset",
          [](const PlanResult& r, const std::string& tensor) {
            return r.AssignmentOf(r.Find(tensor)).offset;
          },
          py::arg("tensor"), "the offset of a tensor's buffer in its pool")
      .def(
          "pool",
          [](const PlanResult& r, const std::string& tensor) {
            return r.problem.pools[r.AssignmentOf(r.Find(tensor)).pool].name;
          },
          py::arg("tensor"), "the name of the pool of a tensor's buffer")
      .def(
          "buffer",
          [](const PlanResult& r, const std::string& tensor) {
            return BufferDict(r, r.Find(tensor));
          },
          py::arg("tensor"), "the buffer a tensor lives in, as a dict")
      .def(
          "moved",
          [](const PlanResult& r, const std::string& tensor, Offset offset,
             std::optional<std::string> pool) {
            PlanResult moved = r;
            const BufferId b = moved.Find(tensor);
            for (Assignment& a : moved.plan.assignments) {
              if (a.buffer != b) continue;
              a.offset = offset;
              if (pool.has_value()) {
                PoolId p = 0;
                while (p < static_cast<PoolId>(moved.problem.pools.size()) &&
                       moved.problem.pools[p].name != *pool) {
                  ++p;
                }
                if (p == static_cast<PoolId>(moved.problem.pools.size())) {
                  throw py::value_error(
                      absl::StrCat("unknown pool \"", *pool, "\""));
                }
                a.pool = p;
              }
            }
            moved.plan.proven_optimal = false;
            moved.plan.pool_used.clear();
            ComputePlanStatistics(moved.problem, moved.plan);
            moved.plan.proven_optimal = false;
            moved.Index();
            return moved;
          },
          py::arg("tensor"), py::arg("offset"), py::arg("pool") = py::none(),
          "a copy of the plan with the buffer of `tensor` moved (not verified)")
      .def(
          "verify",
          [](const PlanResult& r) { Check(VerifyPlan(r.problem, r.plan)); },
          "raises ValueError naming the offending buffers when the plan is "
          "invalid for its own problem")
      .def("to_json", &PlanJson, py::arg("input") = py::none(),
           py::arg("wall_time") = false,
           "memplan-plan-v1 JSON as the tool writes it: with a graph, every "
           "tensor's place; with `input` (the path of the file planned), its "
           "name and hash and the build options, so that `memplan verify` "
           "needs no flags")
      .def("to_csv",
           [](const PlanResult& r) {
             return BufferCsvText(r.problem, &r.plan);
           },
           "the buffer CSV with an offset column (and a pool column for "
           "several pools)")
      .def(
          "to_c_header",
          [](const PlanResult& r, const std::string& name,
             const std::string& prefix) {
            return PlanToCHeader(r.problem, r.plan, r.GraphOrNull(), name,
                                 prefix);
          },
          py::arg("name") = "", py::arg("prefix") = "MEMPLAN",
          "a C99 header: each pool's size and one offset macro per tensor "
          "(memplan/emit.h); `name` is the include guard's")
      .def(
          "tflm_offline",
          [](const PlanResult& r) {
            return Take(TflmOfflinePlan(r.problem, r.plan, r.GraphOrNull()));
          },
          "TFLite Micro's offline memory plan as a list of int32: version 0, "
          "subgraph 0, the number of tensors, one offset per tensor (-1: "
          "left to the runtime)")
      .def(
          "tflm_offline_bytes",
          [](const PlanResult& r) {
            return py::bytes(TflmOfflinePlanBytes(
                Take(TflmOfflinePlan(r.problem, r.plan, r.GraphOrNull()))));
          },
          "tflm_offline() as the metadata buffer holds it (little-endian)")
      .def(
          "report_text",
          [](const PlanResult& r, int width, int max_table_rows,
             int max_chart_rows, int max_peak_tensors) {
            return FormatTextReport(
                Analyze(r), TextOptions(width, max_table_rows, max_chart_rows,
                                        max_peak_tensors));
          },
          py::kw_only(), py::arg("width") = 100,
          py::arg("max_table_rows") = 200, py::arg("max_chart_rows") = 200,
          py::arg("max_peak_tensors") = 25,
          "the text report of `memplan report` (memplan/report.h)")
      .def(
          "report_html",
          [](const PlanResult& r, const std::string& title) {
            return HtmlReport({&r}, title, {});
          },
          py::arg("title") = "",
          "the interactive report of `memplan report --html` as one "
          "self-contained page")
      .def("__repr__", [](const PlanResult& r) {
        return absl::StrCat("PlanResult(planner=\"", r.plan.planner,
                            "\", peak=", r.plan.peak,
                            ", lower_bound=", r.plan.lower_bound, ")");
      });

  m.def(
      "_plan",
      [](const py::object& input, const std::string& planner,
         std::optional<double> time_limit, std::optional<int64_t> work_limit,
         uint64_t seed, int threads, const py::dict& options,
         const std::string& reorder, Bytes alignment,
         std::optional<std::vector<Pool>> pools, Bytes capacity,
         bool plan_constants, bool plan_inputs, bool plan_outputs) {
        BuildArgs args{.alignment = alignment,
                       .pools = std::move(pools),
                       .capacity = capacity,
                       .plan_constants = plan_constants,
                       .plan_inputs = plan_inputs,
                       .plan_outputs = plan_outputs};
        SolveArgs solve{.planner = planner,
                        .time_limit = time_limit,
                        .work_limit = work_limit,
                        .seed = seed,
                        .threads = threads,
                        .options = OptionsOf(options),
                        .reorder = reorder};
        return RunPlanner(input, solve, args);
      },
      py::arg("input"), py::arg("planner"), py::arg("time_limit"),
      py::arg("work_limit"), py::arg("seed"), py::arg("threads"),
      py::arg("options"), py::arg("reorder"), py::arg("alignment"),
      py::arg("pools"), py::arg("capacity"), py::arg("plan_constants"),
      py::arg("plan_inputs"), py::arg("plan_outputs"));

  m.def(
      "_build_problem",
      [](const py::object& input, Bytes alignment,
         std::optional<std::vector<Pool>> pools, Bytes capacity,
         bool plan_constants, bool plan_inputs, bool plan_outputs) {
        BuildArgs args{.alignment = alignment,
                       .pools = std::move(pools),
                       .capacity = capacity,
                       .plan_constants = plan_constants,
                       .plan_inputs = plan_inputs,
                       .plan_outputs = plan_outputs};
        return ProblemOf(input, args.Options());
      },
      py::arg("input"), py::arg("alignment"), py::arg("pools"),
      py::arg("capacity"), py::arg("plan_constants"), py::arg("plan_inputs"),
      py::arg("plan_outputs"));

  m.def("_verify", &VerifyAgainst, py::arg("input"), py::arg("plan"));

  m.def("planners", [] {
    py::dict out;
    for (const PlannerInfo& info : RegisteredPlanners()) {
      out[py::str(std::string(info.name))] = std::string(info.description);
    }
    return out;
  }, "{name: description} of every registered planner, in registry order");
  m.def(
      "planner_options",
      [](const std::string& name) {
        for (const PlannerInfo& info : RegisteredPlanners()) {
          if (info.name != name) continue;
          py::list out;
          for (const PlannerOption& o : info.options) {
            py::dict d;
            d["name"] = o.name;
            d["type"] = std::string(OptionTypeName(o.type));
            d["default"] = o.default_value;
            d["description"] = o.description;
            if (!o.choices.empty()) d["choices"] = o.choices;
            out.append(d);
          }
          return out;
        }
        Check(CreatePlanner(name).status());  // NotFound listing the names
        return py::list();
      },
      py::arg("name"),
      "the options planner `name` declares: [{name, type, default, "
      "description}], which plan(..., options={...}) sets");
  m.def("default_planner",
        [] { return std::string(DefaultPlannerName()); });

  // File formats.
  m.def("graph_from_json", [](const std::string& text) {
    return Take(ParseGraphJson(text));
  }, py::arg("text"), "a memplan-graph-v1 JSON text as a Graph");
  m.def("graph_to_json", &GraphToJson, py::arg("graph"));
  m.def(
      "read_graph",
      [](const std::string& path, Bytes max_input_size) {
        const std::string text = Take(
            ReadFile(path, {.max_bytes = max_input_size}), /*file=*/true);
        absl::StatusOr<Graph> graph = ParseGraphJson(text);
        if (!graph.ok()) {
          Raise(absl::Status(graph.status().code(),
                             absl::StrCat(path, ": ", graph.status().message())));
        }
        return *std::move(graph);
      },
      py::arg("path"), py::arg("max_input_size") = kDefaultMaxInputBytes,
      "a memplan-graph-v1 file (.json or .json.gz) of at most "
      "max_input_size bytes (decompressed)");
  m.def(
      "write_graph",
      [](const Graph& graph, const std::string& path) {
        Check(WriteFile(path, GraphToJson(graph)), /*file=*/true);
      },
      py::arg("graph"), py::arg("path"));
  m.def(
      "read_buffer_csv",
      [](const std::string& path, Bytes max_input_size) -> py::tuple {
        const std::string text = Take(
            ReadFile(path, {.max_bytes = max_input_size}), /*file=*/true);
        BufferCsv csv = Take(ParseBufferCsv(text));
        if (!csv.plan.has_value()) {
          return py::make_tuple(csv.problem, py::none());
        }
        PlanResult result;
        result.problem = csv.problem;
        result.plan = *csv.plan;
        ComputePlanStatistics(result.problem, result.plan);
        result.plan.planner = "csv";
        result.Index();
        return py::make_tuple(csv.problem, result);
      },
      py::arg("path"), py::arg("max_input_size") = kDefaultMaxInputBytes,
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
  m.def(
      "_read_plan",
      [](const py::object& input, const std::string& path, bool recorded,
         const std::string& reorder, Bytes alignment,
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
            if (std::optional<PlanProvenance> p =
                    Take(RecordedProvenance(file));
                p.has_value()) {
              const Graph* graph = py::isinstance<Graph>(input)
                                       ? &input.cast<const Graph&>()
                                       : nullptr;
              absl::StatusOr<PlanBuild> build =
                  ApplyRecordedBuild(*p, graph, DeclaredPools(input));
              if (!build.ok()) {
                Raise(absl::Status(
                    build.status().code(),
                    absl::StrCat(path, ": ", build.status().message())));
              }
              result.build = build->build;
              result.reorder = build->reorder;
              result.notes = build->notes;
            }
          }
          result.graph = PlannedGraph(input, result.reorder, result.build,
                                      &result.op_order);
          result.problem =
              result.graph.has_value()
                  ? Take(BuildProblem(*result.graph, result.build))
                  : ProblemOf(input, result.build);
        }
        absl::StatusOr<Plan> plan = ParsePlanFile(file, result.problem);
        if (!plan.ok()) {
          Raise(absl::Status(plan.status().code(),
                             absl::StrCat(path, ": ", plan.status().message())));
        }
        result.plan = *std::move(plan);
        result.Index();
        return result;
      },
      py::arg("input"), py::arg("path"), py::arg("recorded"),
      py::arg("reorder"), py::arg("alignment"), py::arg("pools"),
      py::arg("capacity"), py::arg("plan_constants"), py::arg("plan_inputs"),
      py::arg("plan_outputs"));
  m.def(
      "_write_file",
      [](const std::string& path, const py::bytes& data) {
        Check(WriteFile(path, std::string(data)), /*file=*/true);
      },
      py::arg("path"), py::arg("data"),
      "writes `data` to `path` (gzipped when the name ends in .gz)");

  m.attr("HAVE_ONNX") = kHaveOnnx;
  m.def("read_onnx", &ReadOnnx, py::arg("source"), py::kw_only(),
        py::arg("dims") = std::map<std::string, int64_t>{},
        py::arg("views") = "alias", py::arg("inplace") = py::none(),
        py::arg("data_inputs") = -1,
        "an ONNX model (a path, or the bytes of a ModelProto) as a Graph, "
        "imported as the tool imports it (memplan/onnx.h): dims binds "
        "symbolic dimensions, views is \"alias\" or \"copy\", inplace "
        "defaults to views == \"alias\", data_inputs as --onnx-data-inputs. "
        "memplan.Error when the module was built without ONNX support "
        "(HAVE_ONNX is False)");

  m.def(
      "report_html",
      [](const std::vector<const PlanResult*>& plans, const std::string& title,
         const std::vector<std::pair<std::string, std::string>>& failures) {
        if (plans.empty()) throw py::value_error("report_html needs a plan");
        return HtmlReport(plans, title, failures);
      },
      py::arg("plans"), py::arg("title") = "",
      py::arg("failures") = std::vector<std::pair<std::string, std::string>>{},
      "one self-contained HTML page showing plans of one and the same "
      "problem side by side, as `memplan report --planners=... --html`; "
      "failures: (planner, why it has no plan) pairs");
}

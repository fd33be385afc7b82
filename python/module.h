// Shared by the sources of memplan._memplan (memplan_module.cc and the
// bind_*.cc beside it): the conversion of absl::Status to Python exceptions,
// the PlanResult that Python sees, the build options of the functions that
// take a graph or a problem, and one Bind function per part of the module.
#ifndef MEMPLAN_PYTHON_MODULE_H_
#define MEMPLAN_PYTHON_MODULE_H_

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/tensor_placement.h"
#include "memplan/types.h"

namespace py = pybind11;

namespace memplan::python {

// The exception classes BindErrors creates.
extern PyObject* g_error;           // memplan.Error
extern PyObject* g_capacity_error;  // memplan.CapacityError
extern PyObject* g_time_limit_error;

// Raises the Python exception of `status` (the table in memplan_module.cc);
// with `file`, NotFound is FileNotFoundError.
[[noreturn]] void Raise(const absl::Status& status, bool file = false);

inline void Check(const absl::Status& status, bool file = false) {
  if (!status.ok()) Raise(status, file);
}

template <typename T>
T Take(absl::StatusOr<T> value, bool file = false) {
  if (!value.ok()) Raise(value.status(), file);
  return *std::move(value);
}

// The UTF-8 text of the Python str `text`, or ValueError naming `what`
// when it has none (a lone surrogate such as "\ud800" encodes to nothing).
inline std::string Utf8Of(const py::handle& text, const std::string& what) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    const py::str shown =
        py::reinterpret_steal<py::str>(PyObject_ASCII(text.ptr()));
    throw py::value_error(absl::StrCat(
        what, " ", static_cast<std::string>(shown),
        " is not valid text (it has a lone surrogate, which has no UTF-8): "
        "use a plain string"));
  }
  return std::string(data, static_cast<size_t>(size));
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
  // Read from a file (a plan file, a buffer CSV's offsets), not planned
  // here: its report shows no planning time.
  bool from_file = false;
  std::vector<TensorPlacement> placements;
  std::map<std::string, BufferId> buffer_of_tensor;
  std::map<std::string, size_t> placement_of_tensor;

  // Fills the maps and placements from problem, plan and graph.
  void Index();

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
// empty = its own) with its op order, or nullopt for a Problem; the
// ordering within `effort` (memplan/reorder.h).
std::optional<Graph> PlannedGraph(const py::object& input,
                                  const std::string& reorder,
                                  const BuildOptions& build,
                                  std::vector<int>* op_order,
                                  const PlanOptions& effort = {});

// The Problem of a Graph (built with `build`, after the op ordering) or a
// Problem as given (then only its pools and capacity may change).
Problem ProblemOf(const py::object& input, const BuildOptions& build,
                  const std::string& reorder = "");

// The pools `input` (a Graph or a Problem) declares: none for a problem
// with the one unbounded "default" pool that an input declaring none gets.
std::vector<Pool> DeclaredPools(const py::object& input);

// A planner's own options, {name: bool, int, float or str}, as the
// registry's text; TypeError naming a bad key or value (bind_planning.cc).
PlannerOptions PlannerOptionsOf(const py::dict& options);

// A TensorKind, or its name ("activation", ...); ValueError naming it.
TensorKind KindFrom(const py::object& kind);  // bind_values.cc

// The parts of the module, in the order PYBIND11_MODULE calls them (the
// classes before the functions whose signatures name them).
void BindErrors(py::module_& m);      // bind_errors.cc
void BindValues(py::module_& m);      // bind_values.cc: Tensor ... Problem
void BindPlanResult(py::module_& m);  // bind_plan_result.cc
void BindPlanning(py::module_& m);    // bind_planning.cc: _plan, planners
void BindFormats(py::module_& m);     // bind_formats.cc: readers, writers
void BindReports(py::module_& m);     // bind_reports.cc: report_html
// bind_symbolic.cc: Graph.dims, Tensor.symbolic_size, SymbolicPlan
void BindSymbolic(py::module_& m);
void BindRemat(py::module_& m);  // bind_remat.cc: _rematerialize

// PlanResult's writers and reports (to_json ... report_html), bind_reports.cc.
void DefPlanEmitters(py::class_<PlanResult>& cls);

}  // namespace memplan::python

#endif  // MEMPLAN_PYTHON_MODULE_H_

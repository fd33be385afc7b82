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
//
// One bind_*.cc per part of the module (module.h lists them).

#ifdef MEMPLAN_HAVE_CP
#include "memplan/planners/cp.h"
#endif
#ifdef MEMPLAN_HAVE_CPSAT
#include "memplan/planners/cpsat.h"
#endif
#include "module.h"

PYBIND11_MODULE(_memplan, m) {
  using namespace memplan;
  using namespace memplan::python;
  m.doc() = "memplan: static memory planning for compiled ML programs";
  // The project's version (CMake's project(VERSION)), as `memplan --version`.
  m.attr("__version__") = MEMPLAN_VERSION;
#ifdef MEMPLAN_HAVE_CP
  // The optional planners this module links, before anything looks one up.
  Check(RegisterCpPlanner());
#endif
#ifdef MEMPLAN_HAVE_CPSAT
  Check(RegisterCpsatPlanner());
#endif
  BindErrors(m);
  BindValues(m);
  BindPlanResult(m);
  BindPlanning(m);
  BindFormats(m);
  BindReports(m);
  BindSymbolic(m);
  BindRemat(m);
}

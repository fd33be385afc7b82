// Rematerialization: _rematerialize (memplan/__init__.py's rematerialize
// wraps it) and the RematResult it returns (memplan/remat.h, and
// memplan/remat_exact.h for exact=True).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/remat.h"
#include "memplan/remat_exact.h"
#include "module.h"

namespace memplan::python {
namespace {

// Rematerialize's result as Python sees it: the plan a PlanResult of the
// rewritten graph, in its own order.
struct PyRematResult {
  Graph graph;
  PlanResult plan;
  double added_cost = 0;
  Bytes peak_without = 0;
  std::vector<std::string> recomputed;
  bool proven = false;
};

PyRematResult ToPython(RematResult r, const BuildOptions& build, bool proven) {
  PlanResult plan;
  plan.problem = std::move(r.plan.problem);
  plan.plan = std::move(r.plan.plan);
  plan.build = build;
  plan.graph = r.graph;
  plan.op_order = std::move(r.plan.op_order);
  plan.Index();
  return PyRematResult{.graph = std::move(r.graph),
                       .plan = std::move(plan),
                       .added_cost = r.added_cost,
                       .peak_without = r.peak_without,
                       .recomputed = std::move(r.recomputed),
                       .proven = proven};
}

// RematerializeExact with the planning's effort: its work limit (or the
// time limit's share) for the search, a deadline the time limit from now.
absl::StatusOr<RematResult> FitExact(const Graph& graph, Bytes budget,
                                     const PlanMemoryOptions& options,
                                     bool& proven) {
  absl::StatusOr<RematExactResult> fitted =
      RematerializeExact(graph, budget, RematExactOptionsFor(options));
  if (!fitted.ok()) return fitted.status();
  proven = fitted->proven;
  return std::move(fitted->remat);
}

// The search limits, seed and threads of the planning, checked.
PlanOptions LimitsOf(std::optional<double> time_limit,
                     std::optional<int64_t> work_limit, uint64_t seed,
                     int threads) {
  PlanOptions options;
  if (time_limit.has_value()) {
    if (*time_limit < 0) throw py::value_error("time_limit is negative");
    options.time_limit = absl::Seconds(*time_limit);
  }
  if (work_limit.has_value()) {
    if (*work_limit < 0) throw py::value_error("work_limit is negative");
    options.work_limit = *work_limit;
  }
  if (threads < 1) throw py::value_error("threads must be at least 1");
  options.seed = seed;
  options.threads = threads;
  return options;
}

}  // namespace

void BindRemat(py::module_& m) {
  py::class_<PyRematResult>(
      m, "RematResult",
      "rematerialize()'s result: the rewritten graph (the recomputed ops "
      "inserted), its verified plan, the cost the recomputed ops add, the "
      "peak of the graph as given and the names of the inserted ops")
      .def_readonly("graph", &PyRematResult::graph,
                    "the rewritten graph: each recomputed op a copy of an "
                    "op, named with the suffix \".recompute\", run again "
                    "before a later reader")
      .def_readonly("plan", &PyRematResult::plan,
                    "the verified plan of `graph`, in its own op order")
      .def_readonly("added_cost", &PyRematResult::added_cost,
                    "the sum of the recomputed ops' costs (Op.cost; an op "
                    "without one adds 0)")
      .def_readonly("peak_without", &PyRematResult::peak_without,
                    "the placed peak of the graph as given, planned with "
                    "the same options")
      .def_readonly("recomputed", &PyRematResult::recomputed,
                    "the names of the inserted ops, in the order chosen")
      .def_readonly("proven", &PyRematResult::proven,
                    "True when the exact search (exact=True) proved that no "
                    "rewrite of its stage model over the graph's own op "
                    "order fits the budget at a smaller added cost; False "
                    "for the heuristic and when the limits ran out")
      .def("__repr__", [](const PyRematResult& r) {
        return absl::StrCat("<RematResult peak=", r.plan.plan.peak,
                            " peak_without=", r.peak_without,
                            " recomputed=", r.recomputed.size(),
                            " ops added_cost=", r.added_cost,
                            r.proven ? " proven" : "", ">");
      });
  m.def(
      "_rematerialize",
      [](const Graph& graph, Bytes budget, const std::string& planner,
         std::optional<double> time_limit, std::optional<int64_t> work_limit,
         uint64_t seed, int threads, const py::dict& options, Bytes alignment,
         std::optional<std::vector<Pool>> pools, Bytes capacity,
         bool plan_constants, bool plan_inputs, bool plan_outputs, bool exact) {
        BuildArgs args{.alignment = alignment,
                       .pools = std::move(pools),
                       .capacity = capacity,
                       .plan_constants = plan_constants,
                       .plan_inputs = plan_inputs,
                       .plan_outputs = plan_outputs};
        PlanMemoryOptions memory_options;
        memory_options.build = args.Options();
        memory_options.planner = planner;
        memory_options.planner_options = PlannerOptionsOf(options);
        memory_options.plan = LimitsOf(time_limit, work_limit, seed, threads);
        absl::StatusOr<RematResult> result;
        bool proven = false;
        {
          py::gil_scoped_release release;
          result = exact ? FitExact(graph, budget, memory_options, proven)
                         : Rematerialize(graph, budget, memory_options);
        }
        return ToPython(Take(std::move(result)), memory_options.build, proven);
      },
      py::arg("graph"), py::arg("budget"), py::kw_only(),
      py::arg("planner") = "", py::arg("time_limit") = py::none(),
      py::arg("work_limit") = py::none(), py::arg("seed") = 0,
      py::arg("threads") = 1, py::arg("options") = py::dict(),
      py::arg("alignment") = 1, py::arg("pools") = py::none(),
      py::arg("capacity") = 0, py::arg("plan_constants") = false,
      py::arg("plan_inputs") = true, py::arg("plan_outputs") = true,
      py::arg("exact") = false);
}

}  // namespace memplan::python

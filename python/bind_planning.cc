// Planning: plan() and its options (memplan/__init__.py wraps _plan), the
// problem a graph builds, verification, and the planner registry.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/reorder.h"
#include "memplan/verify.h"
#include "module.h"

namespace memplan::python {

std::optional<Graph> PlannedGraph(const py::object& input,
                                  const std::string& reorder,
                                  const BuildOptions& build,
                                  std::vector<int>* op_order,
                                  const PlanOptions& effort) {
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
  if (op_order == nullptr) {
    return Take(ReorderGraph(graph, reorder, build, effort));
  }
  *op_order = Take(ComputeOpOrder(graph, reorder, build, effort));
  return PermuteOps(graph, *op_order);
}

Problem ProblemOf(const py::object& input, const BuildOptions& build,
                  const std::string& reorder) {
  if (py::isinstance<Graph>(input)) {
    return Take(
        BuildProblem(*PlannedGraph(input, reorder, build, nullptr), build));
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

std::vector<Pool> DeclaredPools(const py::object& input) {
  if (py::isinstance<Graph>(input)) return input.cast<const Graph&>().pools;
  const std::vector<Pool>& pools = input.cast<const Problem&>().pools;
  if (pools.size() == 1 &&
      pools[0] == Pool{.name = "default", .capacity = 0, .alignment = 1}) {
    return {};
  }
  return pools;
}

namespace {

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
  if (py::isinstance<py::str>(value)) {
    return Utf8Of(value, absl::StrCat("option ", name, ": value"));
  }
  throw py::type_error(
      absl::StrCat("option ", name, ": expected bool, int, float or str, got ",
                   py::type::of(value).attr("__name__").cast<std::string>()));
}

}  // namespace

PlannerOptions PlannerOptionsOf(const py::dict& options) {
  PlannerOptions out;
  for (const auto& [key, value] : options) {
    if (!py::isinstance<py::str>(key)) {
      throw py::type_error("options: the keys are option names (str)");
    }
    const std::string name = Utf8Of(key, "options: the option name");
    out[name] = OptionText(name, value);
  }
  return out;
}

namespace {

struct SolveArgs {
  std::string planner;
  std::optional<double> time_limit;
  std::optional<int64_t> work_limit;
  uint64_t seed = 0;
  int threads = 1;
  PlannerOptions options;  // the planner's own, as text (OptionText)
  std::string reorder;
  py::object progress;  // None or called with (peak, planner)
};

// The search's limits, seed and threads of `solve`, checked.
PlanOptions PlanOptionsOf(const SolveArgs& solve) {
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
  return options;
}

// The caller's progress callback runs with the GIL; its first exception
// (kept in *error) stops further calls and is raised once the plan is made.
void SetProgress(const SolveArgs& solve,
                 std::optional<py::error_already_set>* error,
                 PlanOptions* options) {
  if (solve.progress.is_none()) return;
  options->progress = [&solve, error](const Progress& progress) {
    py::gil_scoped_acquire acquire;
    if (error->has_value()) return;
    try {
      solve.progress(progress.peak, std::string(progress.planner));
    } catch (py::error_already_set& e) {
      *error = std::move(e);
    }
  };
}

// The order of the smallest placed peak; the result records it and the
// ordering that gave it.
void PlanPlaced(const Graph& graph, const std::string& name,
                const SolveArgs& solve, const PlanOptions& options,
                PlanResult* result) {
  PlanMemoryOptions memory_options;
  memory_options.build = result->build;
  memory_options.planner = name;
  memory_options.planner_options = solve.options;
  memory_options.plan = options;
  memory_options.reorder = kPlacedOrdering;
  absl::StatusOr<GraphPlan> best;
  {
    py::gil_scoped_release release;
    best = PlanMemory(graph, memory_options);
  }
  GraphPlan chosen = Take(std::move(best));
  result->reorder = chosen.reorder;
  result->op_order = chosen.op_order;
  result->graph = PermuteOps(graph, chosen.op_order);
  result->problem = std::move(chosen.problem);
  result->plan = std::move(chosen.plan);
}

// Plans result->problem, built in the op order already chosen.
void PlanProblem(const std::string& name, const SolveArgs& solve,
                 const PlanOptions& options, PlanResult* result) {
  py::gil_scoped_release release;
  PlanMemoryOptions memory_options;
  memory_options.planner = name;
  memory_options.planner_options = solve.options;
  memory_options.plan = options;
  absl::StatusOr<Plan> plan = PlanMemory(result->problem, memory_options);
  py::gil_scoped_acquire acquire;
  result->plan = Take(std::move(plan));
}

// What PlanMemory(graph) does (memplan/memplan.h), with the planner's own
// options.
PlanResult RunPlanner(const py::object& input, const SolveArgs& solve,
                      const BuildArgs& args) {
  PlanResult result;
  result.build = args.Options();
  result.reorder = solve.reorder;
  const bool placed = solve.reorder == kPlacedOrdering;
  if (placed && !py::isinstance<Graph>(input)) {
    throw py::value_error(
        "an op ordering applies to graphs; a problem has no ops to reorder");
  }
  PlanOptions options = PlanOptionsOf(solve);
  // "placed" plans below, in each candidate order; the others share the
  // limits with the planning.
  result.graph = PlannedGraph(input, placed ? "" : solve.reorder, result.build,
                              &result.op_order,
                              SplitOrderingEffort(solve.reorder, options));
  if (!placed) {
    result.problem = result.graph.has_value()
                         ? Take(BuildProblem(*result.graph, result.build))
                         : ProblemOf(input, result.build);
  }
  const std::string name =
      solve.planner.empty() ? std::string(DefaultPlannerName()) : solve.planner;
  std::optional<py::error_already_set> progress_error;
  SetProgress(solve, &progress_error, &options);
  if (placed) {
    PlanPlaced(input.cast<const Graph&>(), name, solve, options, &result);
  } else {
    PlanProblem(name, solve, options, &result);
  }
  if (progress_error.has_value()) throw *std::move(progress_error);
  result.Index();
  return result;
}

// The problem `result` must place: `input` built in the order the plan
// records (checked against what every ordering keeps), since an ordering
// cut by a limit gives another order than its name does by default.
Problem ProblemToVerify(const py::object& input, const PlanResult& result) {
  if (result.reorder.empty() || !py::isinstance<Graph>(input)) {
    return ProblemOf(input, result.build, result.reorder);
  }
  const Graph& graph = input.cast<const Graph&>();
  Check(CheckOpOrder(graph, result.op_order, result.build));
  return Take(BuildProblem(PermuteOps(graph, result.op_order), result.build));
}

void VerifyAgainst(const py::object& input, const PlanResult& result) {
  const Problem problem = ProblemToVerify(input, result);
  // The plan must place this problem's buffers: match them by name, in order.
  if (problem.buffers.size() != result.problem.buffers.size()) {
    throw py::value_error(
        absl::StrCat("the plan places ", result.problem.buffers.size(),
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

// Options granting `work_limit` work units (0: the default).
PlanOptions WorkLimited(int64_t work_limit) {
  PlanOptions options;
  options.work_limit = work_limit;
  return options;
}

// _plan's arguments default to what memplan.plan's do.
void BindPlanFunction(py::module_& m) {
  m.def(
      "_plan",
      [](const py::object& input, const std::string& planner,
         std::optional<double> time_limit, std::optional<int64_t> work_limit,
         uint64_t seed, int threads, const py::dict& options,
         const std::string& reorder, Bytes alignment,
         std::optional<std::vector<Pool>> pools, Bytes capacity,
         bool plan_constants, bool plan_inputs, bool plan_outputs,
         const py::object& progress) {
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
                        .options = PlannerOptionsOf(options),
                        .reorder = reorder,
                        .progress = progress};
        return RunPlanner(input, solve, args);
      },
      py::arg("input"), py::kw_only(), py::arg("planner") = "",
      py::arg("time_limit") = py::none(), py::arg("work_limit") = py::none(),
      py::arg("seed") = 0, py::arg("threads") = 1,
      py::arg("options") = py::dict(), py::arg("reorder") = "",
      py::arg("alignment") = 1, py::arg("pools") = py::none(),
      py::arg("capacity") = 0, py::arg("plan_constants") = false,
      py::arg("plan_inputs") = true, py::arg("plan_outputs") = true,
      py::arg("progress") = py::none());
  m.def(
      "_limit_note",
      [](const PlanResult& result, std::optional<double> time_limit,
         std::optional<int64_t> work_limit) {
        PlanOptions options;
        if (time_limit.has_value())
          options.time_limit = absl::Seconds(*time_limit);
        if (work_limit.has_value()) options.work_limit = *work_limit;
        return LimitNote(result.plan, options);
      },
      py::arg("result"), py::arg("time_limit") = py::none(),
      py::arg("work_limit") = py::none(),
      "When a time or work limit decided the plan, what it cut (LimitNote); "
      "empty otherwise.");
}

void BindProblemFunctions(py::module_& m) {
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
      py::arg("input"), py::kw_only(), py::arg("alignment") = 1,
      py::arg("pools") = py::none(), py::arg("capacity") = 0,
      py::arg("plan_constants") = false, py::arg("plan_inputs") = true,
      py::arg("plan_outputs") = true);
  m.def("_verify", &VerifyAgainst, py::arg("input"), py::arg("plan"));
}

void BindOrderFunctions(py::module_& m) {
  m.def(
      "_lower_bound_over_orders",
      [](const Graph& graph, Bytes alignment, bool plan_constants,
         bool plan_inputs, bool plan_outputs,
         int64_t work_limit) -> std::optional<std::pair<Bytes, std::string>> {
        BuildArgs args{.alignment = alignment,
                       .plan_constants = plan_constants,
                       .plan_inputs = plan_inputs,
                       .plan_outputs = plan_outputs};
        std::optional<OrderLowerBound> bound = Take(LowerBoundOverOrders(
            graph, args.Options(), WorkLimited(work_limit)));
        if (!bound.has_value()) return std::nullopt;
        return std::make_pair(bound->bytes, bound->op >= 0
                                                ? graph.ops[bound->op].name
                                                : std::string());
      },
      py::arg("graph"), py::kw_only(), py::arg("alignment") = 1,
      py::arg("plan_constants") = false, py::arg("plan_inputs") = true,
      py::arg("plan_outputs") = true, py::arg("work_limit") = 0);

  m.def(
      "_optimal_op_order",
      [](const Graph& graph, Bytes alignment, bool plan_constants,
         bool plan_inputs, bool plan_outputs, int64_t work_limit) {
        BuildArgs args{.alignment = alignment,
                       .plan_constants = plan_constants,
                       .plan_inputs = plan_inputs,
                       .plan_outputs = plan_outputs};
        OptimalOrder optimal = Take(ComputeOptimalOpOrder(
            graph, args.Options(), WorkLimited(work_limit)));
        std::vector<std::string> names;
        names.reserve(optimal.order.size());
        for (int op : optimal.order) names.push_back(graph.ops[op].name);
        return py::make_tuple(names, optimal.peak, optimal.bound,
                              optimal.proven, optimal.work);
      },
      py::arg("graph"), py::kw_only(), py::arg("alignment") = 1,
      py::arg("plan_constants") = false, py::arg("plan_inputs") = true,
      py::arg("plan_outputs") = true, py::arg("work_limit") = 0);
}

void BindPlannerRegistry(py::module_& m) {
  m.def(
      "planners",
      [] {
        py::dict out;
        for (const PlannerInfo& info : RegisteredPlanners()) {
          out[py::str(std::string(info.name))] = std::string(info.description);
        }
        return out;
      },
      "{name: description} of every registered planner, in registry order");
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
  m.def("default_planner", [] { return std::string(DefaultPlannerName()); });
}

}  // namespace

void BindPlanning(py::module_& m) {
  BindPlanFunction(m);
  BindProblemFunctions(m);
  BindOrderFunctions(m);
  BindPlannerRegistry(m);
}

}  // namespace memplan::python

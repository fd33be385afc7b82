// Symbolic sizes in Python (docs/symbolic.md): Graph.dims and
// Tensor.symbolic_size, plan_symbolic() and the SymbolicPlan it returns,
// whose at(**values) is the ordinary PlanResult of the graph bound there.
//
// A wrong dim, range, expression or value raises memplan.DimError, which
// derives from both memplan.Error and ValueError (the module's other bad
// inputs are ValueErrors).
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "memplan/dim_expr.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_memplan.h"
#include "memplan/symbolic_verify.h"
#include "memplan/types.h"
#include "memplan/verify.h"
#include "module.h"

namespace memplan::python {
namespace {

PyObject* g_dim_error = nullptr;  // memplan.DimError

// As Raise(), but the caller's mistakes (InvalidArgument, OutOfRange,
// FailedPrecondition) are memplan.DimError.
[[noreturn]] void RaiseSymbolic(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      PyErr_SetString(g_dim_error, std::string(status.message()).c_str());
      throw py::error_already_set();
    default:
      Raise(status);
  }
}

void CheckSymbolic(const absl::Status& status) {
  if (!status.ok()) RaiseSymbolic(status);
}

template <typename T>
T TakeSymbolic(absl::StatusOr<T> value) {
  if (!value.ok()) RaiseSymbolic(value.status());
  return *std::move(value);
}

using RangeTuples = std::map<std::string, std::pair<int64_t, int64_t>>;

RangeTuples RangesTo(const DimRanges& dims) {
  RangeTuples out;
  for (const auto& [name, r] : dims) out[name] = {r.min, r.max};
  return out;
}

DimRanges RangesFrom(const RangeTuples& dims) {
  DimRanges out;
  for (const auto& [name, r] : dims) {
    out[name] = DimRange{.min = r.first, .max = r.second};
  }
  CheckSymbolic(ValidateDimRanges(out));
  return out;
}

// The keyword arguments of at(seq=N) and peak(seq=N): every value an int.
DimValues ValuesFrom(const py::kwargs& values) {
  DimValues out;
  const auto fail = [](const std::string& message) {
    PyErr_SetString(g_dim_error, message.c_str());
    throw py::error_already_set();
  };
  for (const auto& [key, value] : values) {
    const std::string name = Utf8Of(key, "the dim name");
    if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) {
      fail(absl::StrCat("dim \"", name, "\": expected an int, got ",
                        py::repr(value).cast<std::string>()));
    }
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow != 0) {
      fail(absl::StrCat("dim \"", name,
                        "\" = ", py::repr(value).cast<std::string>(),
                        " is out of range: give a value in the dim's range ",
                        "(at most 2**63 - 1)"));
    }
    out[name] = static_cast<int64_t>(v);
  }
  return out;
}

// A symbolic graph's plan as Python sees it: the C++ SymbolicGraphPlan with
// the graph it was made from and the options that built it, so that at()
// can bind the graph and verify() can rebuild the problem.
struct SymbolicPlanResult {
  SymbolicGraphPlan plan;
  Graph graph;
  BuildOptions build;

  // DimError unless `values` gives every dim of the plan a value in its
  // range (and no other dim).
  void CheckComplete(const DimValues& values) const {
    CheckSymbolic(CheckDimValues(plan.problem.dims, values));
    for (const auto& [name, range] : plan.problem.dims) {
      if (!values.contains(name)) {
        PyErr_SetString(
            g_dim_error,
            absl::StrCat("no value for dim \"", name, "\" (range [", range.min,
                         ", ", range.max, "]): give every dim, e.g. at(", name,
                         "=", range.min, ")")
                .c_str());
        throw py::error_already_set();
      }
    }
  }

  const SymbolicBucket& BucketOf(const DimValues& values) const {
    CheckComplete(values);
    const SymbolicBucket* bucket = plan.Find(values);
    if (bucket == nullptr) {
      Check(absl::InternalError("no bucket of the plan holds the values"));
    }
    return *bucket;
  }
};

// The plan `at` (of the reserved sizes) as a plan of the bound graph's own
// problem: the same offsets, each pool's use the highest byte its buffers
// reach at their own sizes. Verified.
Plan OwnPlan(const Problem& own, const GraphPlan& at) {
  std::map<std::string, const Assignment*> by_name;
  for (const Assignment& a : at.plan.assignments) {
    by_name[at.problem.buffers[a.buffer].name] = &a;
  }
  Plan plan;
  plan.planner = at.plan.planner;
  plan.pool_used.assign(own.pools.size(), 0);
  for (BufferId b = 0; b < static_cast<BufferId>(own.buffers.size()); ++b) {
    auto it = by_name.find(own.buffers[b].name);
    if (it == by_name.end()) {
      Check(absl::InternalError(
          absl::StrCat("buffer \"", own.buffers[b].name,
                       "\" of the bound graph is not in the symbolic plan")));
    }
    const Assignment& a = *it->second;
    plan.assignments.push_back(
        Assignment{.buffer = b, .pool = a.pool, .offset = a.offset});
    Bytes& used = plan.pool_used[a.pool];
    used = std::max(used, a.offset + own.buffers[b].size);
  }
  for (Bytes used : plan.pool_used) plan.peak += used;
  plan.naive_total = NaiveTotal(own);
  plan.lower_bound = LowerBound(own);
  Check(VerifyPlan(own, plan));
  return plan;
}

py::dict BucketDict(const SymbolicPlanResult& r, const SymbolicBucket& b) {
  py::dict offsets, sizes;
  const SymbolicProblem bucket = TakeSymbolic(b.ProblemOf(r.plan.problem));
  const auto& buffers = bucket.buffers;
  for (size_t i = 0; i < buffers.size() && i < b.plan.offsets.size(); ++i) {
    offsets[py::str(buffers[i].name)] = b.plan.offsets[i].ToString();
    sizes[py::str(buffers[i].name)] = buffers[i].size.ToString();
  }
  py::dict d;
  d["dims"] = RangesTo(b.dims);
  d["peak"] = b.plan.peak.ToString();
  d["offsets"] = offsets;
  d["sizes"] = sizes;
  py::dict steps;
  for (const auto& [dim, step] : b.steps) steps[py::str(dim)] = step;
  d["steps"] = steps;
  d["planner"] = b.plan.planner;
  return d;
}

void BindGraphDims(py::module_& m) {
  auto tensor = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  // Tensor("x", "256*seq", ...): the size as an expression.
  tensor.def(py::init([](std::string name, const std::string& size,
                         const py::object& kind, Bytes alignment,
                         std::vector<int64_t> shape, std::string dtype) {
               Tensor out{.name = name,
                          .size = 0,
                          .kind = KindFrom(kind),
                          .alignment = alignment,
                          .pools = {},
                          .fixed = std::nullopt,
                          .shape = std::move(shape),
                          .dtype = std::move(dtype),
                          .symbolic_size = std::nullopt};
               absl::StatusOr<DimExpr> parsed = DimExpr::Parse(size);
               if (!parsed.ok()) {
                 RaiseSymbolic(absl::InvalidArgumentError(absl::StrCat(
                     "tensor \"", name, "\": ", parsed.status().message())));
               }
               out.symbolic_size = *std::move(parsed);
               return out;
             }),
             py::arg("name"), py::arg("size"), py::kw_only(),
             py::arg("kind") = "activation", py::arg("alignment") = 0,
             py::arg("shape") = std::vector<int64_t>{}, py::arg("dtype") = "");
  tensor.def_property(
      "symbolic_size",
      [](const Tensor& t) -> std::optional<std::string> {
        if (!t.symbolic_size.has_value()) return std::nullopt;
        return t.symbolic_size->ToString();
      },
      [](Tensor& t, std::optional<std::string> text) {
        if (!text.has_value()) {
          t.symbolic_size.reset();
          return;
        }
        absl::StatusOr<DimExpr> parsed = DimExpr::Parse(*text);
        if (!parsed.ok()) {
          RaiseSymbolic(absl::InvalidArgumentError(absl::StrCat(
              "tensor \"", t.name, "\": ", parsed.status().message())));
        }
        t.symbolic_size = *std::move(parsed);
        t.size = 0;  // until the dims are bound
      },
      "The size as an expression in the graph's dims (\"256*seq\"), or None "
      "for a fixed size; setting one sets `size` to 0 until the dims are "
      "bound");
  auto graph = py::reinterpret_borrow<py::class_<Graph>>(m.attr("Graph"));
  graph.def_property(
      "dims", [](const Graph& g) { return RangesTo(g.dims); },
      [](Graph& g, const RangeTuples& dims) { g.dims = RangesFrom(dims); },
      "{name: (min, max)}: the dims the tensors' symbolic sizes use, each "
      "every integer of [min, max]");
  m.def(
      "is_symbolic", [](const Graph& g) { return IsSymbolic(g); },
      py::arg("graph"),
      "True when the graph declares dims or a tensor has a symbolic size");
  m.def(
      "bind_dims",
      [](const Graph& g, const py::kwargs& values) {
        return TakeSymbolic(BindDims(g, ValuesFrom(values)));
      },
      py::arg("graph"),
      "The graph with the given dims bound (bind_dims(g, seq=128)): each "
      "value checked against its dim's range, sizes evaluated");
}

using SymbolicPlanClass = py::class_<SymbolicPlanResult>;

// SymbolicPlan's dims, buckets, buffers and planner.
void BindSymbolicPlanProperties(SymbolicPlanClass& plan) {
  plan.def_property_readonly(
          "dims",
          [](const SymbolicPlanResult& r) {
            return RangesTo(r.plan.problem.dims);
          },
          "{name: (min, max)} of the graph's dims")
      .def_property_readonly(
          "buckets",
          [](const SymbolicPlanResult& r) {
            py::list out;
            for (const SymbolicBucket& b : r.plan.buckets) {
              out.append(BucketDict(r, b));
            }
            return out;
          },
          "[{dims: {name: (min, max)}, peak: expression, offsets: {buffer: "
          "expression}, sizes: {buffer: the reserve over the bucket's "
          "ranges}, steps: {name: m} (the expressions are in name_div = "
          "value // m and name_mod = value % m instead of such a dim), "
          "planner}], in "
          "order of the cut dim's values")
      .def_property_readonly(
          "buffers",
          [](const SymbolicPlanResult& r) {
            py::list out;
            for (const SymbolicBuffer& b : r.plan.problem.buffers) {
              py::dict d;
              d["name"] = b.name;
              d["tensors"] = b.tensors;
              d["size"] = b.size.ToString();
              d["alignment"] = b.alignment;
              d["start"] = b.lifetime.start;
              d["end"] = b.lifetime.end;
              out.append(d);
            }
            return out;
          },
          "[{name, tensors, size (the reserve, an expression), alignment, "
          "start, end}] of the symbolic problem")
      .def_property_readonly("planner", [](const SymbolicPlanResult& r) {
        return r.plan.planner;
      });
}

// SymbolicPlan at given values of its dims: bucket(), peak(),
// lower_bound() and at().
void BindSymbolicPlanValues(SymbolicPlanClass& plan) {
  plan.def(
          "bucket",
          [](const SymbolicPlanResult& r, const py::kwargs& values) {
            return BucketDict(r, r.BucketOf(ValuesFrom(values)));
          },
          "The bucket holding the values (bucket(seq=N)), as in `buckets`")
      .def(
          "peak",
          [](const SymbolicPlanResult& r, const py::kwargs& values) {
            const DimValues v = ValuesFrom(values);
            return TakeSymbolic(r.BucketOf(v).PeakAt(v));
          },
          "The arena bytes at the values (peak(seq=N)): the peak expression "
          "of the bucket holding them, evaluated")
      .def(
          "lower_bound",
          [](const SymbolicPlanResult& r, const py::kwargs& values) {
            const DimValues v = ValuesFrom(values);
            r.CheckComplete(v);
            const SymbolicBucket& b = r.BucketOf(v);
            const SymbolicProblem bucket =
                TakeSymbolic(b.ProblemOf(r.plan.problem));
            return LowerBound(TakeSymbolic(bucket.At(StepValues(v, b.steps))));
          },
          "The lower bound of the sizes the plan reserves at the values, in "
          "the bucket holding them (lower_bound(seq=N)): a bucket may reserve "
          "more than a tensor needs at N, so this may exceed "
          "lower_bound_at(seq=N), the graph's own bound at N")
      .def(
          "lower_bound_at",
          [](const SymbolicPlanResult& r, const py::kwargs& values) {
            const DimValues v = ValuesFrom(values);
            r.CheckComplete(v);
            const Graph bound = TakeSymbolic(BindDims(r.graph, v));
            return LowerBound(Take(BuildProblem(bound, r.build)));
          },
          "The lower bound of the graph bound to the values "
          "(lower_bound_at(seq=N)): the most bytes alive at one step there, "
          "which no plan at N can go below; at(seq=N).lower_bound is the same")
      .def(
          "at",
          [](const SymbolicPlanResult& r, const py::kwargs& values) {
            const DimValues v = ValuesFrom(values);
            r.CheckComplete(v);
            GraphPlan at = TakeSymbolic(r.plan.At(r.graph, v));
            PlanResult result;
            result.build = r.build;
            result.graph = TakeSymbolic(BindDims(r.graph, v));
            result.op_order = at.op_order;
            result.problem = Take(BuildProblem(*result.graph, r.build));
            result.plan = OwnPlan(result.problem, at);
            result.Index();
            return result;
          },
          "The ordinary plan of the graph bound to the values (at(seq=N)): a "
          "PlanResult of that graph, as plan() returns for a concrete graph "
          "(verified; memplan.verify(bind_dims(graph, seq=N), plan) checks "
          "it again), with the offsets of the bucket holding the values. Its "
          "peak is the highest byte its buffers reach there, at most "
          "peak(seq=N)");
}

void BindSymbolicPlanChecks(SymbolicPlanClass& plan) {
  plan.def(
          "verify",
          [](const SymbolicPlanResult& r) {
            // Rebuilt from the graph: the plan must be one of that problem.
            SymbolicProblem problem =
                TakeSymbolic(BuildSymbolicProblem(r.graph, r.build));
            if (!(problem == r.plan.problem)) {
              Check(absl::InternalError(
                  "the plan's problem is not the graph's any more"));
            }
            CheckSymbolic(VerifySymbolicGraphPlan(r.plan));
          },
          "Proves every bucket over its ranges (no two buffers alive together "
          "share a byte at any value, every offset aligned, every buffer "
          "under the peak) and that the buckets cover the ranges; raises "
          "memplan.DimError naming the buffers and a failing value")
      .def("__repr__", [](const SymbolicPlanResult& r) {
        std::string dims;
        for (const auto& [name, range] : r.plan.problem.dims) {
          absl::StrAppend(&dims, dims.empty() ? "" : ", ", name, " in [",
                          range.min, ", ", range.max, "]");
        }
        return absl::StrCat("SymbolicPlan(\"", r.graph.name, "\", ", dims, ", ",
                            r.plan.buckets.size(), " bucket",
                            r.plan.buckets.size() == 1 ? "" : "s", ")");
      });
}

void BindSymbolicPlan(py::module_& m) {
  SymbolicPlanClass plan(
      m, "SymbolicPlan",
      "A plan of a symbolic graph valid at every value of its dims: buckets "
      "covering the ranges, each with offsets and a peak as expressions, "
      "proven over its ranges");
  BindSymbolicPlanProperties(plan);
  BindSymbolicPlanValues(plan);
  BindSymbolicPlanChecks(plan);

  m.def(
      "_plan_symbolic",
      [](const Graph& graph, int max_buckets, double target_ratio,
         Bytes alignment, Bytes capacity, bool plan_inputs, bool plan_outputs,
         const std::string& planner, std::optional<double> time_limit,
         std::optional<int64_t> work_limit, const py::object& progress) {
        SymbolicPlanMemoryOptions options;
        // The caller's callback runs with the GIL; its first exception stops
        // further calls and is raised once the plan is made.
        std::optional<py::error_already_set> error;
        if (!progress.is_none()) {
          options.progress = [&progress, &error](std::string_view line) {
            py::gil_scoped_acquire acquire;
            if (error.has_value()) return;
            try {
              progress(std::string(line));
            } catch (py::error_already_set& e) {
              error = std::move(e);
            }
          };
        }
        if (!planner.empty()) options.planner = planner;
        if (time_limit.has_value()) {
          if (*time_limit < 0) throw py::value_error("time_limit is negative");
          options.search.time_limit = absl::Seconds(*time_limit);
        }
        if (work_limit.has_value()) {
          if (*work_limit < 0) throw py::value_error("work_limit is negative");
          options.search.work_limit = *work_limit;
        }
        BuildArgs args{.alignment = alignment,
                       .pools = std::nullopt,
                       .capacity = capacity,
                       .plan_constants = false,
                       .plan_inputs = plan_inputs,
                       .plan_outputs = plan_outputs};
        options.build = args.Options();
        options.max_buckets = max_buckets;
        options.target_ratio = target_ratio;
        SymbolicPlanResult result{
            .plan = {}, .graph = graph, .build = options.build};
        absl::StatusOr<SymbolicGraphPlan> plan;
        {
          py::gil_scoped_release release;
          plan = PlanSymbolicMemory(graph, options);
          if (plan.ok()) {
            absl::Status proven = VerifySymbolicGraphPlan(*plan);
            if (!proven.ok()) plan = proven;
          }
        }
        if (error.has_value()) throw std::move(*error);
        result.plan = TakeSymbolic(std::move(plan));
        return result;
      },
      py::arg("graph"), py::kw_only(), py::arg("max_buckets") = 4,
      py::arg("target_ratio") = 1.02, py::arg("alignment") = 1,
      py::arg("capacity") = 0, py::arg("plan_inputs") = true,
      py::arg("plan_outputs") = true, py::arg("planner") = "",
      py::arg("time_limit") = std::nullopt,
      py::arg("work_limit") = std::nullopt, py::arg("progress") = py::none());
}

}  // namespace

void BindSymbolic(py::module_& m) {
  py::tuple bases =
      py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError));
  g_dim_error = PyErr_NewExceptionWithDoc(
      "memplan.DimError",
      "A symbolic graph's dims or sizes, or a value given for a dim, are "
      "wrong (the message names the dim or the value)",
      bases.ptr(), nullptr);
  if (g_dim_error == nullptr) throw py::error_already_set();
  m.add_object("DimError", py::reinterpret_borrow<py::object>(g_dim_error));
  BindGraphDims(m);
  BindSymbolicPlan(m);
}

}  // namespace memplan::python

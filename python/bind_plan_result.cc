// A plan as Python sees it: PlanResult (the plan with the problem it places,
// its tensors found by name) and the TensorPlacement it hands out.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "memplan/problem.h"
#include "memplan/tensor_placement.h"
#include "memplan/verify.h"
#include "module.h"

namespace memplan::python {

void PlanResult::Index() {
  buffer_of_tensor.clear();
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
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

namespace {

NamedPlacement PlacementOf(const PlanResult& r, const TensorPlacement& t) {
  return NamedPlacement{
      .tensor = t, .pool = t.planned() ? r.problem.pools[t.pool].name : ""};
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

void BindTensorPlacement(py::module_& m) {
  py::class_<NamedPlacement>(m, "TensorPlacement",
                             "Where one tensor of the graph lives (the C++ "
                             "TensorPlacement, with its pool's name)")
      .def_property_readonly(
          "name", [](const NamedPlacement& p) { return p.tensor.name; })
      .def_property_readonly(
          "kind",
          [](const NamedPlacement& p) {
            return std::string(TensorKindName(p.tensor.kind));
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
}

void DefPlanPlacements(py::class_<PlanResult>& cls) {
  cls.def_property_readonly(
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
          "reorder", [](const PlanResult& r) { return r.reorder; },
          "the op ordering that gave op_order: the reorder argument, or for "
          "reorder=\"placed\" the one it chose (\"\" = the graph's own "
          "order)")
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
          "no such tensor (as GraphPlan::Find)");
}

void DefPlanQueries(py::class_<PlanResult>& cls) {
  cls.def_property_readonly("peak",
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
          py::arg("tensor"), "the buffer a tensor lives in, as a dict");
}

void DefPlanEdits(py::class_<PlanResult>& cls) {
  cls.def(
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
          "invalid for its own problem");
}

}  // namespace

void BindPlanResult(py::module_& m) {
  BindTensorPlacement(m);
  py::class_<PlanResult> cls(m, "PlanResult");
  DefPlanPlacements(cls);
  DefPlanQueries(cls);
  DefPlanEdits(cls);
  DefPlanEmitters(cls);
  cls.def("__repr__", [](const PlanResult& r) {
    return absl::StrCat("PlanResult(planner=\"", r.plan.planner,
                        "\", peak=", r.plan.peak,
                        ", lower_bound=", r.plan.lower_bound, ")");
  });
}

}  // namespace memplan::python

// The value types as Python classes with keyword constructors: TensorKind,
// Tensor, Op, Pool, Graph, and the Buffer and Problem built from a graph.
#include <pybind11/operators.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "memplan/problem.h"
#include "memplan/types.h"
#include "module.h"

namespace memplan::python {

TensorKind KindFrom(const py::object& kind) {
  if (py::isinstance<TensorKind>(kind)) return kind.cast<TensorKind>();
  const std::string name = py::str(kind);
  for (TensorKind k :
       {TensorKind::kActivation, TensorKind::kInput, TensorKind::kOutput,
        TensorKind::kConstant, TensorKind::kScratch}) {
    if (TensorKindName(k) == name) return k;
  }
  throw py::value_error(
      absl::StrCat("unknown tensor kind \"", name,
                   "\"; valid: activation, input, output, constant, scratch"));
}

namespace {

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

// Tensor.source: {"module", "file", "line"} or None.
py::object SourceOf(const Tensor& t) {
  if (!t.source.has_value()) return py::none();
  py::dict d;
  d["module"] = t.source->module;
  d["file"] = t.source->file;
  d["line"] = t.source->line;
  return d;
}

void SetSource(Tensor& t, const py::object& source) {
  if (source.is_none()) {
    t.source.reset();
    return;
  }
  if (!py::isinstance<py::dict>(source)) {
    throw py::type_error(
        "Tensor.source must be a dict {\"module\", \"file\", \"line\"} or "
        "None");
  }
  const py::dict d = source.cast<py::dict>();
  for (const auto& [key, value] : d) {
    const std::string k = py::str(key);
    if (k != "module" && k != "file" && k != "line") {
      throw py::value_error("Tensor.source: unknown key \"" + k +
                            "\" (known: module, file, line)");
    }
  }
  TensorSource out;
  if (d.contains("module")) out.module = py::str(d["module"]);
  if (d.contains("file")) out.file = py::str(d["file"]);
  if (d.contains("line")) {
    const py::object line = d["line"];
    if (!py::isinstance<py::int_>(line) || py::isinstance<py::bool_>(line) ||
        line < py::int_(0) ||
        py::int_(std::numeric_limits<int32_t>::max()) < line) {
      throw py::value_error(
          "Tensor.source: \"line\" must be an int in [0, 2^31)");
    }
    out.line = line.cast<int64_t>();
  }
  t.source = std::move(out);
}

void BindTensor(py::module_& m) {
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
              t.fixed =
                  FixedTensorPlacement{.pool = f->first, .offset = f->second};
            }
          })
      .def_readwrite("shape", &Tensor::shape)
      .def_readwrite("dtype", &Tensor::dtype)
      // Where the tensor comes from in the traced program (informative,
      // shown by reports): {"module", "file", "line"}, or None.
      .def_property("source", &SourceOf, &SetSource)
      .def(py::self == py::self)
      .def("__repr__", [](const Tensor& t) {
        return absl::StrCat("Tensor(\"", t.name, "\", ", t.size, ", kind=\"",
                            std::string(TensorKindName(t.kind)), "\")");
      });
}

void BindOpAndPool(py::module_& m) {
  py::class_<Op>(m, "Op")
      .def(py::init([](std::string name, std::vector<std::string> inputs,
                       std::vector<std::string> outputs, std::string type,
                       std::vector<std::string> scratch,
                       std::vector<std::pair<int, int>> inplace,
                       std::vector<std::pair<int, int>> alias,
                       std::vector<int> writes, bool pinned,
                       std::optional<double> cost, bool recomputable) {
             return Op{.name = std::move(name),
                       .type = std::move(type),
                       .inputs = std::move(inputs),
                       .outputs = std::move(outputs),
                       .scratch = std::move(scratch),
                       .inplace = PairsFrom(inplace),
                       .alias = PairsFrom(alias),
                       .writes = std::move(writes),
                       .pinned = pinned,
                       .cost = cost,
                       .recomputable = recomputable};
           }),
           py::arg("name"), py::arg("inputs") = std::vector<std::string>{},
           py::arg("outputs") = std::vector<std::string>{}, py::kw_only(),
           py::arg("type") = "",
           py::arg("scratch") = std::vector<std::string>{},
           py::arg("inplace") = std::vector<std::pair<int, int>>{},
           py::arg("alias") = std::vector<std::pair<int, int>>{},
           py::arg("writes") = std::vector<int>{}, py::arg("pinned") = false,
           py::arg("cost") = std::nullopt, py::arg("recomputable") = false)
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
      .def_readwrite("pinned", &Op::pinned)
      // FLOPs or any consistent unit; None when unknown.
      .def_readwrite("cost", &Op::cost)
      .def_readwrite("recomputable", &Op::recomputable)
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
}

void BindGraphAndProblem(py::module_& m) {
  py::class_<Graph>(m, "Graph")
      .def(py::init(
               [](std::string name, std::vector<Tensor> tensors,
                  std::vector<Op> ops, std::vector<Pool> pools,
                  std::vector<std::pair<std::string, std::string>> conflicts) {
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
            for (const TensorConflict& c : g.conflicts)
              out.emplace_back(c.a, c.b);
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
}

// The graph of tensors given by their lifetimes in op steps, built in one
// call rather than one per tensor and op (memplan.executorch's arena graphs,
// one op per node of an ExecuTorch graph): tensor i (names[i], sizes[i],
// shapes[i], dtypes[i], `alignment`) is an output of op starts[i] and an
// input of op ends[i] when ends[i] > starts[i]; op t is "<op_prefix><t>",
// for every step t up to the last end (no op without a tensor).
Graph LifetimeGraph(std::string name, std::vector<std::string> names,
                    const std::vector<Bytes>& sizes,
                    const std::vector<int64_t>& starts,
                    const std::vector<int64_t>& ends,
                    std::vector<std::vector<int64_t>> shapes,
                    std::vector<std::string> dtypes, Bytes alignment, Pool pool,
                    const std::string& op_prefix) {
  const size_t n = names.size();
  if (sizes.size() != n || starts.size() != n || ends.size() != n ||
      shapes.size() != n || dtypes.size() != n) {
    throw py::value_error(
        "_lifetime_graph: names, sizes, starts, ends, shapes and dtypes must "
        "have one entry per tensor");
  }
  int64_t last = -1;
  for (size_t i = 0; i < n; ++i) {
    if (starts[i] < 0 || ends[i] < starts[i] ||
        ends[i] >= std::numeric_limits<int>::max()) {
      throw py::value_error(absl::StrCat(
          "_lifetime_graph: tensor \"", names[i], "\" has the lifetime [",
          starts[i], ", ", ends[i], "]; it must be 0 <= start <= end < ",
          std::numeric_limits<int>::max()));
    }
    last = std::max(last, ends[i]);
  }
  Graph graph;
  graph.name = std::move(name);
  graph.pools.push_back(std::move(pool));
  graph.ops.resize(static_cast<size_t>(last + 1));
  for (int64_t t = 0; t <= last; ++t) {
    graph.ops[t].name = absl::StrCat(op_prefix, t);
  }
  graph.tensors.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    graph.ops[starts[i]].outputs.push_back(names[i]);
    if (ends[i] > starts[i]) graph.ops[ends[i]].inputs.push_back(names[i]);
    Tensor& tensor = graph.tensors.emplace_back();
    tensor.name = std::move(names[i]);
    tensor.size = sizes[i];
    tensor.alignment = alignment;
    tensor.shape = std::move(shapes[i]);
    tensor.dtype = std::move(dtypes[i]);
  }
  return graph;
}

}  // namespace

void BindValues(py::module_& m) {
  BindTensor(m);
  BindOpAndPool(m);
  BindGraphAndProblem(m);
  m.def("_lifetime_graph", &LifetimeGraph, py::arg("name"), py::arg("names"),
        py::arg("sizes"), py::arg("starts"), py::arg("ends"), py::arg("shapes"),
        py::arg("dtypes"), py::arg("alignment"), py::arg("pool"),
        py::arg("op_prefix"));
}

}  // namespace memplan::python

// ImportOverRanges (symbolic_import.h): concrete imports at a grid of dim
// values, each size interpolated as a polynomial and checked at further
// values, the structure required the same everywhere.

#include "onnx/symbolic_import.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "memplan/symbolic.h"
#include "symbolic/binomial_poly.h"

namespace memplan::internal {
namespace {

// The ranged dims, in name order, with the points of each.
struct Grid {
  DimBox box;
  std::vector<int> points;      // interpolation points per dim: t = 0..points-1
  std::vector<int64_t> stride;  // of dim d in a point's index (dim 0 lowest)
  int64_t size = 1;             // points in all

  int dims() const { return box.size(); }
  // The box coordinates of point `index`.
  std::vector<int64_t> Coordinates(int64_t index) const {
    std::vector<int64_t> t(dims());
    for (int d = 0; d < dims(); ++d) {
      t[d] = index / stride[d] % points[d];
    }
    return t;
  }
  // The range is wider than its interpolation points: its degree is found
  // by a vanishing difference, and further values are checked.
  bool Sampled(int d) const { return box.max[d] - box.min[d] + 1 > points[d]; }
};

std::string Describe(const DimValues& values) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : values) {
    parts.push_back(absl::StrCat(name, "=", value));
  }
  return absl::StrJoin(parts, ", ");
}

// "--dim seq=VALUE" for each dim of `names`.
std::string BindAdvice(const std::vector<std::string>& names) {
  std::vector<std::string> flags;
  for (const std::string& name : names) {
    flags.push_back(absl::StrCat("--dim ", name, "=VALUE"));
  }
  return absl::StrCat("; bind ", names.size() == 1 ? "it" : "them", " with ",
                      absl::StrJoin(flags, " "));
}

// The dims whose values differ between two bindings.
std::vector<std::string> Differing(const DimValues& a, const DimValues& b) {
  std::vector<std::string> names;
  for (const auto& [name, value] : a) {
    if (b.at(name) != value) names.push_back(name);
  }
  return names;
}

// The graph without its sizes and shapes: what must not depend on the dims.
Graph Structure(Graph graph) {
  for (Tensor& t : graph.tensors) {
    t.size = 0;
    t.shape.assign(t.shape.size(), 0);  // the rank stays
  }
  return graph;
}

// What differs between the structures `a` (at `at_a`) and `b` (at `at_b`),
// naming the first op or tensor that does.
absl::Status StructureChanged(const Graph& a, const DimValues& at_a,
                              const Graph& b, const DimValues& at_b) {
  std::string what;
  if (a.ops.size() != b.ops.size()) {
    what = absl::StrCat("it has ", a.ops.size(), " ops at ", Describe(at_a),
                        " but ", b.ops.size(), " at ", Describe(at_b));
  } else if (a.tensors.size() != b.tensors.size()) {
    what = absl::StrCat("it has ", a.tensors.size(), " tensors at ",
                        Describe(at_a), " but ", b.tensors.size(), " at ",
                        Describe(at_b));
  }
  for (size_t i = 0; what.empty() && i < a.ops.size(); ++i) {
    const Op& x = a.ops[i];
    const Op& y = b.ops[i];
    if (x == y) continue;
    const char* part = x.inplace != y.inplace ? "in-place hints"
                       : x.alias != y.alias   ? "view (alias) hints"
                                              : "operands";
    what = absl::StrCat("op \"", x.name, "\" (", x.type, ") has other ", part,
                        " at ", Describe(at_b), " than at ", Describe(at_a));
  }
  for (size_t i = 0; what.empty() && i < a.tensors.size(); ++i) {
    const Tensor& x = a.tensors[i];
    const Tensor& y = b.tensors[i];
    if (x == y) continue;
    const std::string part =
        x.shape.size() != y.shape.size()
            ? absl::StrCat("rank ", y.shape.size(), " at ", Describe(at_b),
                           " but ", x.shape.size(), " at ", Describe(at_a))
            : absl::StrCat("another name, kind or type at ", Describe(at_b),
                           " than at ", Describe(at_a));
    what = absl::StrCat("tensor \"", x.name, "\" has ", part);
  }
  if (what.empty()) what = "its pools or conflicts differ";
  const std::vector<std::string> dims = Differing(at_a, at_b);
  return absl::InvalidArgumentError(absl::StrCat(
      "the graph's structure changes with dim", dims.size() == 1 ? " " : "s ",
      absl::StrJoin(dims, ", "), ": ", what, BindAdvice(dims)));
}

// Imports at `values`, the error saying where.
absl::StatusOr<Graph> ImportAtValues(const ImportAt& import,
                                     const DimValues& values,
                                     OnnxImportStats* stats) {
  absl::StatusOr<Graph> graph = import(values, stats);
  if (!graph.ok()) {
    return absl::Status(
        graph.status().code(),
        absl::StrCat("at ", Describe(values), ": ", graph.status().message()));
  }
  return graph;
}

// The values of dim d checked after interpolation, besides its minimum: its
// maximum and values in between, none of them an interpolation point. Fewer
// with more dims, as their product is imported.
std::vector<int64_t> CheckValues(const Grid& grid, int d) {
  if (!grid.Sampled(d)) return {};
  const int64_t lo = grid.box.min[d];
  const int64_t hi = grid.box.max[d];
  const int64_t mid = lo + (hi - lo) / 2;
  std::vector<int64_t> candidates = {hi, mid, lo + grid.points[d]};
  if (grid.dims() <= 2) {
    candidates.push_back(hi - 1);
  }
  if (grid.dims() == 1) {
    candidates.push_back(mid + 1);
    candidates.push_back(lo + (hi - lo) / 3);
  }
  std::vector<int64_t> values;
  for (int64_t v : candidates) {
    if (v - lo >= grid.points[d] && v <= hi &&
        std::find(values.begin(), values.end(), v) == values.end()) {
      values.push_back(v);
    }
  }
  std::sort(values.begin(), values.end());
  return values;
}

// The interpolation grid over `ranges`: up to kInterpolationPoints values
// of each dim from its minimum.
absl::StatusOr<Grid> MakeGrid(const DimRanges& ranges) {
  Grid grid;
  MEMPLAN_ASSIGN_OR_RETURN(grid.box, DimBox::Of(ranges));
  for (const auto& [name, range] : ranges) {
    if (range.min < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("dim \"", name, "\" has range [", range.min, ", ",
                       range.max, "]; an ONNX dimension must be >= 1"));
    }
    grid.points.push_back(static_cast<int>(
        std::min<int64_t>(kInterpolationPoints, range.max - range.min + 1)));
    grid.stride.push_back(grid.size);
    grid.size *= grid.points.back();
  }
  return grid;
}

// What the imports gave: the first import (at the all-minimum point), its
// structure, every tensor's size at each grid point and which of its shape's
// dimensions varied.
struct Samples {
  Samples(Graph first_graph, DimValues at, int64_t grid_size)
      : first(std::move(first_graph)),
        structure(Structure(first)),
        at_min(std::move(at)),
        n(first.tensors.size()),
        sizes(n, std::vector<int64_t>(grid_size)),
        varies(n) {
    for (size_t i = 0; i < n; ++i) {
      varies[i].assign(first.tensors[i].shape.size(), false);
    }
  }

  // Records the import `g` at `at`, grid point `index` (-1: off the grid).
  absl::Status Record(const Graph& g, int64_t index, const DimValues& at) {
    if (!(Structure(g) == structure)) {
      return StructureChanged(structure, at_min, Structure(g), at);
    }
    for (size_t i = 0; i < n; ++i) {
      const Tensor& t = g.tensors[i];
      if (index >= 0) sizes[i][index] = t.size;
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (t.shape[d] != first.tensors[i].shape[d]) varies[i][d] = true;
      }
    }
    return absl::OkStatus();
  }

  Graph first;
  Graph structure;
  DimValues at_min;
  size_t n;
  std::vector<std::vector<int64_t>> sizes;
  std::vector<std::vector<bool>> varies;
};

// The size of tensor `t` interpolated from `sizes` (its sizes at the grid
// points): degree at most kMaxImportDegree in each sampled dim, the
// difference past it zero. Sets t.symbolic_size (and t.size to 0) unless
// the size is constant.
absl::Status InterpolateSize(const Grid& grid,
                             const std::vector<int64_t>& sizes, Tensor& t) {
  absl::StatusOr<BinomialPoly> poly =
      BinomialPoly::FromValues(grid.points, sizes);
  if (!poly.ok()) {  // overflow, its only failure
    return absl::InvalidArgumentError(
        absl::StrCat("tensor \"", t.name, "\": a size difference overflows"));
  }
  for (int d = 0; d < grid.dims(); ++d) {
    if (!grid.Sampled(d)) continue;
    for (const auto& [key, c] : poly->terms()) {
      if (BinomialPoly::Power(key, d) != grid.points[d] - 1) continue;
      std::vector<std::string> seen;
      for (int j = 0; j < grid.points[d]; ++j) {
        seen.push_back(absl::StrCat(sizes[j * grid.stride[d]]));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", t.name,
          "\": its size is no polynomial of degree <= ", kMaxImportDegree,
          " in dim \"", grid.box.names[d], "\" (", grid.box.names[d], " = ",
          grid.box.min[d], "..", grid.box.min[d] + grid.points[d] - 1,
          " gives ", absl::StrJoin(seen, ", "), " bytes)",
          BindAdvice({grid.box.names[d]})));
    }
  }
  if (!poly->HasIntegerExpr()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor \"", t.name,
        "\": its size is no polynomial with integer coefficients in dims ",
        absl::StrJoin(grid.box.names, ", "), BindAdvice(grid.box.names)));
  }
  MEMPLAN_ASSIGN_OR_RETURN(DimExpr size, poly->ToExpr(grid.box));
  if (size.IsConstant()) return absl::OkStatus();  // the size everywhere
  t.size = 0;
  t.symbolic_size = std::move(size);
  return absl::OkStatus();
}

// Fresh imports check `result`'s sizes: the minimum and the check values of
// each dim, every combination but the all-minimum point.
absl::Status CheckFreshValues(const Grid& grid, const ImportAt& import,
                              const Graph& result, Samples& samples) {
  std::vector<std::vector<int64_t>> values(grid.dims());
  int64_t combinations = 1;
  for (int d = 0; d < grid.dims(); ++d) {
    values[d].push_back(grid.box.min[d]);
    for (int64_t v : CheckValues(grid, d)) values[d].push_back(v);
    combinations *= static_cast<int64_t>(values[d].size());
  }
  for (int64_t index = 1; index < combinations; ++index) {
    DimValues at;
    int64_t rest = index;
    for (int d = 0; d < grid.dims(); ++d) {
      const int64_t count = static_cast<int64_t>(values[d].size());
      at[grid.box.names[d]] = values[d][rest % count];
      rest /= count;
    }
    MEMPLAN_ASSIGN_OR_RETURN(Graph g, ImportAtValues(import, at, nullptr));
    MEMPLAN_RETURN_IF_ERROR(samples.Record(g, -1, at));
    for (size_t i = 0; i < samples.n; ++i) {
      const Tensor& t = result.tensors[i];
      absl::StatusOr<int64_t> expected = t.symbolic_size.has_value()
                                             ? t.symbolic_size->Evaluate(at)
                                             : absl::StatusOr<int64_t>(t.size);
      if (expected.ok() && *expected == g.tensors[i].size) continue;
      const std::vector<std::string> dims = Differing(samples.at_min, at);
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", t.name, "\": its size is ",
          t.symbolic_size.has_value() ? t.symbolic_size->ToString()
                                      : absl::StrCat(t.size),
          " bytes at the values interpolated, but ", g.tensors[i].size,
          " (not ", expected.ok() ? absl::StrCat(*expected) : "representable",
          ") at ", Describe(at), ": it is no polynomial in dim",
          dims.size() == 1 ? " " : "s ", absl::StrJoin(dims, ", "),
          " (a division or a clamp in the shape computation?)",
          BindAdvice(dims)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Graph> ImportOverRanges(const DimRanges& ranges,
                                       const ImportAt& import,
                                       OnnxImportStats* stats) {
  MEMPLAN_RETURN_IF_ERROR(ValidateDimRanges(ranges));
  if (static_cast<int>(ranges.size()) > kMaxRangedDims) {
    return absl::InvalidArgumentError(absl::StrCat(
        ranges.size(), " dims are given ranges; at most ", kMaxRangedDims,
        " are supported (bind the others with "
        "--dim NAME=VALUE)"));
  }
  MEMPLAN_ASSIGN_OR_RETURN(const Grid grid, MakeGrid(ranges));

  // The imports at the grid: the first is the structure and the shapes.
  const DimValues at_min = grid.box.ValuesAt(grid.Coordinates(0));
  MEMPLAN_ASSIGN_OR_RETURN(Graph first, ImportAtValues(import, at_min, stats));
  Samples samples(std::move(first), at_min, grid.size);
  MEMPLAN_RETURN_IF_ERROR(samples.Record(samples.first, 0, at_min));
  for (int64_t index = 1; index < grid.size; ++index) {
    const DimValues at = grid.box.ValuesAt(grid.Coordinates(index));
    MEMPLAN_ASSIGN_OR_RETURN(Graph g, ImportAtValues(import, at, nullptr));
    MEMPLAN_RETURN_IF_ERROR(samples.Record(g, index, at));
  }

  Graph result = samples.first;
  result.dims = ranges;
  for (size_t i = 0; i < samples.n; ++i) {
    MEMPLAN_RETURN_IF_ERROR(
        InterpolateSize(grid, samples.sizes[i], result.tensors[i]));
  }
  if (absl::Status valid = ValidateSymbolicSizes(result); !valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(valid.message(), BindAdvice(grid.box.names)));
  }
  MEMPLAN_RETURN_IF_ERROR(CheckFreshValues(grid, import, result, samples));
  // Shapes: -1 where a dim's value varied among the imports.
  for (size_t i = 0; i < samples.n; ++i) {
    Tensor& t = result.tensors[i];
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (samples.varies[i][d]) t.shape[d] = -1;
    }
  }
  return result;
}

}  // namespace memplan::internal

// Graphs with symbolic sizes: checks and binding.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"

namespace memplan {

absl::Status ValidateSymbolicSizes(const Graph& graph) {
  MEMPLAN_RETURN_IF_ERROR(ValidateDimRanges(graph.dims));
  DimValues maxima;
  for (const auto& [name, range] : graph.dims) maxima[name] = range.max;
  for (const Tensor& t : graph.tensors) {
    if (!t.symbolic_size.has_value()) continue;
    const DimExpr& size = *t.symbolic_size;
    const std::string where =
        absl::StrCat("tensor \"", t.name, "\": size \"", size.ToString(), "\"");
    for (const std::string& dim : size.Dims()) {
      if (!graph.dims.contains(dim)) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, " uses dim \"", dim,
                         "\", which the graph does not declare in \"dims\""));
      }
    }
    for (const auto& [monomial, coefficient] : size.terms()) {
      if (coefficient < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            where,
            " has a negative term; a size is a sum of non-negative "
            "terms"));
      }
    }
    // Non-negative terms over non-negative dims: the value is largest at the
    // maxima, so every value in the range fits when this one does.
    absl::StatusOr<int64_t> largest = size.Evaluate(maxima);
    if (!largest.ok() || *largest > kMaxBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " exceeds the largest supported size, ",
                       kMaxBytes, " (2^62), at the dims' maxima"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Graph> BindDims(const Graph& graph, const DimValues& values) {
  return BindDims(Graph(graph), values);
}

absl::StatusOr<Graph> BindDims(Graph&& graph, const DimValues& values) {
  MEMPLAN_RETURN_IF_ERROR(ValidateSymbolicSizes(graph));
  MEMPLAN_RETURN_IF_ERROR(CheckDimValues(graph.dims, values));
  Graph bound = std::move(graph);
  if (values.empty()) return bound;
  for (const auto& [name, value] : values) bound.dims.erase(name);
  for (Tensor& t : bound.tensors) {
    if (!t.symbolic_size.has_value()) continue;
    absl::StatusOr<DimExpr> size = t.symbolic_size->Bind(values);
    if (!size.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor \"", t.name, "\": ", size.status().message()));
    }
    if (size->IsConstant()) {
      t.size = size->ConstantTerm();
      t.symbolic_size.reset();
    } else {
      t.symbolic_size = *std::move(size);
    }
  }
  return bound;
}

}  // namespace memplan

// ONNX dim_params given ranges (OnnxImportOptions::dim_ranges): the model
// imported as a symbolic graph whose sizes are polynomials in the dims.
//
// ONNX shape inference is concrete, so the sizes are found from concrete
// imports: at the grid of the first kInterpolationPoints values of each
// ranged dim (all of its values when the range is narrower), each tensor's
// size is interpolated in the binomial basis (forward differences, as in
// src/symbolic/binomial_poly.h), of degree at most kMaxImportDegree in each dim
// (the next difference must vanish). The polynomials are then checked
// against fresh imports at further values of each dim (its maximum, values
// in between), and the graph's structure (ops, tensors, names, kinds, view
// and in-place hints) must be the same at every point imported.
//
// What that proves: the sizes are exact at every point imported, and they
// are the only polynomials of that degree through the interpolation grid.
// Between the points checked, a size that is a polynomial of degree at most
// kMaxImportDegree in each dim is exact; a shape computation that is not
// (a floor division, a clamp, a branch on a size) could differ between the
// points checked without being seen. docs/symbolic.md says so for users.

#ifndef MEMPLAN_ONNX_SYMBOLIC_IMPORT_H_
#define MEMPLAN_ONNX_SYMBOLIC_IMPORT_H_

#include <functional>

#include "absl/status/statusor.h"
#include "memplan/dim_expr.h"
#include "memplan/onnx.h"
#include "memplan/types.h"

namespace memplan::internal {

inline constexpr int kMaxImportDegree = 3;
inline constexpr int kInterpolationPoints = kMaxImportDegree + 2;
// Ranged dims at most: the imports grow as kInterpolationPoints^dims.
inline constexpr int kMaxRangedDims = 3;

// The concrete import with the ranged dims bound to `values`; `stats`, when
// not null, receives its counts.
using ImportAt = std::function<absl::StatusOr<Graph>(const DimValues& values,
                                                     OnnxImportStats* stats)>;

// The symbolic graph over `ranges` (each min >= 1), as above. Errors name
// the tensor or op and the dim, and suggest binding it with --dim.
absl::StatusOr<Graph> ImportOverRanges(const DimRanges& ranges,
                                       const ImportAt& import,
                                       OnnxImportStats* stats);

}  // namespace memplan::internal

#endif  // MEMPLAN_ONNX_SYMBOLIC_IMPORT_H_

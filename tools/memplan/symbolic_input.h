// Symbolic graphs in the tool: a graph JSON read with its dims unbound, and
// the values --dim and --at give them.

#ifndef MEMPLAN_TOOLS_MEMPLAN_SYMBOLIC_INPUT_H_
#define MEMPLAN_TOOLS_MEMPLAN_SYMBOLIC_INPUT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/dim_expr.h"
#include "memplan/types.h"

namespace memplan::tool {

// The values of --dim, by dim.
absl::StatusOr<DimValues> DimFlagValues();

// INPUT when it is a graph JSON with symbolic dims, with the dims of `bind`
// bound (BindDims); nullopt for any other input (ONNX, a buffer CSV, a
// graph without dims, or one whose dims `bind` binds every one of), which
// the ordinary path reads. `path` is read again there: a file that is not
// a valid graph JSON is left to that path's error.
absl::StatusOr<std::optional<Graph>> ReadSymbolicGraph(const std::string& path,
                                                       const DimValues& bind);

// The values to evaluate a symbolic graph's figures at: the dims' minima,
// their maxima, then one value per --at NAME=VALUE (that dim at VALUE, the
// others at their maxima), without repeats. An --at naming a dim the graph
// lacks or a value outside the range is an error naming both.
absl::StatusOr<std::vector<DimValues>> EvaluationPoints(const DimRanges& dims);

// "seq in [1, 2048], batch in [1, 8]".
std::string RangesText(const DimRanges& dims);
// "seq=500, batch=8".
std::string ValuesText(const DimValues& values);

}  // namespace memplan::tool

#endif  // MEMPLAN_TOOLS_MEMPLAN_SYMBOLIC_INPUT_H_

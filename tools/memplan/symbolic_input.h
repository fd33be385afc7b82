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

// INPUT with the dims --dim gives no value left symbolic (LoadSymbolicInput
// of input.h: --dim's ranges applied, its values bound with `bind_values`);
// nullopt when nothing stays symbolic, which the ordinary path reads.
absl::StatusOr<std::optional<Graph>> ReadSymbolicGraph(const std::string& path,
                                                       bool bind_values);

// The values to evaluate a symbolic graph's figures at: the dims' minima,
// their maxima, then one value per --at NAME=VALUE (that dim at VALUE, the
// others at their maxima), without repeats. An --at naming a dim the graph
// lacks or a value outside the range is an error naming both.
absl::StatusOr<std::vector<DimValues>> EvaluationPoints(const DimRanges& dims);

// "seq in [1, 2048], batch in [1, 8]".
std::string RangesText(const DimRanges& dims);
// "seq=500, batch=8".
std::string ValuesText(const DimValues& values);
// The steps a bucket's expressions count dims in: ", seq in steps of 4
// (seq_div = seq / 4, seq_mod = seq % 4)", or "" without steps.
std::string StepsText(const DimValues& steps);

}  // namespace memplan::tool

#endif  // MEMPLAN_TOOLS_MEMPLAN_SYMBOLIC_INPUT_H_

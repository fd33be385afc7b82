// A dim's range as messages write it (not public API).

#ifndef MEMPLAN_SYMBOLIC_RANGE_TEXT_H_
#define MEMPLAN_SYMBOLIC_RANGE_TEXT_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "memplan/dim_expr.h"

namespace memplan::internal {

// "[1, 2048]".
inline std::string RangeText(const DimRange& r) {
  return absl::StrCat("[", r.min, ", ", r.max, "]");
}

}  // namespace memplan::internal

#endif  // MEMPLAN_SYMBOLIC_RANGE_TEXT_H_

// exact's decomposition (not public): the problem in units of its granule,
// cut into parts between which no point in time is crossed, each with its
// time sections, floors, loads, interchangeable items and static orders.

#ifndef MEMPLAN_PLANNERS_EXACT_DECOMPOSE_H_
#define MEMPLAN_PLANNERS_EXACT_DECOMPOSE_H_

#include <vector>

#include "exact_part.h"
#include "memplan/types.h"

namespace memplan::internal::exact {

// The problem cut into parts, in units of `granule` bytes.
struct Decomposition {
  Bytes granule = 1;
  std::vector<Part> parts;
  std::vector<BufferId> fixed;  // buffers with a fixed placement
  bool complete = true;         // every part's search is complete
};

// The parts of `problem` (a single part of every sized buffer unless
// `split`), largest lower bound first.
Decomposition Decompose(const Problem& problem, bool split);

}  // namespace memplan::internal::exact

#endif  // MEMPLAN_PLANNERS_EXACT_DECOMPOSE_H_

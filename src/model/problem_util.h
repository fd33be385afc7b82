// Helpers on a Problem that planners share: the words that name a buffer,
// the error of one that fits nowhere, a start returned as a plan (not
// public API; defined in problem.cc).

#ifndef MEMPLAN_MODEL_PROBLEM_UTIL_H_
#define MEMPLAN_MODEL_PROBLEM_UTIL_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "memplan/types.h"

namespace memplan::internal {

// "buffer "x" (1024 bytes, alive [3, 7))".
std::string DescribeBuffer(const Problem& problem, BufferId buffer);

// The ResourceExhausted error of a buffer that fits in no allowed pool.
// `usage[p]` is the bytes pool p already holds during the buffer's lifetime
// (for instance the highest offset + size among buffers alive then).
absl::Status NoFitError(const Problem& problem, BufferId buffer,
                        std::span<const Bytes> usage);

// The capacities of the problem's pools added up (saturating at the
// largest Bytes), or nullopt when a pool is unbounded (capacity 0) or there
// is none: what the lower bound must not exceed for a plan to fit.
std::optional<Bytes> TotalCapacity(const Problem& problem);

// A search's start (verified, with its statistics: Incumbent::Get) as the
// search's own plan, when the search returns it unsearched: renamed, and
// proven optimal exactly when the bound proves it (AtTheBound).
Plan StartAsPlanOf(const Problem& problem, Plan start,
                   std::string_view planner);

}  // namespace memplan::internal

#endif  // MEMPLAN_MODEL_PROBLEM_UTIL_H_

// The planner interface and the registry of planners.

#ifndef MEMPLAN_PLANNER_H_
#define MEMPLAN_PLANNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "memplan/types.h"

namespace memplan {

struct PlanOptions {
  // Wall-clock budget. Heuristics ignore it when they are faster; search
  // planners return their best plan (not proven optimal) when it runs out.
  absl::Duration time_limit = absl::Seconds(10);
  // Seed of every random choice, so that the same input gives the same plan.
  uint64_t seed = 0;
  // Worker threads for planners that can use them.
  int threads = 1;
};

// A planner places every buffer of a whole Problem at once.
//   * Deterministic: the same problem and options give the same plan.
//   * Respects pools (in preference order), capacities, alignment, allowed
//     pools, fixed placements and explicit conflicts.
//   * A buffer that fits nowhere is ResourceExhausted naming the buffer, its
//     size and lifetime, and the pools' usage at that time.
//   * Never returns a plan the verifier rejects.
class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string_view name() const = 0;
  virtual absl::StatusOr<Plan> Solve(const Problem& problem,
                                     const PlanOptions& options) const = 0;
};

struct PlannerInfo {
  std::string_view name;
  std::string_view description;  // one line: what it does
};

// Every registered planner, in the registry's order.
std::vector<PlannerInfo> RegisteredPlanners();

// NotFound (listing the valid names) when `name` is not registered.
absl::StatusOr<std::unique_ptr<Planner>> CreatePlanner(std::string_view name);

// The planner PlanMemory() and the tool use when none is named.
std::string_view DefaultPlannerName();

}  // namespace memplan

#endif  // MEMPLAN_PLANNER_H_

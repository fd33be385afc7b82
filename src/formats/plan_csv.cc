// Plan CSV: a buffer CSV with an offset column (and a pool column for
// several pools) read as a plan of a given problem (memplan/io.h).
// BufferCsvText writes it.

#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/formats.h"
#include "memplan/problem.h"

namespace memplan {

absl::StatusOr<Plan> ParsePlanCsv(std::string_view text,
                                  const Problem& problem) {
  MEMPLAN_ASSIGN_OR_RETURN(BufferCsv csv, ParseBufferCsv(text));
  if (!csv.plan.has_value()) {
    return absl::InvalidArgumentError(
        "the CSV has no offset column, so it is no plan");
  }
  absl::flat_hash_map<std::string, BufferId> buffer_by_name;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    buffer_by_name.emplace(problem.buffers[b].name, b);
  }
  absl::flat_hash_map<std::string, PoolId> pool_by_name;
  for (PoolId p = 0; p < static_cast<PoolId>(problem.pools.size()); ++p) {
    pool_by_name.emplace(problem.pools[p].name, p);
  }
  Plan plan;
  plan.planner = "csv";
  for (const Assignment& a : csv.plan->assignments) {
    const std::string& name = csv.problem.buffers[a.buffer].name;
    auto b = buffer_by_name.find(name);
    if (b == buffer_by_name.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the plan places \"", name,
                       "\", which is no planned buffer of the "
                       "input"));
    }
    PoolId pool = 0;
    if (csv.pool_column) {
      const std::string& pool_name = csv.problem.pools[a.pool].name;
      auto p = pool_by_name.find(pool_name);
      if (p == pool_by_name.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the plan places \"", name, "\" in unknown pool \"",
                         pool_name, "\""));
      }
      pool = p->second;
    }
    plan.assignments.push_back(
        {.buffer = b->second, .pool = pool, .offset = a.offset});
  }
  ComputePlanStatistics(problem, plan);
  return plan;
}

}  // namespace memplan

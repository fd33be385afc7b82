// Problem checks, bounds and plan statistics.

#include "memplan/problem.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "memplan/internal/planner_util.h"
#include "memplan/internal/status_macros.h"

namespace memplan {

using internal::IsPowerOfTwo;

absl::Status ValidatePools(const std::vector<Pool>& pools) {
  absl::flat_hash_set<std::string> pool_names;
  for (const Pool& pool : pools) {
    if (pool.name.empty()) {
      return absl::InvalidArgumentError("a pool has no name");
    }
    if (!pool_names.insert(pool.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("pool \"", pool.name, "\" is defined twice"));
    }
    if (pool.capacity < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pool \"", pool.name, "\" has a negative capacity ", pool.capacity));
    }
    if (!IsPowerOfTwo(pool.alignment)) {
      return absl::InvalidArgumentError(
          absl::StrCat("pool \"", pool.name, "\" has alignment ",
                       pool.alignment, ", which is not a power of two"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Pool>> ResolvePools(
    const std::vector<Pool>& declared, const BuildOptions& options) {
  if (!IsPowerOfTwo(options.alignment)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "alignment ", options.alignment, " is not a power of two"));
  }
  if (options.capacity < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("capacity ", options.capacity, " is negative"));
  }
  std::vector<Pool> pools = !options.pools.empty() ? options.pools : declared;
  if (pools.empty()) {
    pools.push_back(Pool{.name = "default", .capacity = 0, .alignment = 1});
  }
  if (options.capacity > 0) {
    if (pools.size() != 1) {
      return absl::InvalidArgumentError(
          "a capacity option applies to a single pool; set each pool's "
          "capacity instead");
    }
    pools[0].capacity = options.capacity;
  }
  MEMPLAN_RETURN_IF_ERROR(ValidatePools(pools));
  return pools;
}

absl::Status ValidateProblem(const Problem& problem) {
  if (problem.pools.empty()) {
    return absl::InvalidArgumentError("the problem has no pool");
  }
  MEMPLAN_RETURN_IF_ERROR(ValidatePools(problem.pools));
  const int num_pools = static_cast<int>(problem.pools.size());
  Bytes total = 0;
  for (const Buffer& b : problem.buffers) {
    const std::string who = absl::StrCat("buffer \"", b.name, "\"");
    if (b.size < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(who, " has a negative size ", b.size));
    }
    if (!IsPowerOfTwo(b.alignment)) {
      return absl::InvalidArgumentError(
          absl::StrCat(who, " has alignment ", b.alignment,
                       ", which is not a power of two"));
    }
    if (b.size % b.alignment != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(who, " has size ", b.size,
                       ", not a multiple of its alignment ", b.alignment));
    }
    if (b.lifetime.start >= b.lifetime.end) {
      return absl::InvalidArgumentError(
          absl::StrCat(who, " has an empty lifetime [", b.lifetime.start, ", ",
                       b.lifetime.end, ")"));
    }
    for (PoolId p : b.pools) {
      if (p < 0 || p >= num_pools) {
        return absl::InvalidArgumentError(
            absl::StrCat(who, " allows pool #", p, ", which does not exist"));
      }
    }
    if (b.fixed.has_value()) {
      const PoolId p = b.fixed->pool;
      if (p < 0 || p >= num_pools) {
        return absl::InvalidArgumentError(absl::StrCat(
            who, " is fixed in pool #", p, ", which does not exist"));
      }
      const Bytes align = std::max(b.alignment, problem.pools[p].alignment);
      if (b.fixed->offset < 0 || b.fixed->offset % align != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(who, " has fixed offset ", b.fixed->offset,
                         ", not a non-negative multiple of ", align));
      }
      if (b.fixed->offset > std::numeric_limits<Offset>::max() - b.size) {
        return absl::InvalidArgumentError(
            absl::StrCat(who, " has a fixed offset that overflows int64"));
      }
    }
    if (b.size > std::numeric_limits<Bytes>::max() - total) {
      return absl::InvalidArgumentError(
          absl::StrCat("the sizes of the buffers overflow int64 at ", who));
    }
    total += b.size;
  }
  const int n = static_cast<int>(problem.buffers.size());
  for (const BufferConflict& c : problem.conflicts) {
    if (c.a < 0 || c.a >= n || c.b < 0 || c.b >= n || c.a == c.b) {
      return absl::InvalidArgumentError(absl::StrCat(
          "explicit conflict (", c.a, ", ", c.b, ") names no pair of buffers"));
    }
  }
  return absl::OkStatus();
}

Bytes NaiveTotal(const Problem& problem) {
  Bytes total = 0;
  for (const Buffer& b : problem.buffers) total += b.size;
  return total;
}

Bytes LowerBound(const Problem& problem) {
  // Ends sort before starts at the same step: lifetimes are half-open.
  std::vector<std::pair<Step, Bytes>> events;
  events.reserve(2 * problem.buffers.size());
  for (const Buffer& b : problem.buffers) {
    events.emplace_back(b.lifetime.start, b.size);
    events.emplace_back(b.lifetime.end, -b.size);
  }
  std::sort(events.begin(), events.end());
  Bytes live = 0;
  Bytes best = 0;
  for (const auto& [step, delta] : events) {
    live += delta;
    best = std::max(best, live);
  }
  return best;
}

Bytes EffectiveAlignment(const Problem& problem, BufferId buffer, PoolId pool) {
  return std::max(problem.buffers[buffer].alignment,
                  problem.pools[pool].alignment);
}

std::vector<PoolId> AllowedPools(const Problem& problem, BufferId buffer) {
  const Buffer& b = problem.buffers[buffer];
  if (!b.pools.empty()) return b.pools;
  std::vector<PoolId> all(problem.pools.size());
  for (PoolId p = 0; p < static_cast<PoolId>(all.size()); ++p) all[p] = p;
  return all;
}

void ComputePlanStatistics(const Problem& problem, Plan& plan) {
  plan.pool_used.assign(problem.pools.size(), 0);
  for (const Assignment& a : plan.assignments) {
    if (a.buffer < 0 ||
        a.buffer >= static_cast<BufferId>(problem.buffers.size()) ||
        a.pool < 0 || a.pool >= static_cast<PoolId>(problem.pools.size())) {
      continue;  // the verifier reports it
    }
    const Bytes size = problem.buffers[a.buffer].size;
    if (size == 0) continue;
    plan.pool_used[a.pool] = std::max(plan.pool_used[a.pool], a.offset + size);
  }
  plan.peak = 0;
  for (Bytes used : plan.pool_used) plan.peak += used;
  plan.naive_total = NaiveTotal(problem);
  plan.lower_bound = LowerBound(problem);
  // Every plan's peak (the sum of its pools' heights) is at least the bytes
  // alive at any one step, so a plan at the lower bound is optimal, whoever
  // made it.
  if (plan.peak == plan.lower_bound) plan.proven_optimal = true;
}

namespace internal {

std::string DescribeBuffer(const Problem& problem, BufferId buffer) {
  const Buffer& b = problem.buffers[buffer];
  return absl::StrCat("buffer \"", b.name, "\" (", b.size, " bytes, alive [",
                      b.lifetime.start, ", ", b.lifetime.end, "))");
}

absl::Status NoFitError(const Problem& problem, BufferId buffer,
                        std::span<const Bytes> usage) {
  std::string pools;
  for (PoolId p : AllowedPools(problem, buffer)) {
    const Pool& pool = problem.pools[p];
    absl::StrAppend(&pools, pools.empty() ? "" : "; ", "pool \"", pool.name,
                    "\" holds ",
                    p < static_cast<PoolId>(usage.size()) ? usage[p] : 0,
                    " bytes then, capacity ", pool.capacity);
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      DescribeBuffer(problem, buffer), " fits in no allowed pool: ", pools));
}

}  // namespace internal
}  // namespace memplan

// Problem checks, bounds and plan statistics.

#include "memplan/problem.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/arith.h"
#include "base/status_macros.h"
#include "memplan/verify.h"
#include "model/problem_util.h"

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
    if (pool.alignment > kMaxAlignment) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pool \"", pool.name, "\" has alignment ", pool.alignment,
          ", more than the largest supported, ", kMaxAlignment, " (4 GiB)"));
    }
    if (pool.capacity > kMaxBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pool \"", pool.name, "\" has capacity ", pool.capacity,
          ", more than the largest supported, ", kMaxBytes, " (2^62)"));
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
  if (options.alignment > kMaxAlignment) {
    return absl::InvalidArgumentError(absl::StrCat(
        "alignment ", options.alignment,
        " is more than the largest supported, ", kMaxAlignment, " (4 GiB)"));
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

namespace {

// Every tensor inside its buffer, in bytes and in time.
absl::Status ValidateSpans(const Buffer& b) {
  if (b.spans.empty()) return absl::OkStatus();
  if (b.spans.size() != b.tensors.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer \"", b.name, "\" lists ", b.tensors.size(),
                     " tensors but ", b.spans.size(), " spans"));
  }
  for (size_t k = 0; k < b.spans.size(); ++k) {
    const TensorSpan& span = b.spans[k];
    if (span.size < 0 || span.size > b.size ||
        span.lifetime.start >= span.lifetime.end ||
        span.lifetime.start < b.lifetime.start ||
        span.lifetime.end > b.lifetime.end) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", b.tensors[k], "\" (", span.size, " bytes, alive [",
          span.lifetime.start, ", ", span.lifetime.end,
          ")) does not lie inside its buffer \"", b.name, "\" (", b.size,
          " bytes, alive [", b.lifetime.start, ", ", b.lifetime.end, "))"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

// Fixed buffers that conflict may not share a byte: the verifier, run on the
// fixed buffers alone, names the first two that do.
absl::Status CheckFixedPlacements(const Problem& problem) {
  Problem fixed;
  fixed.pools = problem.pools;
  std::vector<BufferId> index(problem.buffers.size(), -1);
  Plan plan;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (!buffer.fixed.has_value()) continue;
    index[b] = static_cast<BufferId>(fixed.buffers.size());
    plan.assignments.push_back(Assignment{.buffer = index[b],
                                          .pool = buffer.fixed->pool,
                                          .offset = buffer.fixed->offset});
    fixed.buffers.push_back(buffer);
  }
  if (fixed.buffers.size() < 2) return absl::OkStatus();
  for (const BufferConflict& c : problem.conflicts) {
    if (index[c.a] >= 0 && index[c.b] >= 0)
      fixed.conflicts.push_back({.a = index[c.a], .b = index[c.b]});
  }
  ComputePlanStatistics(fixed, plan);
  if (absl::Status s = VerifyPlan(fixed, plan); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the fixed placements cannot be honoured: ", s.message()));
  }
  return absl::OkStatus();
}

namespace {

// A buffer's own size, alignment and lifetime; `who` names it (made only for
// an error: building the name for every buffer took half the checks' time).
template <typename Who>
absl::Status ValidateBufferShape(const Buffer& b, Who who) {
  if (b.size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(who(), " has a negative size ", b.size));
  }
  if (!IsPowerOfTwo(b.alignment)) {
    return absl::InvalidArgumentError(
        absl::StrCat(who(), " has alignment ", b.alignment,
                     ", which is not a power of two"));
  }
  if (b.alignment > kMaxAlignment) {
    return absl::InvalidArgumentError(absl::StrCat(
        who(), " has alignment ", b.alignment,
        ", more than the largest supported, ", kMaxAlignment, " (4 GiB)"));
  }
  if (b.size % b.alignment != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(who(), " has size ", b.size,
                     ", not a multiple of its alignment ", b.alignment));
  }
  if (b.lifetime.start >= b.lifetime.end) {
    return absl::InvalidArgumentError(
        absl::StrCat(who(), " has an empty lifetime [", b.lifetime.start, ", ",
                     b.lifetime.end, ")"));
  }
  if (b.lifetime.start < 0 || b.lifetime.end > kMaxStep) {
    return absl::InvalidArgumentError(absl::StrCat(
        who(), " has lifetime [", b.lifetime.start, ", ", b.lifetime.end,
        "), outside the supported steps [0, ", kMaxStep, "]"));
  }
  return absl::OkStatus();
}

// A buffer's allowed pools and fixed placement.
template <typename Who>
absl::Status ValidateBufferPools(const Problem& problem, const Buffer& b,
                                 Who who) {
  const int num_pools = static_cast<int>(problem.pools.size());
  for (PoolId p : b.pools) {
    if (p < 0 || p >= num_pools) {
      return absl::InvalidArgumentError(
          absl::StrCat(who(), " allows pool #", p, ", which does not exist"));
    }
  }
  if (!b.fixed.has_value()) return absl::OkStatus();
  const PoolId p = b.fixed->pool;
  if (p < 0 || p >= num_pools) {
    return absl::InvalidArgumentError(absl::StrCat(
        who(), " is fixed in pool #", p, ", which does not exist"));
  }
  const Bytes align = std::max(b.alignment, problem.pools[p].alignment);
  if (b.fixed->offset < 0 || b.fixed->offset % align != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(who(), " has fixed offset ", b.fixed->offset,
                     ", not a non-negative multiple of ", align));
  }
  if (b.fixed->offset > kMaxBytes - b.size) {
    return absl::InvalidArgumentError(absl::StrCat(
        who(), " is fixed at offset ", b.fixed->offset, " of pool \"",
        problem.pools[p].name, "\", beyond the largest supported arena (",
        kMaxBytes, " bytes)"));
  }
  if (!b.pools.empty() &&
      std::find(b.pools.begin(), b.pools.end(), p) == b.pools.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(who(), " is fixed in pool \"", problem.pools[p].name,
                     "\", which it is not allowed in"));
  }
  const Bytes capacity = problem.pools[p].capacity;
  if (capacity > 0 && b.fixed->offset + b.size > capacity) {
    return absl::InvalidArgumentError(absl::StrCat(
        who(), " is fixed at bytes [", b.fixed->offset, ", ",
        b.fixed->offset + b.size, ") of pool \"", problem.pools[p].name,
        "\", beyond its capacity ", capacity));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateProblem(const Problem& problem) {
  if (problem.pools.empty()) {
    return absl::InvalidArgumentError("the problem has no pool");
  }
  MEMPLAN_RETURN_IF_ERROR(ValidatePools(problem.pools));
  Bytes total = 0;
  Bytes highest_fixed = 0;
  for (const Buffer& b : problem.buffers) {
    auto who = [&b] { return absl::StrCat("buffer \"", b.name, "\""); };
    MEMPLAN_RETURN_IF_ERROR(ValidateBufferShape(b, who));
    MEMPLAN_RETURN_IF_ERROR(ValidateSpans(b));
    MEMPLAN_RETURN_IF_ERROR(ValidateBufferPools(problem, b, who));
    if (b.fixed.has_value()) {
      highest_fixed = std::max(highest_fixed, b.fixed->offset + b.size);
    }
    // Every offset a planner computes stays below the highest fixed byte plus
    // every buffer's size and alignment padding: bounding that sum keeps all
    // offset arithmetic inside int64.
    if (b.size > kMaxBytes || b.size + b.alignment > kMaxBytes - total) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the sizes of the buffers exceed the largest supported arena (",
          kMaxBytes, " bytes) at ", who()));
    }
    total += b.size + b.alignment;
  }
  if (total > kMaxBytes - highest_fixed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the buffers' sizes above the highest fixed byte (", highest_fixed,
        ") exceed the largest supported arena (", kMaxBytes, " bytes)"));
  }
  const int n = static_cast<int>(problem.buffers.size());
  for (const BufferConflict& c : problem.conflicts) {
    if (c.a < 0 || c.a >= n || c.b < 0 || c.b >= n || c.a == c.b) {
      return absl::InvalidArgumentError(absl::StrCat(
          "explicit conflict (", c.a, ", ", c.b, ") names no pair of buffers"));
    }
  }
  return CheckFixedPlacements(problem);
}

Bytes NaiveTotal(const Problem& problem) {
  Bytes total = 0;
  for (const Buffer& b : problem.buffers) total += b.size;
  return total;
}

Bytes LowerBound(const Problem& problem) {
  // Events sort by (step, change): at a step the ends come before the starts
  // (lifetimes are half-open), so the bytes alive there first fall and then
  // rise, and the most bytes alive are found after some step's last event.
  // Only each step's total change matters, then. When the steps span little
  // more than there are events, those totals are summed in an array indexed
  // by step: at 10^6 buffers several times faster than sorting 2n events.
  Step first = std::numeric_limits<Step>::max();
  Step last = std::numeric_limits<Step>::min();
  for (const Buffer& b : problem.buffers) {
    first = std::min({first, b.lifetime.start, b.lifetime.end});
    last = std::max({last, b.lifetime.start, b.lifetime.end});
  }
  Bytes live = 0;
  Bytes best = 0;
  // Unsigned, the distance between two int64 is exact.
  const uint64_t span =
      static_cast<uint64_t>(last) - static_cast<uint64_t>(first);
  if (!problem.buffers.empty() && span < 4 * problem.buffers.size() + 1024) {
    std::vector<Bytes> change(span + 1, 0);
    for (const Buffer& b : problem.buffers) {
      change[static_cast<uint64_t>(b.lifetime.start) -
             static_cast<uint64_t>(first)] += b.size;
      change[static_cast<uint64_t>(b.lifetime.end) -
             static_cast<uint64_t>(first)] -= b.size;
    }
    for (Bytes delta : change) {
      live += delta;
      best = std::max(best, live);
    }
    return best;
  }
  std::vector<std::pair<Step, Bytes>> events;
  events.reserve(2 * problem.buffers.size());
  for (const Buffer& b : problem.buffers) {
    events.emplace_back(b.lifetime.start, b.size);
    events.emplace_back(b.lifetime.end, -b.size);
  }
  std::sort(events.begin(), events.end());
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
    if (size == 0 || a.offset < 0 ||
        a.offset > std::numeric_limits<Offset>::max() - size) {
      continue;  // the verifier reports it
    }
    plan.pool_used[a.pool] = std::max(plan.pool_used[a.pool], a.offset + size);
  }
  plan.peak = 0;
  for (Bytes used : plan.pool_used) {
    plan.peak = used > std::numeric_limits<Bytes>::max() - plan.peak
                    ? std::numeric_limits<Bytes>::max()
                    : plan.peak + used;
  }
  plan.naive_total = NaiveTotal(problem);
  plan.lower_bound = LowerBound(problem);
  // Every plan's peak (the sum of its pools' heights) is at least the bytes
  // alive at any one step, so a plan at the lower bound is optimal, whoever
  // made it (across pools, when it also spills nothing it could keep).
  if (AtTheBound(problem, plan)) plan.proven_optimal = true;
}

bool AtTheBound(const Problem& problem, const Plan& plan) {
  if (plan.peak > plan.lower_bound || plan.peak > LowerBound(problem)) {
    return false;
  }
  if (problem.pools.size() <= 1) return true;
  for (const Assignment& a : plan.assignments) {
    if (a.buffer < 0 ||
        a.buffer >= static_cast<BufferId>(problem.buffers.size()) ||
        problem.buffers[a.buffer].size == 0) {
      continue;
    }
    for (PoolId p : AllowedPools(problem, a.buffer)) {
      if (p < a.pool) return false;
    }
  }
  return true;
}

std::vector<Bytes> PoolBytes(const Problem& problem, const Plan& plan) {
  std::vector<Bytes> bytes(problem.pools.size(), 0);
  for (const Assignment& a : plan.assignments) {
    if (a.buffer < 0 ||
        a.buffer >= static_cast<BufferId>(problem.buffers.size()) ||
        a.pool < 0 || a.pool >= static_cast<PoolId>(problem.pools.size())) {
      continue;  // the verifier reports it
    }
    bytes[a.pool] += problem.buffers[a.buffer].size;
  }
  return bytes;
}

bool SpillsLess(const std::vector<Bytes>& a_bytes, Bytes a_peak,
                const std::vector<Bytes>& b_bytes, Bytes b_peak) {
  // Pool 0 holds what the others do not: its bytes decide nothing more.
  for (size_t p = std::min(a_bytes.size(), b_bytes.size()); p-- > 1;) {
    if (a_bytes[p] != b_bytes[p]) return a_bytes[p] < b_bytes[p];
  }
  return a_peak < b_peak;
}

bool SpillsLess(const Problem& problem, const Plan& a, const Plan& b) {
  return SpillsLess(PoolBytes(problem, a), a.peak, PoolBytes(problem, b),
                    b.peak);
}

namespace internal {

std::string DescribeBuffer(const Problem& problem, BufferId buffer) {
  const Buffer& b = problem.buffers[buffer];
  return absl::StrCat("buffer \"", b.name, "\" (", b.size, " bytes, alive [",
                      b.lifetime.start, ", ", b.lifetime.end, "))");
}

std::optional<Bytes> TotalCapacity(const Problem& problem) {
  constexpr Bytes kMaxBytes = std::numeric_limits<Bytes>::max();
  if (problem.pools.empty()) return std::nullopt;
  Bytes total = 0;
  for (const Pool& pool : problem.pools) {
    if (pool.capacity == 0) return std::nullopt;  // unbounded
    total =
        pool.capacity > kMaxBytes - total ? kMaxBytes : total + pool.capacity;
  }
  return total;
}

Plan StartAsPlanOf(const Problem& problem, Plan start,
                   std::string_view planner) {
  start.planner = std::string(planner);
  start.proven_optimal = AtTheBound(problem, start);
  return start;
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

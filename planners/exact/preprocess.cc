// What the exact planners compute before they search (see
// exact/preprocess.h).

#include "exact/preprocess.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "memplan/problem.h"

namespace memplan::internal {

Bytes PlanningUnit(const Problem& problem) {
  Bytes unit = 0;
  for (const Buffer& b : problem.buffers) {
    unit = std::gcd(unit, b.size);
    if (b.fixed.has_value()) unit = std::gcd(unit, b.fixed->offset);
  }
  if (unit == 0) unit = 1;
  // An alignment that is no multiple of the unit takes the unit down to the
  // power of two that divides both, which still divides every alignment
  // that divided the unit before.
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    const Bytes align = EffectiveAlignment(problem, b, 0);
    if (unit % align != 0) unit = std::gcd(unit, align);
  }
  return unit;
}

int64_t AlignmentInUnits(const Problem& problem, BufferId buffer, Bytes unit) {
  const Bytes align = EffectiveAlignment(problem, buffer, 0);
  return align <= unit ? 1 : align / unit;
}

std::vector<Step> SectionTimes(const Problem& problem,
                               std::span<const BufferId> buffers) {
  std::vector<Step> times;
  times.reserve(2 * buffers.size());
  for (BufferId b : buffers) {
    times.push_back(problem.buffers[b].lifetime.start);
    times.push_back(problem.buffers[b].lifetime.end);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return times;
}

int SectionOf(const std::vector<Step>& times, Step t) {
  return static_cast<int>(std::lower_bound(times.begin(), times.end(), t) -
                          times.begin());
}

std::vector<std::vector<BufferId>> ExplicitConflicts(const Problem& problem) {
  std::vector<std::vector<BufferId>> explicit_of(problem.buffers.size());
  for (const BufferConflict& c : problem.conflicts) {
    const Buffer& a = problem.buffers[c.a];
    const Buffer& b = problem.buffers[c.b];
    if (c.a == c.b || a.size == 0 || b.size == 0 ||
        Overlaps(a.lifetime, b.lifetime)) {
      continue;
    }
    explicit_of[c.a].push_back(c.b);
    explicit_of[c.b].push_back(c.a);
  }
  for (std::vector<BufferId>& others : explicit_of) {
    std::sort(others.begin(), others.end());
    others.erase(std::unique(others.begin(), others.end()), others.end());
  }
  return explicit_of;
}

std::vector<BufferId> TwinClasses(const Problem& problem, Bytes unit) {
  const int n = static_cast<int>(problem.buffers.size());
  const std::vector<std::vector<BufferId>> explicit_of =
      ExplicitConflicts(problem);
  std::vector<BufferId> candidates;
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.fixed.has_value() || buffer.size == 0) continue;
    candidates.push_back(b);
  }
  auto key = [&](BufferId b) {
    const Buffer& buffer = problem.buffers[b];
    return std::tie(buffer.size, buffer.lifetime.start, buffer.lifetime.end);
  };
  auto same = [&](BufferId a, BufferId b) {
    return key(a) == key(b) &&
           AlignmentInUnits(problem, a, unit) ==
               AlignmentInUnits(problem, b, unit) &&
           explicit_of[a] == explicit_of[b];
  };
  auto less = [&](BufferId a, BufferId b) {
    if (key(a) != key(b)) return key(a) < key(b);
    const int64_t aa = AlignmentInUnits(problem, a, unit);
    const int64_t ab = AlignmentInUnits(problem, b, unit);
    if (aa != ab) return aa < ab;
    if (explicit_of[a] != explicit_of[b])
      return explicit_of[a] < explicit_of[b];
    return a < b;
  };
  std::sort(candidates.begin(), candidates.end(), less);
  std::vector<BufferId> twin_of(n);
  std::iota(twin_of.begin(), twin_of.end(), 0);
  // Sorted with ties on the id: the first of each run is its least id.
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (same(candidates[i - 1], candidates[i])) {
      twin_of[candidates[i]] = twin_of[candidates[i - 1]];
    }
  }
  return twin_of;
}

}  // namespace memplan::internal

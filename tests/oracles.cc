// Brute-force oracles (see oracles.h).

#include "oracles.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "base/planner_util.h"
#include "memplan/problem.h"

namespace memplan::testing {

bool Conflicting(const Problem& problem, BufferId a, BufferId b) {
  if (a == b) return false;
  if (Overlaps(problem.buffers[a].lifetime, problem.buffers[b].lifetime))
    return true;
  return std::any_of(problem.conflicts.begin(), problem.conflicts.end(),
                     [&](const BufferConflict& c) {
                       return (c.a == a && c.b == b) || (c.a == b && c.b == a);
                     });
}

namespace {

// Whether `offset` for buffer `i` clears every placed buffer it conflicts
// with (placed: offsets[j] >= 0).
bool Clears(const Problem& problem, const std::vector<Offset>& offsets,
            BufferId i, Offset offset) {
  const Bytes size = problem.buffers[i].size;
  for (BufferId j = 0; j < static_cast<BufferId>(offsets.size()); ++j) {
    if (offsets[j] < 0 || !Conflicting(problem, i, j)) continue;
    if (offset < offsets[j] + problem.buffers[j].size &&
        offsets[j] < offset + size) {
      return false;
    }
  }
  return true;
}

// Buffers 0..i-1 are placed in `offsets`; can the rest be, under `height`?
bool FitsFrom(const Problem& problem, BufferId i, Bytes height,
              std::vector<Offset>& offsets) {
  if (i == static_cast<BufferId>(problem.buffers.size())) return true;
  const Buffer& b = problem.buffers[i];
  Offset first = 0, last = height - b.size;
  const Bytes step = EffectiveAlignment(problem, i, 0);
  if (b.fixed.has_value()) first = last = b.fixed->offset;
  for (Offset o = first; o <= last; o += step) {
    if (b.size > 0 && !Clears(problem, offsets, i, o)) continue;
    offsets[i] = o;
    if (FitsFrom(problem, i + 1, height, offsets)) return true;
    offsets[i] = -1;
  }
  return false;
}

}  // namespace

Bytes OptimumByEveryOffset(const Problem& problem) {
  Bytes height = LowerBound(problem);
  for (const Buffer& b : problem.buffers) {
    height = std::max(height, b.size);
    if (b.fixed.has_value())
      height = std::max(height, b.fixed->offset + b.size);
  }
  std::vector<Offset> offsets(problem.buffers.size(), -1);
  while (!FitsFrom(problem, 0, height, offsets)) ++height;
  return height;
}

Bytes OptimumByEveryOrder(const Problem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<BufferId> free;
  std::vector<Offset> fixed(n, -1);
  for (BufferId b = 0; b < n; ++b) {
    if (problem.buffers[b].fixed.has_value()) {
      fixed[b] = problem.buffers[b].fixed->offset;
    } else {
      free.push_back(b);
    }
  }
  Bytes best = std::numeric_limits<Bytes>::max();
  do {
    std::vector<Offset> at = fixed;
    Bytes peak = 0;
    for (BufferId b = 0; b < n; ++b) {
      if (at[b] >= 0 && problem.buffers[b].size > 0)
        peak = std::max(peak, at[b] + problem.buffers[b].size);
    }
    for (BufferId b : free) {
      const Bytes align = EffectiveAlignment(problem, b, 0);
      const Bytes size = problem.buffers[b].size;
      Offset candidate = 0;
      for (bool moved = size > 0; moved;) {
        moved = false;
        for (BufferId o = 0; o < n; ++o) {
          if (at[o] < 0 || problem.buffers[o].size == 0 ||
              !Conflicting(problem, b, o)) {
            continue;
          }
          const Offset end = at[o] + problem.buffers[o].size;
          if (candidate < end && at[o] < candidate + size) {
            candidate = internal::RoundUp(end, align);
            moved = true;
          }
        }
      }
      at[b] = candidate;
      if (size > 0) peak = std::max(peak, candidate + size);
      if (peak >= best) break;
    }
    best = std::min(best, peak);
  } while (std::next_permutation(free.begin(), free.end()));
  return best;
}

Bytes OptimumByRestingPlacements(const Problem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<Offset> offset(n, -1);
  Bytes fixed_top = 0;
  for (BufferId i = 0; i < n; ++i) {
    const Buffer& b = problem.buffers[i];
    if (b.fixed.has_value()) {
      offset[i] = b.fixed->offset;
      fixed_top = std::max(fixed_top, b.fixed->offset + b.size);
    }
  }
  Bytes best = std::numeric_limits<Bytes>::max();
  // Offsets are placed in non-decreasing (offset, id) order.
  std::function<void(Offset, int, Bytes)> place = [&](Offset last, int last_id,
                                                      Bytes top) {
    if (top >= best) return;
    bool done = true;
    for (BufferId i = 0; i < n; ++i) {
      if (offset[i] >= 0) continue;
      done = false;
      const Buffer& b = problem.buffers[i];
      const Bytes align = EffectiveAlignment(problem, i, 0);
      std::vector<Offset> candidates = {0};
      for (BufferId j = 0; j < n; ++j) {
        if (offset[j] >= 0 && Conflicting(problem, i, j)) {
          candidates.push_back(
              internal::RoundUp(offset[j] + problem.buffers[j].size, align));
        }
      }
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()),
                       candidates.end());
      for (Offset o : candidates) {
        if (o < last || (o == last && i < last_id)) continue;
        if (b.size > 0 && !Clears(problem, offset, i, o)) continue;
        offset[i] = o;
        place(o, i, std::max(top, o + b.size));
        offset[i] = -1;
      }
    }
    if (done) best = std::min(best, top);
  };
  place(0, -1, fixed_top);
  return best;
}

}  // namespace memplan::testing

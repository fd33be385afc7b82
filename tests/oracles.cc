// Brute-force oracles (see oracles.h).

#include "oracles.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "base/arith.h"
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

PoolsOptimum OptimumAcrossPools(const Problem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  const int pools = static_cast<int>(problem.pools.size());
  std::vector<std::vector<PoolId>> allowed(n);
  for (int b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.fixed.has_value()) {
      allowed[b] = {buffer.fixed->pool};
    } else if (!buffer.pools.empty()) {
      allowed[b] = buffer.pools;
    } else {
      for (PoolId p = 0; p < pools; ++p) allowed[b].push_back(p);
    }
  }
  // Lexicographically below, the last pool first (pool 0 holds the rest).
  auto below = [&](const std::vector<Bytes>& a, const std::vector<Bytes>& b) {
    for (int p = pools - 1; p >= 1; --p) {
      if (a[p] != b[p]) return a[p] < b[p];
    }
    return false;
  };
  PoolsOptimum best;
  std::vector<int> pick(n, 0);
  while (true) {
    std::vector<Bytes> bytes(pools, 0);
    for (int b = 0; b < n; ++b)
      bytes[allowed[b][pick[b]]] += problem.buffers[b].size;
    if (!best.fits || !below(best.bytes, bytes)) {
      Bytes total = 0;
      bool fits = true;
      for (PoolId p = 0; p < pools && fits; ++p) {
        Problem part{.pools = {problem.pools[p]}};
        std::vector<int> index(n, -1);
        for (int b = 0; b < n; ++b) {
          if (allowed[b][pick[b]] != p) continue;
          index[b] = static_cast<int>(part.buffers.size());
          Buffer buffer = problem.buffers[b];
          buffer.pools.clear();
          if (buffer.fixed.has_value()) buffer.fixed->pool = 0;
          part.buffers.push_back(buffer);
        }
        for (const BufferConflict& c : problem.conflicts) {
          if (index[c.a] >= 0 && index[c.b] >= 0)
            part.conflicts.push_back({.a = index[c.a], .b = index[c.b]});
        }
        if (part.buffers.empty()) continue;
        const Bytes peak = OptimumByRestingPlacements(part);
        const Bytes capacity = problem.pools[p].capacity;
        if (capacity > 0 && peak > capacity) fits = false;
        total += peak;
      }
      if (fits &&
          (!best.fits || below(bytes, best.bytes) || total < best.peak)) {
        best = {.fits = true, .bytes = bytes, .peak = total};
      }
    }
    int b = 0;
    while (b < n && ++pick[b] == static_cast<int>(allowed[b].size())) {
      pick[b++] = 0;
    }
    if (b == n) break;
  }
  return best;
}

}  // namespace memplan::testing

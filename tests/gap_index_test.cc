// GapIndex: every search gives what FindOffset gives on the buffer's
// obstacles listed by brute force, on seeded random problems long enough
// for every kind of search (sweep, pivot, large set by length).

#include "placement/gap_index.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "memplan/problem.h"
#include "placement/find_offset.h"
#include "placement/placement_index.h"

namespace memplan {
namespace {

using internal::FindOffset;
using internal::Fit;
using internal::GapIndex;
using internal::GapSearch;
using internal::Obstacle;
using internal::PlacementIndex;

struct Options {
  int buffers = 1200;
  bool nested = true;           // training-like nested lifetimes
  bool random_offsets = false;  // fragmented: offsets off the greedy rule
  bool aligned = false;
  Bytes capacity = 0;
  int extra = 0;  // explicit-conflict ranges per search, at most
};

// Half the lifetimes nested around the middle of the steps (or random and
// long), half short in the second half; sizes of a few scales.
Problem MakeProblem(uint64_t seed, const Options& options) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Problem problem;
  problem.pools = {{.name = "default"}};
  const int layers = options.buffers / 2;
  for (int i = 0; i < options.buffers; ++i) {
    Buffer b;
    b.name = absl::StrCat("b", i);
    if (i < layers && options.nested) {
      b.lifetime = {i, std::max<Step>(i + 1, 2 * layers - i - uniform(0, 2))};
    } else if (i < layers) {
      const Step start = uniform(0, 2 * layers - 2);
      b.lifetime = {start, uniform(start + 1, 2 * layers)};
    } else {
      const Step step = layers + uniform(0, layers - 1);
      b.lifetime = {step, step + uniform(1, 3)};
    }
    const int stage = static_cast<int>(5 * (i % layers) / layers);
    b.size = std::max<Bytes>(
        1, (Bytes{1} << (20 - 2 * stage)) * uniform(50, 100) / 100);
    problem.buffers.push_back(std::move(b));
  }
  return problem;
}

// Places every buffer, largest first, through the gap index, checking each
// search against FindOffset on the obstacles listed by brute force.
void ExpectSearchesMatchFindOffset(uint64_t seed, const Options& options,
                                   Fit fit) {
  const std::string what =
      absl::StrCat("seed ", seed, " fit ", static_cast<int>(fit));
  std::mt19937_64 rng(seed * 7 + 1);
  const Problem problem = MakeProblem(seed, options);
  const PlacementIndex index(problem, GapSearch::kIndexed);
  GapIndex gaps(index);
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<BufferId> order(n);
  for (BufferId b = 0; b < n; ++b) order[b] = b;
  std::stable_sort(order.begin(), order.end(), [&](BufferId a, BufferId b) {
    return problem.buffers[a].size > problem.buffers[b].size;
  });
  std::vector<std::optional<std::pair<Offset, Offset>>> placed(n);
  std::vector<Obstacle> obstacles, scratch;
  std::vector<std::pair<Offset, Offset>> extra;
  for (BufferId b : order) {
    const Buffer& x = problem.buffers[b];
    // Placed in another pool, now and then: never an obstacle.
    if (rng() % 10 == 0) {
      gaps.Release(b);
      continue;
    }
    obstacles.clear();
    int64_t overlapping = 0;
    for (BufferId o = 0; o < n; ++o) {
      if (!placed[o].has_value() ||
          !Overlaps(x.lifetime, problem.buffers[o].lifetime))
        continue;
      obstacles.push_back({placed[o]->first, placed[o]->second, o});
      ++overlapping;
    }
    ASSERT_EQ(gaps.CountOverlapping(b), overlapping) << what;
    // Explicit-conflict ranges: sorted and merged, and obstacles too.
    extra.clear();
    const int extras = options.extra == 0 ? 0 : rng() % (options.extra + 1);
    for (int k = 0; k < extras; ++k) {
      const Offset begin = static_cast<Offset>(rng() % (Offset{1} << 22));
      extra.push_back({begin, begin + 1 + static_cast<Offset>(rng() % 4096)});
      obstacles.push_back({extra.back().first, extra.back().second, -1});
    }
    std::sort(extra.begin(), extra.end());
    size_t merged = 0;
    for (const auto& run : extra) {
      if (merged > 0 && run.first <= extra[merged - 1].second) {
        extra[merged - 1].second =
            std::max(extra[merged - 1].second, run.second);
      } else {
        extra[merged++] = run;
      }
    }
    extra.resize(merged);
    internal::SortByOffset(obstacles, scratch);
    const Bytes alignment = options.aligned ? Bytes{1} << (rng() % 7) : 1;
    const std::optional<Offset> want =
        FindOffset(obstacles, x.size, alignment, options.capacity, fit);
    const std::optional<Offset> got =
        gaps.Find(b, extra, x.size, alignment, options.capacity, fit);
    ASSERT_EQ(got, want) << what << " buffer " << b << " with "
                         << obstacles.size() << " obstacles";
    Offset at = want.value_or(0);
    if (!want.has_value() || options.random_offsets) {
      at = static_cast<Offset>(rng() % (Offset{1} << 23));
    }
    gaps.Insert(b, at, at + x.size);
    placed[b] = {at, at + x.size};
  }
}

TEST(GapIndexTest, BestFitMatchesFindOffsetOnNestedLifetimes) {
  for (uint64_t seed = 0; seed < 4; ++seed)
    ExpectSearchesMatchFindOffset(seed, {.aligned = seed % 2 == 1}, Fit::kBest);
}

TEST(GapIndexTest, FirstFitMatchesFindOffsetOnNestedLifetimes) {
  for (uint64_t seed = 0; seed < 4; ++seed)
    ExpectSearchesMatchFindOffset(seed, {.aligned = seed % 2 == 1},
                                  Fit::kFirst);
}

// Fragmented placements leave run sets of many runs: best fit then keeps
// the largest out of the sweep and reads its gaps by length.
TEST(GapIndexTest, BothFitsMatchFindOffsetOnFragmentedPlacements) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    const Options options{
        .nested = seed % 2 == 0, .random_offsets = true, .aligned = seed >= 2};
    for (Fit fit : {Fit::kBest, Fit::kFirst})
      ExpectSearchesMatchFindOffset(seed, options, fit);
  }
}

TEST(GapIndexTest, CapacityAndExplicitConflictRangesMatchFindOffset) {
  for (uint64_t seed = 0; seed < 4; ++seed) {
    const Options options{.nested = seed % 2 == 0,
                          .aligned = true,
                          .capacity = Bytes{1} << (22 + seed % 2),
                          .extra = 6};
    for (Fit fit : {Fit::kBest, Fit::kFirst})
      ExpectSearchesMatchFindOffset(seed, options, fit);
    ExpectSearchesMatchFindOffset(seed, {.extra = 6}, Fit::kBest);
  }
}

}  // namespace
}  // namespace memplan

// PlacementIndex: its steps, ranks, keys, counts, filings and conflict
// lists against brute-force definitions on seeded random problems.

#include "placement/placement_index.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "memplan/problem.h"
#include "memplan/synthetic.h"
#include "test_util.h"

namespace memplan {
namespace {

using internal::GapSearch;
using internal::PlacementIndex;

// Random problems with some empty buffers, long and short lifetimes, and
// duplicate explicit conflicts.
Problem RandomIndexProblem(uint64_t seed) {
  std::mt19937_64 rng(seed);
  testing::RandomProblemOptions options;
  options.buffers = 50 + static_cast<int>(seed % 5) * 60;
  options.horizon = seed % 2 == 0 ? 60 : 3000;
  options.max_lifetime = seed % 3 == 0 ? 2500 : 20;
  options.explicit_conflicts = static_cast<int>(seed % 4) * 15;
  Problem problem = testing::RandomProblem(seed, options);
  for (Buffer& b : problem.buffers) {
    if (rng() % 10 == 0) b.size = 0;
  }
  if (!problem.conflicts.empty())
    problem.conflicts.push_back(problem.conflicts.front());
  return problem;
}

TEST(PlacementIndexTest, StepsRanksAndKeysMatchTheirDefinitions) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Problem problem = RandomIndexProblem(seed);
    const PlacementIndex index(problem);
    const int n = static_cast<int>(problem.buffers.size());
    std::vector<BufferId> nonempty;
    std::set<Step> steps;
    for (BufferId b = 0; b < n; ++b) {
      const Buffer& buffer = problem.buffers[b];
      if (buffer.size == 0) continue;
      nonempty.push_back(b);
      steps.insert(buffer.lifetime.start);
      steps.insert(buffer.lifetime.end);
    }
    ASSERT_EQ(std::vector<Step>(index.steps().begin(), index.steps().end()),
              std::vector<Step>(steps.begin(), steps.end()));
    ASSERT_EQ(index.num_nonempty(), static_cast<int32_t>(nonempty.size()));
    for (BufferId b = 0; b < n; ++b) {
      const Buffer& x = problem.buffers[b];
      if (x.size == 0) {
        EXPECT_EQ(index.start_rank(b), -1);
        EXPECT_EQ(index.end_rank(b), -1);
        continue;
      }
      int32_t start_rank = 0, end_rank = 0, starts_before_end = 0,
              ends_by_start = 0, overlapping = 0;
      for (BufferId o : nonempty) {
        const Buffer& y = problem.buffers[o];
        start_rank +=
            std::tie(y.lifetime.start, o) < std::tie(x.lifetime.start, b);
        end_rank += std::tie(y.lifetime.end, o) < std::tie(x.lifetime.end, b);
        starts_before_end += y.lifetime.start < x.lifetime.end;
        ends_by_start += y.lifetime.end <= x.lifetime.start;
        overlapping += Overlaps(x.lifetime, y.lifetime);
      }
      const PlacementIndex::LifetimeKeys& keys = index.keys(b);
      ASSERT_EQ(index.start_rank(b), start_rank) << "seed " << seed << " " << b;
      ASSERT_EQ(index.end_rank(b), end_rank) << "seed " << seed << " " << b;
      ASSERT_EQ(index.steps()[keys.first_slice], x.lifetime.start);
      ASSERT_EQ(index.steps()[keys.last_slice], x.lifetime.end);
      ASSERT_EQ(keys.starts_before_end, starts_before_end);
      ASSERT_EQ(keys.ends_by_start, ends_by_start);
      ASSERT_EQ(index.CountOverlapping(b), overlapping);
      ASSERT_EQ(index.CountOverlapping(x.lifetime), overlapping);
    }
    // Any lifetime, also those of no buffer.
    std::mt19937_64 rng(seed);
    for (int k = 0; k < 100; ++k) {
      const Step start = static_cast<Step>(rng() % 3100);
      const Lifetime lifetime{start, start + 1 + static_cast<Step>(rng() % 50)};
      int64_t overlapping = 0;
      for (BufferId o : nonempty)
        overlapping += Overlaps(lifetime, problem.buffers[o].lifetime);
      ASSERT_EQ(index.CountOverlapping(lifetime), overlapping);
    }
  }
}

// Every buffer at the finest level where it touches at most kMaxBuckets
// buckets (or the top level), and each bucket sized for the buffers filed
// there.
TEST(PlacementIndexTest, FilesEachBufferAtTheFinestLevelThatHoldsIt) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Problem problem = RandomIndexProblem(seed);
    const PlacementIndex index(problem);
    const int levels = index.num_bucket_levels();
    ASSERT_GE(levels, 1);
    const int64_t slices = std::max<int64_t>(1, index.steps().size() - 1);
    // The top level has at most kMaxBuckets buckets over all the slices.
    EXPECT_LT((slices - 1) >> index.bucket_shift(levels - 1),
              PlacementIndex::kMaxBuckets);
    std::vector<std::vector<int64_t>> filed(levels);
    for (int l = 0; l < levels; ++l)
      filed[l].assign(index.bucket_begins(l).size() - 1, 0);
    for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size());
         ++b) {
      if (problem.buffers[b].size == 0) continue;
      const PlacementIndex::LifetimeKeys& keys = index.keys(b);
      const PlacementIndex::Filing f = index.filing(b);
      auto touched = [&](int level) {
        const int shift = index.bucket_shift(level);
        return std::pair<int64_t, int64_t>{
            int64_t{keys.first_slice} >> shift,
            (int64_t{keys.last_slice} - 1) >> shift};
      };
      ASSERT_EQ(touched(f.level),
                (std::pair<int64_t, int64_t>{f.first, f.last}));
      ASSERT_TRUE(f.last - f.first < PlacementIndex::kMaxBuckets ||
                  f.level == levels - 1);
      for (int l = 0; l < f.level; ++l) {
        const auto [first, last] = touched(l);
        ASSERT_GE(last - first, PlacementIndex::kMaxBuckets) << "level " << l;
      }
      for (int64_t q = f.first; q <= f.last; ++q) ++filed[f.level][q];
    }
    for (int l = 0; l < levels; ++l) {
      const auto begins = index.bucket_begins(l);
      for (size_t q = 0; q + 1 < begins.size(); ++q)
        ASSERT_EQ(begins[q + 1] - begins[q], filed[l][q]) << l << " " << q;
    }
  }
}

TEST(PlacementIndexTest, ListsEachExplicitPartnerOnceInOrder) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Problem problem = RandomIndexProblem(seed);
    const PlacementIndex index(problem);
    std::vector<std::set<BufferId>> want(problem.buffers.size());
    for (const BufferConflict& c : problem.conflicts) {
      want[c.a].insert(c.b);
      want[c.b].insert(c.a);
    }
    for (BufferId b = 0; b < static_cast<BufferId>(want.size()); ++b) {
      const auto got = index.explicit_conflicts(b);
      ASSERT_EQ(std::vector<BufferId>(got.begin(), got.end()),
                std::vector<BufferId>(want[b].begin(), want[b].end()))
          << "seed " << seed << " buffer " << b;
    }
  }
}

TEST(PlacementIndexTest, ChoosesTheGapIndexForDenseProblemsOnly) {
  absl::StatusOr<Problem> dense = SyntheticProblem(
      SyntheticKind::kDenseTraining, {.buffers = 2000, .seed = 1});
  absl::StatusOr<Problem> sparse =
      SyntheticProblem(SyntheticKind::kIntervals, {.buffers = 2000, .seed = 1});
  ASSERT_TRUE(dense.ok() && sparse.ok());
  EXPECT_TRUE(PlacementIndex(*dense).indexed_search());
  EXPECT_FALSE(PlacementIndex(*sparse).indexed_search());
  // An explicit choice wins.
  EXPECT_FALSE(PlacementIndex(*dense, GapSearch::kListed).indexed_search());
  EXPECT_TRUE(PlacementIndex(*sparse, GapSearch::kIndexed).indexed_search());
}

}  // namespace
}  // namespace memplan

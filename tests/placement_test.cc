// The gap index gives the offsets of the listing search, which gives those
// of a brute-force greedy written here from the rule alone.

#include "placement/placement.h"

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/arith.h"
#include "gtest/gtest.h"
#include "memplan/problem.h"
#include "memplan/synthetic.h"
#include "memplan/verify.h"
#include "test_util.h"

namespace memplan {
namespace {

using internal::Fit;
using internal::GapSearch;
using internal::PlacementIndex;
using internal::PlacementOrder;

// The greedy rule, quadratically: each buffer of `order` against every
// placed buffer it conflicts with, in the first allowed pool where a gap
// (best fit: the smallest that fits, the lowest of equals; first fit: the
// lowest) or the top fits under the capacity. nullopt when one fits nowhere.
std::optional<std::vector<Assignment>> ReferenceGreedy(
    const Problem& problem, const std::vector<BufferId>& order, Fit fit) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<Assignment> out(n);
  std::vector<bool> placed(n, false);
  std::vector<std::vector<BufferId>> partners(n);
  for (const BufferConflict& c : problem.conflicts) {
    partners[c.a].push_back(c.b);
    partners[c.b].push_back(c.a);
  }
  auto conflicts = [&](BufferId a, BufferId b) {
    return Overlaps(problem.buffers[a].lifetime, problem.buffers[b].lifetime) ||
           std::find(partners[a].begin(), partners[a].end(), b) !=
               partners[a].end();
  };
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (!buffer.fixed.has_value()) continue;
    out[b] = {.buffer = b,
              .pool = buffer.fixed->pool,
              .offset = buffer.fixed->offset};
    placed[b] = true;
  }
  for (BufferId b : order) {
    const Buffer& buffer = problem.buffers[b];
    const std::vector<PoolId> pools = AllowedPools(problem, b);
    if (buffer.size == 0) {
      out[b] = {.buffer = b, .pool = pools[0], .offset = 0};
      placed[b] = true;
      continue;
    }
    bool done = false;
    for (PoolId p : pools) {
      std::vector<std::pair<Offset, Offset>> taken;
      for (BufferId o = 0; o < n; ++o) {
        const Bytes size = problem.buffers[o].size;
        if (o == b || !placed[o] || out[o].pool != p || size == 0) continue;
        if (conflicts(b, o))
          taken.push_back({out[o].offset, out[o].offset + size});
      }
      std::sort(taken.begin(), taken.end());
      const Bytes alignment = EffectiveAlignment(problem, b, p);
      const Bytes capacity = problem.pools[p].capacity;
      auto fits = [&](Offset at) {
        return capacity <= 0 || at + buffer.size <= capacity;
      };
      std::optional<Offset> chosen;
      Bytes chosen_gap = 0;
      Offset top = 0;
      for (const auto& [begin, end] : taken) {
        const Offset at = internal::RoundUp(top, alignment);
        if (begin >= at + buffer.size && fits(at) &&
            (!chosen.has_value() || begin - at < chosen_gap)) {
          chosen = at;
          chosen_gap = begin - at;
          if (fit == Fit::kFirst) break;
        }
        top = std::max(top, end);
      }
      if (!chosen.has_value() && fits(internal::RoundUp(top, alignment)))
        chosen = internal::RoundUp(top, alignment);
      if (chosen.has_value()) {
        out[b] = {.buffer = b, .pool = p, .offset = *chosen};
        placed[b] = true;
        done = true;
        break;
      }
    }
    if (!done) return std::nullopt;
  }
  return out;
}

// Places `problem` in `order` with both searches; they must agree with each
// other (offsets and counted work) and the plan must verify.
void ExpectSearchesAgree(const Problem& problem, PlacementOrder order, Fit fit,
                         const std::string& what) {
  const std::vector<BufferId> sorted = internal::SortedBuffers(problem, order);
  const PlacementIndex listed(problem, GapSearch::kListed);
  const PlacementIndex indexed(problem, GapSearch::kIndexed);
  ASSERT_FALSE(listed.indexed_search());
  ASSERT_TRUE(indexed.indexed_search());
  internal::PlacementState a(listed);
  internal::PlacementState b(indexed);
  ASSERT_TRUE(a.PlaceFixed().ok()) << what;
  ASSERT_TRUE(b.PlaceFixed().ok()) << what;
  for (BufferId id : sorted) {
    const absl::Status sa = a.PlaceGreedily(id, fit);
    const absl::Status sb = b.PlaceGreedily(id, fit);
    ASSERT_EQ(sa.ok(), sb.ok()) << what << ": buffer " << id;
    if (!sa.ok()) {
      EXPECT_EQ(sa, sb) << what;
      return;
    }
    ASSERT_EQ(a.pool(id), b.pool(id)) << what << ": buffer " << id;
    ASSERT_EQ(a.offset(id), b.offset(id)) << what << ": buffer " << id;
  }
  EXPECT_EQ(a.work(), b.work()) << what;
  const Plan plan = b.ToPlan();
  EXPECT_TRUE(VerifyPlan(problem, plan).ok()) << what;
}

std::vector<std::pair<PlacementOrder, Fit>> AllVariants() {
  std::vector<std::pair<PlacementOrder, Fit>> out;
  for (PlacementOrder order :
       {PlacementOrder::kSize, PlacementOrder::kArea, PlacementOrder::kLifetime,
        PlacementOrder::kSizeThenId, PlacementOrder::kSizeClass}) {
    for (Fit fit : {Fit::kBest, Fit::kFirst}) out.push_back({order, fit});
  }
  return out;
}

std::vector<std::string> BundledInputs() {
  std::vector<std::string> all;
  for (const auto& list : {testing::ModelGraphs(), testing::TrainingGraphs(),
                           testing::MinimallocCsvs(), testing::TraceCsvs()}) {
    all.insert(all.end(), list.begin(), list.end());
  }
  return all;
}

TEST(PlacementTest, SizeClassesOrderByPowersOfFourThenLifetime) {
  // Classes: [0, 4) -> 0, [4, 16) -> 1, [16, 64) -> 2, [64, 256) -> 3.
  const Problem problem{
      .buffers = {{.name = "a", .size = 16, .lifetime = {0, 2}},
                  {.name = "b", .size = 63, .lifetime = {0, 1}},
                  {.name = "c", .size = 17, .lifetime = {0, 9}},
                  {.name = "d", .size = 64, .lifetime = {3, 4}},
                  {.name = "e", .size = 3, .lifetime = {0, 9}},
                  {.name = "f", .size = 15, .lifetime = {2, 4}},
                  {.name = "g", .size = 4, .lifetime = {1, 3}},
                  {.name = "h", .size = 40, .lifetime = {1, 3}}},
      .pools = {{.name = "default"}}};
  // d (class 3); c (the longest), a and h (length 2: a starts first), b;
  // g and f (length 2: g starts first); e.
  EXPECT_EQ(internal::SortedBuffers(problem, PlacementOrder::kSizeClass),
            (std::vector<BufferId>{3, 2, 0, 7, 1, 6, 5, 4}));
}

TEST(PlacementTest, CountsOverlappingPairsLikeAPairwiseScan) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    testing::RandomProblemOptions options;
    options.buffers = 80;
    options.max_lifetime = 1 + static_cast<Step>(seed % 4) * 10;
    Problem problem = testing::RandomProblem(seed, options);
    if (seed % 2 == 1) problem.buffers[seed % 80].size = 0;  // not counted
    int64_t pairs = 0;
    for (size_t a = 0; a < problem.buffers.size(); ++a) {
      for (size_t b = a + 1; b < problem.buffers.size(); ++b) {
        const Buffer& x = problem.buffers[a];
        const Buffer& y = problem.buffers[b];
        pairs += x.size > 0 && y.size > 0 && Overlaps(x.lifetime, y.lifetime);
      }
    }
    EXPECT_EQ(internal::CountOverlappingPairs(problem), pairs) << seed;
  }
}

TEST(PlacementTest, IndexedAndListedSearchesAgreeOnEveryBundledInput) {
  const std::vector<std::string> inputs = BundledInputs();
  ASSERT_GE(inputs.size(), 30u);
  for (const std::string& input : inputs) {
    absl::StatusOr<Problem> problem = testing::LoadProblem(input);
    ASSERT_TRUE(problem.ok()) << input << ": " << problem.status();
    // The largest trace (28526 buffers) only in the order of
    // greedy_by_size and first_fit.
    const bool large = problem->buffers.size() > 5000;
    for (const auto& [order, fit] : AllVariants()) {
      if (large && order != PlacementOrder::kSize) continue;
      ExpectSearchesAgree(
          *problem, order, fit,
          absl::StrCat(input, " order ", static_cast<int>(order), " fit ",
                       static_cast<int>(fit)));
    }
  }
}

TEST(PlacementTest, SearchesMatchTheBruteForceRule) {
  std::vector<std::pair<std::string, Problem>> problems;
  for (const std::string& input : BundledInputs()) {
    absl::StatusOr<Problem> problem = testing::LoadProblem(input);
    ASSERT_TRUE(problem.ok()) << input << ": " << problem.status();
    if (problem->buffers.size() <= 1100)
      problems.push_back({input, *std::move(problem)});
  }
  for (uint64_t seed = 0; seed < 40; ++seed) {
    testing::RandomProblemOptions options;
    options.buffers = 60;
    options.pools = 1 + seed % 3;
    options.capacity = seed % 2 == 0 ? 0 : 2500;
    options.alignments = seed % 4 >= 2;
    options.explicit_conflicts = static_cast<int>(seed % 5) * 4;
    options.fixed = static_cast<int>(seed % 3);
    problems.push_back({absl::StrCat("random seed ", seed),
                        testing::RandomProblem(seed, options)});
  }
  ASSERT_GT(problems.size(), 60u);
  for (const auto& [name, problem] : problems) {
    for (const auto& [order, fit] : AllVariants()) {
      const std::string what =
          absl::StrCat(name, " order ", static_cast<int>(order), " fit ",
                       static_cast<int>(fit));
      const std::vector<BufferId> sorted =
          internal::SortedBuffers(problem, order);
      const std::optional<std::vector<Assignment>> reference =
          ReferenceGreedy(problem, sorted, fit);
      for (GapSearch search : {GapSearch::kListed, GapSearch::kIndexed}) {
        const PlacementIndex index(problem, search);
        absl::StatusOr<Plan> plan = internal::PlaceInOrder(index, sorted, fit);
        ASSERT_EQ(plan.ok(), reference.has_value()) << what << plan.status();
        if (!plan.ok()) {
          EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted)
              << what;
          continue;
        }
        EXPECT_EQ(plan->assignments, *reference) << what;
        EXPECT_TRUE(VerifyPlan(problem, *plan).ok()) << what;
      }
    }
  }
}

TEST(PlacementTest, SearchesAgreeOnDenseTrainingAndIntervals) {
  for (SyntheticKind kind :
       {SyntheticKind::kDenseTraining, SyntheticKind::kTraining,
        SyntheticKind::kIntervals}) {
    for (int64_t n : {1000, 3000}) {
      absl::StatusOr<Problem> problem =
          SyntheticProblem(kind, {.buffers = n, .seed = 3});
      ASSERT_TRUE(problem.ok()) << problem.status();
      for (Fit fit : {Fit::kBest, Fit::kFirst}) {
        ExpectSearchesAgree(
            *problem, PlacementOrder::kSize, fit,
            absl::StrCat(problem->name, " fit ", static_cast<int>(fit)));
      }
    }
  }
}

struct DenseOptions {
  int buffers = 1500;
  int pools = 1;
  bool capacity = false;  // the pools but the last have a capacity
  bool aligned = false;   // alignments of buffers and pools up to 64
  int conflicts = 0;      // explicit conflicts between random buffers
  int fixed = 0;          // buffers with a fixed placement
};

// Training-like problems: lifetimes nested around the middle of the steps
// and short ones in the second half, with jittered sizes of a few scales so
// that gaps of every length appear, long enough (more than 2^9 steps) for
// every kind of search of the gap index to be taken.
Problem RandomDenseProblem(uint64_t seed, const DenseOptions& options) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Problem problem;
  problem.name = absl::StrCat("dense seed ", seed);
  for (int p = 0; p < options.pools; ++p) {
    const bool last = p + 1 == options.pools;
    problem.pools.push_back(
        {.name = absl::StrCat("pool", p),
         .capacity = options.capacity && !last ? Bytes{1} << (24 + p) : 0,
         .alignment = options.aligned ? Bytes{1} << uniform(0, 4) : 1});
  }
  const int layers = options.buffers / 2;
  for (int i = 0; i < options.buffers; ++i) {
    Buffer b;
    b.name = absl::StrCat("b", i);
    b.tensors = {b.name};
    if (i < layers) {
      b.lifetime = {
          .start = i,
          .end = std::max<Step>(i + 1, 2 * layers - i - uniform(0, 2))};
    } else {
      const Step step = layers + uniform(0, layers - 1);
      b.lifetime = {.start = step, .end = step + uniform(1, 3)};
    }
    const int stage = static_cast<int>(5 * (i % layers) / layers);
    b.alignment = options.aligned ? Bytes{1} << uniform(0, 6) : 1;
    const Bytes size = (Bytes{1} << (20 - 2 * stage)) * uniform(50, 100) / 100;
    b.size = internal::RoundUp(std::max<Bytes>(size, 1), b.alignment);
    if (options.pools > 1 && uniform(0, 2) == 0) {
      // A later pool first; the last pool always allowed.
      b.pools = {static_cast<PoolId>(uniform(0, options.pools - 1)),
                 static_cast<PoolId>(options.pools - 1)};
      if (b.pools[0] == b.pools[1]) b.pools.pop_back();
    }
    problem.buffers.push_back(std::move(b));
  }
  for (int k = 0; k < options.fixed; ++k) {
    Buffer& b = problem.buffers[uniform(0, options.buffers - 1)];
    if (b.fixed.has_value()) continue;
    // Far above the rest and apart: no two fixed buffers collide.
    b.fixed = Placement{.pool = static_cast<PoolId>(options.pools - 1),
                        .offset = Offset{k + 1} << 32};
  }
  for (int k = 0; k < options.conflicts; ++k) {
    const BufferId a = static_cast<BufferId>(uniform(0, options.buffers - 1));
    const BufferId c = static_cast<BufferId>(uniform(0, options.buffers - 1));
    if (a != c) problem.conflicts.push_back({.a = a, .b = c});
  }
  return problem;
}

TEST(PlacementTest, SearchesAgreeOnRandomDenseProblems) {
  for (uint64_t seed = 0; seed < 12; ++seed) {
    const DenseOptions options{.pools = 1 + static_cast<int>(seed % 3),
                               .capacity = seed % 4 >= 2,
                               .aligned = seed % 2 == 1,
                               .conflicts = static_cast<int>(seed % 3) * 200,
                               .fixed = seed % 5 == 4 ? 3 : 0};
    const Problem problem = RandomDenseProblem(seed, options);
    for (PlacementOrder order :
         {PlacementOrder::kSize, PlacementOrder::kArea}) {
      for (Fit fit : {Fit::kBest, Fit::kFirst}) {
        ExpectSearchesAgree(
            problem, order, fit,
            absl::StrCat(problem.name, " order ", static_cast<int>(order),
                         " fit ", static_cast<int>(fit)));
      }
    }
  }
}

TEST(PlacementTest, AutoIndexesOnlyDenseProblems) {
  absl::StatusOr<Problem> dense = SyntheticProblem(
      SyntheticKind::kDenseTraining, {.buffers = 2000, .seed = 1});
  absl::StatusOr<Problem> sparse =
      SyntheticProblem(SyntheticKind::kIntervals, {.buffers = 2000, .seed = 1});
  ASSERT_TRUE(dense.ok() && sparse.ok());
  EXPECT_TRUE(PlacementIndex(*dense).indexed_search());
  EXPECT_FALSE(PlacementIndex(*sparse).indexed_search());
}

// Taking a buffer out drops the index; placements go on by listing, with
// the same offsets as a state that never had the index.
TEST(PlacementTest, UnplaceFallsBackToTheListingSearch) {
  absl::StatusOr<Problem> problem = SyntheticProblem(
      SyntheticKind::kDenseTraining, {.buffers = 400, .seed = 2});
  ASSERT_TRUE(problem.ok());
  const std::vector<BufferId> order =
      internal::SortedBuffers(*problem, PlacementOrder::kSize);
  const PlacementIndex listed(*problem, GapSearch::kListed);
  const PlacementIndex indexed(*problem, GapSearch::kIndexed);
  internal::PlacementState a(listed);
  internal::PlacementState b(indexed);
  const size_t half = order.size() / 2;
  for (size_t i = 0; i < order.size(); ++i) {
    ASSERT_TRUE(a.PlaceGreedily(order[i], Fit::kBest).ok());
    ASSERT_TRUE(b.PlaceGreedily(order[i], Fit::kBest).ok());
    if (i == half) {
      // Out and back in, in the other order of the two.
      a.Unplace(order[i - 1]);
      b.Unplace(order[i - 1]);
      ASSERT_TRUE(a.PlaceGreedily(order[i - 1], Fit::kFirst).ok());
      ASSERT_TRUE(b.PlaceGreedily(order[i - 1], Fit::kFirst).ok());
    }
  }
  for (BufferId id : order) EXPECT_EQ(a.offset(id), b.offset(id)) << id;
  EXPECT_EQ(a.work(), b.work());
  EXPECT_TRUE(VerifyPlan(*problem, b.ToPlan()).ok());
}

// Lifetimes from one step to most of the program, so the listing search
// files buffers at several levels of its time buckets; buffers are taken
// out and placed again many times, in a new order each time. After each
// round the state is the greedy placement of the kept prefix and the new
// suffix, and every buffer's obstacles are exactly those a scan of all
// buffers finds.
TEST(PlacementTest, ListingSearchKeepsUpWithTakingBuffersOut) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    std::mt19937_64 rng(seed);
    testing::RandomProblemOptions options;
    options.buffers = 300;
    options.horizon = 2000;
    options.max_lifetime = seed % 2 == 0 ? 1500 : 40;
    options.pools = 1 + seed % 3;
    options.explicit_conflicts = static_cast<int>(seed % 3) * 10;
    Problem problem = testing::RandomProblem(seed, options);
    // Most lifetimes short, some long.
    for (Buffer& b : problem.buffers) {
      if (rng() % 4 != 0) {
        b.lifetime.end = b.lifetime.start + 1 + static_cast<Step>(rng() % 8);
      }
    }
    ASSERT_TRUE(ValidateProblem(problem).ok());
    const PlacementIndex index(problem, GapSearch::kListed);
    std::vector<BufferId> order =
        internal::SortedBuffers(problem, PlacementOrder::kSize);
    internal::PlacementState state(index);
    ASSERT_TRUE(state.PlaceFixed().ok());
    for (BufferId b : order)
      ASSERT_TRUE(state.PlaceGreedily(b, Fit::kBest).ok());
    for (int round = 0; round < 20; ++round) {
      const size_t keep = rng() % order.size();
      for (size_t i = keep; i < order.size(); ++i) state.Unplace(order[i]);
      std::shuffle(order.begin() + keep, order.end(), rng);
      for (size_t i = keep; i < order.size(); ++i)
        ASSERT_TRUE(state.PlaceGreedily(order[i], Fit::kBest).ok());
      const std::optional<std::vector<Assignment>> reference =
          ReferenceGreedy(problem, order, Fit::kBest);
      ASSERT_TRUE(reference.has_value());
      const std::string what = absl::StrCat("seed ", seed, " round ", round);
      for (const Assignment& a : *reference) {
        ASSERT_EQ(state.pool(a.buffer), a.pool)
            << what << " buffer " << a.buffer;
        ASSERT_EQ(state.offset(a.buffer), a.offset)
            << what << " buffer " << a.buffer;
      }
      for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size());
           ++b) {
        for (PoolId p = 0; p < static_cast<PoolId>(problem.pools.size()); ++p) {
          std::vector<internal::Obstacle> listed;
          state.CollectObstacles(b, p, listed);
          std::vector<BufferId> got;
          for (const internal::Obstacle& o : listed) got.push_back(o.buffer);
          std::sort(got.begin(), got.end());
          std::vector<BufferId> want;
          const Buffer& x = problem.buffers[b];
          for (BufferId o = 0;
               o < static_cast<BufferId>(problem.buffers.size()); ++o) {
            const Buffer& y = problem.buffers[o];
            if (o == b || x.size == 0 || y.size == 0 || state.pool(o) != p)
              continue;
            const bool partners = std::any_of(
                problem.conflicts.begin(), problem.conflicts.end(),
                [&](const BufferConflict& c) {
                  return (c.a == b && c.b == o) || (c.a == o && c.b == b);
                });
            if (Overlaps(x.lifetime, y.lifetime) || partners) want.push_back(o);
          }
          ASSERT_EQ(got, want) << what << " buffer " << b << " pool " << p;
        }
      }
      EXPECT_TRUE(VerifyPlan(problem, state.ToPlan()).ok()) << what;
    }
  }
}

}  // namespace
}  // namespace memplan

// The helpers of memplan/problem.h: pools and their resolution, the limits
// ValidateProblem enforces, the naive total and lower bound, alignment and
// allowed pools, the conflict graph and plan statistics. (BuildProblem has
// build_problem_test.cc.)

#include "memplan/problem.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/types.h"
#include "memplan/verify.h"
#include "model/conflict_graph.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Buffer Make(const char* name, Bytes size, Step start, Step end) {
  return Buffer{.name = name, .size = size, .lifetime = {start, end}};
}

Problem TwoPools() {
  return Problem{
      .buffers = {Make("a", 64, 0, 2), Make("b", 32, 1, 3),
                  Make("c", 16, 3, 4)},
      .pools = {Pool{.name = "sram", .capacity = 256, .alignment = 16},
                Pool{.name = "dram", .alignment = 1}}};
}

TEST(ValidatePoolsTest, NamesCapacitiesAndAlignments) {
  EXPECT_TRUE(ValidatePools({Pool{.name = "a"}, Pool{.name = "b"}}).ok());
  const std::vector<std::pair<std::vector<Pool>, std::string>> bad = {
      {{Pool{.name = ""}}, "no name"},
      {{Pool{.name = "a"}, Pool{.name = "a"}}, "\"a\" is defined twice"},
      {{Pool{.name = "a", .capacity = -1}}, "negative capacity"},
      {{Pool{.name = "a", .alignment = 24}}, "not a power of two"},
      {{Pool{.name = "a", .alignment = kMaxAlignment * 2}}, "largest"},
      {{Pool{.name = "a", .capacity = kMaxBytes + 1}}, "largest"},
  };
  for (const auto& [pools, message] : bad) {
    const absl::Status status = ValidatePools(pools);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(status.message(), HasSubstr(message));
  }
}

TEST(ResolvePoolsTest, OptionsThenDeclaredThenOneDefault) {
  const std::vector<Pool> declared = {Pool{.name = "declared"}};
  BuildOptions options;
  absl::StatusOr<std::vector<Pool>> pools = ResolvePools({}, options);
  ASSERT_TRUE(pools.ok()) << pools.status();
  EXPECT_THAT(*pools, ElementsAre(Pool{.name = "default"}));
  pools = ResolvePools(declared, options);
  ASSERT_TRUE(pools.ok());
  EXPECT_THAT(*pools, ElementsAre(Pool{.name = "declared"}));
  options.pools = {Pool{.name = "given", .alignment = 8}};
  options.capacity = 4096;
  pools = ResolvePools(declared, options);
  ASSERT_TRUE(pools.ok());
  EXPECT_THAT(*pools, ElementsAre(Pool{
                          .name = "given", .capacity = 4096, .alignment = 8}));
}

TEST(ResolvePoolsTest, BadOptionsAreInvalidArgument) {
  BuildOptions options;
  options.alignment = 3;
  EXPECT_EQ(ResolvePools({}, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = {};
  options.capacity = -5;
  EXPECT_EQ(ResolvePools({}, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A capacity option for several pools is ambiguous.
  options = {};
  options.capacity = 100;
  const absl::Status two =
      ResolvePools({Pool{.name = "a"}, Pool{.name = "b"}}, options).status();
  EXPECT_EQ(two.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(two.message(), HasSubstr("single pool"));
}

TEST(ValidateProblemTest, AcceptsAGoodProblem) {
  EXPECT_TRUE(ValidateProblem(TwoPools()).ok());
}

TEST(ValidateProblemTest, NamesTheBufferPastALimitOrRule) {
  struct Case {
    const char* what;
    void (*spoil)(Problem&);
    const char* message;
  };
  const std::vector<Case> cases = {
      {"empty lifetime",
       [](Problem& p) {
         p.buffers[1].lifetime = {2, 2};
       },
       "\"b\""},
      {"negative start",
       [](Problem& p) {
         p.buffers[1].lifetime = {-1, 2};
       },
       "\"b\""},
      {"end past kMaxStep",
       [](Problem& p) {
         p.buffers[1].lifetime = {0, kMaxStep + 1};
       },
       "\"b\""},
      {"alignment not a power of two",
       [](Problem& p) { p.buffers[2].alignment = 12; }, "\"c\""},
      {"alignment past kMaxAlignment",
       [](Problem& p) {
         p.buffers[2].alignment = kMaxAlignment * 2;
         p.buffers[2].size = kMaxAlignment * 2;
       },
       "\"c\""},
      {"size not a multiple of the alignment",
       [](Problem& p) { p.buffers[2].alignment = 32; }, "\"c\""},
      {"bytes past kMaxBytes",
       [](Problem& p) { p.buffers[0].size = kMaxBytes; }, ""},
      {"unknown pool", [](Problem& p) { p.buffers[0].pools = {7}; }, "\"a\""},
      {"fixed outside the capacity",
       [](Problem& p) {
         p.buffers[0].fixed = Placement{.pool = 0, .offset = 224};
       },
       "\"a\""},
      {"fixed misaligned",
       [](Problem& p) {
         p.buffers[0].fixed = Placement{.pool = 0, .offset = 8};
       },
       "\"a\""},
      {"conflicting fixed buffers sharing bytes",
       [](Problem& p) {
         p.buffers[0].fixed = Placement{.pool = 1, .offset = 0};
         p.buffers[1].fixed = Placement{.pool = 1, .offset = 32};
       },
       "\"b\""},
      {"no pools", [](Problem& p) { p.pools.clear(); }, ""},
      {"conflict with an unknown buffer",
       [](Problem& p) { p.conflicts = {{.a = 0, .b = 9}}; }, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Problem problem = TwoPools();
    c.spoil(problem);
    const absl::Status status = ValidateProblem(problem);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), HasSubstr(c.message));
  }
}

TEST(NaiveTotalAndLowerBoundTest, HandCase) {
  const Problem p = TwoPools();
  EXPECT_EQ(NaiveTotal(p), 112);
  // a and b together at step 1; b ends where c starts (half-open).
  EXPECT_EQ(LowerBound(p), 96);
  EXPECT_EQ(LowerBound(Problem{.pools = {Pool{.name = "p"}}}), 0);
}

// The lower bound is the most bytes alive at one step, counted step by step.
TEST(NaiveTotalAndLowerBoundTest, MatchStepByStepCounts) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const Problem p = testing::RandomProblem(seed, {.buffers = 40});
    Bytes naive = 0, lower = 0;
    Step horizon = 0;
    for (const Buffer& b : p.buffers) {
      naive += b.size;
      horizon = std::max(horizon, b.lifetime.end);
    }
    for (Step t = 0; t < horizon; ++t) {
      Bytes live = 0;
      for (const Buffer& b : p.buffers) {
        if (b.lifetime.start <= t && t < b.lifetime.end) live += b.size;
      }
      lower = std::max(lower, live);
    }
    EXPECT_EQ(NaiveTotal(p), naive) << seed;
    EXPECT_EQ(LowerBound(p), lower) << seed;
  }
}

// Steps far apart are summed by sorting the events, steps close together by
// step: both give the count of the same problem with its steps spread out.
TEST(NaiveTotalAndLowerBoundTest, SparseAndDenseStepsAgree) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const Problem dense = testing::RandomProblem(seed, {.buffers = 40});
    for (const Step scale : {Step{1000}, Step{1} << 40}) {
      Problem sparse = dense;
      for (Buffer& b : sparse.buffers) {
        b.lifetime = {scale * b.lifetime.start + 7, scale * b.lifetime.end + 7};
      }
      EXPECT_EQ(LowerBound(sparse), LowerBound(dense)) << seed;
    }
  }
  // Touching lifetimes at both ends of the supported steps, with a zero-size
  // buffer alive throughout.
  const Problem far{
      .buffers = {Buffer{.name = "a", .size = 8, .lifetime = {0, 1}},
                  Buffer{.name = "b", .size = 16, .lifetime = {1, 2}},
                  Buffer{.name = "z", .size = 0, .lifetime = {0, kMaxStep}},
                  Buffer{.name = "c",
                         .size = 4,
                         .lifetime = {kMaxStep - 2, kMaxStep - 1}},
                  Buffer{.name = "d",
                         .size = 4,
                         .lifetime = {kMaxStep - 2, kMaxStep}}},
      .pools = {Pool{.name = "p"}}};
  EXPECT_EQ(LowerBound(far), 16);
  Problem near = far;
  near.buffers[2].lifetime = {0, 3};
  near.buffers[3].lifetime = {1, 3};
  near.buffers[4].lifetime = {1, 2};
  EXPECT_EQ(LowerBound(near), 24);
}

TEST(EffectiveAlignmentTest, TheLargerOfBufferAndPool) {
  Problem p = TwoPools();
  p.buffers[0].alignment = 64;
  EXPECT_EQ(EffectiveAlignment(p, 0, 0), 64);
  EXPECT_EQ(EffectiveAlignment(p, 1, 0), 16);
  EXPECT_EQ(EffectiveAlignment(p, 1, 1), 1);
}

TEST(AllowedPoolsTest, ItsListInOrderElseEveryPool) {
  Problem p = TwoPools();
  p.buffers[1].pools = {1, 0};
  EXPECT_THAT(AllowedPools(p, 0), ElementsAre(0, 1));
  EXPECT_THAT(AllowedPools(p, 1), ElementsAre(1, 0));
}

TEST(ConflictGraphTest, LifetimeOverlapsAndExplicitConflicts) {
  Problem p = TwoPools();
  p.conflicts = {{.a = 2, .b = 0}, {.a = 0, .b = 2}, {.a = 0, .b = 1}};
  const ConflictGraph g = ConflictGraph::Build(p);
  EXPECT_EQ(g.size(), 3);
  EXPECT_THAT(g.neighbors(0), ElementsAre(1, 2));  // sorted, once each
  EXPECT_THAT(g.neighbors(1), ElementsAre(0));
  EXPECT_THAT(g.neighbors(2), ElementsAre(0));
  EXPECT_EQ(g.num_edges(), 2);
  EXPECT_TRUE(g.Conflict(2, 0));
  EXPECT_FALSE(g.Conflict(1, 2));  // b ends where c starts
}

TEST(ConflictGraphTest, MatchesEveryPair) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Problem p =
        testing::RandomProblem(seed, {.buffers = 30, .explicit_conflicts = 10});
    const ConflictGraph g = ConflictGraph::Build(p);
    const int n = static_cast<int>(p.buffers.size());
    for (BufferId a = 0; a < n; ++a) {
      for (BufferId b = 0; b < n; ++b) {
        bool expected =
            a != b && Overlaps(p.buffers[a].lifetime, p.buffers[b].lifetime);
        for (const BufferConflict& c : p.conflicts) {
          expected =
              expected ||
              (a != b && ((c.a == a && c.b == b) || (c.a == b && c.b == a)));
        }
        EXPECT_EQ(g.Conflict(a, b), expected) << seed << ": " << a << ", " << b;
      }
    }
  }
}

TEST(ComputePlanStatisticsTest, PoolsPeakBoundsAndProof) {
  const Problem p = TwoPools();
  Plan plan{.assignments = {{.buffer = 0, .pool = 0, .offset = 0},
                            {.buffer = 1, .pool = 1, .offset = 8},
                            {.buffer = 2, .pool = 0, .offset = 64}}};
  ComputePlanStatistics(p, plan);
  EXPECT_TRUE(VerifyPlan(p, plan).ok()) << VerifyPlan(p, plan);
  EXPECT_THAT(plan.pool_used, ElementsAre(80, 40));
  EXPECT_EQ(plan.peak, 120);
  EXPECT_EQ(plan.naive_total, 112);
  EXPECT_EQ(plan.lower_bound, 96);
  EXPECT_FALSE(plan.proven_optimal);
  // At the lower bound a plan is optimal, whoever made it.
  plan.assignments = {{.buffer = 0, .pool = 0, .offset = 0},
                      {.buffer = 1, .pool = 0, .offset = 64},
                      {.buffer = 2, .pool = 0, .offset = 0}};
  ComputePlanStatistics(p, plan);
  EXPECT_TRUE(VerifyPlan(p, plan).ok()) << VerifyPlan(p, plan);
  EXPECT_EQ(plan.peak, 96);
  EXPECT_TRUE(plan.proven_optimal);
}

TEST(ComputePlanStatisticsTest, SkipsWhatTheVerifierReports) {
  const Problem p = TwoPools();
  Plan plan{.assignments = {{.buffer = 0, .pool = 5, .offset = 0},
                            {.buffer = 9, .pool = 0, .offset = 0},
                            {.buffer = 1, .pool = 0, .offset = -32},
                            {.buffer = 2, .pool = 1, .offset = 0}}};
  ComputePlanStatistics(p, plan);
  EXPECT_FALSE(VerifyPlan(p, plan).ok());
  EXPECT_THAT(plan.pool_used, ElementsAre(0, 16));
  EXPECT_EQ(plan.peak, 16);
}

}  // namespace
}  // namespace memplan

// VerifyPlan: accepts valid plans, rejects each kind of invalid one with a
// message naming the buffers, and agrees with a brute-force check.

#include "memplan/verify.h"

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/io.h"
#include "memplan/problem.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;

Problem ThreeBuffers() {
  return Problem{
      .buffers = {Buffer{.name = "a", .size = 16, .lifetime = {0, 2}},
                  Buffer{.name = "b", .size = 32, .lifetime = {1, 3}},
                  Buffer{.name = "c", .size = 16, .lifetime = {2, 4}}},
      .pools = {Pool{.name = "default"}}};
}

Plan PlanOf(const Problem& problem, std::vector<Offset> offsets,
            PoolId pool = 0) {
  Plan plan;
  for (BufferId b = 0; b < static_cast<BufferId>(offsets.size()); ++b) {
    plan.assignments.push_back(
        {.buffer = b, .pool = pool, .offset = offsets[b]});
  }
  ComputePlanStatistics(problem, plan);
  return plan;
}

std::string Error(const Problem& problem, const Plan& plan) {
  absl::Status status = VerifyPlan(problem, plan);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

TEST(VerifyTest, AcceptsAValidPlanWhereTouchingLifetimesShareBytes) {
  const Problem problem = ThreeBuffers();
  // a [0,2) and c [2,4) touch: they may share offset 0.
  EXPECT_TRUE(VerifyPlan(problem, PlanOf(problem, {0, 16, 0})).ok());
}

TEST(VerifyTest, AnOverlapNamesBothBuffersLifetimesAndBytes) {
  const Problem problem = ThreeBuffers();
  const std::string message = Error(problem, PlanOf(problem, {0, 8, 48}));
  EXPECT_THAT(message, HasSubstr("\"a\" (alive [0, 2), bytes [0, 16))"));
  EXPECT_THAT(message, HasSubstr("\"b\" (alive [1, 3), bytes [8, 40))"));
}

TEST(VerifyTest, RejectsMissingDuplicateAndUnknownAssignments) {
  const Problem problem = ThreeBuffers();
  Plan missing = PlanOf(problem, {0, 16});
  EXPECT_THAT(Error(problem, missing), HasSubstr("\"c\" is not assigned"));
  Plan duplicate = PlanOf(problem, {0, 16, 0});
  duplicate.assignments[2].buffer = 1;
  EXPECT_THAT(Error(problem, duplicate),
              HasSubstr("\"b\" is assigned more than once"));
  Plan unknown = PlanOf(problem, {0, 16, 0});
  unknown.assignments[2].buffer = 7;
  EXPECT_THAT(Error(problem, unknown), HasSubstr("buffer #7"));
  Plan bad_pool = PlanOf(problem, {0, 16, 0});
  bad_pool.assignments[0].pool = 3;
  EXPECT_THAT(Error(problem, bad_pool), HasSubstr("pool #3"));
}

TEST(VerifyTest, RejectsMisalignedNegativeAndOverCapacityOffsets) {
  Problem problem = ThreeBuffers();
  problem.buffers[1].alignment = 16;
  EXPECT_THAT(
      Error(problem, PlanOf(problem, {0, 24, 0})),
      HasSubstr(
          "\"b\" is at offset 24, which is not a non-negative multiple of 16"));
  problem.pools[0].alignment = 32;
  EXPECT_THAT(Error(problem, PlanOf(problem, {0, 16, 0})),
              HasSubstr("multiple of 32"));
  EXPECT_THAT(Error(problem, PlanOf(problem, {-32, 32, 0})),
              HasSubstr("\"a\""));
  problem.pools[0].capacity = 48;
  EXPECT_THAT(Error(problem, PlanOf(problem, {0, 32, 0})),
              HasSubstr("beyond the capacity 48"));
}

TEST(VerifyTest, RejectsDisallowedPoolsAndMovedFixedBuffers) {
  Problem problem = ThreeBuffers();
  problem.pools.push_back(Pool{.name = "slow"});
  problem.buffers[0].pools = {1};
  EXPECT_THAT(
      Error(problem, PlanOf(problem, {0, 16, 0})),
      HasSubstr(
          "\"a\" is placed in pool \"default\", which it is not allowed in"));
  problem.buffers[0].pools = {};
  problem.buffers[2].fixed = Placement{.pool = 0, .offset = 64};
  EXPECT_THAT(Error(problem, PlanOf(problem, {0, 16, 0})),
              HasSubstr("\"c\" is fixed"));
  EXPECT_TRUE(VerifyPlan(problem, PlanOf(problem, {0, 16, 64})).ok());
}

TEST(VerifyTest, ExplicitConflictsAndZeroSizeBuffers) {
  Problem problem = ThreeBuffers();
  problem.conflicts = {{.a = 0, .b = 2}};
  EXPECT_THAT(Error(problem, PlanOf(problem, {0, 16, 0})),
              HasSubstr("conflict explicitly"));
  Problem empty{.buffers = {Buffer{.name = "z", .size = 0, .lifetime = {0, 5}},
                            Buffer{.name = "w", .size = 8, .lifetime = {0, 5}}},
                .pools = {Pool{.name = "default"}}};
  EXPECT_TRUE(VerifyPlan(empty, PlanOf(empty, {0, 0})).ok());  // no byte shared
}

TEST(VerifyTest, RejectsAPlanThatMisreportsItsPeak) {
  const Problem problem = ThreeBuffers();
  Plan plan = PlanOf(problem, {0, 16, 0});
  plan.peak -= 1;
  EXPECT_THAT(Error(problem, plan), HasSubstr("peak"));
  plan = PlanOf(problem, {0, 16, 0});
  plan.pool_used[0] = 1;
  EXPECT_THAT(Error(problem, plan), HasSubstr("used in pool"));
}

// The seed notebook printed a plan whose conv weights overlap the quantized
// input they are read with.
TEST(VerifyTest, RejectsTheSeedNotebookPlanNamingTheTensors) {
  absl::StatusOr<Problem> problem = testing::LoadProblem(
      "seed/seed000_model.json", {.plan_constants = true, .alignment = 4});
  ASSERT_TRUE(problem.ok()) << problem.status();
  absl::StatusOr<std::string> text =
      ReadFile(testing::DataPath("seed/seed000_notebook_plan.json"));
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<Plan> plan = ParsePlanJson(*text, *problem);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, 692352);
  const std::string message = Error(*problem, *plan);
  EXPECT_THAT(message, HasSubstr("\"input_1_int8:0\""));
  EXPECT_THAT(message, HasSubstr("conv2d_1/Conv2D/ReadVariableOp:0\""));
}

// Random plans, valid or not: the verifier agrees with an all-pairs check.
TEST(VerifyTest, AgreesWithBruteForceOnRandomPlans) {
  int rejected = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Problem problem = testing::RandomProblem(seed, {.buffers = 12,
                                                    .horizon = 10,
                                                    .max_lifetime = 4,
                                                    .max_size = 8,
                                                    .explicit_conflicts = 2});
    std::mt19937_64 rng(seed);
    std::vector<Offset> offsets;
    for (int b = 0; b < 12; ++b)
      offsets.push_back(static_cast<Offset>(rng() % 40));
    const Plan plan = PlanOf(problem, offsets);
    bool overlap = false;
    for (int a = 0; a < 12; ++a) {
      for (int b = a + 1; b < 12; ++b) {
        bool conflict =
            Overlaps(problem.buffers[a].lifetime, problem.buffers[b].lifetime);
        for (const BufferConflict& c : problem.conflicts) {
          conflict |= (c.a == a && c.b == b);
        }
        const bool bytes = offsets[a] < offsets[b] + problem.buffers[b].size &&
                           offsets[b] < offsets[a] + problem.buffers[a].size;
        overlap |= conflict && bytes;
      }
    }
    EXPECT_EQ(VerifyPlan(problem, plan).ok(), !overlap) << "seed " << seed;
    rejected += overlap;
  }
  EXPECT_GT(rejected, 50);  // both outcomes are exercised
  EXPECT_LT(rejected, 300);
}

// The status a plan whose offsets are aligned and in allowed pools must get,
// found the slow way. Buffers are taken in order of (start, id); a buffer
// collides when an earlier one of a positive size is still alive at its
// start (ends come first at a step) in its pool and shares a byte. The first
// such buffer is named with the lowest of those at or above its offset, else
// the one below it. Without a collision the first explicit conflict that
// shares a byte is named.
std::string ExpectedMessage(const Problem& problem, const Plan& plan) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<Assignment> of(n);
  for (const Assignment& a : plan.assignments) of[a.buffer] = a;
  auto describe = [&](BufferId b) {
    const Buffer& buffer = problem.buffers[b];
    return absl::StrCat("\"", buffer.name, "\" (alive [", buffer.lifetime.start,
                        ", ", buffer.lifetime.end, "), bytes [", of[b].offset,
                        ", ", of[b].offset + buffer.size, "))");
  };
  auto report = [&](BufferId a, BufferId b, absl::string_view why) {
    return absl::StrCat("buffers ", describe(a), " and ", describe(b), " ", why,
                        " and share bytes in pool \"",
                        problem.pools[of[a].pool].name, "\"");
  };
  auto share_bytes = [&](BufferId a, BufferId b) {
    const Bytes a_size = problem.buffers[a].size;
    const Bytes b_size = problem.buffers[b].size;
    return of[a].pool == of[b].pool && a_size > 0 && b_size > 0 &&
           of[a].offset < of[b].offset + b_size &&
           of[b].offset < of[a].offset + a_size;
  };
  std::vector<BufferId> order(n);
  for (BufferId b = 0; b < n; ++b) order[b] = b;
  std::sort(order.begin(), order.end(), [&](BufferId a, BufferId b) {
    return std::pair(problem.buffers[a].lifetime.start, a) <
           std::pair(problem.buffers[b].lifetime.start, b);
  });
  for (int i = 0; i < n; ++i) {
    const BufferId x = order[i];
    std::optional<BufferId> above, below;
    for (int j = 0; j < i; ++j) {
      const BufferId y = order[j];
      if (problem.buffers[y].lifetime.end <=
              problem.buffers[x].lifetime.start ||
          !share_bytes(x, y)) {
        continue;
      }
      if (of[y].offset < of[x].offset) {
        below = y;
      } else if (!above.has_value() || of[y].offset < of[*above].offset) {
        above = y;
      }
    }
    if (above.has_value() || below.has_value()) {
      return report(above.value_or(below.value_or(0)), x,
                    "are alive at the same time");
    }
  }
  for (const BufferConflict& c : problem.conflicts) {
    if (share_bytes(c.a, c.b)) return report(c.a, c.b, "conflict explicitly");
  }
  return "";
}

// Random plans, many of them wrong, over several pools, with zero-size
// buffers, equal and touching steps, shared offsets and assignments out of
// order: the verifier names exactly the first collision a sweep meets. The
// larger problems keep more than a hundred buffers alive in a pool at once.
TEST(VerifyTest, NamesTheFirstCollisionOfASweep) {
  int collisions = 0;
  int explicit_conflicts = 0;
  int valid = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const bool large = seed % 8 == 0;
    Problem problem =
        testing::RandomProblem(seed, {.buffers = large ? 600 : 16,
                                      .horizon = large ? 6 : 8,
                                      .max_lifetime = 3,
                                      .max_size = 3,
                                      .pools = 1 + static_cast<int>(seed % 3),
                                      .explicit_conflicts = 2});
    std::mt19937_64 rng(seed);
    for (Buffer& b : problem.buffers) {
      if (rng() % 6 == 0) b.size = 0;
    }
    Plan plan;
    for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size());
         ++b) {
      const std::vector<PoolId> pools = AllowedPools(problem, b);
      // Offsets are mostly taken from a few, so that they meet often; some
      // problems, and most of a large one's buffers, clear each other.
      const bool clear = large ? rng() % 400 != 0 : seed % 4 == 1;
      const Offset offset = clear ? 3 * b : static_cast<Offset>(rng() % 12);
      plan.assignments.push_back(
          {.buffer = b, .pool = pools[rng() % pools.size()], .offset = offset});
    }
    // An explicit conflict between buffers at the same place.
    for (const BufferConflict& c : problem.conflicts) {
      const std::vector<PoolId> pools = AllowedPools(problem, c.b);
      if (std::count(pools.begin(), pools.end(), plan.assignments[c.a].pool)) {
        plan.assignments[c.b].pool = plan.assignments[c.a].pool;
        plan.assignments[c.b].offset = plan.assignments[c.a].offset;
      }
      break;
    }
    if (seed % 5 == 0) {
      std::shuffle(plan.assignments.begin(), plan.assignments.end(), rng);
    }
    ComputePlanStatistics(problem, plan);
    const std::string expected = ExpectedMessage(problem, plan);
    const absl::Status status = VerifyPlan(problem, plan);
    EXPECT_EQ(std::string(status.message()), expected) << "seed " << seed;
    if (!expected.empty()) {
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    }
    collisions += absl::StrContains(expected, "alive at the same time");
    explicit_conflicts += absl::StrContains(expected, "explicitly");
    valid += expected.empty();
  }
  // Every outcome is exercised.
  EXPECT_GT(collisions, 100);
  EXPECT_GT(explicit_conflicts, 10);
  EXPECT_GT(valid, 10);
}

// A view x -> y declared 200 bytes of a 100-byte buffer, with t right after:
// y's bytes [0, 200) reach over t's [100, 200) while both are alive.
Problem ViewStickingOut() {
  return Problem{
      .buffers = {Buffer{.name = "x",
                         .tensors = {"x", "y"},
                         .size = 100,
                         .lifetime = {0, 3},
                         .spans = {{.size = 100, .lifetime = {0, 2}},
                                   {.size = 200, .lifetime = {1, 3}}}},
                  Buffer{.name = "t",
                         .tensors = {"t"},
                         .size = 100,
                         .lifetime = {2, 3}}},
      .pools = {Pool{.name = "default"}}};
}

TEST(VerifyTest, ATensorStickingOutOfItsBufferIsRejectedWithBothTensorsNamed) {
  const Problem problem = ViewStickingOut();
  const std::string message = Error(problem, PlanOf(problem, {0, 100}));
  EXPECT_THAT(message, HasSubstr("tensor \"y\" (alive [1, 3), bytes [0, 200) "
                                 "in buffer \"x\")"));
  EXPECT_THAT(message, HasSubstr("tensor \"t\" (alive [2, 3), bytes [100, 200) "
                                 "in buffer \"t\")"));
  EXPECT_THAT(message, HasSubstr("reaches beyond its buffer"));
  // Apart from t it still sticks out, and is still rejected.
  EXPECT_THAT(Error(problem, PlanOf(problem, {0, 200})),
              HasSubstr("tensor \"y\" (alive [1, 3), bytes [0, 200) in buffer "
                        "\"x\") reaches beyond its buffer (100 bytes"));
  // ValidateProblem refuses such a problem up front.
  EXPECT_THAT(ValidateProblem(problem).message(),
              HasSubstr("tensor \"y\" (200 bytes, alive [1, 3)) does not lie "
                        "inside its buffer \"x\""));
}

TEST(VerifyTest, ATensorAliveOutsideItsBuffersLifetimeIsRejected) {
  // The merged buffer {p, b, c} claims [1, 4) although p is alive from step
  // 0, when s uses the same bytes.
  const Problem problem{
      .buffers = {Buffer{.name = "b",
                         .tensors = {"p", "b", "c"},
                         .size = 64,
                         .lifetime = {1, 4},
                         .spans = {{.size = 64, .lifetime = {0, 3}},
                                   {.size = 64, .lifetime = {1, 3}},
                                   {.size = 64, .lifetime = {2, 4}}}},
                  Buffer{.name = "s",
                         .tensors = {"s"},
                         .size = 64,
                         .lifetime = {0, 1}}},
      .pools = {Pool{.name = "default"}}};
  const std::string message = Error(problem, PlanOf(problem, {0, 0}));
  EXPECT_THAT(message, HasSubstr("tensor \"p\" (alive [0, 3), bytes [0, 64)"));
  EXPECT_THAT(message, HasSubstr("tensor \"s\" (alive [0, 1), bytes [0, 64)"));
}

TEST(VerifyTest, TensorsInsideTheirBuffersPass) {
  Problem problem = ViewStickingOut();
  problem.buffers[0].spans[1].size = 60;
  EXPECT_TRUE(ValidateProblem(problem).ok());
  EXPECT_TRUE(VerifyPlan(problem, PlanOf(problem, {0, 100})).ok());
  EXPECT_FALSE(VerifyPlan(problem, PlanOf(problem, {0, 50})).ok());
}

}  // namespace
}  // namespace memplan

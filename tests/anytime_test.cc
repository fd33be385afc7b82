// Plans under a work limit: no planner hands back the naive plan while a
// greedy pass (or its cheaper packing) fits in its budget, a plan the
// limit decided says so, and a capacity failure says whether the limit or
// the capacity is the cause. Work limits only: nothing here reads a clock.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "effort/budget.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/formats.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/synthetic.h"
#include "memplan/verify.h"
#include "placement/placement.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;

// 3000 random intervals, about 20 alive at once: a greedy pass's cost is
// a few times the buffers, and the naive plan hundreds of times the bound.
const Problem& Intervals() {
  static const Problem* problem = [] {
    absl::StatusOr<Problem> p = SyntheticProblem(SyntheticKind::kIntervals,
                                                 {.buffers = 3000, .seed = 7});
    return new Problem(*std::move(p));
  }();
  return *problem;
}

// The work a whole pass of `planner` costs, to within a factor of two:
// the least power of two of work units that does not cut it.
int64_t WholePassWork(const Problem& problem, const std::string& planner) {
  for (int64_t work = 1024;; work *= 2) {
    absl::StatusOr<Plan> plan =
        PlanMemory(problem, {.planner = planner, .plan = {.work_limit = work}});
    if (plan.ok() && plan->counters.count("cut_by_work_limit") == 0)
      return work;
  }
}

// MiniMalloc's D, in one unbounded pool.
Problem MiniMallocD() {
  absl::StatusOr<std::string> text =
      ReadFile(testing::DataPath("minimalloc/D.1048576.csv"));
  absl::StatusOr<BufferCsv> csv = ParseBufferCsv(*text);
  return csv->problem;
}

// Every registered planner but naive under work limits from 1 unit to a
// whole greedy pass of `problem`: never the naive plan, never above
// `bound_factor` times the lower bound, always below a `naive_factor`th of
// the naive plan.
void ExpectNoNaivePlanUnderAnyWorkLimit(const Problem& problem,
                                        int64_t bound_factor,
                                        int64_t naive_factor) {
  const Bytes naive_total = NaiveTotal(problem);
  const Bytes lower_bound = LowerBound(problem);
  const int64_t pass = WholePassWork(problem, "greedy_by_size");
  int planners = 0;
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name == "naive") continue;
    ++planners;
    for (const int64_t work : {int64_t{1}, int64_t{1000}, pass / 4, pass}) {
      SCOPED_TRACE(
          absl::StrCat(std::string(info.name), " at ", work, " work units"));
      PlanMemoryOptions options{.planner = std::string(info.name),
                                .plan = {.work_limit = work}};
      absl::StatusOr<Plan> plan = PlanMemory(problem, options);  // verifies
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_EQ(plan->counters.count("naive_plan"), 0);
      EXPECT_LT(plan->peak, bound_factor * lower_bound);
      EXPECT_LT(plan->peak * naive_factor, naive_total);
    }
  }
  // Every planner that can return a start plan: the heuristics, the
  // searches from a greedy start (hill_climb, best, exact) and cp and
  // cpsat where built.
  EXPECT_GE(planners, 8 + MEMPLAN_HAVE_CP + MEMPLAN_HAVE_CPSAT);
}

TEST(AnytimeTest, NoPlannerReturnsNaiveUnderAnyWorkLimit) {
  // Packing alone keeps within 1.5x the bound here (caffe2's shared
  // objects, whole, at 2.24x); naive is far above it (46x).
  ExpectNoNaivePlanUnderAnyWorkLimit(Intervals(), 3, 20);
}

TEST(AnytimeTest, NoPlannerReturnsNaiveOnACrowdedProblem) {
  // 4000 random intervals of up to 3000 steps: about 370 alive at each
  // step and more than 256 overlapping pairs a buffer, where best takes
  // its list for dense problems (size classes first) once the limit
  // affords few passes. Packing alone is at 1.21x the bound, caffe2's
  // shared objects at 1.65x, naive at 9.5x.
  absl::StatusOr<Problem> problem =
      SyntheticProblem(SyntheticKind::kIntervals,
                       {.buffers = 4000, .seed = 7, .max_lifetime = 3000});
  ASSERT_TRUE(problem.ok()) << problem.status();
  ASSERT_GE(internal::CountOverlappingPairs(*problem), 256 * 4000);
  ExpectNoNaivePlanUnderAnyWorkLimit(*problem, 2, 5);
}

TEST(AnytimeTest, AGreedyPassThatFitsItsBudgetIsWhole) {
  const Problem& problem = Intervals();
  for (const std::string name : {"greedy_by_size", "first_fit"}) {
    SCOPED_TRACE(name);
    const int64_t pass = WholePassWork(problem, name);
    absl::StatusOr<Plan> whole = PlanMemory(problem, {.planner = name});
    absl::StatusOr<Plan> granted =
        PlanMemory(problem, {.planner = name, .plan = {.work_limit = pass}});
    ASSERT_TRUE(whole.ok() && granted.ok());
    EXPECT_TRUE(granted->counters.empty());
    EXPECT_EQ(granted->assignments, whole->assignments);
    EXPECT_EQ(LimitNote(*granted, {.work_limit = pass}), "");
  }
}

TEST(AnytimeTest, ACutPassKeepsWhatItPlacedAndPacksTheRest) {
  const Problem& problem = Intervals();
  const int64_t pass = WholePassWork(problem, "greedy_by_size");
  const PlanOptions options{.work_limit = pass / 4};
  absl::StatusOr<Plan> plan =
      PlanMemory(problem, {.planner = "greedy_by_size", .plan = options});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->counters["cut_by_work_limit"], 1);
  EXPECT_GT(plan->counters["pass_placed"], 0);
  EXPECT_EQ(plan->counters["pass_placed"] + plan->counters["packed"], 3000);
  EXPECT_LE(plan->counters["pass_work"], options.work_limit);
  const std::string note = LimitNote(*plan, options);
  EXPECT_THAT(note,
              HasSubstr(absl::StrCat("the work limit (", options.work_limit,
                                     " work units) cut the greedy pass "
                                     "after ")));
  EXPECT_THAT(note, HasSubstr("; a whole greedy pass costs about "));
}

TEST(AnytimeTest, APlanWithoutAPassSaysWhatLimitGivesOne) {
  const PlanOptions options{.work_limit = 1};
  absl::StatusOr<Plan> plan = PlanMemory(Intervals(), {.plan = options});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->counters["cut_by_work_limit"], 1);
  EXPECT_EQ(plan->counters["packed"], 3000);
  EXPECT_THAT(LimitNote(*plan, options),
              HasSubstr("the work limit (1 work units) pays for no greedy "
                        "pass: the 3000 buffers are packed"));
}

TEST(AnytimeTest, ASearchTheLimitEndedSaysSo) {
  // exact proves the random intervals optimal at once; MiniMalloc's D it
  // does not prove within 2x10^7 work units. hill_climb stops short of
  // the intervals' bound at 2x10^6.
  const Problem d = MiniMallocD();
  for (const auto& [name, problem, work] :
       {std::tuple{"exact", &d, 20'000'000},
        std::tuple{"hill_climb", &Intervals(), 2'000'000}}) {
    SCOPED_TRACE(name);
    const PlanOptions options{.work_limit = work};
    absl::StatusOr<Plan> plan =
        PlanMemory(*problem, {.planner = name, .plan = options});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->counters["cut_by_work_limit"], 1);
    EXPECT_THAT(LimitNote(*plan, options),
                HasSubstr(absl::StrCat("the work limit (", work,
                                       " work units) ended the search: the "
                                       "plan is the best found by then")));
  }
}

TEST(AnytimeTest, BuffersAllAliveAtOnceStillGetTheNaivePlan) {
  // Packing cannot reuse anything there: the naive plan is as small.
  Problem problem;
  problem.pools.push_back({.name = "default"});
  for (int i = 0; i < 50; ++i) {
    problem.buffers.push_back({.name = absl::StrCat("b", i),
                               .size = 64 * (i + 1),
                               .lifetime = {.start = 0, .end = 10}});
  }
  absl::StatusOr<Plan> plan = PlanMemory(
      problem, {.planner = "greedy_by_size", .plan = {.work_limit = 1}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, plan->naive_total);
  EXPECT_EQ(plan->counters["naive_plan"], 1);
  EXPECT_THAT(LimitNote(*plan, {.work_limit = 1}),
              HasSubstr("this is the naive plan"));
}

TEST(AnytimeTest, ExplicitConflictsArePackedApart) {
  // Two buffers that never live together but conflict: packing must not
  // let one reuse the other's bytes.
  Problem problem = Intervals();
  problem.conflicts.push_back({.a = 0, .b = 1});
  problem.conflicts.push_back({.a = 2, .b = 3});
  absl::StatusOr<Plan> plan = PlanMemory(
      problem, {.planner = "greedy_by_size", .plan = {.work_limit = 1}});
  ASSERT_TRUE(plan.ok()) << plan.status();  // verified
  EXPECT_EQ(plan->counters["packed"], 3000);
}

TEST(AnytimeTest, PackingHonoursPoolsAlignmentsFixedBuffersAndConflicts) {
  // Random problems with every constraint, planned by a pass cut after a
  // few buffers and by packing alone: verified (PlanMemory), or a
  // capacity error.
  int planned = 0;
  int partial = 0;  // plans that kept some of the pass's buffers
  for (uint64_t seed = 0; seed < 200; ++seed) {
    SCOPED_TRACE(seed);
    const Problem problem = testing::RandomProblem(
        seed, {.buffers = 40,
               .pools = 2,
               .capacity = seed % 2 == 0 ? Bytes{0} : Bytes{4000},
               .alignments = true,
               .explicit_conflicts = 5,
               .fixed = 3});
    for (const int64_t work : {int64_t{1}, int64_t{300}}) {
      absl::StatusOr<Plan> plan = PlanMemory(
          problem, {.planner = "greedy_by_size", .plan = {.work_limit = work}});
      if (!plan.ok()) {
        EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted)
            << plan.status();
        continue;
      }
      ++planned;
      EXPECT_EQ(plan->counters["cut_by_work_limit"], 1);
      partial += plan->counters["pass_placed"] > 0 ? 1 : 0;
    }
  }
  EXPECT_GT(planned, 200);
  EXPECT_GT(partial, 50);
}

// The offsets packing gives a problem of one pool without fixed buffers or
// explicit conflicts, as packed.h describes it, written plainly: buffers
// by start, the largest first, then by id; each freed at its end, merged
// with its free neighbours (a range that reaches the top lowers it); each
// in the best fit, the free range smallest by (length, offset) of the 8
// smallest ones at least as long as it that holds it once aligned, else
// at the top.
std::vector<Offset> PlainPacking(const Problem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<BufferId> order(n);
  for (BufferId b = 0; b < n; ++b) order[b] = b;
  auto key = [&](BufferId b) {
    const Buffer& buffer = problem.buffers[b];
    return std::tuple(buffer.lifetime.start, -buffer.size, b);
  };
  std::sort(order.begin(), order.end(),
            [&](BufferId a, BufferId b) { return key(a) < key(b); });
  auto round_up = [](Offset x, Bytes a) { return (x + a - 1) / a * a; };
  std::map<Offset, Bytes> free;                    // offset -> length
  std::set<std::tuple<Step, Offset, Bytes>> live;  // (end, offset, size)
  Offset top = 0;
  std::vector<Offset> offsets(n, 0);
  for (const BufferId b : order) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.size == 0) continue;
    while (!live.empty() &&
           std::get<0>(*live.begin()) <= buffer.lifetime.start) {
      auto [end_step, offset, size] = *live.begin();
      live.erase(live.begin());
      Offset end = offset + size;
      if (auto next = free.find(end); next != free.end()) {
        end += next->second;
        free.erase(next);
      }
      if (auto prev = free.lower_bound(offset);
          prev != free.begin() &&
          std::prev(prev)->first + std::prev(prev)->second == offset) {
        offset = std::prev(prev)->first;
        free.erase(std::prev(prev));
      }
      if (end >= top) {
        top = offset;
      } else {
        free[offset] = end - offset;
      }
    }
    std::vector<std::pair<Bytes, Offset>> long_enough;
    for (const auto& [offset, length] : free) {
      if (length >= buffer.size) long_enough.push_back({length, offset});
    }
    std::sort(long_enough.begin(), long_enough.end());
    long_enough.resize(std::min<size_t>(long_enough.size(), 8));
    std::optional<Offset> at;
    for (const auto& [length, offset] : long_enough) {
      const Offset aligned = round_up(offset, buffer.alignment);
      if (aligned + buffer.size > offset + length) continue;
      free.erase(offset);
      if (aligned > offset) free[offset] = aligned - offset;
      if (aligned + buffer.size < offset + length) {
        free[aligned + buffer.size] = offset + length - aligned - buffer.size;
      }
      at = aligned;
      break;
    }
    if (!at.has_value()) {
      at = round_up(top, buffer.alignment);
      top = *at + buffer.size;
    }
    offsets[b] = *at;
    live.insert({buffer.lifetime.end, *at, buffer.size});
  }
  return offsets;
}

TEST(AnytimeTest, PackingTakesTheBestFitHoweverManyRangesAreFree) {
  // Intervals with hundreds alive at once, a third aligned to 4-64 KiB: from a
  // few free ranges to more than a hundred, where packing keeps them in
  // B-trees instead of a vector, and ranges long enough that the alignment
  // pads out.
  absl::StatusOr<Problem> made =
      SyntheticProblem(SyntheticKind::kIntervals,
                       {.buffers = 20000, .seed = 3, .max_lifetime = 4000});
  ASSERT_TRUE(made.ok()) << made.status();
  Problem problem = *std::move(made);
  for (size_t b = 0; b < problem.buffers.size(); b += 3) {
    Buffer& buffer = problem.buffers[b];
    buffer.alignment = Bytes{4096} << (b % 5);
    buffer.size = (buffer.size + buffer.alignment - 1) / buffer.alignment *
                  buffer.alignment;
  }
  absl::StatusOr<Plan> plan = PlanMemory(
      problem, {.planner = "greedy_by_size", .plan = {.work_limit = 1}});
  ASSERT_TRUE(plan.ok()) << plan.status();  // verified
  ASSERT_EQ(plan->counters["packed"], 20000);
  const std::vector<Offset> expected = PlainPacking(problem);
  int differ = 0;
  for (const Assignment& a : plan->assignments) {
    differ += a.offset != expected[a.buffer] ? 1 : 0;
  }
  EXPECT_EQ(differ, 0);
  EXPECT_LT(plan->peak, plan->naive_total / 10);
}

TEST(AnytimeTest, ACapacityBelowTheLowerBoundSaysTheSmallestThatCouldWork) {
  Problem problem = Intervals();
  const Bytes lower_bound = LowerBound(problem);
  problem.pools[0].capacity = lower_bound - 1;
  for (const PlannerInfo& info : RegisteredPlanners()) {
    SCOPED_TRACE(std::string(info.name));
    absl::StatusOr<Plan> plan =
        PlanMemory(problem, {.planner = std::string(info.name)});
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(plan.status().message(),
                HasSubstr(absl::StrCat("the smallest capacity that could "
                                       "work is the lower bound, ",
                                       lower_bound, " bytes")));
  }
}

TEST(AnytimeTest, ACapacityMissedWithinTheLimitNamesTheLimit) {
  // MiniMalloc's D fits its capacity (exact finds a plan), but not within
  // a million work units.
  Problem problem = MiniMallocD();
  problem.pools[0].capacity = 1048576;
  absl::StatusOr<Plan> plan =
      PlanMemory(problem, {.plan = {.work_limit = 1'000'000}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(plan.status().message(),
              HasSubstr("no plan found within the limit (work limit 1000000 "
                        "work units)"));
}

// 10^5 buffers all alive at step 10^5 (starts in [0, 10^5), ends in
// [10^5, 2x10^5), sizes in [1, 2^16)): each placement meets every buffer
// placed before it, where a pass and a climb's round cost most.
const Problem& AllAlive() {
  static const Problem* problem = [] {
    auto* p = new Problem;
    p->pools.push_back({.name = "default"});
    constexpr int64_t kBuffers = 100000;
    uint64_t state = 7;
    auto next = [&state] {  // splitmix64
      uint64_t z = (state += 0x9e3779b97f4a7c15);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
      z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
      return z ^ (z >> 31);
    };
    for (int64_t i = 0; i < kBuffers; ++i) {
      const auto start = static_cast<Step>(next() % kBuffers);
      const auto end = static_cast<Step>(kBuffers + next() % kBuffers);
      p->buffers.push_back({.name = absl::StrCat("b", i),
                            .size = static_cast<Bytes>(1 + next() % 65535),
                            .lifetime = {.start = start, .end = end}});
    }
    return p;
  }();
  return *problem;
}

TEST(AnytimeTest, EveryPlannerCountsWithinATenthOverItsWorkLimit) {
  // What the Solve's budgets count in all (internal::WorkMeter), however
  // its planner splits the limit, against the limit the caller set.
  for (const int64_t work : {int64_t{1'000'000}, int64_t{4'000'000}}) {
    for (const PlannerInfo& info : RegisteredPlanners()) {
      SCOPED_TRACE(
          absl::StrCat(std::string(info.name), " at ", work, " work units"));
      internal::WorkMeter meter;
      absl::StatusOr<Plan> plan = PlanMemory(
          AllAlive(),
          {.planner = std::string(info.name), .plan = {.work_limit = work}});
      ASSERT_TRUE(plan.ok()) << plan.status();  // verified
      EXPECT_LE(meter.counted(), work + work / 10);
    }
  }
  // 10^5 short intervals (about 20 alive at once) under 10^7 units: the
  // greedy pass leaves caffe2_dp's search and its greedy finish a share.
  absl::StatusOr<Problem> short_intervals = SyntheticProblem(
      SyntheticKind::kIntervals, {.buffers = 100000, .seed = 7});
  ASSERT_TRUE(short_intervals.ok()) << short_intervals.status();
  const int64_t work = 10'000'000;
  for (const PlannerInfo& info : RegisteredPlanners()) {
    SCOPED_TRACE(absl::StrCat(std::string(info.name), " on short intervals"));
    internal::WorkMeter meter;
    absl::StatusOr<Plan> plan = PlanMemory(
        *short_intervals,
        {.planner = std::string(info.name), .plan = {.work_limit = work}});
    ASSERT_TRUE(plan.ok()) << plan.status();  // verified
    EXPECT_LE(meter.counted(), work + work / 10);
  }
}

TEST(AnytimeTest, BestAndTheSearchesFromItCountWithinATenthWhereItSearches) {
  // 2x10^4 short intervals under 4x10^7 units afford best its searches
  // after the greedy passes (10^5 take seconds a planner at a limit that
  // does; the rows BM_target_counted_* run them): its members share the
  // limit, where each had the whole of it (best counted 3.5x it; cp and
  // cpsat, which start from best with half, 1.11x).
  absl::StatusOr<Problem> problem = SyntheticProblem(
      SyntheticKind::kIntervals, {.buffers = 20000, .seed = 7});
  ASSERT_TRUE(problem.ok()) << problem.status();
  const int64_t work = 40'000'000;
  int planners = 0;
  for (const PlannerInfo& info : RegisteredPlanners()) {
    const std::string name(info.name);
    if (name != "best" && name != "cp" && name != "cpsat") continue;
    ++planners;
    SCOPED_TRACE(name);
    internal::WorkMeter meter;
    absl::StatusOr<Plan> plan =
        PlanMemory(*problem, {.planner = name, .plan = {.work_limit = work}});
    ASSERT_TRUE(plan.ok()) << plan.status();  // verified
    EXPECT_LE(meter.counted(), work + work / 10);
  }
  EXPECT_GE(planners, 1 + MEMPLAN_HAVE_CP);  // best, and cp where built
}

}  // namespace
}  // namespace memplan

// Compositions of planners (memplan/compose.h) and the budget of PlanOptions:
// which plan each combinator keeps, what an invalid plan becomes, and that
// without a time limit the plan does not depend on the machine's load.

#include "memplan/compose.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "effort/budget.h"
#include "greedy_by_size.h"
#include "gtest/gtest.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/verify.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::memplan::testing::LoadProblem;

// Three buffers alive together: every valid plan stacks them.
Problem Stack() {
  return Problem{
      .buffers = {{.name = "a", .size = 4, .lifetime = {0, 2}},
                  {.name = "b", .size = 2, .lifetime = {0, 2}},
                  {.name = "c", .size = 1, .lifetime = {1, 3}}},
      .pools = {{.name = "default"}},
  };
}

// A planner that returns a fixed result, and counts its calls.
class Fixed : public Planner {
 public:
  Fixed(std::string name, absl::StatusOr<Plan> result)
      : name_(std::move(name)), result_(std::move(result)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<Plan> Solve(const Problem&,
                             const PlanOptions& options) const override {
    ++calls_;
    seen_work_limit_ = options.work_limit;
    return result_;
  }
  int calls() const { return calls_; }
  int64_t seen_work_limit() const { return seen_work_limit_; }

 private:
  std::string name_;
  absl::StatusOr<Plan> result_;
  mutable int calls_ = 0;
  mutable int64_t seen_work_limit_ = 0;
};

// Every buffer at offset 0: conflicting buffers overlap.
Plan Overlapping(const Problem& problem) {
  Plan plan;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b)
    plan.assignments.push_back({.buffer = b, .pool = 0, .offset = 0});
  ComputePlanStatistics(problem, plan);
  return plan;
}

// Stacked in buffer order from `base`.
Plan Stacked(const Problem& problem, Offset base, std::string planner) {
  Plan plan;
  Offset top = base;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    plan.assignments.push_back({.buffer = b, .pool = 0, .offset = top});
    top += problem.buffers[b].size;
  }
  ComputePlanStatistics(problem, plan);
  plan.planner = std::move(planner);
  return plan;
}

// A search that returns its incumbent, or NotFound without one.
class EchoSearch : public SearchPlanner {
 public:
  std::string_view name() const override { return "echo"; }
  absl::StatusOr<Plan> Search(const Problem&, const PlanOptions& options,
                              Incumbent& incumbent) const override {
    seen_work_limit_ = options.work_limit;
    return incumbent.Get();
  }
  mutable int64_t seen_work_limit_ = 0;
};

TEST(PlanMemoryTest, AnInvalidPlanFromAPlannerIsInternalError) {
  const Problem problem = Stack();
  const Fixed bad("bad", Overlapping(problem));
  absl::StatusOr<Plan> plan = PlanMemory(problem, bad);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInternal) << plan.status();
  EXPECT_NE(plan.status().message().find("bad"), std::string::npos)
      << plan.status();
}

TEST(WithFallbackTest, FallsBackOnAnErrorOrAnInvalidPlan) {
  const Problem problem = Stack();
  const Plan good = Stacked(problem, 0, "good");
  for (absl::StatusOr<Plan> primary :
       {absl::StatusOr<Plan>(absl::ResourceExhaustedError("full")),
        absl::StatusOr<Plan>(Overlapping(problem))}) {
    auto fallback = std::make_unique<Fixed>("good", good);
    const Fixed* fallback_ptr = fallback.get();
    std::unique_ptr<Planner> planner = WithFallback(
        std::make_unique<Fixed>("primary", primary), std::move(fallback));
    EXPECT_EQ(planner->name(), "primary");
    absl::StatusOr<Plan> plan = planner->Solve(problem, {});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->assignments, good.assignments);
    EXPECT_EQ(plan->planner, "good");
    EXPECT_EQ(fallback_ptr->calls(), 1);
  }
  // Both fail: the primary's error.
  absl::StatusOr<Plan> both =
      WithFallback(std::make_unique<Fixed>(
                       "primary", absl::ResourceExhaustedError("primary")),
                   std::make_unique<Fixed>(
                       "second", absl::ResourceExhaustedError("second")))
          ->Solve(problem, {});
  EXPECT_EQ(both.status().message(), "primary");
}

TEST(WithFallbackTest, DoesNotRunTheFallbackWhenThePrimarySucceeds) {
  const Problem problem = Stack();
  auto fallback = std::make_unique<Fixed>("second", Stacked(problem, 0, "b"));
  const Fixed* fallback_ptr = fallback.get();
  const std::unique_ptr<Planner> planner =
      WithFallback(std::make_unique<Fixed>("first", Stacked(problem, 1, "a")),
                   std::move(fallback));
  absl::StatusOr<Plan> plan = planner->Solve(problem, {});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->planner, "a");
  EXPECT_EQ(fallback_ptr->calls(), 0);
}

TEST(ChooseBestTest, KeepsTheSmallestValidPlanAndNamesIt) {
  const Problem problem = Stack();
  std::vector<std::unique_ptr<Planner>> heuristics;
  heuristics.push_back(
      std::make_unique<Fixed>("high", Stacked(problem, 8, "")));
  heuristics.push_back(
      std::make_unique<Fixed>("invalid", Overlapping(problem)));
  heuristics.push_back(std::make_unique<Fixed>("low", Stacked(problem, 0, "")));
  heuristics.push_back(
      std::make_unique<Fixed>("also_low", Stacked(problem, 0, "")));
  absl::StatusOr<Plan> plan =
      ChooseBest("mine", std::move(heuristics), {})->Solve(problem, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
  EXPECT_EQ(plan->peak, 7);
  EXPECT_EQ(plan->planner, "mine");
}

TEST(ChooseBestTest, WithoutAnyPlanReturnsTheFirstError) {
  const Problem problem = Stack();
  std::vector<std::unique_ptr<Planner>> heuristics;
  heuristics.push_back(
      std::make_unique<Fixed>("invalid", Overlapping(problem)));
  heuristics.push_back(
      std::make_unique<Fixed>("full", absl::ResourceExhaustedError("full")));
  absl::StatusOr<Plan> plan =
      ChooseBest("mine", std::move(heuristics), {})->Solve(problem, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInternal) << plan.status();
}

TEST(ChooseBestTest, SearchesStartFromTheBestPlanAndStopAtTheLowerBound) {
  const Problem problem = Stack();
  // Above the lower bound (7): the search runs from the best plan so far.
  {
    std::vector<std::unique_ptr<Planner>> heuristics;
    heuristics.push_back(
        std::make_unique<Fixed>("high", Stacked(problem, 8, "")));
    heuristics.push_back(
        std::make_unique<Fixed>("mid", Stacked(problem, 2, "")));
    std::vector<std::unique_ptr<SearchPlanner>> searches;
    searches.push_back(std::make_unique<EchoSearch>());
    absl::StatusOr<Plan> plan =
        ChooseBest("mine", std::move(heuristics), std::move(searches))
            ->Solve(problem, {.work_limit = 1000});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->peak, 9);
  }
  // At the lower bound no search runs.
  std::vector<std::unique_ptr<Planner>> heuristics;
  heuristics.push_back(std::make_unique<Fixed>("low", Stacked(problem, 0, "")));
  std::vector<std::unique_ptr<SearchPlanner>> searches;
  auto search = std::make_unique<EchoSearch>();
  const EchoSearch* search_ptr = search.get();
  searches.push_back(std::move(search));
  const std::unique_ptr<Planner> planner =
      ChooseBest("mine", std::move(heuristics), std::move(searches));
  ASSERT_TRUE(planner->Solve(problem, {}).ok());
  EXPECT_EQ(search_ptr->seen_work_limit_, 0);
}

// A search that spends its whole work limit and returns its start.
class SpendingSearch : public SearchPlanner {
 public:
  std::string_view name() const override { return "spending"; }
  absl::StatusOr<Plan> Search(const Problem&, const PlanOptions& options,
                              Incumbent& incumbent) const override {
    ++calls_;
    Budget(options).Tick(WorkLimit(options));
    return incumbent.Get();
  }
  int calls() const { return calls_; }

 private:
  mutable int calls_ = 0;
};

TEST(ChooseBestTest, SharedMembersCountWithinTheLimitWholeOnesEachSpendIt) {
  const Problem problem = Stack();
  for (const MemberWork work : {MemberWork::kShared, MemberWork::kWhole}) {
    const bool shared = work == MemberWork::kShared;
    SCOPED_TRACE(shared ? "shared" : "whole");
    std::vector<std::unique_ptr<Planner>> heuristics;
    heuristics.push_back(
        std::make_unique<Fixed>("mid", Stacked(problem, 2, "")));
    std::vector<std::unique_ptr<SearchPlanner>> searches;
    auto first = std::make_unique<SpendingSearch>();
    auto second = std::make_unique<SpendingSearch>();
    const SpendingSearch* second_ptr = second.get();
    searches.push_back(std::move(first));
    searches.push_back(std::move(second));
    const std::unique_ptr<Planner> planner = ChooseBest(
        "mine", std::move(heuristics), std::move(searches), {}, nullptr, work);
    internal::WorkMeter meter;
    absl::StatusOr<Plan> plan = planner->Solve(problem, {.work_limit = 1000});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
    EXPECT_EQ(plan->peak, 9);
    // Shared: the first search spends the limit, the second does not run
    // and the plan says the limit cut the run.
    EXPECT_EQ(meter.counted(), shared ? 1000 : 2000);
    EXPECT_EQ(second_ptr->calls(), shared ? 0 : 1);
    EXPECT_EQ(plan->counters.count("cut_by_work_limit"), shared ? 1u : 0u);
  }
}

// A search that returns a fixed result, counts its calls, and asks to run
// early once the best plan is at most `early_at` bytes.
class EarlySearch : public SearchPlanner {
 public:
  EarlySearch(absl::StatusOr<Plan> result, Bytes early_at)
      : result_(std::move(result)), early_at_(early_at) {}
  std::string_view name() const override { return "early"; }
  absl::StatusOr<Plan> Search(const Problem&, const PlanOptions&,
                              Incumbent&) const override {
    ++calls_;
    return result_;
  }
  bool RunsEarly(const Problem&, const Plan& best,
                 int heuristics) const override {
    seen_heuristics_ = heuristics;
    return best.peak <= early_at_;
  }
  mutable int seen_heuristics_ = 0;
  int calls() const { return calls_; }

 private:
  absl::StatusOr<Plan> result_;
  Bytes early_at_;
  mutable int calls_ = 0;
};

TEST(ChooseBestTest, ASearchRunsEarlyOnceItsHeuristicPlanIsThere) {
  const Problem problem = Stack();  // lower bound 7
  for (const bool found : {true, false}) {
    SCOPED_TRACE(found ? "the search finds the bound" : "it finds nothing");
    std::vector<std::unique_ptr<Planner>> heuristics;
    std::vector<const Fixed*> fixed;
    for (const Offset base : {8, 2, 0}) {  // peaks 15, 9, 7
      auto h = std::make_unique<Fixed>(absl::StrCat("at_", base),
                                       Stacked(problem, base, ""));
      fixed.push_back(h.get());
      heuristics.push_back(std::move(h));
    }
    std::vector<std::unique_ptr<SearchPlanner>> searches;
    auto search = std::make_unique<EarlySearch>(
        found ? absl::StatusOr<Plan>(Stacked(problem, 0, "early"))
              : absl::StatusOr<Plan>(absl::NotFoundError("none")),
        /*early_at=*/9);
    const EarlySearch* search_ptr = search.get();
    searches.push_back(std::move(search));
    const std::unique_ptr<Planner> planner =
        ChooseBest("mine", std::move(heuristics), std::move(searches));
    absl::StatusOr<Plan> plan = planner->Solve(problem, {.work_limit = 1000});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
    EXPECT_EQ(plan->peak, 7);
    // After the second heuristic's plan (9 bytes), once: at the bound it
    // leaves the third nothing to run for; else the third runs, and the
    // search does not run again.
    EXPECT_EQ(search_ptr->calls(), 1);
    EXPECT_EQ(search_ptr->seen_heuristics_, 2);
    EXPECT_EQ(fixed[0]->calls(), 1);
    EXPECT_EQ(fixed[1]->calls(), 1);
    EXPECT_EQ(fixed[2]->calls(), found ? 0 : 1);
  }
}

TEST(ChooseBestTest, DenseProblemsRunTheDenseHeuristics) {
  // 600 buffers alive together: 179700 overlapping pairs, 299.5 a buffer;
  // a pass is 2 x 179700 + 600 = 360000 units.
  Problem crowded{.pools = {{.name = "default"}}};
  for (int i = 0; i < 600; ++i) {
    crowded.buffers.push_back(
        {.name = absl::StrCat("b", i), .size = 1, .lifetime = {0, 2}});
  }
  auto make = [](const Problem& problem) {
    std::vector<std::unique_ptr<Planner>> heuristics;
    heuristics.push_back(
        std::make_unique<Fixed>("usual", Stacked(problem, 2, "")));
    std::vector<std::unique_ptr<Planner>> dense;
    dense.push_back(std::make_unique<Fixed>("dense", Stacked(problem, 0, "")));
    return ChooseBest("mine", std::move(heuristics), {}, std::move(dense));
  };
  // The budget pays for 4 passes per heuristic: the usual list.
  absl::StatusOr<Plan> usual =
      make(crowded)->Solve(crowded, {.work_limit = 2'000'000});
  ASSERT_TRUE(usual.ok()) << usual.status();
  EXPECT_EQ(usual->peak, 602);
  // One pass at most: the dense list.
  absl::StatusOr<Plan> dense =
      make(crowded)->Solve(crowded, {.work_limit = 400'000});
  ASSERT_TRUE(dense.ok()) << dense.status();
  EXPECT_EQ(dense->peak, 600);
  EXPECT_EQ(dense->planner, "mine");
  // Dense for the budget but one pair a buffer (3 buffers, 3 pairs: a pass
  // is 9 units): the usual list.
  const Problem sparse = Stack();
  absl::StatusOr<Plan> few = make(sparse)->Solve(sparse, {.work_limit = 10});
  ASSERT_TRUE(few.ok()) << few.status();
  EXPECT_EQ(few->peak, 9);
}

// A search that returns a fixed result, counts its calls, and is for dense
// problems or for the others (ForDense()).
class SearchFor : public SearchPlanner {
 public:
  SearchFor(absl::StatusOr<Plan> result, bool for_dense)
      : result_(std::move(result)), for_dense_(for_dense) {}
  std::string_view name() const override {
    return for_dense_ ? "for_dense" : "for_others";
  }
  bool ForDense() const override { return for_dense_; }
  absl::StatusOr<Plan> Search(const Problem&, const PlanOptions&,
                              Incumbent&) const override {
    ++calls_;
    return result_;
  }
  int calls() const { return calls_; }

 private:
  absl::StatusOr<Plan> result_;
  bool for_dense_;
  mutable int calls_ = 0;
};

TEST(ChooseBestTest, ASearchForDenseProblemsRunsOnThemAlone) {
  // As above: 600 buffers alive together, a pass of 360000 units.
  Problem crowded{.pools = {{.name = "default"}}};
  for (int i = 0; i < 600; ++i) {
    crowded.buffers.push_back(
        {.name = absl::StrCat("b", i), .size = 1, .lifetime = {0, 2}});
  }
  for (const bool dense : {false, true}) {
    SCOPED_TRACE(dense ? "dense" : "not dense");
    std::vector<std::unique_ptr<Planner>> heuristics;
    heuristics.push_back(
        std::make_unique<Fixed>("greedy", Stacked(crowded, 2, "")));
    // The search for dense problems first: on the others it neither runs
    // nor keeps the other search from running early or late.
    auto for_dense = std::make_unique<SearchFor>(Stacked(crowded, 0, ""), true);
    auto for_others =
        std::make_unique<SearchFor>(Stacked(crowded, 1, ""), false);
    const SearchFor* dense_ptr = for_dense.get();
    const SearchFor* others_ptr = for_others.get();
    std::vector<std::unique_ptr<SearchPlanner>> searches;
    searches.push_back(std::move(for_dense));
    searches.push_back(std::move(for_others));
    const std::unique_ptr<Planner> planner =
        ChooseBest("mine", std::move(heuristics), std::move(searches));
    absl::StatusOr<Plan> plan =
        planner->Solve(crowded, {.work_limit = dense ? 400'000 : 2'000'000});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(crowded, *plan).ok());
    EXPECT_EQ(plan->peak, dense ? 600 : 601);
    EXPECT_EQ(dense_ptr->calls(), dense ? 1 : 0);
    EXPECT_EQ(others_ptr->calls(), dense ? 0 : 1);
  }
}

TEST(ChooseBestTest, PatienceStopsTheHeuristicsThatStopGaining) {
  const Problem problem = Stack();  // a pass is 9 units
  std::vector<const Fixed*> called;
  auto make = [&] {
    std::vector<std::unique_ptr<Planner>> heuristics;
    for (Offset base : {2, 2, 0}) {
      auto fixed = std::make_unique<Fixed>("h", Stacked(problem, base, ""));
      called.push_back(fixed.get());
      heuristics.push_back(std::move(fixed));
    }
    return ChooseBest("mine", std::move(heuristics), {});
  };
  // Without patience every heuristic runs: the third is the smallest.
  absl::StatusOr<Plan> whole = make()->Solve(problem, {.work_limit = 1000});
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->peak, 7);
  // Patience of one pass: the second runs (one pass since the first's
  // plan), the third would make two without a gain.
  // The planner outlives the checks: `called` points into it.
  called.clear();
  const std::unique_ptr<Planner> planner = make();
  absl::StatusOr<Plan> patient =
      planner->Solve(problem, {.work_limit = 1000, .patience = 9});
  ASSERT_TRUE(patient.ok()) << patient.status();
  EXPECT_EQ(patient->peak, 9);
  ASSERT_EQ(called.size(), 3u);
  EXPECT_EQ(called[1]->calls(), 1);
  EXPECT_EQ(called[2]->calls(), 0);
}

// Seven buffers of 20 and 10 bytes, `ids` giving each its id (0 to 6) in
// the order of their starts.
Problem SevenBuffers(const std::vector<int>& ids) {
  const struct {
    Step start, end;
    Bytes size;
  } rows[] = {{0, 2, 20}, {1, 4, 20}, {2, 5, 10}, {3, 4, 10},
              {4, 5, 20}, {5, 6, 10}, {6, 8, 10}};
  Problem problem{.pools = {{.name = "default"}}};
  problem.buffers.resize(7);
  for (int i = 0; i < 7; ++i) {
    problem.buffers[ids[i]] = {.name = absl::StrCat("b", ids[i]),
                               .size = rows[i].size,
                               .lifetime = {rows[i].start, rows[i].end}};
  }
  return problem;
}

// first_fit, then the pass by size with ties by id (position_greedy), as
// in best. With ids in the order of the starts their orders are the same
// and the second pass is not run again, its work counted as it counts it;
// with ids that put buffers of equal size out of that order (an instance a
// search over small ones found) it runs, and its plan (at the lower bound,
// 40 bytes; first_fit's is 50) wins.
TEST(ChooseBestTest, APassRepeatingAnOrderCountsItsWorkAndLosesNoPlan) {
  for (const std::vector<int>& ids : {std::vector<int>{0, 1, 2, 3, 4, 5, 6},
                                      std::vector<int>{4, 3, 5, 6, 0, 2, 1}}) {
    const Problem problem = SevenBuffers(ids);
    const std::vector<GreedyOptions> passes = {
        {.order = PlacementOrder::kSize, .fit = Fit::kFirst},
        {.order = PlacementOrder::kSizeThenId, .fit = Fit::kFirst}};
    int64_t alone = 0;  // the passes' work, each run alone
    Bytes smallest = std::numeric_limits<Bytes>::max();
    std::vector<std::unique_ptr<Planner>> heuristics;
    for (const GreedyOptions& pass : passes) {
      heuristics.push_back(MakeGreedyPlanner(pass));
      const internal::WorkMeter meter;
      absl::StatusOr<Plan> plan = heuristics.back()->Solve(problem, {});
      ASSERT_TRUE(plan.ok()) << plan.status();
      ASSERT_TRUE(VerifyPlan(problem, *plan).ok());
      alone += meter.counted();
      smallest = std::min(smallest, plan->peak);
    }
    const std::unique_ptr<Planner> planner = ChooseBest(
        "mine", std::move(heuristics), {}, {}, nullptr, MemberWork::kShared);
    const internal::WorkMeter meter;
    absl::StatusOr<Plan> plan = planner->Solve(problem, {});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
    EXPECT_EQ(meter.counted(), alone);
    EXPECT_EQ(plan->peak, smallest);
    EXPECT_EQ(plan->peak, ids[0] == 0 ? 50 : 40);
  }
}

TEST(ChooseBestTest, ProgressHearsEachSmallerPlanOnce) {
  const Problem problem = Stack();
  std::vector<std::unique_ptr<Planner>> heuristics;
  for (Offset base : {3, 3, 1, 2, 0}) {
    heuristics.push_back(
        std::make_unique<Fixed>("h", Stacked(problem, base, "")));
  }
  std::vector<Bytes> peaks;
  absl::StatusOr<Plan> plan =
      ChooseBest("mine", std::move(heuristics), {})
          ->Solve(problem, {.progress = [&](const Progress& p) {
                    peaks.push_back(p.peak);
                  }});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(peaks, (std::vector<Bytes>{10, 8, 7}));
}

TEST(WarmStartedTest, TheSearchGetsTheHeuristicsPlanAndTheRestOfTheWork) {
  const Problem problem = Stack();
  auto search = std::make_unique<EchoSearch>();
  const EchoSearch* search_ptr = search.get();
  const Plan start = Stacked(problem, 1, "start");
  std::unique_ptr<Planner> planner = WarmStarted(
      std::move(search), std::make_unique<Fixed>("start", start), 0.25);
  EXPECT_EQ(planner->name(), "echo");
  absl::StatusOr<Plan> plan = planner->Solve(problem, {.work_limit = 1000});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->assignments, start.assignments);
  EXPECT_EQ(search_ptr->seen_work_limit_, 750);

  // A cap on the start's work: the search gets the rest.
  auto capped_search = std::make_unique<EchoSearch>();
  const EchoSearch* capped_ptr = capped_search.get();
  auto capped_start = std::make_unique<Fixed>("start", start);
  const Fixed* capped_start_ptr = capped_start.get();
  const std::unique_ptr<Planner> capped =
      WarmStarted(std::move(capped_search), std::move(capped_start), 0.25, 100);
  ASSERT_TRUE(capped->Solve(problem, {.work_limit = 1000}).ok());
  EXPECT_EQ(capped_start_ptr->seen_work_limit(), 100);
  EXPECT_EQ(capped_ptr->seen_work_limit_, 900);

  // An invalid start is no start: InternalError naming its planner.
  absl::StatusOr<Plan> invalid =
      WarmStarted(std::make_unique<EchoSearch>(),
                  std::make_unique<Fixed>("broken", Overlapping(problem)), 0.5)
          ->Solve(problem, {});
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(invalid.status().message().find("broken"), std::string::npos);
}

TEST(WorkCappedTest, TheSearchGetsTheLesserOfTheCapAndTheBudget) {
  const Problem problem = Stack();
  auto search = std::make_unique<EchoSearch>();
  const EchoSearch* search_ptr = search.get();
  const std::unique_ptr<SearchPlanner> capped =
      WorkCapped(std::move(search), 300);
  EXPECT_EQ(capped->name(), "echo");
  Incumbent start(Stacked(problem, 1, "start"));
  absl::StatusOr<Plan> plan =
      capped->Search(problem, {.work_limit = 1000}, start);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, 8);
  EXPECT_EQ(search_ptr->seen_work_limit_, 300);
  ASSERT_TRUE(capped->Search(problem, {.work_limit = 200}, start).ok());
  EXPECT_EQ(search_ptr->seen_work_limit_, 200);
  // Without a work limit, the default budget's (or a time limit's) counts.
  ASSERT_TRUE(capped->Search(problem, {}, start).ok());
  EXPECT_EQ(search_ptr->seen_work_limit_, 300);
}

TEST(BudgetTest, WorkLimitFollowsTheOptions) {
  EXPECT_EQ(WorkLimit({}), kDefaultWorkLimit);
  EXPECT_EQ(WorkLimit({.time_limit = absl::Seconds(2)}), 2 * kWorkPerSecond);
  EXPECT_EQ(WorkLimit({.time_limit = absl::Seconds(2), .work_limit = 5}), 5);

  Budget counted(PlanOptions{.work_limit = 10});
  EXPECT_FALSE(counted.Expired());
  counted.Tick(9);
  EXPECT_FALSE(counted.Expired());
  counted.Tick();
  EXPECT_TRUE(counted.Expired());
  EXPECT_FALSE(counted.OutOfTime());  // no clock without a time limit
  EXPECT_EQ(counted.deadline(), absl::InfiniteFuture());

  Budget late(PlanOptions{.deadline = absl::InfinitePast()});
  EXPECT_TRUE(late.OutOfTime());
  EXPECT_TRUE(late.Expired());
  EXPECT_TRUE(late.OutOfTimeNow());

  const PlanOptions part =
      counted.Part({.time_limit = absl::Seconds(4), .seed = 3}, 0.5);
  EXPECT_EQ(part.work_limit, 5);
  EXPECT_EQ(part.time_limit, absl::Seconds(2));
  EXPECT_EQ(part.seed, 3);
}

// Without a time limit no planner reads the clock: the default planner gives
// the same plan while other threads keep every core busy. (Not timed: the
// load can only change the result if a clock decides it.)
TEST(DeterminismTest, TheDefaultPlannerIgnoresTheMachinesLoad) {
  const Problem problem = *LoadProblem("minimalloc/A.1048576.csv");
  // A budget that ends in the searches, well before the lower bound.
  const PlanOptions options{.work_limit = 20'000'000};
  absl::StatusOr<std::unique_ptr<Planner>> created =
      CreatePlanner(DefaultPlannerName());
  ASSERT_TRUE(created.ok()) << created.status();
  const std::unique_ptr<Planner> planner = *std::move(created);
  absl::StatusOr<Plan> idle = planner->Solve(problem, options);
  ASSERT_TRUE(idle.ok()) << idle.status();
  ASSERT_TRUE(VerifyPlan(problem, *idle).ok());

  std::atomic<bool> stop = false;
  std::vector<std::thread> load;
  const unsigned cores = std::max(2u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < 2 * cores; ++i) {
    load.emplace_back([&stop] {
      volatile uint64_t x = 0;
      while (!stop.load(std::memory_order_relaxed))
        x = x * 6364136223846793005u + 1;
    });
  }
  absl::StatusOr<Plan> busy = planner->Solve(problem, options);
  stop = true;
  for (std::thread& t : load) t.join();
  ASSERT_TRUE(busy.ok()) << busy.status();
  EXPECT_EQ(busy->assignments, idle->assignments);
  EXPECT_EQ(busy->peak, idle->peak);
}

}  // namespace
}  // namespace memplan

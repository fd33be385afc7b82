// PlanSymbolicSearch: placement orders and rules, then a hill climb over
// the order of the best, scored at the dense samples, within the budget.

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "effort/budget.h"
#include "memplan/planner.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_planner.h"
#include "memplan/symbolic_verify.h"
#include "symbolic/binomial_poly.h"
#include "symbolic_planners/engine.h"

namespace memplan {
namespace {

using internal::BinomialPoly;
using internal::DimBox;
using internal::symbolic::DefaultSamples;
using internal::symbolic::DenseSamples;
using internal::symbolic::Engine;
using internal::symbolic::PlaceRule;
using internal::symbolic::Score;

PlanOptions BudgetOptions(const SymbolicSearchOptions& options) {
  PlanOptions plan;
  plan.work_limit = SymbolicWorkLimit(options);
  plan.time_limit = options.time_limit;
  plan.deadline = std::min(options.deadline, options.greedy.deadline);
  return plan;
}

// The improving search. Deterministic without a deadline: moves come from
// a seeded generator and the budget counts work, not time.
class Search {
 public:
  Search(const SymbolicProblem& problem, const DimBox& box,
         const SymbolicSearchOptions& options)
      : problem_(problem),
        box_(box),
        options_(options),
        budget_(BudgetOptions(options)),
        engine_(problem, box) {}

  absl::StatusOr<SymbolicPlan> Run() {
    SymbolicGreedyOptions greedy_options = options_.greedy;
    greedy_options.deadline = budget_.deadline();
    MEMPLAN_ASSIGN_OR_RETURN(SymbolicPlan greedy,
                             PlanSymbolicGreedy(problem_, greedy_options));
    if (budget_.OutOfTimeNow()) {  // no time to set the search up
      greedy.planner = "symbolic_search";
      return greedy;
    }
    MEMPLAN_ASSIGN_OR_RETURN(greedy_ratio_,
                             WorstSampledRatio(problem_, greedy));
    default_samples_ = DefaultSamples(box_).size();
    engine_.SetBudget(&budget_);
    MEMPLAN_RETURN_IF_ERROR(
        engine_.Prepare(DenseSamples(box_), options_.greedy.samples));
    engine_.SetTargets(options_.target_ratio, options_.end_target_ratio);
    // The greedy's plan is the one to beat.
    MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly greedy_peak,
                             BinomialPoly::FromExpr(greedy.peak, box_));
    std::vector<int64_t> values;
    engine_.PeakValues(greedy_peak, &values);
    const Score greedy_score = engine_.ScoreOf(values);
    // Nothing beats a plan at the lower bound at every sample.
    absl::Status searched =
        AtLowerBound(greedy_score) ? absl::OkStatus() : TryOrdersAndRules();
    if (searched.ok() && !AtLowerBound(greedy_score)) searched = Climb();
    if (!searched.ok() && !absl::IsDeadlineExceeded(searched)) return searched;
    if (options_.stats != nullptr) {
      options_.stats->work_limit = budget_.work_limit();
      options_.stats->work_done = SymbolicCandidateWork(engine_.work());
    }
    const bool keep_greedy =
        !(best_.score < greedy_score) || !best_.no_worse_than_greedy;
    if (options_.stats != nullptr) {
      options_.stats->score = (keep_greedy ? greedy_score : best_.score).worst;
    }
    if (keep_greedy) {
      greedy.planner = "symbolic_search";
      return greedy;
    }
    return best_.plan;
  }

 private:
  // Every placement order under each rule.
  absl::Status TryOrdersAndRules() {
    const PlaceRule rules[] = {{},
                               {.pair_envelopes = true, .worst_first = true},
                               {.pair_envelopes = true}};
    for (const PlaceRule& rule : rules) {
      engine_.Reset();
      for (const std::vector<int>& order : engine_.Orders(/*more=*/true)) {
        MEMPLAN_RETURN_IF_ERROR(Try(order, rule));
      }
    }
    return absl::OkStatus();
  }

  // A score no plan beats: the lower bound at every sample.
  static bool AtLowerBound(const Score& score) {
    return score.worst <= 0 && score.sum <= 0;
  }

  // The hill climb over the best order: move the buffer at the peak of the
  // worst sample earlier, or swap two, or move one anywhere; keep a change
  // when the score drops. Until the work is spent or the deadline passes,
  // or sooner where the rest of the climb could not change the plan: the
  // best at the lower bound everywhere, or (up to kEnumerated buffers)
  // every move from the best order tried since it became the best (a
  // layout is deterministic, so trying one again gains nothing).
  absl::Status Climb() {
    std::mt19937_64 rng(options_.seed);
    engine_.Reset();
    const int n = static_cast<int>(best_.order.size());
    std::set<std::vector<int>> untried;  // moves from the best order
    int64_t untried_of = -1;             // improvements_ when enumerated
    while (n >= 2 && !engine_.WorkSpent() && !engine_.OutOfTime()) {
      if (AtLowerBound(best_.score)) break;
      if (n <= kEnumerated && untried_of != improvements_) {
        untried = Moves(best_.order);
        untried_of = improvements_;
      }
      if (n <= kEnumerated && untried.empty()) break;
      std::vector<int> order = best_.order;
      if (!Move(rng, order)) continue;
      // A move tried since the best was found is not laid out again.
      if (n <= kEnumerated && untried.erase(order) == 0) continue;
      const int64_t before = engine_.work();
      MEMPLAN_RETURN_IF_ERROR(Try(order, best_.rule));
      if (options_.stats != nullptr) {
        ++options_.stats->steps;
        options_.stats->largest_step =
            std::max(options_.stats->largest_step,
                     SymbolicCandidateWork(engine_.work() - before) + 1);
      }
    }
    return absl::OkStatus();
  }

  // One random move of the climb on `order`; false when it changes nothing.
  bool Move(std::mt19937_64& rng, std::vector<int>& order) const {
    const int n = static_cast<int>(order.size());
    const uint64_t kind = rng() % 3;
    const int pos = static_cast<int>(
        std::find(order.begin(), order.end(), best_.highest) - order.begin());
    if (kind == 0 && pos > 0 && pos < n) {
      const int to = static_cast<int>(rng() % pos);
      std::rotate(order.begin() + to, order.begin() + pos,
                  order.begin() + pos + 1);
      return true;
    }
    const int i = static_cast<int>(rng() % n);
    const int j = static_cast<int>(rng() % n);
    if (i == j) return false;
    if (kind == 1) {
      std::swap(order[i], order[j]);
    } else {
      const int b = order[i];
      order.erase(order.begin() + i);
      order.insert(order.begin() + j, b);
    }
    return true;
  }

  // Every order Move() can make of `order` (the best order, with its
  // highest buffer): each rotation of that buffer earlier, swap and move.
  std::set<std::vector<int>> Moves(const std::vector<int>& order) const {
    std::set<std::vector<int>> moves;
    const int n = static_cast<int>(order.size());
    const int pos = static_cast<int>(
        std::find(order.begin(), order.end(), best_.highest) - order.begin());
    for (int to = 0; pos < n && to < pos; ++to) {
      std::vector<int> moved = order;
      std::rotate(moved.begin() + to, moved.begin() + pos,
                  moved.begin() + pos + 1);
      moves.insert(std::move(moved));
    }
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        std::vector<int> swapped = order;
        std::swap(swapped[i], swapped[j]);
        moves.insert(std::move(swapped));
        std::vector<int> moved = order;
        const int b = moved[i];
        moved.erase(moved.begin() + i);
        moved.insert(moved.begin() + j, b);
        moves.insert(std::move(moved));
      }
    }
    return moves;
  }

  // Lays out `order` under `rule`; keeps it when its score is the best yet.
  absl::Status Try(const std::vector<int>& order, const PlaceRule& rule) {
    MEMPLAN_RETURN_IF_ERROR(engine_.Layout(order, rule));
    // Four peak expressions: from the highest top at the maxima, and at the
    // minima, each raised by an envelope or by a proven constant.
    for (int start : {-1, 0}) {
      for (bool shift : {false, true}) {
        const BinomialPoly peak = engine_.Peak(start, shift);
        std::vector<int64_t> values;
        engine_.PeakValues(peak, &values);
        const Score score = engine_.ScoreOf(values);
        if (!(score < best_.score)) continue;
        ++improvements_;
        best_ = {score,
                 order,
                 rule,
                 engine_.HighestAt(engine_.WorstSample(values)),
                 NoWorseThanGreedy(values),
                 engine_.MakePlan(peak, "symbolic_search")};
      }
    }
    return absl::OkStatus();
  }

  bool NoWorseThanGreedy(const std::vector<int64_t>& values) const {
    for (size_t s = 0; s < default_samples_; ++s) {
      if (static_cast<double>(values[s]) >
          greedy_ratio_ * static_cast<double>(engine_.LowerBoundAt(s))) {
        return false;
      }
    }
    return true;
  }

  const SymbolicProblem& problem_;
  const DimBox& box_;
  const SymbolicSearchOptions& options_;
  Budget budget_;
  Engine engine_;
  // The most buffers whose moves the climb enumerates (n^2 orders of n).
  static constexpr int kEnumerated = 64;
  int64_t improvements_ = 0;  // of best_
  double greedy_ratio_ = 0;
  size_t default_samples_ = 0;
  struct Best {
    Score score;
    std::vector<int> order;
    PlaceRule rule;
    int highest = -1;  // the buffer at the peak of the worst sample
    bool no_worse_than_greedy = false;  // over the greedy's samples
    // Its plan: the layout's offsets with the peak that scored best.
    absl::StatusOr<SymbolicPlan> plan = absl::UnknownError("no plan");
  } best_;
};

}  // namespace

int64_t SymbolicWorkLimit(const SymbolicSearchOptions& options) {
  return WorkLimit(PlanOptions{.time_limit = options.time_limit,
                               .work_limit = options.work_limit});
}

SymbolicSearchOptions StartClock(const SymbolicSearchOptions& options) {
  SymbolicSearchOptions started = options;
  started.work_limit = SymbolicWorkLimit(options);
  started.deadline = std::min(options.deadline, options.greedy.deadline);
  if (options.time_limit != absl::InfiniteDuration()) {
    started.deadline =
        std::min(started.deadline, absl::Now() + options.time_limit);
  }
  started.time_limit = absl::InfiniteDuration();
  started.greedy.deadline = started.deadline;
  return started;
}

absl::StatusOr<SymbolicPlan> PlanSymbolicSearch(
    const SymbolicProblem& problem, const SymbolicSearchOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(problem.dims));
  MEMPLAN_ASSIGN_OR_RETURN(SymbolicPlan plan,
                           Search(problem, box, options).Run());
  MEMPLAN_RETURN_IF_ERROR(VerifySymbolicPlan(problem, plan));
  return plan;
}

}  // namespace memplan

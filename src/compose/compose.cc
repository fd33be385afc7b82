// Compositions of planners (see memplan/compose.h).

#include "memplan/compose.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "effort/budget.h"
#include "effort/set_up.h"
#include "memplan/problem.h"
#include "memplan/verify.h"
#include "placement/placement.h"

namespace memplan {
namespace {

bool VerifiesItsPlans(const Planner& planner);

// `plan` if the verifier accepts it, else InternalError naming `planner`.
// A plan of a composition below (WithFallback, ChooseBest) was verified
// there, and is not verified twice: at 10^6 buffers a verification costs a
// good part of a second of a time limit.
absl::StatusOr<Plan> Verified(const Problem& problem, const Planner& planner,
                              absl::StatusOr<Plan> plan) {
  if (!plan.ok() || VerifiesItsPlans(planner)) return plan;
  if (absl::Status status = VerifyPlan(problem, *plan); !status.ok()) {
    return absl::InternalError(
        absl::StrCat(std::string(planner.name()),
                     " produced an invalid plan: ", status.message()));
  }
  return plan;
}

class WarmStartedPlanner : public Planner {
 public:
  WarmStartedPlanner(std::unique_ptr<SearchPlanner> search,
                     std::unique_ptr<Planner> heuristic, double share,
                     int64_t max_start_work)
      : search_(std::move(search)),
        heuristic_(std::move(heuristic)),
        share_(share),
        max_start_work_(max_start_work) {}

  std::string_view name() const override { return search_->name(); }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    const Budget budget(options);
    PlanOptions start_options = budget.Part(options, share_);
    // Under a deadline the start is bounded by its share of the work and by
    // the deadline, less what a last-resort plan and its verification take
    // (about the placement set-up per buffer): cut at a share of the time,
    // a start on a large problem had no plan where a whole pass would have
    // given one (S_1 at 2 s).
    if (budget.deadline() != absl::InfiniteFuture()) {
      start_options.time_limit = absl::InfiniteDuration();
      start_options.deadline =
          budget.deadline() - internal::kPlacementSetUpPerBuffer *
                                  static_cast<int64_t>(problem.buffers.size());
    }
    if (max_start_work_ > 0) {
      start_options.work_limit =
          std::min(start_options.work_limit, max_start_work_);
    }
    // The search gets the rest of the work and the whole time.
    PlanOptions search_options = options;
    search_options.deadline = budget.deadline();
    search_options.work_limit =
        std::max<int64_t>(1, budget.work_limit() - start_options.work_limit);
    Incumbent start(*heuristic_, problem, start_options);
    return search_->Search(problem, search_options, start);
  }

 private:
  std::unique_ptr<SearchPlanner> search_;
  std::unique_ptr<Planner> heuristic_;
  double share_;
  int64_t max_start_work_;
};

class WorkCappedPlanner : public SearchPlanner {
 public:
  WorkCappedPlanner(std::unique_ptr<SearchPlanner> search, int64_t max_work)
      : search_(std::move(search)), max_work_(max_work) {}

  std::string_view name() const override { return search_->name(); }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& incumbent) const override {
    const Budget budget(options);
    PlanOptions capped = options;
    capped.deadline = budget.deadline();
    capped.work_limit =
        std::max<int64_t>(1, std::min(budget.work_limit(), max_work_));
    return search_->Search(problem, capped, incumbent);
  }

 private:
  std::unique_ptr<SearchPlanner> search_;
  int64_t max_work_;
};

class PatientPlanner : public Planner {
 public:
  PatientPlanner(std::unique_ptr<Planner> planner, int64_t patience)
      : planner_(std::move(planner)), patience_(patience) {}

  std::string_view name() const override { return planner_->name(); }
  const Planner& inner() const { return *planner_; }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    if (options.patience > 0) return planner_->Solve(problem, options);
    PlanOptions patient = options;
    patient.patience = patience_;
    return planner_->Solve(problem, patient);
  }

 private:
  std::unique_ptr<Planner> planner_;
  int64_t patience_;
};

class FallbackPlanner : public Planner {
 public:
  FallbackPlanner(std::unique_ptr<Planner> primary,
                  std::unique_ptr<Planner> fallback)
      : primary_(std::move(primary)), fallback_(std::move(fallback)) {}

  std::string_view name() const override { return primary_->name(); }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    PlanOptions same_deadline = options;
    same_deadline.deadline = Budget(options).deadline();
    absl::StatusOr<Plan> plan =
        Verified(problem, *primary_, primary_->Solve(problem, same_deadline));
    if (plan.ok()) return plan;
    absl::StatusOr<Plan> second =
        Verified(problem, *fallback_, fallback_->Solve(problem, same_deadline));
    return second.ok() ? second : plan;
  }

 private:
  std::unique_ptr<Planner> primary_;
  std::unique_ptr<Planner> fallback_;
};

// One run of a composition's members: the smallest verified plan so far,
// the first error, why the run ended early, and the patience spent.
class MemberRun {
 public:
  // `options` are the composition's; its members run within `deadline`.
  MemberRun(const Problem& problem, const PlanOptions& options,
            absl::Time deadline, double pass_cost)
      : problem_(problem),
        options_(options),
        later_(options),
        pass_cost_(pass_cost),
        patience_(static_cast<double>(options.patience)) {
    later_.deadline = deadline;
    // Progress: the caller hears of a plan only when it is smaller than any
    // before, whichever member found it (a search reports its own).
    if (options.progress) {
      later_.progress = [this](const Progress& progress) {
        if (progress.peak >= reported_) return;
        reported_ = progress.peak;
        options_.progress(progress);
      };
    }
  }
  MemberRun(const MemberRun&) = delete;
  MemberRun& operator=(const MemberRun&) = delete;

  // The options each member runs with.
  const PlanOptions& later() const { return later_; }
  const std::optional<Plan>& best() const { return best_; }

  // Patience (PlanOptions::patience), in the pass cost: the first heuristic
  // runs (the fittest of its list), a later one only when the passes since
  // the last smaller plan, its own included, cost at most the patience. The
  // searches count theirs themselves.
  bool Patient() const {
    return patience_ <= 0 || spent_ - gained_at_ + pass_cost_ <= patience_;
  }
  void SpendPass() { spent_ += pass_cost_; }

  // Keeps `plan` when it is the smallest so far; false when the run ends.
  bool Consider(const Planner& planner, absl::StatusOr<Plan> plan) {
    plan = Verified(problem_, planner, std::move(plan));
    if (!plan.ok()) {
      if (absl::IsDeadlineExceeded(plan.status())) {
        stopped_ = absl::StrCat(std::string(planner.name()), ": ",
                                plan.status().message());
        cut_ = true;
        return false;
      }
      if (!first_error_.has_value()) first_error_ = plan.status();
      return true;
    }
    if (!best_.has_value() || plan->peak < best_->peak) {
      best_ = *std::move(plan);
      gained_at_ = spent_;
      if (later_.progress) {
        later_.progress({.peak = best_->peak, .planner = planner.name()});
      }
    }
    return true;
  }

  // The deadline ended the run with members still to run.
  void Cut() { cut_ = true; }
  // The work limit left the members still to run no work.
  void Spent() { spent_limit_ = true; }

  // A plan at the lower bound cannot be beaten.
  bool AtLowerBound() const {
    return best_.has_value() && best_->peak <= best_->lower_bound;
  }

  // The best plan, named `name`; without one, the first error or why the
  // run stopped.
  absl::StatusOr<Plan> Result(const std::string& name) && {
    if (!best_.has_value()) {
      return first_error_.value_or(absl::DeadlineExceededError(absl::StrCat(
          name, " found no plan before its deadline (", stopped_, ")")));
    }
    best_->planner = name;
    if (cut_) best_->counters["cut_by_time_limit"] = 1;
    if (spent_limit_ && best_->peak > best_->lower_bound)
      best_->counters["cut_by_work_limit"] = 1;
    return *std::move(best_);
  }

 private:
  const Problem& problem_;
  const PlanOptions& options_;
  PlanOptions later_;
  const double pass_cost_;
  const double patience_;
  double spent_ = 0;
  double gained_at_ = 0;
  Bytes reported_ = std::numeric_limits<Bytes>::max();
  std::optional<Plan> best_;
  std::optional<absl::Status> first_error_;
  std::string stopped_ = "no member finished";  // why the run ended early
  bool cut_ = false;                            // the deadline ended it
  bool spent_limit_ = false;                    // the work limit ended it
};

// The greedy passes of one run that repeat an earlier one. The pass by
// size with ties by id (position_greedy) places the same order as the pass
// by size with the same fit (first_fit) wherever the buffers of equal size
// start in the order of their ids, as in most traced graphs; it then gives
// the same plan, which cannot be smaller, for the same counted work.
class RepeatedPasses {
 public:
  // `planner` gave a plan (`ok`) or not, counting `work` units.
  void Ran(const Planner& planner, bool ok, int64_t work) {
    const auto* pass = dynamic_cast<const internal::GreedyPass*>(&planner);
    if (ok && pass != nullptr && pass->pass_order() == PlacementOrder::kSize) {
      by_size_.push_back({.fit = pass->pass_fit(), .work = work});
    }
  }

  // The work `planner`, run with `options`, would count to place the order
  // of a pass that gave a plan; nullopt when it may place another order or
  // stop short.
  std::optional<int64_t> Repeats(const Problem& problem, const Planner& planner,
                                 const PlanOptions& options) {
    const auto* pass = dynamic_cast<const internal::GreedyPass*>(&planner);
    if (pass == nullptr || pass->pass_order() != PlacementOrder::kSizeThenId)
      return std::nullopt;
    for (const ByOrder& earlier : by_size_) {
      if (earlier.fit != pass->pass_fit() ||
          !pass->Finishes(problem, options, earlier.work) ||
          !SameOrders(problem)) {
        continue;
      }
      return earlier.work;
    }
    return std::nullopt;
  }

 private:
  struct ByOrder {
    Fit fit;
    int64_t work;
  };

  // Whether the orders by size and by size then id are the same.
  bool SameOrders(const Problem& problem) {
    if (!same_.has_value()) {
      same_ = internal::SortedBuffers(problem, PlacementOrder::kSize) ==
              internal::SortedBuffers(problem, PlacementOrder::kSizeThenId);
    }
    return *same_;
  }

  std::vector<ByOrder> by_size_;
  std::optional<bool> same_;
};

class ChooseBestPlanner : public Planner {
 public:
  ChooseBestPlanner(std::string name,
                    std::vector<std::unique_ptr<Planner>> heuristics,
                    std::vector<std::unique_ptr<SearchPlanner>> searches,
                    std::vector<std::unique_ptr<Planner>> dense_heuristics,
                    std::unique_ptr<Planner> last_resort,
                    MemberWork member_work)
      : name_(std::move(name)),
        heuristics_(std::move(heuristics)),
        searches_(std::move(searches)),
        dense_heuristics_(std::move(dense_heuristics)),
        last_resort_(std::move(last_resort)),
        member_work_(member_work) {}

  std::string_view name() const override { return name_; }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    // Under a deadline, the members stop short of it by the time the last
    // resort needs, so that it has that time when none of them gave a plan.
    const Budget whole(options);
    PlanOptions members = options;
    if (last_resort_ != nullptr && whole.deadline() != absl::InfiniteFuture()) {
      members.time_limit = absl::InfiniteDuration();
      members.deadline =
          whole.deadline() -
          kLastResortPerBuffer * static_cast<int64_t>(problem.buffers.size());
    }
    absl::StatusOr<Plan> plan = SolveByMembers(problem, members);
    if (plan.ok() || last_resort_ == nullptr) return plan;
    absl::StatusOr<Plan> last =
        Verified(problem, *last_resort_,
                 last_resort_->Solve(problem, {.deadline = whole.deadline(),
                                               .work_limit = whole.work_limit(),
                                               .seed = options.seed,
                                               .threads = options.threads,
                                               .patience = options.patience,
                                               .progress = options.progress}));
    if (!last.ok()) return plan;
    if (absl::IsDeadlineExceeded(plan.status()))
      last->counters["cut_by_time_limit"] = 1;
    last->planner = name_;
    return last;
  }

 private:
  // Overlapping pairs per buffer from which a dense problem runs the dense
  // heuristics.
  static constexpr double kCrowdedPairsPerBuffer = 256;

  // What the last resort needs per buffer under a deadline: the naive plan,
  // its statistics and its verification (at 10^6 buffers about 0.2 s on a
  // typical core; the margin is for a loaded machine).
  static constexpr absl::Duration kLastResortPerBuffer = absl::Nanoseconds(400);

  // The members one Solve affords, decided up front in counted work so that
  // the choice does not depend on the clock.
  struct MemberChoice {
    double pass_cost;  // a placement pass examines about twice the pairs
    bool dense;        // too few passes for every heuristic: only the
                       // searches for dense problems
    const std::vector<std::unique_ptr<Planner>>* pool;
    int run;  // how many heuristics of *pool run
  };

  MemberChoice ChooseMembers(const Problem& problem,
                             const Budget& budget) const {
    const double work = static_cast<double>(budget.work_limit());
    const double pairs =
        static_cast<double>(internal::CountOverlappingPairs(problem));
    const auto n = static_cast<double>(problem.buffers.size());
    const double pass_cost = 2.0 * pairs + n;
    const int affordable =
        static_cast<int>(std::min(work / std::max(pass_cost, 1.0), 1e6));
    const bool dense = affordable < 4 * static_cast<int>(heuristics_.size());
    // The dense list where the buffers overlap many others; a problem that
    // affords few passes only for its size (10^6 short intervals, 20 pairs
    // a buffer; the trace S_1 has 1515) keeps the usual one.
    const bool crowded = pairs >= kCrowdedPairsPerBuffer * n;
    const std::vector<std::unique_ptr<Planner>>& pool =
        dense && crowded && !dense_heuristics_.empty() ? dense_heuristics_
                                                       : heuristics_;
    const int heuristics = static_cast<int>(pool.size());
    const int run =
        dense ? std::clamp(affordable / 2, 1, heuristics) : heuristics;
    return {.pass_cost = pass_cost, .dense = dense, .pool = &pool, .run = run};
  }

  // The options of the next member: the members' own, with what the
  // members before it left of the work limit when they share it (none
  // left: nullopt, and the run is cut by the limit).
  std::optional<PlanOptions> NextMember(
      const MemberRun& members, const Budget& budget,
      const internal::WorkMeter& meter) const {
    PlanOptions next = members.later();
    if (member_work_ == MemberWork::kWhole) return next;
    const int64_t left = budget.work_limit() - meter.counted();
    if (left <= 0) return std::nullopt;
    next.work_limit = left;
    return next;
  }

  // The smallest plan of the members, as the header says.
  absl::StatusOr<Plan> SolveByMembers(const Problem& problem,
                                      const PlanOptions& options) const {
    const Budget budget(options);
    const internal::WorkMeter meter;  // what the members counted
    // Under a deadline that leaves no time for one placement pass, not even
    // the pairs are counted.
    if (absl::Status s = internal::TimeForSetUp(
            budget, problem, internal::kPlacementSetUpPerBuffer, name_);
        !s.ok()) {
      return s;
    }
    const MemberChoice choice = ChooseMembers(problem, budget);
    MemberRun members(problem, options, budget.deadline(), choice.pass_cost);
    RepeatedPasses repeated;
    bool going = true;
    size_t searched = 0;  // the searches that have run
    for (int i = 0; i < choice.run && going && !members.AtLowerBound(); ++i) {
      if (members.best().has_value() && budget.OutOfTimeNow()) {
        members.Cut();
        break;
      }
      if (members.best().has_value() && !members.Patient()) break;
      const std::optional<PlanOptions> next =
          NextMember(members, budget, meter);
      if (!next.has_value()) {
        members.Spent();
        break;
      }
      const Planner& planner = *(*choice.pool)[i];
      members.SpendPass();
      if (const std::optional<int64_t> work =
              repeated.Repeats(problem, planner, *next);
          work.has_value()) {
        Budget(*next).Tick(*work);  // counted as the pass would count it
      } else {
        const internal::WorkMeter pass;
        absl::StatusOr<Plan> plan = planner.Solve(problem, *next);
        repeated.Ran(planner, plan.ok(), pass.counted());
        going = members.Consider(planner, std::move(plan));
      }
      while (going && !choice.dense && searched < searches_.size() &&
             members.best().has_value() && !members.AtLowerBound()) {
        const SearchPlanner& search = *searches_[searched];
        if (!search.ForDense() &&
            !search.RunsEarly(problem, *members.best(), i + 1)) {
          break;
        }
        ++searched;
        if (!search.ForDense())
          going = RunSearch(search, problem, budget, meter, members);
      }
    }
    for (; searched < searches_.size() && going; ++searched) {
      if (members.AtLowerBound()) break;
      if (searches_[searched]->ForDense() != choice.dense) continue;
      // A dense problem's search gets what the greedy passes left.
      const int64_t rest = budget.work_limit() - meter.counted();
      if (choice.dense && rest <= 0) break;
      going = RunSearch(*searches_[searched], problem, budget, meter, members,
                        choice.dense ? rest : 0);
    }
    // A member still going at the deadline returned its plan so far.
    if (!members.AtLowerBound() && budget.OutOfTimeNow()) members.Cut();
    return std::move(members).Result(name_);
  }

  // `search` from the smallest plan so far, with `work_limit` work units
  // when positive (else what NextMember gives), unless the deadline has
  // come (then the run is cut) or the work limit is spent; false when the
  // run ends.
  bool RunSearch(const SearchPlanner& search, const Problem& problem,
                 const Budget& budget, const internal::WorkMeter& meter,
                 MemberRun& members, int64_t work_limit = 0) const {
    if (members.best().has_value() && budget.OutOfTimeNow()) {
      members.Cut();
      return false;
    }
    std::optional<PlanOptions> next = NextMember(members, budget, meter);
    if (!next.has_value()) {
      members.Spent();
      return false;
    }
    Incumbent incumbent =
        members.best().has_value() ? Incumbent(*members.best()) : Incumbent();
    if (work_limit > 0) next->work_limit = work_limit;
    return members.Consider(search, search.Search(problem, *next, incumbent));
  }

  std::string name_;
  std::vector<std::unique_ptr<Planner>> heuristics_;
  std::vector<std::unique_ptr<SearchPlanner>> searches_;
  std::vector<std::unique_ptr<Planner>> dense_heuristics_;
  std::unique_ptr<Planner> last_resort_;
  MemberWork member_work_;
};

bool VerifiesItsPlans(const Planner& planner) {
  if (const auto* patient = dynamic_cast<const PatientPlanner*>(&planner))
    return VerifiesItsPlans(patient->inner());
  return dynamic_cast<const FallbackPlanner*>(&planner) != nullptr ||
         dynamic_cast<const ChooseBestPlanner*>(&planner) != nullptr;
}

}  // namespace

Incumbent::Incumbent()
    : plan_(absl::NotFoundError("the search has no start plan")), none_(true) {}

Incumbent::Incumbent(Plan plan) : plan_(std::move(plan)) {}

Incumbent::Incumbent(const Planner& heuristic, const Problem& problem,
                     const PlanOptions& options)
    : heuristic_(&heuristic), problem_(&problem), options_(options) {}

const absl::StatusOr<Plan>& Incumbent::Get() {
  if (!plan_.has_value()) {
    absl::StatusOr<Plan> plan = Verified(
        *problem_, *heuristic_, heuristic_->Solve(*problem_, options_));
    if (plan.ok()) ComputePlanStatistics(*problem_, *plan);
    plan_ = std::move(plan);
  }
  return *plan_;
}

bool SearchPlanner::RunsEarly(const Problem&, const Plan&, int) const {
  return false;
}

bool SearchPlanner::ForDense() const { return false; }

absl::StatusOr<Plan> SearchPlanner::Solve(const Problem& problem,
                                          const PlanOptions& options) const {
  Incumbent none;
  return Search(problem, options, none);
}

std::unique_ptr<Planner> WarmStarted(std::unique_ptr<SearchPlanner> search,
                                     std::unique_ptr<Planner> heuristic,
                                     double share, int64_t max_start_work) {
  return std::make_unique<WarmStartedPlanner>(
      std::move(search), std::move(heuristic), share, max_start_work);
}

std::unique_ptr<SearchPlanner> WorkCapped(std::unique_ptr<SearchPlanner> search,
                                          int64_t max_work) {
  return std::make_unique<WorkCappedPlanner>(std::move(search), max_work);
}

std::unique_ptr<Planner> WithPatience(std::unique_ptr<Planner> planner,
                                      int64_t patience) {
  return std::make_unique<PatientPlanner>(std::move(planner), patience);
}

std::unique_ptr<Planner> WithFallback(std::unique_ptr<Planner> primary,
                                      std::unique_ptr<Planner> fallback) {
  return std::make_unique<FallbackPlanner>(std::move(primary),
                                           std::move(fallback));
}

std::unique_ptr<Planner> ChooseBest(
    std::string name, std::vector<std::unique_ptr<Planner>> heuristics,
    std::vector<std::unique_ptr<SearchPlanner>> searches,
    std::vector<std::unique_ptr<Planner>> dense_heuristics,
    std::unique_ptr<Planner> last_resort, MemberWork member_work) {
  return std::make_unique<ChooseBestPlanner>(
      std::move(name), std::move(heuristics), std::move(searches),
      std::move(dense_heuristics), std::move(last_resort), member_work);
}

}  // namespace memplan

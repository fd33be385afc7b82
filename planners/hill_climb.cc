// hill_climb (see hill_climb.h).

#include "hill_climb.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "effort/set_up.h"
#include "memplan/problem.h"
#include "placement/placement.h"
#include "planners.h"

namespace memplan {
namespace {

using internal::PlacementIndex;
using internal::PlacementState;

Bytes Sum(const std::vector<Bytes>& values) {
  Bytes total = 0;
  for (Bytes v : values) total += v;
  return total;
}

// The search state: an order, its placement and the resulting peak.
class Climber {
 public:
  Climber(const PlacementIndex& index, std::vector<BufferId> order, Fit fit)
      : index_(index), state_(index), order_(std::move(order)), fit_(fit) {
    position_.assign(index.problem().buffers.size(), -1);
    for (int i = 0; i < static_cast<int>(order_.size()); ++i)
      position_[order_[i]] = i;
  }

  // Places everything (a greedy run), ticking its work in `budget`: a run
  // still going at the deadline is abandoned (DeadlineExceeded), as is one
  // whose cost reaches `cost_limit` (Aborted).
  absl::Status Start(Budget& budget, int64_t cost_limit) {
    if (absl::Status s =
            internal::PlaceAll(state_, order_, fit_, &budget, cost_limit);
        !s.ok()) {
      return s;
    }
    used_ = state_.PoolUsed();
    peak_ = Sum(used_);
    excess_ = Excess();
    return absl::OkStatus();
  }

  // Bytes above the threshold, summed over buffers (each buffer's end above
  // it).
  __int128 Excess() const {
    const Problem& problem = index_.problem();
    __int128 total = 0;
    for (BufferId b : order_) {
      const Offset end = state_.offset(b) + problem.buffers[b].size;
      if (end > threshold_) total += end - threshold_;
    }
    return total;
  }
  void set_threshold(Bytes threshold) { threshold_ = threshold; }

  Bytes peak() const { return peak_; }
  // The cost of the start's run (PlacementState::cost()).
  int64_t start_cost() const { return state_.cost(); }
  // Obstacles examined plus the O(n) scans of each round.
  int64_t work() const { return state_.work() + scans_; }
  Plan ToPlan() const { return state_.ToPlan(); }

  // From now on the climb's work is ticked in `budget`, which starts from
  // `counted`, the work of every start (counted as they ran). A round still
  // placing when the count passes the budget's work limit by a twentieth is
  // abandoned: a round re-places a suffix of the order, on a dense problem
  // as much work as a whole pass, and the Solve counts within 1.1x of its
  // limit.
  void Attach(Budget& budget, int64_t counted) {
    budget_ = &budget;
    round_work_cap_ = budget.work_limit() + budget.work_limit() / 20;
    budget.Carry(counted);
    synced_ = work();
  }

  // One perturbation; true when it was kept. A round still placing at the
  // budget's deadline, or past the cap of the count, is undone (the count
  // is otherwise checked between rounds).
  bool Round(std::mt19937_64& rng) {
    const Problem& problem = index_.problem();
    scans_ += kRoundPasses * static_cast<int64_t>(problem.buffers.size());
    // The buffers at the top of their pool, by id.
    tops_.clear();
    for (BufferId b : order_) {
      const Bytes size = problem.buffers[b].size;
      if (size > 0 && state_.offset(b) + size == used_[state_.pool(b)])
        tops_.push_back(b);
    }
    if (tops_.empty()) return false;
    std::sort(tops_.begin(), tops_.end());
    const BufferId top = tops_[rng() % tops_.size()];
    const int at = position_[top];

    // Buffers beneath `top` that come earlier in the order.
    state_.CollectObstacles(top, state_.pool(top), obstacles_);
    earlier_.clear();
    for (const internal::Obstacle& o : obstacles_) {
      if (position_[o.buffer] >= 0 && position_[o.buffer] < at)
        earlier_.push_back(o.buffer);
    }
    std::sort(earlier_.begin(), earlier_.end());

    std::vector<BufferId> saved_order;
    const int first = Perturb(rng, at, saved_order);
    if (first < 0) return false;
    return Replace(first, saved_order);
  }

  // Ticks the work done since the last call in the attached budget.
  void Sync() {
    budget_->Tick(work() - synced_);
    synced_ = work();
  }

 private:
  struct Saved {
    BufferId buffer;
    PoolId pool;
    Offset offset;
  };

  // Changes the order around the top buffer at position `at` (earlier_
  // holds the buffers beneath it that come before it); saves the order from
  // the first changed position, which it returns (-1: no change).
  int Perturb(std::mt19937_64& rng, int at,
              std::vector<BufferId>& saved_order) {
    int first = 0;
    const uint64_t move = rng() % 3;
    if (!earlier_.empty() && move == 0) {
      // Swap the top buffer with one beneath it.
      const BufferId other = earlier_[rng() % earlier_.size()];
      first = position_[other];
      saved_order.assign(order_.begin() + first, order_.end());
      std::swap(order_[first], order_[at]);
    } else if (!earlier_.empty() && move == 1) {
      // Move a buffer beneath the top one to just after it: what held the
      // top buffer up is placed later.
      const BufferId other = earlier_[rng() % earlier_.size()];
      first = position_[other];
      saved_order.assign(order_.begin() + first, order_.end());
      std::rotate(order_.begin() + first, order_.begin() + first + 1,
                  order_.begin() + at + 1);
    } else if (at > 0) {
      // Move the top buffer to an earlier position.
      first = static_cast<int>(rng() % at);
      saved_order.assign(order_.begin() + first, order_.end());
      std::rotate(order_.begin() + first, order_.begin() + at,
                  order_.begin() + at + 1);
    } else {
      return -1;
    }
    return first;
  }

  // Places the order's suffix from `first` again; keeps the new placement
  // when it is no worse (true), or restores `saved_order` and the old
  // placement.
  bool Replace(int first, const std::vector<BufferId>& saved_order) {
    saved_.clear();
    for (int i = first; i < static_cast<int>(order_.size()); ++i) {
      const BufferId b = order_[i];
      saved_.push_back({b, state_.pool(b), state_.offset(b)});
      state_.Unplace(b);
    }
    bool fits = true;
    for (int i = first; i < static_cast<int>(order_.size()) && fits; ++i) {
      fits = state_.PlaceGreedily(order_[i], fit_).ok();
      Sync();
      fits = fits && !budget_->OutOfTime() &&
             budget_->work_done() < round_work_cap_;
    }
    if (fits) {
      std::vector<Bytes> used = state_.PoolUsed();
      const Bytes peak = Sum(used);
      const __int128 excess = Excess();
      // Equal peaks: the smaller excess (bytes above the threshold) breaks
      // the tie, which steers the walk over plateaus downwards.
      if (peak < peak_ || (peak == peak_ && excess <= excess_)) {
        for (int i = first; i < static_cast<int>(order_.size()); ++i)
          position_[order_[i]] = i;
        used_ = std::move(used);
        peak_ = peak;
        excess_ = excess;
        return true;
      }
    }
    // Undo: the old order and the old placement of the suffix.
    for (int i = first; i < static_cast<int>(order_.size()); ++i)
      state_.Unplace(order_[i]);
    std::copy(saved_order.begin(), saved_order.end(), order_.begin() + first);
    for (const Saved& s : saved_) state_.Place(s.buffer, s.pool, s.offset);
    Sync();
    return false;
  }

  const PlacementIndex& index_;
  PlacementState state_;
  std::vector<BufferId> order_;
  std::vector<int> position_;  // -1 for fixed buffers
  Fit fit_;
  std::vector<Bytes> used_;
  Bytes peak_ = 0;
  __int128 excess_ = 0;
  // A round's own passes over the buffers, beyond the placements it ticks
  // through the state: the scan for the tops, the saved suffix of the order
  // and the positions it updates (or restores).
  static constexpr int64_t kRoundPasses = 3;
  int64_t scans_ = 0;
  Bytes threshold_ = 0;
  std::vector<BufferId> tops_;
  std::vector<BufferId> earlier_;
  std::vector<internal::Obstacle> obstacles_;
  std::vector<Saved> saved_;
  Budget* budget_ = nullptr;
  int64_t synced_ = 0;  // work() at the last Sync()
  int64_t round_work_cap_ = 0;
};

class HillClimbPlanner : public SearchPlanner {
 public:
  explicit HillClimbPlanner(const HillClimbOptions& options)
      : options_(options) {}

  std::string_view name() const override { return "hill_climb"; }

  // The incumbent is not used: the climb walks placement orders, which a
  // plan does not give; it starts from its own greedy placements.
  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent&) const override {
    // The clock of the starts; the climb's count starts with its start.
    Budget clock(options);
    MEMPLAN_RETURN_IF_ERROR(internal::TimeForSetUp(
        clock, problem, internal::kPlacementSetUpPerBuffer, name()));
    const PlacementIndex index(problem);

    const Bytes lower_bound = LowerBound(problem);
    const Bytes threshold = problem.pools.size() == 1 ? lower_bound : 0;
    // The start: the smallest greedy plan (ties: the first), kept placed.
    // A run still going at the deadline, or when the runs together cost
    // the work limit, is abandoned, and no other starts; when not one run
    // finished for the cost, the naive plan (a run can be quadratic on
    // dense problems).
    std::optional<absl::Status> first_error;
    std::unique_ptr<Climber> best_start;
    Bytes start_peak = 0;
    int64_t starts_cost = 0;
    for (const GreedyOptions& g : options_.starts) {
      auto candidate = std::make_unique<Climber>(
          index, internal::SortedBuffers(problem, g.order), g.fit);
      candidate->set_threshold(threshold);
      const absl::Status status =
          candidate->Start(clock, clock.work_limit() - starts_cost);
      starts_cost += candidate->start_cost();
      if (absl::IsDeadlineExceeded(status)) {
        if (best_start == nullptr) return status;
        break;
      }
      if (absl::IsAborted(status)) {
        if (best_start == nullptr) {
          return internal::PlanAfterSpentPass(problem, status,
                                              clock.work_done());
        }
        break;
      }
      if (!status.ok()) {
        if (!first_error.has_value()) first_error = status;
        continue;
      }
      const Bytes peak = candidate->ToPlan().peak;
      if (best_start == nullptr || peak < start_peak) {
        best_start = std::move(candidate);
        start_peak = peak;
      }
    }
    if (best_start == nullptr) {
      return first_error.value_or(
          absl::InvalidArgumentError("hill_climb has no start"));
    }

    return Climb(*best_start, options, clock, lower_bound);
  }

 private:
  // Rounds of the climb from `climber`'s start until the lower bound, the
  // rounds without gain, the budget or the patience run out.
  Plan Climb(Climber& climber, const PlanOptions& options, const Budget& clock,
             Bytes lower_bound) const {
    PlanOptions climb_options = options;
    climb_options.time_limit = absl::InfiniteDuration();
    climb_options.deadline = clock.deadline();
    climb_options.work_limit = WorkLimit(options);
    Budget budget(climb_options);
    climber.Attach(budget, clock.work_done());
    std::mt19937_64 rng(options.seed);
    int64_t since_gain = 0;
    for (int64_t round = 0; round < options_.max_rounds; ++round) {
      if (climber.peak() <= lower_bound) break;
      if (since_gain >= options_.max_rounds_without_gain) break;
      climber.Sync();
      if (budget.Expired() || budget.OutOfPatience()) break;
      const Bytes before = climber.peak();
      climber.Round(rng);
      since_gain = climber.peak() < before ? 0 : since_gain + 1;
      if (since_gain == 0) {
        climber.Sync();
        budget.Improved(climber.peak(), name());
      }
    }
    Plan plan = climber.ToPlan();
    plan.planner = std::string(name());
    plan.counters["work"] = budget.work_done();
    if (climber.peak() > lower_bound && budget.WorkSpent()) {
      plan.counters["cut_by_work_limit"] = 1;
    } else if (climber.peak() > lower_bound && budget.OutOfTimeNow()) {
      plan.counters["cut_by_time_limit"] = 1;
    }
    return plan;
  }

  HillClimbOptions options_;
};

}  // namespace

std::vector<GreedyOptions> HillClimbOptions::DefaultStarts() {
  std::vector<GreedyOptions> starts;
  for (PlacementOrder order : {PlacementOrder::kSize, PlacementOrder::kArea,
                               PlacementOrder::kLifetime}) {
    for (Fit fit : {Fit::kBest, Fit::kFirst}) {
      starts.push_back({.order = order, .fit = fit});
    }
  }
  starts.push_back({.order = PlacementOrder::kSizeClass, .fit = Fit::kBest});
  return starts;
}

std::unique_ptr<SearchPlanner> MakeHillClimbPlanner(
    const HillClimbOptions& options) {
  return std::make_unique<HillClimbPlanner>(options);
}
}  // namespace memplan

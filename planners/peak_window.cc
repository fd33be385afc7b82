// peak_window (see peak_window.h).

#include "peak_window.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "effort/budget.h"
#include "effort/set_up.h"
#include "exact/exact.h"
#include "memplan/problem.h"
#include "placement/placement.h"

namespace memplan {
namespace {

// The steps [start, end) around the first step of max-live whose live
// bytes are at least `share` of it; empty (start == end) without buffers.
Lifetime PeakWindow(const Problem& problem, double share) {
  // Ends sort before starts at the same step: lifetimes are half-open.
  std::vector<std::pair<Step, Bytes>> events;
  events.reserve(2 * problem.buffers.size());
  for (const Buffer& b : problem.buffers) {
    if (b.size == 0) continue;
    events.emplace_back(b.lifetime.start, b.size);
    events.emplace_back(b.lifetime.end, -b.size);
  }
  std::sort(events.begin(), events.end());
  // The live bytes from each distinct step to the next.
  std::vector<Step> steps;
  std::vector<Bytes> live;
  Bytes now = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    now += events[i].second;
    if (i + 1 < events.size() && events[i + 1].first == events[i].first)
      continue;
    steps.push_back(events[i].first);
    live.push_back(now);
  }
  if (steps.empty()) return {0, 0};
  const size_t peak = std::max_element(live.begin(), live.end()) - live.begin();
  const auto low = static_cast<Bytes>(share * static_cast<double>(live[peak]));
  size_t first = peak;
  size_t last = peak;  // the window's last segment
  while (first > 0 && live[first - 1] >= low) --first;
  // The last segment (after every end) holds nothing and stays out.
  while (last + 2 < live.size() && live[last + 1] >= low) ++last;
  return {steps[first], steps[last + 1]};
}

// The buffers alive in `window`, their lifetimes cut to it, as a problem of
// their own (ids in `members`, in order).
Problem WindowProblem(const Problem& problem, Lifetime window,
                      std::vector<BufferId>& members) {
  Problem sub;
  sub.name = problem.name;
  sub.pools = problem.pools;
  std::vector<BufferId> index(problem.buffers.size(), -1);
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.size == 0 || buffer.lifetime.start >= buffer.lifetime.end ||
        buffer.lifetime.start >= window.end ||
        buffer.lifetime.end <= window.start) {
      continue;
    }
    index[b] = static_cast<BufferId>(members.size());
    members.push_back(b);
    Buffer& cut = sub.buffers.emplace_back();
    cut.name = buffer.name;
    cut.size = buffer.size;
    cut.alignment = buffer.alignment;
    cut.lifetime = {std::max(buffer.lifetime.start, window.start),
                    std::min(buffer.lifetime.end, window.end)};
    cut.pools = buffer.pools;
  }
  for (const BufferConflict& c : problem.conflicts) {
    if (index[c.a] >= 0 && index[c.b] >= 0)
      sub.conflicts.push_back({.a = index[c.a], .b = index[c.b]});
  }
  return sub;
}

class PeakWindowPlanner : public SearchPlanner {
 public:
  explicit PeakWindowPlanner(const PeakWindowOptions& options)
      : options_(options), search_(MakeExactPlanner({})) {}

  std::string_view name() const override { return "peak_window"; }
  bool ForDense() const override { return options_.for_dense; }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& incumbent) const override {
    const absl::StatusOr<Plan>& start = incumbent.Get();
    Budget budget(options);
    // The window, its search and the passes' set-up cannot stop halfway.
    if (!Applies(problem) ||
        !internal::TimeForSetUp(budget, problem,
                                internal::kPlacementSetUpPerBuffer, name())
             .ok()) {
      return start;
    }
    std::vector<BufferId> members;
    std::optional<absl::StatusOr<Plan>> window =
        SolveWindow(problem, options, budget, members);
    if (!window.has_value() || !window->ok() || budget.OutOfTimeNow())
      return start;
    const Problem fixed = Fixed(problem, members, **window);
    const internal::PlacementIndex index(fixed);
    std::optional<Plan> best;
    if (start.ok()) best = *start;
    for (size_t i = 0; i < options_.passes.size(); ++i) {
      if (best.has_value() && best->peak <= best->lower_bound) break;
      if (budget.WorkSpent() || budget.OutOfTimeNow()) break;
      if (i > 0 && budget.OutOfPatience()) break;
      const GreedyOptions& pass = options_.passes[i];
      internal::PlacementState state(index);
      const absl::Status placed = internal::PlaceAll(
          state, internal::SortedBuffers(fixed, pass.order), pass.fit, &budget,
          budget.work_limit() - budget.work_done());
      if (!placed.ok()) continue;  // no fit, or cut: the next pass, if any
      Plan plan = state.ToPlan();
      ComputePlanStatistics(problem, plan);
      if (!best.has_value() || plan.peak < best->peak) {
        plan.planner = std::string(name());
        plan.counters["window_buffers"] = static_cast<int64_t>(members.size());
        plan.counters["window_nodes"] = (*window)->counters["nodes"];
        best = std::move(plan);
        budget.Improved(best->peak, name());
      }
    }
    if (!best.has_value()) return start;
    return *std::move(best);
  }

 private:
  // One pool, no fixed placements, at least two buffers.
  static bool Applies(const Problem& problem) {
    if (problem.pools.size() != 1 || problem.buffers.size() < 2) return false;
    return std::none_of(problem.buffers.begin(), problem.buffers.end(),
                        [](const Buffer& b) { return b.fixed.has_value(); });
  }

  // What placement reads of `problem` (no names), with `members` fixed
  // where `window` (their plan, in order) put them.
  static Problem Fixed(const Problem& problem,
                       const std::vector<BufferId>& members,
                       const Plan& window) {
    Problem fixed;
    fixed.pools = problem.pools;
    fixed.conflicts = problem.conflicts;
    fixed.buffers.resize(problem.buffers.size());
    for (size_t b = 0; b < problem.buffers.size(); ++b) {
      const Buffer& buffer = problem.buffers[b];
      Buffer& lean = fixed.buffers[b];
      lean.size = buffer.size;
      lean.alignment = buffer.alignment;
      lean.lifetime = buffer.lifetime;
      lean.pools = buffer.pools;
    }
    for (size_t i = 0; i < members.size(); ++i) {
      fixed.buffers[members[i]].fixed =
          Placement{.pool = window.assignments[i].pool,
                    .offset = window.assignments[i].offset};
    }
    return fixed;
  }

  // exact's plan of the window (`members` its buffers), with the options'
  // seed and patience, its work carried into `budget`; none when the
  // window is too large.
  std::optional<absl::StatusOr<Plan>> SolveWindow(
      const Problem& problem, const PlanOptions& options, Budget& budget,
      std::vector<BufferId>& members) const {
    const Problem sub = WindowProblem(
        problem, PeakWindow(problem, options_.window_share), members);
    const auto n = static_cast<int64_t>(sub.buffers.size());
    if (n == 0 || n > options_.max_window_buffers) return std::nullopt;
    PlanOptions search;
    search.seed = options.seed;
    search.patience = options.patience;
    search.deadline = budget.deadline();
    search.work_limit = std::max<int64_t>(
        1, std::min(options_.window_work,
                    budget.work_limit() - budget.work_done()));
    const internal::WorkMeter meter;
    absl::StatusOr<Plan> plan = search_->Solve(sub, search);
    budget.Carry(meter.counted());
    return plan;
  }

  PeakWindowOptions options_;
  std::unique_ptr<SearchPlanner> search_;
};

}  // namespace

std::unique_ptr<SearchPlanner> MakePeakWindowPlanner(
    const PeakWindowOptions& options) {
  return std::make_unique<PeakWindowPlanner>(options);
}

}  // namespace memplan

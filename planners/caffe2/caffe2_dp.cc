// caffe2_dp: memonger's dynamic program over shared-object assignments.
//
// Buffers b[0..n) in order of their last use; f(k, init) is the assignment of
// b[0..k] on top of the objects `init`. For buffer x = b[k]:
//   * j is the last prefix whose objects all end by the time x starts (the
//     objects of `init` included); the buffers b[j+1..k) all overlap x;
//   * find_best(b[j+1..k], f(j, init)): either x opens a new object on top of
//     f(k - 1, init), or x joins an object o of f(j, init) it can follow, and
//     b[j+1..k) are assigned recursively on top of f(j, init) without o (none
//     of them can share o with x: they overlap x);
//   * the cheapest candidate (sum of object sizes) wins, the earlier one on a
//     tie, the new object last.
// A candidate whose cost cannot beat the best so far is not expanded: adding
// buffers never makes an assignment cheaper, so its objects' sizes already
// bound it from below.
//
// What this proves: nothing global. f(k) keeps one assignment per prefix, so
// a prefix that is optimal on its own can still be the wrong start for later
// buffers; the program is memonger's, not an exact solver of the shared-object
// formulation, and that formulation is itself coarser than offset planning.
// proven_optimal is set only when the peak reaches the lower bound.
//
// Budget: every call and candidate is a node. A top-level step that needs
// more than a step budget is placed by the greedy instead; when the whole
// budget (or the time limit) runs out, the greedy places the rest. The greedy
// also runs on its own, and the smaller of the two plans is returned.

#include <algorithm>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "caffe2.h"
#include "caffe2_objects.h"
#include "memplan/problem.h"
#include "planners.h"

namespace memplan::internal {
namespace {

// A node budget shared by the whole search, and a tighter one per top-level
// step; the caller's deadline, when set, also ends the search.
class NodeBudget {
 public:
  NodeBudget(int64_t total, const PlanOptions& options)
      : left_(total), clock_(options) {}

  void StartStep(int64_t nodes) { step_left_ = nodes; }
  // False (and stays false for the step) once a budget is spent.
  bool Tick() {
    if (exhausted_ || step_exhausted_) return false;
    --left_;
    --step_left_;
    clock_.Tick(kNodeWork);
    if (left_ < 0 || clock_.OutOfTime()) {
      exhausted_ = true;
    } else if (step_left_ < 0) {
      step_exhausted_ = true;
    }
    return !exhausted_ && !step_exhausted_;
  }
  bool ok() const { return !exhausted_ && !step_exhausted_; }
  bool exhausted() const { return exhausted_; }
  void ClearStep() { step_exhausted_ = false; }
  // The work the nodes counted.
  int64_t work() const { return clock_.work_done(); }

 private:
  // A node copies an assignment: worth this much work to the clock's
  // cadence (the clock is read about every 256 nodes).
  static constexpr int64_t kNodeWork = kCaffe2DpNodeWork;
  static_assert(kNodeWork == Budget::kClockWork / 256);

  int64_t left_;
  int64_t step_left_ = 0;
  Budget clock_;
  bool exhausted_ = false;
  bool step_exhausted_ = false;
};

// A shared object inside the search. Its members are a chain of nodes in an
// append-only arena, so copying an assignment copies four numbers per object
// (the search copies assignments at every step).
struct DpObject {
  Step last_end = 0;
  Bytes size = 0;
  int32_t tail = -1;  // the arena node of the last member
  int pool_class = 0;
};
using DpAssignment = std::vector<DpObject>;

Bytes Total(const DpAssignment& objects) {
  Bytes total = 0;
  for (const DpObject& o : objects) total += o.size;
  return total;
}

class Search {
 public:
  Search(const Caffe2Context& context, NodeBudget& budget)
      : context_(context), budget_(budget) {}

  // f(|ranges| - 1, init); meaningless when the budget ran out meanwhile.
  DpAssignment Solve(std::span<const BufferId> ranges,
                     const DpAssignment& init) {
    if (!budget_.Tick()) return {};
    std::vector<DpAssignment> best;
    best.reserve(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i) {
      best.push_back(Advance(ranges, i, init, best));
      if (!budget_.ok()) return {};
    }
    return ranges.empty() ? init : best.back();
  }

  // f(i) given f(0..i-1) in `best`.
  DpAssignment Advance(std::span<const BufferId> ranges, size_t i,
                       const DpAssignment& init,
                       const std::vector<DpAssignment>& best) {
    const Step start = LifetimeOf(ranges[i]).start;
    Step init_end = 0;
    for (const DpObject& o : init) init_end = std::max(init_end, o.last_end);
    // Ranges are sorted by end, so the prefixes that end by `start` are the
    // ones before the first range ending later.
    int j = -1;
    if (init_end <= start) {
      auto first_late = std::upper_bound(
          ranges.begin(), ranges.begin() + i, start,
          [&](Step s, BufferId b) { return s < LifetimeOf(b).end; });
      j = static_cast<int>(first_late - ranges.begin()) - 1;
    }
    const DpAssignment& prev = j < 0 ? init : best[j];
    const DpAssignment& last = i == 0 ? init : best[i - 1];
    return FindBest(ranges.subspan(j + 1, i - j), prev, last);
  }

  // The greedy's choice for one buffer (the fallback of a step over budget).
  void GreedyPlace(BufferId x, DpAssignment& objects) {
    const Bytes size = context_.problem().buffers[x].size;
    int best = -1;
    Bytes best_distance = 0;
    for (int k = 0; k < static_cast<int>(objects.size()); ++k) {
      if (!CanJoin(objects[k], x)) continue;
      const Bytes distance =
          std::max(objects[k].size, size) - std::min(objects[k].size, size);
      if (best < 0 || distance < best_distance) {
        best = k;
        best_distance = distance;
      }
    }
    if (best >= 0) {
      objects[best] = Joined(objects[best], x);
    } else {
      objects.push_back(Fresh(x));
    }
  }

  ObjectAssignment Export(const DpAssignment& objects) const {
    ObjectAssignment out;
    for (const DpObject& o : objects) {
      SharedObject object{
          .members = {}, .last_end = o.last_end, .size = o.size};
      for (int32_t n = o.tail; n >= 0; n = arena_[n].prev) {
        object.members.push_back(arena_[n].buffer);
      }
      std::reverse(object.members.begin(), object.members.end());
      out.push_back(std::move(object));
    }
    return out;
  }

 private:
  struct Node {
    BufferId buffer;
    int32_t prev;
  };

  const Lifetime& LifetimeOf(BufferId b) const {
    return context_.problem().buffers[b].lifetime;
  }

  bool CanJoin(const DpObject& o, BufferId x) const {
    if (o.last_end > LifetimeOf(x).start ||
        o.pool_class != context_.pool_class(x)) {
      return false;
    }
    if (!context_.HasExplicitConflicts(x)) return true;
    for (int32_t n = o.tail; n >= 0; n = arena_[n].prev) {
      if (context_.ExplicitConflict(x, arena_[n].buffer)) return false;
    }
    return true;
  }

  DpObject Joined(DpObject o, BufferId x) {
    const Buffer& b = context_.problem().buffers[x];
    arena_.push_back({x, o.tail});
    o.tail = static_cast<int32_t>(arena_.size()) - 1;
    o.last_end = std::max(o.last_end, b.lifetime.end);
    o.size = std::max(o.size, b.size);
    return o;
  }

  DpObject Fresh(BufferId x) {
    const Buffer& b = context_.problem().buffers[x];
    arena_.push_back({x, -1});
    return DpObject{.last_end = b.lifetime.end,
                    .size = b.size,
                    .tail = static_cast<int32_t>(arena_.size()) - 1,
                    .pool_class = context_.pool_class(x)};
  }

  // Best assignment of `part` (all overlapping its last buffer x) on top of
  // `init`, given `prev_best`, the best assignment of init + part minus x.
  DpAssignment FindBest(std::span<const BufferId> part,
                        const DpAssignment& init,
                        const DpAssignment& prev_best) {
    const BufferId x = part.back();
    const Bytes x_size = context_.problem().buffers[x].size;
    const Bytes new_cost = Total(prev_best) + x_size;
    const Bytes init_cost = Total(init);
    DpAssignment best;
    Bytes best_cost = 0;
    bool have_best = false;
    for (size_t k = 0; k < init.size(); ++k) {
      if (!CanJoin(init[k], x)) continue;
      const Bytes bound =
          init_cost - init[k].size + std::max(init[k].size, x_size);
      // The new object wins only when strictly cheaper; earlier ones win ties.
      if (bound > new_cost || (have_best && bound >= best_cost)) continue;
      if (!budget_.Tick()) return {};
      DpAssignment rest;
      rest.reserve(init.size() + part.size());
      for (size_t o = 0; o < init.size(); ++o) {
        if (o != k) rest.push_back(init[o]);
      }
      if (part.size() > 1) {
        rest = Solve(part.first(part.size() - 1), rest);
        if (!budget_.ok()) return {};
      }
      rest.push_back(Joined(init[k], x));
      const Bytes cost = Total(rest);
      if (!have_best || cost < best_cost) {
        best = std::move(rest);
        best_cost = cost;
        have_best = true;
      }
    }
    if (have_best && best_cost <= new_cost) return best;
    DpAssignment fresh = prev_best;
    fresh.push_back(Fresh(x));
    return fresh;
  }

  const Caffe2Context& context_;
  NodeBudget& budget_;
  std::vector<Node> arena_;
};

class Caffe2DpPlanner : public Planner {
 public:
  explicit Caffe2DpPlanner(Caffe2Options options)
      : options_(std::move(options)) {}

  std::string_view name() const override { return "caffe2_dp"; }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    Budget clock(options);  // the greedy passes under the time limit
    const Caffe2Context context(problem, options_);
    const std::vector<BufferId>& order = context.order();
    ObjectAssignment greedy;
    if (absl::Status s = context.Greedy(order, greedy, &clock); !s.ok()) {
      if (absl::IsAborted(s)) {
        return PlanAfterSpentPass(problem, s, clock.work_done());
      }
      return s;
    }

    // Its work in nodes: the lesser of its own cap and what the greedy
    // pass left of the work limit.
    const int64_t nodes =
        std::max<int64_t>(0, std::min(options_.dp_max_work,
                                      WorkLimit(options) - clock.work_done())) /
        kCaffe2DpNodeWork;
    NodeBudget budget(nodes, options);
    Search search(context, budget);
    // The top level of Search::Solve, step by step, so that a step over its
    // budget falls back to the greedy and the search can go on: no step may
    // take more than this share of the node budget.
    constexpr int64_t kStepsPerBudget = 20;
    const int64_t step_budget = std::max<int64_t>(1, nodes / kStepsPerBudget);
    std::vector<DpAssignment> best;
    best.reserve(order.size());
    const DpAssignment empty;
    size_t done = 0;
    for (; done < order.size() && !budget.exhausted(); ++done) {
      budget.StartStep(step_budget);
      DpAssignment f = search.Advance(order, done, empty, best);
      if (budget.exhausted()) break;
      if (!budget.ok()) {
        budget.ClearStep();
        f = done == 0 ? empty : best.back();
        search.GreedyPlace(order[done], f);
      }
      best.push_back(std::move(f));
    }
    ObjectAssignment dp = search.Export(best.empty() ? empty : best.back());
    best.clear();
    // The rest of the order after the search, greedily, within what the
    // passes and the search left of the work limit; when that or the
    // deadline cuts it, the greedy plan is the answer.
    clock.Carry(budget.work());
    absl::StatusOr<Plan> greedy_plan = context.Layout(greedy, name());
    if (absl::Status s = context.Greedy(
            std::span<const BufferId>(order).subspan(done), dp, &clock);
        !s.ok()) {
      return greedy_plan;
    }

    absl::StatusOr<Plan> dp_plan = context.Layout(dp, name());
    if (!dp_plan.ok()) return greedy_plan;
    if (!greedy_plan.ok() || dp_plan->peak <= greedy_plan->peak) return dp_plan;
    return greedy_plan;
  }

 private:
  Caffe2Options options_;
};

}  // namespace

}  // namespace memplan::internal

namespace memplan {

std::unique_ptr<Planner> MakeCaffe2DpPlanner(const Caffe2Options& options) {
  return std::make_unique<internal::Caffe2DpPlanner>(options);
}

}  // namespace memplan

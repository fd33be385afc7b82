// cp: the seed notebook's constraint model, solved with Gecode. See cp.h.

#include "cp.h"

#include <algorithm>
#include <cstdint>
#include <gecode/int.hh>
#include <gecode/minimodel.hh>
#include <gecode/search.hh>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "effort/set_up.h"
#include "exact/preprocess.h"
#include "memplan/problem.h"
#include "memplan/verify.h"
#include "model/conflict_graph.h"
#include "model/problem_util.h"
#include "placement/placement.h"
#include "planners.h"

namespace memplan {
namespace {

// What the brancher needs to know about the model's buffers (indices of the
// model, not buffer ids). Owned by Solve, alive for the whole search.
struct BranchData {
  std::vector<int> size;        // in units
  std::vector<int> twin_class;  // -1, or the class of interchangeable buffers
  std::vector<std::vector<int>> twins;  // members of each class
  bool dominance = true;
  bool lowest_offset_first = false;
};

// Places the largest open buffer at its lowest feasible offset, or postpones
// it. A postponed buffer stays unselectable until propagation raises its
// lowest offset; when every open buffer is postponed the node fails. Any plan
// in the postponed subtree in which the buffer's lowest offset never rose can
// lower that buffer back to the offset it was postponed at (every other
// buffer is fixed by then and that offset was feasible against all of them),
// which is a plan of the other subtree with no larger peak: nothing better is
// lost.
class PlaceOrPostpone : public Gecode::Brancher {
 public:
  static void Post(Gecode::Home home,
                   Gecode::ViewArray<Gecode::Int::IntView>& x,
                   const BranchData* data) {
    (void)new (home) PlaceOrPostpone(home, x, data);
  }

  bool status(const Gecode::Space&) const override {
    for (int i = start_; i < x_.size(); ++i) {
      if (!x_[i].assigned()) {
        start_ = i;
        return true;
      }
    }
    return false;
  }

  const Gecode::Choice* choice(Gecode::Space&) override {
    int best = -1;
    for (int i = start_; i < x_.size(); ++i) {
      if (x_[i].assigned()) continue;
      const int lo = x_[i].min();
      if (data_->dominance && postponed_[i] == lo) continue;
      if (best < 0) {
        best = i;
        continue;
      }
      // Largest first, then lowest offset (or the other way round); then
      // the lowest index (twins are thus taken in index order).
      const int sb = data_->size[best], si = data_->size[i];
      const int lb = x_[best].min();
      if (data_->lowest_offset_first) {
        if (lo < lb || (lo == lb && si > sb)) best = i;
      } else if (si > sb || (si == sb && lo < lb)) {
        best = i;
      }
    }
    if (best < 0) return new PosVal(*this, -1, 0);
    return new PosVal(*this, best, x_[best].min());
  }

  const Gecode::Choice* choice(const Gecode::Space&,
                               Gecode::Archive& e) override {
    int pos, val;
    e >> pos >> val;
    return new PosVal(*this, pos, val);
  }

  Gecode::ExecStatus commit(Gecode::Space& home, const Gecode::Choice& c,
                            unsigned int a) override {
    const auto& pv = static_cast<const PosVal&>(c);
    if (pv.pos < 0) return Gecode::ES_FAILED;  // every open buffer postponed
    if (a == 0) {
      return Gecode::me_failed(x_[pv.pos].eq(home, pv.val)) ? Gecode::ES_FAILED
                                                            : Gecode::ES_OK;
    }
    if (!data_->dominance) {
      return Gecode::me_failed(x_[pv.pos].gr(home, pv.val)) ? Gecode::ES_FAILED
                                                            : Gecode::ES_OK;
    }
    postponed_[pv.pos] = pv.val;
    // A twin at the same lowest offset would give the plans of the left
    // branch with the two buffers swapped.
    const int cls = data_->twin_class[pv.pos];
    if (cls >= 0) {
      for (int t : data_->twins[cls]) {
        if (!x_[t].assigned() && x_[t].min() == pv.val) postponed_[t] = pv.val;
      }
    }
    return Gecode::ES_OK;
  }

  void print(const Gecode::Space&, const Gecode::Choice& c, unsigned int a,
             std::ostream& o) const override {
    const auto& pv = static_cast<const PosVal&>(c);
    o << "x[" << pv.pos << "] " << (a == 0 ? "=" : "postponed at") << " "
      << pv.val;
  }

  Gecode::Actor* copy(Gecode::Space& home) override {
    return new (home) PlaceOrPostpone(home, *this);
  }

  size_t dispose(Gecode::Space& home) override {
    (void)Gecode::Brancher::dispose(home);
    return sizeof(*this);
  }

 private:
  class PosVal : public Gecode::Choice {
   public:
    PosVal(const Gecode::Brancher& b, int p, int v)
        : Gecode::Choice(b, p < 0 ? 1 : 2), pos(p), val(v) {}
    void archive(Gecode::Archive& e) const override {
      Gecode::Choice::archive(e);
      e << pos << val;
    }
    int pos;  // -1: fail
    int val;
  };

  PlaceOrPostpone(Gecode::Home home, Gecode::ViewArray<Gecode::Int::IntView>& x,
                  const BranchData* data)
      : Gecode::Brancher(home), x_(x), data_(data) {
    postponed_ = static_cast<Gecode::Space&>(home).alloc<int>(x_.size());
    for (int i = 0; i < x_.size(); ++i) postponed_[i] = -1;
  }

  PlaceOrPostpone(Gecode::Space& home, PlaceOrPostpone& b)
      : Gecode::Brancher(home, b), data_(b.data_), start_(b.start_) {
    x_.update(home, b.x_);
    postponed_ = home.alloc<int>(x_.size());
    std::copy(b.postponed_, b.postponed_ + x_.size(), postponed_);
  }

  Gecode::ViewArray<Gecode::Int::IntView> x_;
  const BranchData* data_;
  int* postponed_ = nullptr;  // lowest offset when postponed, -1 = open
  mutable int start_ = 0;     // every buffer before it is placed
};

class CpSpace : public Gecode::IntMinimizeSpace {
 public:
  CpSpace() = default;
  CpSpace(CpSpace& s) : Gecode::IntMinimizeSpace(s) {
    x.update(*this, s.x);
    peak.update(*this, s.peak);
  }
  Gecode::Space* copy() override { return new CpSpace(*this); }
  Gecode::IntVar cost() const override { return peak; }

  Gecode::IntVarArray x;  // offsets of the model's buffers, in units
  Gecode::IntVar peak;    // in units
};

// Stops the search after `node_limit` nodes or at `deadline` (read at every
// node: Gecode's parallel workers share it, and a node costs far more than
// the clock).
class SearchStop : public Gecode::Search::Stop {
 public:
  SearchStop(int64_t node_limit, absl::Time deadline)
      : node_limit_(node_limit), deadline_(deadline) {}
  bool stop(const Gecode::Search::Statistics& s,
            const Gecode::Search::Options&) override {
    return static_cast<int64_t>(s.node) >= node_limit_ ||
           (deadline_ != absl::InfiniteFuture() && absl::Now() >= deadline_);
  }

 private:
  int64_t node_limit_;
  absl::Time deadline_;
};

struct WarmStart;
struct ModelFrame;

class CpPlanner : public SearchPlanner {
 public:
  CpPlanner(const CpOptions& options, CpStats* stats)
      : options_(options), stats_(stats) {}

  std::string_view name() const override { return "cp"; }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& start) const override {
    try {
      CpStats local_stats;
      CpStats& stats = stats_ != nullptr ? *stats_ : local_stats;
      stats = CpStats{};
      absl::StatusOr<Plan> plan = SolveImpl(problem, options, start, stats);
      if (plan.ok()) {
        plan->counters["nodes"] = stats.nodes;
        plan->counters["failures"] = stats.failures;
        plan->counters["solutions"] = stats.solutions;
      }
      return plan;
    } catch (const Gecode::Exception& e) {
      return absl::InternalError(absl::StrCat("cp: Gecode: ", e.what()));
    }
  }

 private:
  absl::StatusOr<Plan> SolveImpl(const Problem& problem,
                                 const PlanOptions& options, Incumbent& start,
                                 CpStats& stats) const;
  // SolveImpl once the model is known to be worth building: builds it and
  // searches below the warm start.
  absl::StatusOr<Plan> BuildAndSearch(const Problem& problem,
                                      const PlanOptions& options,
                                      const ConflictGraph& conflicts,
                                      Budget& budget, ModelFrame& frame,
                                      WarmStart warm, CpStats& stats) const;

  CpOptions options_;
  CpStats* stats_;
};

Plan FinishPlan(const Problem& problem, Plan plan, bool proven) {
  plan.planner = "cp";
  plan.proven_optimal = proven;
  ComputePlanStatistics(problem, plan);
  return plan;
}

// A step where the buffers alive need more than `capacity` bytes: the
// buffer starting last there does not fit.
absl::Status OverfullStepError(const Problem& problem, Bytes capacity) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<BufferId> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::pair<Step, BufferId>> ends;
  std::sort(order.begin(), order.end(), [&](BufferId a, BufferId b) {
    const Step sa = problem.buffers[a].lifetime.start;
    const Step sb = problem.buffers[b].lifetime.start;
    return sa != sb ? sa < sb : a < b;
  });
  // Live set by a sweep; O(n^2) at worst, only on this error path.
  std::vector<BufferId> live;
  for (BufferId b : order) {
    const Step t = problem.buffers[b].lifetime.start;
    std::erase_if(
        live, [&](BufferId l) { return problem.buffers[l].lifetime.end <= t; });
    live.push_back(b);
    Bytes sum = 0;
    for (BufferId l : live) sum += problem.buffers[l].size;
    if (sum > capacity) {
      std::vector<Bytes> usage(problem.pools.size(), 0);
      usage[0] = sum - problem.buffers[b].size;
      return internal::NoFitError(problem, b, usage);
    }
  }
  return absl::OkStatus();
}

absl::Status InfeasibleError(const Problem& problem, Bytes lower,
                             const absl::Status& warm_error) {
  const Pool& pool = problem.pools[0];
  if (lower > pool.capacity) {
    absl::Status step = OverfullStepError(problem, pool.capacity);
    if (!step.ok()) return step;
  }
  std::string why = absl::StrCat(
      "no plan of the ", problem.buffers.size(), " buffers fits in pool \"",
      pool.name, "\" of capacity ", pool.capacity,
      " bytes (proven by exhaustive search; lower bound ", lower, " bytes)");
  if (!warm_error.ok())
    absl::StrAppend(&why, "; the heuristic: ", warm_error.message());
  return absl::ResourceExhaustedError(why);
}

// Posts "xi + si <= xj or xj + sj <= xi".
void PostDisjunction(Gecode::Space& home, const Gecode::IntVar& xi, int si,
                     const Gecode::IntVar& xj, int sj) {
  Gecode::BoolVar before(home, 0, 1), after(home, 0, 1);
  Gecode::IntArgs coefficients(2);
  coefficients[0] = 1;
  coefficients[1] = -1;
  Gecode::IntVarArgs ij(2), ji(2);
  ij[0] = xi;
  ij[1] = xj;
  ji[0] = xj;
  ji[1] = xi;
  Gecode::linear(home, coefficients, ij, Gecode::IRT_LQ, -si,
                 Gecode::Reify(before, Gecode::RM_IMP));
  Gecode::linear(home, coefficients, ji, Gecode::IRT_LQ, -sj,
                 Gecode::Reify(after, Gecode::RM_IMP));
  Gecode::rel(home, before, Gecode::BOT_OR, after, 1);
}

// Fixed buffers that already overlap make every plan invalid.
absl::Status CheckFixedOverlaps(const Problem& problem,
                                const ConflictGraph& conflicts) {
  const int n = static_cast<int>(problem.buffers.size());
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& bb = problem.buffers[b];
    if (!bb.fixed.has_value() || bb.size == 0) continue;
    for (BufferId c : conflicts.neighbors(b)) {
      const Buffer& cb = problem.buffers[c];
      if (c <= b || !cb.fixed.has_value() || cb.size == 0) continue;
      if (bb.fixed->offset < cb.fixed->offset + cb.size &&
          cb.fixed->offset < bb.fixed->offset + bb.size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "fixed placements overlap: ", internal::DescribeBuffer(problem, b),
            " at ", bb.fixed->offset, " and ",
            internal::DescribeBuffer(problem, c), " at ", cb.fixed->offset));
      }
    }
  }
  return absl::OkStatus();
}

// Lower bound on the peak: max live bytes and the end of every fixed buffer.
// An error when that already exceeds the pool's capacity.
absl::StatusOr<Bytes> PeakLowerBound(const Problem& problem) {
  const Pool& pool = problem.pools[0];
  Bytes lower = LowerBound(problem);
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    const Buffer& buffer = problem.buffers[b];
    const Bytes end = buffer.fixed.has_value()
                          ? buffer.fixed->offset + buffer.size
                          : buffer.size;
    if (pool.capacity > 0 && end > pool.capacity) {
      const std::vector<Bytes> usage(1, 0);
      return internal::NoFitError(problem, b, usage);
    }
    lower = std::max(lower, end);
  }
  if (pool.capacity > 0 && lower > pool.capacity) {
    return InfeasibleError(problem, lower, absl::OkStatus());
  }
  return lower;
}

// The warm start: the incumbent's plan, or why there is none.
struct WarmStart {
  std::optional<Plan> plan;
  absl::Status error = absl::OkStatus();
};

WarmStart TakeWarmStart(Incumbent& start, CpStats& stats) {
  WarmStart warm;
  if (start.none()) return warm;
  const absl::StatusOr<Plan>& plan = start.Get();
  if (plan.ok()) {
    warm.plan = *plan;
    stats.used_warm_start = true;
    stats.warm_start_peak = warm.plan->peak;
  } else {
    warm.error = plan.status();
  }
  return warm;
}

// Above CpOptions::max_conflicting_pairs: the warm start, or why not.
absl::StatusOr<Plan> WithoutModel(const Problem& problem, WarmStart warm,
                                  const CpStats& stats,
                                  int64_t max_conflicting_pairs) {
  if (warm.plan.has_value())
    return internal::StartAsPlanOf(problem, std::move(*warm.plan), "cp");
  const std::string why = absl::StrCat(
      "the cp planner builds no model of ", stats.conflicting_pairs,
      " conflicting pairs (CpOptions::max_conflicting_pairs is ",
      max_conflicting_pairs, ") and has no warm start plan");
  if (!warm.error.ok()) {
    return absl::Status(
        warm.error.code(),
        absl::StrCat(why, "; the warm start: ", warm.error.message()));
  }
  return absl::UnimplementedError(why);
}

// What the model is made of: its buffers, its units, the range of its peak.
struct ModelFrame {
  Bytes unit = 1;
  Bytes lower = 0;            // bytes
  int64_t low = 0, high = 0;  // the peak's range, in units
  std::vector<BufferId> ids;  // the model's buffers: every one with bytes
  std::vector<int> index;     // per buffer: its index in ids, or -1
  std::vector<Step> times;    // lifetime ends, sorted
  BranchData data;            // sizes in units, twins, branching options

  // Lifetimes as ranks, so that any step values fit Gecode's integers.
  int Rank(Step t) const { return internal::SectionOf(times, t); }
};

// The peak lies in [low, high] units; the search looks for strictly better
// plans than the warm start. False when the range is empty.
bool PeakRange(const Problem& problem, const WarmStart& warm,
               ModelFrame& frame) {
  const Bytes unit = frame.unit;
  frame.low = (frame.lower + unit - 1) / unit;
  frame.high = 0;
  if (warm.plan.has_value()) {
    frame.high = (warm.plan->peak - 1) / unit;
  } else {
    // Stacking every buffer above the fixed ones always fits.
    for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size());
         ++b) {
      frame.high +=
          (problem.buffers[b].size + EffectiveAlignment(problem, b, 0)) / unit;
    }
    frame.high += frame.lower / unit;
  }
  const Bytes capacity = problem.pools[0].capacity;
  if (capacity > 0) frame.high = std::min(frame.high, capacity / unit);
  return frame.low <= frame.high;
}

// The model's buffers (zero-size ones sit at 0), their sizes in units and
// the lifetime ends.
void ModelBuffers(const Problem& problem, const CpOptions& options,
                  ModelFrame& frame) {
  const int n = static_cast<int>(problem.buffers.size());
  frame.index.assign(n, -1);
  for (BufferId b = 0; b < n; ++b) {
    if (problem.buffers[b].size == 0) continue;
    frame.index[b] = static_cast<int>(frame.ids.size());
    frame.ids.push_back(b);
  }
  BranchData& data = frame.data;
  data.dominance = options.dominance;
  data.lowest_offset_first = options.lowest_offset_first;
  for (BufferId b : frame.ids) {
    data.size.push_back(static_cast<int>(problem.buffers[b].size / frame.unit));
  }
  frame.times = internal::SectionTimes(problem, frame.ids);
}

// One offset variable per buffer (fixed ones fixed, the others on their
// alignment) below the peak.
void PostOffsets(const Problem& problem, const ModelFrame& frame,
                 CpSpace& home) {
  const int m = static_cast<int>(frame.ids.size());
  home.x = Gecode::IntVarArray(home, m);
  home.peak = Gecode::IntVar(home, static_cast<int>(frame.low),
                             static_cast<int>(frame.high));
  for (int k = 0; k < m; ++k) {
    const Buffer& buffer = problem.buffers[frame.ids[k]];
    const int size = frame.data.size[k];
    if (buffer.fixed.has_value()) {
      const int offset = static_cast<int>(buffer.fixed->offset / frame.unit);
      home.x[k] = Gecode::IntVar(home, offset, offset);
    } else {
      const int align = static_cast<int>(
          EffectiveAlignment(problem, frame.ids[k], 0) / frame.unit);
      const int top = static_cast<int>(frame.high) - size;
      home.x[k] = Gecode::IntVar(home, 0, top);
      if (align > 1) {
        Gecode::IntVar slot(home, 0, top / align);
        Gecode::rel(home, home.x[k] == align * slot);
      }
    }
    Gecode::rel(home, home.x[k] + size <= home.peak);
  }
}

// A step of the model building: worth this much work to the clock's
// cadence (the clock is read about every 1024 steps).
constexpr int64_t kBuildWork = Budget::kClockWork / 1024;
bool BuildStepOutOfTime(Budget& budget) {
  budget.Tick(kBuildWork);
  return budget.OutOfTime();
}

// No overlap between conflicting buffers: a disjunction per pair (or
// nooverlap for the lifetime overlaps). False when out of time.
bool PostNoOverlap(const Problem& problem, const ConflictGraph& conflicts,
                   const CpOptions& options, const ModelFrame& frame,
                   Budget& budget, CpSpace& home) {
  const int m = static_cast<int>(frame.ids.size());
  if (options.use_nooverlap && m > 1) {
    Gecode::IntVarArgs xs(m), ys(m);
    Gecode::IntArgs ws(m), hs(m);
    for (int k = 0; k < m; ++k) {
      const Lifetime& life = problem.buffers[frame.ids[k]].lifetime;
      xs[k] = home.x[k];
      ws[k] = frame.data.size[k];
      ys[k] =
          Gecode::IntVar(home, frame.Rank(life.start), frame.Rank(life.start));
      hs[k] = frame.Rank(life.end) - frame.Rank(life.start);
    }
    Gecode::nooverlap(home, xs, ws, ys, hs);
  }
  for (int k = 0; k < m; ++k) {
    const BufferId b = frame.ids[k];
    for (BufferId c : conflicts.neighbors(b)) {
      if (c <= b || frame.index[c] < 0) continue;
      if (problem.buffers[b].fixed.has_value() &&
          problem.buffers[c].fixed.has_value())
        continue;
      if (options.use_nooverlap &&
          Overlaps(problem.buffers[b].lifetime, problem.buffers[c].lifetime)) {
        continue;
      }
      const int j = frame.index[c];
      PostDisjunction(home, home.x[k], frame.data.size[k], home.x[j],
                      frame.data.size[j]);
      if (BuildStepOutOfTime(budget)) return false;
    }
  }
  return true;
}

// Redundant: the buffers alive together at a step form a unary resource.
// The live set is maximal right before a step at which some buffer ends,
// when buffers started since the last such step. False when out of time.
bool PostCliques(const Problem& problem, const CpOptions& options,
                 const ModelFrame& frame, Budget& budget, CpSpace& home) {
  const int m = static_cast<int>(frame.ids.size());
  const size_t steps = frame.times.size();
  std::vector<std::vector<int>> starts(steps), ends(steps);
  for (int k = 0; k < m; ++k) {
    const Lifetime& life = problem.buffers[frame.ids[k]].lifetime;
    starts[frame.Rank(life.start)].push_back(k);
    ends[frame.Rank(life.end)].push_back(k);
  }
  int64_t members = 0;
  std::vector<int> live;
  bool grew = false;
  for (size_t t = 0; t < steps; ++t) {
    if (grew && !ends[t].empty() && live.size() >= 2 &&
        members + static_cast<int64_t>(live.size()) <=
            options.max_clique_members) {
      Gecode::IntVarArgs xs;
      Gecode::IntArgs ps;
      for (int k : live) {
        xs << home.x[k];
        ps << frame.data.size[k];
      }
      Gecode::unary(home, xs, ps);
      members += static_cast<int64_t>(live.size());
      if (budget.OutOfTimeNow()) return false;
    }
    if (!ends[t].empty()) {
      grew = false;
      std::erase_if(live, [&](int k) {
        return frame.Rank(problem.buffers[frame.ids[k]].lifetime.end) ==
               static_cast<int>(t);
      });
    }
    if (!starts[t].empty()) grew = true;
    for (int k : starts[t]) live.push_back(k);
  }
  return true;
}

// The classes of interchangeable buffers (internal::TwinClasses) among the
// model's buffers.
void FindTwins(const Problem& problem, ModelFrame& frame) {
  BranchData& data = frame.data;
  const int m = static_cast<int>(frame.ids.size());
  const std::vector<BufferId> twin_of =
      internal::TwinClasses(problem, frame.unit);
  data.twin_class.assign(m, -1);
  std::vector<int> class_of(problem.buffers.size(), -1);  // by least id
  for (int k = 0; k < m; ++k) {
    const BufferId least = twin_of[frame.ids[k]];
    if (least == frame.ids[k]) continue;
    if (class_of[least] < 0) {
      class_of[least] = static_cast<int>(data.twins.size());
      data.twins.push_back({frame.index[least]});
      data.twin_class[frame.index[least]] = class_of[least];
    }
    data.twin_class[k] = class_of[least];
    data.twins[class_of[least]].push_back(k);
  }
}

// The model of `frame` in a new space, with its brancher; null when the
// time ran out while building it.
std::unique_ptr<CpSpace> BuildModel(const Problem& problem,
                                    const ConflictGraph& conflicts,
                                    const CpOptions& options, Budget& budget,
                                    ModelFrame& frame) {
  auto root = std::make_unique<CpSpace>();
  CpSpace& home = *root;
  PostOffsets(problem, frame, home);
  if (!PostNoOverlap(problem, conflicts, options, frame, budget, home)) {
    return nullptr;
  }
  if (options.redundant_cliques &&
      !PostCliques(problem, options, frame, budget, home)) {
    return nullptr;
  }
  FindTwins(problem, frame);
  Gecode::IntVarArgs xs(home.x);
  Gecode::ViewArray<Gecode::Int::IntView> views(home, xs);
  PlaceOrPostpone::Post(home, views, &frame.data);
  Gecode::branch(home, home.peak, Gecode::INT_VAL_MIN());
  return root;
}

// What the branch and bound found: the offsets of its last (best) plan.
struct SearchResult {
  bool found = false;
  bool stopped = false;  // by the node limit or the clock: nothing proven
  std::vector<int> offsets;
};

SearchResult BranchAndBound(CpSpace* root, int threads, Budget& budget,
                            CpStats& stats) {
  const int m = root->x.size();
  SearchResult result;
  result.offsets.assign(m, 0);
  if (root->status() == Gecode::SS_FAILED) return result;
  // The counted budget in nodes: a node's propagation visits about every
  // offset variable and every pair's disjunction (as exact's NodeWork).
  const int64_t node_work =
      8 * static_cast<int64_t>(m) + stats.conflicting_pairs + 64;
  SearchStop stop(std::max<int64_t>(1, budget.work_limit() / node_work),
                  budget.deadline());
  Gecode::Search::Options search_options;
  search_options.threads = threads;
  search_options.stop = &stop;
  // The search keeps a copy of the space every c_d levels of its path, and a
  // copy holds every disjunction: about 48 bytes per pair and level
  // (measured on somas_resnet50: 218395 pairs, 1042 buffers, 1.76 GB at the
  // default c_d = 8, 0.54 GB at 64). Large models copy less often so that
  // the copies stay near 256 MB; the search visits the same nodes,
  // recomputation only costs time.
  const double copy_bytes = 48.0 *
                            static_cast<double>(stats.conflicting_pairs) *
                            static_cast<double>(m);
  search_options.c_d = static_cast<unsigned int>(
      std::clamp(copy_bytes / (256.0 * 1024 * 1024),
                 static_cast<double>(Gecode::Search::Config::c_d), 1e6));
  Gecode::BAB<CpSpace> engine(root, search_options);
  while (CpSpace* solution = engine.next()) {
    for (int k = 0; k < m; ++k) result.offsets[k] = solution->x[k].val();
    result.found = true;
    ++stats.solutions;
    delete solution;
  }
  result.stopped = engine.stopped();
  const Gecode::Search::Statistics s = engine.statistics();
  stats.nodes = static_cast<int64_t>(s.node);
  stats.failures = static_cast<int64_t>(s.fail);
  return result;
}

// The plan of the model's offsets (buffers outside the model at 0 or at
// their fixed offset).
Plan ExtractPlan(const Problem& problem, const ModelFrame& frame,
                 const std::vector<int>& offsets) {
  const int n = static_cast<int>(problem.buffers.size());
  Plan plan;
  plan.assignments.resize(n);
  for (BufferId b = 0; b < n; ++b) {
    Assignment& a = plan.assignments[b];
    a.buffer = b;
    a.pool = 0;
    const Buffer& buffer = problem.buffers[b];
    if (frame.index[b] >= 0) {
      a.offset = static_cast<Offset>(offsets[frame.index[b]]) * frame.unit;
    } else if (buffer.fixed.has_value()) {
      a.offset = buffer.fixed->offset;
    }
  }
  return plan;
}

absl::StatusOr<Plan> CpPlanner::SolveImpl(const Problem& problem,
                                          const PlanOptions& options,
                                          Incumbent& start,
                                          CpStats& stats) const {
  Budget budget(options);
  if (problem.pools.size() != 1) {
    return absl::UnimplementedError(
        absl::StrCat("the cp planner supports a single pool; this problem has ",
                     problem.pools.size(), " pools (use a heuristic planner)"));
  }
  if (problem.buffers.empty()) {
    return FinishPlan(problem, Plan{}, /*proven=*/true);
  }

  // The warm start first: every way on needs it, and under a deadline too
  // near for even the counting below it is the answer as it is.
  WarmStart warm = TakeWarmStart(start, stats);
  if (absl::Status s = internal::TimeForSetUp(
          budget, problem, internal::kPlacementSetUpPerBuffer, "the cp model");
      !s.ok()) {
    if (!warm.plan.has_value()) return s;
    return internal::StartAsPlanOf(problem, *std::move(warm.plan), "cp");
  }
  // The size of the model, before anything as large as it is built: the
  // conflict graph and the disjunctions both grow with the pairs.
  stats.conflicting_pairs = internal::CountOverlappingPairs(problem) +
                            static_cast<int64_t>(problem.conflicts.size());
  stats.model_too_large =
      options_.max_conflicting_pairs > 0 &&
      stats.conflicting_pairs > options_.max_conflicting_pairs;
  // (Above the bound the warm start's placement of the fixed buffers finds
  // fixed buffers that overlap.)
  std::optional<ConflictGraph> conflicts;
  if (!stats.model_too_large) {
    conflicts = ConflictGraph::Build(problem);
    MEMPLAN_RETURN_IF_ERROR(CheckFixedOverlaps(problem, *conflicts));
  }
  ModelFrame frame;
  MEMPLAN_ASSIGN_OR_RETURN(frame.lower, PeakLowerBound(problem));

  if (warm.plan.has_value() && warm.plan->peak <= frame.lower) {
    return FinishPlan(problem, std::move(*warm.plan), /*proven=*/true);
  }
  if (stats.model_too_large) {
    return WithoutModel(problem, std::move(warm), stats,
                        options_.max_conflicting_pairs);
  }
  frame.unit = internal::PlanningUnit(problem);
  if (!PeakRange(problem, warm, frame)) {
    if (warm.plan.has_value()) {
      return FinishPlan(problem, std::move(*warm.plan), /*proven=*/true);
    }
    return InfeasibleError(problem, frame.lower, warm.error);
  }
  if (frame.high > Gecode::Int::Limits::max) {
    if (warm.plan.has_value()) {
      return FinishPlan(problem, std::move(*warm.plan), /*proven=*/false);
    }
    return absl::UnimplementedError(absl::StrCat(
        "the cp planner cannot model peaks of ", frame.high, " units of ",
        frame.unit, " bytes (more than Gecode's integer range)"));
  }
  return BuildAndSearch(problem, options, *conflicts, budget, frame,
                        std::move(warm), stats);
}

absl::StatusOr<Plan> CpPlanner::BuildAndSearch(
    const Problem& problem, const PlanOptions& options,
    const ConflictGraph& conflicts, Budget& budget, ModelFrame& frame,
    WarmStart warm, CpStats& stats) const {
  ModelBuffers(problem, options_, frame);
  std::unique_ptr<CpSpace> root =
      BuildModel(problem, conflicts, options_, budget, frame);
  if (root == nullptr) {
    // Out of time while building: the warm start, as when the search runs
    // out of time.
    stats.model_out_of_time = true;
    if (warm.plan.has_value()) {
      return FinishPlan(problem, std::move(*warm.plan), /*proven=*/false);
    }
    return absl::DeadlineExceededError(
        "the cp planner ran out of time while building its model");
  }

  const int threads =
      std::max(1, options_.threads > 0 ? options_.threads : options.threads);
  const SearchResult result =
      BranchAndBound(root.get(), threads, budget, stats);
  if (result.found) {
    return FinishPlan(problem, ExtractPlan(problem, frame, result.offsets),
                      /*proven=*/!result.stopped);
  }
  if (warm.plan.has_value()) {
    return FinishPlan(problem, std::move(*warm.plan),
                      /*proven=*/!result.stopped);
  }
  if (!result.stopped) return InfeasibleError(problem, frame.lower, warm.error);
  return absl::DeadlineExceededError(
      "the cp planner found no plan within its budget and proved none "
      "impossible");
}

}  // namespace

std::unique_ptr<SearchPlanner> MakeCpPlanner(const CpOptions& options,
                                             CpStats* stats) {
  return std::make_unique<CpPlanner>(options, stats);
}

}  // namespace memplan

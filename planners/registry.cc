// The registry: one explicit table of the core's planners with the options
// each declares, the one place where they are composed, and the planners
// that optional components (RegisterCpPlanner(), memplan/planners/cp.h) and
// programs add explicitly through RegisterPlanner().
// Options are checked and parsed in registry_options.cc.

#include "memplan/registry.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "effort/budget.h"
#include "exact/exact_part.h"
#include "memplan/compose.h"
#include "memplan/planner.h"
#include "memplan/planners/caffe2.h"
#include "memplan/planners/exact.h"
#include "memplan/planners/greedy_by_size.h"
#include "memplan/planners/hill_climb.h"
#include "memplan/problem.h"
#include "memplan/spelling.h"
#include "model/problem_util.h"
#include "packed.h"
#include "peak_window.h"
#include "planners.h"
#include "registry_options.h"

namespace memplan {
namespace {

// The work of best's quick try for a plan at the lower bound (its option
// lower_bound_try_work): a sixteenth of the default budget, 2.5x10^7 units
// (somas_resnet50's plan at its lower bound takes 23k nodes of 1042
// buffers, 7x10^6 units).
constexpr int64_t kLowerBoundTryWork = kDefaultWorkLimit / 16;

// The quick try's nodes per buffer at most: the bundled inputs it plans at
// the lower bound take up to 114 (MiniMalloc's E; K 68, somas_resnet50 22),
// and where it fails (MiniMalloc's D and J, a graph whose explicit
// conflicts keep every plan above max-live) it costs no more than that.
constexpr int64_t kLowerBoundTryNodesPerBuffer = 128;

// Whether `incumbent`'s plan (one pool) is within `enough` times the lower
// bound: then no search can gain more than that fraction (0: never).
bool Enough(const Problem& problem, const Plan& plan, double enough) {
  return enough > 0 && problem.pools.size() == 1 &&
         static_cast<double>(plan.peak) <=
             enough * static_cast<double>(plan.lower_bound);
}
bool Enough(const Problem& problem, Incumbent& incumbent, double enough) {
  const absl::StatusOr<Plan>& start = incumbent.Get();
  return start.ok() && Enough(problem, *start, enough);
}

// best's greedy passes by size (best fit, size classes, first fit), its
// first three.
constexpr int kPassesBySize = 3;

// exact's search for a plan at the lower bound with the lesser of
// `max_work` and `nodes_per_buffer` nodes per buffer (0: no such cap), and
// once the start is Enough() (then the try can only turn a plan within
// 0.2 % into a proof) with a quarter of the options' patience. (The
// training steps of densenet121, efficientnet_b0 and mobilenet_v2 by torch
// 2 are within 0.03 % of the bound and the try fails there: with the whole
// patience it cost them 0.08 s of 0.12-0.17 s.) Within kDescentWithin of
// the bound, where the greedy plan all but reached it, the try affords one
// descent if that is more: a node per buffer and a kDescentSlack-th more
// for backtracking (bert_base's 5620 buffers, 1.00001x: at the bound in
// 5625 nodes, where a quarter of the patience paid for 730).
constexpr double kDescentWithin = 1.0001;
constexpr int64_t kDescentSlack = 8;

class LowerBoundTry : public SearchPlanner {
 public:
  LowerBoundTry(int64_t max_work, int64_t nodes_per_buffer, double enough)
      : search_(MakeExactPlanner({.lower_bound_only = true})),
        max_work_(max_work),
        nodes_per_buffer_(nodes_per_buffer),
        enough_(enough) {}

  std::string_view name() const override { return search_->name(); }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& incumbent) const override {
    const auto n = static_cast<int64_t>(problem.buffers.size());
    PlanOptions capped = options;
    capped.deadline = Budget(options).deadline();
    capped.work_limit =
        std::max<int64_t>(1, std::min(WorkLimit(options), max_work_));
    if (nodes_per_buffer_ > 0) {
      capped.work_limit =
          std::min(capped.work_limit,
                   std::max<int64_t>(1, nodes_per_buffer_ * n *
                                            internal::exact::NodeWork(n)));
    }
    if (options.patience > 0 && Enough(problem, incumbent, enough_)) {
      int64_t cap = options.patience / 4;
      if (Enough(problem, incumbent, kDescentWithin)) {
        cap = std::max(cap,
                       (n + n / kDescentSlack) * internal::exact::NodeWork(n));
      }
      capped.work_limit =
          std::min(capped.work_limit, std::max<int64_t>(1, cap));
    }
    return search_->Search(problem, capped, incumbent);
  }

  // Once the three passes by size have run, before the other greedy
  // passes: a plan at the bound leaves them nothing, and where the try
  // fails they run as before (its plan does not depend on the start; its
  // work is a quarter of the patience once a plan is Enough(), else its
  // whole cap). The passes by size come first because they reach the bound
  // themselves where a greedy pass does, for a fraction of the try's cost
  // (first fit on the test's mobilenet_v2 step: 3 ms, the try 14 ms). The
  // training steps of convnext_tiny, resnet18 and torch 2's mobilenet_v2
  // at batch 8 are within 0.2 % after them, and the try reaches the bound;
  // swin_t's steps are at 1.0115x, where the try reaches the bound too and
  // the five other passes cost 18 ms of the whole run's 100 (the steps'
  // peaks and the bundled graphs' plans are the same; resnet18_train's
  // plan at the bound is the try's instead of a later pass's).
  bool RunsEarly(const Problem&, const Plan&, int heuristics) const override {
    return heuristics >= kPassesBySize;
  }

 private:
  std::unique_ptr<SearchPlanner> search_;
  int64_t max_work_;
  int64_t nodes_per_buffer_;
  double enough_;
};

// exact's search below the best plan, with at least `nodes_per_buffer`
// nodes per buffer of patience (when it has any): its first gain below a
// good start can come late (MiniMalloc's J: none in 256 nodes per buffer,
// then 1.1749x to 1.0424x). With patience, `max_nodes_per_buffer` nodes per
// buffer at most (0: no cap): MiniMalloc's D has its last gain at about
// 1400 (1.0218x); J spent the rest of the default budget, 7300 per buffer,
// on its last 0.1 % (1031168 bytes at about 1200 nodes per buffer, 1030144
// at 3300), which HeightSweep takes further at a fraction of the cost.
class PatientExact : public SearchPlanner {
 public:
  PatientExact(int64_t nodes_per_buffer, int64_t max_nodes_per_buffer)
      : search_(MakeExactPlanner({.lower_bound_probed = true})),
        nodes_per_buffer_(nodes_per_buffer),
        max_nodes_per_buffer_(max_nodes_per_buffer) {}

  std::string_view name() const override { return search_->name(); }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& incumbent) const override {
    if (options.patience <= 0) {
      return search_->Search(problem, options, incumbent);
    }
    const auto n = static_cast<int64_t>(problem.buffers.size());
    const int64_t node_work = internal::exact::NodeWork(n);
    PlanOptions patient = options;
    patient.deadline = Budget(options).deadline();
    patient.patience =
        std::max(options.patience, nodes_per_buffer_ * n * node_work);
    const int64_t cap = max_nodes_per_buffer_ * n * node_work;
    const bool capped = max_nodes_per_buffer_ > 0 && cap < WorkLimit(options);
    if (capped) patient.work_limit = std::max<int64_t>(1, cap);
    absl::StatusOr<Plan> plan = search_->Search(problem, patient, incumbent);
    // The cap, not the caller's limit, ended it.
    if (capped && plan.ok()) plan->counters.erase("cut_by_work_limit");
    return plan;
  }

 private:
  std::unique_ptr<SearchPlanner> search_;
  int64_t nodes_per_buffer_;
  int64_t max_nodes_per_buffer_;
};

// `search`, skipped (its plan is the start's) once the start is Enough().
class UnlessEnough : public SearchPlanner {
 public:
  UnlessEnough(std::unique_ptr<SearchPlanner> search, double enough)
      : search_(std::move(search)), enough_(enough) {}

  std::string_view name() const override { return search_->name(); }
  bool ForDense() const override { return search_->ForDense(); }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& incumbent) const override {
    if (Enough(problem, incumbent, enough_)) return incumbent.Get();
    return search_->Search(problem, options, incumbent);
  }

 private:
  std::unique_ptr<SearchPlanner> search_;
  double enough_;
};

// Heights below the start's peak, each probed by exact under that height
// as a capacity with `nodes_per_buffer` nodes per buffer; the next height
// is a `steps`-th of the gap to the lower bound below the last one (or
// below the plan found there), until `failures` probes in a row have found
// no smaller plan or the options' patience is spent (as a search's,
// Budget::OutOfPatience()). A probe of one height takes the forced raises
// without nodes and, with slack, often succeeds at once under one of its
// random orders (MiniMalloc's J: 1020928 bytes after 44 probes, 2.1x10^7
// work units, where the minimising search took 1.8x10^8 to reach 1030144).
// Single pool without a capacity; else the start. The counter
// "sweep_probes" says how many probes it made.
class HeightSweep : public SearchPlanner {
 public:
  HeightSweep(int64_t nodes_per_buffer, int failures, int steps)
      : search_(MakeExactPlanner({})),
        nodes_per_buffer_(nodes_per_buffer),
        failures_(failures),
        steps_(steps) {}

  std::string_view name() const override { return search_->name(); }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& incumbent) const override {
    const absl::StatusOr<Plan>& start = incumbent.Get();
    if (!start.ok() || problem.pools.size() != 1 ||
        problem.pools[0].capacity != 0) {
      return start;
    }
    const auto n = static_cast<int64_t>(problem.buffers.size());
    const int64_t node_work = internal::exact::NodeWork(n);
    Budget budget(options);
    Plan best = *start;
    Problem capped = problem;
    Bytes height = best.peak;
    int64_t probes = 0;
    int64_t gained_at = 0;  // work done at the last smaller plan
    for (int failed = 0; failed < failures_;) {
      if (budget.WorkSpent() || budget.OutOfPatience() ||
          budget.OutOfTimeNow()) {
        break;
      }
      height = std::min(height, best.peak) -
               std::max<Bytes>(1, (best.peak - best.lower_bound) / steps_);
      if (height < best.lower_bound) break;
      capped.pools[0].capacity = height;
      // A probe gets its nodes, within the work and the patience left.
      int64_t work = std::min(budget.work_limit() - budget.work_done(),
                              nodes_per_buffer_ * n * node_work);
      if (options.patience > 0) {
        work = std::min(work, std::max(options.patience,
                                       Budget::kPatienceGrowth * gained_at) -
                                  (budget.work_done() - gained_at));
      }
      PlanOptions probe = options;
      probe.deadline = budget.deadline();
      probe.work_limit = std::max<int64_t>(1, work);
      probe.progress = nullptr;
      Incumbent none;
      absl::StatusOr<Plan> plan = search_->Search(capped, probe, none);
      ++probes;
      // The probe's search counted its work for the Solve already.
      budget.Carry(plan.ok() ? std::min(probe.work_limit,
                                        plan->counters["nodes"] * node_work)
                             : probe.work_limit);
      if (plan.ok()) {
        ComputePlanStatistics(problem, *plan);
        if (plan->peak < best.peak) {
          best = *std::move(plan);
          gained_at = budget.work_done();
          budget.Improved(best.peak, name());
          failed = 0;
          continue;
        }
      }
      ++failed;
    }
    best.counters["sweep_probes"] = probes;
    return best;
  }

 private:
  std::unique_ptr<SearchPlanner> search_;
  int64_t nodes_per_buffer_;
  int failures_;
  int steps_;
};

// `first`, then `second` from the same start (not from `first`'s plan)
// with the work `first` left; the smaller plan. The two descend by
// different paths: the minimising search from a plan HeightSweep found
// stops where from the start it would have gone on (MiniMalloc's D:
// 1031168 bytes instead of 1007616), and the sweep from the minimising
// search's plan finds nothing smaller (J).
class FromOneStart : public SearchPlanner {
 public:
  FromOneStart(std::unique_ptr<SearchPlanner> first,
               std::unique_ptr<SearchPlanner> second)
      : first_(std::move(first)), second_(std::move(second)) {}

  std::string_view name() const override { return first_->name(); }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& incumbent) const override {
    Budget budget(options);
    PlanOptions rest = options;
    rest.deadline = budget.deadline();
    absl::StatusOr<Plan> a = first_->Search(problem, rest, incumbent);
    if (a.ok()) {  // counted for the Solve by the search already
      budget.Carry(a->counters["nodes"] *
                   internal::exact::NodeWork(
                       static_cast<int64_t>(problem.buffers.size())));
    }
    if (budget.WorkSpent() || budget.OutOfTimeNow()) return a;
    rest.work_limit = budget.work_limit() - budget.work_done();
    absl::StatusOr<Plan> b = second_->Search(problem, rest, incumbent);
    if (!a.ok()) return b;
    return b.ok() && b->peak < a->peak ? b : a;
  }

 private:
  std::unique_ptr<SearchPlanner> first_;
  std::unique_ptr<SearchPlanner> second_;
};

// exact's `search`, skipped (its plan is the start's) when the work limit
// buys fewer of its nodes than there are buffers: too few for one descent
// through every buffer, and what it would spend goes to the searches after
// it. (10^5 short intervals under the default limit: 16,000 nodes of
// 25,032 units each gave no gain in 3.5x10^8 units, where hill_climb after
// it took the plan from 1.0290x to 1.0162x the lower bound. Every bundled
// input affords thousands of nodes per buffer.)
class IfADescentFits : public SearchPlanner {
 public:
  explicit IfADescentFits(std::unique_ptr<SearchPlanner> search)
      : search_(std::move(search)) {}

  std::string_view name() const override { return search_->name(); }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& incumbent) const override {
    const auto n = static_cast<int64_t>(problem.buffers.size());
    if (WorkLimit(options) / internal::exact::NodeWork(n) < n)
      return incumbent.Get();
    return search_->Search(problem, options, incumbent);
  }

 private:
  std::unique_ptr<SearchPlanner> search_;
};

// `search`, skipped (its plan is the start's) once exact's search has
// found the best plan so far: hill_climb climbs from its own greedy start,
// not from that plan, and where exact's search has gone below the greedy
// plans the climb spends its patience above it (MiniMalloc's J: 1 s of
// CPU from 1.26x to 1.17x the lower bound, with exact's plan at 1.03x;
// D: no gain either).
class UnlessExactGained : public SearchPlanner {
 public:
  explicit UnlessExactGained(std::unique_ptr<SearchPlanner> search)
      : search_(std::move(search)) {}

  std::string_view name() const override { return search_->name(); }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& incumbent) const override {
    const absl::StatusOr<Plan>& start = incumbent.Get();
    if (start.ok() && start->planner == "exact") return start;
    return search_->Search(problem, options, incumbent);
  }

 private:
  std::unique_ptr<SearchPlanner> search_;
};

// PatientExact's floor (J needs more than 256) and cap.
constexpr int64_t kExactPatienceNodesPerBuffer = 512;
constexpr int64_t kExactMaxNodesPerBuffer = 1536;
// HeightSweep's nodes per buffer of a probe, failures in a row before it
// stops, and steps of the gap.
constexpr int64_t kSweepNodesPerBuffer = 16;
constexpr int kSweepFailures = 16;
constexpr int kSweepSteps = 32;

// memonger's shared objects by their dynamic program (`dp`) where its plan
// can be the smallest: several pools, or a bounded one, where it can fit
// what no placement pass fits; by its greedy (`greedy`, which the dynamic
// program is never worse than) in one unbounded pool. There a shared
// object is as large as its largest member: on every bundled input and
// training step the dynamic program's plan was never below the placement
// passes' (equal on alexnet and vgg16, 3 % to 4.9x above elsewhere), and
// it cost up to a third of the default's time (mobilenet_v2_train: 25 ms
// of 73), the greedy well under a millisecond.
class SharedObjects : public Planner {
 public:
  SharedObjects(std::unique_ptr<Planner> dp, std::unique_ptr<Planner> greedy)
      : dp_(std::move(dp)), greedy_(std::move(greedy)) {}

  std::string_view name() const override { return dp_->name(); }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    const bool one_unbounded =
        problem.pools.size() == 1 && problem.pools[0].capacity == 0;
    return (one_unbounded ? greedy_ : dp_)->Solve(problem, options);
  }

 private:
  std::unique_ptr<Planner> dp_;
  std::unique_ptr<Planner> greedy_;
};

// `planner` with half the work limit of its options. Where best's members
// share its limit, memonger's dynamic program, which spends what it is
// given, gets half of what the passes before it left, and the searches
// after it the rest: with all of it, two-pool problems under 1.2x10^7
// units left hill_climb nothing (best's plan up to 4 % above hill_climb's
// alone), and cpsat's start under 4x10^7 units no try at the lower bound
// (MiniMalloc's A at 1.26x, not at the bound).
class HalfTheWork : public Planner {
 public:
  explicit HalfTheWork(std::unique_ptr<Planner> planner)
      : planner_(std::move(planner)) {}

  std::string_view name() const override { return planner_->name(); }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    PlanOptions half = options;
    half.work_limit = std::max<int64_t>(1, WorkLimit(options) / 2);
    return planner_->Solve(problem, half);
  }

 private:
  std::unique_ptr<Planner> planner_;
};

// best's passes: the greedy placements, then memonger's shared objects
// (caffe2_dp, never worse than caffe2_greedy): on problems of several pools
// their plan can be smaller, or fit where no placement pass does. Last, so
// that it wins only when strictly smaller.
std::vector<std::unique_ptr<Planner>> BestPasses(
    const std::vector<GreedyOptions>& options, bool caffe2_dp_anywhere,
    MemberWork member_work) {
  std::vector<std::unique_ptr<Planner>> out;
  for (const GreedyOptions& o : options) out.push_back(MakeGreedyPlanner(o));
  std::unique_ptr<Planner> shared_objects = MakeCaffe2DpPlanner({});
  if (member_work == MemberWork::kShared) {
    shared_objects = std::make_unique<HalfTheWork>(std::move(shared_objects));
  }
  if (!caffe2_dp_anywhere) {
    shared_objects = std::make_unique<SharedObjects>(
        std::move(shared_objects), MakeCaffe2GreedyPlanner({}));
  }
  out.push_back(std::move(shared_objects));
  return out;
}

// `try_nodes_per_buffer`: the quick try's cap per buffer; `enough`: the
// ratio to the lower bound within which the later searches are skipped
// (both 0: none; exact's start, whose plans stay as they were);
// `caffe2_dp_anywhere`: caffe2_dp on every problem (exact's start),
// else only where its plan can be the smallest (SharedObjects);
// `peak_window`: on dense problems, peak_window after the greedy passes
// (not in exact's start, whose plans stay as they were);
// `member_work`: how the members share the work limit.
std::unique_ptr<Planner> Best(int64_t lower_bound_try_work,
                              int64_t try_nodes_per_buffer, double enough,
                              bool caffe2_dp_anywhere, bool peak_window,
                              MemberWork member_work) {
  // The greedy placements. Dense problems, which afford few passes, run
  // the first few of the same with size classes first: there they are as
  // tight or tighter and placed faster (10^6 dense training-like buffers:
  // at the lower bound in 3.8 s, by size in 23 s; the trace S_1: 1.0005x,
  // by size 1.0158x).
  const std::vector<GreedyOptions> greedy = {
      {.order = PlacementOrder::kSize, .fit = Fit::kBest},
      {.order = PlacementOrder::kSizeClass, .fit = Fit::kBest},
      {.order = PlacementOrder::kSize, .fit = Fit::kFirst},
      {.order = PlacementOrder::kSizeThenId, .fit = Fit::kFirst},
      {.order = PlacementOrder::kArea, .fit = Fit::kBest},
      {.order = PlacementOrder::kArea, .fit = Fit::kFirst},
      {.order = PlacementOrder::kLifetime, .fit = Fit::kBest},
      {.order = PlacementOrder::kLifetime, .fit = Fit::kFirst}};
  std::vector<GreedyOptions> dense_order = greedy;
  std::swap(dense_order[0], dense_order[1]);
  auto planners = [caffe2_dp_anywhere,
                   member_work](const std::vector<GreedyOptions>& options) {
    return BestPasses(options, caffe2_dp_anywhere, member_work);
  };
  std::vector<std::unique_ptr<SearchPlanner>> searches;
  // A quick try for a plan at the lower bound, with exact's search. Real
  // traces and most of MiniMalloc's instances have such a plan; where the
  // try fails, the searches below run as without it.
  searches.push_back(std::make_unique<LowerBoundTry>(
      lower_bound_try_work, try_nodes_per_buffer, enough));
  // Below the best plan so far: exact's search with as many nodes as its
  // patience and cap give it (what fits MiniMalloc's challenging instances
  // at their lower bound; the quick try has just probed the bound,
  // ExactOptions::lower_bound_probed), then HeightSweep from the same
  // start.
  // Where the members share the limit, both only where the work left buys
  // a descent (IfADescentFits); with the whole limit each (exact's start),
  // as they were.
  std::unique_ptr<SearchPlanner> below = std::make_unique<FromOneStart>(
      std::make_unique<PatientExact>(kExactPatienceNodesPerBuffer,
                                     kExactMaxNodesPerBuffer),
      std::make_unique<HeightSweep>(kSweepNodesPerBuffer, kSweepFailures,
                                    kSweepSteps));
  if (member_work == MemberWork::kShared)
    below = std::make_unique<IfADescentFits>(std::move(below));
  searches.push_back(std::make_unique<UnlessEnough>(std::move(below), enough));
  // Then hill_climb, while it still gains, unless exact gave the best
  // plan so far (UnlessExactGained). (Before exact's search it spent
  // MiniMalloc's J 0.7 s after its last gain, at 1.17x the bound, where
  // exact's search descends to 1.06x in 0.1 s; no bundled plan changed
  // with the order.)
  searches.push_back(std::make_unique<UnlessEnough>(
      std::make_unique<UnlessExactGained>(MakeHillClimbPlanner({})), enough));
  // Dense problems run none of the above (ChooseBest): there, above
  // `enough`, the steps around the peak planned by exact's search and the
  // rest placed around them (pangu_2.6B: 1.0334x by size classes, at the
  // lower bound with peak_window).
  if (peak_window) {
    searches.push_back(
        std::make_unique<UnlessEnough>(MakePeakWindowPlanner({}), enough));
  }
  // The buffers packed by size class (or the naive plan, when smaller)
  // when no member gives a plan: under a deadline too short for a
  // placement pass's set-up (10^6 buffers in half a second).
  return ChooseBest("best", planners(greedy), std::move(searches),
                    planners(dense_order), internal::MakePackedPlanner(),
                    member_work);
}

// The default's patience (PlanOptions::patience, best's option patience):
// 2^22 work units, about a tenth of a second.
constexpr int64_t kBestPatience = int64_t{1} << 22;
// The default's `enough`: within 0.2 % of the lower bound, hill_climb and
// exact's search below the best plan could gain no more than 0.2 %, and
// they are not run (densenet121's training step: the greedy placements
// reach 1.0008x in 0.1 s, the whole budget 1.0005x in 9 s).
constexpr double kBestEnough = 1.002;

std::vector<PlannerOption> BestOptionList() {
  return {IntOption("lower_bound_try_work", kLowerBoundTryWork,
                    "work units of the short exact search for a plan at the "
                    "lower bound (within the work limit)",
                    1),
          DoubleOption("enough", kBestEnough,
                       "hill_climb and exact's search run only while the best "
                       "plan is above this ratio to the lower bound (one "
                       "pool; 0: always)",
                       0),
          IntOption("patience", kBestPatience,
                    "work units its searches spend without a smaller plan "
                    "(and at least as many as before their last one) before "
                    "they stop; 0: the whole work limit",
                    0)};
}

// The heuristic start's share of the budget of exact, the defaults of its
// options start_share and start_work: its search needs most of it. The
// start's work is also capped at what the default budget gives it (the
// start is best, which stops early where it proves its plan), so that a
// longer time limit goes to exact's own search: proving MiniMalloc's C
// takes as long at 60 s as at 10 s. (cp, an optional component, composes
// itself in planners/cp/cp_register.cc.)
constexpr double kExactStartShare = 0.1;
constexpr int64_t kExactStartWork = kDefaultWorkLimit / 10;

std::vector<PlannerOption> ExactOptionList() {
  const ExactOptions d;
  return {
      IntOption("first_node_limit", d.first_node_limit,
                "nodes of one search in the first round", 1),
      IntOption("node_limit_growth", d.node_limit_growth,
                "factor of a search's nodes from one round to the next", 2),
      IntOption("restarts_per_round", d.restarts_per_round,
                "random orders tried after the static ones each round", 0),
      BoolOption("restarts", true,
                 "random orders after the static ones (false: none)"),
      BoolOption("lower_bound_only", d.lower_bound_only,
                 "look only for a plan at the lower bound (max-live)"),
      BoolOption("section_inference", d.section_inference,
                 "prune by the sizes still to place in each section"),
      BoolOption("incremental_inference", d.incremental_inference,
                 "section inference checks only what changed (false: "
                 "everything at every node; the same nodes, slower)"),
      BoolOption("symmetry", d.symmetry,
                 "try one of interchangeable buffers at a cell"),
      BoolOption("decomposition", d.decomposition,
                 "solve independent parts of the time apart"),
      BoolOption("failure_cache", d.failure_cache,
                 "cut states whose whole subtree failed before"),
      IntOption("failure_cache_entries", d.failure_cache_entries,
                "states the failure cache keeps per part", 0),
      BoolOption("warm_start", true,
                 "start from best's plan (false: the search alone, which "
                 "fails where it finds no plan)"),
      DoubleOption("start_share", kExactStartShare,
                   "the warm start's share of the work limit", 0, 1),
      IntOption("start_work", kExactStartWork,
                "the warm start's work units at most (0: its share alone)", 0),
  };
}

std::unique_ptr<Planner> Exact(const OptionValues& values) {
  ExactOptions options;
  options.first_node_limit = values.Int("first_node_limit");
  options.node_limit_growth = values.Int("node_limit_growth");
  options.restarts_per_round =
      values.Bool("restarts")
          ? static_cast<int>(std::min<int64_t>(values.Int("restarts_per_round"),
                                               std::numeric_limits<int>::max()))
          : 0;
  options.lower_bound_only = values.Bool("lower_bound_only");
  options.section_inference = values.Bool("section_inference");
  options.incremental_inference = values.Bool("incremental_inference");
  options.symmetry = values.Bool("symmetry");
  options.decomposition = values.Bool("decomposition");
  options.failure_cache = values.Bool("failure_cache");
  options.failure_cache_entries = values.Int("failure_cache_entries");
  options.across_pools = true;
  std::unique_ptr<SearchPlanner> search = MakeExactPlanner(options);
  if (!values.Bool("warm_start")) return search;
  return WarmStarted(std::move(search),
                     internal::MakeHeuristicStart(MemberWork::kWhole),
                     values.Double("start_share"), values.Int("start_work"));
}

std::vector<PlannerOption> HillClimbOptionList() {
  const HillClimbOptions d;
  return {IntOption("max_rounds", d.max_rounds,
                    "rounds of perturbation at most", 0),
          IntOption("max_rounds_without_gain", d.max_rounds_without_gain,
                    "rounds without a smaller peak before it stops", 0)};
}

std::unique_ptr<Planner> HillClimb(const OptionValues& values) {
  HillClimbOptions options;
  options.max_rounds = values.Int("max_rounds");
  options.max_rounds_without_gain = values.Int("max_rounds_without_gain");
  return MakeHillClimbPlanner(options);
}

std::vector<PlannerOption> Caffe2DpOptionList() {
  return {IntOption(
      "dp_max_work", Caffe2Options{}.dp_max_work,
      absl::StrCat("work units of the dynamic program (within "
                   "the work limit; a node costs ",
                   kCaffe2DpNodeWork, ") before the greedy places the rest"),
      0)};
}

std::unique_ptr<Planner> Caffe2Dp(const OptionValues& values) {
  Caffe2Options options;
  options.dp_max_work = values.Int("dp_max_work");
  return MakeCaffe2DpPlanner(options);
}

// The limits of `options` as a user set them: "work limit N work units"
// and, with one, "time limit T".
std::string LimitText(const PlanOptions& options) {
  std::string text =
      absl::StrCat("work limit ", WorkLimit(options), " work units");
  if (options.time_limit != absl::InfiniteDuration()) {
    absl::StrAppend(&text, ", time limit ",
                    absl::FormatDuration(options.time_limit));
  }
  return text;
}

// A planner's failure under capacities told as what it means:
//   * bounded pools whose capacities add up to less than the lower bound
//     (the most bytes alive at one step) hold no plan: said first, with
//     the smallest capacity that could work, then the planner's failure;
//   * a search, or a pass cut by its budget, that stopped without a plan
//     that fits says that no plan was found within the limit, naming it:
//     the capacity may still hold one.
class CapacityExplained : public Planner {
 public:
  CapacityExplained(std::unique_ptr<Planner> planner, PlannerKind kind)
      : planner_(std::move(planner)), kind_(kind) {}

  std::string_view name() const override { return planner_->name(); }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    absl::StatusOr<Plan> plan = planner_->Solve(problem, options);
    if (plan.ok()) return plan;
    if (absl::Status below = BelowLowerBound(problem, plan.status());
        !below.ok()) {
      return below;
    }
    if (!absl::IsResourceExhausted(plan.status())) return plan;
    const std::string message(plan.status().message());
    const bool cut = absl::StrContains(message, "(after ");
    if (!cut && (kind_ == PlannerKind::kHeuristic ||
                 !absl::StrContains(message, "fits in no allowed pool"))) {
      return plan;
    }
    return absl::ResourceExhaustedError(absl::StrCat(
        "no plan found within the limit (", LimitText(options),
        "): ", std::string(planner_->name()),
        " stopped before it found a plan that fits, which a longer limit "
        "or --planner=exact may find (its last failure: ",
        message, ")"));
  }

 private:
  // ResourceExhausted when every pool is bounded and their capacities add
  // up to less than the lower bound, with `failure`; else OK.
  static absl::Status BelowLowerBound(const Problem& problem,
                                      const absl::Status& failure) {
    const std::optional<Bytes> total = internal::TotalCapacity(problem);
    if (!total.has_value()) return absl::OkStatus();
    const Bytes capacity = *total;
    const Bytes lower_bound = LowerBound(problem);
    if (lower_bound <= capacity) return absl::OkStatus();
    return absl::ResourceExhaustedError(absl::StrCat(
        problem.pools.size() == 1
            ? absl::StrCat("the capacity of pool \"", problem.pools[0].name,
                           "\", ", capacity, " bytes, is")
            : absl::StrCat("the pools' capacities, ", capacity,
                           " bytes together, are"),
        " below the lower bound, ", lower_bound,
        " bytes alive at one step: no plan fits; the smallest capacity that "
        "could work is the lower bound, ",
        lower_bound, " bytes (", failure.message(), ")"));
  }

  std::unique_ptr<Planner> planner_;
  PlannerKind kind_;
};

struct Entry {
  PlannerInfo info;
  PlannerFactory make;
};

// Keep the order: cheapest first; the comparison tables follow it.
const std::vector<Entry>& Entries() {
  using enum PlannerKind;
  using enum PlannerCost;
  static const std::vector<Entry>* entries = new std::vector<Entry>{
      {{"naive",
        "every buffer its own bytes, one after another (no reuse)",
        kHeuristic,
        kLight,
        {}},
       [](const OptionValues&) { return internal::MakeNaivePlanner(); }},
      {{"greedy_by_size",
        "largest first, each in the smallest gap that fits (Pisarchyk & Lee "
        "2020)",
        kHeuristic,
        kLight,
        {}},
       [](const OptionValues&) { return MakeGreedyPlanner({}); }},
      {{"first_fit",
        "largest first, each at the lowest offset that fits",
        kHeuristic,
        kLight,
        {}},
       [](const OptionValues&) { return internal::MakeFirstFitPlanner(); }},
      {{"position_greedy",
        "largest first (ties in buffer order), jumping past overlapping "
        "buffers",
        kHeuristic,
        kLight,
        {}},
       [](const OptionValues&) {
         return internal::MakePositionGreedyPlanner();
       }},
      {{"caffe2_greedy",
        "memonger's greedy: shared objects by last use, closest size first",
        kHeuristic,
        kLight,
        {}},
       [](const OptionValues&) { return MakeCaffe2GreedyPlanner({}); }},
      {{"caffe2_dp",
        "memonger's dynamic program over shared objects, budgeted; never "
        "worse than caffe2_greedy",
        kSearch, kBudgeted, Caffe2DpOptionList()},
       &Caffe2Dp},
      {{"hill_climb",
        "seeded search over placement orders around the peak, from the best "
        "greedy",
        kSearch, kBudgeted, HillClimbOptionList()},
       &HillClimb},
      {{"best",
        "the smallest plan of the greedy placements (size, size class, area "
        "and lifetime orders, best and first fit; position_greedy) and "
        "caffe2_dp (caffe2_greedy in one unbounded pool), a short exact "
        "search at the lower bound, exact's search below the best plan and "
        "a sweep of heights under it from the same start, then hill_climb "
        "unless exact gave the plan, each search only while it still finds "
        "smaller plans (patience) and the plan is above 1.002x the lower "
        "bound (enough); on dense problems, fewer greedy placements and, of "
        "the searches, the steps around the peak planned by exact's search "
        "with the rest placed around them; naive when none gives a plan",
        kSearch, kBudgeted, BestOptionList()},
       [](const OptionValues& values) {
         return WithPatience(
             Best(values.Int("lower_bound_try_work"),
                  kLowerBoundTryNodesPerBuffer, values.Double("enough"),
                  /*caffe2_dp_anywhere=*/false, /*peak_window=*/true,
                  MemberWork::kShared),
             values.Int("patience"));
       }},
      {{"exact",
        "branch-and-bound over canonical placements from best's plan; proves "
        "feasibility under a capacity or the minimum peak",
        kExact, kModel, ExactOptionList()},
       &Exact},
  };
  return *entries;
}

// Planners of components and programs, after the core's, in registration
// order, behind a mutex (a program may register from any thread).
struct AddedEntry {
  std::string name;
  std::string description;
  Entry entry;  // its info's strings view the two above
};
struct AddedPlanners {
  std::mutex mutex;
  std::deque<AddedEntry> entries;  // a deque keeps the strings where they are
};
AddedPlanners& Added() {  // never destroyed: safe in static destructors
  static AddedPlanners* added = new AddedPlanners;
  return *added;
}

// Every entry, the core's then the components', in the registry's order.
// Entries are never removed, so the pointers stay valid.
std::vector<const Entry*> AllEntries() {
  std::vector<const Entry*> all;
  for (const Entry& e : Entries()) all.push_back(&e);
  AddedPlanners& added = Added();
  std::lock_guard<std::mutex> lock(added.mutex);
  for (const AddedEntry& a : added.entries) all.push_back(&a.entry);
  return all;
}

std::string ValidNames() {
  std::string valid;
  for (const Entry* e : AllEntries()) {
    absl::StrAppend(&valid, valid.empty() ? "" : ", ",
                    std::string(e->info.name));
  }
  return valid;
}

const Entry* Find(std::string_view name) {
  for (const Entry* e : AllEntries()) {
    if (e->info.name == name) return e;
  }
  return nullptr;
}

absl::Status UnknownPlanner(std::string_view name) {
  std::vector<std::string> names;
  for (const Entry* e : AllEntries()) names.emplace_back(e->info.name);
  return absl::NotFoundError(absl::StrCat(
      "unknown planner \"", std::string(name), "\"", DidYouMean(name, names),
      "; valid planners: ", ValidNames()));
}

}  // namespace

namespace internal {

// Where the members share the start's limit, the quick try at the lower
// bound is capped per buffer as best's is: spending what it is given where
// no plan is at the bound, it left exact's search nothing (cpsat's start on
// MiniMalloc's D under its capacity at 4x10^7 units: no plan that fits).
std::unique_ptr<Planner> MakeHeuristicStart(MemberWork member_work) {
  const int64_t try_nodes_per_buffer =
      member_work == MemberWork::kShared ? kLowerBoundTryNodesPerBuffer : 0;
  return WithFallback(
      Best(kLowerBoundTryWork, try_nodes_per_buffer, 0,
           /*caffe2_dp_anywhere=*/true, /*peak_window=*/false, member_work),
      WithFallback(MakeGreedyPlanner({}), internal::MakeNaivePlanner()));
}

}  // namespace internal

absl::Status RegisterPlanner(const PlannerInfo& info, PlannerFactory make) {
  if (info.name.empty() || make == nullptr) {
    return absl::InvalidArgumentError(
        "RegisterPlanner needs a name and a factory");
  }
  MEMPLAN_RETURN_IF_ERROR(internal::CheckDeclarations(info.name, info.options));
  AddedPlanners& added = Added();
  std::lock_guard<std::mutex> lock(added.mutex);
  bool taken = false;
  for (const Entry& e : Entries()) taken = taken || e.info.name == info.name;
  for (const AddedEntry& a : added.entries)
    taken = taken || a.name == info.name;
  if (taken) {
    return absl::AlreadyExistsError(absl::StrCat("a planner named \"",
                                                 std::string(info.name),
                                                 "\" is already registered"));
  }
  AddedEntry& a = added.entries.emplace_back();
  a.name = std::string(info.name);
  a.description = std::string(info.description);
  a.entry = {{a.name, a.description, info.kind, info.cost, info.options}, make};
  return absl::OkStatus();
}

std::vector<PlannerInfo> RegisteredPlanners() {
  std::vector<PlannerInfo> infos;
  for (const Entry* e : AllEntries()) infos.push_back(e->info);
  return infos;
}

absl::StatusOr<std::unique_ptr<Planner>> CreatePlanner(
    std::string_view name, const PlannerOptions& options) {
  const Entry* entry = Find(name);
  if (entry == nullptr) return UnknownPlanner(name);
  MEMPLAN_ASSIGN_OR_RETURN(
      OptionValues values,
      internal::ParseOptions(name, entry->info.options, options));
  return std::make_unique<CapacityExplained>(entry->make(values),
                                             entry->info.kind);
}

std::string_view DefaultPlannerName() { return "best"; }

}  // namespace memplan

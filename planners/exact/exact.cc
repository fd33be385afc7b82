// exact: branch-and-bound over canonical placements (see exact.h). This file
// is the driver: the probes of heights, the node limits of their rounds, and
// the plan composed of the parts' results. The parts come from
// exact_decompose.h, their search from exact_search.h.

#include "exact.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "effort/set_up.h"
#include "exact_decompose.h"
#include "exact_part.h"
#include "exact_pools.h"
#include "exact_search.h"
#include "memplan/compose.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "model/problem_util.h"

namespace memplan {
namespace {

using internal::exact::Decompose;
using internal::exact::Decomposition;
using internal::exact::Item;
using internal::exact::kInf;
using internal::exact::kNumOrders;
using internal::exact::NodeWork;
using internal::exact::Outcome;
using internal::exact::Part;
using internal::exact::PartSearch;

// Minimising mode: probes between the bounds that may run out of nodes in
// one round of the node limit.
constexpr int kUnknownProbesPerRound = 2;

// A search of the first round gets at least this many nodes per item of its
// part. Minimising probes several heights a round: 2. A probe of one height
// (ProbeInRounds) affords 4, room to backtrack in the first round
// (MiniMalloc's J under its capacity: 27k nodes instead of 51k;
// somas_resnet50 at its lower bound: 23k nodes in the first round instead of
// 34k in two).
constexpr int64_t kMinimiseNodesPerItem = 2;
constexpr int64_t kOneHeightNodesPerItem = 4;

enum class ProbeResult { kFeasible, kInfeasible, kUnknown };

// ExactOptions::lower_bound_probed: the rounds whose node limits the
// caller's probe of the lower bound has covered (best's quick try: the
// first two rounds' limits, up to 128 nodes per buffer in all).
constexpr int kLowerBoundProbedRounds = 2;

// Parts of at least this many buffers take the forced raises without nodes
// in the minimising mode too (probes of one height always do; see
// exact.h). Its first descent of bert_base (5620 buffers) took 250521
// nodes, all the work a default budget gives it, and now takes 5620;
// MiniMalloc's instances (at most 455 buffers) search as before.
constexpr int64_t kCollapseRaisesFromItems = 1000;

// Minimising, past ExactOptions::creep_work: the work units of each
// probe of SweepBelow's sweep of the heights below the best plan.
constexpr int64_t kSweepWork = int64_t{1} << 21;

// The search's set-up (Decompose) takes about 1-2 us per buffer on a
// typical core, on dense and sparse problems alike; under a deadline nearer
// than this per buffer, the search is not begun.
constexpr absl::Duration kSetUpPerBuffer = absl::Microseconds(3);

class ExactPlanner : public SearchPlanner {
 public:
  explicit ExactPlanner(const ExactOptions& options) : options_(options) {}

  std::string_view name() const override { return "exact"; }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& plan_options,
                              Incumbent& incumbent) const override {
    if (problem.pools.size() != 1) {
      if (options_.across_pools && !options_.lower_bound_only) {
        return internal::exact::SolveAcrossPools(problem, plan_options,
                                                 options_, incumbent);
      }
      return absl::UnimplementedError(
          absl::StrCat("the exact planner handles a single pool",
                       options_.lower_bound_only ? " at the lower bound" : "",
                       "; the problem has ", problem.pools.size(), " pools"));
    }
    Run run{.problem = problem,
            .options = options_,
            .budget = Budget(plan_options),
            // The work limit in nodes: one budget, one unit.
            .node_limit = std::max<int64_t>(
                1, WorkLimit(plan_options) /
                       NodeWork(static_cast<int64_t>(problem.buffers.size()))),
            .d = {}};
    const Bytes capacity = problem.pools[0].capacity;
    if (absl::Status s = internal::TimeForSetUp(run.budget, problem,
                                                kSetUpPerBuffer, "the search");
        !s.ok()) {
      return Unsearched(problem, capacity, s, incumbent);
    }
    run.d = Decompose(problem, options_.decomposition);
    run.seed = plan_options.seed;
    run.rng.seed(run.seed);
    absl::StatusOr<Plan> result =
        capacity > 0                ? SolveUnder(run, capacity, incumbent)
        : options_.lower_bound_only ? AtLowerBound(run)
                                    : Minimise(run, incumbent);
    if (result.ok()) {
      result->counters["nodes"] = run.nodes;
      result->counters["parts"] = static_cast<int64_t>(run.d.parts.size());
      result->counters["searches"] = run.searches;
      result->counters["restarts"] = run.restarts;
      // A minimum not proven when the limit ended the search.
      if (capacity == 0 && !options_.lower_bound_only &&
          !result->proven_optimal) {
        if (run.nodes >= run.node_limit) {
          result->counters["cut_by_work_limit"] = 1;
        } else if (run.budget.OutOfTimeNow()) {
          result->counters["cut_by_time_limit"] = 1;
        }
      }
    }
    return result;
  }

 private:
  struct Run {
    const Problem& problem;
    const ExactOptions& options;
    Budget budget;
    int64_t node_limit;  // over the whole solve
    Decomposition d;
    int64_t nodes = 0;
    int searches = 0;
    int restarts = 0;
    std::mt19937_64 rng{0};
    uint64_t seed = 0;        // PlanOptions::seed
    bool minimising = false;  // then the options' patience applies

    bool OutOfBudget() const {
      return nodes >= node_limit || (minimising && budget.OutOfPatience()) ||
             budget.OutOfTimeNow();
    }
  };

  // Searches part `p` at `height`: every static order in turn (each without
  // and with "fill the run first") with `limit` nodes, the one that found
  // the part's last plan first, then `restarts` random orders with
  // `restart_limit` nodes each. A height just below a plan is most often
  // reached the way that plan was.
  static Outcome SolvePart(Run& run, Part& part, int64_t height, int64_t limit,
                           bool collapse_raises, int restarts = 0,
                           int64_t restart_limit = 0) {
    if (part.failed_height >= 0 && height > part.failed_height)
      part.failed.clear();
    part.failed_height = height;
    PartSearch search(part, run.options);
    collapse_raises |=
        static_cast<int64_t>(part.items.size()) >= kCollapseRaisesFromItems;
    bool exhausted_all = true;
    std::vector<int> random_rank;
    for (int k = 0; k < 2 * kNumOrders + restarts; ++k) {
      const bool random = k >= 2 * kNumOrders;
      const int o = random ? k : (k + part.last_static) % (2 * kNumOrders);
      int64_t budget = random ? restart_limit : limit;
      budget = std::min(budget, run.node_limit - run.nodes);
      if (budget <= 0 || run.OutOfBudget()) return Outcome::kLimit;
      if (random) {
        RandomRank(part, run.rng, random_rank);
        ++run.restarts;
      }
      const Outcome outcome =
          search.Run(height, random ? random_rank : part.ranks[o / 2],
                     o % 2 == 1, collapse_raises, budget, run.budget);
      run.nodes += search.nodes();
      ++run.searches;
      if (outcome == Outcome::kFound) {
        int64_t top = 0;
        for (size_t i = 0; i < part.items.size(); ++i) {
          top = std::max(top, search.offsets()[i] + part.items[i].size);
        }
        for (int64_t b : part.base) top = std::max(top, b);
        if (top < part.hi) {
          part.hi = top;
          part.offsets = search.offsets();
          if (!random) part.last_static = o;
        }
        return Outcome::kFound;
      }
      if (outcome == Outcome::kExhausted) {
        // A complete search fails under every order alike.
        if (part.complete) return Outcome::kExhausted;
      } else {
        exhausted_all = false;
      }
    }
    return exhausted_all ? Outcome::kExhausted : Outcome::kLimit;
  }

  // A random order between "largest first" and "largest area first": the
  // key is size * length^alpha (alpha drawn in [0, 1]) times a factor drawn
  // in [1, e^0.5), ties on the item. Tight parts that defeat every static
  // order (MiniMalloc's E: 131 buffers, 4 units of slack) are solved by one
  // of the first few dozen such orders within a thousand nodes each, while
  // a static order spends millions of nodes in one wrong early choice.
  static void RandomRank(const Part& part, std::mt19937_64& rng,
                         std::vector<int>& rank) {
    const int m = static_cast<int>(part.items.size());
    auto uniform = [&rng] {
      return static_cast<double>(rng() >> 11) * 0x1.0p-53;
    };
    const double alpha = uniform();
    std::vector<std::pair<double, int>> key(m);
    for (int i = 0; i < m; ++i) {
      const Item& item = part.items[i];
      key[i] = {-std::log(static_cast<double>(item.size)) -
                    alpha * std::log(static_cast<double>(item.s1 - item.s0)) -
                    0.5 * uniform(),
                i};
    }
    std::sort(key.begin(), key.end());
    rank.assign(m, 0);
    for (int k = 0; k < m; ++k) rank[key[k].second] = k;
  }

  // Is there a plan of height <= `height` (units)? Every part is tried, so
  // that one part's proof of infeasibility is found even when another part
  // runs out of nodes.
  // `one_height`: a probe of ProbeInRounds (a capacity, lower_bound_only),
  // whose searches take the forced raises without nodes.
  static ProbeResult Probe(Run& run, int64_t height, int64_t limit,
                           bool* limit_hit, bool one_height = false) {
    const int64_t first_nodes_per_item =
        one_height ? kOneHeightNodesPerItem : kMinimiseNodesPerItem;
    ProbeResult result = ProbeResult::kFeasible;
    for (Part& part : run.d.parts) {
      if (part.hi <= height) continue;
      if (part.lo > height) return ProbeResult::kInfeasible;
      if (part.exhausted_at >= height) {
        result = ProbeResult::kUnknown;
        continue;
      }
      // Random orders get as many nodes as the static ones, in searches
      // that grow only as the square root of the round's limit: many short
      // tries are what solves the parts no static order does.
      // A descent takes a node per item at least: the limits of a large
      // part are scaled so that its first round can reach a plan at all.
      const int64_t m = static_cast<int64_t>(part.items.size());
      const int64_t first0 = std::max<int64_t>(1, run.options.first_node_limit);
      const int64_t scale = std::max<int64_t>(
          1, (first_nodes_per_item * m + first0 - 1) / first0);
      const int64_t first = first0 * scale;
      const int64_t part_limit = limit * scale;
      const int64_t restart_limit = std::max(
          first,
          static_cast<int64_t>(std::sqrt(static_cast<double>(part_limit) *
                                         static_cast<double>(first))));
      const int restarts =
          run.options.restarts_per_round <= 0
              ? 0
              : static_cast<int>(std::max<int64_t>(
                    run.options.restarts_per_round,
                    2 * kNumOrders * part_limit / restart_limit));
      const Outcome outcome = SolvePart(run, part, height, part_limit,
                                        one_height, restarts, restart_limit);
      if (outcome == Outcome::kFound) continue;
      if (outcome == Outcome::kExhausted) {
        if (part.complete) {
          part.lo = height + 1;
          return ProbeResult::kInfeasible;
        }
        part.exhausted_at = height;
      } else {
        *limit_hit = true;
      }
      result = ProbeResult::kUnknown;
      if (run.OutOfBudget()) break;
    }
    return result;
  }

  static int64_t PartsHeight(const Run& run) {
    int64_t h = 0;
    for (const Part& part : run.d.parts) h = std::max(h, part.hi);
    return h;
  }

  static int64_t PartsLower(const Run& run) {
    int64_t h = 0;
    for (const Part& part : run.d.parts) h = std::max(h, part.lo);
    return h;
  }

  // The plan made of every part's best offsets (all parts have one).
  Plan Compose(const Run& run) const {
    const Problem& problem = run.problem;
    Plan plan;
    plan.planner = std::string(name());
    plan.assignments.resize(problem.buffers.size());
    for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size());
         ++b) {
      plan.assignments[b] = Assignment{.buffer = b, .pool = 0, .offset = 0};
    }
    for (BufferId b : run.d.fixed)
      plan.assignments[b].offset = problem.buffers[b].fixed->offset;
    for (const Part& part : run.d.parts) {
      for (size_t i = 0; i < part.items.size(); ++i) {
        plan.assignments[part.items[i].buffer].offset =
            part.offsets[i] * run.d.granule;
      }
    }
    ComputePlanStatistics(problem, plan);
    return plan;
  }

  // The incumbent as it is, when the deadline leaves no time for the
  // search's set-up.
  absl::StatusOr<Plan> Unsearched(const Problem& problem, Bytes capacity,
                                  const absl::Status& why,
                                  Incumbent& incumbent) const {
    const absl::StatusOr<Plan>& start = incumbent.Get();
    if (start.ok() && (capacity == 0 || start->peak <= capacity))
      return internal::StartAsPlanOf(problem, *start, name());
    return absl::DeadlineExceededError(
        absl::StrCat("the exact planner has no plan: ", why.message()));
  }

  Plan Finish(const Run& run, Plan plan, bool proven) const {
    ComputePlanStatistics(run.problem, plan);
    plan.planner = std::string(name());
    plan.proven_optimal = proven || AtTheBound(run.problem, plan);
    return plan;
  }

  // The error of a part whose max-live exceeds `capacity`.
  static absl::Status MaxLiveError(const Run& run, const Part& part,
                                   Bytes capacity) {
    int at = 0;
    for (size_t s = 0; s < part.load.size(); ++s) {
      if (part.base[s] + part.load[s] > part.base[at] + part.load[at])
        at = static_cast<int>(s);
    }
    BufferId largest = -1;
    for (const Item& item : part.items) {
      if (item.s0 <= at && at < item.s1 &&
          (largest < 0 || run.problem.buffers[item.buffer].size >
                              run.problem.buffers[largest].size)) {
        largest = item.buffer;
      }
    }
    std::string who =
        largest >= 0
            ? absl::StrCat("; the largest of them is ",
                           internal::DescribeBuffer(run.problem, largest))
            : "";
    return absl::ResourceExhaustedError(absl::StrCat(
        "no plan fits in capacity ", capacity, ": at step ", part.times[at],
        " ", (part.base[at] + part.load[at]) * run.d.granule, " bytes are live",
        who));
  }

  // Probes `height` in rounds of growing node limits until it is decided
  // or the budget is spent.
  ProbeResult ProbeInRounds(Run& run, int64_t height) const {
    int64_t limit = options_.first_node_limit;
    while (true) {
      bool limit_hit = false;
      const ProbeResult r =
          Probe(run, height, limit, &limit_hit, /*one_height=*/true);
      if (r != ProbeResult::kUnknown || run.OutOfBudget() || !limit_hit)
        return r;
      limit *= options_.node_limit_growth;
    }
  }

  // ExactOptions::lower_bound_only, after SolveUnder's checks of the
  // capacity.
  absl::StatusOr<Plan> AtLowerBound(Run& run) const {
    const int64_t height = PartsLower(run);
    const ProbeResult r = ProbeInRounds(run, height);
    if (r == ProbeResult::kFeasible) return Finish(run, Compose(run), false);
    const std::string what =
        absl::StrCat("the exact planner found no plan at the lower bound (",
                     height * run.d.granule, " bytes)");
    if (r == ProbeResult::kInfeasible)
      return absl::NotFoundError(absl::StrCat(what, ": it proved none exists"));
    if (run.budget.OutOfTimeNow()) {
      return absl::DeadlineExceededError(
          absl::StrCat(what, " before its deadline"));
    }
    return absl::NotFoundError(absl::StrCat(what, " within its node limit"));
  }

  absl::StatusOr<Plan> SolveUnder(Run& run, Bytes capacity,
                                  Incumbent& incumbent) const {
    const Problem& problem = run.problem;
    for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size());
         ++b) {
      const Buffer& buf = problem.buffers[b];
      const Offset at = buf.fixed.has_value() ? buf.fixed->offset : 0;
      if (at + buf.size > capacity) {
        const Bytes usage[] = {0};
        return internal::NoFitError(problem, b, usage);
      }
    }
    const int64_t height = capacity / run.d.granule;
    for (const Part& part : run.d.parts) {
      if (part.lower > height) return MaxLiveError(run, part, capacity);
    }
    if (options_.lower_bound_only) return AtLowerBound(run);
    const ProbeResult r = ProbeInRounds(run, height);
    if (r == ProbeResult::kFeasible) return Finish(run, Compose(run), false);
    if (r == ProbeResult::kInfeasible) {
      for (const Part& part : run.d.parts) {
        if (part.lo <= height) continue;
        return absl::ResourceExhaustedError(absl::StrCat(
            "no plan fits in capacity ", capacity,
            ": the exact search proved it for the ", part.items.size(),
            " buffers alive over steps [", part.times.front(), ", ",
            part.times.back(), ") (max-live there ", part.lower * run.d.granule,
            " bytes)"));
      }
    }
    // Nothing found and nothing proven: the incumbent may still fit.
    const absl::StatusOr<Plan>& heuristic = incumbent.Get();
    if (heuristic.ok()) return Finish(run, *heuristic, false);
    if (run.OutOfBudget()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the exact planner found no plan within capacity ", capacity,
          " and proved none impossible before its time or node limit"));
    }
    return absl::ResourceExhaustedError(absl::StrCat(
        "the exact planner found no plan within capacity ", capacity,
        "; with fixed placements, explicit conflicts or mixed alignments its "
        "search is not complete, so this is not a proof (",
        heuristic.status().message(), ")"));
  }

  absl::StatusOr<Plan> Minimise(Run& run, Incumbent& incumbent) const {
    run.minimising = true;
    std::optional<Plan> best;
    if (const absl::StatusOr<Plan>& start = incumbent.Get(); start.ok()) {
      best = *start;
    }
    // A first descent per part (no backtracking is ever needed without a
    // height limit) gives every part a plan.
    for (Part& part : run.d.parts) {
      if (run.OutOfBudget()) break;
      bool ignored = false;
      Probe1(run, part, part.room, &ignored);
    }
    // The first descent may already be below the start.
    if (AllPartsPlanned(run) &&
        (!best.has_value() || PartsHeight(run) * run.d.granule < best->peak)) {
      Gained(run);
    }
    if (AllPartsPlanned(run)) {
      const int64_t node_limit = run.node_limit;
      run.node_limit = std::min(node_limit, NodesOf(run, options_.creep_work));
      int64_t limit = options_.first_node_limit;
      bool undecided = false;
      for (int round = 1; !run.OutOfBudget(); ++round) {
        undecided = MinimiseRound(run, round, limit, best);
        if (!undecided) break;
        limit *= options_.node_limit_growth;
      }
      const bool creep_cut = run.nodes >= run.node_limit;
      run.node_limit = node_limit;
      if (undecided && creep_cut) SweepBelow(run, best);
    }
    const bool proven = run.d.complete && AllPartsPlanned(run) &&
                        PartsLower(run) >= PartsHeight(run);
    if (AllPartsPlanned(run)) {
      Plan composed = Compose(run);
      if (!best.has_value() || composed.peak <= best->peak)
        best = std::move(composed);
    }
    if (!best.has_value()) {
      return absl::DeadlineExceededError(
          "the exact planner ran out of time before finding any plan, and no "
          "heuristic planner gave one");
    }
    return Finish(run, *std::move(best),
                  proven && best->peak <= PartsHeight(run) * run.d.granule);
  }

  // One round of Minimise's probes under node limit `limit`: the lower
  // bound, down from the top, bisection in between. Returns whether another
  // round, with a larger limit, is worth it: a probe hit the limit.
  bool MinimiseRound(Run& run, int round, int64_t limit,
                     const std::optional<Plan>& best) const {
    const int64_t lo = PartsLower(run);
    int64_t hi = BestHeight(run, best);
    if (lo >= hi) return false;
    bool limit_hit = false;
    // The lower bound first: at a height without slack the inference
    // prunes hardest, so a plan there (MiniMalloc's K: 87 ms) is often
    // found where a looser probe wanders for a minute. Unless the caller
    // has just probed it (lower_bound_probed): then last, from the
    // first round whose searches are longer than the caller's.
    if (!options_.lower_bound_probed &&
        Probe(run, lo, limit, &limit_hit) == ProbeResult::kFeasible) {
      hi = Gained(run);
    }
    // Then down from the top, for as long as plans come: a plan found
    // under a loose height often lies well below it.
    int64_t a = PartsLower(run) > lo ? PartsLower(run) : lo + 1;
    while (a < hi && !run.OutOfBudget() &&
           Probe(run, hi - 1, limit, &limit_hit) == ProbeResult::kFeasible) {
      hi = Gained(run);
    }
    // Then bisection in between. A probe that runs out of nodes costs
    // the whole round's limit, so only a few of them are made per round.
    int64_t top = hi - 2;
    for (int unknown = 0;
         a <= top && unknown < kUnknownProbesPerRound && !run.OutOfBudget();) {
      const int64_t mid = a + (top - a) / 2;
      const ProbeResult r = Probe(run, mid, limit, &limit_hit);
      if (r == ProbeResult::kFeasible) {
        hi = Gained(run);
        top = hi - 1;
      } else {
        if (r == ProbeResult::kUnknown) ++unknown;
        a = mid + 1;
      }
    }
    // (And in any round that would be the last.)
    if (options_.lower_bound_probed &&
        (round > kLowerBoundProbedRounds || !limit_hit) &&
        PartsLower(run) < hi && !run.OutOfBudget() &&
        Probe(run, PartsLower(run), limit, &limit_hit) ==
            ProbeResult::kFeasible) {
      Gained(run);
    }
    return limit_hit;
  }

  // Work units in nodes of this problem's search.
  static int64_t NodesOf(const Run& run, int64_t work) {
    return std::max<int64_t>(
        1, work / NodeWork(static_cast<int64_t>(run.problem.buffers.size())));
  }

  // The budget beyond the creep: probes of one height, each the search
  // that a capacity of that height runs (ProbeInRounds, begun afresh, so
  // that its result is that of `--capacity` within its work). First a sweep
  // of every height from the best plan's less one down to the lower bound,
  // highest first, kSweepWork each, going on below every plan it finds;
  // then the best plan's less one alone with all the budget left, and after
  // a plan there, the same again below it. Heights the creep never reaches
  // are found this way: MiniMalloc's J 1020928 by the sweep (5576 nodes
  // under that capacity), D 1005568 by the long probe (15 million nodes).
  void SweepBelow(Run& run, const std::optional<Plan>& best) const {
    const int64_t node_limit = run.node_limit;
    while (!run.OutOfBudget()) {
      for (int64_t h = BestHeight(run, best) - 1;
           h >= PartsLower(run) && !run.OutOfBudget(); --h) {
        run.node_limit =
            std::min(node_limit, run.nodes + NodesOf(run, kSweepWork));
        Afresh(run);
        const ProbeResult r = ProbeInRounds(run, h);
        run.node_limit = node_limit;
        if (r == ProbeResult::kFeasible) h = Gained(run);
      }
      const int64_t h = BestHeight(run, best) - 1;
      if (h < PartsLower(run) || run.OutOfBudget()) return;
      Afresh(run);
      if (ProbeInRounds(run, h) != ProbeResult::kFeasible) return;
      Gained(run);
    }
  }

  // The search as a probe of one height begins it (SolveUnder): the
  // random orders from the seed, the static orders from the first, no
  // failures cached. The parts' plans and proven bounds are kept.
  static void Afresh(Run& run) {
    run.rng.seed(run.seed);
    for (Part& part : run.d.parts) {
      part.last_static = 0;
      part.exhausted_at = -1;
      part.failed.clear();
      part.failed_height = -1;
    }
  }

  static bool AllPartsPlanned(const Run& run) {
    for (const Part& part : run.d.parts) {
      if (part.hi >= kInf) return false;
    }
    return true;
  }

  // The parts' plan is smaller than any before (its height was below the
  // best one when it was probed): reports it, returns its height.
  int64_t Gained(Run& run) const {
    run.budget.Improved(PartsHeight(run) * run.d.granule, name());
    return PartsHeight(run);
  }

  // The height to beat: the parts' plan's, or the best plan's if lower.
  static int64_t BestHeight(const Run& run, const std::optional<Plan>& best) {
    int64_t h = kInf;
    if (AllPartsPlanned(run)) h = PartsHeight(run);
    if (best.has_value()) {
      h = std::min(h, (best->peak + run.d.granule - 1) / run.d.granule);
    }
    return h;
  }

  // A search of one part with no node limit but the run's budget.
  static void Probe1(Run& run, Part& part, int64_t height, bool* limit_hit) {
    const int64_t unlimited = std::numeric_limits<int64_t>::max() / 2;
    if (SolvePart(run, part, height, unlimited, /*collapse_raises=*/false) ==
        Outcome::kLimit)
      *limit_hit = true;
  }

  ExactOptions options_;
};

}  // namespace

std::unique_ptr<SearchPlanner> MakeExactPlanner(const ExactOptions& options) {
  return std::make_unique<ExactPlanner>(options);
}

}  // namespace memplan

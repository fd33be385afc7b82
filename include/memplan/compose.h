// Compositions of planners, after XLA's ChooseBestHeapAlgorithm and
// HeapAlgorithmWithFallback. The registry (planners/registry.cc) writes `best`,
// `exact` and `cp` with them; a planner never looks another one up.
//
//   ChooseBest    the smallest valid plan of several planners
//   WarmStarted   a search started from a heuristic's plan
//   WithFallback  a second planner when the first fails
//   WithPatience  a planner whose searches stop once they stop gaining
//   WorkCapped    a search with less work than the budget

#ifndef MEMPLAN_COMPOSE_H_
#define MEMPLAN_COMPOSE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/planner.h"
#include "memplan/types.h"

namespace memplan {

// The plan a search starts from: given up front, or made by a heuristic
// planner when the search first asks for it (a search that needs none, for
// instance one that decides a capacity and succeeds, costs it nothing).
class Incumbent {
 public:
  // No start: Get() is NotFound.
  Incumbent();
  explicit Incumbent(Plan plan);
  // `heuristic` plans `problem` with `options` on the first Get(). Both must
  // outlive the incumbent.
  Incumbent(const Planner& heuristic, const Problem& problem,
            const PlanOptions& options);

  // The start, verified and with its statistics, or why there is none (a
  // plan the verifier rejects is InternalError naming its planner).
  const absl::StatusOr<Plan>& Get();
  // Constructed without a start.
  bool none() const { return none_; }

 private:
  const Planner* heuristic_ = nullptr;
  const Problem* problem_ = nullptr;
  PlanOptions options_;
  std::optional<absl::StatusOr<Plan>> plan_;
  bool none_ = false;
};

// A planner that searches for a plan better than an incumbent (exact, cp,
// hill_climb). Solve() searches without one.
class SearchPlanner : public Planner {
 public:
  virtual absl::StatusOr<Plan> Search(const Problem& problem,
                                      const PlanOptions& options,
                                      Incumbent& incumbent) const = 0;

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override;

  // Whether ChooseBest runs this search as soon as its first `heuristics`
  // have found `best`, before the rest of them: a quick try whose plan
  // would leave them nothing to gain. By default it runs after them.
  virtual bool RunsEarly(const Problem& problem, const Plan& best,
                         int heuristics) const;

  // Whether ChooseBest runs this search on dense problems, and only there
  // (where it runs no other search). By default on the others.
  virtual bool ForDense() const;
};

// `search`, started from the plan of `heuristic`, which gets `share` of the
// counted work (and, under a deadline, the time up to it less a reserve for
// a last-resort plan; PlanOptions), and at most `max_start_work`
// work units when that is positive, when the search asks for it; the search
// gets the rest of the work and the whole time. Named as the search. With a
// cap, a longer time limit goes to the search, not to the start.
std::unique_ptr<Planner> WarmStarted(std::unique_ptr<SearchPlanner> search,
                                     std::unique_ptr<Planner> heuristic,
                                     double share, int64_t max_start_work = 0);

// `search` with at most `max_work` work units (fewer when the options give
// fewer), within the same deadline; named as the search. A quick try before
// the longer searches of a ChooseBest.
std::unique_ptr<SearchPlanner> WorkCapped(std::unique_ptr<SearchPlanner> search,
                                          int64_t max_work);

// `primary`'s plan; when it fails (or its plan fails the verifier),
// `fallback`'s with the same options, within the same deadline (a time
// limit counts from the start of the Solve); when both fail, primary's
// error.
// Named as the primary; a plan keeps the name of the planner that made it.
std::unique_ptr<Planner> WithFallback(std::unique_ptr<Planner> primary,
                                      std::unique_ptr<Planner> fallback);

// `planner` with PlanOptions::patience `patience` unless the caller set one;
// named as the planner. `best` is the default planner composed so: it
// searches on only while its searches still find smaller plans.
std::unique_ptr<Planner> WithPatience(std::unique_ptr<Planner> planner,
                                      int64_t patience);

// How the members of a ChooseBest share its work limit.
enum class MemberWork {
  // Each member gets what the members before it left of the limit (the
  // limit less the work they counted): the Solve counts within its limit,
  // give or take the last member's overrun of its own.
  kShared,
  // Each member gets the whole limit, and the Solve may count several
  // times it: never worse than a member on its own under the same limit.
  kWhole,
};

// The smallest valid plan (ties: the earlier) of `heuristics` (one-pass
// planners), then of `searches`, each started from the smallest plan so far.
//   * `member_work`: what each member gets of the work limit (MemberWork);
//     with kShared, the members left without work once it is spent do not
//     run, and a plan above the lower bound then has the counter
//     cut_by_work_limit.
//   * Dense problems: where one placement pass (about twice the overlapping
//     pairs of buffers, in work units) costs more than a sixteenth of the
//     budget per heuristic, fewer heuristics run (the first always), and
//     of the searches only those whose ForDense() holds (which run on no
//     other problem), with the work the heuristics left.
//   * Those heuristics come from `dense_heuristics` (the fittest for dense
//     problems first) when it is not empty and the buffers overlap 256
//     others each on average; a problem dense only for its size (10^6 short
//     intervals) keeps the usual list.
//   * Once a plan meets the lower bound, no further member runs.
//   * After each heuristic, a search whose RunsEarly() holds (for the
//     smallest plan so far and the heuristics run) runs at once, before
//     the other heuristics; the searches keep their order (one runs early
//     only once those before it have run).
//   * Patience (PlanOptions::patience): the first heuristic runs, a later
//     one only when the passes since the last smaller plan, its own
//     included (each counted as in the dense rule), cost at most the
//     patience; every search gets the patience, and counts its own.
//   * Progress (PlanOptions::progress): each member's smaller plan, as it
//     ends and as a search reports one, when smaller than any before.
//   * Time: every member runs under the deadline, and a member abandoned
//     at it (DeadlineExceeded) ends the run with the best plan so far, or
//     with DeadlineExceeded saying why when there is none. A deadline that
//     leaves no time for one placement pass's set-up runs nothing.
//   * Every plan goes through VerifyPlan (InternalError naming the member
//     when it fails), once: a plan of a nested WithFallback or ChooseBest
//     was verified there. With no plan at all, the first error is
//     returned.
//   * `last_resort` (optional; a planner linear in the buffers, such as
//     naive) runs when no member gave a plan, its error or abandonment
//     included. Under a deadline the members stop short of it by what the
//     last resort needs (400 ns a buffer), so that a plan comes back
//     within the limit whenever the last resort fits in it.
// The plan is named `name`.
std::unique_ptr<Planner> ChooseBest(
    std::string name, std::vector<std::unique_ptr<Planner>> heuristics,
    std::vector<std::unique_ptr<SearchPlanner>> searches,
    std::vector<std::unique_ptr<Planner>> dense_heuristics = {},
    std::unique_ptr<Planner> last_resort = nullptr,
    MemberWork member_work = MemberWork::kShared);

}  // namespace memplan

#endif  // MEMPLAN_COMPOSE_H_

// The registry: one explicit table of every planner, and the one place where
// planners are composed. (A static library drops object files nobody
// references, so planners do not register themselves.)

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "memplan/compose.h"
#include "memplan/internal/planners.h"
#include "memplan/planner.h"
#include "memplan/planners/caffe2.h"
#include "memplan/planners/cp.h"
#include "memplan/planners/exact.h"
#include "memplan/planners/greedy_by_size.h"
#include "memplan/planners/hill_climb.h"

namespace memplan {
namespace {

// The search planners' start: the best heuristic plan there is.
std::unique_ptr<Planner> HeuristicStart();

std::unique_ptr<Planner> Best() {
  std::vector<std::unique_ptr<Planner>> heuristics;
  // greedy_by_size first: it always completes, whatever the deadline.
  for (const GreedyOptions& greedy : std::vector<GreedyOptions>{
           {.order = PlacementOrder::kSize, .fit = Fit::kBest},
           {.order = PlacementOrder::kSize, .fit = Fit::kFirst},
           {.order = PlacementOrder::kSizeThenId, .fit = Fit::kFirst},
           {.order = PlacementOrder::kArea, .fit = Fit::kBest},
           {.order = PlacementOrder::kArea, .fit = Fit::kFirst},
           {.order = PlacementOrder::kLifetime, .fit = Fit::kBest},
           {.order = PlacementOrder::kLifetime, .fit = Fit::kFirst}}) {
    heuristics.push_back(MakeGreedyPlanner(greedy));
  }
  std::vector<std::unique_ptr<SearchPlanner>> searches;
  searches.push_back(MakeHillClimbPlanner({}));
  // Below the best plan so far, with as many nodes as the budget pays for:
  // what fits MiniMalloc's challenging instances at their lower bound.
  searches.push_back(MakeExactPlanner({}));
  return ChooseBest("best", std::move(heuristics), std::move(searches));
}

std::unique_ptr<Planner> HeuristicStart() {
  return WithFallback(Best(), WithFallback(MakeGreedyPlanner({}),
                                           internal::MakeNaivePlanner()));
}

// The heuristic start's share of the budget of exact and cp: exact's search
// needs most of it; cp's start is its best plan on the problems too large
// to prove.
constexpr double kExactStartShare = 0.1;
constexpr double kCpStartShare = 0.5;

std::unique_ptr<Planner> Exact(std::unique_ptr<SearchPlanner> search) {
  return WarmStarted(std::move(search), HeuristicStart(), kExactStartShare);
}

std::unique_ptr<Planner> Cp(std::unique_ptr<SearchPlanner> search) {
  return WarmStarted(std::move(search), HeuristicStart(), kCpStartShare);
}

struct Entry {
  PlannerInfo info;
  std::unique_ptr<Planner> (*make)();
  // Entries built around a search planner: the same composition around a
  // caller's one (CreatePlanner(name, search)).
  std::unique_ptr<Planner> (*around)(std::unique_ptr<SearchPlanner>) = nullptr;
};

// Keep the order: cheapest first; the comparison tables follow it.
const std::vector<Entry>& Entries() {
  using enum PlannerKind;
  using enum PlannerCost;
  static const std::vector<Entry>* entries = new std::vector<Entry>{
      {{"naive", "every buffer its own bytes, one after another (no reuse)",
        kHeuristic, kLight},
       [] { return internal::MakeNaivePlanner(); }},
      {{"greedy_by_size",
        "largest first, each in the smallest gap that fits (Pisarchyk & Lee "
        "2020)",
        kHeuristic, kLight},
       [] { return MakeGreedyPlanner({}); }},
      {{"first_fit", "largest first, each at the lowest offset that fits",
        kHeuristic, kLight},
       [] { return internal::MakeFirstFitPlanner(); }},
      {{"position_greedy",
        "largest first (ties in buffer order), jumping past overlapping "
        "buffers",
        kHeuristic, kLight},
       [] { return internal::MakePositionGreedyPlanner(); }},
      {{"caffe2_greedy",
        "memonger's greedy: shared objects by last use, closest size first",
        kHeuristic, kLight},
       [] { return MakeCaffe2GreedyPlanner({}); }},
      {{"caffe2_dp",
        "memonger's dynamic program over shared objects, budgeted; never "
        "worse than caffe2_greedy",
        kSearch, kBudgeted},
       [] { return MakeCaffe2DpPlanner({}); }},
      {{"hill_climb",
        "seeded search over placement orders around the peak, from the best "
        "greedy",
        kSearch, kBudgeted},
       []() -> std::unique_ptr<Planner> { return MakeHillClimbPlanner({}); }},
      {{"best",
        "the smallest plan of the greedy placements (size, area and lifetime "
        "orders, best and first fit; position_greedy), hill_climb, then "
        "exact's search below it",
        kSearch, kBudgeted},
       &Best},
      {{"cp",
        "constraint programming (Gecode) from best's plan; proves the "
        "optimum of small problems",
        kExact, kModel},
       [] { return Cp(MakeCpPlanner({})); }, &Cp},
      {{"exact",
        "branch-and-bound over canonical placements from best's plan; proves "
        "feasibility under a capacity or the minimum peak",
        kExact, kModel},
       [] { return Exact(MakeExactPlanner({})); }, &Exact},
  };
  return *entries;
}

std::string ValidNames() {
  std::string valid;
  for (const Entry& e : Entries()) {
    absl::StrAppend(&valid, valid.empty() ? "" : ", ", std::string(e.info.name));
  }
  return valid;
}

const Entry* Find(std::string_view name) {
  for (const Entry& e : Entries()) {
    if (e.info.name == name) return &e;
  }
  return nullptr;
}

absl::Status UnknownPlanner(std::string_view name) {
  return absl::NotFoundError(absl::StrCat("unknown planner \"",
                                          std::string(name),
                                          "\"; valid planners: ", ValidNames()));
}

}  // namespace

std::vector<PlannerInfo> RegisteredPlanners() {
  std::vector<PlannerInfo> infos;
  for (const Entry& e : Entries()) infos.push_back(e.info);
  return infos;
}

absl::StatusOr<std::unique_ptr<Planner>> CreatePlanner(std::string_view name) {
  const Entry* entry = Find(name);
  if (entry == nullptr) return UnknownPlanner(name);
  return entry->make();
}

absl::StatusOr<std::unique_ptr<Planner>> CreatePlanner(
    std::string_view name, std::unique_ptr<SearchPlanner> search) {
  const Entry* entry = Find(name);
  if (entry == nullptr) return UnknownPlanner(name);
  if (entry->around == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "planner \"", std::string(name), "\" is not built around a search"));
  }
  return entry->around(std::move(search));
}

std::string_view DefaultPlannerName() { return "best"; }

}  // namespace memplan

// The registry: one explicit table of every planner. (A static library drops
// object files nobody references, so planners do not register themselves.)

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "memplan/internal/planners.h"
#include "memplan/planner.h"

namespace memplan {
namespace {

struct Entry {
  std::string_view name;
  std::string_view description;
  std::unique_ptr<Planner> (*factory)();
};

// Keep the order: cheapest first; the comparison tables follow it.
constexpr Entry kPlanners[] = {
    {"naive", "every buffer its own bytes, one after another (no reuse)",
     &internal::NewNaivePlanner},
    {"greedy_by_size",
     "largest first, each in the smallest gap that fits (Pisarchyk & Lee 2020)",
     &internal::NewGreedyBySizePlanner},
    {"first_fit", "largest first, each at the lowest offset that fits",
     &internal::NewFirstFitPlanner},
    {"position_greedy",
     "largest first (ties in buffer order), jumping past overlapping buffers",
     &internal::NewPositionGreedyPlanner},
    {"caffe2_greedy",
     "memonger's greedy: shared objects by last use, closest size first",
     &internal::NewCaffe2GreedyPlanner},
    {"caffe2_dp",
     "memonger's dynamic program over shared objects, budgeted; never worse "
     "than caffe2_greedy",
     &internal::NewCaffe2DpPlanner},
    {"hill_climb",
     "seeded search over placement orders around the peak, from the best greedy",
     &internal::NewHillClimbPlanner},
    {"best", "runs the greedy placements and hill_climb, keeps the smallest plan",
     &internal::NewBestPlanner},
    {"cp",
     "constraint programming (Gecode) from a heuristic warm start; proves the "
     "optimum of small problems",
     &internal::NewCpPlanner},
    {"exact",
     "branch-and-bound over canonical placements; proves feasibility under a "
     "capacity or the minimum peak",
     &internal::NewExactPlanner},
};

}  // namespace

std::vector<PlannerInfo> RegisteredPlanners() {
  std::vector<PlannerInfo> infos;
  for (const Entry& e : kPlanners) infos.push_back({e.name, e.description});
  return infos;
}

absl::StatusOr<std::unique_ptr<Planner>> CreatePlanner(std::string_view name) {
  std::string valid;
  for (const Entry& e : kPlanners) {
    if (e.name == name) return e.factory();
    absl::StrAppend(&valid, valid.empty() ? "" : ", ", std::string(e.name));
  }
  return absl::NotFoundError(absl::StrCat("unknown planner \"", std::string(name),
                                          "\"; valid planners: ", valid));
}

std::string_view DefaultPlannerName() {
  for (const Entry& e : kPlanners) {
    if (e.name == "best") return e.name;
  }
  return "naive";
}

}  // namespace memplan

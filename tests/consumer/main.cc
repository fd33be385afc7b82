// A user's program linking the installed memplan package: PlanMemory() with
// the default planner; with memplan::cp (CONSUMER_WITH_CP) the cp planner,
// registered by RegisterCpPlanner() and then by name from the registry with
// its own options; without it, "cp" is not registered.
#include <cstdio>
#include <memory>

#include "memplan/memplan.h"
#ifdef CONSUMER_WITH_CP
#include "memplan/planners/cp.h"
#endif
#ifdef CONSUMER_WITH_CPSAT
#include "memplan/planners/cpsat.h"
#endif

static_assert(__cplusplus >= 202002L, "memplan::memplan carries cxx_std_20");

int main() {
  memplan::Graph graph{
      .tensors =
          {{.name = "x", .size = 100, .kind = memplan::TensorKind::kInput},
           {.name = "y", .size = 200},
           {.name = "z", .size = 100, .kind = memplan::TensorKind::kOutput}},
      .ops = {{.name = "f", .inputs = {"x"}, .outputs = {"y"}},
              {.name = "g", .inputs = {"y"}, .outputs = {"z"}}},
  };
  absl::StatusOr<memplan::GraphPlan> planned = memplan::PlanMemory(graph);
  if (!planned.ok() || planned->Find("y") == nullptr ||
      !planned->Find("y")->planned()) {
    return 1;
  }
  const memplan::Plan* plan = &planned->plan;
  if (plan->peak < plan->lower_bound) return 1;

#ifdef CONSUMER_WITH_CPSAT
  // The cpsat planner: registered on request, and its model alone (no warm
  // start) proves the optimum through the OR-tools library it loads.
  if (memplan::CreatePlanner("cpsat").ok() ||
      !memplan::RegisterCpsatPlanner().ok()) {
    std::printf(
        "cpsat registered before RegisterCpsatPlanner() or not after\n");
    return 1;
  }
  absl::StatusOr<memplan::Problem> cpsat_problem = memplan::BuildProblem(graph);
  if (!cpsat_problem.ok()) return 1;
  absl::StatusOr<std::unique_ptr<memplan::Planner>> cpsat_planner =
      memplan::CreatePlanner("cpsat", {{"warm_start", "false"}});
  if (!cpsat_planner.ok()) return 1;
  absl::StatusOr<memplan::Plan> cpsat =
      (*cpsat_planner)->Solve(*cpsat_problem, memplan::PlanOptions{});
  if (!cpsat.ok() || !memplan::VerifyPlan(*cpsat_problem, *cpsat).ok() ||
      !cpsat->proven_optimal) {
    std::printf("cpsat failed: %s\n", cpsat.status().ToString().c_str());
    return 1;
  }
  std::printf("peak %lld, cpsat %lld (proven)\n",
              static_cast<long long>(plan->peak),
              static_cast<long long>(cpsat->peak));
  return 0;
#endif

#ifdef CONSUMER_WITH_CP
  // Linking memplan::cp registers nothing; the program asks for it.
  if (memplan::CreatePlanner("cp").ok()) {
    std::printf("cp registered before RegisterCpPlanner()\n");
    return 1;
  }
  if (!memplan::RegisterCpPlanner().ok() ||
      !memplan::RegisterCpPlanner().ok()) {  // a second call is harmless
    std::printf("RegisterCpPlanner() failed\n");
    return 1;
  }
#endif
  absl::StatusOr<std::unique_ptr<memplan::Planner>> by_name =
      memplan::CreatePlanner("cp");
#ifdef CONSUMER_WITH_CP
  if (!by_name.ok()) {
    std::printf("cp not registered: %s\n", by_name.status().ToString().c_str());
    return 1;
  }
  memplan::PlanMemoryOptions options;
  options.planner = "cp";
  absl::StatusOr<memplan::GraphPlan> cp_by_name =
      memplan::PlanMemory(graph, options);
  if (!cp_by_name.ok() || !cp_by_name->plan.proven_optimal) return 1;

  absl::StatusOr<memplan::Problem> problem = memplan::BuildProblem(graph);
  if (!problem.ok()) return 1;
  // The registered composition with options of the caller's.
  absl::StatusOr<std::unique_ptr<memplan::Planner>> cp_planner =
      memplan::CreatePlanner("cp", {{"lowest_offset_first", "true"}});
  if (!cp_planner.ok()) return 1;
  absl::StatusOr<memplan::Plan> cp =
      (*cp_planner)->Solve(*problem, memplan::PlanOptions{});
  if (!cp.ok() || !memplan::VerifyPlan(*problem, *cp).ok() ||
      !cp->proven_optimal) {
    return 1;
  }
  std::printf("peak %lld, cp %lld (proven), lower bound %lld\n",
              static_cast<long long>(plan->peak),
              static_cast<long long>(cp->peak),
              static_cast<long long>(plan->lower_bound));
#else
  if (by_name.ok() || by_name.status().code() != absl::StatusCode::kNotFound) {
    std::printf("cp registered although memplan::cp is not linked\n");
    return 1;
  }
  std::printf("peak %lld, lower bound %lld (core only)\n",
              static_cast<long long>(plan->peak),
              static_cast<long long>(plan->lower_bound));
#endif
  return 0;
}

// memplan stats: the figures of a problem, without planning it.

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "commands.h"
#include "input.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"

namespace memplan::tool {
namespace {

absl::Status Check(const Arguments&) { return CheckInputFlags(); }

// memonger's statistics: the bytes of the shared-object planners' plans.
void PrintSharedObjects(const Problem& problem) {
  for (const char* planner : {"caffe2_greedy", "caffe2_dp"}) {
    PlanMemoryOptions options;
    options.planner = planner;
    absl::StatusOr<Plan> plan = PlanMemory(problem, options);
    if (!plan.ok()) {  // e.g. the objects exceed a capacity: still a statistic
      std::cout << "shared objects (" << planner
                << "): " << plan.status().message() << "\n";
      continue;
    }
    std::cout << absl::StrFormat(
        "shared objects (%s): %d objects, %d bytes (%.2f%% of naive total)\n",
        planner, plan->counters["shared_objects"], plan->peak,
        plan->naive_total > 0 ? 100.0 * plan->peak / plan->naive_total
                              : 100.0);
  }
}

absl::Status Run(const Arguments& args) {
  std::string import_report;
  absl::StatusOr<LoadedInput> input =
      LoadToolInput(args.positional[0], &import_report);
  if (!input.ok()) return input.status();
  std::cout << import_report;
  const Problem& problem = input->problem;
  if (input->graph.has_value()) {
    std::cout << "ops: " << input->graph->ops.size() << "\n"
              << "tensors: " << input->graph->tensors.size() << "\n";
  }
  std::cout << "planned buffers: " << problem.buffers.size() << "\n"
            << "explicit conflicts: " << problem.conflicts.size() << "\n";
  for (const Pool& pool : problem.pools) {
    std::cout << absl::StrFormat("pool %s: capacity %s, alignment %d\n",
                                 pool.name,
                                 pool.capacity > 0
                                     ? absl::StrCat(pool.capacity)
                                     : std::string("unbounded"),
                                 pool.alignment);
  }
  std::cout << "naive total: " << NaiveTotal(problem) << "\n"
            << "lower bound: " << LowerBound(problem) << "\n";
  absl::StatusOr<std::optional<OrderLowerBound>> order_bound =
      InputOrderBound(*input, BuildOptionsFromFlags());
  if (!order_bound.ok()) return order_bound.status();
  const std::string line = OrderBoundLine(*input, *order_bound);
  if (!line.empty()) std::cout << line << "\n";
  if (input->graph.has_value() && absl::GetFlag(FLAGS_reorder) == "optimal") {
    // What the search knows of the order, on the graph as given (the same
    // search gave the order above).
    absl::StatusOr<LoadedInput> given =
        LoadToolInput(args.positional[0], BuildOptionsFromFlags(), "");
    if (!given.ok()) return given.status();
    absl::StatusOr<OptimalOrder> optimal =
        ComputeOptimalOpOrder(*given->graph, BuildOptionsFromFlags());
    if (!optimal.ok()) return optimal.status();
    std::cout << (optimal->proven
                      ? absl::StrFormat("op order: proven optimal, %d bytes\n",
                                        optimal->peak)
                      : absl::StrFormat(
                            "op order: %d bytes, not proven optimal (no order "
                            "below %d bytes; %.2f%% above)\n",
                            optimal->peak, optimal->bound,
                            optimal->bound > 0
                                ? 100.0 * (optimal->peak - optimal->bound) /
                                      optimal->bound
                                : 0.0));
    std::cout << absl::StrFormat(
        "op order search: no order below %d bytes, %d operations of work\n",
        optimal->bound, optimal->work);
  }
  if (absl::GetFlag(FLAGS_shared_objects)) PrintSharedObjects(problem);
  return absl::OkStatus();
}

}  // namespace

Command StatsCommand() {
  Command command{
      .name = "stats",
      .synopsis = "INPUT [flags]",
      .description =
          "Prints INPUT's figures: ops, tensors, planned buffers, pools, the "
          "naive total (every buffer its own bytes), the lower bound (the "
          "most bytes alive at one step, for one pool) and, for a graph, the "
          "lower bound over op orders (no valid order of its ops needs fewer "
          "bytes, see --reorder; with --reorder=optimal whether the order is "
          "proven optimal, the bound the search proved and the work it "
          "counted). It plans nothing "
          "unless --shared-objects asks for memonger's statistics.",
      .min_positional = 1,
      .max_positional = 1,
      .check = &Check,
      .run = &Run,
  };
  command.flags = InputFlags();
  command.flags.push_back("shared_objects");
  return command;
}

}  // namespace memplan::tool

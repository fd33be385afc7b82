// memplan stats: the figures of a problem, without planning it.

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "commands.h"
#include "input.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "memplan/symbolic.h"
#include "symbolic_input.h"

namespace memplan::tool {
namespace {

absl::Status Check(const Arguments&) {
  if (absl::Status s = CheckPlanningFlags(); !s.ok()) return s;
  return CheckInputFlags();
}

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
        plan->naive_total > 0 ? 100.0 * plan->peak / plan->naive_total : 100.0);
  }
}

// Columns padded to their widest cell, the first left-aligned.
std::string Table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      absl::StrAppend(&out, c > 0 ? "  " : "", c > 0 ? pad : "", row[c],
                      c == 0 ? pad : "");
    }
    out += "\n";
  }
  return out;
}

// The table's rows: values, figures, and the piece that gives the bound,
// which `shown` marks.
absl::StatusOr<std::vector<std::vector<std::string>>> BoundRows(
    const DimRanges& dims, const std::vector<DimValues>& points,
    const DimExpr& naive, const SymbolicBound& bound,
    std::vector<bool>& shown) {
  std::vector<std::vector<std::string>> rows(1);
  for (const auto& [name, range] : dims) rows[0].push_back(name);
  for (const char* title : {"naive total", "lower bound", "at step"}) {
    rows[0].push_back(title);
  }
  for (const DimValues& at : points) {
    std::vector<std::string> row;
    for (const auto& [name, value] : at) row.push_back(absl::StrCat(value));
    absl::StatusOr<int64_t> total = naive.Evaluate(at);
    absl::StatusOr<Bytes> lb = bound.Evaluate(at);
    absl::StatusOr<int> piece = bound.Largest(at);
    if (!total.ok()) return total.status();
    if (!lb.ok()) return lb.status();
    if (!piece.ok()) return piece.status();
    row.push_back(absl::StrCat(*total));
    row.push_back(absl::StrCat(*lb));
    row.push_back(*piece < 0 ? std::string("-")
                             : absl::StrCat(bound.pieces[*piece].step));
    if (*piece >= 0) shown[*piece] = true;
    rows.push_back(std::move(row));
  }
  return rows;
}

// A graph with dims left unbound: its figures as functions of the dims,
// and their values at the ranges' ends and at --at's values.
absl::Status RunSymbolic(const Arguments& args, const Graph& graph) {
  for (const char* flag : {"reorder", "shared_objects"}) {
    if (args.Given(flag)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", absl::StrReplaceAll(flag, {{"_", "-"}}), ": graph \"",
          graph.name, "\" has symbolic dims (", RangesText(graph.dims),
          "); bind them with --dim NAME=VALUE to use it"));
    }
  }
  absl::StatusOr<SymbolicProblem> problem =
      BuildSymbolicProblem(graph, BuildOptionsFromFlags());
  if (!problem.ok()) return problem.status();
  absl::StatusOr<std::vector<DimValues>> points =
      EvaluationPoints(problem->dims);
  if (!points.ok()) return points.status();
  absl::StatusOr<DimExpr> naive = SymbolicNaiveTotal(*problem);
  if (!naive.ok()) return naive.status();
  absl::StatusOr<SymbolicBound> bound = SymbolicLowerBound(*problem);
  if (!bound.ok()) return bound.status();
  std::cout << "symbolic dims: " << RangesText(problem->dims) << "\n"
            << "ops: " << graph.ops.size() << "\n"
            << "tensors: " << graph.tensors.size() << "\n"
            << "planned buffers: " << problem->buffers.size() << "\n"
            << "explicit conflicts: " << problem->conflicts.size() << "\n"
            << absl::StrFormat("pool %s: capacity %s, alignment %d\n",
                               problem->pool.name,
                               problem->pool.capacity > 0
                                   ? absl::StrCat(problem->pool.capacity)
                                   : std::string("unbounded"),
                               problem->pool.alignment)
            << "naive total: " << naive->ToString()
            << " (the buffers' sizes, each reserved for every value)\n";
  std::vector<bool> shown(bound->pieces.size(), false);
  absl::StatusOr<std::vector<std::vector<std::string>>> rows =
      BoundRows(problem->dims, *points, *naive, *bound, shown);
  if (!rows.ok()) return rows.status();
  // The pieces that give the bound at a value of the table, then the
  // others by their value at the maxima, up to kShown in all.
  constexpr size_t kShown = 8;
  size_t count = std::count(shown.begin(), shown.end(), true);
  for (size_t i = 0; i < shown.size() && count < kShown; ++i) {
    if (!shown[i]) {
      shown[i] = true;
      ++count;
    }
  }
  std::cout << "lower bound: the largest of " << bound->pieces.size()
            << (bound->pieces.size() == 1 ? " polynomial" : " polynomials")
            << ", the bytes alive at one step (those no other step's is "
               "proven to exceed everywhere):\n";
  for (size_t i = 0; i < bound->pieces.size(); ++i) {
    if (!shown[i]) continue;
    const SymbolicLowerBoundPiece& p = bound->pieces[i];
    std::cout << "  step " << p.step;
    if (p.step >= 0 && p.step < static_cast<Step>(graph.ops.size())) {
      std::cout << " (" << graph.ops[p.step].name << ")";
    }
    std::cout << ": " << p.bytes.ToString() << "\n";
  }
  if (count < bound->pieces.size()) {
    std::cout << "  and " << bound->pieces.size() - count
              << " more, none the largest at the values below\n";
  }
  std::cout << Table(*rows);
  return absl::OkStatus();
}

absl::Status Run(const Arguments& args) {
  absl::StatusOr<std::optional<Graph>> symbolic =
      ReadSymbolicGraph(args.positional[0], /*bind_values=*/true);
  if (!symbolic.ok()) return symbolic.status();
  if (symbolic->has_value()) return RunSymbolic(args, **symbolic);
  std::string import_report;
  // With --reorder=optimal the search runs once, on the graph as given:
  // its order is applied here, and what it knows is said below.
  // --time-limit and --work-limit bound the ordering.
  const std::string reorder = absl::GetFlag(FLAGS_reorder);
  const bool optimal_order = reorder == "optimal";
  const PlanOptions effort = PlanOptionsFromFlags(args);
  absl::StatusOr<LoadedInput> input =
      LoadToolInput(args.positional[0], BuildOptionsFromFlags(),
                    optimal_order ? "" : reorder, &import_report, effort);
  if (!input.ok()) return input.status();
  if (optimal_order && !input->graph.has_value()) {
    // A buffer CSV has no ops to order: the error --reorder gives.
    input = LoadToolInput(args.positional[0]);
    if (!input.ok()) return input.status();
  }
  std::optional<OptimalOrder> optimal;
  if (optimal_order && input->graph.has_value()) {
    absl::StatusOr<OptimalOrder> found =
        ComputeOptimalOpOrder(*input->graph, BuildOptionsFromFlags(), effort);
    if (!found.ok()) return found.status();
    optimal = *std::move(found);
    input->graph = PermuteOps(*input->graph, optimal->order);
    input->op_order = optimal->order;
    absl::StatusOr<Problem> problem =
        BuildProblem(*input->graph, BuildOptionsFromFlags());
    if (!problem.ok()) return problem.status();
    input->problem = *std::move(problem);
  }
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
                                 pool.capacity > 0 ? absl::StrCat(pool.capacity)
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
  if (optimal.has_value()) {
    // What the search that gave the order above knows of it.
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
        "op order search: no order below %d bytes, %d work units\n",
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
          "unless --shared-objects asks for memonger's statistics. For a "
          "graph with symbolic dims that --dim leaves unbound, the naive "
          "total and the lower bound as functions of the dims (the bound is "
          "the largest of a few step polynomials) and their values at the "
          "ranges' ends and at each --at NAME=VALUE.",
      .min_positional = 1,
      .max_positional = 1,
      .check = &Check,
      .run = &Run,
  };
  command.flags = InputFlags();
  command.flags.push_back("shared_objects");
  command.flags.push_back("time_limit");
  command.flags.push_back("work_limit");
  command.flags.push_back("at");
  return command;
}

}  // namespace memplan::tool

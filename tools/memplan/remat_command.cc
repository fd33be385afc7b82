// memplan remat: a training step fitted into a budget by recomputing ops
// (memplan/remat.h; with --exact, memplan/remat_exact.h), or the cost of
// recomputation against the budget.

#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "commands.h"
#include "input.h"
#include "memplan/formats.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/remat.h"
#include "memplan/remat_exact.h"

ABSL_FLAG(memplan::tool::ByteSize, budget, {0},
          "SIZE: the most bytes the plan may take (e.g. 36MiB); the peak "
          "of the rewritten graph's plan is at most this");
ABSL_FLAG(int32_t, sweep, 0,
          "N: instead of one budget, N budgets from the peak without "
          "recomputation down to the smallest peak reached, as a table");
ABSL_FLAG(bool, exact, false,
          "with --budget: the least added cost, proven by a branch and bound "
          "search within --work-limit (for graphs of up to about 60 ops), "
          "instead of the heuristic's");

namespace memplan::tool {
namespace {

absl::Status Check(const Arguments& args) {
  const bool budget = args.Given("budget");
  const bool sweep = args.Given("sweep");
  if (budget == sweep) {
    return absl::InvalidArgumentError(
        "give either --budget=SIZE (one plan) or --sweep=N (a table)");
  }
  if (budget && absl::GetFlag(FLAGS_budget).bytes <= 0) {
    return absl::InvalidArgumentError("--budget must be a positive size");
  }
  if (sweep && absl::GetFlag(FLAGS_exact)) {
    return absl::InvalidArgumentError(
        "--exact fits one --budget: the sweep runs the heuristic (give "
        "--budget=SIZE --exact for each budget to prove)");
  }
  if (sweep && absl::GetFlag(FLAGS_sweep) < 2) {
    return absl::InvalidArgumentError("--sweep needs at least 2 budgets");
  }
  const std::string out = absl::GetFlag(FLAGS_out);
  const std::string graph_out = absl::GetFlag(FLAGS_graph_out);
  if (sweep && (!out.empty() || !graph_out.empty())) {
    return absl::InvalidArgumentError(
        "--sweep writes a table: --out and --graph-out go with --budget");
  }
  if (!out.empty() && graph_out.empty()) {
    return absl::InvalidArgumentError(
        "--out's plan is of the rewritten graph: give --graph-out=FILE.json "
        "too, to write that graph");
  }
  if (!out.empty() && !absl::EndsWith(out, ".json") &&
      !absl::EndsWith(out, ".json.gz") && !IsWritableStream(out)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--out=", out, ": the plan is written as .json"));
  }
  if (!graph_out.empty() && !absl::EndsWith(graph_out, ".json") &&
      !absl::EndsWith(graph_out, ".json.gz") && !IsWritableStream(graph_out)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--graph-out=", graph_out,
                     ": a graph is written as .json or .json.gz"));
  }
  std::error_code error;
  for (const std::string& path : {out, graph_out}) {
    if (!path.empty() &&
        std::filesystem::equivalent(path, args.positional[0], error)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is the input file; it is never overwritten"));
    }
  }
  if (!out.empty() && out == graph_out) {
    return absl::InvalidArgumentError(
        "--out and --graph-out name one file; the graph would overwrite the "
        "plan");
  }
  if (!absl::GetFlag(FLAGS_reorder).empty()) {
    return absl::InvalidArgumentError(
        "--reorder: rematerialization plans the graph's own order");
  }
  const std::string planner = absl::GetFlag(FLAGS_planner);
  if (absl::Status s = CheckPlannerName("planner", planner); !s.ok()) return s;
  if (absl::Status s = CheckPlannerOptions(planner); !s.ok()) return s;
  if (absl::Status s = CheckPlanningFlags(); !s.ok()) return s;
  return CheckInputFlags();
}

std::string Size(Bytes bytes) {
  return absl::StrFormat("%d bytes (%.2f MiB)", bytes,
                         static_cast<double>(bytes) / (1 << 20));
}

// The sum of the ops' costs, and of those that may be recomputed.
struct Costs {
  double total = 0;
  double recomputable = 0;
};
Costs CostsOf(const Graph& graph) {
  Costs costs;
  for (const Op& op : graph.ops) {
    costs.total += op.cost.value_or(0);
    if (op.recomputable) costs.recomputable += op.cost.value_or(0);
  }
  return costs;
}

std::string Percent(double part, double whole) {
  return whole > 0 ? absl::StrFormat("%.2f%%", 100 * part / whole) : "-";
}

// The rewritten graph to --graph-out and its plan to --out, the plan
// recording the graph file as its input (so `memplan verify` reads both).
absl::Status WriteOutputs(const RematResult& fitted) {
  const std::string out = absl::GetFlag(FLAGS_out);
  const std::string graph_out = absl::GetFlag(FLAGS_graph_out);
  if (graph_out.empty()) return absl::OkStatus();
  const std::string graph_text = GraphToJson(fitted.graph);
  if (absl::Status s = WriteFile(graph_out, graph_text); !s.ok()) return s;
  if (out.empty()) return absl::OkStatus();
  PlanJsonOptions json;
  json.provenance = PlanProvenance{.input = graph_out,
                                   .input_hash = ContentHash(graph_text),
                                   .build = BuildOptionsFromFlags(),
                                   .reorder = ""};
  json.graph = &fitted.graph;
  return WriteFile(out, [&](const TextSink& write) {
    WritePlanJson(fitted.plan.problem, fitted.plan.plan, json, write);
  });
}

void PrintSummary(const Graph& graph, const RematResult& fitted, Bytes budget) {
  const Costs costs = CostsOf(graph);
  std::cout << "peak without recomputation: " << Size(fitted.peak_without)
            << "\n"
            << "peak reached: " << Size(fitted.plan.plan.peak) << " (budget "
            << Size(budget) << ")\n"
            << "added cost: " << absl::StrFormat("%.6g", fitted.added_cost)
            << " (" << Percent(fitted.added_cost, costs.total)
            << " of the graph's cost, "
            << Percent(fitted.added_cost, costs.recomputable)
            << " of its recomputable ops')\n"
            << "ops recomputed: " << fitted.recomputed.size() << " (the graph "
            << graph.ops.size() << " ops, the rewritten one "
            << fitted.graph.ops.size() << ")\n";
}

absl::Status RunBudget(const Graph& graph, const PlanMemoryOptions& options) {
  const Bytes budget = absl::GetFlag(FLAGS_budget).bytes;
  absl::StatusOr<RematResult> fitted = Rematerialize(graph, budget, options);
  if (!fitted.ok()) return fitted.status();
  if (absl::Status s = WriteOutputs(*fitted); !s.ok()) return s;
  PrintSummary(graph, *fitted, budget);
  return absl::OkStatus();
}

// The number of ops up to which the exact search usually proves its cost
// within the default work limit.
constexpr int kExactOps = 60;

std::string HeuristicHint(const Graph& graph) {
  return absl::StrCat("graph \"", graph.name, "\" has ", graph.ops.size(),
                      " ops, and --exact suits graphs of up to about ",
                      kExactOps, ": drop --exact for the heuristic");
}

// Why the search did not prove its cost least.
std::string NotProvenReason(const RematExactResult& fitted,
                            const RematExactOptions& exact) {
  std::vector<std::string> reasons;
  if (fitted.heuristic) {
    reasons.push_back(
        fitted.searches > 0
            ? "the heuristic's rewrite, outside the search's model, costs less"
            : "the heuristic's rewrite, outside the search's model, fits "
              "where none of the model does");
  }
  if (fitted.work >= exact.work_limit) {
    reasons.push_back("work limit reached: raise --work-limit");
  } else if (exact.deadline != absl::InfiniteFuture() &&
             absl::Now() >= exact.deadline) {
    reasons.push_back("time limit reached: raise --time-limit");
  } else if (!fitted.heuristic) {
    reasons.push_back(
        "the placed peak exceeded the live bytes, so the search lowered its "
        "bound");
  }
  return absl::StrJoin(reasons, "; ");
}

// --exact: RematerializeExact with the planning flags' effort, one unit
// for the search (--work-limit, its default, or the --time-limit's share)
// and a deadline --time-limit from now.
absl::Status RunExact(const Graph& graph, const PlanMemoryOptions& options) {
  const Bytes budget = absl::GetFlag(FLAGS_budget).bytes;
  const RematExactOptions exact = RematExactOptionsFor(options);
  absl::StatusOr<RematExactResult> fitted =
      RematerializeExact(graph, budget, exact);
  if (absl::IsResourceExhausted(fitted.status()) &&
      static_cast<int>(graph.ops.size()) > kExactOps) {
    return absl::ResourceExhaustedError(
        absl::StrCat(fitted.status().message(), "; ", HeuristicHint(graph)));
  }
  if (!fitted.ok()) return fitted.status();
  if (absl::Status s = WriteOutputs(fitted->remat); !s.ok()) return s;
  PrintSummary(graph, fitted->remat, budget);
  std::cout << "search: "
            << (fitted->proven
                    ? "least added cost, proven"
                    : absl::StrCat("not proven (",
                                   NotProvenReason(*fitted, exact), ")"));
  if (fitted->searches > 0) {
    std::cout << " (" << fitted->work << " work units, " << fitted->searches
              << (fitted->searches == 1 ? " search)" : " searches)");
  }
  std::cout << "\n";
  if (!fitted->proven && static_cast<int>(graph.ops.size()) > kExactOps) {
    std::cerr << "memplan remat: " << HeuristicHint(graph) << "\n";
  }
  return absl::OkStatus();
}

absl::Status RunSweep(const Graph& graph, const PlanMemoryOptions& options) {
  absl::StatusOr<std::vector<RematSweepPoint>> sweep =
      RematSweep(graph, absl::GetFlag(FLAGS_sweep), options);
  if (!sweep.ok()) return sweep.status();
  const Costs costs = CostsOf(graph);
  std::cout << absl::StrFormat("%14s %14s %14s %12s %8s\n", "budget",
                               "peak reached", "added cost", "% of cost",
                               "ops");
  for (const RematSweepPoint& p : *sweep) {
    std::cout << absl::StrFormat(
        "%14d %14d %14.6g %12s %8d\n", p.budget, p.peak, p.added_cost,
        Percent(p.added_cost, costs.total), p.recomputed);
  }
  if (sweep->size() == 1) {
    int recomputable = 0;
    for (const Op& op : graph.ops) recomputable += op.recomputable;
    std::cerr << "memplan remat: no recomputation lowers the peak of graph \""
              << graph.name << "\" (" << recomputable << " of its "
              << graph.ops.size() << " ops are marked \"recomputable\")\n";
  }
  return absl::OkStatus();
}

absl::Status Run(const Arguments& args) {
  PlanMemoryOptions options;
  options.planner = absl::GetFlag(FLAGS_planner);
  options.plan = PlanOptionsFromFlags(args);
  options.build = BuildOptionsFromFlags();
  absl::StatusOr<PlannerOptions> planner_options = PlannerOptionsFromFlags();
  if (!planner_options.ok()) return planner_options.status();
  options.planner_options = *std::move(planner_options);
  absl::StatusOr<LoadedInput> input =
      LoadToolInput(args.positional[0], options.build, "");
  if (!input.ok()) return input.status();
  if (!input->graph.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", args.positional[0],
                     "\" is a buffer list: recomputation needs a graph "
                     "(ops with \"cost\" and \"recomputable\")"));
  }
  if (args.Given("sweep")) return RunSweep(*input->graph, options);
  if (absl::GetFlag(FLAGS_exact)) return RunExact(*input->graph, options);
  return RunBudget(*input->graph, options);
}

}  // namespace

Command RematCommand() {
  Command command{
      .name = "remat",
      .synopsis = "INPUT (--budget=SIZE [--exact] | --sweep=N) [flags]",
      .description =
          "Fits a training step (a graph JSON whose ops carry \"cost\" and "
          "\"recomputable\") into --budget bytes by running chosen ops again "
          "before later readers of their outputs, freeing the outputs in "
          "between, at the least added cost the heuristic finds (docs/"
          "remat.md). Prints the peak without recomputation, the peak "
          "reached, the added cost (and its share of the graph's cost) and "
          "the ops recomputed. --graph-out writes the rewritten graph, "
          "--out its plan (memplan-plan-v1 JSON, verified; `memplan verify "
          "GRAPH PLAN` checks both). A budget below the smallest peak found "
          "is an error that gives that peak. --exact searches for the least "
          "added cost and proves it (within the stage model over the "
          "graph's own order, and --work-limit; for graphs of up to about "
          "60 ops); the summary says whether it was proven. --sweep=N "
          "instead prints a "
          "table: N budgets evenly spaced from the peak without "
          "recomputation down to the smallest peak reached, each planned "
          "and verified, with the peak, the added cost and the ops "
          "recomputed.",
      .min_positional = 1,
      .max_positional = 1,
      .check = &Check,
      .run = &Run,
  };
  command.flags = {"budget", "sweep", "exact",    "planner",
                   "option", "out",   "graph_out"};
  for (const std::string& f : PlanningFlags()) command.flags.push_back(f);
  for (const std::string& f : InputFlags()) command.flags.push_back(f);
  return command;
}

}  // namespace memplan::tool

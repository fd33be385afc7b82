// memplan report: what a plan looks like over time, as text or as one
// self-contained HTML page.

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "commands.h"
#include "input.h"
#include "memplan/formats.h"
#include "memplan/load.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/reorder.h"
#include "memplan/report.h"
#include "memplan/report_html.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_memplan.h"
#include "progress.h"
#include "symbolic_input.h"

ABSL_FLAG(std::string, html, "",
          "FILE: write the interactive report there (one self-contained HTML "
          "page) instead of printing the text report");

namespace memplan::tool {
namespace {

absl::Status Check(const Arguments& args) {
  if (args.Given("planner") && args.Given("planners")) {
    return absl::InvalidArgumentError(
        "--planner and --planners exclude each other");
  }
  if (args.Given("planners") && absl::GetFlag(FLAGS_planners).empty()) {
    return absl::InvalidArgumentError("--planners names no planner");
  }
  if (args.Given("html") && absl::GetFlag(FLAGS_html).empty()) {
    return absl::InvalidArgumentError("--html needs a FILE");
  }
  if (args.Given("html") && absl::GetFlag(FLAGS_html) == args.positional[0]) {
    return absl::InvalidArgumentError("--html would overwrite INPUT");
  }
  if (absl::Status s =
          CheckPlannerName("planner", absl::GetFlag(FLAGS_planner));
      !s.ok()) {
    return s;
  }
  for (const std::string& name : absl::GetFlag(FLAGS_planners)) {
    if (absl::Status s = CheckPlannerName("planners", name); !s.ok()) return s;
  }
  if (args.Given("option") && args.Given("planners")) {
    return absl::InvalidArgumentError(
        "--option sets options of --planner, not of --planners");
  }
  if (absl::Status s = CheckPlannerOptions(absl::GetFlag(FLAGS_planner));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckPlanningFlags(); !s.ok()) return s;
  return CheckInputFlags();
}

// The plans shown: PLAN (a buffer CSV with offsets may be its own PLAN),
// then those of --planners, or --planner's (the default
// planner's) when nothing else gives a plan. A planner of --planners without
// a plan is listed with its reason, as compare does.
// Whether `path` is a buffer CSV with an offset column: its own PLAN.
absl::StatusOr<bool> IsCsvPlan(const std::string& path) {
  if (!absl::EndsWith(path, ".csv") && !absl::EndsWith(path, ".csv.gz")) {
    return false;
  }
  absl::StatusOr<PlanFile> file = ReadPlanFile(path, ReadOptionsFromFlags());
  if (!file.ok()) return file.status();
  absl::StatusOr<BufferCsv> csv = ParseBufferCsv(file->text);
  if (!csv.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", csv.status().message()));
  return csv->plan.has_value();
}

// The values of the dims a symbolic report is shown at: those of --dim, the
// other dims at their maxima (listed in `at_max`).
absl::StatusOr<DimValues> ShownValues(const Arguments& args, const Graph& graph,
                                      std::vector<std::string>& at_max) {
  absl::StatusOr<DimValues> given = DimFlagValues();
  if (!given.ok()) return given.status();
  // An ONNX model's importer has bound the dims --dim gives a value: they
  // are no longer the graph's.
  if (absl::EndsWith(args.positional[0], ".onnx")) {
    std::erase_if(*given,
                  [&](const auto& v) { return !graph.dims.contains(v.first); });
  }
  if (absl::Status s = CheckDimValues(graph.dims, *given); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--dim: ", s.message()));
  }
  DimValues values = *given;
  for (const auto& [name, range] : graph.dims) {
    if (values.emplace(name, range.max).second) at_max.push_back(name);
  }
  return values;
}

// A bucket's peak in the dims of the graph at some values: `at`, the
// expression, holds over `range`. A bucket counted in steps
// (SymbolicBucket::steps) has its peak in seq_div and seq_mod: within the
// step of the values (seq_div fixed) it is a polynomial in seq, `at`; over
// the whole bucket `whole` gives it in seq and seq_div = floor(seq / step)
// (empty without steps).
struct PeakText {
  std::string at;
  std::string range;
  std::string whole;
};

absl::StatusOr<PeakText> PeakInGraphDims(const SymbolicBucket& bucket,
                                         const DimValues& values) {
  DimValues divs;
  std::map<std::string, DimExpr> mods, whole_mods;
  std::vector<std::string> floors;
  DimRanges range = bucket.dims;
  for (const auto& [dim, step] : bucket.steps) {
    if (step < 2) continue;
    const int64_t q = values.at(dim) / step;
    divs[StepDivName(dim)] = q;
    absl::StatusOr<DimExpr> mod =
        Subtract(DimExpr::Dim(dim), DimExpr(q * step));
    if (!mod.ok()) return mod.status();
    mods[StepModName(dim)] = *std::move(mod);
    absl::StatusOr<DimExpr> steps =
        Multiply(DimExpr(step), DimExpr::Dim(StepDivName(dim)));
    if (!steps.ok()) return steps.status();
    absl::StatusOr<DimExpr> rest = Subtract(DimExpr::Dim(dim), *steps);
    if (!rest.ok()) return rest.status();
    whole_mods[StepModName(dim)] = *std::move(rest);
    floors.push_back(
        absl::StrCat(StepDivName(dim), " = floor(", dim, " / ", step, ")"));
    DimRange& r = range[dim];
    r = {std::max(r.min, q * step), std::min(r.max, q * step + step - 1)};
  }
  absl::StatusOr<DimExpr> peak = bucket.plan.peak.Bind(divs);
  if (!peak.ok()) return peak.status();
  absl::StatusOr<DimExpr> in_dims = peak->Substitute(mods);
  if (!in_dims.ok()) return in_dims.status();
  PeakText text{in_dims->ToString(), RangesText(range), ""};
  if (floors.empty()) return text;
  absl::StatusOr<DimExpr> whole = bucket.plan.peak.Substitute(whole_mods);
  if (!whole.ok()) return whole.status();
  text.whole = absl::StrCat(whole->ToString(), " bytes, where ",
                            absl::StrJoin(floors, ", "), ", for ",
                            RangesText(bucket.dims));
  return text;
}

// The facts of a symbolic report's page: the values shown, the plan's
// range and buckets, the bucket of the values, its peak expression in the
// graph's dims and the range it holds for, the arena there.
std::vector<HtmlReportFact> SymbolicFacts(
    const SymbolicGraphPlan& plan, const SymbolicBucket& bucket,
    const DimValues& values, const std::vector<std::string>& at_max,
    const PeakText& peak, const std::string& arena) {
  std::vector<HtmlReportFact> facts;
  std::string shown = ValuesText(values);
  if (!at_max.empty()) {
    absl::StrAppend(&shown, " (", absl::StrJoin(at_max, ", "),
                    at_max.size() == 1 ? " at its" : " at their", " maximum)");
  }
  facts.push_back({"dims", "shown at", shown});
  size_t index = 0;
  while (index < plan.buckets.size() && &plan.buckets[index] != &bucket) {
    ++index;
  }
  facts.push_back(
      {"plan", "symbolic plan",
       absl::StrCat("one plan valid for every value of ",
                    RangesText(plan.problem.dims), ", in ", plan.buckets.size(),
                    plan.buckets.size() == 1 ? " bucket" : " buckets", " (",
                    plan.planner, ")")});
  facts.push_back(
      {"bucket", "bucket",
       absl::StrCat(index + 1, " of ", plan.buckets.size(), ": ",
                    RangesText(bucket.dims), StepsText(bucket.steps))});
  facts.push_back({"peak-expression", "peak",
                   absl::StrCat(peak.at, " bytes, for ", peak.range)});
  if (!peak.whole.empty()) {
    facts.push_back({"bucket-expression", "bucket's peak", peak.whole});
  }
  facts.push_back({"arena", "arena there", arena});
  return facts;
}

// The lines above a symbolic report: the plan's buckets, the values shown,
// the arena there against the lower bound `lb` and the upper-bound plan's
// `baseline`.
std::string SymbolicHead(const Graph& graph, const SymbolicGraphPlan& plan,
                         const SymbolicBucket& bucket, const DimValues& values,
                         const std::vector<std::string>& at_max,
                         const PeakText& peak, const std::string& arena) {
  std::string head = absl::StrCat("symbolic plan of \"", graph.name,
                                  "\", one plan valid for every value of ",
                                  RangesText(plan.problem.dims), ": ");
  if (plan.buckets.size() == 1) {
    absl::StrAppend(&head,
                    "one bucket, the same offsets over the whole "
                    "range\n");
  } else {
    std::vector<std::string> ranges;
    for (const SymbolicBucket& b : plan.buckets) {
      ranges.push_back(RangesText(b.dims));
    }
    absl::StrAppend(&head, plan.buckets.size(), " buckets (",
                    absl::StrJoin(ranges, "; "), "), this value in ",
                    RangesText(bucket.dims), "\n");
  }
  absl::StrAppend(&head, "shown at ", ValuesText(values));
  if (!at_max.empty()) {
    absl::StrAppend(&head, " (", absl::StrJoin(at_max, ", "),
                    at_max.size() == 1 ? " at its" : " at their",
                    " maximum; --dim NAME=VALUE for another value)");
  }
  absl::StrAppend(&head, "\npeak there: ", peak.at, " bytes, for ", peak.range);
  if (!peak.whole.empty()) {
    absl::StrAppend(&head, "\nthe bucket's peak: ", peak.whole);
  }
  absl::StrAppend(&head, "\narena there: ", arena, "\n\n");
  return head;
}

// "6513000 bytes, the bucket's peak ... (1.000 x the lower bound 6513000);
// the upper-bound plan ...": the arena at the values shown against the lower
// bound `lb` and the upper-bound plan's `baseline`.
std::string ArenaText(const SymbolicBucket& bucket, int64_t arena, Bytes lb,
                      int64_t baseline) {
  auto ratio = [&](int64_t bytes) {
    return lb > 0 ? absl::StrFormat("%.3f", static_cast<double>(bytes) / lb)
                  : std::string("-");
  };
  return absl::StrCat(arena, " bytes, the bucket's peak ",
                      bucket.plan.peak.ToString(), StepsText(bucket.steps),
                      " (", ratio(arena), " x the lower bound ", lb,
                      "); the upper-bound plan (planned at the maxima, used "
                      "at every value): ",
                      baseline, " bytes (", ratio(baseline), " x)");
}

// The text report of a symbolic plan on stdout, or its page written to
// --html.
absl::Status WriteSymbolic(const Arguments& args, const std::string& head,
                           HtmlReportInput& html, const GraphPlan& at) {
  const std::string path = absl::GetFlag(FLAGS_html);
  if (path.empty()) {
    std::cout << head << FormatTextReport(html.plans.front());
    return absl::OkStatus();
  }
  const std::string& name = args.positional[0];
  html.title = name.substr(name.rfind('/') + 1);
  if (absl::Status s = WriteFile(path, RenderHtmlReport(html)); !s.ok()) {
    return s;
  }
  std::cerr << head << path << ": " << PlanSummary(at.problem, at.plan) << "\n";
  return absl::OkStatus();
}

// The report of a graph with symbolic dims: its symbolic plan
// (PlanSymbolicMemory), one plan for every value of the dims, shown at the
// values of --dim, the other dims at their maxima.
absl::Status RunSymbolic(const Arguments& args, const Graph& graph) {
  if (args.Given("reorder")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--reorder: graph \"", graph.name, "\" has symbolic dims (",
        RangesText(graph.dims), "), planned in its own op order"));
  }
  std::vector<std::string> at_max;
  absl::StatusOr<DimValues> shown = ShownValues(args, graph, at_max);
  if (!shown.ok()) return shown.status();
  const DimValues& values = *shown;
  SymbolicPlanMemoryOptions options;
  options.build = BuildOptionsFromFlags();
  const absl::Time start = absl::Now();
  const PlanOptions limits = PlanOptionsFromFlags(args);
  options.search.work_limit = limits.work_limit;
  options.search.time_limit = limits.time_limit;
  absl::StatusOr<SymbolicGraphPlan> plan;
  {
    ProgressLines progress(ProgressWanted(args), 0, "symbolic plan");
    options.progress = progress.StageCallback();
    plan = PlanSymbolicMemory(graph, options);
    progress.Finish(SymbolicStopReason(plan.ok(), limits, absl::Now() - start));
  }
  if (!plan.ok()) return plan.status();
  absl::StatusOr<GraphPlan> at = plan->At(graph, values);
  if (!at.ok()) return at.status();
  // The time planned is that of the whole range's plan.
  at->plan.wall_time = absl::Now() - start;
  absl::StatusOr<Graph> bound = BindDims(graph, values);
  if (!bound.ok()) return bound.status();
  const SymbolicBucket* bucket = plan->Find(values);
  absl::StatusOr<SymbolicPlan> upper = PlanSymbolicUpperBound(plan->problem);
  if (!upper.ok()) return upper.status();
  absl::StatusOr<int64_t> arena = bucket->PeakAt(values);
  // The bound of the graph bound there (its sizes, not the reserves).
  absl::StatusOr<Problem> own = BuildProblem(*bound, options.build);
  if (!own.ok()) return own.status();
  const Bytes lb = LowerBound(*own);
  absl::StatusOr<int64_t> baseline = upper->peak.Evaluate(values);
  for (const absl::Status& s : {arena.status(), baseline.status()}) {
    if (!s.ok()) return s;
  }
  absl::StatusOr<PlanReport> report =
      AnalyzePlan(at->problem, at->plan, &*bound);
  if (!report.ok()) return report.status();
  absl::StatusOr<PeakText> peak = PeakInGraphDims(*bucket, values);
  if (!peak.ok()) return peak.status();
  const std::string arena_text = ArenaText(*bucket, *arena, lb, *baseline);
  const std::string head =
      SymbolicHead(graph, *plan, *bucket, values, at_max, *peak, arena_text);
  HtmlReportInput html;
  html.facts = SymbolicFacts(*plan, *bucket, values, at_max, *peak, arena_text);
  html.plans.push_back(*std::move(report));
  return WriteSymbolic(args, head, html, *at);
}

// PLAN, which joins `plans`, and the input it was made of.
absl::Status ReadReportedPlan(const Arguments& args,
                              absl::StatusOr<LoadedInput>& input,
                              BuildOptions& build, std::string& reorder,
                              std::vector<Plan>& plans) {
  // INPUT as PLAN was made of it, as verify reads it.
  absl::StatusOr<PlanFile> file =
      ReadPlanFile(args.positional.back(), ReadOptionsFromFlags());
  if (!file.ok()) return file.status();
  absl::StatusOr<PlanInput> of_plan =
      LoadInputOfPlan(args.positional[0], *file, args);
  if (!of_plan.ok()) return of_plan.status();
  // What the plan holds for besides INPUT's own declarations.
  for (const std::string& note : of_plan->build.notes) {
    std::cerr << file->path << ": " << note << "\n";
  }
  input = std::move(of_plan->input);
  build = of_plan->build.build;
  reorder = of_plan->build.reorder;
  absl::StatusOr<Plan> plan = ParseToolPlan(*file, input->problem);
  if (!plan.ok()) return plan.status();
  if (plan->planner.empty()) plan->planner = "plan file";
  plans.push_back(std::move(*plan));
  return absl::OkStatus();
}

// The plans of --planner or --planners, which join `plans`; a planner of
// --planners that fails joins html.failures, as does --planner's when it
// runs out of capacity (`failed` is then its status). `made_here` says when
// the default planner made a plan here.
absl::Status PlanWithEach(const Arguments& args, const LoadedInput& input,
                          const PlanOptions& plan_options,
                          std::vector<Plan>& plans, HtmlReportInput& html,
                          std::string& made_here, absl::Status& failed) {
  std::vector<std::string> planners = absl::GetFlag(FLAGS_planners);
  if (planners.empty() && plans.empty()) {
    planners.push_back(absl::GetFlag(FLAGS_planner));
  }
  PlanMemoryOptions options;
  options.plan = plan_options;
  if (!args.Given("planners")) {  // --option is --planner's (Check)
    absl::StatusOr<PlannerOptions> planner_options = PlannerOptionsFromFlags();
    if (!planner_options.ok()) return planner_options.status();
    options.planner_options = *std::move(planner_options);
  }
  // A plan of the default planner made here says so: best searches only
  // while its searches still find smaller plans (its option patience).
  for (const std::string& name : planners) {
    options.planner = name;
    absl::StatusOr<Plan> plan;
    plan = PlanShowingProgress(args, input.problem, options);
    if (plan.ok() && (name.empty() || name == DefaultPlannerName()) &&
        !args.Given("option")) {
      made_here = absl::StrCat(
          "planned here by ", std::string(DefaultPlannerName()),
          ", the default planner, which stops searching once its searches "
          "stop finding smaller plans or the plan is within 0.2 % of the "
          "lower bound (for the whole budget: --option patience=0 --option "
          "enough=0, or --planner=exact)\n");
    }
    if (plan.ok()) {
      plans.push_back(std::move(*plan));
    } else if (args.Given("planners") ||
               absl::IsResourceExhausted(plan.status())) {
      // Out of capacity: the report still shows the live bytes against it.
      html.failures.push_back(
          {name.empty() ? std::string(DefaultPlannerName()) : name,
           std::string(plan.status().message())});
      if (!args.Given("planners")) failed = plan.status();
    } else {
      return plan.status();
    }
  }
  return absl::OkStatus();
}

// The text reports on stdout, or the HTML report written to --html.
absl::Status WriteReports(const Arguments& args, const LoadedInput& input,
                          const std::vector<Plan>& plans, HtmlReportInput& html,
                          const std::string& made_here) {
  const std::string path = absl::GetFlag(FLAGS_html);
  if (path.empty()) {
    std::cout << made_here;
    for (size_t i = 0; i < html.plans.size(); ++i) {
      std::cout << (i > 0 ? "\n" : "") << FormatTextReport(html.plans[i]);
    }
    for (const HtmlPlanFailure& failure : html.failures) {
      std::cout << "\nplanner " << failure.planner
                << ": no plan: " << failure.message << "\n";
    }
    return absl::OkStatus();
  }
  const std::string& name = args.positional[0];
  html.title = name.substr(name.rfind('/') + 1);
  if (absl::Status s = WriteFile(path, RenderHtmlReport(html)); !s.ok()) {
    return s;
  }
  std::cerr << made_here;
  for (const Plan& plan : plans) {
    std::cerr << path << ": " << PlanSummary(input.problem, plan) << "\n";
  }
  for (const HtmlPlanFailure& failure : html.failures) {
    std::cerr << path << ": planner " << failure.planner
              << ": no plan: " << failure.message << "\n";
  }
  for (const PlanReport& report : html.plans) {
    if (report.planned) continue;
    std::cerr << path << ": the live bytes of the input: lower bound "
              << report.lower_bound << " bytes, capacity "
              << (report.capacity > 0 ? absl::StrCat(report.capacity)
                                      : std::string("unbounded"))
              << ", " << report.missing << " bytes missing\n";
  }
  return absl::OkStatus();
}

// The facts of a plan in an op order other than the graph's own (--reorder,
// or a plan file's recorded order): the ordering, the op order used, the
// lower bound in the graph's own order and in this one, and the bound over
// all orders. Also as lines in `head` for the text report.
absl::Status AddOrderFacts(const LoadedInput& input, const BuildOptions& build,
                           const std::string& reorder,
                           const std::optional<OrderLowerBound>& bound,
                           HtmlReportInput& html, std::string& head) {
  if (!input.graph.has_value()) return absl::OkStatus();
  const std::vector<int>& order = input.op_order;
  int moved = 0;
  std::vector<int> inverse(order.size());
  for (size_t step = 0; step < order.size(); ++step) {
    inverse[order[step]] = static_cast<int>(step);
    if (order[step] != static_cast<int>(step)) ++moved;
  }
  if (moved == 0 && reorder.empty()) return absl::OkStatus();
  absl::StatusOr<Problem> own =
      BuildProblem(PermuteOps(*input.graph, inverse), build);
  if (!own.ok()) return own.status();
  const std::string how =
      absl::StrCat("reordered", reorder.empty() ? "" : " by " + reorder, ": ",
                   moved == 0 ? "the file's own order kept, no op moved"
                              : absl::StrCat(moved, " of ", order.size(),
                                             " ops run at another step than "
                                             "in the file"));
  std::vector<std::string> names;
  for (size_t step = 0; step < order.size() && step < 12; ++step) {
    names.push_back(input.graph->ops[step].name);
  }
  std::string used = absl::StrJoin(names, ", ");
  if (order.size() > names.size()) {
    absl::StrAppend(&used, ", ... ", order.size() - names.size(), " more");
  }
  const std::string own_text =
      absl::StrCat("lower bound ", LowerBound(*own), " bytes; in this order ",
                   LowerBound(input.problem), " bytes");
  html.facts.push_back({"reordered", "op order", how});
  html.facts.push_back({"op-order", "ops in the order used", used});
  html.facts.push_back({"own-order", "the graph's own order", own_text});
  absl::StrAppend(&head, "op order: ", how,
                  "\nthe graph's own order: ", own_text, "\n");
  const std::string any = OrderBoundLine(input, bound);
  if (!any.empty()) {
    html.facts.push_back(
        {"order-bound", "any op order", any.substr(any.find(':') + 2)});
  }
  return absl::OkStatus();
}

absl::Status Run(const Arguments& args) {
  absl::StatusOr<LoadedInput> input;
  BuildOptions build = BuildOptionsFromFlags();
  // What is left of the limits for planning once --reorder took its share.
  PlanOptions plan_options = PlanOptionsFromFlags(args);
  std::vector<Plan> plans;
  HtmlReportInput html;
  std::string reorder = absl::GetFlag(FLAGS_reorder);  // or the plan's
  absl::StatusOr<bool> own_plan = IsCsvPlan(args.positional[0]);
  if (!own_plan.ok()) return own_plan.status();
  // A symbolic graph, with no PLAN and no planner named: its symbolic plan.
  if (args.positional.size() == 1 && !*own_plan && !args.Given("planner") &&
      !args.Given("planners") && !args.Given("option")) {
    absl::StatusOr<std::optional<Graph>> symbolic =
        ReadSymbolicGraph(args.positional[0], /*bind_values=*/false);
    if (!symbolic.ok()) return symbolic.status();
    if (symbolic->has_value()) return RunSymbolic(args, **symbolic);
  }
  if (args.positional.size() == 2 || *own_plan) {
    if (absl::Status s = ReadReportedPlan(args, input, build, reorder, plans);
        !s.ok()) {
      return s;
    }
  } else {
    // --reorder's search and the planning share the limits.
    input = LoadToolInput(args.positional[0], build, reorder, nullptr,
                          SplitOrderingEffort(reorder, plan_options));
    if (!input.ok()) return input.status();
  }
  const bool from_file = !plans.empty();
  std::string made_here;
  absl::Status failed;
  if (absl::Status s = PlanWithEach(args, *input, plan_options, plans, html,
                                    made_here, failed);
      !s.ok()) {
    return s;
  }
  const Graph* graph = input->graph.has_value() ? &*input->graph : nullptr;
  absl::StatusOr<std::optional<OrderLowerBound>> order_bound =
      InputOrderBound(*input, build);
  if (!order_bound.ok()) return order_bound.status();
  for (const Plan& plan : plans) {
    absl::StatusOr<PlanReport> report =
        AnalyzePlan(input->problem, plan, graph);
    if (!report.ok()) return report.status();
    if (order_bound->has_value()) {
      report->order_lower_bound = (*order_bound)->bytes;
      if ((*order_bound)->op >= 0) {
        report->order_lower_bound_op =
            absl::StrCat("\"", graph->ops[(*order_bound)->op].name, "\"");
      }
    }
    report->planned_here = !(from_file && html.plans.empty());
    html.plans.push_back(std::move(*report));
  }
  if (plans.empty()) {  // no plan: the live bytes against the capacity
    absl::StatusOr<PlanReport> report = AnalyzeLiveBytes(input->problem, graph);
    if (!report.ok()) return report.status();
    html.plans.push_back(*std::move(report));
  }
  if (absl::Status s =
          AddOrderFacts(*input, build, reorder, *order_bound, html, made_here);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteReports(args, *input, plans, html, made_here);
      !s.ok()) {
    return s;
  }
  return failed;
}

}  // namespace

Command ReportCommand() {
  Command command{
      .name = "report",
      .synopsis = "INPUT [PLAN] [flags]",
      .description =
          "Shows where the memory of a plan of INPUT goes: PLAN (a plan file; "
          "a buffer CSV with offsets is its own PLAN; INPUT is built with the "
          "flags a JSON PLAN records unless build flags are given, and must "
          "have the contents PLAN was made of, as for verify), or a fresh "
          "plan by "
          "--planner (the default planner when none is named), or several "
          "side by side with --planners. Prints the peak, the lower bound and "
          "the pools, the step of the most live bytes with the tensors alive "
          "there largest first, live bytes per op and a chart of the arena "
          "over time, in 100 columns. With --html=FILE writes one "
          "self-contained interactive page instead: the placement of every "
          "buffer (hover for its tensors, zoom, pan), the live bytes against "
          "the peak and the lower bound, pools and fragmentation. A graph "
          "with symbolic dims (no PLAN, no planner named) shows its symbolic "
          "plan, one plan valid over the dims' ranges, at the values of "
          "--dim (the other dims at their maxima), beside the lower bound "
          "and the upper-bound plan there, its peak as an expression in the "
          "dims. When no plan fits the capacity, the report shows the live "
          "bytes against it and the bytes missing, and the command fails.",
      .min_positional = 1,
      .max_positional = 2,
      .check = &Check,
      .run = &Run,
  };
  command.flags = {"html",     "planner", "option",
                   "planners", "quiet",   "progress"};
  for (const std::string& f : PlanningFlags()) command.flags.push_back(f);
  for (const std::string& f : InputFlags()) command.flags.push_back(f);
  return command;
}

}  // namespace memplan::tool

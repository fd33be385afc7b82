// Reports and emitters: a plan as JSON, CSV, a C header, TFLite Micro's
// offline plan, and the text and HTML reports of `memplan report`.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "memplan/emit.h"
#include "memplan/io.h"
#include "memplan/reorder.h"
#include "memplan/report.h"
#include "memplan/report_html.h"
#include "module.h"

namespace memplan::python {
namespace {

// PlanToJson with the graph's tensor table and, when `input` names the file
// planned, the provenance the tool records (so that `memplan verify` needs
// no flags).
std::string PlanJson(const PlanResult& r,
                     const std::optional<std::string>& input, bool wall_time) {
  PlanJsonOptions options;
  options.graph = r.GraphOrNull();
  options.wall_time = wall_time;
  if (input.has_value()) {
    const std::string bytes = Take(ReadFile(*input), /*file=*/true);
    options.provenance = PlanProvenance{.input = *input,
                                        .input_hash = ContentHash(bytes),
                                        .build = r.build,
                                        .reorder = r.reorder};
  }
  return PlanToJson(r.problem, r.plan, options);
}

TextReportOptions TextOptions(int width, int max_table_rows, int max_chart_rows,
                              int max_peak_tensors) {
  if (width < 40) throw py::value_error("width must be at least 40");
  return TextReportOptions{.width = width,
                           .max_table_rows = max_table_rows,
                           .max_chart_rows = max_chart_rows,
                           .max_peak_tensors = max_peak_tensors};
}

// The plan's report with the lower bound over op orders of its graph, as
// the tool's report shows it.
PlanReport Analyze(const PlanResult& r) {
  PlanReport report = Take(AnalyzePlan(r.problem, r.plan, r.GraphOrNull()));
  report.planned_here = !r.from_file;
  if (const Graph* graph = r.GraphOrNull()) {
    const std::optional<OrderLowerBound> bound =
        Take(LowerBoundOverOrders(*graph, r.build));
    if (bound.has_value()) {
      report.order_lower_bound = bound->bytes;
      if (bound->op >= 0) {
        report.order_lower_bound_op =
            absl::StrCat("\"", graph->ops[bound->op].name, "\"");
      }
    }
  }
  return report;
}

std::string HtmlReport(
    const std::vector<const PlanResult*>& plans, const std::string& title,
    const std::vector<std::pair<std::string, std::string>>& failures) {
  HtmlReportInput input;
  input.title = title;
  for (const PlanResult* r : plans) {
    const Problem& first = plans.front()->problem;
    if (r->problem.buffers.size() != first.buffers.size()) {
      throw py::value_error(
          "the plans of one report must place the same buffers");
    }
    for (size_t b = 0; b < first.buffers.size(); ++b) {
      const Buffer& x = first.buffers[b];
      const Buffer& y = r->problem.buffers[b];
      if (x.name != y.name || x.size != y.size || x.lifetime != y.lifetime) {
        throw py::value_error(absl::StrCat(
            "the plans of one report must place the same buffers: buffer ", b,
            " is \"", x.name, "\" in the first plan, \"", y.name,
            "\" (or of another size or lifetime) in plan \"", r->plan.planner,
            "\""));
      }
    }
    input.plans.push_back(Analyze(*r));
  }
  for (const auto& [planner, message] : failures) {
    input.failures.push_back({planner, message});
  }
  return RenderHtmlReport(input);
}

}  // namespace

void DefPlanEmitters(py::class_<PlanResult>& cls) {
  cls.def("to_json", &PlanJson, py::arg("input") = py::none(),
          py::arg("wall_time") = false,
          "memplan-plan-v1 JSON as the tool writes it: with a graph, every "
          "tensor's place; with `input` (the path of the file planned), its "
          "name and hash and the build options, so that `memplan verify` "
          "needs no flags")
      .def(
          "to_csv",
          [](const PlanResult& r) { return BufferCsvText(r.problem, &r.plan); },
          "the buffer CSV with an offset column (and a pool column for "
          "several pools)")
      .def(
          "to_c_header",
          [](const PlanResult& r, const std::string& name,
             const std::string& prefix) {
            return PlanToCHeader(r.problem, r.plan, r.GraphOrNull(), name,
                                 prefix);
          },
          py::arg("name") = "", py::arg("prefix") = "MEMPLAN",
          "a C99 header: each pool's size and one offset macro per tensor "
          "(memplan/emit.h); `name` is the include guard's")
      .def(
          "tflm_offline",
          [](const PlanResult& r) {
            return Take(TflmOfflinePlan(r.problem, r.plan, r.GraphOrNull()));
          },
          "TFLite Micro's offline memory plan as a list of int32: version 0, "
          "subgraph 0, the number of tensors, one offset per tensor (-1: "
          "left to the runtime)")
      .def(
          "tflm_offline_bytes",
          [](const PlanResult& r) {
            return py::bytes(TflmOfflinePlanBytes(
                Take(TflmOfflinePlan(r.problem, r.plan, r.GraphOrNull()))));
          },
          "tflm_offline() as the metadata buffer holds it (little-endian)")
      .def(
          "report_text",
          [](const PlanResult& r, int width, int max_table_rows,
             int max_chart_rows, int max_peak_tensors) {
            return FormatTextReport(
                Analyze(r), TextOptions(width, max_table_rows, max_chart_rows,
                                        max_peak_tensors));
          },
          py::kw_only(), py::arg("width") = 100,
          py::arg("max_table_rows") = 200, py::arg("max_chart_rows") = 200,
          py::arg("max_peak_tensors") = 25,
          "the text report of `memplan report` (memplan/report.h)")
      .def(
          "report_html",
          [](const PlanResult& r, const std::string& title) {
            return HtmlReport({&r}, title, {});
          },
          py::arg("title") = "",
          "the interactive report of `memplan report --html` as one "
          "self-contained page");
}

void BindReports(py::module_& m) {
  m.def(
      "report_html",
      [](const std::vector<const PlanResult*>& plans, const std::string& title,
         const std::vector<std::pair<std::string, std::string>>& failures) {
        if (plans.empty()) throw py::value_error("report_html needs a plan");
        return HtmlReport(plans, title, failures);
      },
      py::arg("plans"), py::arg("title") = "",
      py::arg("failures") = std::vector<std::pair<std::string, std::string>>{},
      "one self-contained HTML page showing plans of one and the same "
      "problem side by side, as `memplan report --planners=... --html`; "
      "failures: (planner, why it has no plan) pairs");
}

}  // namespace memplan::python

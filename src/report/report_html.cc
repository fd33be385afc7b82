// RenderHtmlReport: the page (report.html, beside this file) with the data of
// the plans embedded as JSON.

#include "memplan/report_html.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace memplan {
namespace {

// The page, with @@TITLE@@ and @@DATA@@ where the title and the data go:
// the bytes of report.html and a NUL, generated at build time
// (cmake/EmbedFile.cmake).
constexpr char kPage[] = {
#include "report_html_page.inc"
};

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON that may stand inside <script>: '<', '>' and '&' occur in JSON only
// inside strings, where \u escapes mean the same characters; so "</script>"
// or "<!--" in a name cannot end or change the element. Non-ASCII is escaped
// too, and bytes that are not UTF-8 become U+FFFD instead of an exception.
std::string ScriptSafeJson(const nlohmann::json& json) {
  const std::string text = json.dump(-1, ' ', /*ensure_ascii=*/true,
                                     nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

nlohmann::json BuffersJson(const PlanReport& report) {
  // Columns rather than objects: a third of the bytes at 30000 buffers.
  nlohmann::json tensors = nlohmann::json::array(),
                 size = nlohmann::json::array(),
                 start = nlohmann::json::array(), end = nlohmann::json::array(),
                 kind = nlohmann::json::array(),
                 producer = nlohmann::json::array(),
                 readers = nlohmann::json::array(),
                 source = nlohmann::json::array();
  for (const BufferReport& buffer : report.buffers) {
    tensors.push_back(buffer.tensors);
    size.push_back(buffer.size);
    start.push_back(buffer.lifetime.start);
    end.push_back(buffer.lifetime.end);
    kind.push_back(std::string(TensorKindName(buffer.kind)));
    producer.push_back(buffer.producer.has_value() ? *buffer.producer : -1);
    readers.push_back(buffer.readers);
    source.push_back(buffer.source);
  }
  return {{"tensors", tensors}, {"size", size},    {"start", start},
          {"end", end},         {"kind", kind},    {"producer", producer},
          {"readers", readers}, {"source", source}};
}

nlohmann::json PlanJson(const PlanReport& report) {
  nlohmann::json pool = nlohmann::json::array(),
                 offset = nlohmann::json::array();
  for (const BufferReport& buffer : report.buffers) {
    pool.push_back(buffer.pool);
    offset.push_back(buffer.offset);
  }
  nlohmann::json pools = nlohmann::json::array();
  for (const PoolReport& p : report.pools) {
    nlohmann::json entry = {{"name", p.name},
                            {"capacity", p.capacity},
                            {"used", p.used},
                            {"max_live", p.max_live},
                            {"max_live_step", p.max_live_step},
                            {"above_max_live", p.above_max_live},
                            {"fragmentation", p.fragmentation}};
    // One pool's live bytes are the plan's: sent once.
    if (report.pools.size() > 1) entry["live"] = p.live;
    pools.push_back(std::move(entry));
  }
  nlohmann::json order_bound = nullptr;
  if (report.order_lower_bound.has_value()) {
    order_bound = {{"bytes", *report.order_lower_bound},
                   {"op", report.order_lower_bound_op}};
  }
  return {{"planner", report.planner},
          {"planned", report.planned},
          {"planned_here", report.planned_here},
          {"capacity", report.capacity},
          {"missing", report.missing},
          {"order_lower_bound", order_bound},
          {"peak", report.peak},
          {"lower_bound", report.lower_bound},
          {"naive_total", report.naive_total},
          {"proven_optimal", report.proven_optimal},
          {"wall_ms", absl::ToDoubleMilliseconds(report.wall_time)},
          {"max_live", report.max_live},
          {"peak_steps", report.peak_steps},
          {"alive_at_peak", report.alive_at_peak},
          {"live", report.live},
          {"pools", pools},
          {"pool", pool},
          {"offset", offset}};
}

}  // namespace

std::string RenderHtmlReport(const HtmlReportInput& input) {
  nlohmann::json data = {{"title", input.title}};
  nlohmann::json plans = nlohmann::json::array();
  for (const PlanReport& report : input.plans)
    plans.push_back(PlanJson(report));
  data["plans"] = plans;
  nlohmann::json failures = nlohmann::json::array();
  for (const HtmlPlanFailure& failure : input.failures) {
    failures.push_back(
        {{"planner", failure.planner}, {"message", failure.message}});
  }
  data["failures"] = failures;
  nlohmann::json facts = nlohmann::json::array();
  for (const HtmlReportFact& fact : input.facts) {
    facts.push_back(
        {{"key", fact.key}, {"label", fact.label}, {"text", fact.text}});
  }
  data["facts"] = facts;
  if (!input.plans.empty()) {
    const PlanReport& first = input.plans.front();
    data["name"] = first.name;
    data["steps"] = first.steps;
    data["step_names"] = first.step_names;
    // Labels only, as text: steps may pass 2^53, where JavaScript's numbers
    // lose digits.
    nlohmann::json times = nlohmann::json::array();
    for (Step t : first.step_times) times.push_back(absl::StrCat(t));
    data["step_times"] = std::move(times);
    data["buffers"] = BuffersJson(first);
  } else {
    data["steps"] = 0;
    data["step_names"] = nlohmann::json::array();
    data["buffers"] = BuffersJson(PlanReport{});
  }

  const std::string_view page = kPage;
  const size_t title = page.find("@@TITLE@@");
  const size_t json = page.find("@@DATA@@");
  std::string out(page.substr(0, title));
  out += HtmlEscape(input.title);
  out += page.substr(title + 9, json - title - 9);
  out += ScriptSafeJson(data);
  out += page.substr(json + 8);
  return out;
}

}  // namespace memplan

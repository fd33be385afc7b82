// The interactive report: one self-contained HTML page (inline CSS and
// script, no network, no external fonts) showing plans of one input.
//
// Per plan, side by side:
//   * the placement picture of each pool: x = op step (named after the op),
//     y = offset, one rectangle per buffer coloured by tensor kind; hovering
//     a buffer shows its tensors, size, lifetime as op names, producer and
//     readers; the wheel zooms, dragging pans, a double click resets. Drawn
//     on a canvas; when a pool has more than 50000 buffers, those smaller
//     than a pixel are summed into a density grid instead of drawn one by one;
//   * the live bytes over steps against the plan's peak and the lower bound,
//     the peak step marked, and the tensors alive there, largest first;
//   * per-pool usage and fragmentation, the planner, proven optimality;
//   * the facts of what was planned (HtmlReportFact) above the plans.
// Plans side by side share one byte scale (the largest used bytes), so
// their heights compare. A report without a plan (PlanReport::planned
// false) draws the live bytes against the lower bound and the capacity and
// says how many bytes are missing.
//
// Every name (tensors, ops, pools, the title) comes from user files: the page
// carries them as JSON in a script element with '<', '>' and '&' escaped, and
// the script writes them with textContent only, so no name can inject markup.
//
// The page exposes what it drew for tests: each placement canvas carries
// data-buffers (buffers in the pool), data-drawn (rectangles drawn one per
// buffer), data-aggregated (buffers summed into the density grid) and
// data-culled (outside the view); window.memplanReport has the same counts
// and the screen position of a buffer.

#ifndef MEMPLAN_REPORT_HTML_H_
#define MEMPLAN_REPORT_HTML_H_

#include <string>
#include <vector>

#include "memplan/report.h"

namespace memplan {

struct HtmlPlanFailure {
  std::string planner;
  std::string message;  // why it has no plan (e.g. out of capacity)
};

// A line of what was planned, shown above the plans: the dim values of a
// symbolic plan, its bucket, peak expression and range; the op order of a
// reordered plan and the figures of the graph's own order.
struct HtmlReportFact {
  std::string key;    // names the row for tests and styles (data-fact)
  std::string label;  // "dims", "bucket", "op order", ...
  std::string text;
};

struct HtmlReportInput {
  std::string title;  // e.g. the input's file name
  std::vector<HtmlReportFact> facts;
  // Reports (AnalyzePlan) of plans of one and the same problem.
  std::vector<PlanReport> plans;
  // Planners asked for that gave no plan, shown with their reason.
  std::vector<HtmlPlanFailure> failures;
};

// The whole page. The plans must share their buffers (sizes and lifetimes);
// only pools and offsets differ.
std::string RenderHtmlReport(const HtmlReportInput& input);

}  // namespace memplan

#endif  // MEMPLAN_REPORT_HTML_H_

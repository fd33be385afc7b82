// AnalyzePlan and the text report.

#include "memplan/report.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "memplan/problem.h"
#include "memplan/verify.h"

namespace memplan {
namespace {

// "layer1.0.conv1 at model.py:42": the module, the file's last component
// and the line, those known.
std::string SourceText(const std::optional<TensorSource>& source) {
  if (!source.has_value()) return "";
  std::string file = source->file.substr(source->file.rfind('/') + 1);
  if (!file.empty() && source->line > 0)
    absl::StrAppend(&file, ":", source->line);
  if (source->module.empty()) return file;
  if (file.empty()) return source->module;
  return absl::StrCat(source->module, " at ", file);
}

// What the graph says about one tensor.
struct TensorFacts {
  TensorKind kind = TensorKind::kActivation;
  std::string source;
  std::optional<int> producer;
  std::vector<int> readers;
};

absl::flat_hash_map<std::string, TensorFacts> FactsOf(const Graph& graph) {
  absl::flat_hash_map<std::string, TensorFacts> facts;
  for (const Tensor& tensor : graph.tensors) {
    facts[tensor.name].kind = tensor.kind;
    facts[tensor.name].source = SourceText(tensor.source);
  }
  for (int op = 0; op < static_cast<int>(graph.ops.size()); ++op) {
    for (const std::string& name : graph.ops[op].inputs) {
      std::vector<int>& readers = facts[name].readers;
      // An op reading a tensor twice is one reader.
      if (readers.empty() || readers.back() != op) readers.push_back(op);
    }
    for (const std::string& name : graph.ops[op].outputs) {
      facts[name].producer = op;
    }
    for (const std::string& name : graph.ops[op].scratch) {
      facts[name].producer = op;
    }
  }
  return facts;
}

// The report's time axis: every step, or (PlanReport::step_times) the steps
// where a lifetime starts or ends when they are far fewer. Maps a real step
// to its row.
class TimeAxis {
 public:
  TimeAxis(const Problem& problem, const Graph* graph) {
    steps_ = graph != nullptr ? static_cast<Step>(graph->ops.size()) : 0;
    for (const Buffer& buffer : problem.buffers) {
      steps_ = std::max(steps_, buffer.lifetime.end);
    }
    const Step buffers = static_cast<Step>(problem.buffers.size());
    if (graph != nullptr || steps_ <= 2 * buffers + 2) return;
    times_.reserve(2 * problem.buffers.size() + 2);
    times_.push_back(0);
    for (const Buffer& buffer : problem.buffers) {
      times_.push_back(buffer.lifetime.start);
      times_.push_back(buffer.lifetime.end);
    }
    std::sort(times_.begin(), times_.end());
    times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
    // The last entry is the real end, steps_: every lifetime ends by it.
  }

  // Rows of the report.
  Step rows() const {
    return times_.empty() ? steps_ : static_cast<Step>(times_.size()) - 1;
  }
  // The row of real step `step` (a lifetime's start or end, or the end).
  Step RowOf(Step step) const {
    if (times_.empty()) return step;
    return std::lower_bound(times_.begin(), times_.end(), step) -
           times_.begin();
  }
  // Real steps in row `row`.
  Step Length(Step row) const {
    return times_.empty() ? 1 : times_[row + 1] - times_[row];
  }
  std::vector<Step>& times() { return times_; }

 private:
  Step steps_ = 0;
  std::vector<Step> times_;
};

// Bytes alive per row of the buffers `take` accepts (a difference array over
// the rows of the buffers' lifetimes, already in rows).
template <typename Take>
std::vector<Bytes> LiveBytes(const std::vector<BufferReport>& buffers,
                             Step rows, Take take) {
  std::vector<Bytes> delta(rows + 1, 0);
  for (const BufferReport& buffer : buffers) {
    if (!take(buffer)) continue;
    delta[buffer.lifetime.start] += buffer.size;
    delta[buffer.lifetime.end] -= buffer.size;
  }
  std::vector<Bytes> live(rows, 0);
  Bytes sum = 0;
  for (Step s = 0; s < rows; ++s) live[s] = sum += delta[s];
  return live;
}

// One BufferReport per buffer, lifetimes in the axis' rows, with the graph's
// facts about its tensors when there is a graph.
absl::StatusOr<std::vector<BufferReport>> BufferReports(const Problem& problem,
                                                        const Plan* plan,
                                                        const Graph* graph,
                                                        const TimeAxis& axis) {
  absl::flat_hash_map<std::string, TensorFacts> facts;
  if (graph != nullptr) facts = FactsOf(*graph);
  const BufferId n = static_cast<BufferId>(problem.buffers.size());
  std::vector<BufferReport> reports(n);
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    BufferReport& out = reports[b];
    out.buffer = b;
    out.tensors = buffer.tensors.empty() ? std::vector<std::string>{buffer.name}
                                         : buffer.tensors;
    out.size = buffer.size;
    out.lifetime = {axis.RowOf(buffer.lifetime.start),
                    axis.RowOf(buffer.lifetime.end)};
    if (plan != nullptr) {
      out.pool = plan->assignments[b].pool;
      out.offset = plan->assignments[b].offset;
    }
    if (graph == nullptr) continue;
    for (size_t t = 0; t < out.tensors.size(); ++t) {
      auto it = facts.find(out.tensors[t]);
      if (it == facts.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("buffer \"", buffer.name, "\": tensor \"",
                         out.tensors[t], "\" is not in the graph"));
      }
      if (t == 0) {
        out.kind = it->second.kind;
        out.producer = it->second.producer;
        out.source = it->second.source;
      }
      out.readers.insert(out.readers.end(), it->second.readers.begin(),
                         it->second.readers.end());
    }
    std::sort(out.readers.begin(), out.readers.end());
    out.readers.erase(std::unique(out.readers.begin(), out.readers.end()),
                      out.readers.end());
  }
  return reports;
}

// live, max_live, peak_steps and alive_at_peak of `report`.
void AddPeak(PlanReport& report) {
  report.live = LiveBytes(report.buffers, report.steps,
                          [](const BufferReport&) { return true; });
  for (Step s = 0; s < report.steps; ++s) {
    report.max_live = std::max(report.max_live, report.live[s]);
  }
  for (Step s = 0; s < report.steps; ++s) {
    if (report.live[s] == report.max_live) report.peak_steps.push_back(s);
  }
  if (report.peak_steps.empty()) return;
  const Step at = report.peak_steps.front();
  for (const BufferReport& buffer : report.buffers) {
    if (buffer.lifetime.start <= at && at < buffer.lifetime.end) {
      report.alive_at_peak.push_back(buffer.buffer);
    }
  }
  std::sort(report.alive_at_peak.begin(), report.alive_at_peak.end(),
            [&](BufferId a, BufferId b) {
              const Bytes sa = report.buffers[a].size;
              const Bytes sb = report.buffers[b].size;
              return sa != sb ? sa > sb : a < b;
            });
}

PoolReport PoolReportOf(const Problem& problem, const Plan& plan, PoolId p,
                        const PlanReport& report) {
  PoolReport pool;
  pool.name = problem.pools[p].name;
  pool.capacity = problem.pools[p].capacity;
  pool.used =
      p < static_cast<PoolId>(plan.pool_used.size()) ? plan.pool_used[p] : 0;
  pool.live = LiveBytes(report.buffers, report.steps,
                        [&](const BufferReport& b) { return b.pool == p; });
  for (Step s = 0; s < report.steps; ++s) {
    if (pool.live[s] > pool.max_live) {
      pool.max_live = pool.live[s];
      pool.max_live_step = s;
    }
  }
  pool.above_max_live = pool.used - pool.max_live;
  pool.fragmentation = pool.used > 0
                           ? static_cast<double>(pool.above_max_live) /
                                 static_cast<double>(pool.used)
                           : 0.0;
  return pool;
}

// The steps, buffers and peak of `report`, the buffers placed as `plan`
// places them when there is a plan.
absl::Status AddBuffers(const Problem& problem, const Plan* plan,
                        const Graph* graph, TimeAxis& axis,
                        PlanReport& report) {
  report.steps = axis.rows();
  if (graph != nullptr) {
    for (const Op& op : graph->ops) report.step_names.push_back(op.name);
    report.step_names.resize(report.steps);  // past the last op: unnamed
  }
  MEMPLAN_ASSIGN_OR_RETURN(report.buffers,
                           BufferReports(problem, plan, graph, axis));
  AddPeak(report);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PlanReport> AnalyzeLiveBytes(const Problem& problem,
                                            const Graph* graph) {
  if (absl::Status status = ValidateProblem(problem); !status.ok()) {
    return status;
  }
  PlanReport report;
  report.name = problem.name;
  report.planned = false;
  report.planned_here = false;
  report.lower_bound = LowerBound(problem);
  report.naive_total = NaiveTotal(problem);
  TimeAxis axis(problem, graph);
  MEMPLAN_RETURN_IF_ERROR(AddBuffers(problem, nullptr, graph, axis, report));
  report.step_times = std::move(axis.times());
  for (const Pool& pool : problem.pools) {
    if (pool.capacity == 0) {  // unbounded: nothing is missing
      report.capacity = 0;
      break;
    }
    report.capacity += pool.capacity;
  }
  const Bytes need =
      problem.pools.size() == 1 ? report.lower_bound : report.max_live;
  if (report.capacity > 0 && need > report.capacity) {
    report.missing = need - report.capacity;
  }
  return report;
}

absl::StatusOr<PlanReport> AnalyzePlan(const Problem& problem, const Plan& plan,
                                       const Graph* graph) {
  if (absl::Status status = VerifyPlan(problem, plan); !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan does not fit the input: ", status.message()));
  }
  PlanReport report;
  report.name = problem.name;
  report.planner = plan.planner;
  report.peak = plan.peak;
  report.lower_bound = plan.lower_bound;
  report.naive_total = plan.naive_total;
  report.proven_optimal = plan.proven_optimal;
  report.wall_time = plan.wall_time;

  TimeAxis axis(problem, graph);
  MEMPLAN_RETURN_IF_ERROR(AddBuffers(problem, &plan, graph, axis, report));
  for (PoolId p = 0; p < static_cast<PoolId>(problem.pools.size()); ++p) {
    report.pools.push_back(PoolReportOf(problem, plan, p, report));
  }
  report.step_times = std::move(axis.times());
  return report;
}

Step RealStep(const PlanReport& report, Step step) {
  if (report.step_times.empty() || step < 0 ||
      step >= static_cast<Step>(report.step_times.size())) {
    return step;
  }
  return report.step_times[step];
}

std::string StepLabel(const PlanReport& report, Step step) {
  if (step >= 0 && step < static_cast<Step>(report.step_names.size()) &&
      !report.step_names[step].empty()) {
    return absl::StrCat(report.step_names[step], " (step ", step, ")");
  }
  return absl::StrCat("step ", RealStep(report, step));
}

// ---------------------------------------------------------------------------
// The text report.

namespace {

// 9633792 -> "9.19 MiB"; small sizes stay in bytes.
std::string HumanBytes(Bytes bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.2f %s", value, kUnits[unit]);
}

// `text` cut to `width` characters, with "~" marking a cut.
std::string Fit(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  if (width == 0) return "";
  return text.substr(0, width - 1) + "~";
}

// An op name cut to `width` keeping its end, which tells ops apart better
// than a common prefix ("/layer1/layer1.0/conv1/Conv" -> "~1.0/conv1/Conv").
std::string FitTail(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  if (width == 0) return "";
  std::string out = "~";
  out.append(text, text.size() - (width - 1));
  return out;
}

double Percent(Bytes part, Bytes whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0.0;
}

std::string OpName(const PlanReport& report, Step step) {
  return step < static_cast<Step>(report.step_names.size())
             ? report.step_names[step]
             : "";
}

// The chart's symbol of the tensors alive at the peak, by rank.
char PeakKey(size_t rank) {
  static constexpr char kKeys[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return rank < sizeof(kKeys) - 1 ? kKeys[rank] : '\0';
}

// Groups of consecutive steps, at most `rows` of them, each shown by its
// step of most live bytes (`live`): {first, last, shown}.
struct StepGroup {
  Step first = 0;
  Step last = 0;
  Step shown = 0;
};
std::vector<StepGroup> GroupSteps(const std::vector<Bytes>& live, int rows) {
  const Step steps = static_cast<Step>(live.size());
  const Step per = std::max<Step>(1, (steps + rows - 1) / std::max(rows, 1));
  std::vector<StepGroup> groups;
  for (Step first = 0; first < steps; first += per) {
    StepGroup group{first, std::min(steps, first + per) - 1, first};
    for (Step s = first; s <= group.last; ++s) {
      if (live[s] > live[group.shown]) group.shown = s;
    }
    groups.push_back(group);
  }
  return groups;
}

// The real steps rows `first` .. `last` span: "12" or "12-40".
std::string StepRange(const PlanReport& report, Step first, Step last) {
  const Step begin = RealStep(report, first);
  const Step end = RealStep(report, last + 1) - 1;
  return end > begin ? absl::StrCat(begin, "-", end) : absl::StrCat(begin);
}

// The real steps of the report (the end of its last row).
Step RealSteps(const PlanReport& report) {
  return RealStep(report, report.steps);
}

// The summary of a report without a plan: the lower bound against the
// capacity and the bytes missing.
void AppendUnplannedSummary(const PlanReport& report, std::string& out) {
  absl::StrAppend(&out, "no plan: the live bytes of the input\n");
  absl::StrAppendFormat(&out, "lower bound: %d bytes (%s)\n",
                        report.lower_bound, HumanBytes(report.lower_bound));
  if (report.capacity > 0) {
    absl::StrAppendFormat(&out, "capacity: %d bytes (%s)\n", report.capacity,
                          HumanBytes(report.capacity));
  }
  if (report.missing > 0) {
    absl::StrAppendFormat(
        &out,
        "missing: %d bytes (%s): no plan fits, the live bytes of one step\n"
        "  exceed the capacity; a capacity of at least %d bytes could fit\n",
        report.missing, HumanBytes(report.missing),
        report.capacity + report.missing);
  } else {
    absl::StrAppend(&out,
                    "missing: 0 bytes: the lower bound fits the capacity, "
                    "yet no plan was found\n");
  }
  absl::StrAppendFormat(&out, "naive total: %d bytes\n", report.naive_total);
  absl::StrAppendFormat(&out, "%d buffers over %d steps\n",
                        report.buffers.size(), RealSteps(report));
}

// "planned in 1.23 ms", or where the plan comes from when it was not
// planned here.
std::string PlannedText(const PlanReport& report) {
  if (!report.planned_here) return "read from a plan file";
  return absl::StrFormat("planned in %.2f ms",
                         absl::ToDoubleMilliseconds(report.wall_time));
}

void AppendSummary(const PlanReport& report, int width, std::string& out) {
  const std::string title = absl::StrCat(
      "memplan report", report.name.empty() ? "" : ": ", report.name);
  absl::StrAppend(&out, Fit(title, width), "\n");
  if (!report.planned) {
    AppendUnplannedSummary(report, out);
    return;
  }
  absl::StrAppend(&out, Fit(absl::StrCat("planner: ", report.planner), width),
                  "\n");
  absl::StrAppendFormat(&out, "peak: %d bytes (%s), proven optimal: %s\n",
                        report.peak, HumanBytes(report.peak),
                        report.proven_optimal ? "yes" : "no");
  if (report.pools.size() == 1) {
    absl::StrAppendFormat(
        &out, "lower bound: %d bytes (peak / lower bound = %.4f)\n",
        report.lower_bound,
        report.lower_bound > 0
            ? static_cast<double>(report.peak) / report.lower_bound
            : 1.0);
    if (report.order_lower_bound.has_value()) {
      absl::StrAppend(
          &out,
          Fit(report.order_lower_bound_op.empty()
                  ? absl::StrFormat(
                        "any op order: at least %d bytes (the graph "
                        "outputs, all alive at the last step)",
                        *report.order_lower_bound)
                  : absl::StrFormat(
                        "any op order: at least %d bytes (at op %s)",
                        *report.order_lower_bound, report.order_lower_bound_op),
              width),
          "\n");
    }
    absl::StrAppendFormat(&out, "naive total: %d bytes (peak = %.2f%% of it)\n",
                          report.naive_total,
                          Percent(report.peak, report.naive_total));
  } else {
    // The peak sums the pools; the bound holds for one pool: each pool is
    // compared with its own most live bytes under "pools" instead.
    absl::StrAppendFormat(
        &out, "lower bound: %d bytes in one pool; the peak sums %d pools\n",
        report.lower_bound, report.pools.size());
    absl::StrAppendFormat(&out, "naive total: %d bytes\n", report.naive_total);
  }
  absl::StrAppendFormat(&out, "%d buffers over %d steps, %s\n",
                        report.buffers.size(), RealSteps(report),
                        PlannedText(report));
  if (!report.step_times.empty()) {
    absl::StrAppendFormat(&out,
                          "time compressed to the %d steps where a lifetime "
                          "starts or ends\n",
                          report.steps);
  }
}

void AppendPools(const PlanReport& report, std::string& out) {
  if (report.pools.empty()) return;
  absl::StrAppend(&out, "\npools:\n");
  const size_t name_width =
      std::max<size_t>(4, std::min<size_t>(20, [&] {
                         size_t w = 0;
                         for (const PoolReport& p : report.pools)
                           w = std::max(w, p.name.size());
                         return w;
                       }()));
  absl::StrAppendFormat(&out, "  %-*s %12s %12s %12s %12s %8s\n", name_width,
                        "pool", "capacity", "used", "max live", "above max",
                        "frag");
  for (const PoolReport& pool : report.pools) {
    absl::StrAppendFormat(
        &out, "  %-*s %12s %12d %12d %12d %7.1f%%\n", name_width,
        Fit(pool.name, name_width),
        pool.capacity > 0 ? absl::StrCat(pool.capacity) : "unbounded",
        pool.used, pool.max_live, pool.above_max_live,
        100 * pool.fragmentation);
  }
  absl::StrAppend(&out,
                  "  (above max = used - max live; frag = above max / used, "
                  "0 at the lower bound)\n");
}

void AppendPeak(const PlanReport& report, const TextReportOptions& options,
                std::string& out) {
  if (report.peak_steps.empty()) return;
  const Step at = report.peak_steps.front();
  absl::StrAppend(&out, "\n",
                  Fit(absl::StrFormat("peak step: %s, %d live bytes",
                                      StepLabel(report, at), report.max_live),
                      options.width),
                  "\n");
  absl::StrAppendFormat(&out, "  %d buffers alive (%s)",
                        report.alive_at_peak.size(),
                        HumanBytes(report.max_live));
  if (report.peak_steps.size() > 1) {
    absl::StrAppendFormat(&out, "; %d steps reach this peak",
                          report.peak_steps.size());
  }
  absl::StrAppend(&out, "\n");
  const bool pools = report.pools.size() > 1;
  // key  bytes  %peak  [pool] offset  tensors  (lifetime)
  absl::StrAppendFormat(&out, "  key %12s %6s %12s %15s  %s\n", "bytes",
                        "%peak", "offset", "alive in steps", "tensors");
  const size_t shown = std::min<size_t>(report.alive_at_peak.size(),
                                        std::max(options.max_peak_tensors, 0));
  for (size_t rank = 0; rank < shown; ++rank) {
    const BufferReport& buffer = report.buffers[report.alive_at_peak[rank]];
    std::string offset =
        report.planned ? absl::StrCat(buffer.offset) : std::string("-");
    if (pools)
      offset = absl::StrCat(report.pools[buffer.pool].name, ":", offset);
    std::string line = absl::StrFormat(
        "  %3c %12d %5.1f%% %12s %15s  ", PeakKey(rank) ? PeakKey(rank) : ' ',
        buffer.size, Percent(buffer.size, report.max_live), offset,
        absl::StrFormat("[%d, %d)", RealStep(report, buffer.lifetime.start),
                        RealStep(report, buffer.lifetime.end)));
    // The end of a tensor name tells it apart best ("..._output_0"); where
    // it comes from follows it.
    const size_t room = std::max<size_t>(8, options.width - line.size());
    const std::string source =
        buffer.source.empty() ? "" : absl::StrCat("  <- ", buffer.source);
    line += FitTail(absl::StrJoin(buffer.tensors, ", "),
                    std::max<size_t>(8, room - std::min(room, source.size())));
    line += source;
    absl::StrAppend(&out, Fit(line, options.width), "\n");
  }
  if (shown < report.alive_at_peak.size()) {
    Bytes rest = 0;
    for (size_t rank = shown; rank < report.alive_at_peak.size(); ++rank) {
      rest += report.buffers[report.alive_at_peak[rank]].size;
    }
    absl::StrAppendFormat(&out, "      %12d %5.1f%% %12s %15s  ... %d more\n",
                          rest, Percent(rest, report.max_live), "", "",
                          report.alive_at_peak.size() - shown);
  }
}

void AppendTable(const PlanReport& report, const TextReportOptions& options,
                 std::string& out) {
  const bool grouped = report.steps > options.max_table_rows;
  std::vector<StepGroup> groups =
      GroupSteps(report.live, grouped ? options.max_table_rows : report.steps);
  if (grouped) {
    absl::StrAppendFormat(
        &out,
        "\nlive bytes over %d steps, in %d rows: each the step of most live "
        "bytes among %d%s\n",
        RealSteps(report), groups.size(),
        groups.empty() ? 0 : groups[0].last - groups[0].first + 1,
        report.step_times.empty() ? "" : " where a lifetime starts or ends");
  } else {
    absl::StrAppend(&out, "\nlive bytes per op:\n");
  }
  const int digits = static_cast<int>(absl::StrCat(RealSteps(report)).size());
  const int step_width = grouped || !report.step_times.empty()
                             ? 2 * digits + 1
                             : std::max(4, digits);
  const int op_width = report.step_names.empty() ? 0 : 28;
  // step  op  live bytes  % of peak  bar
  const int fixed =
      2 + step_width + 1 + (op_width ? op_width + 1 : 0) + 12 + 1 + 7 + 2;
  const int bar_width = std::max(0, options.width - fixed - 7);
  absl::StrAppendFormat(&out, "  %-*s ", step_width, "step");
  if (op_width) absl::StrAppendFormat(&out, "%-*s ", op_width, "op");
  absl::StrAppendFormat(&out, "%12s %7s\n", "live bytes", "% peak");
  const Step peak_step =
      report.peak_steps.empty() ? -1 : report.peak_steps.front();
  // Without a plan, the bars are against the most live bytes.
  const Bytes whole = report.planned ? report.peak : report.max_live;
  for (const StepGroup& group : groups) {
    const std::string step = StepRange(report, group.first, group.last);
    std::string line = absl::StrFormat("  %-*s ", step_width, step);
    if (op_width) {
      absl::StrAppendFormat(&line, "%-*s ", op_width,
                            FitTail(OpName(report, group.shown), op_width));
    }
    const Bytes live = report.live[group.shown];
    absl::StrAppendFormat(&line, "%12d %6.1f%%  ", live, Percent(live, whole));
    const int bar =
        whole > 0
            ? static_cast<int>(static_cast<double>(live) * bar_width / whole)
            : 0;
    line += std::string(bar, '=');
    if (group.first <= peak_step && peak_step <= group.last) line += " <peak";
    absl::StrAppend(&out, Fit(line, options.width), "\n");
  }
}

void AppendCharts(const PlanReport& report, const TextReportOptions& options,
                  std::string& out) {
  std::vector<int> rank_of(report.buffers.size(), -1);
  for (size_t rank = 0; rank < report.alive_at_peak.size(); ++rank) {
    if (static_cast<int>(rank) < options.max_peak_tensors && PeakKey(rank)) {
      rank_of[report.alive_at_peak[rank]] = static_cast<int>(rank);
    }
  }
  const int step_width =
      std::max<int>(4, absl::StrCat(RealSteps(report)).size());
  const int op_width = report.step_names.empty() ? 0 : 16;
  const int prefix = 2 + step_width + 1 + (op_width ? op_width + 1 : 0) + 1;
  const int columns = std::max(8, options.width - prefix - 1);
  // Buffers by start, to find those alive at a step quickly.
  std::vector<BufferId> by_start(report.buffers.size());
  std::iota(by_start.begin(), by_start.end(), 0);
  std::sort(by_start.begin(), by_start.end(), [&](BufferId a, BufferId b) {
    const Step sa = report.buffers[a].lifetime.start;
    const Step sb = report.buffers[b].lifetime.start;
    return sa != sb ? sa < sb : a < b;
  });
  for (PoolId p = 0; p < static_cast<PoolId>(report.pools.size()); ++p) {
    const PoolReport& pool = report.pools[p];
    if (pool.used == 0 || !report.planned) continue;
    const Bytes per_column = (pool.used + columns - 1) / columns;
    const std::vector<StepGroup> rows = GroupSteps(
        pool.live, std::min<Step>(report.steps, options.max_chart_rows));
    absl::StrAppend(&out, "\n",
                    Fit(absl::StrFormat("arena of pool %s over time: %d bytes",
                                        pool.name, pool.used),
                        options.width),
                    "\n");
    absl::StrAppendFormat(
        &out, "  1 column = %d bytes, 1 row = %s\n", per_column,
        rows.size() < static_cast<size_t>(report.steps)
            ? absl::StrCat("the step of most live bytes among ",
                           rows.empty() ? 0 : rows[0].last - rows[0].first + 1,
                           " steps")
            : std::string(report.step_times.empty()
                              ? "1 step"
                              : "the steps until a lifetime starts or ends"));
    absl::StrAppend(&out,
                    "  (letters: the tensors alive at the peak, by key; "
                    "'#'/'+' other buffers; '.' free)\n");
    for (const StepGroup& row : rows) {
      const Step s = row.shown;
      std::string cells(columns, '.');
      std::vector<Bytes> cover(columns, 0);  // bytes of the cell's symbol
      for (BufferId b : by_start) {
        const BufferReport& buffer = report.buffers[b];
        if (buffer.lifetime.start > s) break;
        if (buffer.lifetime.end <= s || buffer.pool != p || buffer.size == 0) {
          continue;
        }
        const Offset end = buffer.offset + buffer.size;
        const char symbol =
            rank_of[b] >= 0 ? PeakKey(rank_of[b]) : (b % 2 == 0 ? '#' : '+');
        for (Offset c = buffer.offset / per_column;
             c < columns && c * per_column < end; ++c) {
          const Bytes bytes = std::min(end, (c + 1) * per_column) -
                              std::max(buffer.offset, c * per_column);
          if (bytes > cover[c]) {
            cover[c] = bytes;
            cells[c] = symbol;
          }
        }
      }
      std::string line =
          absl::StrFormat("  %*d ", step_width, RealStep(report, s));
      if (op_width) {
        absl::StrAppendFormat(&line, "%-*s ", op_width,
                              FitTail(OpName(report, s), op_width));
      }
      absl::StrAppend(&out, line, "|", cells, "|\n");
    }
  }
}

}  // namespace

std::string FormatTextReport(const PlanReport& report,
                             const TextReportOptions& options) {
  std::string out;
  AppendSummary(report, options.width, out);
  AppendPools(report, out);
  AppendPeak(report, options, out);
  AppendTable(report, options, out);
  AppendCharts(report, options, out);
  return out;
}

}  // namespace memplan

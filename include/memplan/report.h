// What a plan looks like over time: live bytes per step, the peak step and
// what is alive there, per-pool usage and fragmentation, and every buffer's
// tensors, lifetime, producer and readers. `memplan report` prints it as text
// (FormatTextReport) or draws it as an HTML page (memplan/report_html.h).
//
//   offset ^                       live(s)     = bytes of the buffers alive at
//     used +- - - - - - - - - -                  step s, in one pool or all
//          |      [  c  ]                        (sizes as planned, aligned);
//          |  [ a ][   b   ]       fragmentation(s) = used - live(s): bytes
//          |  [     d      ]                     of the pool nobody uses at s.
//          +--+--+--+--+--+--> step
//
// Steps are op steps (op i runs at step i); a graph's steps are named after
// its ops, a buffer CSV's are numbers only.

#ifndef MEMPLAN_REPORT_H_
#define MEMPLAN_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "memplan/types.h"

namespace memplan {

struct BufferReport {
  BufferId buffer = 0;
  std::vector<std::string> tensors;  // every tensor living in the buffer
  TensorKind kind = TensorKind::kActivation;  // of the buffer's first tensor
  Bytes size = 0;
  Lifetime lifetime;
  PoolId pool = 0;
  Offset offset = 0;
  // From the graph (none for a buffer CSV): the op producing the first tensor
  // (nullopt for inputs and constants) and every op reading any of the
  // buffer's tensors, ascending.
  std::optional<int> producer;
  std::vector<int> readers;
  // Where the first tensor comes from in the traced program
  // ("layer1.0.conv1 at model.py:42"; Tensor::source), empty when unknown.
  std::string source;
};

struct PoolReport {
  std::string name;
  Bytes capacity = 0;       // 0 = unbounded
  Bytes used = 0;           // the plan's highest byte in the pool
  std::vector<Bytes> live;  // per step: bytes alive in the pool
  Bytes max_live = 0;       // the largest of `live`
  Step max_live_step = 0;   // the first step where it is reached
  // used - max_live: bytes no plan of these buffers in this pool alone needs
  // (0 when the pool is planned as tightly as lifetimes allow).
  Bytes above_max_live = 0;
  // (used - max_live) / used, in [0, 1]: the share of the pool's bytes that
  // no plan of the same buffers in this pool alone would need. 0 for a pool
  // planned as tightly as lifetimes allow; with one pool, max_live is the
  // lower bound, so a plan at the lower bound has 0.
  double fragmentation = 0;
};

struct PlanReport {
  std::string name;  // the problem's (the input's) name
  std::string planner;
  Bytes peak = 0;
  Bytes lower_bound = 0;
  // The lower bound over op orders (LowerBoundOverOrders) and the op where
  // it is reached (empty when it is the graph outputs at the last step),
  // when the caller computed it: what another order could still save at
  // most.
  std::optional<Bytes> order_lower_bound;
  std::string order_lower_bound_op;
  Bytes naive_total = 0;
  bool proven_optimal = false;
  absl::Duration wall_time = absl::ZeroDuration();
  // False for a plan read from a file: it was not planned here, and no
  // planning time is shown.
  bool planned_here = true;
  // False for an input no plan was found for (AnalyzeLiveBytes): the
  // buffers have no pool or offset, `pools` is empty, peak is 0, and
  // `capacity` and `missing` say what the lower bound lacks.
  bool planned = true;
  Bytes capacity = 0;  // the pools' capacities summed; 0 = some unbounded
  // lower_bound - capacity when positive (one pool; several pools: the most
  // live bytes - capacity): bytes that no plan can do without.
  Bytes missing = 0;

  // Steps 0 .. steps - 1: a graph's op count (or more when a lifetime runs
  // longer), otherwise the largest lifetime end.
  //
  // Without a graph, lifetimes may span far more steps than there are
  // buffers (a buffer CSV alive over [0, 10^8)). There, when the steps
  // outnumber twice the buffers, time is compressed to the steps where
  // something starts or ends, so that the report is O(buffers): `steps` is
  // then the number of those rows, `step_times[r]` the first real step of
  // row r (one more entry: the real end), and `live`, `peak_steps`, the
  // pools' `max_live_step` and the buffers' lifetimes count rows. Nothing
  // changes within a row, so every figure is as over the real steps.
  // RealStep() maps a row back; `step_times` is empty when not compressed.
  Step steps = 0;
  std::vector<Step> step_times;
  std::vector<std::string> step_names;  // op names; empty without a graph
  std::vector<Bytes> live;              // per step, all pools together

  Bytes max_live = 0;            // the largest of `live`
  std::vector<Step> peak_steps;  // every step where `live` is max_live
  // The buffers alive at peak_steps[0], largest first (ties by id).
  std::vector<BufferId> alive_at_peak;

  std::vector<PoolReport> pools;
  std::vector<BufferReport> buffers;  // indexed by BufferId
};

// Analyses `plan`, which must pass VerifyPlan for `problem` (InvalidArgument
// with the verifier's message otherwise). `graph`, when given, must be the
// graph `problem` was built from: it names the steps and gives each buffer
// its kind, producer and readers (InvalidArgument when a buffer's tensor is
// not in it).
absl::StatusOr<PlanReport> AnalyzePlan(const Problem& problem, const Plan& plan,
                                       const Graph* graph = nullptr);

// The report of `problem` when no plan was found (e.g. it cannot fit in its
// pools' capacity): its live bytes over steps, the lower bound against the
// capacity and the bytes missing, the buffers alive at the most live step.
// `graph` as for AnalyzePlan.
absl::StatusOr<PlanReport> AnalyzeLiveBytes(const Problem& problem,
                                            const Graph* graph = nullptr);

// The real step where row `step` of the report starts (the step itself when
// time is not compressed; PlanReport::step_times).
Step RealStep(const PlanReport& report, Step step);

// The name of a step: "op_name (step 12)" with a graph, "step 12" without
// (the real step when time is compressed).
std::string StepLabel(const PlanReport& report, Step step);

struct TextReportOptions {
  int width = 100;            // no line is longer (the op names are cut)
  int max_table_rows = 200;   // beyond it, the per-op table groups steps
  int max_chart_rows = 200;   // beyond it, the chart's rows span several steps
  int max_peak_tensors = 25;  // beyond it, the rest are summed in one line
};

// The report for a terminal: summary, pools, the peak step with its live
// tensors largest first, a per-op table (step, op, live bytes, % of peak)
// and an ASCII chart per pool of the arena over time (one row per step, one
// column per range of offsets; the tensors alive at the peak get letters,
// listed under the chart, other buffers '#' or '+').
std::string FormatTextReport(const PlanReport& report,
                             const TextReportOptions& options = {});

}  // namespace memplan

#endif  // MEMPLAN_REPORT_H_

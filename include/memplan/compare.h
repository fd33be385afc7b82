// Comparing planners: run each planner on each input, verify every plan, and
// tabulate peak against the naive total and the lower bound. This is what
// `memplan compare` and the quality report print.
//
// A planner that fails on an input (Unimplemented, ResourceExhausted,
// DeadlineExceeded, ...) yields a row carrying its status, not an error of
// the whole comparison. A plan the verifier rejects yields a row with
// `verified == false` (and its status says why); callers treat that as a bug.

#ifndef MEMPLAN_COMPARE_H_
#define MEMPLAN_COMPARE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/types.h"

namespace memplan {

struct CompareOptions {
  std::vector<std::string>
      planners;        // empty = every registered planner, in order
  PlanOptions plan;    // time limit, seed and threads of every plan
  BuildOptions build;  // how graph inputs become problems
};

struct CompareRow {
  std::string input;  // the input's file name (or the name given)
  std::string planner;
  int64_t buffers = 0;
  Bytes naive_total = 0;
  Bytes lower_bound = 0;
  absl::Status status;  // OK, the planner's failure, or the verifier's message
  // Set when the planner returned a plan:
  bool planned = false;
  Bytes peak = 0;  // the sum of the pools' bytes
  // Per pool. With several pools no ratio to the (single-pool) lower bound is
  // given and the note lists each pool's bytes instead.
  std::vector<Bytes> pool_used;
  std::vector<std::string> pool_names;
  // Per pool: the bytes of the buffers the plan puts there (PoolBytes),
  // listed in the note after the pools' bytes.
  std::vector<Bytes> pool_bytes;
  bool proven_optimal = false;
  absl::Duration wall_time = absl::ZeroDuration();
  bool verified = false;
};

// Runs each planner of `options` on `problem`. NotFound when a planner name is
// not registered; InvalidArgument when the problem is malformed.
absl::StatusOr<std::vector<CompareRow>> ComparePlanners(
    const Problem& problem, std::string_view input_name,
    const CompareOptions& options);

// Loads every input (a graph JSON or a buffer CSV, see LoadInput) first, then
// compares the planners on each; the first input that cannot be read is the
// error. Rows come input-major, planners in the order of `options`.
absl::StatusOr<std::vector<CompareRow>> CompareInputs(
    const std::vector<std::string>& paths, const CompareOptions& options);

// True when some row holds a plan that the verifier rejected.
bool AnyUnverified(const std::vector<CompareRow>& rows);

enum class CompareFormat {
  kTable,     // aligned plain-text columns
  kMarkdown,  // a GitHub markdown table
  kCsv,       // one header line, raw numbers (bytes, milliseconds)
  kSummary,   // markdown: one row per planner over all inputs
};

// "table", "markdown", "csv", "summary"; InvalidArgument otherwise.
absl::StatusOr<CompareFormat> ParseCompareFormat(std::string_view name);

// Columns: input, planner, buffers, naive total, lower bound, peak, % of naive
// total, ratio to the lower bound, proven optimal, wall time, verified, and
// the status of failed rows. The summary instead lists per planner: inputs
// planned / failed, the geometric mean and the worst ratio to the lower
// bound, how often it found the smallest peak of all planners on an input,
// how often it proved optimality, and its total time.
std::string FormatComparison(const std::vector<CompareRow>& rows,
                             CompareFormat format);

}  // namespace memplan

#endif  // MEMPLAN_COMPARE_H_

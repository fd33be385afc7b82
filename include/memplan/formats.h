// File formats: memplan-graph-v1 JSON (optionally gzipped), the MiniMalloc
// buffer CSV (`id,lower,upper,size[,offset]`), memplan-plan-v1 JSON, and
// whole files, gzip-compressed or not. Text in, values out: reading an input
// file into a problem is memplan/load.h's.
// Every reader returns InvalidArgument naming the line, column or item at
// fault; nothing here throws.

#ifndef MEMPLAN_FORMATS_H_
#define MEMPLAN_FORMATS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "memplan/problem.h"
#include "memplan/types.h"

namespace memplan {

// memplan-graph-v1.
absl::StatusOr<Graph> ParseGraphJson(std::string_view text);
std::string GraphToJson(const Graph& graph);

// Buffer CSV. A header names the columns, in any order, each once:
//   id (or buffer), lower, upper, size    lifetime [lower, upper)
//   start, end instead of lower, upper    closed lifetime [start, end]
//   offset                                a plan: each buffer's offset
//   pool (with offset)                    a plan: each buffer's pool
// Fields may be quoted ("a,b", "say ""hi""") and hold commas and line
// breaks; spaces around a field and CRLF line ends are ignored; numbers are
// digits with an optional '-' (no '+', no spaces inside). Steps and sizes are
// non-negative. Each row becomes a buffer named after its id, in one unbounded
// pool "default" (alignment 1), or with a pool column in the pools the rows
// name, in order of appearance. With an `offset` column, the offsets come back
// too, as a plan.
struct BufferCsv {
  Problem problem;
  std::optional<Plan> plan;
  bool pool_column = false;  // the file has a pool column
};
absl::StatusOr<BufferCsv> ParseBufferCsv(std::string_view text);
// The problem's buffers as CSV (ids quoted where needed); with a plan, adds
// the `offset` column, and the `pool` column when the problem has several
// pools.
std::string BufferCsvText(const Problem& problem, const Plan* plan = nullptr);
// Reads a CSV plan (with an offset column) for `problem`: rows are matched to
// buffers by id, pools by name (without a pool column, the first pool).
absl::StatusOr<Plan> ParsePlanCsv(std::string_view text,
                                  const Problem& problem);

// memplan-plan-v1.
//
// What a plan file records about how it was made, so that a plan can be
// checked without repeating the flags and a plan of another input is told
// apart.
struct PlanProvenance {
  std::string input;       // the input's path, as given
  std::string input_hash;  // ContentHash() of the input's (decompressed) bytes
  BuildOptions build;      // as the input was built
  std::string reorder;     // the op ordering; empty = the input's own order
  // The ops' names in the order planned, when `reorder` is set: written from
  // PlanJsonOptions::graph (the graph in that order), and read back so that
  // a reader need not run the ordering again (a search cut by a time or
  // work limit gives another order than its name does by default).
  std::vector<std::string> op_order;
};

struct PlanJsonOptions {
  std::optional<PlanProvenance> provenance;  // written as "input" and "build"
  // When set, "tensors" lists every tensor of this graph (the plan's problem
  // was built from it), unplanned ones too; otherwise the buffers' tensors.
  const Graph* graph = nullptr;
  // Writes "wall_time_ms". Off by default: the same input and options then
  // give the same bytes.
  bool wall_time = false;
};

std::string PlanToJson(const Problem& problem, const Plan& plan,
                       const PlanJsonOptions& options = {});
// Text handed over in pieces, each appended to what came before.
using TextSink = std::function<void(std::string_view)>;
// PlanToJson's text handed to `write` in pieces of about a megabyte, never
// held whole: the plan of 10^6 buffers is 0.16 GB of JSON.
void WritePlanJson(const Problem& problem, const Plan& plan,
                   const PlanJsonOptions& options, const TextSink& write);
// The provenance a plan file records; nullopt when it records none.
absl::StatusOr<std::optional<PlanProvenance>> ParsePlanProvenance(
    std::string_view text);
// "fnv1a64:" and 16 hex digits: identifies an input's contents (not a
// cryptographic hash).
std::string ContentHash(std::string_view bytes);
// Reads a plan for `problem`: buffers are matched by name (or by any of their
// tensors' names), pools by name.
absl::StatusOr<Plan> ParsePlanJson(std::string_view text,
                                   const Problem& problem);

// Symbolic plans (a graph with dims, memplan/symbolic.h): memplan-plan-v1
// with "dims", and sizes, offsets, peak and naive total as expressions in
// them (DimExpr text). One bucket: each buffer has an "offset" and the file
// a "peak"; several: the buffers have none and "buckets" gives each
// bucket's narrowed "dims", "peak" and "offsets" (in the order of
// "buffers"). README, "Plan files", has the whole shape.
struct SymbolicGraphPlan;
struct SymbolicProblem;

// True when `text` is a JSON object with a "dims" key (a symbolic plan);
// false for anything else, including text that is no JSON.
bool IsSymbolicPlanJson(std::string_view text);

// Writes options.provenance (the other options are for ordinary plans).
std::string SymbolicPlanToJson(const SymbolicGraphPlan& plan,
                               const PlanJsonOptions& options = {});

// Reads a symbolic plan of `rebuilt`, the symbolic problem rebuilt from the
// plan's graph: the file's dims, pool and buffers (names, tensors,
// lifetimes, sizes) must be those of `rebuilt`, the first difference named;
// an expression that does not parse names the buffer and the position. The
// offsets are not judged here: VerifySymbolicGraphPlan() proves them.
absl::StatusOr<SymbolicGraphPlan> ParseSymbolicPlanJson(
    std::string_view text, const SymbolicProblem& rebuilt);

// Limits on what the readers take in, so that a hostile file ends in an
// error naming it instead of exhausting memory or never ending.
//
// The most bytes a file may hold, after decompression: 2 GiB by default,
// room for a graph JSON of 10^6 buffers. The tool's --max-input-size and
// Python's max_input_size raise it.
inline constexpr int64_t kDefaultMaxInputBytes = int64_t{2} << 30;
// The most bytes a name (of a tensor, op, pool, dim or buffer) may hold; in
// JSON, any string.
inline constexpr size_t kMaxNameBytes = 64 << 10;

struct ReadOptions {
  int64_t max_bytes = kDefaultMaxInputBytes;  // of the decompressed contents
  // The contents must be text (JSON or CSV): the read stops at the first
  // byte no such file holds (NUL or another control byte but tab, line feed
  // and carriage return), so that a compressed file of zeros ends at once
  // instead of after decompressing up to max_bytes.
  bool text = false;
};

// Whole files; a name ending in ".gz" is read or written through zlib.
// ReadFile reads a regular file, or a pipe up to options.max_bytes; a
// directory or a device is InvalidArgument, contents larger than
// options.max_bytes (or than memory holds) ResourceExhausted, each naming
// the file.
absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     const ReadOptions& options = {});
absl::Status WriteFile(const std::string& path, std::string_view contents);
// WriteFile of the text `contents` hands to its sink, written as it comes
// instead of held whole (WritePlanJson).
absl::Status WriteFile(const std::string& path,
                       const std::function<void(const TextSink&)>& contents);
// Whether `path` names a compressed file (it ends in ".gz"), and its name
// without that suffix, whose extension tells the format of the contents:
// "plan.json.gz" -> "plan.json"; any other name as it is.
bool IsCompressedName(std::string_view path);
std::string_view UncompressedName(std::string_view path);

}  // namespace memplan

#endif  // MEMPLAN_FORMATS_H_

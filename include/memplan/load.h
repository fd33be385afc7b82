// Loading: an input file to the graph and the problem a plan is made of, and
// a plan file back to a plan. The one way the command-line tool, the Python
// module and the benchmark read their inputs.
//
//   memplan::LoadOptions options;
//   options.build.alignment = 64;
//   options.reorder = "memory";
//   absl::StatusOr<memplan::LoadedInput> in =
//       memplan::Load("resnet50.json.gz", options);
//
// An input is read once: its bytes are hashed (LoadedInput::content_hash)
// and parsed. By its name (a final ".gz" reads it through zlib and must
// hold gzip data, whole):
//   .json   memplan-graph-v1, its symbolic dims narrowed by
//           options.dim_ranges and bound by options.dims, ops in
//           options.reorder's order, built with options.build;
//   .csv    a buffer CSV; options.build contributes pools, capacity and
//           alignment only, and an offset or pool column is an error (that
//           is a plan: ReadPlanFile);
//   other   the importer of options.importers that names the extension.
//
// ONNX: the core has no ONNX reader and does not depend on the optional
// component memplan::onnx. A caller that links it passes its importer,
// OnnxImporter() of memplan/onnx.h, in options.importers; without one, a
// .onnx file is of an unknown input type.

#ifndef MEMPLAN_LOAD_H_
#define MEMPLAN_LOAD_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/dim_expr.h"
#include "memplan/formats.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/types.h"

namespace memplan {

// A reader of a graph format the core does not read itself.
struct GraphImporter {
  std::string extension;  // the names it reads end in it: ".onnx"
  // The graph in `bytes`, the contents of the file `path`. Its errors name
  // the file.
  std::function<absl::StatusOr<Graph>(const std::string& path,
                                      std::string_view bytes)>
      import;
};

struct LoadOptions {
  BuildOptions build;
  // Graphs only: an op ordering of memplan/reorder.h applied before the
  // problem is built; empty = the file's own order. A buffer CSV has no ops:
  // an ordering is then InvalidArgument.
  std::string reorder;
  // The effort `reorder` may spend (ComputeOpOrder()'s, memplan/reorder.h):
  // default, no limit.
  PlanOptions order_effort;
  std::vector<GraphImporter> importers;
  // Graph JSON: values of the graph's symbolic dims (BindDims() of
  // memplan/symbolic.h). An importer binds its format's own dims itself
  // (OnnxImportOptions::dims).
  DimValues dims;
  // Graph JSON: narrower ranges of declared dims, each inside the declared
  // one; a dim given a range and a value, or a range of a dim the graph
  // does not declare, is InvalidArgument naming it. An importer takes its
  // format's own ranges (OnnxImportOptions::dim_ranges).
  DimRanges dim_ranges;
  // A graph with dims left unbound: false: InvalidArgument naming them
  // (CheckConcrete() of memplan/symbolic.h); true: LoadedInput::graph is
  // the symbolic graph and LoadedInput::problem is empty, for the symbolic
  // planner (PlanSymbolicMemory). A symbolic graph takes no reordering.
  bool keep_symbolic = false;
  // Limits on the file read (memplan/formats.h: its size after
  // decompression). A file or a parse larger than memory holds is
  // ResourceExhausted naming the file.
  ReadOptions read;
};

struct LoadedInput {
  // Set for graph inputs: the graph as planned (symbolic only with
  // LoadOptions::keep_symbolic; its problem is then empty).
  std::optional<Graph> graph;
  // Graphs: the op of the file run at each step (the identity without an
  // ordering).
  std::vector<int> op_order;
  Problem problem;
  std::string content_hash;  // ContentHash() of the file's contents
};

absl::StatusOr<LoadedInput> Load(const std::string& path,
                                 const LoadOptions& options);

// LoadOptions::dim_ranges and dims applied to a graph JSON's graph: its
// declared dims narrowed, then bound (BindDims() of memplan/symbolic.h).
// Errors as Load()'s, without the file's name.
absl::StatusOr<Graph> ApplyDims(Graph graph, const DimValues& values,
                                const DimRanges& ranges);

// The tool's --dim arguments: NAME=VALUE binds a dim (VALUE >= 0; the
// graph checks it against the dim's declared range), NAME=MIN:MAX gives it
// a range (0 <= MIN <= MAX). A malformed argument, or a dim given twice
// (two values, two ranges, or a value and a range), is InvalidArgument
// naming the argument or the dim.
struct DimArguments {
  DimValues values;
  DimRanges ranges;
};
absl::StatusOr<DimArguments> ParseDimArguments(
    const std::vector<std::string>& arguments);

// Load() of a graph JSON or a buffer CSV, in its own op order.
absl::StatusOr<LoadedInput> LoadInput(const std::string& path,
                                      const BuildOptions& options);

// A plan file, read once: memplan-plan-v1 JSON, or a buffer CSV with an
// offset column (.csv, .csv.gz).
struct PlanFile {
  std::string path;
  std::string text;  // the contents, decompressed
  bool csv = false;
};
absl::StatusOr<PlanFile> ReadPlanFile(const std::string& path,
                                      const ReadOptions& options = {});

// How a plan file says its input was built (memplan-plan-v1 JSON written
// with a provenance); nullopt for a CSV or a file that records none.
absl::StatusOr<std::optional<PlanProvenance>> RecordedProvenance(
    const PlanFile& file);

// The plan of `problem` the file holds: JSON buffers matched by name (or by
// any of their tensors' names), CSV rows by id; pools by name. Its errors,
// and RecordedProvenance's, name the file.
absl::StatusOr<Plan> ParsePlanFile(const PlanFile& file,
                                   const Problem& problem);

// The input of a plan file: what the plan is checked against.
//
// The input's own declarations are the contract; the build options a plan
// records only fill in what the input leaves open, or tighten it:
//   - pools: an input that declares none (a graph without "pools", a buffer
//     CSV) takes the recorded pools and capacity. An input that declares
//     pools keeps them, in its order: a recorded pool it does not declare,
//     or one with a larger capacity (0, unbounded, is the largest) or a
//     smaller alignment than declared, is InvalidArgument naming both
//     values ("plan records pool "sram" with capacity 0; the graph declares
//     capacity 1024"). A smaller capacity or a larger alignment is the
//     recorded one, and a note; a declared pool the plan does not record is
//     kept as declared, and a note.
//   - alignment: the recorded default alignment applies to every buffer; a
//     tensor's own alignment still raises it (as when planning), so a
//     smaller one loosens nothing. A larger one rounds the sizes of tensors
//     that declare less: accepted, and a note naming one of them.
//   - plan_constants: the graph says nothing about it; the recorded value.
//   - plan_inputs, plan_outputs: the graph says which tensors are its inputs
//     and outputs; whether they must be planned is the caller's choice. A
//     plan recording false leaves them to the caller: accepted, and a note
//     ("graph inputs left to the caller, as the plan records") when the
//     graph has such tensors, so that it is not taken for a full plan.
//   - reorder: the plan holds only when the ops run in the recorded order:
//     a note naming it.
// Options the caller gives (a command's build flags, Python's keywords)
// replace the whole record and are used as given, as when planning: no
// notes. In every case a plan that records its input's hash is checked
// against the input's contents.
struct PlanBuild {
  BuildOptions build;   // the input is built with these
  std::string reorder;  // and ops in this ordering (empty = the file's)
  // The order that ordering gave, as op names, when the plan records it
  // (then it is used, once checked, instead of running the ordering).
  std::vector<std::string> op_order;
  bool recorded = false;  // from the plan's record, not the caller's options
  // What the plan records that differs from the input's declarations and
  // was accepted, in words, one clause each.
  std::vector<std::string> notes;
};

// The recorded build of a plan, applied to an input as above: `graph` is the
// input's graph in its file order (nullptr for a problem), `declared_pools`
// the pools the input declares (empty: none).
absl::StatusOr<PlanBuild> ApplyRecordedBuild(
    const PlanProvenance& recorded, const Graph* graph,
    const std::vector<Pool>& declared_pools);

// InvalidArgument when `content_hash` (of the input `input_path`) is not the
// hash `recorded` names, naming both; OK otherwise.
absl::Status CheckRecordedInput(const PlanFile& plan,
                                const PlanProvenance& recorded,
                                const std::string& input_path,
                                const std::string& content_hash);

struct PlanInput {
  LoadedInput input;
  PlanBuild build;
};

// Reads `path`, the input of the plan file `plan`, checks its contents
// against the hash the plan records (if any) and builds it: with the build
// options and op ordering of `options` when `use_options` or when the plan
// records none, otherwise with the recorded ones applied as above.
// options.importers read other graph formats in either case.
absl::StatusOr<PlanInput> LoadInputOfPlan(const std::string& path,
                                          const PlanFile& plan,
                                          const LoadOptions& options,
                                          bool use_options);

}  // namespace memplan

#endif  // MEMPLAN_LOAD_H_

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
//   .json   memplan-graph-v1, ops in options.reorder's order, built with
//           options.build;
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
#include "memplan/formats.h"
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
  std::vector<GraphImporter> importers;
  // Limits on the file read (memplan/formats.h: its size after
  // decompression). A file or a parse larger than memory holds is
  // ResourceExhausted naming the file.
  ReadOptions read;
};

struct LoadedInput {
  std::optional<Graph> graph;  // set for graph inputs: the graph as planned
  Problem problem;
  std::string content_hash;  // ContentHash() of the file's contents
};

absl::StatusOr<LoadedInput> Load(const std::string& path,
                                 const LoadOptions& options);

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

}  // namespace memplan

#endif  // MEMPLAN_LOAD_H_

// Load, LoadInput and the plan files (memplan/load.h): a file to
// the graph and problem a plan is made of, and a plan file to a plan.

#include "memplan/load.h"

#include <limits>
#include <new>
#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/planner_util.h"
#include "base/status_macros.h"
#include "memplan/formats.h"
#include "memplan/reorder.h"

namespace memplan {
namespace {

// `status` with its message after "path: ".
absl::Status Named(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(path, ": ", status.message()));
}

// The importer of `options` for the file `path`, or nullptr.
const GraphImporter* ImporterFor(std::string_view path,
                                 const LoadOptions& options) {
  for (const GraphImporter& importer : options.importers) {
    if (!importer.extension.empty() && path.ends_with(importer.extension)) {
      return &importer;
    }
  }
  return nullptr;
}

absl::Status UnknownType(const std::string& path) {
  return absl::InvalidArgumentError(absl::StrCat(
      "\"", path,
      "\": unknown input type (expected .json, .json.gz, .csv or .csv.gz)"));
}

// A graph from the bytes of `path`: a graph JSON or an importer's format.
absl::StatusOr<Graph> ParseGraphFile(const std::string& path,
                                     std::string_view bytes,
                                     const LoadOptions& options) {
  if (const GraphImporter* importer = ImporterFor(path, options)) {
    return importer->import(path, bytes);
  }
  if (!UncompressedName(path).ends_with(".json")) return UnknownType(path);
  absl::StatusOr<Graph> graph = ParseGraphJson(bytes);
  if (!graph.ok()) return Named(path, graph.status());
  return graph;
}

// A buffer CSV input: its problem, with the pools, capacity and alignment
// of `options`.
absl::StatusOr<Problem> CsvProblem(const std::string& path,
                                   std::string_view text,
                                   const BuildOptions& options) {
  absl::StatusOr<BufferCsv> csv = ParseBufferCsv(text);
  if (!csv.ok()) return Named(path, csv.status());
  if (csv->plan.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": an input's CSV has no offset or pool column (a plan "
              "with offsets is read by verify)"));
  }
  Problem problem = std::move(csv->problem);
  MEMPLAN_ASSIGN_OR_RETURN(problem.pools,
                           ResolvePools(problem.pools, options));
  // At alignment 1 the buffers are the ones ParseBufferCsv validated (sizes
  // within kMaxBytes, so none overflows when aligned), ResolvePools has
  // validated the pools, and no buffer of a CSV names a pool or is fixed:
  // ValidateProblem would find nothing new, and rounding and checking again
  // cost 40 ms at 10^6 buffers.
  if (options.alignment == 1) return problem;
  for (Buffer& b : problem.buffers) {
    b.alignment = options.alignment;
    if (b.size > std::numeric_limits<Bytes>::max() - b.alignment) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer \"", b.name, "\" overflows int64 when aligned"));
    }
    b.size = internal::RoundUp(b.size, b.alignment);
  }
  MEMPLAN_RETURN_IF_ERROR(ValidateProblem(problem));
  return problem;
}

absl::StatusOr<LoadedInput> LoadUnguarded(const std::string& path,
                                          const LoadOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, options.read));
  LoadedInput input;
  input.content_hash = ContentHash(bytes);
  if (ImporterFor(path, options) == nullptr &&
      UncompressedName(path).ends_with(".csv")) {
    MEMPLAN_ASSIGN_OR_RETURN(input.problem,
                             CsvProblem(path, bytes, options.build));
    if (!options.reorder.empty()) {
      return absl::InvalidArgumentError(
          "--reorder needs a graph INPUT; a buffer CSV has no ops");
    }
    return input;
  }
  MEMPLAN_ASSIGN_OR_RETURN(Graph graph, ParseGraphFile(path, bytes, options));
  if (!options.reorder.empty()) {
    MEMPLAN_ASSIGN_OR_RETURN(
        std::vector<int> order,
        ComputeOpOrder(graph, options.reorder, options.build));
    graph = PermuteOps(graph, order);
  }
  MEMPLAN_ASSIGN_OR_RETURN(input.problem, BuildProblem(graph, options.build));
  input.graph = std::move(graph);
  return input;
}

}  // namespace

absl::StatusOr<LoadedInput> Load(const std::string& path,
                                 const LoadOptions& options) {
  // An input within the size limit may still describe more than memory
  // holds (the parsed document, the problem): that is the input's fault,
  // reported as such rather than an abort. The readers throw nothing else.
  try {
    return LoadUnguarded(path, options);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "\"", path, "\": reading it needs more memory than there is"));
}

absl::StatusOr<LoadedInput> LoadInput(const std::string& path,
                                      const BuildOptions& options) {
  LoadOptions load;
  load.build = options;
  return Load(path, load);
}

absl::StatusOr<PlanFile> ReadPlanFile(const std::string& path,
                                      const ReadOptions& options) {
  PlanFile file;
  file.path = path;
  MEMPLAN_ASSIGN_OR_RETURN(file.text, ReadFile(path, options));
  file.csv = UncompressedName(path).ends_with(".csv");
  return file;
}

absl::StatusOr<std::optional<PlanProvenance>> RecordedProvenance(
    const PlanFile& file) {
  if (file.csv) return std::nullopt;
  absl::StatusOr<std::optional<PlanProvenance>> provenance =
      ParsePlanProvenance(file.text);
  if (!provenance.ok()) return Named(file.path, provenance.status());
  return provenance;
}

absl::StatusOr<Plan> ParsePlanFile(const PlanFile& file,
                                   const Problem& problem) {
  absl::StatusOr<Plan> plan = file.csv ? ParsePlanCsv(file.text, problem)
                                       : ParsePlanJson(file.text, problem);
  if (!plan.ok()) return Named(file.path, plan.status());
  return plan;
}

}  // namespace memplan

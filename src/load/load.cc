// Load, LoadInput and the plan files (memplan/load.h): a file to
// the graph and problem a plan is made of, and a plan file to a plan.

#include "memplan/load.h"

#include <algorithm>
#include <limits>
#include <new>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/arith.h"
#include "base/status_macros.h"
#include "memplan/formats.h"
#include "memplan/reorder.h"
#include "memplan/symbolic.h"

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

// The types `options` reads, named in the error for any other.
absl::Status UnknownType(const std::string& path, const LoadOptions& options) {
  std::vector<std::string> types = {".json", ".json.gz", ".csv", ".csv.gz"};
  for (const GraphImporter& importer : options.importers) {
    if (!importer.extension.empty()) types.push_back(importer.extension);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("\"", path, "\": unknown input type (expected ",
                   absl::StrJoin(types, ", "), ")"));
}

// "seq [1, 2048], batch [1, 8]", or "none": the dims an error lists.
std::string DeclaredDims(const DimRanges& dims) {
  if (dims.empty()) return "none";
  std::vector<std::string> names;
  for (const auto& [name, range] : dims) {
    names.push_back(absl::StrCat(name, " [", range.min, ", ", range.max, "]"));
  }
  return absl::StrJoin(names, ", ");
}

// The graph's dims narrowed to `ranges`, each inside its declared range.
absl::Status NarrowDims(Graph& graph, const DimRanges& ranges,
                        const DimValues& values) {
  MEMPLAN_RETURN_IF_ERROR(ValidateDimRanges(ranges));
  for (const auto& [name, range] : ranges) {
    if (auto value = values.find(name); value != values.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim \"", name, "\" is given both a value (", value->second,
          ") and a range [", range.min, ", ", range.max, "]"));
    }
    auto declared = graph.dims.find(name);
    if (declared == graph.dims.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("dim \"", name,
                       "\" is given a range, but the graph declares no "
                       "such dim (its dims: ",
                       DeclaredDims(graph.dims), ")"));
    }
    if (range.min < declared->second.min || range.max > declared->second.max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim \"", name, "\" is given the range [", range.min, ", ", range.max,
          "], which is not inside its declared range [", declared->second.min,
          ", ", declared->second.max, "]"));
    }
    declared->second = range;
  }
  return absl::OkStatus();
}

// A graph from the bytes of `path`: a graph JSON or an importer's format.
absl::StatusOr<Graph> ParseGraphFile(const std::string& path,
                                     std::string_view bytes,
                                     const LoadOptions& options) {
  absl::StatusOr<Graph> graph;
  if (const GraphImporter* importer = ImporterFor(path, options)) {
    graph = importer->import(path, bytes);  // its errors name the file
    if (!graph.ok()) return graph.status();
  } else {
    if (!UncompressedName(path).ends_with(".json")) {
      return UnknownType(path, options);
    }
    graph = ParseGraphJson(bytes);
    if (!graph.ok()) return Named(path, graph.status());
    // Symbolic sizes: the ranges options.dim_ranges narrows, the dims
    // options.dims binds.
    graph = ApplyDims(*std::move(graph), options.dims, options.dim_ranges);
    if (!graph.ok()) return Named(path, graph.status());
  }
  if (options.keep_symbolic) return graph;
  if (absl::Status concrete = CheckConcrete(*graph); !concrete.ok()) {
    return Named(path, concrete);
  }
  return graph;
}

// A buffer CSV input: its problem, before the options. Its offset and pool
// columns are a plan; only the plan's own file (`is_plan`) may have them.
absl::StatusOr<Problem> ParseCsvInput(const std::string& path,
                                      std::string_view text, bool is_plan) {
  absl::StatusOr<BufferCsv> csv = ParseBufferCsv(text);
  if (!csv.ok()) return Named(path, csv.status());
  if (csv->plan.has_value() && !is_plan) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": an input's CSV has no offset or pool column (a plan "
                     "with offsets is read by verify and report)"));
  }
  return std::move(csv->problem);
}

// A buffer CSV's problem with the pools, capacity and alignment of
// `options`.
absl::StatusOr<Problem> CsvProblem(Problem problem,
                                   const BuildOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(problem.pools, ResolvePools(problem.pools, options));
  // At alignment 1 the buffers are the ones ParseBufferCsv validated (sizes
  // within kMaxBytes, so none overflows when aligned), ResolvePools has
  // validated the pools, and no buffer of a CSV names a pool or is fixed:
  // ValidateProblem would find nothing new, and rounding and checking again
  // cost 40 ms at 10^6 buffers.
  if (options.alignment == 1) return problem;
  for (Buffer& b : problem.buffers) {
    b.alignment = options.alignment;
    if (b.size > std::numeric_limits<Bytes>::max() - b.alignment) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer \"", b.name, "\" overflows int64 when aligned"));
    }
    b.size = internal::RoundUp(b.size, b.alignment);
  }
  MEMPLAN_RETURN_IF_ERROR(ValidateProblem(problem));
  return problem;
}

// An input file read and parsed, not yet built: its graph, or the problem
// of a buffer CSV.
struct ParsedInput {
  std::optional<Graph> graph;
  Problem csv;
  std::string content_hash;
};

// `is_plan`: `path` is also the plan file (a buffer CSV with offsets).
absl::StatusOr<ParsedInput> ParseInput(const std::string& path,
                                       const LoadOptions& options,
                                       bool is_plan = false) {
  // A graph JSON or buffer CSV is text: read as such, a compressed file of
  // zeros stops at its first byte. An importer's format may be binary.
  ReadOptions read = options.read;
  read.text = ImporterFor(path, options) == nullptr;
  MEMPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, read));
  ParsedInput parsed;
  parsed.content_hash = ContentHash(bytes);
  if (ImporterFor(path, options) == nullptr &&
      UncompressedName(path).ends_with(".csv")) {
    MEMPLAN_ASSIGN_OR_RETURN(parsed.csv, ParseCsvInput(path, bytes, is_plan));
  } else {
    MEMPLAN_ASSIGN_OR_RETURN(parsed.graph,
                             ParseGraphFile(path, bytes, options));
  }
  return parsed;
}

// The op indices of `graph` in the order of `names`, checked (CheckOpOrder).
absl::StatusOr<std::vector<int>> RecordedOrder(
    const Graph& graph, const std::vector<std::string>& names,
    const BuildOptions& build) {
  absl::flat_hash_map<std::string, int> by_name;
  for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
    by_name.emplace(graph.ops[i].name, i);
  }
  std::vector<int> order;
  order.reserve(names.size());
  for (const std::string& name : names) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the plan's op_order names op \"", name, "\", not in the graph"));
    }
    order.push_back(it->second);
  }
  MEMPLAN_RETURN_IF_ERROR(CheckOpOrder(graph, order, build));
  return order;
}

// `recorded_order`: the op names in the order a plan file records, used
// instead of running `reorder` again when not empty.
absl::StatusOr<LoadedInput> BuildInput(
    ParsedInput parsed, const BuildOptions& build, const std::string& reorder,
    const PlanOptions& effort = {},
    const std::vector<std::string>& recorded_order = {}) {
  LoadedInput input;
  input.content_hash = std::move(parsed.content_hash);
  if (!parsed.graph.has_value()) {
    MEMPLAN_ASSIGN_OR_RETURN(input.problem,
                             CsvProblem(std::move(parsed.csv), build));
    if (!reorder.empty()) {
      return absl::InvalidArgumentError(
          "--reorder needs a graph INPUT; a buffer CSV has no ops");
    }
    return input;
  }
  Graph graph = *std::move(parsed.graph);
  if (IsSymbolic(graph)) {  // LoadOptions::keep_symbolic: no problem yet
    if (!reorder.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--reorder=", reorder, ": a graph with symbolic dims (",
          DeclaredDims(graph.dims), ") is planned in its own op order"));
    }
    input.op_order.resize(graph.ops.size());
    std::iota(input.op_order.begin(), input.op_order.end(), 0);
    input.graph = std::move(graph);
    return input;
  }
  if (!reorder.empty() && !recorded_order.empty()) {
    MEMPLAN_ASSIGN_OR_RETURN(input.op_order,
                             RecordedOrder(graph, recorded_order, build));
    graph = PermuteOps(graph, input.op_order);
  } else if (!reorder.empty()) {
    MEMPLAN_ASSIGN_OR_RETURN(input.op_order,
                             ComputeOpOrder(graph, reorder, build, effort));
    graph = PermuteOps(graph, input.op_order);
  } else {
    input.op_order.resize(graph.ops.size());
    std::iota(input.op_order.begin(), input.op_order.end(), 0);
  }
  MEMPLAN_ASSIGN_OR_RETURN(input.problem, BuildProblem(graph, build));
  input.graph = std::move(graph);
  return input;
}

std::string PoolNames(const std::vector<Pool>& pools) {
  std::vector<std::string> names;
  for (const Pool& p : pools) names.push_back(absl::StrCat("\"", p.name, "\""));
  return absl::StrJoin(names, ", ");
}

std::string CapacityText(Bytes capacity) {
  return capacity == 0 ? "unbounded" : absl::StrCat(capacity, " bytes");
}

// The declared pools tightened by the recorded ones (see PlanBuild).
absl::StatusOr<std::vector<Pool>> ReconcilePools(
    const std::vector<Pool>& declared, const std::vector<Pool>& recorded,
    const char* input, std::vector<std::string>& notes) {
  for (const Pool& r : recorded) {
    if (std::none_of(declared.begin(), declared.end(),
                     [&](const Pool& d) { return d.name == r.name; })) {
      return absl::InvalidArgumentError(absl::StrCat(
          "plan records pool \"", r.name, "\", which the ", input,
          " does not declare (it declares ", PoolNames(declared), ")"));
    }
  }
  std::vector<Pool> pools;
  for (const Pool& d : declared) {
    auto r = std::find_if(recorded.begin(), recorded.end(),
                          [&](const Pool& p) { return p.name == d.name; });
    if (r == recorded.end()) {
      notes.push_back(absl::StrCat("pool \"", d.name, "\" as the ", input,
                                   " declares it (the plan records none)"));
      pools.push_back(d);
      continue;
    }
    // 0 is unbounded: the largest capacity.
    const bool larger =
        d.capacity != 0 && (r->capacity == 0 || r->capacity > d.capacity);
    if (larger) {
      return absl::InvalidArgumentError(absl::StrCat(
          "plan records pool \"", d.name, "\" with capacity ", r->capacity,
          "; the ", input, " declares capacity ", d.capacity));
    }
    if (r->alignment < d.alignment) {
      return absl::InvalidArgumentError(absl::StrCat(
          "plan records pool \"", d.name, "\" with alignment ", r->alignment,
          "; the ", input, " declares alignment ", d.alignment));
    }
    if (r->capacity != d.capacity) {
      notes.push_back(absl::StrCat("pool \"", d.name, "\" of ", r->capacity,
                                   " bytes, as the plan records (the ", input,
                                   " declares ", CapacityText(d.capacity),
                                   ")"));
    }
    if (r->alignment != d.alignment) {
      notes.push_back(absl::StrCat("pool \"", d.name, "\" aligned to ",
                                   r->alignment, ", as the plan records (the ",
                                   input, " declares ", d.alignment, ")"));
    }
    pools.push_back(Pool{
        .name = d.name, .capacity = r->capacity, .alignment = r->alignment});
  }
  return pools;
}

// `read()`, or ResourceExhausted naming `path` when it runs out of memory.
// An input within the size limit may still describe more than memory holds
// (the parsed document, the problem): that is the input's fault, reported
// as such rather than an abort. The readers throw nothing else.
template <typename Read>
auto WithinMemory(const std::string& path, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "\"", path, "\": reading it needs more memory than there is"));
}

}  // namespace

absl::StatusOr<LoadedInput> Load(const std::string& path,
                                 const LoadOptions& options) {
  return WithinMemory(path, [&]() -> absl::StatusOr<LoadedInput> {
    MEMPLAN_ASSIGN_OR_RETURN(ParsedInput parsed, ParseInput(path, options));
    return BuildInput(std::move(parsed), options.build, options.reorder,
                      options.order_effort);
  });
}

absl::StatusOr<Graph> ApplyDims(Graph graph, const DimValues& values,
                                const DimRanges& ranges) {
  MEMPLAN_RETURN_IF_ERROR(NarrowDims(graph, ranges, values));
  return BindDims(std::move(graph), values);
}

absl::StatusOr<DimArguments> ParseDimArguments(
    const std::vector<std::string>& arguments) {
  DimArguments parsed;
  for (const std::string& argument : arguments) {
    const std::vector<std::string> parts = absl::StrSplit(argument, '=');
    const std::vector<std::string> bounds = parts.size() == 2
                                                ? absl::StrSplit(parts[1], ':')
                                                : std::vector<std::string>{};
    int64_t lo = 0;
    int64_t hi = 0;
    const bool named = parts.size() == 2 && !parts[0].empty();
    // Two values or two ranges; a value and a range are answered below.
    const bool is_range = bounds.size() == 2;
    if (named && (is_range ? parsed.ranges.contains(parts[0])
                           : parsed.values.contains(parts[0]))) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim=", argument, ": dim \"", parts[0],
                       "\" is given twice; give each dim once"));
    }
    // A value's lower limit is the dim's declared range (0 where it holds
    // 0), checked when the graph binds it.
    if (named && bounds.size() == 1 && absl::SimpleAtoi(bounds[0], &lo) &&
        lo >= 0) {
      parsed.values[parts[0]] = lo;
      continue;
    }
    if (!named || bounds.size() != 2 || !absl::SimpleAtoi(bounds[0], &lo) ||
        !absl::SimpleAtoi(bounds[1], &hi) || lo < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim=", argument,
                       ": expected NAME=VALUE (VALUE >= 0) or NAME=MIN:MAX "
                       "(0 <= MIN <= MAX)"));
    }
    if (lo > hi) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim=", argument, ": the range's min ", lo,
                       " is larger than its max ", hi));
    }
    parsed.ranges[parts[0]] = DimRange{.min = lo, .max = hi};
  }
  for (const auto& [name, range] : parsed.ranges) {
    if (auto value = parsed.values.find(name); value != parsed.values.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--dim: dim \"", name, "\" is given both a value (", value->second,
          ") and a range (", range.min, ":", range.max, ")"));
    }
  }
  return parsed;
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
  ReadOptions read = options;
  read.text = true;  // a plan file is JSON or CSV
  MEMPLAN_ASSIGN_OR_RETURN(file.text, ReadFile(path, read));
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

absl::StatusOr<PlanBuild> ApplyRecordedBuild(
    const PlanProvenance& recorded, const Graph* graph,
    const std::vector<Pool>& declared_pools) {
  PlanBuild out;
  out.recorded = true;
  out.build = recorded.build;
  out.reorder = recorded.reorder;
  out.op_order = recorded.op_order;
  const char* input = graph != nullptr ? "graph" : "input";
  if (!declared_pools.empty()) {
    // The pools the plan was made with: the recorded ones, else the
    // declared ones, and the recorded capacity of a single pool.
    absl::StatusOr<std::vector<Pool>> pools =
        ResolvePools(declared_pools, recorded.build);
    if (!pools.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the plan's build: ", pools.status().message()));
    }
    MEMPLAN_ASSIGN_OR_RETURN(
        out.build.pools,
        ReconcilePools(declared_pools, *pools, input, out.notes));
    out.build.capacity = 0;
  }
  if (graph != nullptr) {
    const Tensor* less_aligned = nullptr;
    bool inputs = false, outputs = false;
    for (const Tensor& t : graph->tensors) {
      if (t.kind == TensorKind::kInput) inputs = true;
      if (t.kind == TensorKind::kOutput) outputs = true;
      const bool planned =
          (t.kind != TensorKind::kInput || recorded.build.plan_inputs) &&
          (t.kind != TensorKind::kOutput || recorded.build.plan_outputs) &&
          (t.kind != TensorKind::kConstant || recorded.build.plan_constants);
      if (planned && less_aligned == nullptr && t.alignment != 0 &&
          t.alignment < recorded.build.alignment) {
        less_aligned = &t;
      }
    }
    if (less_aligned != nullptr) {
      out.notes.push_back(
          absl::StrCat("buffers aligned to ", recorded.build.alignment,
                       ", as the plan records (tensor \"", less_aligned->name,
                       "\" declares ", less_aligned->alignment, ")"));
    }
    if (inputs && !recorded.build.plan_inputs) {
      out.notes.push_back(
          "graph inputs left to the caller, as the plan records");
    }
    if (outputs && !recorded.build.plan_outputs) {
      out.notes.push_back(
          "graph outputs left to the caller, as the plan records");
    }
    if (!recorded.reorder.empty()) {
      out.notes.push_back(absl::StrCat("ops in the \"", recorded.reorder,
                                       "\" order, as the plan records"));
    }
  }
  return out;
}

absl::Status CheckRecordedInput(const PlanFile& plan,
                                const PlanProvenance& recorded,
                                const std::string& input_path,
                                const std::string& content_hash) {
  if (recorded.input_hash == content_hash) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(plan.path, " is a plan of another input: it was made for \"",
                   recorded.input, "\" (", recorded.input_hash, "), and \"",
                   input_path, "\" has other contents (", content_hash, ")"));
}

namespace {

// LoadInputOfPlan once its plan's record is read.
absl::StatusOr<PlanInput> LoadWithRecord(
    const std::string& path, const PlanFile& plan,
    const std::optional<PlanProvenance>& recorded, const LoadOptions& options,
    bool use_options) {
  MEMPLAN_ASSIGN_OR_RETURN(
      ParsedInput parsed,
      ParseInput(path, options, plan.csv && path == plan.path));
  if (recorded.has_value()) {
    MEMPLAN_RETURN_IF_ERROR(
        CheckRecordedInput(plan, *recorded, path, parsed.content_hash));
  }
  PlanInput out;
  if (recorded.has_value() && !use_options) {
    const Graph* graph = parsed.graph.has_value() ? &*parsed.graph : nullptr;
    const std::vector<Pool> declared =
        graph != nullptr ? graph->pools : std::vector<Pool>{};
    absl::StatusOr<PlanBuild> build =
        ApplyRecordedBuild(*recorded, graph, declared);
    if (!build.ok()) return Named(plan.path, build.status());
    out.build = *std::move(build);
  } else {
    out.build.build = options.build;
    out.build.reorder = options.reorder;
  }
  MEMPLAN_ASSIGN_OR_RETURN(
      out.input, BuildInput(std::move(parsed), out.build.build,
                            out.build.reorder, {}, out.build.op_order));
  return out;
}

}  // namespace

absl::StatusOr<PlanInput> LoadInputOfPlan(const std::string& path,
                                          const PlanFile& plan,
                                          const LoadOptions& options,
                                          bool use_options) {
  MEMPLAN_ASSIGN_OR_RETURN(std::optional<PlanProvenance> recorded,
                           RecordedProvenance(plan));
  return WithinMemory(path, [&]() -> absl::StatusOr<PlanInput> {
    return LoadWithRecord(path, plan, recorded, options, use_options);
  });
}

}  // namespace memplan

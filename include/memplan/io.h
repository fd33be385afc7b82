// File formats: memplan-graph-v1 JSON (optionally gzipped), the MiniMalloc
// buffer CSV (`id,lower,upper,size[,offset]`), and memplan-plan-v1 JSON.
// Every reader returns InvalidArgument naming the line, column or item at
// fault; nothing here throws.

#ifndef MEMPLAN_IO_H_
#define MEMPLAN_IO_H_

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

// Buffer CSV. Each row becomes a buffer named after its id, in one unbounded
// pool "default" (alignment 1). When the file has an `offset` column, the
// offsets come back too, as a plan in that pool.
struct BufferCsv {
  Problem problem;
  std::optional<Plan> plan;
};
absl::StatusOr<BufferCsv> ParseBufferCsv(std::string_view text);
// The problem's buffers as CSV; with a plan, adds the `offset` column.
std::string BufferCsvText(const Problem& problem, const Plan* plan = nullptr);

// memplan-plan-v1.
std::string PlanToJson(const Problem& problem, const Plan& plan);
// Reads a plan for `problem`: buffers are matched by name (or by any of their
// tensors' names), pools by name.
absl::StatusOr<Plan> ParsePlanJson(std::string_view text,
                                   const Problem& problem);

// Whole files; a name ending in ".gz" is read or written through zlib.
absl::StatusOr<std::string> ReadFile(const std::string& path);
absl::Status WriteFile(const std::string& path, std::string_view contents);

// The input of the tool: a graph JSON (.json, .json.gz) built with `options`,
// or a buffer CSV (.csv, .csv.gz; then `options` contributes pools, capacity
// and alignment only).
struct LoadedInput {
  std::optional<Graph> graph;  // set for graph inputs
  Problem problem;
  std::optional<Plan> csv_plan;  // offsets given in a CSV
};
absl::StatusOr<LoadedInput> LoadInput(const std::string& path,
                                      const BuildOptions& options);

}  // namespace memplan

#endif  // MEMPLAN_IO_H_

// TensorFlow Lite models as memplan graphs, and planned models back out (the
// optional component memplan::tflite, built when FlatBuffers is installed:
// find_package(memplan COMPONENTS tflite)). No TensorFlow dependency: the
// model is read with FlatBuffers' verifier and TFLite's schema.
//
// ReadTflite() turns subgraph 0 of a .tflite model into a Graph, as
// TensorFlow Lite Micro (TFLM) plans its arena:
//   * Tensors: every tensor of subgraph 0 in flatbuffer order (graph.tensors
//     [0, tensor_count)), each of TFLM's size: element count times the
//     element type's width, with alignment 16 (TFLM's arena alignment).
//     Kernel scratch buffers follow them (see Scratch).
//   * Kinds: subgraph inputs `input`, outputs `output`; a tensor with data in
//     its buffer `constant` (TFLM keeps it in flash); a variable tensor
//     (is_variable) `constant` too: TFLM allocates it in its persistent area,
//     alive across invocations, outside the planned arena; the rest
//     `activation`.
//   * Ops: the operators of subgraph 0 in their order ("<index>_<OPCODE>");
//     optional inputs (-1) are left out. RESHAPE's output is a view of its
//     input (an alias hint: TFLM's RESHAPE copies only when the two differ).
//   * Scratch: the arena memory TFLM's reference kernels request in Prepare
//     (RequestScratchBufferInArena), for the ops where it is known
//     (TfliteScratchRules(), docs/tflite.md), as scratch tensors of their op.
//     TFLM places them itself at run time, so they get no row in the
//     offline plan.
// Refused, each a clear error naming the item: a file that fails
// FlatBuffers' verifier or lacks the identifier "TFL3", an index out of
// range (tensor, buffer, opcode, subgraph), a negative dimension, a size
// beyond 2 GiB, a type TFLM cannot plan (string, resource, variant, 4- and
// 2-bit types), a model with more than one subgraph (control flow: IF,
// WHILE, CALL_ONCE), a tensor both a graph input and a graph output.

#ifndef MEMPLAN_TFLITE_H_
#define MEMPLAN_TFLITE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/load.h"
#include "memplan/types.h"

namespace memplan {

// The metadata entry TFLM reads its offline plan from.
inline constexpr std::string_view kTfliteOfflinePlanName =
    "OfflineMemoryAllocation";

// A model as read: the graph, and what writing it back needs.
struct TfliteModel {
  Graph graph;
  int tensor_count = 0;  // flatbuffer tensors of subgraph 0
  std::string bytes;     // the file's contents
  // The offsets of an OfflineMemoryAllocation entry already in the model,
  // one per flatbuffer tensor (-1: placed by TFLM); nullopt when it has none.
  std::optional<std::vector<int32_t>> offline_plan;
  // Why an OfflineMemoryAllocation entry in the model is unusable (the
  // wrong number of offsets, a malformed array); empty when none is.
  std::string offline_plan_problem;
};

// From a file (`path` names the file in every error) or from the bytes of a
// model (`name` in the errors).
absl::StatusOr<TfliteModel> ReadTfliteModel(const std::string& path);
absl::StatusOr<TfliteModel> ReadTfliteModelFromBytes(std::string bytes,
                                                     std::string_view name);
absl::StatusOr<Graph> ReadTflite(const std::string& path);
absl::StatusOr<Graph> ReadTfliteFromBytes(std::string_view bytes,
                                          std::string_view name = "model");

// The offline plan of `plan`, a plan of `problem` built from model.graph (or
// from it with its ops permuted): one offset per flatbuffer tensor, -1 for a
// tensor no buffer of the problem holds (constants, variables, tensors left
// to TFLM). InvalidArgument for a plan in several pools or an offset beyond
// int32.
absl::StatusOr<std::vector<int32_t>> TfliteOfflineOffsets(
    const TfliteModel& model, const Problem& problem, const Plan& plan);

// The contents of the OfflineMemoryAllocation entry for `offsets`, as TFLM
// reads it: int32 little-endian version 1, subgraph 0, the number of
// offsets, then the offsets (what --format=tflm-offline writes for a model).
std::string TfliteOfflinePlanBytes(const std::vector<int32_t>& offsets);

// The model with `offsets` as its OfflineMemoryAllocation metadata (int32
// little-endian: version 1, subgraph 0, the number of tensors, then the
// offsets), replacing an entry of that name, and the operators of subgraph 0
// in `op_order` (op_order[i]: the operator run at step i; empty = the
// model's own order). Everything else keeps its meaning. InvalidArgument for
// offsets of another length or an op order that is no permutation;
// Unimplemented for a model whose buffers lie outside the flatbuffer.
absl::StatusOr<std::string> WriteTflitePlan(
    const TfliteModel& model, const std::vector<int32_t>& offsets,
    const std::vector<int>& op_order = {});

// The graph the offline plan already in `model` is checked against: its
// tensors without kernel scratch (TFLM places that itself), RESHAPE's output
// sharing its input's buffer only where the plan gives both one offset
// (offsets of constants and variable tensors are not checked); and
// that plan for the problem built from it (alignment 16). InvalidArgument
// naming the tensor when a tensor TFLM needs in the arena has offset -1 or a
// misaligned one; FailedPrecondition when the model has no offline plan.
struct TflitePlanCheck {
  Graph graph;
  Problem problem;
  Plan plan;
};
absl::StatusOr<TflitePlanCheck> TfliteRecordedPlan(const TfliteModel& model);

// The importer of memplan/load.h that reads ".tflite" files, so that Load()
// reads TFLite models.
GraphImporter TfliteImporter();

// The scratch rules, one line per op, for docs and `memplan stats`.
std::vector<std::string> TfliteScratchRules();

}  // namespace memplan

#endif  // MEMPLAN_TFLITE_H_

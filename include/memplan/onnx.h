// ONNX models as memplan graphs (the optional component memplan::onnx,
// built when Protobuf and ONNX are installed: find_package(memplan
// COMPONENTS onnx)).
//
// ImportOnnx() reads a ModelProto and turns it into a Graph:
//   * Shapes: ONNX shape inference with data propagation; every tensor's
//     size is its inferred element count times the width of its element type
//     (bool, 8/16/32/64-bit integers, float16, bfloat16, float, double,
//     complex). Symbolic dimensions of graph inputs are bound by
//     `dims`; a tensor whose shape is still unknown is an error, never a
//     guessed size.
//   * Ranges: a symbolic dimension given a range in `dim_ranges` becomes a
//     dim of the graph (Graph::dims), and each size that depends on it an
//     expression (Tensor::symbolic_size, memplan/symbolic.h; the shape holds
//     -1 where it varies). The sizes are interpolated from imports at the
//     first 5 values of each ranged dim, as polynomials of degree <= 3 in
//     each, and checked at its maximum and values between; the ops, tensors
//     and hints must be the same at every value imported. docs/symbolic.md
//     says what that proves. A size that is no such polynomial, or a graph
//     that changes with the dim, is InvalidArgument naming the tensor or op
//     and the dim.
//   * Kinds: graph inputs are `input`, initializers and `Constant` outputs
//     `constant`, graph outputs `output`, everything else `activation`.
//     Weight data (inline or in external files) is never read.
//   * Ops: every node in the model's order (a topological order), Constant
//     nodes included, so that op steps are the model's node positions.
//     Empty optional inputs and outputs are left out.
//   * Views: Reshape, Flatten, Squeeze, Unsqueeze and Identity move no data
//     in the common runtimes; they become alias hints (OnnxViews::kAlias) or
//     ordinary ops with their own output buffers (kCopy).
//   * In-place: element-wise ops whose output has the shape and type of an
//     input get an in-place hint ("may reuse") for that input.
//
// Not supported yet, each a clear error naming the item: control flow (If,
// Loop, Scan, any subgraph: Unimplemented), string tensors, sequence, map and
// optional types (InvalidArgument), a file that is not a model
// (InvalidArgument), an opset newer than the installed ONNX can infer
// (Unimplemented). Nothing throws: ONNX's exceptions become a Status.

#ifndef MEMPLAN_ONNX_H_
#define MEMPLAN_ONNX_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "memplan/dim_expr.h"
#include "memplan/load.h"
#include "memplan/types.h"

namespace memplan {

enum class OnnxViews {
  kAlias,  // a view shares its input's buffer
  kCopy,   // a view is an op like any other, with its own output buffer
};

struct OnnxImportOptions {
  // Values of symbolic dimensions (dim_param), by name: {"batch", 8}. Each
  // must be at least 1 and name a symbolic dimension of a graph input.
  std::map<std::string, int64_t> dims;
  // Ranges of symbolic dimensions that stay symbolic (see "Ranges" above):
  // {"sequence", {1, 2048}}, each min >= 1, at most 3 dims, none also in
  // `dims`.
  DimRanges dim_ranges;
  OnnxViews views = OnnxViews::kAlias;
  bool inplace = true;  // in-place hints on element-wise ops
  // Graph inputs that carry weights rather than data. Models saved without
  // their parameters (torch.onnx.export(export_params=False), the light
  // files in bench/data/onnx) list the weights as graph inputs after the
  // data inputs; those weights are `constant`, like initializers.
  //   -1: every graph input carries data, except in a model whose graph doc
  //       string says its initializers were turned into graph inputs (the
  //       light files): there only the first one does.
  //   N >= 0: the first N graph inputs carry data, the others are weights.
  int data_inputs = -1;
};

// What the importer did, for `memplan stats`.
struct OnnxImportStats {
  int64_t nodes = 0;
  int64_t inputs = 0;       // tensors of kind input
  int64_t outputs = 0;      // ... output
  int64_t constants = 0;    // ... constant
  int64_t activations = 0;  // ... activation
  int64_t views = 0;        // alias hints: views sharing their input's buffer
  int64_t inplace = 0;      // in-place hints
  int64_t opset = 0;        // the model's ai.onnx opset
};

// From a file (`path` names the file in every error) or from the bytes of a
// serialized ModelProto. `stats`, when given, receives the importer's counts.
absl::StatusOr<Graph> ImportOnnx(const std::string& path,
                                 const OnnxImportOptions& options = {},
                                 OnnxImportStats* stats = nullptr);
absl::StatusOr<Graph> ImportOnnxFromBytes(std::string_view bytes,
                                          const OnnxImportOptions& options = {},
                                          OnnxImportStats* stats = nullptr);

// The importer of memplan/load.h that reads ".onnx" files with `options`,
// so that Load() reads ONNX models (each file once):
//   LoadOptions load;
//   load.importers.push_back(OnnxImporter(options, &stats));
// `stats`, when given, receives the counts of each import and must outlive
// the importer. Errors name the file, as ImportOnnx's do.
GraphImporter OnnxImporter(const OnnxImportOptions& options = {},
                           OnnxImportStats* stats = nullptr);

}  // namespace memplan

#endif  // MEMPLAN_ONNX_H_

// Shape inference for the ONNX importer (shape_arithmetic.cc): ONNX's own,
// and the shape arithmetic it leaves undone, computed.

#ifndef MEMPLAN_ONNX_SHAPE_ARITHMETIC_H_
#define MEMPLAN_ONNX_SHAPE_ARITHMETIC_H_

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace memplan::internal {

// Runs ONNX shape inference (with data propagation) on `model`; `strict`
// makes ONNX report the first node it cannot infer. ONNX's exceptions
// become a Status.
absl::Status InferShapes(onnx::ModelProto& model, bool strict);

// Shape inference, then the shape arithmetic it left (integer tensors of at
// most 4096 elements, computed nodes becoming Constants in `model`), until
// nothing new is computed.
absl::Status InferWithShapeArithmetic(onnx::ModelProto& model);

}  // namespace memplan::internal

#endif  // MEMPLAN_ONNX_SHAPE_ARITHMETIC_H_

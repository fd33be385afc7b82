// The arena memory TFLM's reference kernels request in Prepare
// (RequestScratchBufferInArena), by op: what ReadTflite() plans as scratch.

#ifndef MEMPLAN_SRC_TFLITE_TFLITE_SCRATCH_H_
#define MEMPLAN_SRC_TFLITE_TFLITE_SCRATCH_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "memplan/types.h"

namespace memplan::tflite_internal {

// One tensor operand of an op as the scratch rules see it; `present` is
// false for an optional operand left out (-1) or beyond the op's operands.
struct Operand {
  bool present = false;
  std::string_view type;  // "int8", "float32", ... (TFLite's type, lower case)
  std::vector<int64_t> shape;
  int64_t elements = 0;
};

// The bytes of each scratch buffer op `op` (a builtin op's name:
// "TRANSPOSE_CONV") requests, in request order; empty when none is known.
std::vector<Bytes> ScratchRequests(std::string_view op,
                                   const std::vector<Operand>& inputs,
                                   const std::vector<Operand>& outputs);

}  // namespace memplan::tflite_internal

#endif  // MEMPLAN_SRC_TFLITE_TFLITE_SCRATCH_H_

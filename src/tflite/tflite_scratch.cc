// TFLM's kernel scratch requests, from its reference kernels
// (tensorflow/lite/micro/kernels/*.cc, RequestScratchBufferInArena in each
// kernel's Prepare). The rules and TfliteScratchRules() agree line by line.

#include "tflite/tflite_scratch.h"

#include <string>
#include <vector>

#include "memplan/tflite.h"

namespace memplan::tflite_internal {
namespace {

const Operand& At(const std::vector<Operand>& operands, size_t i) {
  static const Operand kAbsent;
  return i < operands.size() ? operands[i] : kAbsent;
}

bool IsQuantized8or16(const Operand& operand) {
  return operand.type == "int8" || operand.type == "int16";
}

// Host pointers: TFLM's ADD_N keeps one per input (8 bytes on a 64-bit
// host, 4 on a 32-bit microcontroller; the larger is planned).
constexpr Bytes kPointerBytes = 8;

std::vector<Bytes> TransposeConv(const std::vector<Operand>& inputs,
                                 const std::vector<Operand>& outputs) {
  // inputs: output_shape, filter, input, bias
  const Operand& input = At(inputs, 2);
  const Operand& output = At(outputs, 0);
  if (input.type == "int8") return {4 * output.elements};
  if (input.type != "int16") return {};
  std::vector<Bytes> requests;
  const Operand& bias = At(inputs, 3);
  if (bias.present && bias.type == "int16") {
    requests.push_back(8 * bias.elements);
  }
  requests.push_back(8 * output.elements);
  return requests;
}

std::vector<Bytes> Reduce(std::string_view op,
                          const std::vector<Operand>& inputs,
                          const std::vector<Operand>& outputs) {
  const Operand& input = At(inputs, 0);
  const Operand& axis = At(inputs, 1);
  const Bytes rank = static_cast<Bytes>(input.shape.size());
  std::vector<Bytes> requests;
  if ((op == "MEAN" || op == "SUM") && IsQuantized8or16(input)) {
    requests.push_back(4 * At(outputs, 0).elements);
  }
  requests.push_back(4 * rank);
  requests.push_back(4 * axis.elements);
  return requests;
}

}  // namespace

std::vector<Bytes> ScratchRequests(std::string_view op,
                                   const std::vector<Operand>& inputs,
                                   const std::vector<Operand>& outputs) {
  if (op == "TRANSPOSE_CONV") return TransposeConv(inputs, outputs);
  if (op == "MEAN" || op == "SUM" || op == "REDUCE_MAX" || op == "REDUCE_MIN") {
    return Reduce(op, inputs, outputs);
  }
  if (op == "CONV_2D" || op == "DEPTHWISE_CONV_2D" || op == "FULLY_CONNECTED") {
    const Operand& filter = At(inputs, 1);
    if (filter.type == "int4") return {filter.elements};
    return {};
  }
  if (op == "ADD_N") {
    const std::string_view type = At(outputs, 0).type;
    if (type == "float32" || type == "int8") {
      return {kPointerBytes * static_cast<Bytes>(inputs.size())};
    }
    return {};
  }
  if (op == "MIRROR_PAD") {
    const Bytes rank = static_cast<Bytes>(At(inputs, 0).shape.size());
    return {4 * rank, 4 * rank};
  }
  return {};
}

}  // namespace memplan::tflite_internal

namespace memplan {

std::vector<std::string> TfliteScratchRules() {
  return {
      "TRANSPOSE_CONV, int8 input: 4 bytes x output elements (int32 "
      "accumulators)",
      "TRANSPOSE_CONV, int16 input: 8 bytes x bias elements for an int16 "
      "bias, then 8 bytes x output elements",
      "MEAN, SUM: 4 bytes x output elements for int8 and int16 inputs, then "
      "4 bytes x input rank, then 4 bytes x axis elements",
      "REDUCE_MAX, REDUCE_MIN: 4 bytes x input rank, then 4 bytes x axis "
      "elements",
      "CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED with an int4 filter: 1 "
      "byte x filter elements (the unpacked filter)",
      "ADD_N, float32 or int8 output: 8 bytes x inputs (a pointer each)",
      "MIRROR_PAD: 4 bytes x input rank, twice",
  };
}

}  // namespace memplan

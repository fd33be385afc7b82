// A Llama-style decoder with a symbolic sequence length, for the tests and
// the benchmark of symbolic plans.
//
// Per layer (d = model width, h = heads, f = the MLP's width, float32):
// RMSNorm of the hidden state (4*d*seq bytes), q, k and v, rotary q and k
// (each 4*d*seq), the K and V caches of the layer (4*d*seq each, the keys
// and values of all seq positions: graph inputs read by the attention and
// by the last op, so alive throughout), attention scores and their softmax
// (4*h*seq*seq), the attention output and its projection, a residual, a
// second RMSNorm, the SwiGLU MLP (gate and up projections, SiLU of the
// gate, their product: 4*f*seq each) and its down projection, the next
// residual. The rotary tables (cos and sin, 4*(d/h)*seq each) are inputs
// read by every layer. The last op normalises the last position and makes
// its logits (4*vocab bytes).

#ifndef MEMPLAN_WORKLOADS_SYMBOLIC_DECODER_H_
#define MEMPLAN_WORKLOADS_SYMBOLIC_DECODER_H_

#include <cstdint>

#include "memplan/types.h"

namespace memplan::internal {

struct SymbolicDecoderOptions {
  int layers = 4;
  int64_t width = 512;  // d
  int64_t heads = 8;    // h
  int64_t mlp = 1408;   // f
  int64_t vocab = 32000;
  int64_t min_seq = 1;
  int64_t max_seq = 2048;
};

Graph SymbolicDecoder(const SymbolicDecoderOptions& options = {});

}  // namespace memplan::internal

#endif  // MEMPLAN_WORKLOADS_SYMBOLIC_DECODER_H_

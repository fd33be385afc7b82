#include "workloads/symbolic_decoder.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "memplan/dim_expr.h"

namespace memplan::internal {

Graph SymbolicDecoder(const SymbolicDecoderOptions& options) {
  Graph g;
  g.name = absl::StrCat("llama_decoder_", options.layers, "x", options.width);
  g.dims["seq"] = {options.min_seq, options.max_seq};
  const int64_t d = options.width;
  auto linear = [](int64_t c) {  // c*seq bytes
    return *Multiply(DimExpr(c), DimExpr::Dim("seq"));
  };
  auto tensor = [&](const std::string& name, const DimExpr& size,
                    TensorKind kind = TensorKind::kActivation) {
    Tensor t;
    t.name = name;
    t.kind = kind;
    t.symbolic_size = size;
    g.tensors.push_back(std::move(t));
  };
  auto op = [&](const std::string& name, std::vector<std::string> inputs,
                std::vector<std::string> outputs) {
    Op o;
    o.name = name;
    o.inputs = std::move(inputs);
    o.outputs = std::move(outputs);
    g.ops.push_back(std::move(o));
  };
  const DimExpr hidden = linear(4 * d);
  const DimExpr square =
      *Multiply(linear(4 * options.heads), DimExpr::Dim("seq"));
  const DimExpr mlp = linear(4 * options.mlp);
  const DimExpr table = linear(4 * (d / options.heads));
  tensor("x0", hidden, TensorKind::kInput);
  tensor("rope_cos", table, TensorKind::kInput);
  tensor("rope_sin", table, TensorKind::kInput);
  std::vector<std::string> state = {"rope_cos", "rope_sin"};
  std::string x = "x0";
  for (int l = 0; l < options.layers; ++l) {
    const std::string p = absl::StrCat("l", l, ".");
    tensor(p + "k_cache", hidden, TensorKind::kInput);
    tensor(p + "v_cache", hidden, TensorKind::kInput);
    state.push_back(p + "k_cache");
    state.push_back(p + "v_cache");
    for (const char* t : {"norm1", "q", "k", "v", "q_rot", "k_rot", "attn",
                          "proj", "res", "norm2", "down", "out"}) {
      tensor(p + t, hidden);
    }
    tensor(p + "scores", square);
    tensor(p + "probs", square);
    for (const char* t : {"gate", "up", "silu", "prod"}) tensor(p + t, mlp);
    op(p + "rms_norm1", {x}, {p + "norm1"});
    op(p + "q_proj", {p + "norm1"}, {p + "q"});
    op(p + "k_proj", {p + "norm1"}, {p + "k"});
    op(p + "v_proj", {p + "norm1"}, {p + "v"});
    op(p + "rotary_q", {p + "q", "rope_cos", "rope_sin"}, {p + "q_rot"});
    op(p + "rotary_k", {p + "k", "rope_cos", "rope_sin"}, {p + "k_rot"});
    op(p + "qk", {p + "q_rot", p + "k_rot", p + "k_cache"}, {p + "scores"});
    op(p + "softmax", {p + "scores"}, {p + "probs"});
    op(p + "pv", {p + "probs", p + "v", p + "v_cache"}, {p + "attn"});
    op(p + "o_proj", {p + "attn"}, {p + "proj"});
    op(p + "add1", {x, p + "proj"}, {p + "res"});
    op(p + "rms_norm2", {p + "res"}, {p + "norm2"});
    op(p + "gate_proj", {p + "norm2"}, {p + "gate"});
    op(p + "up_proj", {p + "norm2"}, {p + "up"});
    op(p + "silu", {p + "gate"}, {p + "silu"});
    op(p + "mul", {p + "silu", p + "up"}, {p + "prod"});
    op(p + "down_proj", {p + "prod"}, {p + "down"});
    op(p + "add2", {p + "res", p + "down"}, {p + "out"});
    x = p + "out";
  }
  // The caches and tables are state kept for the next step: the last op
  // reads them, so they stay alive throughout.
  std::vector<std::string> final_inputs = {x};
  final_inputs.insert(final_inputs.end(), state.begin(), state.end());
  Tensor logits;
  logits.name = "logits";
  logits.kind = TensorKind::kOutput;
  logits.size = 4 * options.vocab;
  g.tensors.push_back(std::move(logits));
  op("norm_and_head", final_inputs, {"logits"});
  return g;
}

}  // namespace memplan::internal

#include "workloads/symbolic_decoder.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "memplan/dim_expr.h"
#include "workloads/symbolic_builder.h"

namespace memplan::internal {

Graph SymbolicDecoder(const SymbolicDecoderOptions& options) {
  SymbolicGraphBuilder g("llama_decoder", options);
  const int64_t d = options.width;
  const DimExpr hidden = SymbolicGraphBuilder::Linear(4 * d);
  const DimExpr square = SymbolicGraphBuilder::Square(4 * options.heads);
  const DimExpr mlp = SymbolicGraphBuilder::Linear(4 * options.mlp);
  const DimExpr table = SymbolicGraphBuilder::Linear(4 * (d / options.heads));
  g.AddTensor("x0", hidden, TensorKind::kInput);
  g.AddTensor("rope_cos", table, TensorKind::kInput);
  g.AddTensor("rope_sin", table, TensorKind::kInput);
  std::vector<std::string> state = {"rope_cos", "rope_sin"};
  std::string x = "x0";
  for (int l = 0; l < options.layers; ++l) {
    const std::string p = absl::StrCat("l", l, ".");
    g.AddTensor(p + "k_cache", hidden, TensorKind::kInput);
    g.AddTensor(p + "v_cache", hidden, TensorKind::kInput);
    state.push_back(p + "k_cache");
    state.push_back(p + "v_cache");
    for (const char* t : {"norm1", "q", "k", "v", "q_rot", "k_rot", "attn",
                          "proj", "res", "norm2", "down", "out"}) {
      g.AddTensor(p + t, hidden);
    }
    g.AddTensor(p + "scores", square);
    g.AddTensor(p + "probs", square);
    for (const char* t : {"gate", "up", "silu", "prod"}) {
      g.AddTensor(p + t, mlp);
    }
    g.AddOp(p + "rms_norm1", {x}, {p + "norm1"});
    g.AddOp(p + "q_proj", {p + "norm1"}, {p + "q"});
    g.AddOp(p + "k_proj", {p + "norm1"}, {p + "k"});
    g.AddOp(p + "v_proj", {p + "norm1"}, {p + "v"});
    g.AddOp(p + "rotary_q", {p + "q", "rope_cos", "rope_sin"}, {p + "q_rot"});
    g.AddOp(p + "rotary_k", {p + "k", "rope_cos", "rope_sin"}, {p + "k_rot"});
    g.AddOp(p + "qk", {p + "q_rot", p + "k_rot", p + "k_cache"},
            {p + "scores"});
    g.AddOp(p + "softmax", {p + "scores"}, {p + "probs"});
    g.AddOp(p + "pv", {p + "probs", p + "v", p + "v_cache"}, {p + "attn"});
    g.AddOp(p + "o_proj", {p + "attn"}, {p + "proj"});
    g.AddOp(p + "add1", {x, p + "proj"}, {p + "res"});
    g.AddOp(p + "rms_norm2", {p + "res"}, {p + "norm2"});
    g.AddOp(p + "gate_proj", {p + "norm2"}, {p + "gate"});
    g.AddOp(p + "up_proj", {p + "norm2"}, {p + "up"});
    g.AddOp(p + "silu", {p + "gate"}, {p + "silu"});
    g.AddOp(p + "mul", {p + "silu", p + "up"}, {p + "prod"});
    g.AddOp(p + "down_proj", {p + "prod"}, {p + "down"});
    g.AddOp(p + "add2", {p + "res", p + "down"}, {p + "out"});
    x = p + "out";
  }
  // The caches and tables are state kept for the next step: the last op
  // reads them, so they stay alive throughout.
  std::vector<std::string> final_inputs = {x};
  final_inputs.insert(final_inputs.end(), state.begin(), state.end());
  g.AddFixedTensor("logits", 4 * options.vocab, TensorKind::kOutput);
  g.AddOp("norm_and_head", final_inputs, {"logits"});
  return std::move(g).Take();
}

}  // namespace memplan::internal

#include "workloads/symbolic_transformer.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "memplan/dim_expr.h"
#include "workloads/symbolic_builder.h"

namespace memplan::internal {

Graph SymbolicTransformer(const SymbolicTransformerOptions& options) {
  SymbolicGraphBuilder g("transformer", options);
  const int64_t d = options.width;
  const DimExpr hidden = SymbolicGraphBuilder::Linear(4 * d);
  const DimExpr square = SymbolicGraphBuilder::Square(4 * options.heads);
  const DimExpr mlp = SymbolicGraphBuilder::Linear(16 * d);
  g.AddTensor("x0", hidden, TensorKind::kInput);
  std::string x = "x0";
  for (int l = 0; l < options.layers; ++l) {
    const std::string p = absl::StrCat("l", l, ".");
    if (options.kv_cache) {
      for (const char* c : {"k_cache", "v_cache"}) {
        g.AddFixedTensor(p + c, 4 * d * options.max_seq, TensorKind::kInput);
      }
    }
    for (const char* t :
         {"ln1", "q", "k", "v", "attn", "proj", "res", "ln2", "down", "out"}) {
      g.AddTensor(p + t, hidden);
    }
    g.AddTensor(p + "scores", square);
    g.AddTensor(p + "probs", square);
    g.AddTensor(p + "up", mlp);
    g.AddTensor(p + "act", mlp);
    g.AddOp(p + "norm1", {x}, {p + "ln1"});
    g.AddOp(p + "q_proj", {p + "ln1"}, {p + "q"});
    g.AddOp(p + "k_proj", {p + "ln1"}, {p + "k"});
    g.AddOp(p + "v_proj", {p + "ln1"}, {p + "v"});
    std::vector<std::string> score_inputs = {p + "q", p + "k"};
    if (options.kv_cache) score_inputs.push_back(p + "k_cache");
    g.AddOp(p + "qk", score_inputs, {p + "scores"});
    g.AddOp(p + "softmax", {p + "scores"}, {p + "probs"});
    std::vector<std::string> mix_inputs = {p + "probs", p + "v"};
    if (options.kv_cache) mix_inputs.push_back(p + "v_cache");
    g.AddOp(p + "pv", mix_inputs, {p + "attn"});
    g.AddOp(p + "o_proj", {p + "attn"}, {p + "proj"});
    g.AddOp(p + "add1", {x, p + "proj"}, {p + "res"});
    g.AddOp(p + "norm2", {p + "res"}, {p + "ln2"});
    g.AddOp(p + "up_proj", {p + "ln2"}, {p + "up"});
    g.AddOp(p + "gelu", {p + "up"}, {p + "act"});
    g.AddOp(p + "down_proj", {p + "act"}, {p + "down"});
    g.AddOp(p + "add2", {p + "res", p + "down"}, {p + "out"});
    x = p + "out";
  }
  // The caches are state that outlives the step: the last op reads them
  // (with the last hidden state), so they stay alive throughout.
  std::vector<std::string> final_inputs = {x};
  if (options.kv_cache) {
    for (int l = 0; l < options.layers; ++l) {
      final_inputs.push_back(absl::StrCat("l", l, ".k_cache"));
      final_inputs.push_back(absl::StrCat("l", l, ".v_cache"));
    }
  }
  g.AddTensor("y", hidden, TensorKind::kOutput);
  g.AddOp("head", final_inputs, {"y"});
  return std::move(g).Take();
}

}  // namespace memplan::internal

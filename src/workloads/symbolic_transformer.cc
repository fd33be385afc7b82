#include "workloads/symbolic_transformer.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "memplan/dim_expr.h"

namespace memplan::internal {

Graph SymbolicTransformer(const SymbolicTransformerOptions& options) {
  Graph g;
  g.name = absl::StrCat("transformer_", options.layers, "x", options.width);
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
  const DimExpr hidden = linear(4 * d);
  const DimExpr square = *Multiply(linear(4 * options.heads), DimExpr::Dim("seq"));
  auto op = [&](const std::string& name, std::vector<std::string> inputs,
                std::vector<std::string> outputs) {
    Op o;
    o.name = name;
    o.inputs = std::move(inputs);
    o.outputs = std::move(outputs);
    g.ops.push_back(std::move(o));
  };
  tensor("x0", hidden, TensorKind::kInput);
  std::string x = "x0";
  for (int l = 0; l < options.layers; ++l) {
    const std::string p = absl::StrCat("l", l, ".");
    std::vector<std::string> attention_inputs = {p + "q", p + "k", p + "v"};
    if (options.kv_cache) {
      for (const char* c : {"k_cache", "v_cache"}) {
        Tensor cache;
        cache.name = p + c;
        cache.size = 4 * d * options.max_seq;
        cache.kind = TensorKind::kInput;
        g.tensors.push_back(std::move(cache));
        attention_inputs.push_back(p + c);
      }
    }
    for (const char* t : {"ln1", "q", "k", "v", "attn", "proj", "res", "ln2",
                          "down", "out"}) {
      tensor(p + t, hidden);
    }
    tensor(p + "scores", square);
    tensor(p + "probs", square);
    tensor(p + "up", linear(16 * d));
    tensor(p + "act", linear(16 * d));
    op(p + "norm1", {x}, {p + "ln1"});
    op(p + "q_proj", {p + "ln1"}, {p + "q"});
    op(p + "k_proj", {p + "ln1"}, {p + "k"});
    op(p + "v_proj", {p + "ln1"}, {p + "v"});
    std::vector<std::string> score_inputs = {p + "q", p + "k"};
    if (options.kv_cache) score_inputs.push_back(p + "k_cache");
    op(p + "qk", score_inputs, {p + "scores"});
    op(p + "softmax", {p + "scores"}, {p + "probs"});
    std::vector<std::string> mix_inputs = {p + "probs", p + "v"};
    if (options.kv_cache) mix_inputs.push_back(p + "v_cache");
    op(p + "pv", mix_inputs, {p + "attn"});
    op(p + "o_proj", {p + "attn"}, {p + "proj"});
    op(p + "add1", {x, p + "proj"}, {p + "res"});
    op(p + "norm2", {p + "res"}, {p + "ln2"});
    op(p + "up_proj", {p + "ln2"}, {p + "up"});
    op(p + "gelu", {p + "up"}, {p + "act"});
    op(p + "down_proj", {p + "act"}, {p + "down"});
    op(p + "add2", {p + "res", p + "down"}, {p + "out"});
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
  tensor("y", hidden, TensorKind::kOutput);
  op("head", final_inputs, {"y"});
  return g;
}

}  // namespace memplan::internal

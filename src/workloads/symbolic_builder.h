// What the generated symbolic workloads (symbolic_transformer.h,
// symbolic_decoder.h) are built with: a graph over one dim, seq, added to
// tensor by tensor and op by op, and the sizes their tensors take.

#ifndef MEMPLAN_WORKLOADS_SYMBOLIC_BUILDER_H_
#define MEMPLAN_WORKLOADS_SYMBOLIC_BUILDER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "memplan/dim_expr.h"
#include "memplan/types.h"

namespace memplan::internal {

class SymbolicGraphBuilder {
 public:
  // The graph "<kind>_<layers>x<width>" of a workload's options (each has
  // layers, width, min_seq and max_seq), with seq in [min_seq, max_seq].
  template <typename Options>
  SymbolicGraphBuilder(absl::string_view kind, const Options& options) {
    graph_.name = absl::StrCat(kind, "_", options.layers, "x", options.width);
    graph_.dims["seq"] = {options.min_seq, options.max_seq};
  }

  // c*seq and c*seq*seq bytes.
  static DimExpr Linear(int64_t c) {
    return *Multiply(DimExpr(c), DimExpr::Dim("seq"));
  }
  static DimExpr Square(int64_t c) {
    return *Multiply(Linear(c), DimExpr::Dim("seq"));
  }

  // A tensor whose size depends on seq.
  void AddTensor(const std::string& name, const DimExpr& size,
                 TensorKind kind = TensorKind::kActivation) {
    Tensor t;
    t.name = name;
    t.kind = kind;
    t.symbolic_size = size;
    graph_.tensors.push_back(std::move(t));
  }
  // A tensor of the same size at every seq.
  void AddFixedTensor(const std::string& name, Bytes size, TensorKind kind) {
    Tensor t;
    t.name = name;
    t.size = size;
    t.kind = kind;
    graph_.tensors.push_back(std::move(t));
  }
  // An op reading `inputs` and making `outputs`, after those added before.
  void AddOp(const std::string& name, std::vector<std::string> inputs,
             std::vector<std::string> outputs) {
    Op o;
    o.name = name;
    o.inputs = std::move(inputs);
    o.outputs = std::move(outputs);
    graph_.ops.push_back(std::move(o));
  }

  Graph Take() && { return std::move(graph_); }

 private:
  Graph graph_;
};

}  // namespace memplan::internal

#endif  // MEMPLAN_WORKLOADS_SYMBOLIC_BUILDER_H_

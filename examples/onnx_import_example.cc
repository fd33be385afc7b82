// The optional ONNX importer: link memplan::onnx, import a model with its
// symbolic dimensions bound, then plan the graph like any other.
//
// Usage: onnx_import_example MODEL.onnx (a model whose inputs have the
// symbolic dims batch and sequence, such as the bundled
// bench/data/onnx/transformer_encoder_opset17.onnx).

#include <cstdio>
#include <string>

#include "memplan/memplan.h"
#include "memplan/onnx.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  memplan::OnnxImportOptions options;
  options.dims = {{"batch", 8}, {"sequence", 128}};
  absl::StatusOr<memplan::Graph> graph = memplan::ImportOnnx(path, options);
  if (!graph.ok()) {
    std::fprintf(stderr, "%s\n", std::string(graph.status().message()).c_str());
    return 1;
  }
  // Then plan it as any graph.
  absl::StatusOr<memplan::GraphPlan> result = memplan::PlanMemory(*graph, {});
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(result.status().message()).c_str());
    return 1;
  }
  std::printf("%s: %zu ops, arena %lld bytes (lower bound %lld)\n",
              path.c_str(), graph->ops.size(),
              static_cast<long long>(result->plan.peak),
              static_cast<long long>(result->plan.lower_bound));
  return 0;
}

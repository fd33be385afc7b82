// Training steps as the rematerialization tests and benchmark use them:
// every op that writes nothing and is not pinned made recomputable, at a
// cost of the bytes it makes (a stand-in for FLOPs that any graph has).

#ifndef MEMPLAN_WORKLOADS_BYTE_COSTS_H_
#define MEMPLAN_WORKLOADS_BYTE_COSTS_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "memplan/types.h"

namespace memplan {

inline Graph WithByteCosts(Graph graph) {
  absl::flat_hash_map<std::string, Bytes> size;
  for (const Tensor& t : graph.tensors) size[t.name] = t.size;
  for (Op& op : graph.ops) {
    op.recomputable = op.writes.empty() && !op.pinned;
    op.cost = 0;
    for (const std::string& out : op.outputs) *op.cost += size[out];
  }
  return graph;
}

}  // namespace memplan

#endif  // MEMPLAN_WORKLOADS_BYTE_COSTS_H_

// What may run again, for the heuristic (remat.cc) and the exact mode
// (remat_exact.cc) alike: who makes and reads each tensor, which tensors
// share bytes, and the rules an op must meet to be recomputed.

#ifndef MEMPLAN_REMAT_ELIGIBLE_H_
#define MEMPLAN_REMAT_ELIGIBLE_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "memplan/types.h"

namespace memplan::remat {

// No tensor, op or buffer.
inline constexpr int kNoIndex = -1;

// Who makes and reads each tensor, which tensors share bytes (the groups
// that alias and in-place hints join) and the ops writing each group.
struct GraphIndex {
  absl::flat_hash_map<std::string, int> tensor;
  std::vector<int> producer;
  std::vector<std::vector<int>> readers;  // ascending op indices
  std::vector<int> parent;                // union-find over tensors
  std::vector<bool> shared;               // per group root
  std::vector<std::vector<int>> writers;  // per group root, ascending
  std::vector<std::vector<int>> group;    // per group root, its tensors
  absl::flat_hash_set<std::string> in_conflicts;

  int Find(int t) {
    while (parent[t] != t) t = parent[t] = parent[parent[t]];
    return t;
  }
  int Of(const std::string& name) const {
    auto it = tensor.find(name);
    return it == tensor.end() ? kNoIndex : it->second;
  }
};

GraphIndex IndexGraph(const Graph& graph);

// Whether op i may run again: recomputable, not pinned, with outputs and
// no writes, scratch tensors, alias or in-place hints; each output an
// activation, not fixed, in no conflict, whose bytes are written by no op
// and shared with nothing but views of it (pure ops with alias or in-place
// hints reading and making only tensors sharing those bytes) in its
// buffer (`buffer_of`: tensor -> problem buffer, or kNoIndex). `views`
// gets the view ops run again with it (ascending). Whether its inputs may
// be read where it runs again is the caller's to check.
bool Eligible(const Graph& graph, int i, GraphIndex& index,
              const std::vector<int>& buffer_of, std::vector<int>& views);

}  // namespace memplan::remat

#endif  // MEMPLAN_REMAT_ELIGIBLE_H_

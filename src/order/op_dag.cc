// The dependency DAG every op ordering keeps. See op_dag.h.

#include "order/op_dag.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/arith.h"

namespace memplan::internal {
namespace {

constexpr int kNone = -1;

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Unite(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

// Adds the order Op::writes asks for to `succ`: per written group of bytes
// (`group`, ByteGroups()), its readers and writers in the original order as
// a chain. A writer comes after the readers since the previous writer and
// after that writer; a reader comes after the previous writer. By
// transitivity every reader keeps its side of every writer, and the writers
// their order, with at most two edges per (op, group) instead of one per
// (reader, writer) pair. Every edge points forward in the original order,
// so the DAG stays acyclic. Groups nobody writes add nothing: a view moves
// no data.
void AddWriteOrder(const Graph& graph,
                   const absl::flat_hash_map<std::string, int>& index,
                   const std::vector<int>& group,
                   std::vector<std::vector<int>>& succ) {
  struct Chain {
    int writer = kNone;        // the latest writer so far
    std::vector<int> readers;  // readers since it
  };
  absl::flat_hash_map<int, Chain> chains;  // written groups only
  for (const Op& op : graph.ops) {
    for (int j : op.writes) {
      chains.try_emplace(group[TensorIndex(index, op.inputs[j])]);
    }
  }
  if (chains.empty()) return;
  std::vector<int> writes;
  std::vector<int> reads;
  for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
    const Op& op = graph.ops[i];
    writes.clear();
    reads.clear();
    for (int j : op.writes) {
      writes.push_back(group[TensorIndex(index, op.inputs[j])]);
    }
    for (const std::string& name : op.inputs) {
      const int g = group[TensorIndex(index, name)];
      if (chains.contains(g)) reads.push_back(g);
    }
    for (std::vector<int>* v : {&writes, &reads}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    for (int g : writes) {
      Chain& chain = chains[g];
      for (int r : chain.readers) succ[r].push_back(i);
      if (chain.writer != kNone) succ[chain.writer].push_back(i);
      chain.readers.clear();
      chain.writer = i;
    }
    for (int g : reads) {
      if (std::binary_search(writes.begin(), writes.end(), g)) continue;
      Chain& chain = chains[g];
      if (chain.writer != kNone) succ[chain.writer].push_back(i);
      chain.readers.push_back(i);
    }
  }
}

// Chains the pinned ops (Op::pinned) in the original order: each after the
// previous one, so every order keeps their relative order. Forward edges.
void AddPinOrder(const Graph& graph, std::vector<std::vector<int>>& succ) {
  int previous = kNone;
  for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
    if (!graph.ops[i].pinned) continue;
    if (previous != kNone) succ[previous].push_back(i);
    previous = i;
  }
}

}  // namespace

std::vector<int> ByteGroups(
    const Graph& graph, const Problem& problem,
    const absl::flat_hash_map<std::string, int>& index) {
  std::vector<int> group(graph.tensors.size());
  std::iota(group.begin(), group.end(), 0);
  auto find = [&](int t) {
    while (group[t] != t) t = group[t] = group[group[t]];
    return t;
  };
  auto unite = [&](int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) group[std::max(a, b)] = std::min(a, b);
  };
  for (const Op& op : graph.ops) {
    for (const OperandPair& pair : op.alias) {
      unite(TensorIndex(index, op.outputs[pair.output]),
            TensorIndex(index, op.inputs[pair.input]));
    }
  }
  for (const Buffer& buffer : problem.buffers) {
    int first = kNone;
    for (const std::string& name : buffer.tensors) {
      auto it = index.find(name);
      if (it == index.end()) continue;
      if (first == kNone) first = it->second;
      unite(first, it->second);
    }
  }
  for (int t = 0; t < static_cast<int>(group.size()); ++t) group[t] = find(t);
  return group;
}

Dag BuildDag(const Graph& graph,
             const absl::flat_hash_map<std::string, int>& index,
             const std::vector<int>& group) {
  const int n = static_cast<int>(graph.ops.size());
  std::vector<int> producer(graph.tensors.size(), kNone);
  std::vector<int> last_reader(graph.tensors.size(), kNone);
  std::vector<std::vector<int>> readers(graph.tensors.size());
  for (int i = 0; i < n; ++i) {
    for (const std::string& name : graph.ops[i].inputs) {
      const int t = TensorIndex(index, name);
      readers[t].push_back(i);
      last_reader[t] = i;
    }
    for (const std::string& name : graph.ops[i].outputs) {
      producer[TensorIndex(index, name)] = i;
    }
  }
  Dag dag;
  dag.succ.assign(n, {});
  for (int i = 0; i < n; ++i) {
    const Op& op = graph.ops[i];
    for (const std::string& name : op.inputs) {
      const int p = producer[TensorIndex(index, name)];
      if (p != kNone) dag.succ[p].push_back(i);
    }
    // An op that may write its input in place keeps reading it last, so the
    // in-place merge of the original order survives any new order.
    for (const OperandPair& pair : op.inplace) {
      const int t = TensorIndex(index, op.inputs[pair.input]);
      if (last_reader[t] != i) continue;
      for (int r : readers[t]) {
        if (r != i) dag.succ[r].push_back(i);
      }
    }
  }
  AddWriteOrder(graph, index, group, dag.succ);
  AddPinOrder(graph, dag.succ);
  dag.indegree.assign(n, 0);
  for (auto& s : dag.succ) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    for (int j : s) ++dag.indegree[j];
  }
  return dag;
}

namespace {

// Per tensor: the op that makes it (kNone for none), the op it is scratch
// of, and the ops that read it, in order, once each.
struct TensorUses {
  std::vector<int> producer;
  std::vector<int> scratch_op;
  std::vector<std::vector<int>> readers;
};

TensorUses UsesOf(const Graph& graph,
                  const absl::flat_hash_map<std::string, int>& index) {
  const int t_count = static_cast<int>(graph.tensors.size());
  TensorUses uses{.producer = std::vector<int>(t_count, kNone),
                  .scratch_op = std::vector<int>(t_count, kNone),
                  .readers = std::vector<std::vector<int>>(t_count)};
  for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
    for (const std::string& name : graph.ops[i].outputs) {
      uses.producer[TensorIndex(index, name)] = i;
    }
    for (const std::string& name : graph.ops[i].scratch) {
      uses.scratch_op[TensorIndex(index, name)] = i;
    }
    for (const std::string& name : graph.ops[i].inputs) {
      std::vector<int>& r = uses.readers[TensorIndex(index, name)];
      if (r.empty() || r.back() != i) r.push_back(i);
    }
  }
  return uses;
}

// Adds tensor `t` (of an n-op graph) to `group`: its size, and its
// lifetime as BuildProblem's: [start, last reader + 1), outputs to the
// end, a tensor nobody reads over its producer's step alone.
void AddTensor(const Graph& graph, int t, const TensorUses& uses,
               ViewGroup& group) {
  const int n = static_cast<int>(graph.ops.size());
  const Tensor& tensor = graph.tensors[t];
  const std::vector<int>& readers = uses.readers[t];
  group.size = std::max(group.size, tensor.size);  // a view spans no more
  int start = uses.producer[t];
  if (tensor.kind == TensorKind::kScratch) start = uses.scratch_op[t];
  if (start == kNone) {
    group.from_start = true;
  } else {
    group.starts.push_back(start);
  }
  group.ends.insert(group.ends.end(), readers.begin(), readers.end());
  if (tensor.kind == TensorKind::kOutput) group.to_end = true;
  if (readers.empty() && start != kNone) group.ends.push_back(start);
  const Step first = start == kNone ? 0 : start;
  Step last = readers.empty() ? first + 1 : readers.back() + 1;
  if (tensor.kind == TensorKind::kOutput) last = n;
  group.first = std::min(group.first, first);
  group.last = std::max({group.last, last, first + 1});
}

// The groups' sizes aligned, their merge sets (the groups an in-place hint
// may join), their start and end ops sorted and unique.
void FinishGroups(const Graph& graph,
                  const absl::flat_hash_map<std::string, int>& index,
                  const std::vector<int>& group_of,
                  const std::vector<Bytes>& alignment,
                  std::vector<ViewGroup>& groups) {
  UnionFind merges(static_cast<int>(groups.size()));
  for (const Op& op : graph.ops) {
    for (const OperandPair& pair : op.inplace) {
      const int out = group_of[TensorIndex(index, op.outputs[pair.output])];
      const int in = group_of[TensorIndex(index, op.inputs[pair.input])];
      if (out != kNone && in != kNone) merges.Unite(out, in);
    }
  }
  for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
    ViewGroup& group = groups[g];
    group.size = internal::RoundUp(group.size, alignment[g]);
    group.merge_set = merges.Find(g);
    for (std::vector<int>* ops : {&group.starts, &group.ends}) {
      std::sort(ops->begin(), ops->end());
      ops->erase(std::unique(ops->begin(), ops->end()), ops->end());
    }
  }
}

}  // namespace

// The view groups: see op_dag.h.
std::vector<ViewGroup> ViewGroups(
    const Graph& graph, const Problem& problem, const BuildOptions& options,
    const absl::flat_hash_map<std::string, int>& index,
    std::vector<int>* group_of_tensor) {
  const int t_count = static_cast<int>(graph.tensors.size());
  UnionFind views(t_count);
  for (const Op& op : graph.ops) {
    for (const OperandPair& pair : op.alias) {
      views.Unite(TensorIndex(index, op.outputs[pair.output]),
                  TensorIndex(index, op.inputs[pair.input]));
    }
  }
  std::vector<bool> planned(t_count, false);
  for (const Buffer& buffer : problem.buffers) {
    for (const std::string& name : buffer.tensors) {
      planned[TensorIndex(index, name)] = true;
    }
  }
  const TensorUses uses = UsesOf(graph, index);
  std::vector<int> group_of_root(t_count, kNone);
  std::vector<ViewGroup> groups;
  std::vector<Bytes> alignment;
  std::vector<int> group_of(t_count, kNone);
  for (int t = 0; t < t_count; ++t) {
    if (!planned[t]) continue;
    const int root = views.Find(t);
    if (group_of_root[root] == kNone) {
      group_of_root[root] = static_cast<int>(groups.size());
      groups.emplace_back();
      alignment.push_back(options.alignment);
    }
    const int g = group_of[t] = group_of_root[root];
    alignment[g] = std::max(alignment[g], graph.tensors[t].alignment);
    AddTensor(graph, t, uses, groups[g]);
  }
  FinishGroups(graph, index, group_of, alignment, groups);
  if (group_of_tensor != nullptr) *group_of_tensor = std::move(group_of);
  return groups;
}

}  // namespace memplan::internal

// The conflict graph, built by a sweep over time: O(n log n + conflicts).

#include "model/conflict_graph.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <utility>
#include <vector>

#include "memplan/problem.h"

namespace memplan {

ConflictGraph ConflictGraph::Build(const Problem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<BufferId> by_start(n);
  std::iota(by_start.begin(), by_start.end(), 0);
  std::sort(by_start.begin(), by_start.end(), [&](BufferId a, BufferId b) {
    const Step sa = problem.buffers[a].lifetime.start;
    const Step sb = problem.buffers[b].lifetime.start;
    return sa != sb ? sa < sb : a < b;
  });

  // Live buffers in a vector with O(1) removal; a min-heap of ends says which
  // to remove when the sweep reaches a new start.
  std::vector<std::pair<BufferId, BufferId>> edges;
  std::vector<BufferId> live;
  std::vector<int> position(n, -1);
  using EndEntry = std::pair<Step, BufferId>;
  std::priority_queue<EndEntry, std::vector<EndEntry>, std::greater<>> ends;
  for (BufferId b : by_start) {
    const Step start = problem.buffers[b].lifetime.start;
    while (!ends.empty() && ends.top().first <= start) {
      const BufferId gone = ends.top().second;
      ends.pop();
      const int at = position[gone];
      position[live.back()] = at;
      live[at] = live.back();
      live.pop_back();
      position[gone] = -1;
    }
    for (BufferId other : live) edges.emplace_back(other, b);
    position[b] = static_cast<int>(live.size());
    live.push_back(b);
    ends.emplace(problem.buffers[b].lifetime.end, b);
  }
  for (const BufferConflict& c : problem.conflicts)
    edges.emplace_back(c.a, c.b);

  ConflictGraph graph;
  graph.begin_.assign(n + 1, 0);
  for (const auto& [a, b] : edges) {
    ++graph.begin_[a + 1];
    ++graph.begin_[b + 1];
  }
  for (int i = 0; i < n; ++i) graph.begin_[i + 1] += graph.begin_[i];
  graph.adjacency_.resize(graph.begin_[n]);
  std::vector<int64_t> fill(graph.begin_.begin(), graph.begin_.end() - 1);
  for (const auto& [a, b] : edges) {
    graph.adjacency_[fill[a]++] = b;
    graph.adjacency_[fill[b]++] = a;
  }
  edges.clear();
  edges.shrink_to_fit();
  // Sort each list and drop duplicates (an explicit conflict may repeat an
  // overlap), compacting in place.
  int64_t write = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t lo = graph.begin_[i];
    const int64_t hi = graph.begin_[i + 1];
    std::sort(graph.adjacency_.begin() + lo, graph.adjacency_.begin() + hi);
    graph.begin_[i] = write;
    for (int64_t k = lo; k < hi; ++k) {
      if (k > lo && graph.adjacency_[k] == graph.adjacency_[k - 1]) continue;
      graph.adjacency_[write++] = graph.adjacency_[k];
    }
  }
  graph.begin_[n] = write;
  graph.adjacency_.resize(write);
  return graph;
}

bool ConflictGraph::Conflict(BufferId a, BufferId b) const {
  const auto list = neighbors(a);
  return std::binary_search(list.begin(), list.end(), b);
}

}  // namespace memplan

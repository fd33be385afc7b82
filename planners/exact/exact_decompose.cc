// exact's decomposition (see exact_decompose.h).

#include "exact_decompose.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include "exact/preprocess.h"
#include "memplan/problem.h"

namespace memplan::internal::exact {
namespace {

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(n) {
    std::iota(parent.begin(), parent.end(), 0);
  }
  int Find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

// What every part is built from.
struct Context {
  explicit Context(const Problem& p) : problem(p) {}
  const Problem& problem;
  Bytes granule = 1;                               // internal::PlanningUnit
  std::vector<BufferId> twin_of;                   // internal::TwinClasses
  std::vector<std::vector<BufferId>> explicit_of;  // ExplicitConflicts
};

// The buffers (`members`) grouped into components of the interval graph (a
// sweep; one component unless `split`), merged by explicit conflicts.
std::vector<std::vector<BufferId>> Components(
    const Context& ctx, const std::vector<BufferId>& members, bool split) {
  const Problem& problem = ctx.problem;
  const int n = static_cast<int>(problem.buffers.size());
  UnionFind uf(n);
  std::vector<BufferId> by_start = members;
  std::sort(by_start.begin(), by_start.end(), [&](BufferId a, BufferId b) {
    const Lifetime& la = problem.buffers[a].lifetime;
    const Lifetime& lb = problem.buffers[b].lifetime;
    return la.start != lb.start ? la.start < lb.start : a < b;
  });
  Step reach = std::numeric_limits<Step>::min();
  BufferId head = -1;
  for (BufferId b : by_start) {
    const Lifetime& l = problem.buffers[b].lifetime;
    if (head >= 0 && (l.start < reach || !split)) {
      uf.Union(head, b);
    } else {
      head = b;
    }
    reach = std::max(reach, l.end);
  }
  for (BufferId a = 0; a < n; ++a) {
    for (BufferId b : ctx.explicit_of[a]) uf.Union(a, b);
  }
  std::vector<int> part_of(n, -1);
  std::vector<std::vector<BufferId>> groups;
  for (BufferId b : members) {
    const int root = uf.Find(b);
    if (part_of[root] < 0) {
      part_of[root] = static_cast<int>(groups.size());
      groups.emplace_back();
    }
    groups[part_of[root]].push_back(b);
  }
  return groups;
}

// The part's time sections, the floors its fixed buffers make, and its
// items (the other buffers) over those sections.
void SectionsAndItems(const Context& ctx, const std::vector<BufferId>& group,
                      Part& part) {
  const Problem& problem = ctx.problem;
  const Bytes g = ctx.granule;
  part.times = SectionTimes(problem, group);
  const int sections = static_cast<int>(part.times.size()) - 1;
  auto section_of = [&](Step t) { return SectionOf(part.times, t); };
  part.base.assign(sections, 0);
  part.load.assign(sections, 0);
  part.starts.assign(sections, {});
  for (BufferId b : group) {
    const Buffer& buf = problem.buffers[b];
    if (!buf.fixed.has_value()) continue;
    part.complete = false;
    const int64_t top = (buf.fixed->offset + buf.size) / g;
    for (int s = section_of(buf.lifetime.start);
         s < section_of(buf.lifetime.end); ++s) {
      part.base[s] = std::max(part.base[s], top);
    }
  }
  for (BufferId b : group) {
    const Buffer& buf = problem.buffers[b];
    if (buf.fixed.has_value()) continue;
    Item item;
    item.buffer = b;
    item.size = buf.size / g;
    item.align = AlignmentInUnits(problem, b, g);
    if (item.align != 1) part.complete = false;
    item.s0 = section_of(buf.lifetime.start);
    item.s1 = section_of(buf.lifetime.end);
    part.items.push_back(std::move(item));
  }
}

// Explicit conflicts outside the lifetimes: the fixed buffers an item must
// stay above, and its partners among the part's items.
void LinkExplicitConflicts(const Context& ctx, Part& part) {
  const Problem& problem = ctx.problem;
  std::vector<std::pair<BufferId, int>> local_ids;
  for (int i = 0; i < static_cast<int>(part.items.size()); ++i) {
    local_ids.push_back({part.items[i].buffer, i});
  }
  std::sort(local_ids.begin(), local_ids.end());
  auto local_of = [&](BufferId b) {
    auto it = std::lower_bound(local_ids.begin(), local_ids.end(),
                               std::make_pair(b, -1));
    return it != local_ids.end() && it->first == b ? it->second : -1;
  };
  for (Item& item : part.items) {
    for (BufferId other : ctx.explicit_of[item.buffer]) {
      part.complete = false;
      const Buffer& o = problem.buffers[other];
      if (o.fixed.has_value()) {
        item.fixed_top =
            std::max(item.fixed_top, (o.fixed->offset + o.size) / ctx.granule);
      } else {
        item.partners.push_back(local_of(other));
      }
    }
    std::sort(item.partners.begin(), item.partners.end());
    item.partners.erase(std::unique(item.partners.begin(), item.partners.end()),
                        item.partners.end());
  }
}

// Loads, starts, the lower bound and the room above which nothing prunes.
void Loads(Part& part) {
  const int m = static_cast<int>(part.items.size());
  // The loads as prefix sums of their changes: O(items + sections), where
  // adding each item over its sections would be quadratic on long lifetimes.
  std::vector<int64_t> change(part.load.size() + 1, 0);
  for (int i = 0; i < m; ++i) {
    const Item& item = part.items[i];
    change[item.s0] += item.size;
    change[item.s1] -= item.size;
    part.starts[item.s0].push_back(i);
  }
  int64_t running = 0;
  for (size_t s = 0; s < part.load.size(); ++s) {
    running += change[s];
    part.load[s] += running;
  }
  for (size_t s = 0; s < part.load.size(); ++s) {
    part.lower = std::max(part.lower, part.base[s] + part.load[s]);
    part.room = std::max(part.room, part.base[s]);
  }
  // Every item stacked above the fixed buffers, each rounded up to its
  // alignment: a first descent under the room never backtracks.
  for (const Item& item : part.items) {
    part.room = std::max(part.room, item.fixed_top);
  }
  for (const Item& item : part.items) part.room += item.size + item.align - 1;
}

// Interchangeable items share a group (internal::TwinClasses): a ban on
// one is a ban on all.
void Groups(const Context& ctx, Part& part) {
  for (Item& item : part.items) item.group = ctx.twin_of[item.buffer];
}

// Static orders: by size, by area, by lifetime, by start; ties on id.
void StaticOrders(const Problem& problem, Part& part) {
  const int m = static_cast<int>(part.items.size());
  // Each order sorts (key, item) records: the keys are computed once, not
  // looked up through the problem in every comparison.
  struct Record {
    int64_t k0;
    int64_t k1;
    BufferId buffer;
    int item;
  };
  std::vector<Record> records(m);
  for (int o = 0; o < kNumOrders; ++o) {
    for (int i = 0; i < m; ++i) {
      const Item& it = part.items[i];
      const Lifetime& l = problem.buffers[it.buffer].lifetime;
      const int64_t length = l.end - l.start;
      switch (o) {
        case 0:
          records[i] = {-it.size, -length, it.buffer, i};
          break;
        case 1:
          records[i] = {-it.size * length, -it.size, it.buffer, i};
          break;
        case 2:
          records[i] = {-length, -it.size, it.buffer, i};
          break;
        default:
          records[i] = {l.start, -it.size, it.buffer, i};
          break;
      }
    }
    std::sort(records.begin(), records.end(),
              [](const Record& a, const Record& b) {
                return std::tie(a.k0, a.k1, a.buffer) <
                       std::tie(b.k0, b.k1, b.buffer);
              });
    std::vector<int> rank(m);
    for (int k = 0; k < m; ++k) rank[records[k].item] = k;
    part.ranks.push_back(std::move(rank));
  }
}

Part BuildPart(const Context& ctx, const std::vector<BufferId>& group) {
  Part part;
  SectionsAndItems(ctx, group, part);
  LinkExplicitConflicts(ctx, part);
  Loads(part);
  Groups(ctx, part);
  StaticOrders(ctx.problem, part);
  part.lo = part.lower;
  return part;
}

}  // namespace

Decomposition Decompose(const Problem& problem, bool split) {
  const int n = static_cast<int>(problem.buffers.size());
  Context ctx(problem);
  ctx.granule = PlanningUnit(problem);
  ctx.twin_of = TwinClasses(problem, ctx.granule);
  ctx.explicit_of = ExplicitConflicts(problem);

  Decomposition d;
  d.granule = ctx.granule;
  std::vector<BufferId> members;  // sized buffers: items and fixed obstacles
  for (BufferId b = 0; b < n; ++b) {
    if (problem.buffers[b].fixed.has_value()) d.fixed.push_back(b);
    if (problem.buffers[b].size > 0) members.push_back(b);
  }
  for (const std::vector<BufferId>& group : Components(ctx, members, split)) {
    d.parts.push_back(BuildPart(ctx, group));
    if (!d.parts.back().complete) d.complete = false;
  }
  // Largest lower bound first: the part that decides the peak is probed
  // first, and a proof of infeasibility there spares the others.
  std::stable_sort(
      d.parts.begin(), d.parts.end(),
      [](const Part& a, const Part& b) { return a.lower > b.lower; });
  return d;
}

}  // namespace memplan::internal::exact

// The verifier. It shares no code with the planners: a sweep over time keeps,
// per pool, the byte ranges of the live buffers ordered by offset; a new range
// only has to be compared with its two neighbours, because the ranges already
// kept are disjoint.

#include "memplan/verify.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"

namespace memplan {
namespace {

std::string Describe(const Problem& problem, const Assignment& a) {
  const Buffer& b = problem.buffers[a.buffer];
  return absl::StrCat("\"", b.name, "\" (alive [", b.lifetime.start, ", ",
                      b.lifetime.end, "), bytes [", a.offset, ", ",
                      a.offset + b.size, "))");
}

absl::Status OverlapError(const Problem& problem, const Assignment& x,
                          const Assignment& y, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "buffers ", Describe(problem, x), " and ", Describe(problem, y), " ", why,
      " and share bytes in pool \"", problem.pools[x.pool].name, "\""));
}

bool BytesIntersect(Offset a, Bytes a_size, Offset b, Bytes b_size) {
  return a_size > 0 && b_size > 0 && a < b + b_size && b < a + a_size;
}

// One tensor where a plan puts it.
struct PlacedTensor {
  BufferId buffer;
  int index;  // into the buffer's tensors
  PoolId pool;
  Offset offset;
  Bytes size;
  Lifetime lifetime;
};

std::string Describe(const Problem& problem, const PlacedTensor& t) {
  return absl::StrCat("tensor \"", problem.buffers[t.buffer].tensors[t.index],
                      "\" (alive [", t.lifetime.start, ", ", t.lifetime.end,
                      "), bytes [", t.offset, ", ", t.offset + t.size,
                      ") in buffer \"", problem.buffers[t.buffer].name, "\")");
}

// Every tensor of a buffer must lie inside it: its bytes [offset, offset +
// size) inside the buffer's and its lifetime inside the buffer's. Then two
// conflicting tensors of different buffers can only share a byte when their
// buffers do, which the sweep below checks. A tensor that sticks out is
// reported with a conflicting tensor it collides with, when there is one
// (found by one linear scan, on the error path only).
absl::Status CheckTensorsInsideBuffers(const Problem& problem, const Plan& plan,
                                       const std::vector<int>& assignment_of) {
  const int n = static_cast<int>(problem.buffers.size());
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.spans.empty()) continue;
    if (buffer.spans.size() != buffer.tensors.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer \"", buffer.name, "\" lists ", buffer.tensors.size(),
          " tensors but ", buffer.spans.size(), " spans"));
    }
    const Assignment& a = plan.assignments[assignment_of[b]];
    for (int k = 0; k < static_cast<int>(buffer.spans.size()); ++k) {
      const TensorSpan& span = buffer.spans[k];
      if (span.size >= 0 && span.size <= buffer.size &&
          span.lifetime.start >= buffer.lifetime.start &&
          span.lifetime.end <= buffer.lifetime.end) {
        continue;
      }
      const Bytes size = std::clamp<Bytes>(
          span.size, 0, std::numeric_limits<Offset>::max() - a.offset);
      const PlacedTensor t{b, k, a.pool, a.offset, size, span.lifetime};
      for (BufferId c = 0; c < n; ++c) {
        if (c == b) continue;
        const Buffer& other = problem.buffers[c];
        const Assignment& oa = plan.assignments[assignment_of[c]];
        if (oa.pool != a.pool) continue;
        const bool explicit_conflict = std::any_of(
            problem.conflicts.begin(), problem.conflicts.end(),
            [&](const BufferConflict& x) {
              return (x.a == b && x.b == c) || (x.a == c && x.b == b);
            });
        for (int j = 0; j < static_cast<int>(other.tensors.size()); ++j) {
          const bool known = other.spans.size() == other.tensors.size();
          const PlacedTensor u{
              c,
              j,
              oa.pool,
              oa.offset,
              std::clamp<Bytes>(known ? other.spans[j].size : other.size, 0,
                                std::numeric_limits<Offset>::max() - oa.offset),
              known ? other.spans[j].lifetime : other.lifetime};
          if ((explicit_conflict || Overlaps(t.lifetime, u.lifetime)) &&
              BytesIntersect(t.offset, t.size, u.offset, u.size)) {
            return absl::InvalidArgumentError(absl::StrCat(
                Describe(problem, t), " and ", Describe(problem, u),
                " conflict and share bytes in pool \"",
                problem.pools[a.pool].name,
                "\": the first reaches beyond its "
                "buffer (",
                buffer.size, " bytes, alive [", buffer.lifetime.start, ", ",
                buffer.lifetime.end, "))"));
          }
        }
      }
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(problem, t), " reaches beyond its buffer (",
                       buffer.size, " bytes, alive [", buffer.lifetime.start,
                       ", ", buffer.lifetime.end, "))"));
    }
  }
  return absl::OkStatus();
}

// The byte ranges of one pool's live buffers, disjoint, by offset. Most
// plans keep only a few buffers alive in a pool at a time, and a sorted
// vector of them is several times faster than a B-tree; past kMaxFlat ranges
// they move to a B-tree, where every operation stays logarithmic (std::map's
// node per entry is several times slower still), until it empties.
class LiveRanges {
 public:
  // Adds `buffer`'s bytes [offset, end), unless they meet a live range; then
  // returns the buffer of the range they meet: the first range at or after
  // `offset` when it starts before `end`, else the range before `offset`.
  // Returns -1 when added.
  BufferId Add(Offset offset, Offset end, BufferId buffer) {
    return tree_.empty() ? Add(flat_, offset, end, buffer)
                         : Add(tree_, offset, end, buffer);
  }

  // Removes the range at `offset`, if there is one.
  void Remove(Offset offset) {
    if (!tree_.empty()) {
      tree_.erase(offset);
      return;
    }
    auto it = LowerBound(flat_, offset);
    if (it != flat_.end() && it->offset == offset) flat_.erase(it);
  }

 private:
  // Trivially copyable, so that the vector moves ranges with memmove.
  struct Range {
    Offset offset;
    Offset end;
    BufferId buffer;
  };
  // In the tree an offset keys its range's end and buffer: the smaller the
  // entries, the more fit a node, and the fewer nodes a search visits.
  struct EndAndBuffer {
    Offset end;
    BufferId buffer;
  };
  using Tree = absl::btree_map<Offset, EndAndBuffer>;
  static constexpr size_t kMaxFlat = 64;

  // The first range at or after `offset`. Counting the ranges below it has
  // no branch to mispredict, and over so few ranges beats a binary search,
  // whose mispredicted branches made std::lower_bound the sweep's largest
  // cost.
  static std::vector<Range>::iterator LowerBound(std::vector<Range>& ranges,
                                                 Offset offset) {
    size_t below = 0;
    for (const Range& r : ranges) below += r.offset < offset;
    return ranges.begin() + below;
  }
  static Tree::iterator LowerBound(Tree& ranges, Offset offset) {
    return ranges.lower_bound(offset);
  }
  static Range Get(const Range& r) { return r; }
  static Range Get(const Tree::value_type& entry) {
    return {entry.first, entry.second.end, entry.second.buffer};
  }
  static void Insert(std::vector<Range>& ranges,
                     std::vector<Range>::iterator next, const Range& r) {
    ranges.insert(next, r);
  }
  static void Insert(Tree& ranges, Tree::iterator next, const Range& r) {
    ranges.emplace_hint(next, r.offset, EndAndBuffer{r.end, r.buffer});
  }

  template <typename Ranges>
  BufferId Add(Ranges& ranges, Offset offset, Offset end, BufferId buffer) {
    auto next = LowerBound(ranges, offset);
    if (next != ranges.end() && Get(*next).offset < end) {
      return Get(*next).buffer;
    }
    if (next != ranges.begin() && Get(*std::prev(next)).end > offset) {
      return Get(*std::prev(next)).buffer;
    }
    // A range that ends at or before its offset (a negative size, which
    // ValidateProblem rejects) may share its offset with a live range; as in
    // a map, the live one stays.
    if (next != ranges.end() && Get(*next).offset == offset) return -1;
    Insert(ranges, next, Range{offset, end, buffer});
    if (tree_.empty() && flat_.size() > kMaxFlat) {
      for (const Range& r : flat_) Insert(tree_, tree_.end(), r);
      flat_.clear();
    }
    return -1;
  }

  std::vector<Range> flat_;  // sorted by offset, while tree_ is empty
  Tree tree_;
};

// Sorts records by their step, keeping records with equal steps in their
// order: a least-significant-digit radix sort on how far each step lies past
// `first` (at most `span`; unsigned, that distance is exact for any two
// int64), in passes of at most 11 bits, whose counters stay in the L1 cache.
// Linear, where std::sort with a comparator was most of the verifier's time
// at 10^6 buffers.
template <typename Record>
void StableSortByStep(std::vector<Record>& records, Step first, uint64_t span) {
  const int bits = std::bit_width(span);
  if (bits == 0) return;
  const int passes = (bits + 10) / 11;
  const int width = (bits + passes - 1) / passes;
  const uint64_t mask = (uint64_t{1} << width) - 1;
  auto digit = [&](const Record& r, int pass) {
    return ((static_cast<uint64_t>(r.step) - static_cast<uint64_t>(first)) >>
            (pass * width)) &
           mask;
  };
  // Every pass's counts in one read of the records.
  std::vector<size_t> count(static_cast<size_t>(passes) << width);
  for (const Record& r : records) {
    for (int pass = 0; pass < passes; ++pass) {
      ++count[(static_cast<size_t>(pass) << width) + digit(r, pass)];
    }
  }
  std::vector<Record> sorted(records.size());
  for (int pass = 0; pass < passes; ++pass) {
    size_t* next = &count[static_cast<size_t>(pass) << width];
    size_t sum = 0;
    for (size_t d = 0; d <= mask; ++d) sum += std::exchange(next[d], sum);
    for (const Record& r : records) sorted[next[digit(r, pass)]++] = r;
    records.swap(sorted);
  }
}

// What the sweep reads of each buffer of a positive size: its start and end
// as events. Ends first at equal steps (half-open lifetimes), starts in
// buffer order at equal steps. The events are gathered while checking each
// assignment, so the buffers (large records) are read once, in order.
struct Start {
  Step step;
  Offset offset;
  Offset end;  // of its bytes
  PoolId pool;
  BufferId buffer;
};
struct End {
  Step step;
  Offset offset;
  PoolId pool;
};

// Everything VerifyPlan learns in its one pass over the assignments.
struct Assignments {
  std::vector<int> assignment_of;  // per buffer: its assignment's index
  std::vector<Bytes> used;         // per pool: the highest byte used
  std::vector<Start> starts;
  std::vector<End> ends;
  Step first_step = std::numeric_limits<Step>::max();
  Step last_step = std::numeric_limits<Step>::min();
  bool in_buffer_order = true;
  bool any_spans = false;
};

// The checks of one assignment on its own: pool, alignment, capacity, fixed
// placement.
absl::Status CheckAssignment(const Problem& problem, const Assignment& a) {
  const Buffer& b = problem.buffers[a.buffer];
  if (a.pool < 0 || a.pool >= static_cast<PoolId>(problem.pools.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer \"", b.name, "\" is assigned to pool #", a.pool,
                     ", which does not exist"));
  }
  const Pool& pool = problem.pools[a.pool];
  if (!b.pools.empty() &&
      std::find(b.pools.begin(), b.pools.end(), a.pool) == b.pools.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer \"", b.name, "\" is placed in pool \"", pool.name,
                     "\", which it is not allowed in"));
  }
  const Bytes alignment = std::max(b.alignment, pool.alignment);
  if (a.offset < 0 || a.offset % alignment != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer \"", b.name, "\" is at offset ", a.offset,
                     ", which is not a non-negative multiple of ", alignment));
  }
  if (a.offset > std::numeric_limits<Offset>::max() - b.size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "buffer \"", b.name, "\" at offset ", a.offset, " overflows int64"));
  }
  if (pool.capacity > 0 && a.offset + b.size > pool.capacity) {
    return absl::InvalidArgumentError(absl::StrCat(
        "buffer ", Describe(problem, a), " ends beyond the capacity ",
        pool.capacity, " of pool \"", pool.name, "\""));
  }
  if (b.fixed.has_value() &&
      (b.fixed->pool != a.pool || b.fixed->offset != a.offset)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "buffer \"", b.name, "\" is fixed at offset ", b.fixed->offset,
        " of pool \"", problem.pools[b.fixed->pool].name, "\" but placed at ",
        a.offset, " of pool \"", pool.name, "\""));
  }
  return absl::OkStatus();
}

// Every buffer assigned exactly once, each assignment valid on its own; the
// sweep's events and each pool's use on the way.
absl::StatusOr<Assignments> ReadAssignments(const Problem& problem,
                                            const Plan& plan) {
  const int n = static_cast<int>(problem.buffers.size());
  Assignments out;
  out.starts.reserve(n);
  out.ends.reserve(n);
  out.used.assign(problem.pools.size(), 0);
  out.assignment_of.assign(n, -1);
  for (int i = 0; i < static_cast<int>(plan.assignments.size()); ++i) {
    const Assignment& a = plan.assignments[i];
    if (a.buffer < 0 || a.buffer >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("assignment #", i, " names buffer #", a.buffer,
                       ", which does not exist"));
    }
    const Buffer& b = problem.buffers[a.buffer];
    if (out.assignment_of[a.buffer] != -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer \"", b.name, "\" is assigned more than once"));
    }
    out.assignment_of[a.buffer] = i;
    MEMPLAN_RETURN_IF_ERROR(CheckAssignment(problem, a));
    out.in_buffer_order &= a.buffer == i;
    out.any_spans |= !b.spans.empty();
    if (b.size == 0) continue;
    out.used[a.pool] = std::max(out.used[a.pool], a.offset + b.size);
    out.starts.push_back(
        {b.lifetime.start, a.offset, a.offset + b.size, a.pool, a.buffer});
    out.ends.push_back({b.lifetime.end, a.offset, a.pool});
    out.first_step =
        std::min({out.first_step, b.lifetime.start, b.lifetime.end});
    out.last_step = std::max({out.last_step, b.lifetime.start, b.lifetime.end});
  }
  for (int b = 0; b < n; ++b) {
    if (out.assignment_of[b] == -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer \"", problem.buffers[b].name, "\" is not assigned"));
    }
  }
  return out;
}

// No two buffers alive at once share a byte of a pool: a sweep over the
// starts and ends in time order.
absl::Status SweepForOverlaps(const Problem& problem, const Plan& plan,
                              Assignments& in) {
  // The starts are in assignment order; the sort below keeps buffer order at
  // equal steps only if they come in buffer order. The ends' order at equal
  // steps does not matter: the sweep removes them all before the next start.
  if (!in.in_buffer_order) {
    std::sort(
        in.starts.begin(), in.starts.end(),
        [](const Start& x, const Start& y) { return x.buffer < y.buffer; });
  }
  const uint64_t span = in.starts.empty()
                            ? 0
                            : static_cast<uint64_t>(in.last_step) -
                                  static_cast<uint64_t>(in.first_step);
  StableSortByStep(in.starts, in.first_step, span);
  StableSortByStep(in.ends, in.first_step, span);
  std::vector<LiveRanges> live(problem.pools.size());
  auto next_end = in.ends.begin();
  for (const Start& e : in.starts) {
    for (; next_end != in.ends.end() && next_end->step <= e.step; ++next_end) {
      live[next_end->pool].Remove(next_end->offset);
    }
    if (const BufferId other = live[e.pool].Add(e.offset, e.end, e.buffer);
        other != -1) {
      return OverlapError(problem, plan.assignments[in.assignment_of[other]],
                          plan.assignments[in.assignment_of[e.buffer]],
                          "are alive at the same time");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckExplicitConflicts(const Problem& problem, const Plan& plan,
                                    const std::vector<int>& assignment_of) {
  const int n = static_cast<int>(problem.buffers.size());
  for (const BufferConflict& c : problem.conflicts) {
    if (c.a < 0 || c.a >= n || c.b < 0 || c.b >= n) {
      return absl::InvalidArgumentError("an explicit conflict names no buffer");
    }
    const Assignment& x = plan.assignments[assignment_of[c.a]];
    const Assignment& y = plan.assignments[assignment_of[c.b]];
    if (x.pool == y.pool &&
        BytesIntersect(x.offset, problem.buffers[c.a].size, y.offset,
                       problem.buffers[c.b].size)) {
      return OverlapError(problem, x, y, "conflict explicitly");
    }
  }
  return absl::OkStatus();
}

// The plan's figures must be the plan's: a wrong peak is a wrong plan.
absl::Status CheckFigures(const Problem& problem, const Plan& plan,
                          const std::vector<Bytes>& used) {
  Bytes peak = 0;
  for (int p = 0; p < static_cast<int>(problem.pools.size()); ++p) {
    peak = used[p] > std::numeric_limits<Bytes>::max() - peak
               ? std::numeric_limits<Bytes>::max()
               : peak + used[p];
    if (p >= static_cast<int>(plan.pool_used.size()) ||
        plan.pool_used[p] != used[p]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the plan reports ",
          p < static_cast<int>(plan.pool_used.size()) ? plan.pool_used[p] : 0,
          " bytes used in pool \"", problem.pools[p].name, "\" but uses ",
          used[p]));
    }
  }
  if (plan.peak != peak) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the plan reports a peak of ", plan.peak, " bytes but needs ", peak));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyPlan(const Problem& problem, const Plan& plan) {
  MEMPLAN_ASSIGN_OR_RETURN(Assignments assignments,
                           ReadAssignments(problem, plan));
  if (assignments.any_spans) {
    MEMPLAN_RETURN_IF_ERROR(
        CheckTensorsInsideBuffers(problem, plan, assignments.assignment_of));
  }
  MEMPLAN_RETURN_IF_ERROR(SweepForOverlaps(problem, plan, assignments));
  MEMPLAN_RETURN_IF_ERROR(
      CheckExplicitConflicts(problem, plan, assignments.assignment_of));
  return CheckFigures(problem, plan, assignments.used);
}

}  // namespace memplan

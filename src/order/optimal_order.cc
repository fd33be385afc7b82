// The "optimal" op ordering: a best-first search over the sets of executed
// ops. See memplan/reorder.h.
//
// The search runs on a model of the peak that never exceeds the lower bound
// of BuildProblem() for the same order (the measure every ordering is judged
// by): per view group (order/op_dag.h, sizes aligned as BuildProblem's
// buffers), alive from the first op that starts it (graph inputs from the
// start) to the last op that ends it (graph outputs to the end). The one
// thing the order decides besides lifetimes, an in-place merge, is counted
// as if it always happened: at the op whose input group dies there and
// whose output group starts there, the output adds only the bytes it has
// beyond the input. So the model's minimum over all orders is a lower bound
// over all orders, and an order whose real bound meets it is optimal.
//
// The bytes alive after a set of executed ops depend on the set alone, so a
// state is the set; of two paths to one set the one with the smaller running
// peak dominates. The graph is searched segment by segment (Segments()),
// the segment of the highest peak in the best order known first. States
// leave the queue by running peak raised to the floor (the largest bound
// known on the whole order: below it, no order is better than another),
// the least first, and within one such key the last queued first; so the
// first complete set to leave holds a minimal peak, and within a key the
// search runs depth-first. States that cannot beat the best order known
// (the graph's own, "memory"'s or "window"'s, in the model) are never
// queued.
//
// A proof visits every set whose running peak is below the optimum: some
// 10^7 on a random stage of 64 ops. So a set is a segment's ops alone
// (SegmentModel), kept once in an open-addressing table whose slots hold
// the set and its state together (SetTable), looked up for all of a
// state's children at once with their slots read ahead, and the queue is
// a stack per key: a state costs a few reads of memory, not a heap's.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/numeric/bits.h"
#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "order/op_dag.h"
#include "order/order_bound.h"
#include "order/order_effort.h"
#include "order/order_model.h"

namespace memplan {
namespace {

using internal::BuildLiveModel;
using internal::BuildOrderGraph;
using internal::Dag;
using internal::LiveModel;
using internal::OrderGraph;
using internal::OrderPeak;
using internal::ViewGroup;

constexpr int kNone = -1;
// The operations one state kept counts for besides its set's words (three
// per word in the search: its slot in a table at most 3/4 full, and its
// queue entry; one in the beams): about the bytes it holds.
constexpr int64_t kStateWork = 64;
// The states per step of the first beam tried when the search does not
// finish; the next ones keep 4 times as many, up to the last.
constexpr int kBeamWidth = 16;
constexpr int64_t kMaxBeamWidth = 1 << 20;

// The ops [begin, end) of a graph whose ops before `begin` all run before
// them and whose ops from `end` on all run after (Segments()): a segment.
struct Segment {
  int begin = 0;
  int end = 0;
};

// The model of the peak: how one op changes the bytes alive.
class PeakModel {
 public:
  PeakModel(const Graph& graph, const std::vector<ViewGroup>& groups,
            const std::vector<int>& group_of, const Dag& dag)
      : groups_(groups),
        n_(static_cast<int>(graph.ops.size())),
        words_((n_ + 63) / 64) {
    LiveModel live = BuildLiveModel(graph, groups_, group_of, dag);
    initial_ = live.initial;
    first_only_ = live.first_only;
    starts_ = std::move(live.starts);
    ends_ = std::move(live.ends);
    pred_ = std::move(live.pred);
    inplace_ = std::move(live.inplace);
  }

  int ops() const { return n_; }
  // Whether every group `op` may start has no other op to start it.
  bool StartsAlone(int op) const {
    for (int g : starts_[op]) {
      if (groups_[g].starts.size() != 1) return false;
    }
    return true;
  }
  int words() const { return words_; }
  Bytes initial() const { return initial_; }
  Bytes first_only() const { return first_only_; }
  const std::vector<ViewGroup>& groups() const { return groups_; }
  const std::vector<int>& starts(int op) const { return starts_[op]; }
  const std::vector<int>& ends(int op) const { return ends_[op]; }
  const std::vector<int>& pred(int op) const { return pred_[op]; }
  const std::vector<std::pair<int, int>>& inplace(int op) const {
    return inplace_[op];
  }

  static bool Has(const uint64_t* set, int op) {
    return (set[op / 64] >> (op % 64)) & 1;
  }
  static void Set(uint64_t* set, int op) {
    set[op / 64] |= uint64_t{1} << (op % 64);
  }

  bool Ready(const uint64_t* executed, int op) const {
    if (Has(executed, op)) return false;
    for (int p : pred_[op]) {
      if (!Has(executed, p)) return false;
    }
    return true;
  }

  // Runs `op` after the ops of `executed` (which holds `live` bytes): the
  // bytes alive while it runs, and after. `work` counts the operations.
  std::pair<Bytes, Bytes> Run(const uint64_t* executed, int op, Bytes live,
                              bool first, int64_t& work) const {
    Bytes started = first ? first_only_ : 0;
    Bytes discount = 0;
    for (int g : starts_[op]) {
      ++work;
      if (!AnyIn(executed, groups_[g].starts, work)) started += groups_[g].size;
    }
    Bytes ended = 0;
    for (int g : ends_[op]) {
      ++work;
      if (AllIn(executed, groups_[g].ends, op, work)) ended += groups_[g].size;
    }
    // An input dying here may hold outputs starting here: each output at most
    // once, as much of it as the input has bytes (BuildProblem merges an
    // output no larger than its input, several into one input's bytes).
    std::vector<int> used;
    for (const auto& [in, out] : inplace_[op]) {
      ++work;
      if (std::find(used.begin(), used.end(), out) != used.end()) continue;
      if (!AllIn(executed, groups_[in].ends, op, work)) continue;
      if (groups_[out].from_start ||
          AnyIn(executed, groups_[out].starts, work) ||
          !std::binary_search(groups_[out].starts.begin(),
                              groups_[out].starts.end(), op)) {
        continue;
      }
      discount += std::min(groups_[in].size, groups_[out].size);
      used.push_back(out);
    }
    return {live + started - discount,
            live + started - ended - (first ? first_only_ : 0)};
  }

  // Runs a whole order: per segment, the bytes alive where it starts and
  // its peak (at least those). As Run() counts, but with a count of the
  // ends still to run per group instead of a look at each: Run() would
  // take a fan's width per branch.
  void Profile(const std::vector<int>& order,
               const std::vector<Segment>& segments,
               std::vector<Bytes>& start_live, std::vector<Bytes>& peak) const {
    std::vector<bool> started(groups_.size(), false);
    std::vector<int> remaining(groups_.size(), 0);
    for (int g = 0; g < static_cast<int>(groups_.size()); ++g) {
      remaining[g] = static_cast<int>(groups_[g].ends.size());
    }
    Bytes live = initial_;
    size_t s = 0;
    std::vector<int> used;
    for (int k = 0; k < static_cast<int>(order.size()); ++k) {
      if (k == segments[s].end) ++s;
      if (k == segments[s].begin) peak[s] = start_live[s] = live;
      const int op = order[k];
      Bytes first = k == 0 ? first_only_ : 0;
      Bytes added = first;
      for (int g : starts_[op]) {
        if (!started[g]) added += groups_[g].size;
      }
      Bytes ended = 0;
      for (int g : ends_[op]) {
        if (remaining[g] == 1) ended += groups_[g].size;
      }
      Bytes discount = 0;
      used.clear();
      for (const auto& [in, out] : inplace_[op]) {
        if (std::find(used.begin(), used.end(), out) != used.end()) continue;
        const bool reads = std::binary_search(groups_[in].ends.begin(),
                                              groups_[in].ends.end(), op);
        if (remaining[in] != (reads ? 1 : 0) || groups_[out].from_start ||
            started[out] ||
            !std::binary_search(groups_[out].starts.begin(),
                                groups_[out].starts.end(), op)) {
          continue;
        }
        discount += std::min(groups_[in].size, groups_[out].size);
        used.push_back(out);
      }
      peak[s] = std::max(peak[s], live + added - discount);
      live = live + added - ended - first;
      for (int g : starts_[op]) started[g] = true;
      for (int g : ends_[op]) --remaining[g];
    }
  }

 private:
  static bool AnyIn(const uint64_t* set, const std::vector<int>& ops,
                    int64_t& work) {
    for (int x : ops) {
      ++work;
      if (Has(set, x)) return true;
    }
    return false;
  }
  // Every op of `ops` but `op` is in `set`.
  static bool AllIn(const uint64_t* set, const std::vector<int>& ops, int op,
                    int64_t& work) {
    for (int x : ops) {
      ++work;
      if (x != op && !Has(set, x)) return false;
    }
    return true;
  }

  const std::vector<ViewGroup>& groups_;
  int n_;
  int words_;
  Bytes initial_ = 0;     // graph inputs, alive until their last reader
  Bytes first_only_ = 0;  // graph inputs nobody reads
  std::vector<std::vector<int>> starts_;  // per op: groups it may start
  std::vector<std::vector<int>> ends_;    // per op: groups it may end
  std::vector<std::vector<int>> pred_;
  std::vector<std::vector<std::pair<int, int>>> inplace_;  // (in, out) groups
};

// The segments of a graph: split after every op that each other op
// precedes or follows in the DAG every ordering keeps (an articulation op:
// a stage's output every later op descends from). Every valid order runs
// the segments one after another, and the bytes alive where one starts are
// those of its executed set, which every order shares: the peak of an
// order is the largest of its segments', each of which depends on the
// order within that segment alone. So the best order is the segments' best
// orders put together, and each may be searched on its own.
//
// Op v splits when no edge passes over it (every edge points forward in the
// graph's order), no op before it is a sink and no op after it a source:
// then every op before it reaches it, and it reaches every op after.
std::vector<Segment> Segments(const Dag& dag) {
  const int n = static_cast<int>(dag.succ.size());
  std::vector<int> over(n + 1, 0);  // edges passing over an op, as deltas
  for (int a = 0; a < n; ++a) {
    for (int b : dag.succ[a]) {
      if (b > a + 1) {
        ++over[a + 1];
        --over[b];
      }
    }
  }
  std::vector<bool> source_after(n + 1, false);
  for (int v = n - 1; v >= 0; --v) {
    source_after[v] =
        source_after[v + 1] || (v + 1 < n && dag.indegree[v + 1] == 0);
  }
  std::vector<Segment> segments;
  int begin = 0;
  int passing = 0;
  bool sink_before = false;
  for (int v = 0; v < n; ++v) {
    passing += over[v];
    if (passing == 0 && !sink_before && !source_after[v]) {
      segments.push_back(Segment{begin, v + 1});
      begin = v + 1;
    }
    sink_before = sink_before || dag.succ[v].empty();
  }
  if (begin < n) segments.push_back(Segment{begin, n});
  return segments;
}

// What the search of one segment knows.
struct SegmentSearch {
  std::vector<int> order;  // the segment's ops, when one was found
  Bytes peak = 0;          // its peak, raised to the floor, when found
  bool finished = false;   // no order below the incumbent, when none found
  Bytes frontier = 0;      // unfinished: no order of the segment is below
                           // it (raised to the floor)
};

// PeakModel on the ops of one segment, as bits 0..m-1 of `words()` words
// (op segment.begin + i is bit i): every op before the segment has run and
// none after it, so a group that an op before it started is started, one
// that an op after it may end does not end within it, and what is left of
// each test is a list of the segment's ops. Run() gives what
// PeakModel::Run() gives on the whole set.
class SegmentModel {
 public:
  SegmentModel(const PeakModel& model, Segment segment)
      : segment_(segment),
        m_(segment.end - segment.begin),
        words_((m_ + 63) / 64),
        first_only_(segment.begin == 0 ? model.first_only() : 0),
        ops_(m_) {
    const std::vector<ViewGroup>& groups = model.groups();
    for (int i = 0; i < m_; ++i) {
      const int op = segment.begin + i;
      LocalOp& local = ops_[i];
      std::vector<int> pred;
      for (int p : model.pred(op)) {
        if (p >= segment.begin) {
          pred.push_back(p - segment.begin);
          ops_[p - segment.begin].succ.push_back(i);
        }
      }
      local.pred = NewList(pred);
      local.starts_alone = model.StartsAlone(op);
      for (int g : model.starts(op)) {
        const std::optional<List> starts = Starts(groups[g]);
        if (starts.has_value())
          local.starts.push_back({groups[g].size, *starts});
      }
      for (int g : model.ends(op)) {
        const std::optional<List> ends = Ends(groups[g], op);
        if (ends.has_value()) local.ends.push_back({groups[g].size, *ends});
      }
      for (const auto& [in, out] : model.inplace(op)) {
        const ViewGroup& out_group = groups[out];
        if (out_group.from_start ||
            !std::binary_search(out_group.starts.begin(),
                                out_group.starts.end(), op)) {
          continue;
        }
        const std::optional<List> in_ends = Ends(groups[in], op);
        const std::optional<List> out_starts = Starts(out_group);
        if (!in_ends.has_value() || !out_starts.has_value()) continue;
        local.inplace.push_back({std::min(groups[in].size, out_group.size),
                                 *in_ends, *out_starts, out});
      }
    }
  }

  int ops() const { return m_; }
  int words() const { return words_; }
  bool StartsAlone(int i) const { return ops_[i].starts_alone; }

  // Appends to `ready` the ops that may run after the ops of `set` (the
  // work of looking at each op).
  void ReadyOps(const uint64_t* set, std::vector<int>& ready,
                int64_t& work) const {
    work += m_;
    for (int w = 0; w < words_; ++w) {
      uint64_t left = ~set[w];
      if (w == words_ - 1 && m_ % 64 != 0)
        left &= (uint64_t{1} << (m_ % 64)) - 1;
      for (; left != 0; left &= left - 1) {
        const int i = 64 * w + absl::countr_zero(left);
        if (AllIn(ops_[i].pred, set)) ready.push_back(i);
      }
    }
  }
  // The ops ready once `i` has run after the ops of `set` (which then
  // holds `i`), from `ready` before it: those but `i`, and the successors
  // of `i` whose predecessors have all run.
  void RunReady(const uint64_t* set, const uint64_t* ready, int i,
                uint64_t* next_ready) const {
    std::copy(ready, ready + words_, next_ready);
    next_ready[i / 64] &= ~(uint64_t{1} << (i % 64));
    for (int s : ops_[i].succ) {
      if (AllIn(ops_[s].pred, set)) PeakModel::Set(next_ready, s);
    }
  }

  // PeakModel::Run() of local op `i` after the ops of `set` (with those
  // before the segment), which hold `live` bytes.
  std::pair<Bytes, Bytes> Run(const uint64_t* set, int i, Bytes live,
                              int64_t& work) const {
    const LocalOp& local = ops_[i];
    const bool first = first_only_ != 0 && IsEmpty(set);
    Bytes started = first ? first_only_ : 0;
    for (const Sized& g : local.starts) {
      ++work;
      if (!AnyIn(g.ops, set)) started += g.size;
    }
    Bytes ended = 0;
    for (const Sized& g : local.ends) {
      ++work;
      if (AllIn(g.ops, set)) ended += g.size;
    }
    Bytes discount = 0;
    if (!local.inplace.empty()) {
      absl::InlinedVector<int, 4> used;
      for (const InPlace& pair : local.inplace) {
        ++work;
        if (!AllIn(pair.in_ends, set) || AnyIn(pair.out_starts, set) ||
            std::find(used.begin(), used.end(), pair.out) != used.end()) {
          continue;
        }
        discount += pair.bytes;
        used.push_back(pair.out);
      }
    }
    return {live + started - discount,
            live + started - ended - (first ? first_only_ : 0)};
  }

 private:
  // Local ops, as the words of a set that hold any, each with its ops'
  // bits: [begin, begin + count) of chunks_.
  struct List {
    int begin = 0;
    int count = 0;
  };
  struct Chunk {
    int word;
    uint64_t bits;
  };
  struct Sized {
    Bytes size;
    List ops;
  };
  struct InPlace {
    Bytes bytes;      // the input's bytes the output may take
    List in_ends;     // the input ends when all of these have run
    List out_starts;  // none of these may have run (started the output)
    int out;          // the output's group: each merged once
  };
  struct LocalOp {
    List pred;
    std::vector<int> succ;
    bool starts_alone = false;
    std::vector<Sized> starts;
    std::vector<Sized> ends;
    std::vector<InPlace> inplace;
  };

  List NewList(std::vector<int> ops) {
    std::sort(ops.begin(), ops.end());
    List list{static_cast<int>(chunks_.size()), 0};
    for (int op : ops) {
      if (list.count == 0 || chunks_.back().word != op / 64) {
        chunks_.push_back({op / 64, 0});
        ++list.count;
      }
      chunks_.back().bits |= uint64_t{1} << (op % 64);
    }
    return list;
  }
  // The starts of `group` within the segment; none when an op before it
  // has started the group.
  std::optional<List> Starts(const ViewGroup& group) {
    std::vector<int> ops;
    for (int s : group.starts) {
      if (s < segment_.begin) return std::nullopt;
      if (s < segment_.end) ops.push_back(s - segment_.begin);
    }
    return NewList(ops);
  }
  // The ends of `group` within the segment but `op`; none when an op after
  // it may end the group (then it does not end within it).
  std::optional<List> Ends(const ViewGroup& group, int op) {
    std::vector<int> ops;
    for (int e : group.ends) {
      if (e >= segment_.end) return std::nullopt;
      if (e >= segment_.begin && e != op) ops.push_back(e - segment_.begin);
    }
    return NewList(ops);
  }
  bool AllIn(List list, const uint64_t* set) const {
    for (int k = list.begin; k < list.begin + list.count; ++k) {
      if ((chunks_[k].bits & ~set[chunks_[k].word]) != 0) return false;
    }
    return true;
  }
  bool AnyIn(List list, const uint64_t* set) const {
    for (int k = list.begin; k < list.begin + list.count; ++k) {
      if ((chunks_[k].bits & set[chunks_[k].word]) != 0) return true;
    }
    return false;
  }
  bool IsEmpty(const uint64_t* set) const {
    for (int w = 0; w < words_; ++w) {
      if (set[w] != 0) return false;
    }
    return true;
  }

  Segment segment_;
  int m_;
  int words_;
  Bytes first_only_;
  std::vector<LocalOp> ops_;
  std::vector<Chunk> chunks_;  // the lists'
};

// Zeroed memory for a large table read at random: on Linux in pages the
// kernel may back with huge pages, which spares most of the address
// translations a look-up would otherwise miss.
class ZeroedWords {
 public:
  ZeroedWords() = default;
  explicit ZeroedWords(size_t count) {
#ifdef __linux__
    bytes_ = count * sizeof(uint64_t);
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      madvise(p, bytes_, MADV_HUGEPAGE);
      data_ = static_cast<uint64_t*>(p);
      return;
    }
    bytes_ = 0;
#endif
    fallback_.assign(count, 0);
    data_ = fallback_.data();
  }
  ZeroedWords(ZeroedWords&& other) noexcept { *this = std::move(other); }
  ZeroedWords& operator=(ZeroedWords&& other) noexcept {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    fallback_ = std::move(other.fallback_);
    return *this;
  }
  ~ZeroedWords() { Release(); }

  uint64_t* data() const { return data_; }

 private:
  void Release() {
#ifdef __linux__
    if (bytes_ != 0) munmap(data_, bytes_);
#endif
    bytes_ = 0;
    data_ = nullptr;
  }

  uint64_t* data_ = nullptr;
  size_t bytes_ = 0;  // mapped, when not in fallback_
  std::vector<uint64_t> fallback_;
};

// A vector that grows by blocks, none of which moves: no copy of what it
// holds, and no more memory than a block beyond it.
template <typename T>
class Chunked {
 public:
  int size() const { return size_; }
  T& at(int i) { return blocks_[i >> kShift][i & kMask]; }
  const T& at(int i) const { return blocks_[i >> kShift][i & kMask]; }
  void push_back(const T& value) {
    if ((size_ & kMask) == 0)
      blocks_.push_back(std::make_unique<T[]>(kMask + 1));
    blocks_.back()[size_ & kMask] = value;
    ++size_;
  }

 private:
  static constexpr int kShift = 16;
  static constexpr int kMask = (1 << kShift) - 1;
  std::vector<std::unique_ptr<T[]>> blocks_;
  int size_ = 0;
};

// The sets of a search, each once, with its state's id and running peak:
// open addressing with each slot's words together, so that a look-up reads
// one place of memory (read ahead by Prefetch()). A slot holds the set's
// words, its state's id plus one (0: an empty slot) and the peak; the id
// takes the upper half of the set's last word when the set's ops leave it
// free (a segment of up to 32 ops past a multiple of 64), a word of its own
// otherwise.
class SetTable {
 public:
  SetTable(int words, int ops)
      : words_(words),
        packed_(64 * words - ops >= 32),
        id_word_(packed_ ? words - 1 : words),
        peak_word_(packed_ ? words : words + 1),
        stride_(peak_word_ + 1) {
    Resize(1 << 10);
  }

  // Where `set` is or would go, read ahead of FindOrInsert(): its slot's
  // line and the next, where a probe goes on.
  size_t Slot(const uint64_t* set) const { return Hash(set) & mask_; }
  void Prefetch(size_t slot) const {
    const uint64_t* entry = &slots_.data()[slot * stride_];
    __builtin_prefetch(entry);
    __builtin_prefetch(entry + 8);
  }

  // The slot of `set`, after recording it with state `id` and `peak` when
  // it is new (then `inserted`), from its Slot() (Reserve() keeps it
  // valid).
  uint64_t* FindOrInsert(const uint64_t* set, size_t slot, int id, Bytes peak,
                         bool& inserted, int64_t& work) {
    for (;; slot = (slot + 1) & mask_) {
      uint64_t* entry = &slots_.data()[slot * stride_];
      if (IdField(entry) == 0) break;
      ++work;
      if (SameSet(set, entry)) {
        inserted = false;
        return entry;
      }
    }
    uint64_t* entry = &slots_.data()[slot * stride_];
    std::copy(set, set + words_, entry);
    const uint64_t field = static_cast<uint64_t>(id) + 1;
    if (packed_) {
      entry[id_word_] |= field << 32;
    } else {
      entry[id_word_] = field;
    }
    SetPeak(entry, peak);
    ++size_;
    inserted = true;
    return entry;
  }
  int Id(const uint64_t* entry) const {
    return static_cast<int>(IdField(entry) - 1);
  }
  Bytes Peak(const uint64_t* entry) const {
    return static_cast<Bytes>(entry[peak_word_]);
  }
  void SetPeak(uint64_t* entry, Bytes peak) const {
    entry[peak_word_] = static_cast<uint64_t>(peak);
  }

  // Room for `count` more sets without growing (which moves every slot).
  void Reserve(size_t count) {
    while ((size_ + count) * 4 > capacity_ * 3) Resize(capacity_ * 2);
  }

 private:
  uint64_t IdField(const uint64_t* entry) const {
    return packed_ ? entry[id_word_] >> 32 : entry[id_word_];
  }
  // The set's last word, without the id a packed slot keeps there.
  uint64_t LastWord(const uint64_t* set) const {
    return packed_ ? set[words_ - 1] & 0xFFFFFFFFULL : set[words_ - 1];
  }
  bool SameSet(const uint64_t* set, const uint64_t* entry) const {
    for (int w = 0; w + 1 < words_; ++w) {
      if (set[w] != entry[w]) return false;
    }
    return set[words_ - 1] == LastWord(entry);
  }
  size_t Hash(const uint64_t* set) const {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int w = 0; w < words_; ++w) {
      h = (h ^ (w + 1 < words_ ? set[w] : LastWord(set))) *
          0xBF58476D1CE4E5B9ULL;
      h ^= h >> 31;
    }
    return static_cast<size_t>(h ^ (h >> 29));
  }
  void Resize(size_t capacity) {
    ZeroedWords old = std::move(slots_);
    const size_t old_capacity = capacity_;
    slots_ = ZeroedWords(capacity * stride_ + 8);  // + what Prefetch() reads
    capacity_ = capacity;
    mask_ = capacity - 1;
    for (size_t o = 0; o < old_capacity; ++o) {
      const uint64_t* entry = &old.data()[o * stride_];
      if (IdField(entry) == 0) continue;
      size_t slot = Slot(entry);
      while (IdField(&slots_.data()[slot * stride_]) != 0) {
        slot = (slot + 1) & mask_;
      }
      std::copy(entry, entry + stride_, &slots_.data()[slot * stride_]);
    }
  }

  int words_;
  bool packed_;  // the id in the upper half of the set's last word
  int id_word_;
  int peak_word_;
  int stride_;  // words per slot
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t mask_ = 0;
  ZeroedWords slots_;
};

// The best-first search over the executed sets of one segment, from the set
// of every op before it (holding `start_live` bytes). A state's key is its
// running peak raised to `floor`, a bound already known on the whole
// order's peak: below it, peaks make no difference to the result. States
// wait in one stack per key, the least key first: within a key the search
// runs depth-first (the last state pushed, and of one state's children the
// one leaving the fewest bytes alive, first), so it dives to a complete
// order instead of widening every cheap prefix. The first complete state to
// leave has the least key; states whose key reaches `incumbent` (the best
// order known, in the model) are never queued.
class Search {
 public:
  // `meter` counts the steps, `steps_before` of them before this search,
  // and holds the deadline.
  Search(const PeakModel& model, Segment segment, Bytes floor, Bytes incumbent,
         int64_t max_work, internal::StepMeter& meter, int64_t steps_before)
      : model_(model, segment),
        words_(model_.words()),
        segment_(segment),
        floor_(floor),
        incumbent_(incumbent),
        max_work_(max_work),
        meter_(meter),
        steps_before_(steps_before),
        known_(words_, model_.ops()) {}

  SegmentSearch Run(Bytes start_live) {
    SegmentSearch result;
    set_.assign(words_, 0);
    ready_set_.assign(words_, 0);
    if (keep_ready_) {
      int64_t ignored = 0;
      model_.ReadyOps(set_.data(), ready_, ignored);
      for (int i : ready_) PeakModel::Set(ready_set_.data(), i);
    }
    known_.Reserve(1);
    Add(set_.data(), ready_set_.data(), known_.Slot(set_.data()),
        std::max(start_live, floor_), start_live, kNone, kNone);
    while (!stacks_.empty()) {
      auto bucket = stacks_.begin();
      const Bytes key = bucket->first;
      if (work_ > max_work_ || meter_.OutOfTime(steps_before_ + work_)) {
        // Every order of the segment passes through a queued set with a
        // key at most its own: the least key bounds them all.
        result.frontier = key;
        return result;
      }
      std::vector<uint64_t>& stack = bucket->second;
      const uint64_t* top = &stack[stack.size() - EntryWords()];
      std::copy(top, top + words_, set_.begin());
      const int id = static_cast<int>(top[words_]);
      const Bytes live = static_cast<Bytes>(top[words_ + 1]);
      if (keep_ready_) {
        std::copy(top + words_ + 2, top + 2 * words_ + 2, ready_set_.begin());
      }
      stack.resize(stack.size() - EntryWords());
      if (stack.empty()) stacks_.erase(bucket);
      const Bytes peak = states_.at(id).peak;
      if (peak != key) continue;  // a better path replaced it
      int count = 0;
      for (uint64_t w : set_) count += absl::popcount(w);
      if (count == model_.ops()) {
        result.order = Path(id);
        result.peak = peak;
        return result;
      }
      Expand(id, peak, live, segment_.begin == 0 && count == 0);
    }
    result.finished = true;
    return result;
  }

  int64_t work() const { return work_; }

 private:
  // Queues the children of state `id` (the set in set_, its ready ops in
  // ready_set_ when kept) whose running peak stays under the incumbent.
  void Expand(int id, Bytes peak, Bytes live, bool first) {
    // The ready ops' sets, and their places in the table read ahead while
    // the model runs them.
    ready_.clear();
    if (keep_ready_) {
      work_ += model_.ops();  // as ReadyOps() counts
      for (int w = 0; w < words_; ++w) {
        for (uint64_t bits = ready_set_[w]; bits != 0; bits &= bits - 1) {
          ready_.push_back(64 * w + absl::countr_zero(bits));
        }
      }
    } else {
      model_.ReadyOps(set_.data(), ready_, work_);
    }
    const size_t r_count = ready_.size();
    known_.Reserve(r_count);
    next_.resize(r_count * words_);
    next_ready_.resize(keep_ready_ ? r_count * words_ : 0);
    slots_.resize(r_count);
    for (size_t r = 0; r < r_count; ++r) {
      uint64_t* child_set = &next_[r * words_];
      std::copy(set_.begin(), set_.end(), child_set);
      PeakModel::Set(child_set, ready_[r]);
      slots_[r] = known_.Slot(child_set);
      known_.Prefetch(slots_[r]);
      if (keep_ready_) {
        model_.RunReady(child_set, ready_set_.data(), ready_[r],
                        &next_ready_[r * words_]);
      }
    }
    children_.clear();
    int forced = kNone;
    for (size_t r = 0; r < r_count; ++r) {
      const int i = ready_[r];
      const auto [during, after] = model_.Run(set_.data(), i, live, work_);
      const Bytes next_peak = std::max(peak, during);
      if (next_peak >= incumbent_) continue;
      children_.push_back({i, next_peak, after, static_cast<int>(r)});
      // An op that frees at least what it allocates and stays within the
      // running peak may run first: moved to the front of any completion
      // it lowers the bytes alive at every step it passes by the same
      // amount or more (a group it ends can only end sooner, an in-place
      // merge of a later op can only become possible), unless one of the
      // groups it starts could be started by another op instead. So every
      // completion is matched by one that starts with it, at no higher
      // peak: the state's only child.
      if (forced == kNone && !first && after <= live && next_peak == peak &&
          model_.StartsAlone(i)) {
        forced = static_cast<int>(children_.size()) - 1;
      }
    }
    if (forced != kNone) {
      children_[0] = children_[forced];
      children_.resize(1);
    }
    // Pushed last, popped first: the fewest bytes alive.
    std::sort(children_.begin(), children_.end(),
              [](const Child& a, const Child& b) {
                return std::tie(b.live, b.op) < std::tie(a.live, a.op);
              });
    for (const Child& child : children_) {
      Add(&next_[child.ready * words_],
          keep_ready_ ? &next_ready_[child.ready * words_] : nullptr,
          slots_[child.ready], child.peak, child.live, id, child.op);
      work_ += kStateWork + 3 * words_;
    }
  }

  struct State {
    Bytes peak;  // the running peak, raised to the floor
    int parent;
    int op;  // local
  };

  // The words of a queued state: its set, its id, the bytes alive after it
  // and, when kept, its ready ops.
  size_t EntryWords() const { return words_ + 2 + (keep_ready_ ? words_ : 0); }

  void Add(const uint64_t* set, const uint64_t* ready, size_t slot, Bytes peak,
           Bytes live, int parent, int op) {
    const int id = states_.size();
    bool inserted = false;
    uint64_t* entry = known_.FindOrInsert(set, slot, id, peak, inserted, work_);
    int known = id;
    if (inserted) {
      states_.push_back(State{peak, parent, op});
    } else {
      if (known_.Peak(entry) <= peak) return;
      known_.SetPeak(entry, peak);
      known = known_.Id(entry);
      states_.at(known) = State{peak, parent, op};
    }
    std::vector<uint64_t>& stack = stacks_[peak];
    stack.insert(stack.end(), set, set + words_);
    stack.push_back(static_cast<uint64_t>(known));
    stack.push_back(static_cast<uint64_t>(live));
    if (keep_ready_) stack.insert(stack.end(), ready, ready + words_);
  }

  std::vector<int> Path(int id) const {
    std::vector<int> order;
    for (; states_.at(id).parent != kNone; id = states_.at(id).parent) {
      order.push_back(segment_.begin + states_.at(id).op);
    }
    std::reverse(order.begin(), order.end());
    return order;
  }

  SegmentModel model_;
  int words_;
  // Whether a queued state keeps its ready ops (found from its parent's
  // without looking at every op): on segments of up to 128 ops, where it
  // costs as little memory as the set.
  bool keep_ready_ = words_ <= 2;
  Segment segment_;
  Bytes floor_;
  Bytes incumbent_;
  int64_t max_work_;
  internal::StepMeter& meter_;
  int64_t steps_before_;
  int64_t work_ = 0;
  struct Child {
    int op;
    Bytes peak;
    Bytes live;
    int ready;  // index in ready_
  };
  std::vector<uint64_t> set_;         // of the state being expanded
  std::vector<uint64_t> ready_set_;   // its ready ops, when kept
  std::vector<int> ready_;            // the same, listed
  std::vector<uint64_t> next_;        // per ready op: the set after it,
  std::vector<uint64_t> next_ready_;  // the ops ready then, when kept,
  std::vector<size_t> slots_;         // and the set's slot in `known_`
  std::vector<Child> children_;       // the ready ops queued
  Chunked<State> states_;
  SetTable known_;
  // Per key, the states to expand (EntryWords() each).
  std::map<Bytes, std::vector<uint64_t>> stacks_;
};

// A beam over one segment of the model, from the set of every op before it
// (holding `start_live` bytes): of the states with k ops run, the `width` of
// the smallest running peak (then live bytes) are expanded by every ready
// op, states reaching one set merged. Returns the segment's order of the
// best complete state and its peak, nullopt past `max_work` (counted as the
// search counts it) or the deadline of `meter` (which counts `work`).
std::optional<std::pair<std::vector<int>, Bytes>> BeamOrder(
    const PeakModel& model, Segment segment, Bytes start_live, int width,
    int64_t max_work, int64_t& work, internal::StepMeter& meter) {
  const int m = segment.end - segment.begin;
  const int words = model.words();
  struct Entry {
    Bytes peak;
    Bytes live;
    int parent;  // index in the previous level
    int op;
  };
  std::vector<std::vector<Entry>> levels(m + 1);
  std::vector<std::vector<uint64_t>> sets(m + 1);
  levels[0].push_back(Entry{start_live, start_live, kNone, kNone});
  sets[0].assign(words, 0);
  for (int op = 0; op < segment.begin; ++op) PeakModel::Set(sets[0].data(), op);
  for (int k = 0; k < m; ++k) {
    std::vector<Entry> next;
    std::vector<uint64_t> next_sets;
    absl::flat_hash_map<std::vector<uint64_t>, int> seen;
    for (int e = 0; e < static_cast<int>(levels[k].size()); ++e) {
      const Entry entry = levels[k][e];
      const uint64_t* set = &sets[k][static_cast<size_t>(e) * words];
      for (int op = segment.begin; op < segment.end; ++op) {
        ++work;
        if (!model.Ready(set, op)) continue;
        const auto [during, after] =
            model.Run(set, op, entry.live, segment.begin + k == 0, work);
        std::vector<uint64_t> key(set, set + words);
        PeakModel::Set(key.data(), op);
        work += kStateWork + words;
        const Entry candidate{std::max(entry.peak, during), after, e, op};
        auto [it, inserted] =
            seen.emplace(std::move(key), static_cast<int>(next.size()));
        if (inserted) {
          next.push_back(candidate);
          next_sets.insert(next_sets.end(), it->first.begin(), it->first.end());
        } else if (candidate.peak < next[it->second].peak) {
          next[it->second] = candidate;
        }
      }
      if (work > max_work || meter.OutOfTime(work)) return std::nullopt;
    }
    std::vector<int> keep(next.size());
    std::iota(keep.begin(), keep.end(), 0);
    std::sort(keep.begin(), keep.end(), [&](int a, int b) {
      return std::tie(next[a].peak, next[a].live, a) <
             std::tie(next[b].peak, next[b].live, b);
    });
    if (static_cast<int>(keep.size()) > width) keep.resize(width);
    for (int i : keep) {
      levels[k + 1].push_back(next[i]);
      sets[k + 1].insert(
          sets[k + 1].end(), next_sets.begin() + static_cast<size_t>(i) * words,
          next_sets.begin() + static_cast<size_t>(i + 1) * words);
    }
    work += static_cast<int64_t>(next.size());
  }
  std::vector<int> order(m);
  int e = 0;  // the best complete state comes first
  for (int k = m; k > 0; --k) {
    order[k - 1] = levels[k][e].op;
    e = levels[k][e].parent;
  }
  return std::make_pair(std::move(order), levels[m][0].peak);
}

// The best order known before the search, into `result` (order and peak):
// the graph's own, "memory"'s or, where the bound over orders is below
// both, "window"'s, whichever is lowest. Returns that bound (0 when it was
// not computed). The bound and "window" get their shares of `whole`.
absl::StatusOr<Bytes> FindIncumbent(const Graph& graph,
                                    const BuildOptions& options,
                                    const Problem& problem,
                                    const OrderGraph& grouped, Budget& whole,
                                    bool limited, OptimalOrder& result) {
  result.order.resize(graph.ops.size());
  std::iota(result.order.begin(), result.order.end(), 0);
  result.peak = LowerBound(problem);
  MEMPLAN_ASSIGN_OR_RETURN(const auto memory,
                           internal::MemoryOrder(graph, options, result.peak,
                                                 grouped.index, grouped.dag));
  if (memory.second < result.peak) {
    result.order = memory.first;
    result.peak = memory.second;
  }
  // At the bound over all orders already (every bundled inference graph):
  // nothing to search.
  Budget bound_budget(
      internal::PartEffort(whole, limited, internal::kBoundDefaultWork, 0.1));
  MEMPLAN_ASSIGN_OR_RETURN(
      const std::optional<internal::OrderBounds> bounds,
      internal::ComputeOrderBounds(graph, options, bound_budget));
  whole.Carry(bound_budget.work_done());
  const Bytes any_bound = bounds.has_value() ? bounds->bound.bytes : 0;
  if (any_bound < result.peak) {
    // "window"'s order, where it is lower, is the incumbent instead: on
    // random stages too wide for the search below to finish, it is often
    // the lower one (a RandWire network of 980 ops: 0.816 of the traced
    // peak against the search's 0.896). Its work is its own, linear in the
    // ops. It starts from the bounds above and "memory"'s order.
    Budget window_budget(internal::PartEffort(
        whole, limited, internal::WindowDefaultWork(graph), 0.25));
    MEMPLAN_ASSIGN_OR_RETURN(
        WindowOrder window,
        internal::ComputeWindowOpOrder(graph, options, window_budget, bounds,
                                       &memory));
    whole.Carry(window_budget.work_done());
    if (window.peak < result.peak) {
      result.order = std::move(window.order);
      result.peak = window.peak;
    }
  }
  return any_bound;
}

// The segments of an order (Segments()) and what the searches learn of
// them: every valid order runs the segments in turn, so the order's steps
// [begin, end) are the segment's ops.
struct SegmentParts {
  std::vector<Segment> segments;
  std::vector<Bytes> start_live;        // bytes alive where each starts
  std::vector<Bytes> peak;              // its best part's model peak
  std::vector<std::vector<int>> parts;  // its best part
  // No order's model peak, nor its real one, is below it (the bound over
  // op orders, then the segments' minima as they are known).
  Bytes floor = 0;
  std::vector<int> unfinished;  // segments whose search did not finish
};

SegmentParts SplitIntoSegments(const PeakModel& model, const Dag& dag,
                               const std::vector<int>& order, Bytes floor) {
  SegmentParts state;
  state.segments = Segments(dag);
  const int s_count = static_cast<int>(state.segments.size());
  state.start_live.assign(s_count, 0);
  state.peak.assign(s_count, 0);
  model.Profile(order, state.segments, state.start_live, state.peak);
  state.parts.resize(s_count);
  for (int s = 0; s < s_count; ++s) {
    state.parts[s].assign(order.begin() + state.segments[s].begin,
                          order.begin() + state.segments[s].end);
  }
  state.floor = floor;
  return state;
}

// The search of each segment, the highest peak first (once its minimum is
// known, the others need only stay below it, which they mostly do at
// once), within half of the work `whole` has left (with no limit, half of
// the default).
void SearchSegments(const PeakModel& model, Budget& whole, bool limited,
                    SegmentParts& state) {
  std::vector<int> by_peak(state.segments.size());
  std::iota(by_peak.begin(), by_peak.end(), 0);
  std::stable_sort(by_peak.begin(), by_peak.end(),
                   [&](int a, int b) { return state.peak[a] > state.peak[b]; });
  const int64_t half = limited ? (whole.work_limit() - whole.work_done()) / 2
                               : internal::kOptimalDefaultWork / 2;
  const int64_t max_work = internal::StepsOf(std::max<int64_t>(0, half),
                                             internal::kOptimalStepsPerUnit);
  int64_t work = 0;
  internal::StepMeter meter(whole, internal::kOptimalStepsPerUnit);
  for (int s : by_peak) {
    if (state.peak[s] <= state.floor) continue;  // the incumbent's will do
    // A search reaches a complete order no sooner than after looking at
    // the segment's ops once per op run: beyond the work left it cannot
    // finish (a wide fan), and is not started.
    const Segment segment = state.segments[s];
    const int64_t m = segment.end - segment.begin;
    if (m * m > max_work - work || meter.OutOfTime(work)) {
      state.unfinished.push_back(s);
      continue;
    }
    Search search(model, segment, state.floor, state.peak[s], max_work - work,
                  meter, work);
    SegmentSearch found = search.Run(state.start_live[s]);
    work += search.work();
    if (!found.order.empty()) {
      state.parts[s] = std::move(found.order);
      state.peak[s] = found.peak;
      state.floor = std::max(state.floor, found.peak);
    } else if (found.finished) {
      state.floor = std::max(state.floor, state.peak[s]);
    } else {
      state.floor = std::max(state.floor, found.frontier);
      state.unfinished.push_back(s);
    }
  }
  meter.Finish(work);
}

// Unfinished segments: beams over the same model may still find a better
// part, with the work `whole` has left (with no limit, as much as the
// search had): 16 states per step, then 4 times as many while the work
// lasts (none when a segment is too wide for a beam to finish).
void BeamSegments(const PeakModel& model, Budget& whole, bool limited,
                  SegmentParts& state) {
  const int64_t left = whole.work_limit() - whole.work_done();
  const int64_t max_work = internal::StepsOf(
      limited ? std::max<int64_t>(0, left) : internal::kOptimalDefaultWork / 2,
      internal::kOptimalStepsPerUnit);
  int64_t work = 0;
  internal::StepMeter meter(whole, internal::kOptimalStepsPerUnit);
  for (int s : state.unfinished) {
    const Segment segment = state.segments[s];
    const int64_t m = segment.end - segment.begin;
    for (int64_t width = kBeamWidth;
         width <= kMaxBeamWidth && state.peak[s] > state.floor; width *= 4) {
      if (m * m * width > max_work - work) break;
      const std::optional<std::pair<std::vector<int>, Bytes>> beam =
          BeamOrder(model, segment, state.start_live[s],
                    static_cast<int>(width), max_work - work, work, meter);
      if (!beam.has_value()) break;
      if (beam->second < state.peak[s]) {
        state.parts[s] = beam->first;
        state.peak[s] = beam->second;
      }
    }
  }
  meter.Finish(work);
}

}  // namespace

absl::StatusOr<OptimalOrder> ComputeOptimalOpOrder(const Graph& graph,
                                                   const BuildOptions& options,
                                                   const PlanOptions& effort) {
  // One budget for every part: with no limit, each part has its default
  // work; with one, the bound and "window" get shares of it, the search
  // half of the rest and the beams what is left.
  const bool limited = internal::HasLimit(effort);
  Budget whole(
      internal::WithDefaultWork(effort, internal::kOptimalDefaultWork));
  MEMPLAN_ASSIGN_OR_RETURN(const Problem problem, BuildProblem(graph, options));
  const OrderGraph grouped = BuildOrderGraph(graph, problem, options);
  const PeakModel model(graph, grouped.groups, grouped.group_of, grouped.dag);
  OptimalOrder result;
  MEMPLAN_ASSIGN_OR_RETURN(
      const Bytes any_bound,
      FindIncumbent(graph, options, problem, grouped, whole, limited, result));
  if (any_bound >= result.peak) {
    result.bound = result.peak;
    result.proven = true;
    result.work = whole.work_done();
    return result;
  }
  // Each segment searched on its own, from the incumbent's parts.
  SegmentParts state =
      SplitIntoSegments(model, grouped.dag, result.order, any_bound);
  SearchSegments(model, whole, limited, state);
  BeamSegments(model, whole, limited, state);
  result.work = whole.work_done();
  result.cut = !state.unfinished.empty();
  std::vector<int> order;
  order.reserve(graph.ops.size());
  for (const std::vector<int>& part : state.parts) {
    order.insert(order.end(), part.begin(), part.end());
  }
  if (order != result.order) {
    MEMPLAN_ASSIGN_OR_RETURN(const Bytes peak,
                             OrderPeak(graph, order, options));
    if (peak < result.peak) {
      result.order = std::move(order);
      result.peak = peak;
    }
  }
  result.bound = std::min(state.floor, result.peak);
  result.proven = result.bound == result.peak;
  return result;
}

}  // namespace memplan

// What caffe2_greedy and caffe2_dp share: shared objects, the order in which
// buffers are processed, and the layout of objects into pools (not public).

#ifndef MEMPLAN_PLANNERS_CAFFE2_OBJECTS_H_
#define MEMPLAN_PLANNERS_CAFFE2_OBJECTS_H_

#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "caffe2.h"
#include "effort/budget.h"
#include "memplan/planner.h"
#include "memplan/types.h"

namespace memplan {

namespace internal {

// One shared object during planning.
struct SharedObject {
  std::vector<BufferId> members;  // in the order they joined
  Step last_end = 0;              // the latest end among the members
  Bytes size = 0;                 // the largest member
  bool operator==(const SharedObject&) const = default;
};
using ObjectAssignment = std::vector<SharedObject>;

// Sum of the object sizes (memonger's "optimized bytes" before layout).
Bytes ObjectTotal(const ObjectAssignment& objects);

// What both planners know about a problem: which buffers may share, in which
// order they are processed, and how objects are laid out.
class Caffe2Context {
 public:
  Caffe2Context(const Problem& problem, const Caffe2Options& options);

  const Problem& problem() const { return problem_; }
  // The shareable buffers (neither fixed nor static) by (end, start, id).
  const std::vector<BufferId>& order() const { return order_; }

  // Buffers of one pool class allow exactly the same pools.
  int pool_class(BufferId buffer) const { return pool_class_[buffer]; }
  bool HasExplicitConflicts(BufferId buffer) const {
    return !explicit_[buffer].empty();
  }
  bool ExplicitConflict(BufferId a, BufferId b) const;

  // Whether `buffer` may join `object` after its current members.
  bool CanJoin(const SharedObject& object, BufferId buffer) const;
  // Same pools and no explicit conflict (ignores time).
  bool Compatible(const SharedObject& object, BufferId buffer) const;
  void Join(SharedObject& object, BufferId buffer) const;
  SharedObject NewObject(BufferId buffer) const;

  // memonger's greedy: places `buffers` (in that order) into `objects`.
  // With a `budget`, ticks the objects it compares and stops when out of
  // time (DeadlineExceeded) or when its counted work is spent (Aborted): a
  // pass is O(n * objects).
  absl::Status Greedy(std::span<const BufferId> buffers,
                      ObjectAssignment& objects,
                      Budget* budget = nullptr) const;

  // Adds the fixed and static buffers, lays the objects out and fills the
  // statistics. ResourceExhausted when an object fits in no allowed pool.
  absl::StatusOr<Plan> Layout(const ObjectAssignment& objects,
                              std::string_view planner) const;

 private:
  const Problem& problem_;
  std::vector<BufferId> order_;
  std::vector<bool> shareable_;
  std::vector<int> pool_class_;                  // equal = same allowed pools
  std::vector<std::vector<BufferId>> explicit_;  // sorted explicit partners
};

}  // namespace internal
}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_CAFFE2_OBJECTS_H_

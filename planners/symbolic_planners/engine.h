// The placement engine of the symbolic planners: candidate offsets that are
// expressions, the pairwise check that proves them, layouts of a placement
// order, and their peaks and scores at sample values.
//
// Every offset the engine places is a polynomial in the binomial basis of
// the dims (symbolic/binomial_poly.h). A candidate is 0, the top of a placed
// conflicting buffer, or the envelope of all their tops (the coefficient-
// wise maximum, >= each top over the whole box, so always valid above
// them), each rounded up to the buffer's alignment. The pairwise check is
// the verifier's: one side proven over the whole box.
//
//   offset ^        envelope(top_a, top_b) -> [  c  ]
//          |  top_b ----------------------/
//          |  [   b   ]   top_a ---------/
//          |  [   a   ]
//          +---------------------------------> dim value

#ifndef MEMPLAN_PLANNERS_SYMBOLIC_PLANNERS_ENGINE_H_
#define MEMPLAN_PLANNERS_SYMBOLIC_PLANNERS_ENGINE_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "effort/budget.h"
#include "memplan/symbolic.h"
#include "symbolic/binomial_poly.h"

namespace memplan::internal::symbolic {

// The greedy's sample points, as box coordinates: every dim at the same
// fraction of its range, from its minimum to its maximum.
std::vector<std::vector<int64_t>> DefaultSamples(const DimBox& box);

// The search's samples: the greedy's, the smallest values (every dim at
// min + 1, 2, 3, 6) and each dim at 2^-j and 3 * 2^-j of its range.
std::vector<std::vector<int64_t>> DenseSamples(const DimBox& box);

// How a placement chooses among its candidates.
struct PlaceRule {
  // Beyond 0, each placed neighbour's top and the envelope of all of them:
  // the envelope of each top with the highest top at the minima and with the
  // highest at the maxima (apart from both, lower than the whole envelope).
  bool pair_envelopes = false;
  // Compare the candidates by their worst weighted sample first (then by the
  // sum of their ratios), instead of by the sum alone.
  bool worst_first = false;
};

// A plan's quality over the samples: the worst weighted ratio (1 at the
// target), then the sum of the ratios; smaller is better.
struct Score {
  double worst = std::numeric_limits<double>::infinity();
  double sum = std::numeric_limits<double>::infinity();
  bool operator<(const Score& o) const {
    return worst != o.worst ? worst < o.worst : sum < o.sum;
  }
};

// Layouts of one problem over its box. Work is counted in candidate units
// (a candidate offset scored at every sample costs one per sample and one
// more, a pair checked one, a sub-box of a proof one) and, when a budget is
// given, ticked against it at SymbolicCandidateWork() units each.
class Engine {
 public:
  Engine(const SymbolicProblem& problem, DimBox box);

  // Counts against `budget` from now on (nullptr: nothing).
  void SetBudget(Budget* budget) { budget_ = budget; }

  // The samples: `base` (box coordinates) and the caller's values; the
  // sizes and neighbours of every buffer.
  absl::Status Prepare(std::vector<std::vector<int64_t>> base,
                       const std::vector<DimValues>& extra);

  // Placement orders. The greedy's three: by size at the maxima; by size at
  // the minima; longest lifetime first (long-lived buffers such as a KV
  // cache at the bottom, where their offsets stay constant). `more` adds by
  // area (size at the maxima times lifetime) and by size at the middle of
  // the box. Ties by size at the maxima, then by id.
  std::vector<std::vector<int>> Orders(bool more) const;

  // Places the buffers in `order`, keeping the placements of the longest
  // prefix it shares with the previous layout (made with the same rule).
  // DeadlineExceeded, the layout unfinished, once the budget's deadline
  // has passed.
  absl::Status Layout(const std::vector<int>& order, const PlaceRule& rule);

  // Forgets the previous layout (for a change of rule).
  void Reset() { Layout({}, PlaceRule{}).IgnoreError(); }

  // A polynomial >= every top over the box: the highest top at sample
  // `start` (at the maxima when -1), raised by each top not proven under
  // it: by their coefficient-wise envelope, or (`shift`) by the least
  // constant that the prover finds enough for every such top.
  BinomialPoly Peak(int start, bool shift = false);

  // The peak's value at each sample (int64 max where it overflows).
  void PeakValues(const BinomialPoly& peak, std::vector<int64_t>* values) const;

  absl::StatusOr<SymbolicPlan> MakePlan(const BinomialPoly& peak,
                                        const std::string& planner) const;

  // Per-sample weights of the search's score: 1 / (target - 1), with the
  // end target at the box's upper corner.
  void SetTargets(double target, double end_target);
  Score ScoreOf(const std::vector<int64_t>& values) const;
  // The sample of the worst weighted ratio.
  int WorstSample(const std::vector<int64_t>& values) const;
  // The buffer whose top is highest at sample s.
  int HighestAt(int s) const;

  const std::vector<std::vector<int64_t>>& samples() const { return samples_; }
  int64_t LowerBoundAt(size_t s) const { return lower_bounds_[s]; }
  // Candidate units counted so far.
  int64_t work() const { return work_; }
  // The budget's counted work is spent (false without a budget).
  bool WorkSpent();
  // The budget's deadline has passed (false without a budget).
  bool OutOfTime();

 private:
  void Neighbours();
  // Ticks the budget with the work counted since the last call.
  void Sync();
  // True when room + c >= 0 is proven over the box.
  bool Proven(const BinomialPoly& room, int64_t c);
  // True when the placement [offset, top) is proven apart from buffer k.
  bool Apart(const BinomialPoly& offset, const BinomialPoly& top, int k);
  // Buffer b's candidate offsets (the envelope last) and its placed
  // neighbours.
  std::vector<BinomialPoly> Candidates(int b, const PlaceRule& rule,
                                       std::vector<int>* placed) const;
  // Places buffer b at its best candidate proven apart from its placed
  // neighbours.
  absl::Status Place(int b, const PlaceRule& rule);
  // Buffer b's placement ending at `top`: its score (the peak at each
  // sample relative to the lower bound), its own height and its value at
  // each sample; false when it overflows at a sample.
  bool ScoreAt(const BinomialPoly& top, const PlaceRule& rule, Score* score,
               double* height, std::vector<int64_t>* values) const;

  const SymbolicProblem& problem_;
  DimBox box_;
  std::vector<int64_t> width_;
  std::vector<std::vector<int64_t>> samples_;
  std::vector<int64_t> lower_bounds_;  // per sample
  std::vector<double> weights_;        // per sample, for the search's score
  std::vector<BinomialPoly> sizes_;
  std::vector<int64_t> at_max_, at_min_;  // sizes at the box's corners
  std::vector<std::vector<int>> neighbours_;
  std::vector<BinomialPoly> offsets_;
  std::vector<BinomialPoly> tops_;
  std::vector<bool> placed_;
  std::vector<int64_t> peak_values_;
  std::vector<int> laid_;  // the order of the current layout
  std::vector<std::vector<int64_t>> prefix_peaks_;  // before each position
  int64_t work_ = 0;
  Budget* budget_ = nullptr;
  int64_t ticked_ = 0;  // work units ticked to budget_
};

}  // namespace memplan::internal::symbolic

#endif  // MEMPLAN_PLANNERS_SYMBOLIC_PLANNERS_ENGINE_H_

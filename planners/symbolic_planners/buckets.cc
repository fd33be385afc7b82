// PlanSymbolicBuckets: the range of one dim cut into buckets, each planned
// on its own, the cuts chosen by dynamic programming over candidate ends;
// and the sampled ratios the choice is scored by.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_planner.h"
#include "symbolic/binomial_poly.h"
#include "symbolic_planners/engine.h"

namespace memplan {
namespace {

using internal::DimBox;
using internal::symbolic::DefaultSamples;
using internal::symbolic::DenseSamples;

// The slack (target - 1) the search gives a ratio at `values`: the end
// target's at the maxima of `whole`, the target's elsewhere. A target of 1
// (or below) asks for the bound itself: any excess is then very large,
// never a division by zero.
double Slack(const DimValues& values, const DimRanges& whole,
             const SymbolicSearchOptions& options) {
  bool end = true;
  for (const auto& [name, range] : whole) {
    end = end && values.at(name) == range.max;
  }
  return std::max(1e-9,
                  (end ? options.end_target_ratio : options.target_ratio) - 1);
}

// The search's score of `plan` on `sub` (the problem, its dims maybe
// narrowed): the worst (peak / LB - 1) / (target - 1) over the search's
// samples, with the end target at the maxima of `whole`.
// A plan of sub.Stepped(steps) is taken at StepValues() of each sample.
absl::StatusOr<double> TargetExcess(const SymbolicProblem& sub,
                                    const DimValues& steps,
                                    const SymbolicPlan& plan,
                                    const SymbolicSearchOptions& options,
                                    const DimRanges& whole,
                                    DimValues* worst_at = nullptr) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(sub.dims));
  double worst = -1;
  for (const std::vector<int64_t>& t : DenseSamples(box)) {
    const DimValues values = box.ValuesAt(t);
    MEMPLAN_ASSIGN_OR_RETURN(Problem at, sub.Rounded(values));
    MEMPLAN_ASSIGN_OR_RETURN(int64_t peak,
                             plan.peak.Evaluate(StepValues(values, steps)));
    const double ratio =
        static_cast<double>(peak) /
        static_cast<double>(std::max<int64_t>(1, LowerBound(at)));
    const double excess = (ratio - 1) / Slack(values, whole, options);
    if (excess > worst) {
      worst = excess;
      if (worst_at != nullptr) *worst_at = values;
    }
  }
  return std::max(worst, 0.0);
}

// WorstSampledRatio() of a plan of problem.Stepped(steps).
absl::StatusOr<double> WorstStepped(const SymbolicProblem& problem,
                                    const DimValues& steps,
                                    const SymbolicPlan& plan) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(problem.dims));
  double worst = 0;
  for (const std::vector<int64_t>& t : DefaultSamples(box)) {
    const DimValues values = box.ValuesAt(t);
    MEMPLAN_ASSIGN_OR_RETURN(Problem at, problem.Rounded(values));
    MEMPLAN_ASSIGN_OR_RETURN(int64_t peak,
                             plan.peak.Evaluate(StepValues(values, steps)));
    worst = std::max(
        worst, static_cast<double>(peak) /
                   static_cast<double>(std::max<int64_t>(1, LowerBound(at))));
  }
  return worst;
}

}  // namespace

absl::StatusOr<double> WorstSampledRatio(const SymbolicProblem& problem,
                                         const SymbolicPlan& plan) {
  return WorstStepped(problem, {}, plan);
}

absl::StatusOr<double> WorstSampledRatio(const SymbolicProblem& problem,
                                         const SymbolicBucket& bucket) {
  MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem narrowed,
                           problem.Narrowed(bucket.dims));
  return WorstStepped(narrowed, bucket.steps, bucket.plan);
}

namespace {

// The step of `dim` a bucket's plan counts it in (SymbolicProblem::
// Stepped()): 1 (none), 2, 4, ... 64, the one whose reserved sizes' lower
// bound is least above the sizes' over the search's samples of `narrowed`
// (the bucket's problem): the worst (ratio - 1) / (target - 1), the end
// target at the maxima of `whole` (the targets of `search`; without it,
// the worst ratio). A size that is not a multiple of its alignment at
// every value, such as
// 8*seq*seq bytes at alignment 64, is reserved with a coefficient that
// grows like 32*seq*seq in the binomial basis; counted in steps of 4 (seq =
// 4*div + mod), the same size is 128*div*div + 64*div*mod + 8*mod*mod,
// reserved within a few hundred bytes. A step is kept only where it lowers
// that worst excess by more than 0.1 (0.2 % of the ratio at an end target
// of 1.02): reserves already close to the sizes keep steps of 1, and the
// bucket is planned once.
absl::StatusOr<DimValues> ChooseSteps(
    const SymbolicProblem& narrowed, const std::string& dim,
    const DimRanges& whole,
    const std::optional<SymbolicSearchOptions>& search) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(narrowed.dims));
  std::vector<DimValues> samples;
  std::vector<Bytes> bounds;
  std::vector<double> slack;  // target - 1 at each sample
  for (const std::vector<int64_t>& t : DenseSamples(box)) {
    samples.push_back(box.ValuesAt(t));
    MEMPLAN_ASSIGN_OR_RETURN(Problem at, narrowed.Rounded(samples.back()));
    bounds.push_back(std::max<Bytes>(1, LowerBound(at)));
    slack.push_back(search.has_value() ? Slack(samples.back(), whole, *search)
                                       : 1.0);
  }
  DimValues best;
  double best_excess = 0;
  for (int64_t step = 1; step <= 64; step *= 2) {
    const DimValues steps = {{dim, step}};
    MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem stepped,
                             narrowed.Stepped(steps));
    double excess = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
      MEMPLAN_ASSIGN_OR_RETURN(Problem at,
                               stepped.At(StepValues(samples[i], steps)));
      const double ratio =
          static_cast<double>(LowerBound(at)) / static_cast<double>(bounds[i]);
      excess = std::max(excess, (ratio - 1) / slack[i]);
    }
    if (step == 1) {
      best_excess = excess;
    } else if (excess < best_excess - 0.1) {
      best = steps;
      best_excess = excess;
    }
  }
  return best;
}

// A bucket's plan and its score (TargetExcess() with the search, the worst
// sampled ratio without), with the value where it is worst.
struct BucketPlan {
  DimValues steps;
  SymbolicPlan plan;
  double score = 0;
  DimValues worst_at;
};

// The bucket of `narrowed` planned in steps of 1 and, when ChooseSteps()
// picks other steps, in those too, the search with 1 / `divisor` of its
// budget: the better score is kept (steps of 1 on a tie). The choice of
// steps looks at the reserves alone; a plan may still do better without.
absl::StatusOr<BucketPlan> PlanBucket(const SymbolicProblem& narrowed,
                                      const std::string& dim,
                                      const DimRanges& whole,
                                      const SymbolicBucketOptions& options,
                                      int64_t divisor) {
  MEMPLAN_ASSIGN_OR_RETURN(const DimValues chosen,
                           ChooseSteps(narrowed, dim, whole, options.search));
  std::optional<BucketPlan> best;
  for (const DimValues& steps : {DimValues{}, chosen}) {
    if (best.has_value() && steps.empty()) break;
    MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem sub,
                             narrowed.Stepped(steps));
    BucketPlan p{.steps = steps};
    if (options.search.has_value()) {
      SymbolicSearchOptions search = *options.search;
      search.work_limit =
          std::max<int64_t>(1, SymbolicWorkLimit(search) / divisor);
      MEMPLAN_ASSIGN_OR_RETURN(p.plan, PlanSymbolicSearch(sub, search));
      MEMPLAN_ASSIGN_OR_RETURN(
          p.score, TargetExcess(narrowed, steps, p.plan, *options.search, whole,
                                &p.worst_at));
    } else {
      MEMPLAN_ASSIGN_OR_RETURN(p.plan, PlanSymbolicGreedy(sub, options.greedy));
      MEMPLAN_ASSIGN_OR_RETURN(p.score, WorstStepped(narrowed, steps, p.plan));
    }
    if (!best.has_value() || p.score < best->score) best = std::move(p);
  }
  return *std::move(best);
}

// The buckets (a, b), in order, of the cover of (ends[0], ends[m - 1]] by
// at most `max_buckets` planned ranges (ends[a], ends[b]] whose largest
// ratio is least, then whose sum of ratios is least (a bucket that cannot
// lower the worst, elsewhere, still lowers its own part); fewer buckets win
// ties.
std::vector<std::pair<int, int>> Cover(
    const std::vector<std::vector<double>>& ratio,
    const std::vector<std::vector<std::optional<SymbolicPlan>>>& plans,
    int max_buckets) {
  const int m = static_cast<int>(ratio.size());
  // cost[k][b]: the least (worst, sum) of ratios covering (ends[0],
  // ends[b]] with k buckets, the last starting after ends[from[k][b]].
  using Cost = std::pair<double, double>;
  const double kNone = std::numeric_limits<double>::infinity();
  std::vector<std::vector<Cost>> cost(max_buckets + 1,
                                      std::vector<Cost>(m, {kNone, kNone}));
  std::vector<std::vector<int>> from(max_buckets + 1, std::vector<int>(m, -1));
  for (int k = 1; k <= max_buckets; ++k) {
    for (int b = 1; b < m; ++b) {
      for (int a = 0; a < b; ++a) {
        const bool covered = k == 1 ? a == 0 : from[k - 1][a] >= 0;
        if (!plans[a][b].has_value() || !covered) continue;
        const Cost before = k == 1 ? Cost{0, 0} : cost[k - 1][a];
        const Cost c = {std::max(before.first, ratio[a][b]),
                        before.second + ratio[a][b]};
        // A cover whose ratio is unbounded still beats no cover at all.
        if (c < cost[k][b] || from[k][b] < 0) {
          cost[k][b] = c;
          from[k][b] = a;
        }
      }
    }
  }
  int k_best = 1;
  for (int k = 2; k <= max_buckets; ++k) {
    if (from[k][m - 1] >= 0 && cost[k][m - 1] < cost[k_best][m - 1]) {
      k_best = k;
    }
  }
  std::vector<std::pair<int, int>> cover;
  for (int k = k_best, b = m - 1; k > 0; --k) {
    cover.emplace_back(from[k][b], b);
    b = from[k][b];
  }
  std::reverse(cover.begin(), cover.end());
  return cover;
}

// DeadlineExceeded once `deadline` has passed (never when infinite).
absl::Status CheckDeadline(absl::Time deadline) {
  if (deadline != absl::InfiniteFuture() && absl::Now() >= deadline) {
    return absl::DeadlineExceededError("the symbolic plan's deadline passed");
  }
  return absl::OkStatus();
}

// The buckets the probes chose, each planned with the whole budget; then,
// while fewer than options.max_buckets, the worst is cut at the last of
// `ends` below its worst sample, when both parts, planned with the whole
// budget, score better. The probes (a small part of the budget) may miss
// what the whole budget finds in a bucket that starts elsewhere. Past the
// search's deadline, DeadlineExceeded with the buckets as planned so far.
absl::Status PlanAndCutBuckets(const SymbolicProblem& problem,
                               const std::string& dim,
                               const std::vector<int64_t>& ends,
                               const SymbolicBucketOptions& options,
                               std::vector<SymbolicBucket>& buckets) {
  // Each chosen bucket planned with the whole budget, scored, and the
  // value where it is worst.
  struct Scored {
    double excess = 0;
    DimValues worst_at;
  };
  auto full = [&](SymbolicBucket& b) -> absl::StatusOr<Scored> {
    MEMPLAN_RETURN_IF_ERROR(CheckDeadline(options.search->deadline));
    MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem narrowed,
                             problem.Narrowed(b.dims));
    MEMPLAN_ASSIGN_OR_RETURN(
        BucketPlan p, PlanBucket(narrowed, dim, problem.dims, options, 1));
    b.steps = std::move(p.steps);
    b.plan = std::move(p.plan);
    return Scored{.excess = p.score, .worst_at = std::move(p.worst_at)};
  };
  std::vector<Scored> scores;
  for (SymbolicBucket& b : buckets) {
    MEMPLAN_ASSIGN_OR_RETURN(Scored s, full(b));
    scores.push_back(std::move(s));
  }
  while (static_cast<int>(buckets.size()) < options.max_buckets) {
    const size_t w = std::max_element(scores.begin(), scores.end(),
                                      [](const Scored& a, const Scored& b) {
                                        return a.excess < b.excess;
                                      }) -
                     scores.begin();
    const DimRange r = buckets[w].dims.at(dim);
    const int64_t at = scores[w].worst_at.at(dim);
    int64_t cut = r.min - 1;  // the last value of the lower part
    for (int64_t e : ends) {
      if (e >= r.min && e < at && e < r.max) cut = std::max(cut, e);
    }
    if (cut < r.min || scores[w].excess <= 0) break;
    SymbolicBucket low = buckets[w], high = buckets[w];
    low.dims[dim] = {r.min, cut};
    high.dims[dim] = {cut + 1, r.max};
    MEMPLAN_ASSIGN_OR_RETURN(Scored low_score, full(low));
    MEMPLAN_ASSIGN_OR_RETURN(Scored high_score, full(high));
    if (std::max(low_score.excess, high_score.excess) >= scores[w].excess) {
      break;
    }
    buckets[w] = std::move(high);
    scores[w] = std::move(high_score);
    buckets.insert(buckets.begin() + w, std::move(low));
    scores.insert(scores.begin() + w, std::move(low_score));
  }
  return absl::OkStatus();
}

// The dim to cut: options.dim, or the one of largest (max + 1) / (min + 1).
absl::StatusOr<std::string> DimToCut(const SymbolicProblem& problem,
                                     const SymbolicBucketOptions& options) {
  std::string dim = options.dim;
  if (dim.empty()) {
    double widest = 0;
    for (const auto& [name, range] : problem.dims) {
      const double ratio = static_cast<double>(range.max + 1) /
                           static_cast<double>(range.min + 1);
      if (dim.empty() || ratio > widest) {
        dim = name;
        widest = ratio;
      }
    }
  }
  if (!problem.dims.contains(dim)) {
    return absl::InvalidArgumentError(
        absl::StrCat("dim \"", dim, "\" is not a dim of the problem"));
  }
  return dim;
}

// Bucket ends: the range's, and each power of two inside it (with the
// search, also each 3 * 2^k); a bucket spans [ends[a] + 1, ends[b]] (the
// first starts at range.min).
std::vector<int64_t> BucketEnds(const DimRange& range, bool search) {
  std::vector<int64_t> ends = {range.min - 1};
  for (int64_t p = 1; p > 0 && p < range.max; p *= 2) {
    if (p >= range.min) ends.push_back(p);
    const int64_t three = 3 * p / 2;
    if (search && p >= 2 && three >= range.min && three < range.max) {
      ends.push_back(three);
    }
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  ends.push_back(range.max);
  return ends;
}

// The options with the clock started (StartClock()).
SymbolicBucketOptions Started(const SymbolicBucketOptions& options) {
  SymbolicBucketOptions started = options;
  if (started.search.has_value()) {
    started.search = StartClock(*started.search);
  }
  return started;
}

// The candidate buckets: plans[a][b] of the range (ends[a], ends[b]], with
// its steps and score (all of them, or the whole range alone when
// max_buckets is 1).
struct Candidates {
  std::vector<std::vector<std::optional<SymbolicPlan>>> plans;
  std::vector<std::vector<DimValues>> steps;
  std::vector<std::vector<double>> ratio;
};

absl::StatusOr<Candidates> PlanCandidates(
    const SymbolicProblem& problem, const std::string& dim,
    const std::vector<int64_t>& ends, const SymbolicBucketOptions& options) {
  const int m = static_cast<int>(ends.size());
  Candidates c{
      .plans = std::vector<std::vector<std::optional<SymbolicPlan>>>(
          m, std::vector<std::optional<SymbolicPlan>>(m)),
      .steps =
          std::vector<std::vector<DimValues>>(m, std::vector<DimValues>(m)),
      .ratio = std::vector<std::vector<double>>(m, std::vector<double>(m, 0))};
  const absl::Time deadline = options.search.has_value()
                                  ? options.search->deadline
                                  : options.greedy.deadline;
  const bool one = options.max_buckets == 1;
  const int candidates = one ? 1 : m * (m - 1) / 2;
  int planned = 0;
  for (int a = 0; a < m; ++a) {
    for (int b = a + 1; b < m; ++b) {
      if (one && (a != 0 || b != m - 1)) continue;
      MEMPLAN_RETURN_IF_ERROR(CheckDeadline(deadline));
      DimRanges dims = problem.dims;
      dims[dim] = {ends[a] + 1, ends[b]};
      MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem narrowed,
                               problem.Narrowed(dims));
      MEMPLAN_ASSIGN_OR_RETURN(
          BucketPlan p, PlanBucket(narrowed, dim, problem.dims, options, 64));
      c.steps[a][b] = std::move(p.steps);
      c.ratio[a][b] = p.score;
      c.plans[a][b] = std::move(p.plan);
      if (options.progress) options.progress(++planned, candidates);
    }
  }
  return c;
}

}  // namespace

absl::StatusOr<std::vector<SymbolicBucket>> PlanSymbolicBuckets(
    const SymbolicProblem& problem, const SymbolicBucketOptions& given) {
  if (given.max_buckets < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_buckets is ", given.max_buckets, "; at least 1"));
  }
  MEMPLAN_RETURN_IF_ERROR(ValidateDimRanges(problem.dims));
  const SymbolicBucketOptions options = Started(given);
  MEMPLAN_ASSIGN_OR_RETURN(const std::string dim, DimToCut(problem, options));
  const std::vector<int64_t> ends =
      BucketEnds(problem.dims.at(dim), options.search.has_value());
  MEMPLAN_ASSIGN_OR_RETURN(Candidates c,
                           PlanCandidates(problem, dim, ends, options));
  std::vector<SymbolicBucket> buckets;
  for (const auto& [a, b] : Cover(c.ratio, c.plans, options.max_buckets)) {
    DimRanges dims = problem.dims;
    dims[dim] = {ends[a] + 1, ends[b]};
    buckets.push_back({.dims = std::move(dims),
                       .steps = c.steps[a][b],
                       .plan = *std::move(c.plans[a][b])});
  }
  if (!options.search.has_value()) return buckets;
  const absl::Status cut =
      PlanAndCutBuckets(problem, dim, ends, options, buckets);
  if (!cut.ok() && !absl::IsDeadlineExceeded(cut)) return cut;
  return buckets;
}

}  // namespace memplan

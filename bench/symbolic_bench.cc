// symbolic_bench: symbolic plans on a transformer-like graph with a symbolic
// sequence length, and the symbolic verifier's speed.
//
//   symbolic_bench [layers] [verify_buffers]
//
// Prints, for the greedy symbolic plan and the upper-bound baseline, the
// peak over the lower bound of the graph bound to each sequence length
// (peak: the plan's peak expression at s, the arena the plan asks for), and
// the time to plan and to verify over the whole range.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "workloads/symbolic_transformer.h"

namespace memplan {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

template <typename T>
T Check(absl::StatusOr<T> value) {
  if (!value.ok()) {
    std::fprintf(stderr, "%s\n", std::string(value.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(value);
}

void Table(int layers) {
  const Graph g = internal::SymbolicTransformer({.layers = layers});
  BuildOptions build;
  build.alignment = 64;
  const SymbolicProblem p = Check(BuildSymbolicProblem(g, build));
  auto start = std::chrono::steady_clock::now();
  const SymbolicPlan greedy = Check(PlanSymbolicGreedy(p));
  const double plan_seconds = Seconds(start);
  start = std::chrono::steady_clock::now();
  if (absl::Status s = VerifySymbolicPlan(p, greedy); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    std::exit(1);
  }
  const double verify_seconds = Seconds(start);
  const SymbolicPlan baseline = Check(PlanSymbolicUpperBound(p));
  std::printf("graph %s: %zu buffers, seq in [1, 2048], alignment 64\n",
              g.name.c_str(), p.buffers.size());
  std::printf("greedy peak(seq) = %s\n", greedy.peak.ToString().c_str());
  std::printf("greedy: planned in %.3f s, verified in %.3f s\n\n",
              plan_seconds, verify_seconds);
  std::printf("| seq | LB(s) | greedy peak(s) | /LB | greedy used(s) | /LB "
              "| upper-bound peak | /LB |\n|---|---|---|---|---|---|---|---|\n");
  for (int64_t s : {1, 2, 3, 7, 64, 500, 1024, 2048}) {
    const DimValues at = {{"seq", s}};
    const Problem concrete =
        Check(BuildProblem(Check(BindDims(g, at)), build));
    const double lb = static_cast<double>(LowerBound(concrete));
    const int64_t peak = Check(greedy.peak.Evaluate(at));
    const int64_t used = Check(greedy.At(p, at)).peak;
    const int64_t upper = Check(baseline.peak.Evaluate(at));
    std::printf("| %lld | %.0f | %lld | %.3f | %lld | %.3f | %lld | %.3f |\n",
                static_cast<long long>(s), lb, static_cast<long long>(peak),
                peak / lb, static_cast<long long>(used), used / lb,
                static_cast<long long>(upper), upper / lb);
  }

  start = std::chrono::steady_clock::now();
  SymbolicBucketOptions four;
  four.max_buckets = 4;
  const std::vector<SymbolicBucket> buckets =
      Check(PlanSymbolicBuckets(p, four));
  std::printf("\n%zu buckets, planned in %.3f s:\n", buckets.size(),
              Seconds(start));
  for (const SymbolicBucket& b : buckets) {
    std::printf("  seq in [%lld, %lld]: peak %s\n",
                static_cast<long long>(b.dims.at("seq").min),
                static_cast<long long>(b.dims.at("seq").max),
                b.plan.peak.ToString().c_str());
  }
  std::printf("\n| seq | LB(s) | bucketed peak(s) | /LB |\n|---|---|---|---|\n");
  for (int64_t s : {1, 2, 3, 7, 64, 500, 1024, 2048}) {
    const DimValues at = {{"seq", s}};
    const Problem concrete =
        Check(BuildProblem(Check(BindDims(g, at)), build));
    const double lb = static_cast<double>(LowerBound(concrete));
    for (const SymbolicBucket& b : buckets) {
      const DimRange r = b.dims.at("seq");
      if (s < r.min || s > r.max) continue;
      const int64_t peak = Check(b.plan.peak.Evaluate(at));
      std::printf("| %lld | %.0f | %lld | %.3f |\n", static_cast<long long>(s),
                  lb, static_cast<long long>(peak), peak / lb);
    }
  }
}

void VerifySpeed(int buffers) {
  // No KV cache: 14 short-lived buffers a layer.
  const int layers = (buffers + 13) / 14;
  const Graph g = internal::SymbolicTransformer(
      {.layers = layers, .kv_cache = false});
  BuildOptions build;
  build.alignment = 64;
  const SymbolicProblem p = Check(BuildSymbolicProblem(g, build));
  auto start = std::chrono::steady_clock::now();
  const SymbolicPlan greedy = Check(PlanSymbolicGreedy(p));
  const double plan_seconds = Seconds(start);
  start = std::chrono::steady_clock::now();
  const absl::Status ok = VerifySymbolicPlan(p, greedy);
  const double proven = Seconds(start);
  // A refuted plan: the last buffer moved onto the bytes of a buffer alive
  // with it.
  SymbolicPlan wrong = greedy;
  const SymbolicBuffer& last = p.buffers.back();
  for (size_t j = p.buffers.size() - 1; j-- > 0;) {
    const Lifetime& l = p.buffers[j].lifetime;
    if (l.start < last.lifetime.end && last.lifetime.start < l.end) {
      wrong.offsets.back() = wrong.offsets[j];
      break;
    }
  }
  start = std::chrono::steady_clock::now();
  const absl::Status refuted = VerifySymbolicPlan(p, wrong);
  const double refuted_seconds = Seconds(start);
  std::printf(
      "\n%zu buffers: greedy %.3f s; verifier: %s in %.3f s, mutated plan "
      "%s in %.3f s\n",
      p.buffers.size(), plan_seconds, ok.ok() ? "proven" : "REFUSED", proven,
      refuted.ok() ? "ACCEPTED" : "refuted", refuted_seconds);
  if (!refuted.ok()) {
    std::printf("  (%s)\n", std::string(refuted.message()).c_str());
  }
}

}  // namespace
}  // namespace memplan

int main(int argc, char** argv) {
  const int layers = argc > 1 ? std::atoi(argv[1]) : 8;
  const int buffers = argc > 2 ? std::atoi(argv[2]) : 10000;
  memplan::Table(layers);
  memplan::VerifySpeed(buffers);
  return 0;
}

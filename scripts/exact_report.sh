#!/usr/bin/env bash
# The exact planner's targets, as benchmarks (memplan_bench
# --memplan_exact_targets): MiniMalloc's challenging instances under their
# capacity 1048576 (each, and all 11 in a row), the same with one inference
# off at a time, the least peak of every MiniMalloc instance, trace and model
# (time limit per plan: the first argument, default 60 s), and S_1 under
# exact and best with 10 s each. Every case runs 3 times; the medians are
# written to bench/exact_results.md. Usage:
#   bash scripts/exact_report.sh [TIME_LIMIT_SECONDS]
# About 12 minutes with the default limit (D and J use all of it).
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${1:-60}"
out=bench/exact_results.md
bash scripts/release_build.sh memplan_bench
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
build-release/bench/memplan_bench --memplan_exact_targets \
  --memplan_exact_time_limit="$limit" \
  --benchmark_filter='^BM_(exact_(capacity|ablation|minimise)|(exact|best)_trace_S_1_10s)' \
  --benchmark_counters_tabular=true >"$raw"
{
  echo "# The exact planner's targets"
  echo
  echo "Medians of 3 runs (one plan per run), wall time, from"
  echo "\`bash scripts/exact_report.sh $limit\`."
  echo
  echo "- Machine: $(nproc) CPUs, ${cpu}"
  echo "- Date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- Commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  echo "Counters: \`solved\` plans returned (under the capacity, where one is"
  echo "set), \`optimal\` of them proven optimal, \`nodes\` searched,"
  echo "\`peak\` bytes and \`lb_ratio\` (peak / max-live) of a single input."
  echo "\`ablation_<switch>\`: that inference off, 10^8 work units (about"
  echo "10^6 nodes) per instance"
  echo "and no heuristic to fall back on (\`ablation_none\`: all on, the same"
  echo "limits)."
  echo
  echo '```'
  grep -E '^(Benchmark|-+$)|_median' "$raw" |
    sed -E 's|/iterations:1/repeats:3/real_time_median||'
  echo '```'
} >"$out"
echo "wrote $out" >&2

#!/usr/bin/env bash
# The quality report: every registered planner on every bundled input, with a
# time limit per plan, written as markdown to bench/results.md (the README's
# Results section shows its summary). Usage:
#   bash scripts/quality_report.sh [TIME_LIMIT_SECONDS]   (default 2)
# It builds the tool in build-release/ (as scripts/quickstart.sh does) and
# takes about (inputs x search planners x time limit) at most; a few minutes
# on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${1:-2}"
out=bench/results.md
bash scripts/release_build.sh memplan_tool
memplan=build-release/memplan

d=bench/data
main_inputs=($d/models/*.json $d/training/*.json $d/traces/G_1.csv $d/traces/somas_resnet50.csv
             $d/minimalloc/[A-K].1048576.csv)
minimalloc=($d/minimalloc/[A-K].1048576.csv)
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
start=$(date +%s)

section() {  # title, description, compare arguments...
  local title="$1" text="$2"
  shift 2
  echo "running: memplan compare $* --time-limit=$limit" >&2
  {
    echo "## $title"
    echo
    echo "$text"
    echo
    echo '```'
    echo "memplan compare $* --time-limit=$limit --format=summary,markdown"
    echo '```'
    echo
    "$memplan" compare "$@" --time-limit="$limit" --format=summary,markdown ||
      echo "**memplan compare exited with status $? (a plan failed verification?)**"
    echo
  } >>"$out.tmp"
}

cat >"$out.tmp" <<HEADER
# memplan quality report

Every registered planner ($("$memplan" planners | awk '{print $1}' | paste -sd, | sed 's/,/, /g'))
on every bundled input. Each plan is checked by the verifier; *x lower
bound* is peak / (most bytes alive at one step), 1.0000 is optimal. A planner
that fails on an input (out of capacity, out of time, unsupported) is counted
under *failed* with its reason in the table. Time limit per plan: ${limit} s.
Wall times are of one run on a shared machine: compare them within a table.

- Machine: $(nproc) CPUs, ${cpu}
- Date: $(date -u +%Y-%m-%dT%H:%MZ)
- Commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)
- Regenerate: \`bash scripts/quality_report.sh ${limit}\`

HEADER

section "All bundled inputs" \
  "Inference graphs (models/), training steps (training/), compiler traces (traces/G_1, somas_resnet50) and the MiniMalloc challenging set in one unbounded pool; default build options (inputs and outputs planned, constants not, alignment 1)." \
  "${main_inputs[@]}"
section "The large trace S_1 (28526 buffers)" \
  "Every planner. cp builds no model here (43 million conflicting pairs, above its bound) and returns its warm start plan." \
  $d/traces/S_1.csv
section "MiniMalloc at its capacity" \
  "The MiniMalloc challenging set with its benchmark capacity of 1048576 bytes: a planner either fits or fails with RESOURCE_EXHAUSTED." \
  "${minimalloc[@]}" --capacity=1048576
section "Two pools: 256 KiB fast + DRAM" \
  "The inference graphs and training steps with a 256 KiB fast pool before an unbounded DRAM pool (alignment 64 in both). The note lists each pool's top, then the bytes it holds: exact and cpsat minimise the bytes spilled to DRAM (then the sum of the tops), best keeps the smallest sum of the tops; *proven optimal* is about what each minimises. cp plans one pool only. \`python3 scripts/pools_report.py\` prints the fast-pool bytes side by side." \
  $d/models/*.json $d/training/*.json --pool=fast:256KiB:64 --pool=dram:0:64
section "The seed notebook's model, constants planned" \
  "The notebook plans every tensor, weights included (optimum 697888 bytes = the lower bound)." \
  $d/seed/seed000_model.json --plan-constants
section "ExecuTorch's TensorSpecs" \
  "The tensors ExecuTorch 1.5.1 hands its memory planner for twelve programs (executorch/: one op per graph node, ExecuTorch's lifetimes and 16-byte sizes, one pool per mem_id arena). ExecuTorch's own algorithms on the same specs follow." \
  $d/executorch/*.json
{
  echo "ExecuTorch's algorithms on the same specs, bytes per arena (\`bench/data/executorch/summary.csv\`, written by \`scripts/executorch_table.py\`; memplan best is memplan's \`best\` inside ExecuTorch, without a time limit):"
  echo
  echo "| model | arena | specs | memplan best | ExecuTorch greedy | ExecuTorch naive | lower bound |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  tail -n +2 $d/executorch/summary.csv |
    awk -F, '{printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7}'
  echo
} >>"$out.tmp"

echo "Total run time: $(( $(date +%s) - start )) s." >>"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out" >&2

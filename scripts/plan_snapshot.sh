#!/usr/bin/env bash
# Writes the plans a refactor must not change: every bundled model, training
# graph, MiniMalloc instance and the trace S_1, planned by greedy_by_size,
# first_fit, caffe2_dp, best and exact (and exact under MiniMalloc's capacity
# of 1048576), as buffer CSVs with offsets. No time limit: the counted work
# alone bounds each run, so the files are the same on any machine.
# Compare two snapshots with `diff -r OLD NEW`.
# Usage: bash scripts/plan_snapshot.sh TOOL OUT_DIR [JOBS]
#   TOOL: a built memplan binary; JOBS: runs at once (default 2).
set -euo pipefail
tool=$(realpath "$1")
out=$2
jobs=${3:-2}
cd "$(dirname "$0")/.."
mkdir -p "$out"
inputs=(bench/data/models/*.json bench/data/training/*.json
        bench/data/minimalloc/[A-K].1048576.csv bench/data/traces/S_1.csv)
{
  for input in "${inputs[@]}"; do
    for planner in greedy_by_size first_fit caffe2_dp best exact; do
      echo "$input $planner"
    done
  done
  for input in bench/data/minimalloc/[A-K].1048576.csv; do
    echo "$input exact --capacity=1048576"
  done
} | xargs -P "$jobs" -L 1 bash -c '
  input=$0 planner=$1; shift 1; shift 0
  extra=("${@:1}")
  base=$(basename "${input%.*}")
  tag=$planner$(printf "%s" "${extra[*]:-}" | tr -c "a-zA-Z0-9" _)
  file='"$out"'/$base.$tag.csv
  if ! '"$tool"' plan "$input" --planner="$planner" "${extra[@]}" \
       --out="$file" 2>"$file.log"; then
    echo "failed: $input $planner ${extra[*]:-}" >&2
  fi
  echo "$file"
' | while read -r f; do printf "."; done
echo " $(ls "$out"/*.csv | wc -l) plans in $out"

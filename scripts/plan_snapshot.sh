#!/usr/bin/env bash
# Writes the plans a refactor must not change: every bundled model, training
# graph, MiniMalloc instance and the trace S_1, planned by greedy_by_size,
# first_fit, caffe2_dp, best and exact (and exact under MiniMalloc's capacity
# of 1048576); the op orders of the order graphs (memory, window, optimal),
# with their graphs in the new order; and the symbolic plans of the symbolic
# graphs (the default and symbolic_greedy). Buffer CSVs with offsets, plan
# JSON for symbolic plans, graph JSON for orders. No time limit: the counted
# work alone bounds each run, so the files are the same on any machine.
# Compare two snapshots with `diff -r OLD NEW`.
# Usage: bash scripts/plan_snapshot.sh TOOL OUT_DIR [JOBS]
#   TOOL: a built memplan binary; JOBS: runs at once (default 2).
set -euo pipefail
tool=$(realpath "$1")
out=$(mkdir -p "$2" && realpath "$2")
jobs=${3:-2}
cd "$(dirname "$0")/.."
# One run a line: INPUT EXTENSION FLAGS...
{
  for input in bench/data/models/*.json bench/data/training/*.json \
               bench/data/minimalloc/[A-K].1048576.csv \
               bench/data/traces/S_1.csv; do
    for planner in greedy_by_size first_fit caffe2_dp best exact; do
      echo "$input csv --planner=$planner"
    done
  done
  for input in bench/data/minimalloc/[A-K].1048576.csv; do
    echo "$input csv --planner=exact --capacity=1048576"
  done
  for input in bench/data/order/*.json; do
    for order in memory window optimal; do
      echo "$input csv --planner=greedy_by_size --reorder=$order --graph-out"
    done
  done
  for input in bench/data/symbolic/*.json bench/data/symbolic_bundled/*.json; do
    echo "$input json"
    echo "$input json --planner=symbolic_greedy"
  done
} | xargs -P "$jobs" -L 1 bash -c '
  input=$0 ext=$1; shift 1
  flags=("$@")
  tag=$(printf "%s" "${flags[*]}" | tr -c "a-zA-Z0-9" _)
  file='"$out"'/$(basename "${input%.*}").$tag.$ext
  if ((${#flags[@]})) && [ "${flags[-1]}" = --graph-out ]; then
    flags[-1]=--graph-out=${file%.*}.graph.json
  fi
  if ! '"$tool"' plan "$input" "${flags[@]}" --quiet \
       --out="$file" 2>"$file.log"; then
    echo "failed: $input ${flags[*]}" >&2
  fi
  echo "$file"
' | while read -r f; do printf "."; done
echo " $(ls "$out" | grep -vc "\.log$") files in $out"

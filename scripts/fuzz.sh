#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ (clang, AddressSanitizer and
# UndefinedBehaviorSanitizer) and runs each for SECONDS (default 60), two at a
# time. Fails when a harness finds a crash, a leak, a timeout or a broken
# promise; the input is then in build-fuzz/artifacts/<harness>/.
# Usage: bash scripts/fuzz.sh [SECONDS]     e.g. a long run: bash scripts/fuzz.sh 3600
# SECONDS is per harness as it was with the first four harnesses: the run
# takes as long as ever (two rounds of SECONDS, two harnesses at a time),
# shared among all of them.
# The corpora grow in build-fuzz/corpus/<harness>/ from run to run.
# The build hides Gecode from CMake, as on a machine without libgecode-dev:
# the core must build without it (the cp planner is skipped). The ONNX
# importer is built when its packages are installed, and with it its harness.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh fuzz
fuzzers=(graph_json buffer_csv plan_json plan_greedy report)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMPLAN_FUZZ=ON -DMEMPLAN_WITH_CP=AUTO \
  -DCMAKE_DISABLE_FIND_PACKAGE_Gecode=TRUE -DMEMPLAN_WITH_ONNX=ON \
  -DMEMPLAN_BUILD_TESTS=OFF -DMEMPLAN_BUILD_BENCH=OFF "${launcher[@]}"
if cmake --build build-fuzz --target help | grep -q '^onnx_fuzzer:'; then
  fuzzers+=(onnx)
fi
if cmake --build build-fuzz --target help | grep -q '^tflite_fuzzer:'; then
  fuzzers+=(tflite)
fi
cmake --build build-fuzz --target "${fuzzers[@]/%/_fuzzer}"
# Two at a time: as many rounds as pairs, sharing the two rounds of old.
seconds=$(( ${1:-60} * 2 / ((${#fuzzers[@]} + 1) / 2) ))
# libFuzzer reads 0 as no limit: every harness runs at least a second.
((seconds >= 1)) || seconds=1

# Seeds: the hand-made ones in fuzz/seeds/<harness>/ and small bench inputs.
graphs=(bench/data/seed/seed000_model.json bench/data/models/alexnet.json)
csvs=(bench/data/minimalloc/input.12.csv bench/data/models/alexnet.csv
      bench/data/models/resnet18.csv bench/data/training/mlp_train.csv
      bench/data/minimalloc/A.1048576.csv)
declare -A seeds=(
  [graph_json]="${graphs[*]}"
  [buffer_csv]="${csvs[*]}"
  [plan_json]="bench/data/seed/seed000_notebook_plan.json"
  [plan_greedy]="${graphs[*]} ${csvs[*]}"
  [report]="${graphs[*]} bench/data/minimalloc/input.12.csv"
  [onnx]="bench/data/onnx/resnet18_opset17.onnx"
  [tflite]="fuzz/seeds/tflite/mean_reshape.tflite"
)
declare -A dicts=([graph_json]=json [buffer_csv]=csv [plan_json]=json
                  [plan_greedy]=json [report]=json [onnx]=onnx
                  [tflite]=tflite)

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run() {
  local name="$1" corpus="build-fuzz/corpus/$1" artifacts="build-fuzz/artifacts/$1/"
  mkdir -p "$corpus" "$artifacts"
  cp ${seeds[$name]} "$corpus"/
  [ -d "fuzz/seeds/$name" ] && cp fuzz/seeds/"$name"/* "$corpus"/
  [ -d "fuzz/regressions/$name" ] && cp fuzz/regressions/"$name"/* "$corpus"/
  "build-fuzz/fuzz/${name}_fuzzer" "$corpus" -dict="fuzz/${dicts[$name]}.dict" \
    -max_total_time="$seconds" -max_len=16384 -timeout=20 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts" -print_final_stats=1 \
    >"build-fuzz/$name.log" 2>&1
}

failed=()
for ((i = 0; i < ${#fuzzers[@]}; i += 2)); do
  pids=()
  for name in "${fuzzers[@]:i:2}"; do
    run "$name" &
    pids+=("$!:$name")
  done
  for entry in "${pids[@]}"; do
    wait "${entry%%:*}" || failed+=("${entry#*:}")
  done
done
for name in "${fuzzers[@]}"; do
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "build-fuzz/$name.log" | grep -o '[0-9]*$' || true)
  echo "$name: ${runs:-?} executions in ${seconds} s"
done
if ((${#failed[@]})); then
  for name in "${failed[@]}"; do
    echo "== $name failed (build-fuzz/$name.log, inputs in build-fuzz/artifacts/$name/):"
    grep -E 'ERROR|INTERNAL|Status|SUMMARY|Test unit written' "build-fuzz/$name.log" | head -20
  done
  exit 1
fi

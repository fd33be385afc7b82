#!/usr/bin/env bash
# Builds memplan with AddressSanitizer and UndefinedBehaviorSanitizer, with
# the Python package (against Debian's /usr/bin/python3, whose PyTorch the
# Python tests use), and runs the whole test suite.
# Usage: bash scripts/test.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh python
# -O1 -g1: on two cores the sanitizer build compiles in about 60 % of the
# time of RelWithDebInfo's -O2 -g, and reports keep their file:line.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DMEMPLAN_SANITIZE=ON -DMEMPLAN_BUILD_BENCH=OFF \
  -DMEMPLAN_BUILD_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3
cmake --build build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure -j2 "$@"

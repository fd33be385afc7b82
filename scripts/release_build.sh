#!/usr/bin/env bash
# Installs the Debian 12 packages when missing and builds the given targets
# of memplan in Release mode in build-release/ (no tests; the benchmark
# target is configured, built only when asked for).
# Usage: bash scripts/release_build.sh TARGET...
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMEMPLAN_BUILD_TESTS=OFF -DMEMPLAN_BUILD_BENCH=ON >/dev/null
cmake --build build-release --target "$@" -j "$(nproc)"

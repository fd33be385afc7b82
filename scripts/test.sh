#!/usr/bin/env bash
# The whole test suite: builds memplan with AddressSanitizer and
# UndefinedBehaviorSanitizer, with the Python module for the project's
# virtual environment (.venv, made or brought up to date first by
# scripts/install_deps.sh python, with memplan installed into it), and runs
# ctest: the C++ tests, test_memplan.py with the sanitized module, and every
# other python/tests file (PyTorch 2, ExecuTorch, the pip package) in .venv
# against the memplan installed there.
# Usage: bash scripts/test.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh python
# The pybind11 that .venv builds memplan with (requirements.txt).
pybind11_dir=$(.venv/bin/python -m pybind11 --cmakedir)
# -O1 -g1: on two cores the sanitizer build compiles in about 60 % of the
# time of RelWithDebInfo's -O2 -g, and reports keep their file:line. No
# NDEBUG: the code base's asserts run in the test suite.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DMEMPLAN_SANITIZE=ON -DMEMPLAN_BUILD_BENCH=OFF \
  -DMEMPLAN_BUILD_PYTHON=ON "-DPython3_EXECUTABLE=$PWD/.venv/bin/python" \
  "-Dpybind11_DIR=$pybind11_dir" "-DMEMPLAN_VENV=$PWD/.venv"
cmake --build build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-asan --output-on-failure -j2 "$@"

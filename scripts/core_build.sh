#!/usr/bin/env bash
# Builds memplan without the cp planner, with Gecode hidden from CMake as on a
# machine without libgecode-dev, and checks the core: the tool plans and
# verifies without "cp" registered, and the tests of the registry and the
# formats pass. Usage: bash scripts/core_build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-core -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMEMPLAN_WITH_CP=AUTO -DCMAKE_DISABLE_FIND_PACKAGE_Gecode=TRUE \
  -DMEMPLAN_BUILD_BENCH=OFF "${launcher[@]}"
cmake --build build-core --target memplan_tool registration_test io_test
if build-core/memplan planners | grep -q '^cp '; then
  echo "core-only build: cp is registered" >&2
  exit 1
fi
out=build-core/core_plan.json
build-core/memplan plan bench/data/models/resnet50.json --planner=exact --out="$out"
build-core/memplan verify bench/data/models/resnet50.json "$out"
build-core/tests/registration_test
build-core/tests/io_test

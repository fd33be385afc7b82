#!/usr/bin/env bash
# Quick start: installs the Debian 12 packages when missing, builds memplan
# (Release, in build-release/, without tests) and compares every registered
# planner on ResNet-50: peak against the naive total and the lower bound,
# time, and whether the verifier accepted the plan.
# Usage: bash scripts/quickstart.sh [INPUT...] [memplan compare flags]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/release_build.sh memplan_tool
args=("$@")
have_input=0
for a in "${args[@]}"; do [[ "$a" == --* ]] || have_input=1; done
((have_input)) || args=(bench/data/models/resnet50.json "${args[@]}")
echo
echo "memplan compare ${args[*]}"
build-release/memplan compare "${args[@]}" --time-limit=5

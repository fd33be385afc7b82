#!/usr/bin/env bash
# Writes requirements-lock.txt: every package (with its version) that a fresh
# virtual environment resolves requirements.txt to. Run it after changing
# requirements.txt; scripts/install_deps.sh python then makes .venv afresh.
# MEMPLAN_PYTHON names the interpreter, as for install_deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${MEMPLAN_PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "lock_requirements.sh: resolving requirements.txt in a fresh venv ($("$python" -V))"
"$python" -m venv "$work/venv"
# Resolved from scratch: without the old lock's constraints.
grep -v '^-c ' requirements.txt > "$work/requirements.txt"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check -r "$work/requirements.txt"
{
  echo "# Every Python package of the project's .venv, pinned: what requirements.txt"
  echo "# resolves to (pip constraints, named by requirements.txt). Written by"
  echo "# scripts/lock_requirements.sh; do not edit."
  "$work/venv/bin/python" -m pip freeze --all --exclude pip
} > requirements-lock.txt
echo "lock_requirements.sh: wrote requirements-lock.txt ($(grep -vc '^#' requirements-lock.txt) packages)"

#!/usr/bin/env bash
# Installs the Debian 12 packages memplan builds with, when they are missing.
# Usage: bash scripts/install_deps.sh [python] [fuzz]
#
# `python` adds what the Python package builds with (python3-dev,
# python3-venv, pybind11-dev) and makes the project's virtual environment,
# .venv/ at the repository root: the Python packages pinned by
# requirements.txt and requirements-lock.txt (PyTorch 2, ExecuTorch, pytest,
# the build backend) from PyPI, then memplan itself, built from this checkout
# (pip install --no-build-isolation; build-pip/ keeps the build, so that a
# second run rebuilds only what changed). The pinned packages are installed
# again only when those two files change: .venv is then made afresh.
# MEMPLAN_PYTHON names the interpreter the venv is made with (default
# /usr/bin/python3, Debian's, whose headers python3-dev installs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packages=(cmake ninja-build g++ libabsl-dev libgtest-dev libgmock-dev
          libbenchmark-dev nlohmann-json3-dev zlib1g-dev libgecode-dev
          libprotobuf-dev
          libonnx-dev
          libflatbuffers-dev
          flatbuffers-compiler
          chromium
          chromium-driver
          clang-format-14
          black
)
# Optional parts, installed when named: install_deps.sh python fuzz
venv=0
for part in "$@"; do
  case "$part" in
    python) packages+=(python3-dev
                       python3-venv
                       pybind11-dev)
            venv=1 ;;
    fuzz) packages+=(clang-14
                     libclang-rt-14-dev) ;;
    *) echo "install_deps.sh: unknown part \"$part\" (valid: python, fuzz)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
((venv)) || exit 0

# The project's virtual environment.
cd "$root"
python=${MEMPLAN_PYTHON:-/usr/bin/python3}
if ! "$python" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null; then
  echo "install_deps.sh: $python is not a Python 3.9 or later; set MEMPLAN_PYTHON" >&2
  exit 1
fi
pip=(.venv/bin/python -m pip --disable-pip-version-check)
# What the installed packages were made from: the pinned files and the
# interpreter. .venv keeps it in .venv/memplan-requirements.sha256.
wanted=$( { cat requirements.txt requirements-lock.txt; "$python" -VV; } | sha256sum | cut -d' ' -f1)
stamp=.venv/memplan-requirements.sha256
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && [ -x .venv/bin/python ]; then
  echo "install_deps.sh: .venv has the pinned Python packages (requirements.txt unchanged)"
else
  start=$SECONDS
  if [ -e .venv ]; then
    echo "install_deps.sh: requirements.txt, requirements-lock.txt or the interpreter changed: making .venv afresh"
    rm -rf .venv
  fi
  echo "install_deps.sh: making .venv with $("$python" -V) ($python -m venv)"
  if ! "$python" -m venv .venv; then
    echo "install_deps.sh: $python -m venv failed: Debian's python3 needs python3-venv" >&2
    exit 1
  fi
  echo "install_deps.sh: installing the pinned Python packages into .venv" \
       "(PyPI; the first time downloads about 4 GB: PyTorch and its CUDA libraries)"
  # pip unpacks the downloads in TMPDIR and installs about 6 GB into .venv.
  tmp=${TMPDIR:-/tmp}
  for dir in . "$tmp"; do
    free_gb=$(( $(df -Pk "$dir" | awk 'NR==2 {print $4}') / 1048576 ))
    if (( free_gb < 12 )); then
      echo "install_deps.sh: warning: $free_gb GB free on the disk of $(cd "$dir" && pwd);" \
           "installing the packages needs about 12 GB (free space, or set TMPDIR to a larger disk)" >&2
    fi
  done
  if ! "${pip[@]}" install --progress-bar off -r requirements.txt; then
    echo "install_deps.sh: installing requirements.txt into .venv failed (see pip's message" \
         "above; is https://pypi.org reachable? \"No space left on device\": free about 12 GB" \
         "on the disks of .venv and $tmp). Run this script again to retry." >&2
    exit 1
  fi
  echo "$wanted" > "$stamp"
  echo "install_deps.sh: pinned Python packages installed in $((SECONDS - start)) s"
fi
start=$SECONDS
echo "install_deps.sh: building memplan into .venv (Release, build-pip/; the first build takes minutes)"
if ! "${pip[@]}" install --no-deps --no-build-isolation --no-index . ; then
  echo "install_deps.sh: building memplan failed (the compiler's message is above; pip -v shows" \
       "the whole build: .venv/bin/python -m pip install -v --no-deps --no-build-isolation .)" >&2
  exit 1
fi
echo "install_deps.sh: memplan $(.venv/bin/memplan --version | cut -d' ' -f2) installed in .venv in $((SECONDS - start)) s"

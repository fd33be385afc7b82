#!/usr/bin/env bash
# Installs the Debian 12 packages memplan builds with, when they are missing.
# Usage: bash scripts/install_deps.sh [python] [fuzz]
set -euo pipefail
packages=(cmake ninja-build g++ libabsl-dev libgtest-dev libgmock-dev
          libbenchmark-dev nlohmann-json3-dev zlib1g-dev libgecode-dev
          libprotobuf-dev
          libonnx-dev
          chromium
          chromium-driver
)
# Optional parts, installed when named: install_deps.sh python fuzz
for part in "$@"; do
  case "$part" in
    python) packages+=(python3-dev
                       pybind11-dev
                       python3-pytest
                       python3-torch
                       python3-torchvision) ;;
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

#!/usr/bin/env bash
# Installs the Debian 12 packages memplan builds with, when they are missing.
set -euo pipefail
packages=(cmake ninja-build g++ libabsl-dev libgtest-dev libgmock-dev
          libbenchmark-dev nlohmann-json3-dev zlib1g-dev libgecode-dev
          libprotobuf-dev
          libonnx-dev
)
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

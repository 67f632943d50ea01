#!/usr/bin/env bash
# Installs, from Debian's packages, what building and testing Kiln needs; installs nothing
# when everything is already there, so it is safe to run any number of times.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  libhalide14-0-dev libmlir-14-dev mlir-14-tools llvm-14-dev llvm-14-tools
  libgtest-dev libcli11-dev pkg-config graphviz
  python3-dev python3-numpy python3-pybind11
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "kiln: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "kiln: installing packages needs root (apt-get); run as root or with sudo" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

#!/usr/bin/env bash
# Installs the Debian packages autograph-cpp builds with, when any is missing.
# Does nothing when everything is present; uses sudo when not root.
set -euo pipefail

packages=(
  clang-19 llvm-19-dev libclang-19-dev libclang-cpp19-dev libclang-common-19-dev clang-format-19
  libopenblas-dev libeigen3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  cmake ninja-build pkg-config g++ ccache
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
  python3 python3-jsonschema
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "bootstrap: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "bootstrap: error: these packages are missing and I am not root and there is no sudo:" >&2
  echo "  ${missing[*]}" >&2
  echo "  install them with: apt-get install ${missing[*]}" >&2
  exit 1
fi
if ! "${sudo[@]}" apt-get update -qq ||
   ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
  echo "bootstrap: error: apt-get could not install: ${missing[*]}" >&2
  echo "  this project needs Debian 12 (bookworm) package names; see README.md" >&2
  exit 1
fi

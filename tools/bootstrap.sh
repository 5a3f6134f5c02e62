#!/usr/bin/env bash
# Installs the Debian packages autograph-cpp builds with, when any is missing.
# Prints one line per step; apt-get's own output goes to a log file, shown
# only when a step fails. Uses sudo when not root.
set -euo pipefail

packages=(
  clang-19 llvm-19-dev libclang-19-dev libclang-cpp19-dev libclang-common-19-dev clang-format-19
  clang-tidy-19
  libopenblas-dev libdnnl-dev libeigen3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  cmake ninja-build pkg-config g++ ccache
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
  python3 python3-jsonschema zlib1g-dev
  doxygen
  nlohmann-json3-dev libfmt-dev libspdlog-dev
  libopenmpi-dev openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#packages[@]} packages present"
  exit 0
fi

echo "bootstrap: ${#missing[@]} of ${#packages[@]} packages missing: ${missing[*]}"
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

log=$(mktemp "${TMPDIR:-/tmp}/ag-bootstrap.XXXXXX.log")
# Runs one step with its output in the log; on failure prints the log's end.
step() {
  local what=$1
  shift
  echo "bootstrap: $what"
  if ! "$@" >>"$log" 2>&1; then
    echo "bootstrap: error: $what failed; the last lines of $log:" >&2
    tail -n 40 "$log" | sed 's/^/  /' >&2
    echo "  this project needs Debian 12 (bookworm) package names; see docs/getting-started.md" >&2
    exit 1
  fi
}

apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y)
step "apt-get update" "${apt[@]}" update
step "apt-get install: ${missing[*]}" \
  "${apt[@]}" install --no-install-recommends "${missing[@]}"
rm -f "$log"
echo "bootstrap: done"

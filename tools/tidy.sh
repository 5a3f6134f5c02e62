#!/usr/bin/env bash
# clang-tidy-19 with the checked-in .clang-tidy over the project's own
# sources (runtime/, transpiler/, onnx/, tools/), as compiled in build/
# (compile_commands.json): any finding fails. Usage: tools/tidy.sh [REGEX]
# (REGEX: only the files whose path matches, e.g. runtime/ops).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -f build/compile_commands.json ]] || { echo "tidy: build/ first (tools/build.sh)" >&2; exit 2; }
root=$PWD
filter=${1:-}
files=$(grep -o '"file": *"[^"]*"' build/compile_commands.json | sed 's/.*"\([^"]*\)"$/\1/' |
  grep -E "^$root/(runtime|transpiler|onnx|tools)/" | grep -E "${filter:-.}" | sort -u)
[[ -n $files ]] || { echo "tidy: no files match '$filter'" >&2; exit 2; }
count=$(echo "$files" | wc -l)
echo "tidy: clang-tidy-19 over $count files"
# The compile commands without CMake's precompiled headers (-include
# cmake_pch.hxx): through them each file would parse every header of the PCH,
# and a missing #include would go unnoticed.
mkdir -p build/tidy
sed -E 's# -Winvalid-pch##; s# -include [^ ]*/cmake_pch\.hxx##' build/compile_commands.json \
  >build/tidy/compile_commands.json
# g++'s warning flags in the compile commands are not all clang's.
# shellcheck disable=SC2086
run-clang-tidy-19 -quiet -p build/tidy -j "$(nproc)" -extra-arg=-Wno-unknown-warning-option \
  $files >build/tidy.log 2>&1 || {
  grep -E "(warning|error):" build/tidy.log | sort -u | head -50
  echo "tidy: findings above (all of them: build/tidy.log)" >&2
  exit 1
}
echo "tidy: no findings"

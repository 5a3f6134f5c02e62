#!/usr/bin/env bash
# Regenerates the transpiler's golden files (expected.ag.cpp, expected.stderr,
# expected.exit) after a deliberate change to agc's output. Review the diff
# (git diff tests/transpiler/golden) before committing it.
#
# usage: tools/update-goldens.sh [BUILD_DIR] [CASE...]
#   BUILD_DIR defaults to build (tools/build.sh); CASE names folders under
#   tests/transpiler/golden (default: all of them).
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
[[ $# -gt 0 ]] && shift
agc=$build/transpiler/agc
[[ -x $agc ]] || { echo "no agc at $agc; build it first (cmake --build $build --target agc)" >&2; exit 2; }

golden=$repo/tests/transpiler/golden
# The same flags as tests/transpiler/CMakeLists.txt (the real <ag/ag.h>, Eigen).
flags=(-std=c++20 "-I$repo/include" -isystem "${EIGEN3_INCLUDE_DIR:-/usr/include/eigen3}")
cases=("$@")
if [[ ${#cases[@]} == 0 ]]; then
  for dir in "$golden"/*/; do cases+=("$(basename "$dir")"); done
fi
for name in "${cases[@]}"; do
  "$repo/tests/transpiler/run_golden.sh" "$agc" "$golden/$name" --update -- "${flags[@]}"
  echo "updated $name (exit $(cat "$golden/$name/expected.exit"))"
done

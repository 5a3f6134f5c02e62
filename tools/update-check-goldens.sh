#!/usr/bin/env bash
# Regenerates the expected findings of the `agc check` tests
# (tests/checks/*/*.expected and .exit) after a deliberate change. Review the
# diff before committing it.
#
# usage: tools/update-check-goldens.sh [BUILD_DIR] [CASE.cpp...]
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
shift || true
agc=$build/transpiler/agc
[[ -x $agc ]] || { echo "no agc at $agc; build it first (ninja -C $build agc)" >&2; exit 2; }
eigen=$(pkg-config --cflags-only-I eigen3 2>/dev/null | sed 's/^-I//' | tr -d ' ')
[[ -n $eigen ]] || eigen=/usr/include/eigen3
flags=(-std=c++20 "-I$repo/include" -isystem "$eigen")

cases=("$@")
[[ ${#cases[@]} == 0 ]] && mapfile -t cases < <(ls "$repo"/tests/checks/*/*.cpp)
for case in "${cases[@]}"; do
  "$repo/tests/checks/run_check_test.sh" "$agc" "$case" --update -- "${flags[@]}"
  echo "updated ${case#"$repo"/}"
done

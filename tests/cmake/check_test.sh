#!/usr/bin/env bash
# autograph_check: builds a tiny project with three linted targets
# and checks that
#   - a target whose sources have only warnings builds; its lint writes SARIF
#     2.1.0 (with repository-relative paths) and re-runs only when a linted
#     source or a header it includes changes;
#   - a target with an error-level finding fails to build, before compiling,
#     and so does its <t>_agc_check target alone;
#   - WERROR turns the warnings into a failure.
# Usage: check_test.sh <repo source dir> <agc> <c++ compiler> <work dir>
set -euo pipefail
repo=$1 agc=$2 cxx=$3 work=$4

rm -rf "$work"
mkdir -p "$work/src"
src=$work/src build=$work/build
cat >"$src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(check_test LANGUAGES CXX)
include("$repo/cmake/AutographTranspile.cmake")
add_executable(good good.cpp)
add_executable(bad bad.cpp)
add_executable(strict strict.cpp)
foreach(t good bad strict)
  target_include_directories(\${t} PRIVATE "$repo/include")
endforeach()
autograph_check(TARGET good SARIF good.sarif)
autograph_check(TARGET bad)
autograph_check(TARGET strict WERROR)
CMAKE
printf '#pragma once\ninline int one() { return 1; }\n' >"$src/good.h"
cat >"$src/good.cpp" <<'CPP'
#include <ag/annotate.h>

#include <iostream>

#include "good.h"

AG_FUNCTION int twice(int x) {
  std::cout << "tracing\n";  // a warning: runs only while tracing
  return 2 * x;
}
int main() { return twice(one()) == 2 ? 0 : 1; }
CPP
cp "$src/good.cpp" "$src/strict.cpp"
cat >"$src/bad.cpp" <<'CPP'
#include <ag/annotate.h>
#include <ag/ops.h>

ag::Tensor leaked;

AG_FUNCTION ag::Tensor f(ag::Tensor a) {
  leaked = a + 1;  // an error: the tensor leaks out of the trace
  return a;
}
int main() { return 0; }
CPP

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DAGC_EXECUTABLE="$agc" >/dev/null

# build <target>: runs ninja for it, output in $log; returns ninja's status.
n=0
build() {
  n=$((n + 1))
  log=$work/build-$n.log
  ninja -C "$build" "$1" >"$log" 2>&1
}

build good || fail "good: the build failed: $(cat "$log")"
grep -q "agc: checking 1 source(s) of good" "$log" || fail "good: the lint did not run"
[ -x "$build/good" ] || fail "good: not built"
if [ -f "$build/good.sarif" ]; then
  python3 - "$build/good.sarif" <<'PY' || fail "good: bad SARIF"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == "2.1.0", d["version"]
results = d["runs"][0]["results"]
assert [r["ruleId"] for r in results] == ["ag-side-effect"], results
uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
assert uri == "good.cpp", uri
PY
else
  fail "good: no SARIF file"
fi

build good || fail "good, again: the build failed"
grep -q "no work to do" "$log" || fail "good, again: ninja did work: $(cat "$log")"
sleep 1
touch "$src/good.h"
build good || fail "good after touching good.h: the build failed"
grep -q "agc: checking" "$log" || fail "touching good.h did not re-run the lint"

if build bad; then
  fail "bad: the build succeeded despite an error-level finding"
fi
grep -q "error: .*\[ag-tensor-leak\]" "$log" || fail "bad: the finding is not in the build log"
grep -q "bad.cpp.o" "$log" && fail "bad: bad.cpp was compiled before the lint passed"
if build bad_agc_check; then
  fail "bad_agc_check: succeeded"
fi

if build strict; then
  fail "strict: WERROR did not fail the build"
fi
grep -q "error: .*\[ag-side-effect\]" "$log" || fail "strict: the warning did not become an error"

if [ "$failures" -ne 0 ]; then
  echo "logs: $work/build-*.log"
  exit 1
fi
echo "PASS: autograph_check lints, fails on errors, writes SARIF and re-runs on change"

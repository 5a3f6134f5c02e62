#!/usr/bin/env bash
# Dependency tracking of autograph_transpile: builds a tiny project
# that transpiles model.cpp and second.cpp, then checks with Ninja that
#   - a rebuild with nothing changed runs nothing;
#   - touching a header that a transpiled source includes (directly, or through
#     the target's include path) re-runs agc for that source only;
#   - touching the transpiled source itself re-runs agc for it only;
#   - touching an unrelated header or source recompiles but runs no agc.
# Usage: transpile_deps_test.sh <repo source dir> <agc> <c++ compiler> <work dir>
set -euo pipefail
repo=$1 agc=$2 cxx=$3 work=$4

rm -rf "$work"
mkdir -p "$work/src/include"
src=$work/src build=$work/build
cat >"$src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(transpile_deps LANGUAGES CXX)
include("$repo/cmake/AutographTranspile.cmake")
add_executable(app main.cpp model.cpp second.cpp)
target_include_directories(app PRIVATE include)
autograph_transpile(TARGET app SOURCES model.cpp second.cpp)
CMAKE
printf '#pragma once\ninline int detail() { return 1; }\n' >"$src/include/detail.h"
printf '#pragma once\n#include "detail.h"\nint model();\n' >"$src/model.h"
printf '#include "model.h"\nint model() { return detail() + 1; }\n' >"$src/model.cpp"
printf '#pragma once\nint second();\n' >"$src/second.h"
printf '#include "second.h"\nint second() { return 3; }\n' >"$src/second.cpp"
printf '#pragma once\ninline int unrelated() { return 4; }\n' >"$src/unrelated.h"
cat >"$src/main.cpp" <<'CPP'
#include "model.h"
#include "second.h"
#include "unrelated.h"
int main() { return model() + second() + unrelated() == 9 ? 0 : 1; }
CPP

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

cmake -S "$src" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DAGC_EXECUTABLE="$agc" >/dev/null

# build <what this step is>: runs ninja, keeps its output in $log.
step=0
build() {
  step=$((step + 1))
  log=$work/build-$step.log
  if ! ninja -C "$build" -d explain >"$log" 2>&1; then
    cat "$log"
    echo "FAIL: step $step ($1): the build failed"
    exit 1
  fi
  "$build/app" || fail "step $step ($1): app returned $?"
}
ran_agc_for() { grep -q "agc: transpiling $1" "$log"; }
# expect_agc <step name> <sources agc must run for...>: and for no other.
expect_agc() {
  local name=$1
  shift
  for s in model.cpp second.cpp; do
    if [[ " $* " == *" $s "* ]]; then
      ran_agc_for "$s" || fail "$name: agc did not re-run for $s"
    else
      ! ran_agc_for "$s" || fail "$name: agc re-ran for $s"
    fi
  done
}
# touch_later <file>: a modification time the build surely sees as newer.
touch_later() {
  sleep 1
  touch "$1"
}

build "first build"
expect_agc "first build" model.cpp second.cpp
[ -f "$build/agc/app/model.ag.cpp" ] || fail "first build: agc/app/model.ag.cpp is missing"
[ -f "$build/agc/app/model.ag.cpp.d" ] || fail "first build: the depfile is missing"

build "no change"
grep -q "no work to do" "$log" || fail "no change: ninja did work: $(cat "$log")"

second_mtime=$(stat -c %y "$build/agc/app/second.ag.cpp")
touch_later "$src/model.h"
build "touch model.h"
expect_agc "touch model.h" model.cpp
[ "$(stat -c %y "$build/agc/app/second.ag.cpp")" = "$second_mtime" ] ||
  fail "touch model.h: second.ag.cpp was rewritten"

touch_later "$src/include/detail.h"
build "touch include/detail.h (included through model.h)"
expect_agc "touch include/detail.h" model.cpp

touch_later "$src/second.h"
build "touch second.h"
expect_agc "touch second.h" second.cpp

touch_later "$src/second.cpp"
build "touch second.cpp"
expect_agc "touch second.cpp" second.cpp

touch_later "$src/unrelated.h"
build "touch unrelated.h"
expect_agc "touch unrelated.h"
grep -q "main.cpp.o" "$log" || fail "touch unrelated.h: main.cpp was not recompiled"

touch_later "$src/main.cpp"
build "touch main.cpp"
expect_agc "touch main.cpp"

if [ "$failures" -ne 0 ]; then
  echo "logs: $work/build-*.log"
  exit 1
fi
echo "PASS: agc re-ran for exactly the sources whose inputs changed ($step builds)"

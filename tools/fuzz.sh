#!/usr/bin/env bash
# Long differential fuzzing of agc: builds agc and ag_runtime (tools/build.sh),
# then runs tests/fuzz/fuzz.py on generated functions, in programs of --batch
# functions (one agc run and two compiles each). Prints "N passed, M failed",
# the failure families and the failing functions (named f_SEED_INDEX).
#
# usage: tools/fuzz.sh [--count N] [--seed S] [--features F] [--keep DIR] [other fuzz.py options]
#   --keep DIR  writes each failing function as a program of its own (DIR/f_S_I.cpp,
#               with the error in f_S_I.txt); copy one to tests/fuzz/regressions/ once
#               it passes, to keep it as a regression test.
# See tests/fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh --target agc ag_runtime >/dev/null
env_file=build/tests/fuzz/fuzz_env.json
[[ -f $env_file ]] || { echo "fuzz.sh: $env_file is missing (is AG_BUILD_TESTS on?)" >&2; exit 2; }
mkdir -p build/fuzz
exec python3 tests/fuzz/fuzz.py --env "$env_file" --work build/fuzz/work "$@"

#!/usr/bin/env bash
# Long runs of agc over real library headers: builds agc (tools/build.sh),
# then marks definitions of nlohmann-json, CLI11, fmt, spdlog and Eigen at
# random and requires each to be rejected at a line or to compile
# (tests/robustness/README.md). Prints each outcome, a table per library,
# the failure families and "N passed, M failed".
#
# usage: tools/robustness.sh [--count N] [--seed S] [--per-unit K] [--libraries L] [--keep DIR]
#   --keep DIR  writes each failing unit, marked once, with its error
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh --target agc >/dev/null
mkdir -p build/robustness
exec python3 tests/robustness/mark_and_compile.py --agc build/transpiler/agc --work build/robustness/work "$@"

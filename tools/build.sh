#!/usr/bin/env bash
# Configures (once) and builds the given targets in build/, with ccache.
# Usage: tools/build.sh [cmake --build args...]
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/ccache-env.sh "$PWD"
# (Again when an earlier configure failed and wrote no build.ninja.)
# Release: the flags the benchmarks are built with, and no debug information,
# which costs a quarter of the compile time (tools/sanitize.sh keeps it).
if ! grep -qs '^CMAKE_BUILD_TYPE:STRING=Release$' build/CMakeCache.txt || [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
cmake --build build -j"$(nproc)" "$@"

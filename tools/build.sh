#!/usr/bin/env bash
# Configures (once) and builds the given targets in build/, with ccache.
# Usage: tools/build.sh [cmake --build args...]
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_SLOPPINESS=time_macros CCACHE_BASEDIR="$PWD"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
cmake --build build -j"$(nproc)" "$@"

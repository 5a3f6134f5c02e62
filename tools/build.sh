#!/usr/bin/env bash
# Configures (once) and builds the given targets in build/, with ccache.
# Usage: tools/build.sh [cmake --build args...]
set -euo pipefail
cd "$(dirname "$0")/.."
# CCACHE_NOHASHDIR: a clone in another folder (CI's fresh clone) hits the cache too;
# debug info may then name the folder the object was first built in.
export CCACHE_SLOPPINESS=time_macros CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
cmake --build build -j"$(nproc)" "$@"

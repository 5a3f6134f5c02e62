#!/usr/bin/env bash
# Builds the benchmarks (Release, ccache) in build-bench and runs them with one
# BLAS thread, five repetitions, medians reported. Extra arguments go to the
# benchmark binary, e.g. --benchmark_filter=cache_hit.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${AG_BENCH_BUILD_DIR:-$repo/build-bench}"
export CCACHE_SLOPPINESS=time_macros CCACHE_BASEDIR="$repo"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAG_BUILD_BENCHMARKS=ON \
  -DAG_BUILD_TESTS=OFF -DAG_BUILD_EXAMPLES=OFF -DAG_BUILD_TRANSPILER=OFF \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build "$build" --target runtime_bench -j "${AG_BENCH_JOBS:-2}"
# Two BLAS threads would fight the benchmark (and other jobs) for 2 cores.
export OPENBLAS_NUM_THREADS=1
exec "$build/tools/bench/runtime_bench" --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true "$@"

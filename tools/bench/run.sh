#!/usr/bin/env bash
# Builds the benchmarks (Release, ccache) in build-bench and runs them with one
# BLAS thread, five repetitions, medians reported: runtime_bench (docs/architecture.md "Performance targets"
# workloads), control_bench (staged loops, issue 4), threads_bench (intra-op
# threads), train_bench (a training step, issue 15), then onnx_bench (loaded
# ONNX models against their traces, issue 16). Extra arguments go to each
# binary, e.g. --benchmark_filter=cache_hit; AG_BENCH_BINARIES picks the
# binaries, e.g. AG_BENCH_BINARIES=control_bench.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${AG_BENCH_BUILD_DIR:-$repo/build-bench}"
export CCACHE_SLOPPINESS=time_macros CCACHE_BASEDIR="$repo"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAG_BUILD_BENCHMARKS=ON \
  -DAG_BUILD_TESTS=OFF -DAG_BUILD_EXAMPLES=OFF -DAG_BUILD_TRANSPILER=OFF \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
binaries=(${AG_BENCH_BINARIES:-runtime_bench control_bench threads_bench train_bench onnx_bench})
cmake --build "$build" --target "${binaries[@]}" -j "${AG_BENCH_JOBS:-2}"
# Two BLAS threads would fight the benchmark (and other jobs) for 2 cores.
export OPENBLAS_NUM_THREADS=1
status=0
for binary in "${binaries[@]}"; do
  "$build/tools/bench/$binary" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true "$@" || status=$?
done
exit $status

#!/usr/bin/env bash
# Builds the tests with sanitizers in their own build folder and runs them.
# Usage: tools/sanitize.sh thread [ctest args...]             build-tsan/: the runtime tests
#        tools/sanitize.sh address,undefined [ctest args...]  build-asan/: every test
# ThreadSanitizer runs the runtime's tests (the concurrency tests among them)
# and, where MPI is found, the distributed tests under mpirun (DistributedOptimizer's
# communication thread); agc is single-threaded, so its tests run under ASan/UBSan only.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizers=${1:?usage: tools/sanitize.sh thread|address,undefined [ctest args...]}
shift
source tools/ccache-env.sh "$PWD"
options=(-DAG_SANITIZE="$sanitizers" -DCMAKE_BUILD_TYPE=RelWithDebInfo
         -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ "$sanitizers" = thread ]; then
  dir=build-tsan
  # oneDNN's threads are libgomp's, which is not instrumented: ThreadSanitizer
  # would take its barriers for races. OpenBLAS's pthreads it understands.
  options+=(-DAG_BUILD_TRANSPILER=OFF -DAG_BUILD_ONNX=OFF -DAG_BUILD_EXAMPLES=OFF -DAG_GEMM=openblas)
  targets=(--target runtime_tests)
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
else
  dir=build-asan
  targets=()
  export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}" UBSAN_OPTIONS="print_stacktrace=1"
fi
# Configured every time, so that a folder made by an older version of this script gets its options.
cmake -S . -B "$dir" -G Ninja "${options[@]}" >/dev/null
if [ "$sanitizers" = thread ] && ninja -C "$dir" -t targets all | grep -q '^distribute_tests:'; then
  targets+=(--target distribute_tests distribute_faults distribute_local_tests)
  # Reports from inside Open MPI, which is not instrumented: each entry says why.
  export TSAN_OPTIONS="suppressions=$PWD/tests/distribute/tsan.supp $TSAN_OPTIONS"
fi
cmake --build "$dir" -j"$(nproc)" "${targets[@]}"
cd "$dir" && OPENBLAS_NUM_THREADS=1 ctest --output-on-failure -j"$(nproc)" "$@"

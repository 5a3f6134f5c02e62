#!/usr/bin/env bash
# Builds the benchmarks (Release, ccache) in build-bench and runs them with one
# BLAS thread, five repetitions, medians reported: runtime_bench (docs/architecture.md "Performance targets"
# workloads), conv_bench (the guide's convolution), control_bench (staged loops), threads_bench (intra-op
# threads), train_bench (a training step), model_bench (the op library's models:
# an LSTM language model, a transformer encoder layer), memory_bench (peak heap
# bytes of one call, graph against eager against hand), then onnx_bench (loaded
# ONNX models against their traces; built only with AG_BUILD_ONNX,
# skipped otherwise; with PyTorch's resnet18, mobilenet_v2, an LSTM
# language model and a bidirectional GRU where Debian's python3-torch is installed, and LibTorch's run
# of each), then distribute_bench (a data-parallel training step under mpirun
# on 1 and 2 ranks; built only where MPI is found).
# Each binary writes its results as JSON to build-bench/results
# (AG_BENCH_RESULTS picks another folder), and the run
# ends with tools/bench/summarize.py's table of every workload against its
# target. AG_BENCH_UPDATE_README=1 also regenerates README.md's benchmark
# table (between its bench-table markers) from this run. Where pip has
# installed onnxruntime, onnx_bench also writes its models (AG_BENCH_MODELS)
# and tools/bench/peers.py runs them in ONNX Runtime, beside this run's times,
# before the summary, which shows the models from PyTorch against it; where
# pip has installed torch, train_bench writes its training steps there too and
# tools/bench/pytorch_peers.py runs them in PyTorch eager, for the summary's
# training rows.
# Extra arguments go to each binary, e.g. --benchmark_filter=cache_hit;
# AG_BENCH_BINARIES picks the binaries, e.g. AG_BENCH_BINARIES=control_bench.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${AG_BENCH_BUILD_DIR:-$repo/build-bench}"
results="${AG_BENCH_RESULTS:-$build/results}"
source "$repo/tools/ccache-env.sh" "$repo"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAG_BUILD_BENCHMARKS=ON \
  -DAG_BUILD_TESTS=OFF -DAG_BUILD_EXAMPLES=OFF -DAG_BUILD_TRANSPILER=OFF \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
# Only the binaries this configuration defines (onnx_bench needs AG_BUILD_ONNX).
defined="$(ninja -C "$build" -t targets all)"
binaries=()
for binary in ${AG_BENCH_BINARIES:-runtime_bench conv_bench control_bench threads_bench train_bench model_bench memory_bench onnx_bench distribute_bench}; do
  if grep -q "^$binary: phony" <<<"$defined"; then
    binaries+=("$binary")
  else
    echo "run.sh: skipping $binary: this configuration does not build it" >&2
  fi
done
if [ ${#binaries[@]} -eq 0 ]; then
  echo "run.sh: no benchmark to run" >&2
  exit 1
fi
cmake --build "$build" --target "${binaries[@]}" -j "${AG_BENCH_JOBS:-2}"
# Two BLAS threads would fight the benchmark (and other jobs) for 2 cores;
# the hand rows' oneDNN runs on OpenMP's threads. (The runtime sets both
# libraries to its own intra-op thread count.)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# The peers at their best: Debian's OpenBLAS 0.3.21 reads a CPU newer than it
# knows as the generic Prescott, and LibTorch's matrix products and the
# OpenBLAS hand rows then run several times below the machine's speed. The
# core that matches the CPU's widest vectors is named, unless the caller
# named one; the summary says which core ran.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  if grep -qw avx512f /proc/cpuinfo; then
    export OPENBLAS_CORETYPE=SkylakeX
  elif grep -qw avx2 /proc/cpuinfo; then
    export OPENBLAS_CORETYPE=Haswell
  fi
fi
mkdir -p "$results"
has_onnxruntime=0 has_pytorch=0
python3 -c "import onnxruntime" 2>/dev/null && has_onnxruntime=1
python3 -c "import torch" 2>/dev/null && has_pytorch=1
if [ $has_onnxruntime = 1 ] || [ $has_pytorch = 1 ]; then
  export AG_BENCH_MODELS="$results/models"
  rm -rf "$AG_BENCH_MODELS"
  mkdir -p "$AG_BENCH_MODELS"
fi
# resnet18 and mobilenet_v2 at 224x224, the LSTM language model and the GRU, for
# onnx_bench (and resnet18 for memory_bench), from Debian's python3-torch and
# python3-torchvision where one of these Pythons has them, as ONNX and as
# TorchScript (for onnx_bench's LibTorch rows).
if [[ " ${binaries[*]} " == *" onnx_bench "* || " ${binaries[*]} " == *" memory_bench "* ]]; then
  for python in python3 /usr/bin/python3; do
    if "$python" -c "import torch, torchvision, onnx" 2>/dev/null; then
      export AG_BENCH_TORCH_MODELS="$results/torch_models"
      "$python" "$repo/tests/onnx/torch_models.py" "$AG_BENCH_TORCH_MODELS" \
        --only resnet18,mobilenet_v2,lstm_lm,bigru --image-size 224 --torchscript >/dev/null
      break
    fi
  done
fi
status=0
outputs=()
for binary in "${binaries[@]}"; do
  # distribute_bench runs under mpirun, below.
  if [ "$binary" = distribute_bench ]; then continue; fi
  rm -f "$results/$binary.json"
  # Repetitions interleaved at random: a slow spell of the machine falls on
  # every row of a workload alike, not on the one then running.
  "$build/tools/bench/$binary" --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true \
    --benchmark_report_aggregates_only=true \
    --benchmark_out="$results/$binary.json" --benchmark_out_format=json "$@" || status=$?
  if [ -s "$results/$binary.json" ]; then outputs+=("$results/$binary.json"); fi
done
# distribute_bench on 1 and 2 ranks, one intra-op thread each. Its rows have
# fixed iteration counts and run in order (every rank must run the same
# steps; random interleaving would shuffle each rank differently); rank 0
# writes the results.
if [[ " ${binaries[*]} " == *" distribute_bench "* ]]; then
  for ranks in 1 2; do
    out="$results/distribute_bench_np$ranks.json"
    rm -f "$out"
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      OMPI_MCA_btl_vader_single_copy_mechanism=none \
      mpirun -np "$ranks" -x OPENBLAS_NUM_THREADS -x OMP_NUM_THREADS \
      "$build/tools/bench/distribute_bench" --benchmark_repetitions=5 \
      --benchmark_report_aggregates_only=true \
      --benchmark_out="$out" --benchmark_out_format=json "$@" || status=$?
    if [ -s "$out" ]; then outputs+=("$out"); fi
  done
fi
# ONNX Runtime's times of onnx_bench's models, printed and kept for the summary.
if [ -s "$results/onnx_bench.json" ] && [ $has_onnxruntime = 1 ]; then
  rm -f "$results/onnxruntime.json"
  echo
  python3 "$repo/tools/bench/peers.py" --models "$AG_BENCH_MODELS" --results "$results/onnx_bench.json" \
    --out "$results/onnxruntime.json" || status=$?
  if [ -s "$results/onnxruntime.json" ]; then outputs+=("$results/onnxruntime.json"); fi
fi
# PyTorch's (pip, eager) times of train_bench's training steps, likewise.
if [ -s "$results/train_bench.json" ] && [ $has_pytorch = 1 ]; then
  rm -f "$results/pytorch.json"
  echo
  python3 "$repo/tools/bench/pytorch_peers.py" --models "$AG_BENCH_MODELS" \
    --results "$results/train_bench.json" --out "$results/pytorch.json" || status=$?
  if [ -s "$results/pytorch.json" ]; then outputs+=("$results/pytorch.json"); fi
fi
if [ ${#outputs[@]} -gt 0 ]; then
  echo
  readme=()
  if [ "${AG_BENCH_UPDATE_README:-0}" = 1 ]; then readme=(--readme "$repo/README.md"); fi
  python3 "$repo/tools/bench/summarize.py" "${outputs[@]}" "${readme[@]}" || status=$?
fi
exit $status

#!/usr/bin/env bash
# Times `agc transpile` against `clang-19 -fsyntax-only` on the same
# translation unit (one including Eigen and <ag/ag.h>), run after run in one
# session, and prints the medians and their ratio. DESIGN §7 target: <= 1.5x.
#
# usage: tools/bench/agc_speed.sh [BUILD_DIR] [RUNS]
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build-agc}" && pwd)
runs=${2:-7}
agc=$build/transpiler/agc
[[ -x $agc ]] || { echo "no agc at $agc; build it first" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/bench.cpp" <<'CPP'
#include <Eigen/Dense>
#include <iostream>
#include <vector>

#include <ag/ag.h>

AG_FUNCTION ag::Tensor step(ag::Tensor x, ag::Tensor n) {
  ag::Tensor total = 0;
  for (auto i : ag::range(n)) {
    if (ag::reduce_sum(x) > 0) {
      total = total + i;
    } else {
      total = total - i;
    }
  }
  while (total > 100) total = total / 2;
  return total;
}

double eigen_work() {
  Eigen::MatrixXd m = Eigen::MatrixXd::Random(4, 4);
  return (m * m.transpose()).sum();
}
CPP
flags=(-std=c++20 "-I$repo/include" -I/usr/include/eigen3)

# Median wall time in milliseconds of running "$@" $runs times.
median_ms() {
  local times=()
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "command failed: $*" >&2; exit 2; }
    end=$(date +%s%N)
    times+=($(((end - start) / 1000000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p"
}

cd "$work"
clang_ms=$(median_ms clang-19 -fsyntax-only "${flags[@]}" bench.cpp)
agc_ms=$(median_ms "$agc" transpile bench.cpp -o out -- "${flags[@]}")
echo "clang-19 -fsyntax-only: ${clang_ms} ms (median of $runs)"
echo "agc transpile:          ${agc_ms} ms (median of $runs)"
awk -v a="$agc_ms" -v c="$clang_ms" 'BEGIN { printf "ratio agc/clang:        %.2fx (target <= 1.5x)\n", a / c }'

#!/usr/bin/env bash
# Times `agc transpile` against `clang-19 -fsyntax-only` on the same
# translation unit (one including Eigen and <ag/ag.h>), the two runs
# alternating, and prints the medians and their ratio. Target
# (docs/architecture.md, "Performance targets"): <= 1.5x.
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

# CPU time (user + system) in milliseconds of one run of "$@". CPU time,
# not wall time, so that other load on the machine does not count.
cpu_ms() {
  local TIMEFORMAT='%U %S' seconds
  seconds=$({ time "$@" >/dev/null 2>&1; } 2>&1) || { echo "command failed: $*" >&2; exit 2; }
  awk -v t="$seconds" 'BEGIN { split(t, p, " "); printf "%d\n", (p[1] + p[2]) * 1000 }'
}

median() { sort -n | sed -n "$(((runs + 1) / 2))p"; }

# The two commands alternate, run after run, so that drift hits both alike.
cd "$work"
clang_times=() agc_times=()
for _ in $(seq "$runs"); do
  clang_times+=("$(cpu_ms clang-19 -fsyntax-only "${flags[@]}" bench.cpp)")
  agc_times+=("$(cpu_ms "$agc" transpile bench.cpp -o out -- "${flags[@]}")")
done
clang_ms=$(printf '%s\n' "${clang_times[@]}" | median)
agc_ms=$(printf '%s\n' "${agc_times[@]}" | median)
echo "clang-19 -fsyntax-only: ${clang_ms} ms CPU (median of $runs)"
echo "agc transpile:          ${agc_ms} ms CPU (median of $runs)"
awk -v a="$agc_ms" -v c="$clang_ms" 'BEGIN { printf "ratio agc/clang:        %.2fx (target <= 1.5x)\n", a / c }'

#!/usr/bin/env bash
# Times `agc check` against `clang-19 -fsyntax-only` on the same translation
# unit (one including Eigen and <ag/ag.h>, with marked functions that every
# check looks at), each run several times over, and prints the medians and
# their ratio. Target (docs/architecture.md, "Performance targets"): <= 1.5x.
#
# usage: tools/bench/agc_check_speed.sh [BUILD_DIR] [RUNS]
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
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

int calls = 0;

AG_FUNCTION ag::Tensor step(ag::Tensor x, ag::Tensor n) {
  ag::Tensor total = 0;
  std::vector<ag::Tensor> seen;
  for (auto i : ag::range(n)) {
    if (ag::reduce_sum(x) > 0) {
      total = total + i;
    } else {
      total = total - i;
    }
    seen.push_back(total);
  }
  while (total > 100) total = total / 2;
  ++calls;
  std::cout << "traced\n";
  return total;
}

class Model : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor call(ag::Tensor x) { return x * w_.read() + bias_; }

 private:
  ag::Variable w_{ag::constant(2.0)};
  double bias_ = 0.5;
};

double eigen_work() {
  Eigen::MatrixXd m = Eigen::MatrixXd::Random(4, 4);
  return (m * m.transpose()).sum();
}
CPP
flags=(-std=c++20 "-I$repo/include" -isystem /usr/include/eigen3)

# Median wall time in milliseconds of running "$@" $runs times; the exit code
# must be 0 or 1 (findings).
median_ms() {
  local times=()
  for _ in $(seq "$runs"); do
    local start end code=0
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || code=$?
    end=$(date +%s%N)
    ((code <= 1)) || { echo "command failed ($code): $*" >&2; exit 2; }
    times+=($(((end - start) / 1000000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p"
}

cd "$work"
"$agc" check bench.cpp -- "${flags[@]}" 2>&1 | grep -c '\[ag-' | sed 's/^/findings per run: /'
clang_ms=$(median_ms clang-19 -fsyntax-only "${flags[@]}" bench.cpp)
agc_ms=$(median_ms "$agc" check bench.cpp -- "${flags[@]}")
none_ms=$(median_ms "$agc" check --checks=-* bench.cpp -- "${flags[@]}")
echo "clang-19 -fsyntax-only:  ${clang_ms} ms (median of $runs)"
echo "agc check:               ${agc_ms} ms (median of $runs)"
echo "agc check --checks=-*:   ${none_ms} ms (parsing and the driver only)"
awk -v a="$agc_ms" -v c="$clang_ms" 'BEGIN { printf "ratio agc check/clang:   %.2fx (target <= 1.5x)\n", a / c }'

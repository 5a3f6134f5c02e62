#!/usr/bin/env bash
# distribute.install_consumer: `cmake --install` of this build into a prefix
# (no rebuild), then tests/distribute/consumer built as a project of its own
# against it (find_package(autograph_cpp), autograph_cpp::ag_distribute) and
# run under mpirun on 2 ranks.
#   install_test.sh <repo source dir> <build dir> <c++ compiler> <mpiexec> <work dir>
set -euo pipefail
repo=$1 build_dir=$2 cxx=$3 mpiexec=$4 work=$5
rm -rf "$work/build" "$work/prefix"
mkdir -p "$work"
prefix=$work/prefix
args=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix")
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$work CCACHE_SLOPPINESS=time_macros
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
step() {
  local what=$1
  shift
  "$@" >"$work/$what.log" 2>&1 || {
    cat "$work/$what.log"
    echo "FAIL: $what"
    exit 1
  }
}
step install cmake --install "$build_dir" --prefix "$prefix"
for f in lib/libag_distribute.a include/ag/distribute.h; do
  [ -e "$prefix/$f" ] || {
    echo "FAIL: the install has no $f"
    exit 1
  }
done
grep -q "autograph_cpp::ag_distribute" "$prefix"/lib*/cmake/autograph_cpp/autograph_cppTargets.cmake || {
  echo "FAIL: the package exports no autograph_cpp::ag_distribute"
  exit 1
}
step configure cmake -S "$repo/tests/distribute/consumer" -B "$work/build" "${args[@]}"
step build cmake --build "$work/build"
output=$("$mpiexec" -np 2 "$work/build/distribute_consumer" 2>&1) || {
  echo "$output"
  echo "FAIL: distribute_consumer under mpirun exited with an error"
  exit 1
}
echo "$output"
# The sum of ranks 1 and 2; w - 0.5 * 1.5 from [1, 2].
expected="ranks 2, sum 3, weights 0.25 1.25"
grep -qx "$expected" <<<"$output" || {
  echo "FAIL: expected the line '$expected'"
  exit 1
}
echo "PASS: the consumer built against the installed package ran on 2 ranks"

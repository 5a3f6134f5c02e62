#!/usr/bin/env bash
# cmake.install_deploy: `cmake --install` of this build into a prefix (no
# rebuild), then examples/deploy built as a project of its own against it
# (find_package(autograph_cpp): agc and autograph_cpp::ag_onnx from the
# prefix), run, and matched with the example's expected output.
#   deploy_install_test.sh <repo source dir> <build dir> <c++ compiler> <work dir>
set -euo pipefail
repo=$1 build_dir=$2 cxx=$3 work=$4
rm -rf "$work/build" "$work/prefix"
mkdir -p "$work"
prefix=$work/prefix
args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix")
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$work CCACHE_SLOPPINESS=time_macros
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
for f in lib/libag_onnx.a bin/ag-onnx include/ag/onnx.h; do
  [ -e "$prefix/$f" ] || {
    echo "FAIL: the install has no $f"
    exit 1
  }
done
step() {
  local what=$1
  shift
  "$@" >"$work/$what.log" 2>&1 || {
    cat "$work/$what.log"
    echo "FAIL: $what"
    exit 1
  }
}
step configure cmake -S "$repo/examples/deploy" -B "$work/build" "${args[@]}"
step build cmake --build "$work/build"
cd "$work/build"
for program in export run; do
  # run_example.cmake: the exit code, then all of stdout against the regex
  cmake -DEXE="./${program}_model" -DEXPECTED_REGEX_FILE="$repo/examples/deploy/expected_$program.regex" \
    -P "$repo/examples/run_example.cmake" >"$work/$program.txt" 2>&1 || {
    cat "$work/$program.txt"
    echo "FAIL: ${program}_model failed or its output does not match examples/deploy/expected_$program.regex"
    exit 1
  }
done
echo "PASS: examples/deploy built against the installed package; run_model ran export_model's model"

#!/usr/bin/env bash
# Builds tests/cmake/consumer, a separate CMake project, against autograph-cpp
# and runs it:
#   consumer_test.sh install <build dir> <c++ compiler> <work dir>
#       `cmake --install <build dir>` into <work dir>/prefix (no rebuild), then
#       find_package(autograph_cpp) from that prefix; checks that the package
#       points AGC_EXECUTABLE at the installed agc
#   consumer_test.sh subdirectory <repo source dir> <agc> <c++ compiler> <work dir>
#       add_subdirectory(<repo>) with AG_BUILD_TRANSPILER=OFF and the given agc
#       (building agc again would cost minutes); builds the runtime
# Release builds (for subdirectory: no optimisation and a unity build, the
# fastest to compile since the runtime is built too: a quarter of the time of
# one file at a time; it also keeps the sources free of clashes between files),
# with ccache when it is installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1
shift
case $mode in
  install) build_dir=$1 cxx=$2 work=$3 ;;
  subdirectory) repo=$1 agc=$2 cxx=$3 work=$4 ;;
  *)
    echo "usage: see the head of $0" >&2
    exit 2
    ;;
esac

rm -rf "$work/build" "$work/prefix"
mkdir -p "$work"
build_type=Release
[ "$mode" = install ] || build_type=
args=(-G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_CXX_COMPILER="$cxx")
if command -v ccache >/dev/null; then
  # Paths under the (fixed) work dir hash alike from run to run.
  export CCACHE_BASEDIR=$work CCACHE_SLOPPINESS=time_macros
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

if [ "$mode" = install ]; then
  prefix=$work/prefix
  cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
  for f in bin/agc include/ag/ag.h lib/libag_runtime.a \
    lib/cmake/autograph_cpp/autograph_cppConfig.cmake \
    lib/cmake/autograph_cpp/autograph_cppConfigVersion.cmake \
    lib/cmake/autograph_cpp/autograph_cppTargets.cmake \
    lib/cmake/autograph_cpp/AutographTranspile.cmake \
    lib/cmake/autograph_cpp/AutographCheck.cmake; do
    [ -e "$prefix/$f" ] || {
      echo "FAIL: the install has no $f"
      exit 1
    }
  done
  "$prefix/bin/agc" --version >/dev/null || {
    echo "FAIL: the installed agc does not run"
    exit 1
  }
  args+=(-DCMAKE_PREFIX_PATH="$prefix")
else
  args+=(-DAUTOGRAPH_CPP_SOURCE_DIR="$repo" -DAG_BUILD_TRANSPILER=OFF -DAGC_EXECUTABLE="$agc"
    -DCMAKE_UNITY_BUILD=ON)
fi

cmake -S "$here/consumer" -B "$work/build" "${args[@]}" >"$work/configure.log" 2>&1 || {
  cat "$work/configure.log"
  echo "FAIL: configuring the consumer"
  exit 1
}
if [ "$mode" = install ]; then
  grep -q "AGC_EXECUTABLE=$prefix/bin/agc" "$work/configure.log" || {
    cat "$work/configure.log"
    echo "FAIL: find_package(autograph_cpp) did not set AGC_EXECUTABLE to $prefix/bin/agc"
    exit 1
  }
fi
# The consumer's target only, as a user's build would: not the ONNX library
# and tool that add_subdirectory also defines.
cmake --build "$work/build" --target consumer >"$work/build.log" 2>&1 || {
  cat "$work/build.log"
  echo "FAIL: building the consumer"
  exit 1
}
grep -q "agc: transpiling model.cpp" "$work/build.log" || {
  cat "$work/build.log"
  echo "FAIL: the build did not run agc"
  exit 1
}
"$work/build/consumer" >"$work/output.txt" || {
  rc=$?
  cat "$work/output.txt"
  echo "FAIL: the consumer exited with $rc"
  exit 1
}
diff -u "$here/consumer/expected.txt" "$work/output.txt" || {
  echo "FAIL: the consumer's output differs from consumer/expected.txt"
  exit 1
}
echo "PASS ($mode): the consumer configured, built, ran agc and printed the expected output"

#!/usr/bin/env bash
# tools/new-op.sh in a copy of the source tree: an elementwise op touches its
# row, its functor and its case (3 places); another op its row, its own file
# (shape rule, kernel, gradient, public function), the public declaration and
# its case (4 places). The files it writes compile (-fsyntax-only).
# Usage: new_op_test.sh SOURCE_DIR CXX WORK_DIR
set -euo pipefail
src=$1 cxx=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
# The tracked files as they are now (uncommitted edits too).
(cd "$src" && git ls-files -z | xargs -0 cp --parents -t "$work")
cp -r "$work" "$work.orig"
trap 'rm -rf "$work.orig"' EXIT

changed() {  # the files that differ from the original copy or are new, one per line
  (cd "$work" && find . -type f | sed 's#^\./##' | sort) | while read -r f; do
    cmp -s "$work/$f" "$work.orig/$f" || echo "$f"
  done
}
expect_changed() {  # expect_changed WHAT FILE...
  local what=$1
  shift
  local want got
  want=$(printf '%s\n' "$@" | sort)
  got=$(changed)
  if [[ $got != "$want" ]]; then
    echo "FAIL: $what changed:"
    echo "$got"
    echo "expected:"
    echo "$want"
    exit 1
  fi
  echo "ok: $what changes ${#@} files"
}
syntax_check() {  # syntax_check FILE...
  for f in "$@"; do
    "$cxx" -std=c++20 -fsyntax-only -I "$work/include" -I "$work/runtime" -I "$work/tests/runtime" \
      -isystem /usr/include/x86_64-linux-gnu/openblas-pthread -isystem /usr/include/eigen3 "$work/$f" || {
      echo "FAIL: $f does not compile after new-op.sh"
      exit 1
    }
  done
}

"$work/tools/new-op.sh" fuzz_square --elementwise unary --onnx Abs --not-differentiable >/dev/null
expect_changed "an elementwise op" include/ag/ops.def runtime/ops/scalar_ops.h \
  tests/runtime/op_cases.cpp
grep -q '^AG_ELEMENTWISE_OP(FuzzSquare, "fuzz_square", 1, .*onnx("Abs"), unary(fuzz_square))$' \
  "$work/include/ag/ops.def" || { echo "FAIL: no row for fuzz_square"; exit 1; }
syntax_check runtime/ops/api.cpp runtime/ops/kernels_elementwise.cpp tests/runtime/op_cases.cpp

rm -rf "$work" && cp -r "$work.orig" "$work"
"$work/tools/new-op.sh" fuzz_spread >/dev/null
expect_changed "another op" include/ag/ops.def runtime/ops/library/fuzz_spread.cpp \
  include/ag/ops.h tests/runtime/op_cases.cpp
grep -q '^AG_OP(FuzzSpread, "fuzz_spread", 1, infer_fuzz_spread, kernel_fuzz_spread, kNone, grad_fuzz_spread, ' \
  "$work/include/ag/ops.def" || { echo "FAIL: no row for fuzz_spread"; exit 1; }
for fn in infer_fuzz_spread kernel_fuzz_spread grad_fuzz_spread 'Tensor fuzz_spread('; do
  grep -q "$fn" "$work/runtime/ops/library/fuzz_spread.cpp" ||
    { echo "FAIL: runtime/ops/library/fuzz_spread.cpp has no $fn"; exit 1; }
done
syntax_check runtime/ops/library/fuzz_spread.cpp runtime/ops/api.cpp tests/runtime/op_cases.cpp
echo "new-op.sh: ok"

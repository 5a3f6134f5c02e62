#!/usr/bin/env bash
# Scaffolds a new op (as clang-tidy's add_new_check.py does for checks): every
# place an op needs, each with a stub that builds, and a failing
# eager-vs-graph case in tests/runtime/op_cases.cpp to make pass.
#
#   tools/new-op.sh NAME [--elementwise unary|binary] [--onnx TYPE]
#                        [--not-differentiable]
#
# NAME is the snake_case public name (ag::NAME); the op's id is its CamelCase.
#
# --elementwise unary|binary: an op whose arithmetic is one functor. Its row
# declares and defines its public function (api column unary(NAME) or
# binary(NAME)) and its kernels; it touches
#   include/ag/ops.def          its AG_ELEMENTWISE_OP row
#   runtime/ops/scalar_ops.h    its functor, which throws until written
#   tests/runtime/op_cases.cpp  its case
# otherwise (4 places):
#   include/ag/ops.def                 its AG_OP row
#   runtime/ops/library/NAME.cpp       the op's file: infer_NAME (its shape rule),
#                                      kernel_NAME, grad_NAME and its public
#                                      function ag::NAME, which throw until written
#   include/ag/ops.h                   the public function's declaration
#   tests/runtime/op_cases.cpp         its case
# A differentiable elementwise op gets grad_NAME in
# runtime/ops/gradients_elementwise.cpp. A differentiable op needs a
# finite-difference case in tests/runtime/gradient_ops_test.cpp
# (OpGradientCoverage fails without one); --not-differentiable writes
# `not_differentiable` in its row instead of a gradient.
#
# --onnx TYPE: the op is ONNX's TYPE on the same inputs (onnx("TYPE"): export
# and import both ways). Without it the row says onnx_none("has no ONNX form
# yet"); write an onnx_by(form) in onnx/export_ops.cpp for a form of several
# ONNX ops (tests/onnx/op_round_trip_test.cpp checks every form).
#
# Then: pick the infer rule and the dtypes (the generated lines say which
# default they took), write the arithmetic, build runtime_tests and run
# --gtest_filter='*NAME*'. runtime/ops/README.md explains each file.
set -euo pipefail

usage() {
  echo "usage: $0 NAME [--elementwise unary|binary] [--onnx TYPE] [--not-differentiable]" >&2
  exit 2
}

[[ $# -ge 1 ]] || usage
name=$1
shift
kind=general
onnx='onnx_none("has no ONNX form yet")'
differentiable=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --elementwise)
      [[ $# -ge 2 && ($2 == unary || $2 == binary) ]] || usage
      kind=$2
      shift 2
      ;;
    --onnx)
      [[ $# -ge 2 && $2 =~ ^[A-Z][A-Za-z0-9]*$ ]] || usage
      onnx="onnx(\"$2\")"
      shift 2
      ;;
    --not-differentiable)
      differentiable=0
      shift
      ;;
    *) usage ;;
  esac
done
[[ $name =~ ^[a-z][a-z0-9_]*$ ]] || { echo "$0: NAME must be snake_case: $name" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
ops_def=$root/include/ag/ops.def
scalar_ops=$root/runtime/ops/scalar_ops.h
gradients=$root/runtime/ops/gradients_elementwise.cpp
op_file=$root/runtime/ops/library/$name.cpp
ops_h=$root/include/ag/ops.h
test=$root/tests/runtime/op_cases.cpp

id=$(echo "$name" | sed -E 's/(^|_)([a-z0-9])/\U\2/g')
functor=${id}Op
gradient=grad_$name
[[ $differentiable == 1 ]] || gradient=not_differentiable
if grep -q "^AG_\(ELEMENTWISE_\)\?OP($id," "$ops_def" || grep -q "\"$name\"" "$ops_def" ||
  [[ -e $op_file ]]; then
  echo "$0: ops.def already has $id or \"$name\" (or $op_file exists)" >&2
  exit 1
fi

# insert_after FILE PATTERN TEXT: TEXT after the last line matching PATTERN.
insert_after() {
  local file=$1 pattern=$2 text=$3 line
  line=$(grep -n -E "$pattern" "$file" | tail -1 | cut -d: -f1)
  [[ -n $line ]] || { echo "$0: no line matching '$pattern' in $file" >&2; exit 1; }
  TEXT=$text awk -v n="$line" '{ print } NR == n { print ENVIRON["TEXT"] }' "$file" >"$file.new"
  mv "$file.new" "$file"
}
# insert_before FILE PATTERN TEXT: TEXT before the first line matching PATTERN.
insert_before() {
  local file=$1 pattern=$2 text=$3 line
  line=$(grep -n -E "$pattern" "$file" | head -1 | cut -d: -f1)
  [[ -n $line ]] || { echo "$0: no line matching '$pattern' in $file" >&2; exit 1; }
  TEXT=$text awk -v n="$line" 'NR == n { print ENVIRON["TEXT"] } { print }' "$file" >"$file.new"
  mv "$file.new" "$file"
}

stub_error="\"$name: not implemented yet (a tools/new-op.sh stub)\""
changed=()

case $kind in
  unary | binary)
    if [[ $kind == unary ]]; then
      arity=1 infer_fn=infer_unary_numeric params="T" call='x[0]'
    else
      arity=2 infer_fn=infer_binary_numeric params="T, T" call='x[0], x[1]'
    fi
    insert_after "$ops_def" "^AG_ELEMENTWISE_OP\(\w+, \"\w+\", $arity," \
      "AG_ELEMENTWISE_OP($id, \"$name\", $arity, $infer_fn, kernel_$name, $functor, $gradient, $onnx, $kind($name))"
    insert_before "$scalar_ops" '^} +// namespace ag::ops::scalar' \
      "// TODO(new-op.sh): $name's arithmetic on one element; Numeric is the dtypes it
// supports (Floating, BoolOnly, IntegerOnly, Any), matching $infer_fn in ops.def.
struct $functor : Numeric {
  template <class T>
  T operator()($params) const {
    throw InternalError($stub_error);
  }
};
"
    changed+=("$scalar_ops")
    if [[ $kind == unary ]]; then
      insert_after "$test" '^  add_unary\(c, .*\);$' \
        "  // TODO(new-op.sh): the dtypes $name supports.
  add_unary(c, \"$name\", ag::$name, kNumeric);"
    else
      insert_after "$test" '^  add_binary\(c, .*\);$' \
        "  // TODO(new-op.sh): the dtypes $name supports.
  add_binary(c, \"$name\", ag::$name, kNumeric);"
    fi
    ;;
  general)
    insert_before "$ops_def" '^#ifdef AG_OPS_DEF_DEFAULT_ELEMENTWISE_OP' \
      "// TODO(new-op.sh): move to its section; arity, attrs and flags.
AG_OP($id, \"$name\", 1, infer_$name, kernel_$name, kNone, $gradient, $onnx)
"
    gradient_stub=""
    [[ $differentiable == 1 ]] && gradient_stub="
// TODO(new-op.sh): $name's gradient with the public ops (one per input; an
// undefined tensor for none), or mark the op not_differentiable in ops.def.
std::vector<Tensor> grad_$name(const GradContext&) {
  throw InternalError($stub_error);
}
"
    mkdir -p "$(dirname "$op_file")"
    cat >"$op_file" <<EOT
// $name: TODO(new-op.sh): what it computes, and its TensorFlow namesake.
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"

namespace ag::ops {

// TODO(new-op.sh): $name's output dtype and shape, and its errors.
ValueType infer_$name(const InferContext&) {
  throw InternalError($stub_error);
}

// TODO(new-op.sh): $name's kernel.
void kernel_$name(const KernelContext&) {
  throw InternalError($stub_error);
}
$gradient_stub
}  // namespace ag::ops

namespace ag::api {

Tensor $name(const Tensor& x, CallSite site) {
  return ops::apply(ops::OpId::$id, {x}, {}, site);
}

}  // namespace ag::api
EOT
    changed+=("$op_file" "$ops_h")
    insert_before "$ops_h" '^} +// namespace api' "// TODO(new-op.sh): what $name computes.
Tensor $name(const Tensor& x, CallSite site = CallSite::current());
"
    insert_before "$test" '^  return c;$' \
      "  // TODO(new-op.sh): $name's inputs, dtypes and the cases that reach each branch of its kernel.
  c.push_back({\"$name\", kAll, samples({{2, 3}}), [](const Tensors& x) { return ag::$name(x[0]); }});"
    ;;
esac
if [[ $differentiable == 1 && $kind != general ]]; then
  insert_before "$gradients" '^} +// namespace ag::ops$' \
    "// TODO(new-op.sh): $name's gradient with the public ops (one per input; an
// undefined tensor for none), or mark the op not_differentiable in ops.def.
Grads grad_$name(const GradContext&) {
  throw InternalError($stub_error);
}
"
  changed+=("$gradients")
fi
changed+=("$ops_def" "$test")

if command -v clang-format-19 >/dev/null; then
  for f in "${changed[@]}"; do
    [[ $f == *.def ]] || clang-format-19 -i "$f"
  done
fi
echo "new op $id (\"$name\"); changed:"
for f in "${changed[@]}"; do echo "  ${f#"$root"/}"; done
echo "Its equivalence case fails until the stubs are written."
[[ $kind != general ]] || echo "Run cmake (or tools/build.sh) once: the build globs runtime/ops/library/."

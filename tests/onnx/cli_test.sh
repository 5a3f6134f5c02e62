#!/usr/bin/env bash
# ag-onnx on ONNX's node tests: info, run, check and dot print what
# they should, and errors exit 1 (model) or 2 (usage) with a message.
# usage: cli_test.sh AG_ONNX NODE_TESTS_DIR
set -u
tool=$1
add=$2/test_add
if_model=$2/test_if/model.onnx
failures=0
expect() {  # expect NAME WANT_EXIT PATTERN -- command...
  local name=$1 want=$2 pattern=$3
  shift 4
  local out code
  out=$("$@" 2>&1)
  code=$?
  if [[ $code != "$want" ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: exit $code (want $want), output:"
    sed 's/^/  /' <<<"$out" | head -20
    failures=$((failures + 1))
  fi
}
expect info 0 '^test_add\(x: TensorSpec\(shape=\(3, 4, 5\), dtype=float32\), y: .*\) -> \(sum\)$' -- \
  "$tool" info "$add/model.onnx"
expect info-graph 0 "^\['x', 'y'\] -> sum/add$" -- "$tool" info "$add/model.onnx"
thresholded=$2/test_thresholdedrelu/model.onnx
expect info-optimised 0 "^\['x', 'Const', 'Const_1'\] -> fused \{y/greater, y/where\}$" -- \
  "$tool" info "$thresholded"
expect info-plan 0 '^plan: 1 step \(1 fused, 0 scalar, 0 flat\), 0 buffers, 0 in place, 0 views, 0 loops' -- \
  "$tool" info "$thresholded"
expect run 0 '^sum = ag::Tensor\(' -- \
  "$tool" run "$add/model.onnx" "$add/test_data_set_0/input_0.pb" "$add/test_data_set_0/input_1.pb"
expect run-arity 1 'test_add takes 2 inputs, but 1 were given' -- \
  "$tool" run "$add/model.onnx" "$add/test_data_set_0/input_0.pb"
expect check 0 'valid \(checker and full shape inference\)' -- "$tool" check "$add/model.onnx"
expect dot 0 'n[0-9]+ \[label="res/If\\nIf"' -- "$tool" dot "$if_model"
expect dot-optimized 0 'n[0-9]+ \[label="fused\\nFused\\ny/greater, y/where"' -- \
  "$tool" dot --optimized "$thresholded"
expect not-a-model 1 'not (an|a valid) ONNX model' -- "$tool" info "$add/test_data_set_0/input_0.pb"
expect unsupported 1 "Bernoulli node 'y': op type 'Bernoulli' is not supported" -- \
  "$tool" info "$2/test_bernoulli/model.onnx"
expect usage 2 'A subcommand is required' -- "$tool"
[[ $failures == 0 ]] && echo "ag-onnx: all cases pass"
exit $((failures > 0))

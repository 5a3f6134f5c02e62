#!/usr/bin/env bash
# Regenerates docs/onnx.md: ONNX's conformance suites (Debian's
# libonnx-testdata) run through ag::onnx::load, counted per op type.
#
# usage: tools/onnx-report.sh [BUILD_DIR]   (BUILD_DIR defaults to build)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
runner=$build/tests/onnx/onnx_conformance
[[ -x $runner ]] || { echo "no $runner; build it first (tools/build.sh --target onnx_conformance)" >&2; exit 2; }
data=/usr/share/libonnx-testdata/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

out=$repo/docs/onnx.md
{
  sed -n '1,/^<!-- generated below/p' "$out"
  for suite in node pytorch-converted pytorch-operator simple; do
    summary=$(OPENBLAS_NUM_THREADS=1 "$runner" --suite "$data/$suite" --report "$work/$suite.md" \
              --known-failures "$repo/tests/onnx/known_failures/$suite.txt" | tail -1)
    echo
    echo "### $suite"
    echo
    echo "$summary"
    echo
    cat "$work/$suite.md"
  done
} > "$work/onnx.md"
mv "$work/onnx.md" "$out"
echo "wrote $out"

#!/usr/bin/env bash
# `agc check` must find nothing in our own code: every examples/**/*.cpp gives
# no finding at all and exit code 0 (flags from the build's
# compile_commands.json, plus -I of its folder), when the build configured the
# examples. Of the transpiler's golden inputs that agc accepts, only those whose
# expected.stderr has findings run here, where `agc check` must report exactly
# them: `agc transpile` runs the same checks first, and transpiler.golden.*
# already require no finding of the others.
#
# usage: no_false_positives.sh AGC REPO BUILD_DIR -- COMPILER_FLAGS...
set -u
agc=$1
repo=$(cd "$2" && pwd)
build=$3
shift 3
[[ ${1:-} == -- ]] && shift
flags=("$@")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
diagnostics() {
  grep -E '^[^ ][^:]*:[0-9]+:[0-9]+: (warning|error|note): ' "$1" | sed "s|$repo/|<repo>/|g" || true
}

status=0
checked=0
for case_dir in "$repo"/tests/transpiler/golden/*/; do
  [[ -f $case_dir/expected.exit && $(cat "$case_dir/expected.exit") == 0 ]] || continue
  diagnostics "$case_dir/expected.stderr" >"$work/expected"
  [[ -s $work/expected ]] || continue
  (cd "$case_dir" && "$agc" check input.cpp -- -I. "${flags[@]}") 2>"$work/stderr"
  code=$?
  diagnostics "$work/stderr" >"$work/actual"
  if [[ $code != 0 ]] || ! diff -u "$work/expected" "$work/actual"; then
    echo "FAIL: golden/$(basename "$case_dir"): exit code $code, findings above"
    cat "$work/stderr"
    status=1
  fi
  checked=$((checked + 1))
done

# The examples need the flags of their targets (quickstart's defines): check
# them when the build configured them (AG_BUILD_EXAMPLES).
examples_configured=0
[[ -f $build/compile_commands.json ]] &&
  grep -q '/examples/quickstart/main.cpp"' "$build/compile_commands.json" && examples_configured=1
[[ $examples_configured == 0 ]] && echo "examples are not configured in $build: skipped"
while IFS= read -r file; do
  [[ $examples_configured == 1 ]] || break
  dir=$(dirname "$file")
  database=(-p "$build")
  "$agc" check "${database[@]}" "$file" -- -I"$dir" -I"$repo/examples/common" "${flags[@]}" \
    2>"$work/stderr"
  code=$?
  if [[ $code != 0 ]] || [[ -n $(diagnostics "$work/stderr") ]]; then
    echo "FAIL: ${file#"$repo"/}: exit code $code"
    cat "$work/stderr"
    status=1
  fi
  checked=$((checked + 1))
done < <(find "$repo/examples" -name '*.cpp' | sort)

echo "checked $checked files"
exit $status

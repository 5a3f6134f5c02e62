#!/usr/bin/env bash
# `agc check` must find nothing in our own code: every examples/**/*.cpp gives
# no finding at all and exit code 0 (flags from the build's
# compile_commands.json, plus -I of its folder), when the build configured the
# examples. (The transpiler's golden inputs need no run here: `agc transpile`
# runs the same checks first, and transpiler.golden.* compare its findings with
# each case's expected.stderr.)
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

#!/usr/bin/env bash
# Runs one `agc check` test case: agc check on CASE.cpp (from its directory)
# must print exactly the diagnostic lines of CASE.expected (warning, error and
# note lines, file names without directories) and exit with the code in
# CASE.exit (0 when there is no such file). CASE.args, when present, holds
# extra agc arguments (e.g. --werror, --checks=...), whitespace separated.
#
# usage: run_check_test.sh AGC CASE.cpp [--update] -- COMPILER_FLAGS...
set -u
agc=$1
source_file=$2
shift 2
update=0
if [[ ${1:-} == --update ]]; then update=1; shift; fi
[[ ${1:-} == -- ]] && shift
flags=("$@")

case_dir=$(cd "$(dirname "$source_file")" && pwd)
name=$(basename "$source_file" .cpp)
cd "$case_dir" || exit 2
args=()
[[ -f $name.args ]] && read -r -a args <<<"$(tr '\n' ' ' <"$name.args")"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$agc" check "${args[@]}" "$name.cpp" -- -I"$case_dir" "${flags[@]}" 2>"$work/stderr"
code=$?
# The diagnostic lines, with directories stripped from the file names.
grep -E '^[^ ][^:]*:[0-9]+:[0-9]+: (warning|error|note): ' "$work/stderr" |
  sed -E 's#^([^:]*/)?([^/:]+:[0-9]+:[0-9]+: )#\2#' >"$work/actual"

expected_code=0
[[ -f $name.exit ]] && expected_code=$(cat "$name.exit")
if [[ $update == 1 ]]; then
  cp "$work/actual" "$name.expected"
  if [[ $code == 0 ]]; then rm -f "$name.exit"; else echo "$code" >"$name.exit"; fi
  exit 0
fi

status=0
if ! diff -u "$name.expected" "$work/actual"; then
  echo "FAIL: findings differ (tools/update-check-goldens.sh regenerates after a deliberate change)"
  status=1
fi
if [[ $code != "$expected_code" ]]; then
  echo "FAIL: exit code $code, expected $expected_code"
  status=1
fi
if [[ $status != 0 ]]; then
  echo "--- full output of agc check:"
  cat "$work/stderr"
fi
exit $status

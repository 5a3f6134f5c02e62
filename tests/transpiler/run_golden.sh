#!/usr/bin/env bash
# Runs one golden test: agc on CASE/input.cpp must give CASE/expected.ag.cpp
# (absent when agc must fail), CASE/expected.stderr and CASE/expected.exit.
# A generated file must also parse (clang-19 -fsyntax-only) with the same flags,
# unless --compiled-by-build says that the build compiles it (an end-to-end case).
#
# usage: run_golden.sh AGC CASE_DIR [--update] [--compiled-by-build] -- COMPILER_FLAGS...
set -u
agc=$1
case_dir=$2
shift 2
update=0
syntax_check=1
while [[ ${1:-} == --* && ${1:-} != -- ]]; do
  case $1 in
    --update) update=1 ;;
    --compiled-by-build) syntax_check=0 ;;
    *) echo "run_golden.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ ${1:-} == -- ]] && shift
flags=("$@")

repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$case_dir" || exit 1

"$agc" transpile input.cpp -o "$work" -- "${flags[@]}" 2>"$work/stderr.raw"
code=$?
# Diagnostics in headers name them relative to the repository.
sed "s|$repo/|<repo>/|g" "$work/stderr.raw" >"$work/stderr"

if [[ $update == 1 ]]; then
  echo "$code" >expected.exit
  cp "$work/stderr" expected.stderr
  if [[ -f $work/input.ag.cpp ]]; then cp "$work/input.ag.cpp" expected.ag.cpp; else rm -f expected.ag.cpp; fi
  exit 0
fi

status=0
if [[ $code != "$(cat expected.exit)" ]]; then
  echo "FAIL: exit code $code, expected $(cat expected.exit)"
  status=1
fi
if ! diff -u expected.stderr "$work/stderr"; then
  echo "FAIL: diagnostics differ"
  status=1
fi
if [[ -f expected.ag.cpp ]]; then
  if ! diff -u expected.ag.cpp "$work/input.ag.cpp"; then
    echo "FAIL: generated code differs (tools/update-goldens.sh regenerates after a deliberate change)"
    status=1
  elif [[ $syntax_check == 1 ]] && ! clang-19 -fsyntax-only -Wall -Wno-unused-variable -I. "${flags[@]}" "$work/input.ag.cpp"; then
    echo "FAIL: generated code does not compile"
    status=1
  fi
elif [[ -f $work/input.ag.cpp ]]; then
  echo "FAIL: agc wrote output, but none was expected"
  status=1
fi
exit $status

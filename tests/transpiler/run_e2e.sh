#!/usr/bin/env bash
# Runs the eager and the staged (agc-transpiled) build of one golden input:
# both must exit 0 and print the same stdout.
#
# usage: run_e2e.sh EAGER_EXE STAGED_EXE
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for variant in eager staged; do
  exe=$1
  shift
  "$exe" >"$work/$variant.out" 2>"$work/$variant.err"
  code=$?
  if [[ $code != 0 ]]; then
    echo "FAIL: the $variant build exited $code"
    sed 's/^/  stderr: /' "$work/$variant.err"
    status=1
  fi
done
if ! diff -u --label eager --label staged "$work/eager.out" "$work/staged.out"; then
  echo "FAIL: the eager and staged builds print different results"
  status=1
fi
[[ $status == 0 ]] && { echo "eager and staged agree:"; cat "$work/eager.out"; }
exit $status

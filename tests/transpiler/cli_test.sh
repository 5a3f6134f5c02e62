#!/usr/bin/env bash
# Command-line tests for agc: exit codes, -o/-i/--output, byte-identical
# passthrough, idempotence, compile_commands.json, and #line mapping checked
# by compiling generated code that has a deliberate error.
#
# usage: cli_test.sh AGC TESTS_DIR -- COMPILER_FLAGS...
set -u
agc=$1
tests=$2
shift 2
[[ ${1:-} == -- ]] && shift
flags=("$@")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
exit_code() {  # exit_code EXPECTED COMMAND...: runs COMMAND, compares its exit code
  local expected=$1
  shift
  "$@" >"$work/last.out" 2>"$work/last.err"
  local code=$?
  [[ $code == "$expected" ]] || { echo "  exit $code, expected $expected"; cat "$work/last.err"; return 1; }
}

cp "$tests/golden/if/input.cpp" "$work/model.cpp"
cp "$tests/cli/plain.cpp" "$tests/cli/line_mapping.cpp" "$work/"
cd "$work" || exit 1

# --- exit codes and usage ---------------------------------------------------
check "--version exits 0" exit_code 0 "$agc" --version
check "--help exits 0" exit_code 0 "$agc" --help
check "--help shows examples" grep -q "agc transpile model.cpp" last.out
check "transpile needs -o or -i" exit_code 2 "$agc" transpile model.cpp -- "${flags[@]}"
check "-o and -i exclude each other" exit_code 2 "$agc" transpile model.cpp -o out -i -- "${flags[@]}"
check "missing input file exits 2" exit_code 2 "$agc" transpile missing.cpp -o out -- "${flags[@]}"
check "unknown subcommand exits 2" exit_code 2 "$agc" frobnicate
check "unknown compiler flag exits 2" exit_code 2 "$agc" transpile model.cpp -o bad -- "${flags[@]}" -fno-such-flag
check "no output after a tool failure" test ! -e bad/model.ag.cpp
# C++17 or older: refused before parsing, naming the flag seen.
check "C++17 exits 2" exit_code 2 "$agc" transpile model.cpp -o old -- "${flags[@]}" -std=c++17
check "C++17: says C++20 is needed and the flag" grep -q "is compiled as C++17 or older ('-std=c++17'); autograph-cpp needs C++20" last.err
check "C++17: no output" test ! -e old/model.ag.cpp
check "agc check on C++17 exits 2" exit_code 2 "$agc" check model.cpp -- "${flags[@]}" -std=gnu++17
check "C++ errors exit 1" exit_code 1 "$agc" transpile "$tests/golden/error_must_initialize/input.cpp" -o out -- "${flags[@]}"
# Clang's error limit stops at errors in the user's code: still exit 1.
for i in $(seq 1 30); do echo "int f$i() { return undefined_$i; }"; done >many_errors.cpp
check "too many errors exits 1" exit_code 1 "$agc" transpile many_errors.cpp -o out -- "${flags[@]}"
check "too many errors: the limit was hit" grep -q "too many errors emitted" last.err
check "agc check: too many errors exits 1" exit_code 1 "$agc" check many_errors.cpp -- "${flags[@]}"

# agc check reports what transpile rejects: every error golden fails both,
# with the same errors (transpile's are the golden's expected.stderr, which
# transpiler.golden.<case> checks).
repo=$(cd "$tests/../.." && pwd)
for case_dir in "$tests"/golden/error_*/; do
  name=$(basename "$case_dir")
  check "agc check exits 1 on $name" exit_code 1 bash -c "cd '$case_dir' && '$agc' check input.cpp -- ${flags[*]@Q}"
  check "agc check gives transpile's errors on $name" \
    diff <(grep "error:" "$case_dir/expected.stderr") <(sed "s|$repo/|<repo>/|g" last.err | grep "error:")
done

# --- compile_commands.json ----------------------------------------------------
mkdir -p build
printf '[{"directory": "%s", "file": "%s/model.cpp", "command": "g++ %s -c model.cpp -o model.o"}]\n' \
  "$work" "$work" "${flags[*]}" >build/compile_commands.json
check "-p reads compile_commands.json" exit_code 0 "$agc" transpile model.cpp -o from_db -p build
mkdir -p badbuild
printf '[{"directory": "%s", "file": "%s/model.cpp", "command": "g++ %s -fconcepts-diagnostics-depth=2 -fno-such-gcc-flag -c model.cpp"}]\n' \
  "$work" "$work" "${flags[*]}" >badbuild/compile_commands.json
check "unknown flag from compile_commands.json exits 2" exit_code 2 "$agc" transpile model.cpp -o bad2 -p badbuild
check "missing build dir exits 2" exit_code 2 "$agc" transpile model.cpp -o bad3 -p no_such_dir

# --- outputs --------------------------------------------------------------------
check "-o writes NAME.ag.cpp" exit_code 0 "$agc" transpile model.cpp plain.cpp -o out -- "${flags[@]}"
check "output exists" test -f out/model.ag.cpp
check "same output with -p" cmp out/model.ag.cpp from_db/model.ag.cpp
check "no marked function: byte-identical" cmp plain.cpp out/plain.ag.cpp
check "--output names the file" exit_code 0 "$agc" transpile model.cpp -o named --output custom.cpp -- "${flags[@]}"
check "--output file exists" cmp out/model.ag.cpp named/custom.cpp
check "idempotent: second run" exit_code 0 "$agc" transpile out/model.ag.cpp -o again -- "${flags[@]}"
check "idempotent: identical" cmp out/model.ag.cpp again/model.ag.ag.cpp

cp model.cpp inplace.cpp
check "-i exits 0" exit_code 0 "$agc" transpile inplace.cpp -i -- "${flags[@]}"
check "-i writes the converted text" diff <(tail -n +3 out/model.ag.cpp | grep -v '^#line') \
  <(tail -n +3 inplace.cpp | grep -v '^#line')
check "-i leaves no temporary file" test -z "$(ls | grep -E '\.tmp$')"
cp plain.cpp plain_inplace.cpp
touch -d '2000-01-01' plain_inplace.cpp
check "-i on an unmarked file" exit_code 0 "$agc" transpile plain_inplace.cpp -i -- "${flags[@]}"
check "-i does not touch an unchanged file" test "$(stat -c %Y plain_inplace.cpp)" = "$(date -d 2000-01-01 +%s)"

# --- #line mapping: compile the output with a deliberate error ------------------
check "transpile line_mapping.cpp" exit_code 0 "$agc" transpile line_mapping.cpp -o lines -- "${flags[@]}"
check "output has #line directives" grep -q '^#line' lines/line_mapping.ag.cpp
clang-19 -fsyntax-only -DINJECT_ERROR "${flags[@]}" lines/line_mapping.ag.cpp 2>clang.err
check "clang-19 maps the error in a staged loop to line 14" grep -q "line_mapping.cpp:14:13: error" clang.err
check "clang-19 maps the error after the function to line 21" grep -q "line_mapping.cpp:21:22: error" clang.err
if command -v g++ >/dev/null; then
  g++ -fsyntax-only -DINJECT_ERROR "${flags[@]}" lines/line_mapping.ag.cpp 2>gcc.err
  check "g++ maps the error to line 14" grep -q "line_mapping.cpp:14:13: error" gcc.err
fi
check "without the error, the output compiles" clang-19 -fsyntax-only "${flags[@]}" lines/line_mapping.ag.cpp

# --- show -----------------------------------------------------------------------
check "show exits 0" exit_code 0 "$agc" show model.cpp -- "${flags[@]}"
check "show prints staged code" grep -q "ag::if_stmt" last.out
check "show has no #line" test -z "$(grep '^#line' last.out)"
check "show --function" exit_code 0 "$agc" show model.cpp --function sign -- "${flags[@]}"
check "show --function prints the impl" grep -q "agc_impl_sign" last.out
check "show --function unknown exits 2" exit_code 2 "$agc" show model.cpp --function nope -- "${flags[@]}"

# --- never crash on odd inputs ----------------------------------------------------
: >empty.cpp
check "empty file" exit_code 0 "$agc" transpile empty.cpp -o odd -- "${flags[@]}"
printf '#include <ag/ag.h>\nAG_FUNCTION ag::Tensor g(ag::Tensor x);\n' >decl_only.cpp
check "marked declaration without body" exit_code 0 "$agc" transpile decl_only.cpp -o odd -- "${flags[@]}"
check "declaration only: byte-identical" cmp decl_only.cpp odd/decl_only.ag.cpp

echo "$failures failure(s)"
[[ $failures == 0 ]]

#!/usr/bin/env bash
# `agc check` command line: --list-checks, exit codes, --format=json, SARIF
# 2.1.0 validated with python3-jsonschema (see schema/README.md), and the
# checks run by `agc transpile`.
#
# usage: cli_test.sh AGC CHECKS_DIR -- COMPILER_FLAGS...
set -u
agc=$1
dir=$(cd "$2" && pwd)
shift 2
[[ ${1:-} == -- ]] && shift
flags=("$@")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() {
  echo "FAIL: $*"
  status=1
}
# expect_exit CODE DESCRIPTION COMMAND...: runs COMMAND, stdout and stderr to
# $work/out and $work/err.
expect_exit() {
  local want=$1 what=$2
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local code=$?
  if [[ $code != "$want" ]]; then
    fail "$what: exit code $code, expected $want"
    cat "$work/err"
  fi
}

# --list-checks: every check with its summary.
expect_exit 0 "--list-checks" "$agc" check --list-checks
for name in ag-side-effect ag-global-mutation ag-frozen-value ag-unconverted-call ag-tensor-as-bool; do
  grep -qE "^$name +[a-zA-Z]" "$work/out" || fail "--list-checks does not list $name"
done

# Exit codes: 2 for tool failures, 1 for C++ errors and error-level findings.
expect_exit 2 "missing file" "$agc" check "$work/missing.cpp" -- "${flags[@]}"
expect_exit 2 "unknown format" "$agc" check "$dir/cli/werror.cpp" --format=xml -- "${flags[@]}"
expect_exit 2 "no file" "$agc" check -- "${flags[@]}"
printf 'int main() { return undefined_name; }\n' >"$work/broken.cpp"
expect_exit 1 "C++ error" "$agc" check "$work/broken.cpp" -- "${flags[@]}"
mkdir -p "$work/badconfig"
printf 'Checks: [unterminated\n' >"$work/badconfig/.agc.yaml"
cp "$dir/cli/werror.cpp" "$work/badconfig/input.cpp"
expect_exit 2 "malformed .agc.yaml" "$agc" check "$work/badconfig/input.cpp" -- "${flags[@]}"
grep -q "agc: error: cannot parse" "$work/err" || fail "malformed .agc.yaml: no message"
expect_exit 0 "warnings only" "$agc" check "$dir/cli/werror.cpp" -- "${flags[@]}"
expect_exit 1 "error-level findings" "$agc" check "$dir/ag-tensor-as-bool/positive.cpp" -- "${flags[@]}"

# --format=json on stdout: the findings of the text output, nothing on stderr.
expect_exit 0 "json" "$agc" check --format=json "$dir/ag-side-effect/positive.cpp" -- "${flags[@]}"
grep -q "warning:" "$work/err" && fail "json: findings printed as text too"
want=$(grep -c ': warning: ' "$dir/ag-side-effect/positive.expected")
python3 - "$work/out" "$want" <<'PY' || fail "json: unexpected document"
import json, sys
doc = json.load(open(sys.argv[1]))
findings = doc["findings"]
assert doc["version"] == 1
assert len(findings) == int(sys.argv[2]), len(findings)
for f in findings:
    assert f["check"] == "ag-side-effect" and f["level"] == "warning", f
    assert f["location"]["file"] == "positive.cpp" or f["location"]["file"].endswith("/positive.cpp"), f
    assert f["location"]["line"] > 0 and f["location"]["column"] > 0 and f["notes"], f
assert any(fix["replacement"].startswith("ag::print(") for f in findings for fix in f["fixes"])
PY

# --format=sarif -o FILE: valid SARIF 2.1.0, one result per finding, notes as
# relatedLocations; exit code 1 for the tensor-as-bool errors.
expect_exit 1 "sarif" "$agc" check --format=sarif -o "$work/sarif/agc.sarif" \
  "$dir/ag-frozen-value/positive.cpp" "$dir/ag-tensor-as-bool/positive.cpp" -- "${flags[@]}"
python3 - "$work/sarif/agc.sarif" "$dir/schema" <<'PY' || fail "sarif: invalid log"
import json, os, sys
import jsonschema
log = json.load(open(sys.argv[1]))
official = os.path.join(sys.argv[2], "sarif-schema-2.1.0.json")
path = official if os.path.exists(official) else os.path.join(sys.argv[2], "sarif-2.1.0-subset.schema.json")
print("validating against", os.path.basename(path))
schema = json.load(open(path))
validator = jsonschema.validators.validator_for(schema)
validator.check_schema(schema)
validator(schema, format_checker=validator.FORMAT_CHECKER).validate(log)
run = log["runs"][0]
driver = run["tool"]["driver"]
assert driver["name"] == "agc"
rules = {rule["id"] for rule in driver["rules"]}
assert {"ag-frozen-value", "ag-tensor-as-bool"} <= rules, rules
assert all(rule["shortDescription"]["text"] for rule in driver["rules"])
results = run["results"]
assert {r["ruleId"] for r in results} == {"ag-frozen-value", "ag-tensor-as-bool"}
for r in results:
    assert r["ruleId"] in rules and r["level"] in ("warning", "error") and r["message"]["text"]
    location = r["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("positive.cpp"), location
    assert location["region"]["startLine"] > 0 and location["region"]["startColumn"] > 0
    assert r["relatedLocations"], r
assert any(r["level"] == "error" for r in results)
PY

# agc transpile runs the checks first: warnings pass, errors fail.
expect_exit 0 "transpile with warnings" "$agc" transpile "$dir/ag-side-effect/positive.cpp" \
  -o "$work/gen" -- "${flags[@]}"
grep -q "\[ag-side-effect\]" "$work/err" || fail "transpile: no ag-side-effect finding"
[[ -f $work/gen/positive.ag.cpp ]] || fail "transpile: no output"
expect_exit 1 "transpile with errors" "$agc" transpile "$dir/ag-tensor-as-bool/positive.cpp" \
  -o "$work/gen" -- "${flags[@]}"
grep -q "\[ag-tensor-as-bool\]" "$work/err" || fail "transpile: no ag-tensor-as-bool finding"
expect_exit 0 "transpile --checks=-*" "$agc" transpile --checks=-* \
  "$dir/ag-tensor-as-bool/positive.cpp" -o "$work/gen" -- "${flags[@]}"
grep -q "\[ag-" "$work/err" && fail "transpile --checks=-*: findings reported"

[[ $status == 0 ]] && echo "all agc check CLI tests passed"
exit $status

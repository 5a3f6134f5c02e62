#!/usr/bin/env bash
# Scaffolds a new graph optimisation pass, as tools/new-op.sh does for ops.
# Given foo-bar it creates
#   runtime/passes/foo_bar.cpp              the pass: a header comment (needs,
#                                           guarantees) and a function that
#                                           changes nothing yet
#   a line in runtime/passes/passes.def     the registry: the pipeline runs the
#                                           pass, passes.h declares it, and
#                                           AG_PRINT_AFTER=foo-bar prints after it
#   tests/runtime/pass_foo_bar_test.cpp     an LLVM-style test (a body before as
#                                           text, the pass, the body after) that
#                                           fails until the pass does its work
# Then: write the rewrite and its header comment, the before and after texts
# (AG_PRINT_AFTER or graph::to_text print them), the bodies the pass must leave
# alone; build runtime_tests and run --gtest_filter='FooBar.*'.
# docs/architecture.md, "Passes", says what each part is for.
#
# usage: tools/new-pass.sh NAME "needs ...; guarantees ..." [--phase loop-prepare|round|final]
#                          [--function NAME]
#   --phase     where the pipeline runs it (passes.def explains the phases;
#               default: round, the fixed-point rounds, where it goes last
#               before dead-code elimination)
#   --function  the C++ function (default: NAME with '_' for '-')
set -euo pipefail

usage() {
  echo "usage: $0 NAME \"needs ...; guarantees ...\" [--phase loop-prepare|round|final] [--function NAME]" >&2
  echo "  NAME: lowercase words joined by '-', e.g. foo-bar (runtime/passes/foo_bar.cpp)" >&2
  exit 2
}

[[ $# -ge 2 ]] || usage
name=$1
summary=$2
shift 2
phase=round
function=${name//-/_}
while [[ $# -gt 0 ]]; do
  case $1 in
    --phase)
      [[ $# -ge 2 && ($2 == loop-prepare || $2 == round || $2 == final) ]] || usage
      phase=$2
      shift 2
      ;;
    --function)
      [[ $# -ge 2 && $2 =~ ^[a-z][a-z0-9_]*$ ]] || usage
      function=$2
      shift 2
      ;;
    *) usage ;;
  esac
done
[[ $name =~ ^[a-z][a-z0-9]*(-[a-z0-9]+)*$ ]] || usage
[[ $summary != *'"'* && $summary != *'\'* ]] || { echo "$0: the summary may not hold '\"' or '\\'" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
file=${name//-/_}
pass_cpp=$root/runtime/passes/$file.cpp
registry=$root/runtime/passes/passes.def
test_cpp=$root/tests/runtime/pass_${file}_test.cpp
# foo-bar -> FooBar, the test suite's name.
suite=$(echo "$name" | sed -E 's/(^|-)([a-z0-9])/\U\2/g')
macro=AG_PASS_$(echo "$phase" | tr 'a-z-' 'A-Z_')

if [[ -e $pass_cpp || -e $test_cpp ]] || grep -q "(\"$name\"," "$registry" ||
   grep -q "^AG_PASS_[A-Z_]*(\"[^\"]*\", $function," "$registry"; then
  echo "$0: $name ($file.cpp, function $function) exists already" >&2
  exit 1
fi

cat >"$pass_cpp" <<EOF
// $summary
//
// TODO: what the pass does and why (the case it improves, with an example).
//
// Needs: TODO: what the body must be ("a valid body", "nested bodies
// optimised", "While bodies as traced").
// Guarantees: TODO: exactly what changes and what stays: names, node order,
// placeholders and outputs (passes.h lists the invariants every pass keeps).

#include "passes/passes.h"

namespace ag::passes {

void $function(graph::Body& body) {
  // TODO: the rewrite. Nothing changes yet, so the test fails.
  (void)body;
}

}  // namespace ag::passes
EOF

# The new line goes after the last line of its phase (a round pass: before
# dead-code elimination, which removes what it leaves unused in the same
# round), or before the #undefs.
line="$macro(\"$name\", $function, kAnyTarget, \"$summary\")"
tmp=$(mktemp)
awk -v macro="$macro(" -v line="$line" '
  { lines[NR] = $0 }
  index($0, macro) == 1 { last = NR }
  index($0, "AG_PASS_ROUND(\"dead-code-elimination\",") == 1 { dce = NR }
  /^#undef AG_PASS_LOOP_PREPARE/ && !undef { undef = NR }
  END {
    at = macro == "AG_PASS_ROUND(" && dce ? dce - 1 : last ? last : undef - 1
    for (i = 1; i <= NR; ++i) {
      print lines[i]
      if (i == at) print line
    }
  }' "$registry" >"$tmp"
mv "$tmp" "$registry"

cat >"$test_cpp" <<EOF
// $name (passes/$file.cpp), LLVM-style: a body before as text
// (graph/graph_text.h), the one pass, the body after.
#include <gtest/gtest.h>

#include <string>

#include "graph/graph_text.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

// \`before\` after the pass; \`before\` must be in printed form, so that what
// the test states is what the pass gets.
std::string after_pass(const std::string& before) {
  EXPECT_EQ(graph::to_text(graph::parse_text(before)), before) << "not in printed form";
  return run_passes_on_text("$name", before);
}

// TODO: a body the pass changes (a traced one: AG_PRINT_AFTER=$name prints
// it), and what it becomes; then one test per case it must leave alone.
TEST($suite, TodoRewritesTheCaseItIsFor) {
  EXPECT_EQ(after_pass("x = Placeholder : float32[3]\n"
                       "neg = neg(x) : float32[3]\n"
                       "Identity = Identity(neg) : float32[3]\n"
                       "inputs (x)\n"
                       "outputs (Identity)\n"),
            "TODO: the body after the pass\n");
}

}  // namespace
}  // namespace ag::passes
EOF

echo "created runtime/passes/$file.cpp and tests/runtime/pass_${file}_test.cpp"
echo "added $name ($function, $phase) to runtime/passes/passes.def"
echo "next: fill in the TODOs; build runtime_tests; run --gtest_filter='$suite.*'"

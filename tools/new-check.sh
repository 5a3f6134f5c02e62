#!/usr/bin/env bash
# Scaffolds a new `agc check` check, in the style of clang-tidy's
# add_new_check.py. Given ag-foo-bar it creates
#   transpiler/checks/FooBarCheck.h and .cpp     a skeleton: registerMatchers + check
#   a line in transpiler/checks/Checks.def       the registry (CMake reads it)
#   tests/checks/ag-foo-bar/positive.cpp and .expected   a positive case that fails
#                                                        until the check reports it
#   tests/checks/ag-foo-bar/negative.cpp and .expected   no finding
#   a section at the end of docs/checks.md
# Then: fill in the check, the tests and the doc section; run
# tools/update-check-goldens.sh on the test files and review the diff.
#
# usage: tools/new-check.sh ag-NAME "one-line summary"
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
name=${1:-}
summary=${2:-"TODO: what it finds, one line"}
if [[ ! $name =~ ^ag-[a-z][a-z0-9]*(-[a-z0-9]+)*$ ]]; then
  echo "usage: $0 ag-NAME [\"summary\"]  (lowercase words joined by '-', e.g. ag-foo-bar)" >&2
  exit 2
fi
# ag-foo-bar -> FooBarCheck
class=$(echo "${name#ag-}" | sed -E 's/(^|-)([a-z0-9])/\U\2/g')Check
checks=$repo/transpiler/checks
tests=$repo/tests/checks/$name
if [[ -e $checks/$class.h || -e $checks/$class.cpp || -e $tests ]] ||
   grep -q "\"$name\"" "$checks/Checks.def"; then
  echo "$name ($class) exists already" >&2
  exit 1
fi

cat >"$checks/$class.h" <<EOT
// $name: $summary
#pragma once

#include "checks/AgCheck.h"

namespace agc {

class $class : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

}  // namespace agc
EOT

cat >"$checks/$class.cpp" <<EOT
// $name. TODO: why the code this check finds behaves differently under
// tracing, and exactly what is reported (see docs/checks.md).
#include "checks/$class.h"

#include "clang/ASTMatchers/ASTMatchers.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

void $class::registerMatchers(MatchFinder& finder) {
  // Matching runs over converted code only (see AgCheck.h).
  finder.addMatcher(callExpr().bind("call"), this);  // TODO: the code to find
}

void $class::check(const MatchFinder::MatchResult& result) {
  const auto* call = result.Nodes.getNodeAs<CallExpr>("call");
  if (!call || !scope().enclosingConverted(*call)) return;
  // TODO: report only what the check is about. The text is lowercase, as
  // Clang's; diag() appends " [$name]".
  // diag(call->getBeginLoc(), "what is wrong; what to do instead") << call->getSourceRange();
}

}  // namespace agc
EOT

echo "AG_CHECK($class, \"$name\", \"$summary\")" >>"$checks/Checks.def"

mkdir -p "$tests"
cat >"$tests/positive.cpp" <<'EOT'
#include <ag/ag.h>

// TODO: code the check must report, one case per reason.
AG_FUNCTION ag::Tensor reported(ag::Tensor x) {
  return ag::tanh(x);
}

int main() {
  reported(ag::constant(1.0));
}
EOT
# The finding this test expects; the skeleton reports nothing, so the test
# fails until the check does. Rewrite it with tools/update-check-goldens.sh.
echo "positive.cpp:5:10: warning: TODO: the finding [$name]" >"$tests/positive.expected"
cat >"$tests/negative.cpp" <<'EOT'
#include <ag/ag.h>

// TODO: code that looks alike but behaves the same under tracing: no finding.
AG_FUNCTION ag::Tensor fine(ag::Tensor x) {
  return x + 1;
}

int main() {
  fine(ag::constant(1.0));
}
EOT
: >"$tests/negative.expected"

cat >>"$repo/docs/checks.md" <<EOT

## $name

**Severity:** warning.

**What it finds.** TODO: $summary.

**Why it matters.** TODO: what happens under tracing.

\`\`\`cpp
// TODO: the positive example
\`\`\`

**The fix.** TODO.
EOT

# A long summary wraps in the header's first comment, as tools/format.sh wants it.
command -v clang-format-19 >/dev/null && clang-format-19 -i "$checks/$class.h" "$checks/$class.cpp"
echo "created transpiler/checks/$class.h, transpiler/checks/$class.cpp"
echo "created tests/checks/$name/{positive,negative}.cpp and .expected"
echo "added $name to transpiler/checks/Checks.def and a section to docs/checks.md"

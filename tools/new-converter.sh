#!/usr/bin/env bash
# Scaffolds a statement converter, as tools/new-op.sh does for ops. Given
# SwitchStmt switch it writes
#   a line in transpiler/analysis/StagedStatements.def   the registry: staging
#       analysis reads the statement's condition and body from it, and
#       ConversionContext::emit sends a staged statement of the class to the
#       converter
#   transpiler/converters/SwitchConverter.cpp   convertSwitch, which rejects the
#       construct at its line until written
#   tests/transpiler/golden/switch/input.cpp    a golden case (expected.* empty:
#       it fails until you write the converter, run
#       tools/update-goldens.sh build switch and review the output)
# Then: write the converter (IfConverter.cpp and LoopConverter.cpp show how a
# converter asks the context for its state and nested statements), re-run
# cmake (new golden folder), build agc and run ctest -R golden.switch.
# transpiler/README.md explains the pipeline.
#
# usage: tools/new-converter.sh CLASS NAME [--condition ACCESSOR] [--body ACCESSOR] [--loop]
#   CLASS   the clang statement class (SwitchStmt)
#   NAME    the construct, lowercase (switch); its converter is <Name>Converter.cpp
#   --condition, --body   CLASS's accessors (default getCond, getBody)
#   --loop  the statement is a loop (break and continue target it)
set -euo pipefail

usage() {
  echo "usage: $0 CLASS NAME [--condition ACCESSOR] [--body ACCESSOR] [--loop]" >&2
  exit 2
}
[[ $# -ge 2 ]] || usage
class=$1 name=$2
shift 2
condition=getCond body=getBody loop=false
while [[ $# -gt 0 ]]; do
  case $1 in
    --condition) [[ $# -ge 2 ]] || usage; condition=$2; shift 2 ;;
    --body) [[ $# -ge 2 ]] || usage; body=$2; shift 2 ;;
    --loop) loop=true; shift ;;
    *) usage ;;
  esac
done
[[ $class =~ ^[A-Z][A-Za-z]*Stmt$ ]] || { echo "$0: CLASS is a clang statement class: $class" >&2; exit 2; }
[[ $name =~ ^[a-z][a-z_]*$ ]] || { echo "$0: NAME is lowercase: $name" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
camel=$(echo "$name" | sed -E 's/(^|_)([a-z])/\U\2/g')
registry=$root/transpiler/analysis/StagedStatements.def
converter=$root/transpiler/converters/${camel}Converter.cpp
function=convert$camel
golden=$root/tests/transpiler/golden/$name
if grep -q "^AG_STAGED_STATEMENT($class," "$registry" || [[ -e $converter || -e $golden ]]; then
  echo "$0: $class, $converter or $golden exists already" >&2
  exit 1
fi

cat >>"$registry" <<EOT
// TODO(new-converter.sh): what a staged $name becomes.
AG_STAGED_STATEMENT($class, "$name", $condition, $body, $loop, $function)
EOT

cat >"$converter" <<EOT
// The staged form of a $name (analysis/StagedStatements.def): TODO(new-converter.sh) what it emits.
#include "converters/ConversionContext.h"

#include "clang/AST/Stmt.h"

namespace agc {

using namespace clang;

Text $function(ConversionContext& ctx, const $class* stmt) {
  // TODO(new-converter.sh): the staged form; until then, a clear rejection.
  ctx.error(stmt->getBeginLoc(), "a $name on a tensor cannot be staged yet");
  return {};
}

}  // namespace agc
EOT

mkdir -p "$golden"
cat >"$golden/input.cpp" <<EOT
// TODO(new-converter.sh): a $name on a tensor condition, staged; its forms
// with break, continue and return; one on a C++ condition, which stays C++.
#include <ag/ag.h>

AG_FUNCTION ag::Tensor ${name}_basic(ag::Tensor x) {
  return x;
}
EOT
: >"$golden/expected.ag.cpp"
: >"$golden/expected.stderr"
echo 0 >"$golden/expected.exit"

command -v clang-format-19 >/dev/null && clang-format-19 -i "$converter" "$golden/input.cpp"
echo "new converter $function for $class; changed:"
for f in "$registry" "$converter" "$golden"; do echo "  ${f#"$root"/}"; done
echo "Its golden case fails until the converter is written and the expected files updated."

#!/usr/bin/env bash
# Formats the project's C++ with clang-format-19 and the checked-in .clang-format.
# Usage: tools/format.sh           rewrite every file that differs
#        tools/format.sh --check   list the files that differ; exit 1 if any
# Test inputs whose expected output names their lines and columns (the transpiler's
# goldens and CLI cases, the check cases) and generated fuzz programs stay as written.
set -euo pipefail
cd "$(dirname "$0")/.."

fmt=$(command -v clang-format-19 || echo /usr/lib/llvm-19/bin/clang-format)
if [ ! -x "$fmt" ]; then
  echo "format: error: clang-format-19 is missing; run tools/bootstrap.sh" >&2
  exit 2
fi

mapfile -t files < <(git ls-files -- '*.cpp' '*.h' ':!:tests/transpiler/golden/**' \
  ':!:tests/transpiler/cli/**' ':!:tests/checks/**' ':!:tests/fuzz/regressions/**' \
  ':!:tests/fuzz/known_failures/**')

if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: these files are not formatted with $("$fmt" --version | sed 's/.*version //'):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    echo "  run tools/format.sh to fix them" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted with clang-format-19"
  exit 0
fi
"$fmt" -i "${files[@]}"

#!/usr/bin/env bash
# Pins the transpiler's structure (transpiler/README.md): which layer includes
# which, the one runtime header agc includes, the contract names taken from
# it, and that every registered check has its files, tests and doc section.
#
# usage: structure_test.sh REPO
set -u
cd "$1" || exit 2
status=0
fail() {
  echo "FAIL: $*"
  status=1
}

# $1: folder under transpiler/; $2: regex of forbidden include prefixes.
forbid_includes() {
  local hits
  hits=$(grep -nE "^#include \"($2)" transpiler/"$1"/*.h transpiler/"$1"/*.cpp)
  [[ -z $hits ]] || fail "transpiler/$1 includes what its layer may not:"$'\n'"$hits"
}
forbid_includes analysis 'converters/|checks/|driver/|rewrite/'
forbid_includes converters 'checks/|driver/'
forbid_includes checks 'converters/|driver/|rewrite/'
forbid_includes rewrite 'analysis/|converters/|checks/|driver/'

# The runtime's headers: only ag/annotate.h.
hits=$(grep -rnE '^#include [<"]ag/' transpiler tools/agc | grep -v 'ag/annotate.h')
[[ -z $hits ]] || fail "agc includes runtime headers other than ag/annotate.h:"$'\n'"$hits"

# The contract names come from ag/annotate.h, not from literals.
hits=$(grep -rnE '"(autograph|agc_retval)"' transpiler tools/agc --include='*.cpp' --include='*.h')
[[ -z $hits ]] || fail "contract names spelled as literals (use ag/annotate.h):"$'\n'"$hits"

# Every check: in Checks.def, with its two sources, tests and doc section;
# and no check source outside Checks.def.
registered=()
while IFS= read -r line; do
  class=$(sed -E 's/^AG_CHECK\(([A-Za-z0-9_]+), *"([^"]+)".*/\1/' <<<"$line")
  name=$(sed -E 's/^AG_CHECK\(([A-Za-z0-9_]+), *"([^"]+)".*/\2/' <<<"$line")
  registered+=("$class")
  for file in "transpiler/checks/$class.h" "transpiler/checks/$class.cpp" \
    "tests/checks/$name/positive.cpp" "tests/checks/$name/negative.cpp"; do
    [[ -f $file ]] || fail "$name: missing $file"
  done
  grep -qx "## $name" docs/checks.md || fail "$name: no '## $name' section in docs/checks.md"
done < <(grep -E '^AG_CHECK\(' transpiler/checks/Checks.def)
[[ ${#registered[@]} -gt 0 ]] || fail "no AG_CHECK line in transpiler/checks/Checks.def"
for source in transpiler/checks/*Check.cpp; do
  class=$(basename "$source" .cpp)
  [[ $class == AgCheck ]] && continue
  printf '%s\n' "${registered[@]}" | grep -qx "$class" || fail "$source is not in Checks.def"
done

[[ $status == 0 ]] && echo "structure ok: ${#registered[@]} checks"
exit $status

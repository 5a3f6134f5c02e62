#!/usr/bin/env bash
# Only the instruction sets' own code holds AVX instructions (runtime/ops/isa.h):
# every function of the runtime library that uses a ymm or zmm register, or a
# VEX or EVEX encoded instruction, is in an avx2 or avx512 namespace (or is
# instantiated on a type of one). A header's inline function or template
# compiled for AVX and kept by the linker for baseline callers would stop a
# portable binary on a CPU without AVX.
# Usage: kernel_isa_objects_test.sh <libag_runtime.a or .so>
set -euo pipefail
library="$1"
functions_with_avx="$(objdump -d --no-show-raw-insn -C "$library" |
  awk '/^[0-9a-f]+ <.*>:$/ { fn = $0; next }
       /%[yz]mm[0-9]|\tv[a-z0-9]+ / { print fn }' | sort -u)"
isa_functions="$(grep -E '::(avx2|avx512)::' <<<"$functions_with_avx" || true)"
leaked="$(grep -v -E '::(avx2|avx512)::' <<<"$functions_with_avx" || true)"
if [ -z "$isa_functions" ]; then
  echo "FAIL: no function of $library uses AVX: the avx2 and avx512 kernels are missing" >&2
  exit 1
fi
if [ -n "$leaked" ]; then
  echo "FAIL: AVX instructions outside the instruction sets' namespaces:" >&2
  echo "$leaked" | head -20 >&2
  exit 1
fi
echo "ok: $(wc -l <<<"$isa_functions") functions use AVX, all in avx2 or avx512 namespaces"

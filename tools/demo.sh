#!/usr/bin/env bash
# The README's first command: install what is missing, build what the demo
# needs (agc, the runtime and examples/quickstart: the target quickstart, which
# depends on ag_runtime and, through autograph_transpile, on agc), run it.
# tools/build.sh configures build/ as for every other command.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap.sh
tools/build.sh --target quickstart
exec build/examples/quickstart/quickstart

#!/usr/bin/env bash
# The README's first command: install what is missing, build, run the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap.sh
tools/build.sh
exec build/examples/quickstart/quickstart

#!/usr/bin/env bash
# The README's second command: install what is missing, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap.sh
tools/build.sh
# The API reference: Doxygen's warnings fail it.
tools/build.sh --target docs
export OPENBLAS_NUM_THREADS=1
cd build && ctest --output-on-failure -j"$(nproc)"

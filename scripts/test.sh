#!/usr/bin/env bash
# The README's test command: set up, build, run every test.
#   bash scripts/test.sh            (BUILD_DIR=build by default)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh "$@"
meson test -C "${BUILD_DIR:-build}" --print-errorlogs --num-processes 2

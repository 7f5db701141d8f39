#!/usr/bin/env bash
# The README's demo command: set up, build, and run an unmodified CUDA program
# under cutaint on the CPU emulated driver (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
exec "${BUILD_DIR:-build}/tools/cutaint/cutaint" demo

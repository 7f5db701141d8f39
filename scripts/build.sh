#!/usr/bin/env bash
# Configure (once) and build cutaint into BUILD_DIR (default: build/).
# Extra arguments go to `meson setup` (e.g. -Db_sanitize=address,undefined).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cuda_include=${CUDA_INCLUDE:-/usr/local/cuda/include}
if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" -Dtoolkit_include="$cuda_include" "$@" >/dev/null
fi
ninja -C "$build" >/dev/null

#!/usr/bin/env bash
# scripts/cppcheck.sh [BUILD_DIR]: cppcheck over the C cutaint ships - core/,
# shim/, include/, the cutaint command and fakecuda (whose entry_points.h is
# generated: BUILD_DIR, default build, must be built) - at warning and
# portability level; any finding fails.  A false positive is suppressed where
# it occurs, by name, with a comment saying why (cppcheck-suppress), never
# wholesale.  The tests are left out: Criterion's macros are unknown to it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
cd "$root"
[ -f "$build/subprojects/fakecuda/entry_points.h" ] || { echo "cppcheck.sh: build $build first" >&2; exit 2; }
cuda_include=${CUDA_INCLUDE:-/usr/local/cuda/include}
out=$(cppcheck --quiet --enable=warning,portability --inline-suppr --std=c11 --error-exitcode=1 \
    -D__x86_64__ -I core -I shim -I include -I subprojects/fakecuda -I "$build/subprojects/fakecuda" -I "$cuda_include" \
    --suppress=missingIncludeSystem --template='{file}:{line}: {severity}: {id}: {message}' \
    -i subprojects/fakecuda/tests -i shim/libcalls.c core shim include tools/cutaint/*.c subprojects/fakecuda 2>&1) ||
    { echo "$out"; exit 1; }
[ -z "$out" ] || { echo "$out"; exit 1; }
# shim/libcalls.c includes the CUDA libraries' headers, whose host_defines.h
# stops at #error for a compiler it does not know: checked as GCC sees it.
out=$(cppcheck --quiet --enable=warning,portability --inline-suppr --std=c11 --error-exitcode=1 \
    -D__x86_64__ -D__GNUC__=12 -I core -I shim -I include -I "$cuda_include" \
    --suppress=missingIncludeSystem --template='{file}:{line}: {severity}: {id}: {message}' \
    shim/libcalls.c 2>&1) || { echo "$out"; exit 1; }
[ -z "$out" ] || { echo "$out"; exit 1; }
echo "cppcheck: no finding in core, shim, include, tools/cutaint, subprojects/fakecuda"

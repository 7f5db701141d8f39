#!/usr/bin/env bash
# tests/reliability/tsan.sh [BUILD_DIR] - the threaded model check under ThreadSanitizer.
# Configures a separate build with -Db_sanitize=thread (shim, core, fakecuda
# and the checker all instrumented), builds only what the check needs, and
# runs rel_model --threads 8: 8 threads on disjoint buffers, a shared const
# buffer and a contended buffer; then fakecuda's asynchronous schedule
# under load (subprojects/fakecuda/tests/schedule_stress.c), bare and under the shim.
# Any TSan report fails the run (halt_on_error), as does a false refusal
# or a hang (timeout).
# Env: REL_OPS (ops per thread, default 2000), REL_SEED, REL_TSAN_ROUNDS (default 3).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build-tsan}
if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$here" -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debugoptimized \
        -Dtoolkit_include="${CUDA_INCLUDE:-/usr/local/cuda/include}" >/dev/null
fi
ninja -C "$build" tests/reliability/rel_model subprojects/fakecuda/tests/fakecuda_schedule_stress shim/libcutaint.so \
    subprojects/fakecuda/libcuda.so.1 >/dev/null
# The checker re-executes itself with LD_PRELOAD=libcutaint.so; libtsan must
# come first in the preload list of a process whose main program is instrumented.
libtsan=$(${CC:-cc} -print-file-name=libtsan.so)
export REL_PRELOAD_FIRST=$libtsan
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
ops=${REL_OPS:-2000}
rounds=${REL_TSAN_ROUNDS:-3}
for i in $(seq 1 "$rounds"); do
    seed=${REL_SEED:-$((RANDOM * 32768 + RANDOM + i))}
    timeout 300 "$build/tests/reliability/rel_model" --threads 8 --ops "$ops" --seed "$seed"
done
stress=$build/subprojects/fakecuda/tests/fakecuda_schedule_stress
LD_LIBRARY_PATH=$build/subprojects/fakecuda timeout 300 "$stress" >/dev/null
LD_LIBRARY_PATH=$build/subprojects/fakecuda LD_PRELOAD="$libtsan $build/shim/libcutaint.so" CUTAINT_LOG=off \
    timeout 300 "$stress" >/dev/null
echo "tsan.sh: $rounds rounds of 8 threads x $ops ops, and the asynchronous schedule under load, bare and" \
    "under the shim: no data race, no deadlock, no false refusal"

#!/usr/bin/env bash
# tests/reliability/valgrind.sh BUILD_DIR - memcheck of integration clients
# and of one model-check program under the shim: --leak-check=full
# --error-exitcode=1.  "definite" and "indirect" leaks fail; memory the shim
# or fakecuda keep for the life of the process ("still reachable") does not.
# valgrind.supp suppresses known noise outside cutaint (none needed so far).
set -euo pipefail
build=${1:?usage: valgrind.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind not installed; skipped"; exit 77; }
tmp=$(mktemp -d /tmp/cutaint-vg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
vg=(valgrind -q --tool=memcheck --leak-check=full "--errors-for-leak-kinds=definite,indirect"
    "--show-leak-kinds=definite,indirect" --error-exitcode=97 --suppressions="$here/valgrind.supp"
    --trace-children=no)
# FAKECUDA_PTX=off: these clients name kernels without code on purpose, as in the suite (meson.build).
export LD_LIBRARY_PATH=$build/subprojects/fakecuda CUTAINT_LOG=off FAKECUDA_PTX=off
run() { # name, expected-status, command...
    local name=$1 want=$2; shift 2
    local st=0
    LD_PRELOAD=$build/shim/libcutaint.so CUTAINT_REPORT=$tmp/$name.jsonl "${vg[@]}" --log-file="$tmp/$name.vg" "$@" \
        >/dev/null 2>&1 || st=$?
    if [ "$st" -eq 97 ] || [ -s "$tmp/$name.vg" ]; then
        echo "valgrind.sh: $name: memcheck errors"; cat "$tmp/$name.vg"; exit 1
    fi
    if [ "$st" -ne "$want" ]; then echo "valgrind.sh: $name: status $st, expected $want"; exit 1; fi
    [ "$st" -lt 128 ] || { echo "valgrind.sh: $name: killed by a signal ($st)"; exit 1; }
    echo "valgrind.sh: $name clean"
}
# Each client must also behave as it does outside valgrind: same exit status.
status_without_valgrind() {
    local st=0
    LD_PRELOAD=$build/shim/libcutaint.so CUTAINT_REPORT=$tmp/plain.jsonl "$@" >/dev/null 2>&1 || st=$?
    echo "$st"
}
for client in client_linked client_runtime; do
    for sc in happy failed_launch two_hops const_input interior struct extra refill null_args null_tainted threads \
        graph_update graph_cond; do
        exe=$build/tests/integration/$client
        run "$client-$sc" "$(status_without_valgrind "$exe" "$sc")" "$exe" "$sc"
    done
done
lifecycle=$build/tests/integration/client_lifecycle
for sc in "context_gone destroy" "context_gone reset" "handle_reuse module other" "handle_reuse library same" \
    "read_pitched 240 3d" fold; do
    read -ra args <<<"$sc"
    run "lifecycle-${sc// /-}" "$(status_without_valgrind "$lifecycle" "${args[@]}")" "$lifecycle" "${args[@]}"
done
memory=$build/tests/integration/client_memory
for sc in vmm_remap vmm_release batch_mixed managed; do
    run "memory-$sc" "$(status_without_valgrind "$memory" "$sc")" "$memory" "$sc"
done
# Library calls (shim/libcalls.def) on the test-double libraries: failed,
# skipped, released, nested, batched (followed at a read), a devInfo that
# refuses its outputs, and reached in a local scope.
libcalls=$build/tests/integration/client_libcalls
for sc in rand_fail gemm skip release nested batched potrf; do
    run "libcalls-$sc" "$(status_without_valgrind "$libcalls" "$sc")" "$libcalls" "$sc"
done
# Every row of the table through its wrapper (the generated test's client):
# the descriptor getters of cuSPARSE and cuBLASLt the wrappers call too.
CUTAINT_ON_SKIP=error run libcalls-every-row 0 "$build/tests/integration/client_every_row"
local_user=$build/tests/integration/liblocal_user.so
run libcalls-local 0 "$build/tests/integration/client_libcalls_local" "$local_user"
# NVIDIA's runtime (static, nvcc-built where nvcc was found) answered with
# stand-ins: refused at the load (sm_80 code on fakecuda's 9.0 device), and
# at the lookup; a small device arena, as valgrind cannot map fakecuda's
# default.  On fakecuda's deterministic schedule: on the asynchronous one,
# under the shim, memcheck finds the 40-byte dependency list the static
# runtime's dlopen of libcuda.so.1 made (dl-deps.c) "definitely lost" at
# exit, in every static-runtime program (not without the shim, not on the
# sync schedule, not with the driver-API clients above, which run async):
# an open question, written down in RELIABILITY.md, not hidden here.
for program in "unusable_sm80_static chevron" "unusable_sm90_static span"; do
    read -ra args <<<"$program"
    exe=$build/tests/runtime/${args[0]}
    [ -x "$exe" ] || continue
    faults=
    [ "${args[0]}" = unusable_sm90_static ] && faults='api:cuLibraryGetKernel#1=500'
    FAKECUDA_SCHEDULE=sync FAKECUDA_FAULTS=$faults FAKECUDA_DEVICE_MEMORY=1G run "stand-in-${args[0]}-${args[1]}" 0 "$exe" "${args[1]}"
done
run hostile_before_init 0 "$build/tests/reliability/hostile_client" before_init
run hostile_no_context 0 "$build/tests/reliability/hostile_client" no_context
REL_NOCHECK=1 run model 0 "$build/tests/reliability/rel_model" --child 12345 --ops 400
echo "valgrind.sh: all clean"

#!/usr/bin/env bash
# hostmem_refused.sh SHIM PROGRAM: hostmem_refused.cu's program on fakecuda,
# both fills failed (FAKECUDA_FAULTS), without and with SHIM preloaded.
# Registered memory as a copy's host side: without cutaint the copy serves
# the stale bytes; with it the copy is refused and the registered buffer
# poisoned, and the report names the fill.  Mapped pinned memory written by
# the failed kernel: the host's plain loads read stale bytes either way
# (nothing to refuse), and cutaint says once that it cannot, naming the
# buffer.  LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 program=$2
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"
export FAKECUDA_FAULTS='launch:_Z4fill*#1+=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'

bare "$program" >"$work/base.out" 2>"$work/base.err" || fail "base: exit status $?"
under_shim "$program" || fail "shim: exit status $?"
cat "$work/base.out" "$work/shim.out" "$work/shim.err"
for run in base shim; do
    expect $run registered_launch cudaErrorLaunchOutOfResources
    expect $run mapped_launch cudaErrorLaunchOutOfResources
    expect $run mapped_host stale
done
expect base registered_memcpy cudaSuccess
expect base registered_host stale
expect shim registered_memcpy cudaErrorLaunchOutOfResources
expect shim registered_host poisoned
grep -q '"event":"refused_read".*"bytes":16384,' "$work/report.jsonl" || fail "the report holds no refused read of the registered buffer"
at=$(result shim mapped_at)
[ "$(grep -c "pinned host memory $at (16384 bytes) was to be written by failed work" "$work/shim.err")" -eq 1 ] ||
    fail "cutaint did not say once that it cannot refuse the mapped buffer's host loads ($at)"
[ "$(grep -c 'pinned host memory' "$work/base.err")" -eq 0 ] || fail "said without the shim"
exit "$bad"

#!/usr/bin/env bash
# refused.sh SHIM PROGRAM: refused.cu's program on fakecuda, without and
# with SHIM preloaded. Without: the rejected launch's output is served as
# data (memcpy succeeds, host stale). With: the cudaMemcpy is refused, the
# host buffer poisoned, the report names fill's failure and the refused
# read; the corrected retry, and the work after cudaDeviceReset, read back
# correct. LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 program=$2
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"

bare "$program" >"$work/base.out" 2>"$work/base.err" || fail "base: exit status $?"
under_shim "$program" || fail "shim: exit status $?"
cat "$work/base.out" "$work/shim.out" "$work/shim.err"

expect base launch cudaErrorInvalidValue
expect base memcpy cudaSuccess
expect base host stale
expect shim launch cudaErrorInvalidValue
expect shim memcpy cudaErrorInvalidValue
expect shim host poisoned
for run in base shim; do
    for step in retry reset; do
        expect $run ${step}_launch cudaSuccess
        expect $run ${step}_memcpy cudaSuccess
        expect $run ${step}_host correct
    done
done
grep -q '"event":"failure".*"kernel":"fill(float\*, int, float)".*"error":"CUDA_ERROR_INVALID_VALUE"' "$work/report.jsonl" ||
    fail "the report names no failure of fill"
grep -Eq '"event":"refused_read".*"api":"cuMemcpyDtoH_v2(_ptds)?".*"bytes":4000,' "$work/report.jsonl" ||
    fail "the report holds no refused 4000-byte cudaMemcpy"
[ "$(grep -c '"event":"refused_read"' "$work/report.jsonl")" -eq 1 ] || fail "more than one refused read"
exit $bad

#!/usr/bin/env bash
# retry.sh SHIM PROGRAM: retry.cu's cases on fakecuda, without and with
# SHIM preloaded.  A retry of a launch the driver refused at once (the same
# function and parameter bytes, as many threads in all) runs under the
# shim as it does without, its read served and a retry event in the
# report; a near miss (fewer threads, another value, an input another
# failure was to write) is skipped and its read refused.  LD_LIBRARY_PATH
# comes from meson.
set -uo pipefail
shim=$1 program=$2
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"

count() { grep -c "\"event\":\"$1\"" "$work/report.jsonl"; }
# run CASE [VAR=value...]: CASE without the shim (CASE.out), then with it
# (CASE_shim.out), each with the variables; the report is the shim run's.
run() {
    local case=$1
    shift
    bare "$@" "$program" "$case" >"$work/$case.out" 2>&1 || fail "$case: exit status $?"
    rm -f "$work/report.jsonl"
    under_shim "$@" "$program" "$case" || fail "$case shim: exit status $?"
    cp "$work/shim.out" "$work/${case}_shim.out"
}
# served CASE: the retry ran, under the shim as without it.
served() {
    expect "$1" host correct
    expect "$1_shim" memcpy cudaSuccess
    expect "$1_shim" host correct
    [ "$(count retry)" -ge 1 ] || fail "$1: no retry event in the report"
    [ "$(count skip)" -eq 0 ] || fail "$1: $(count skip) skips in the report"
    [ "$(count refused_read)" -eq 0 ] || fail "$1: a refused read in the report"
}
# refused CASE SKIPS: no retry; the read refused, after SKIPS skipped
# launches.  fill only stores through out (its PTX says so: docs/IMAGES.md),
# so a fill that is no retry runs, out keeping its taint, and is no skip;
# saxpy reads y, and is skipped.
refused() {
    expect "$1_shim" memcpy cudaErrorInvalidValue
    expect "$1_shim" host poisoned
    [ "$(count retry)" -eq 0 ] || fail "$1: a retry event in the report"
    [ "$(count skip)" -eq "$2" ] || fail "$1: $(count skip) skips in the report, expected $2"
    [ "$(count refused_read)" -eq 1 ] || fail "$1: $(count refused_read) refused reads, expected 1"
}

run adaptive
served adaptive
# fakecuda counts the launches its dimensions let through: #1 is the 1024.
run ladder FAKECUDA_FAULTS='launch:_Z4fill*#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'
served ladder
[ "$(count failure)" -eq 2 ] || fail "ladder: $(count failure) failures, expected 2"
warm='launch:_Z5saxpy*#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'
run warmup FAKECUDA_FAULTS="$warm"
served warmup
[ "$(count retry)" -eq 1 ] || fail "warmup: $(count retry) retry events, expected 1 (the rest are clean)"
rm -f "$work/report.jsonl"
under_shim CUTAINT_INJECT='launch:saxpy#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES' "$program" warmup ||
    fail "warmup injected: exit status $?"
expect shim host correct
[ "$(count retry)" -eq 1 ] || fail "warmup injected: no retry event"
run fewer
expect fewer host stale
refused fewer 0
run other
expect other host correct
refused other 0
run tainted
expect tainted host correct
refused tainted 1
# A fault the driver reports later: the context is lost (cutaint's 70), and
# the same launch again is no retry.
rm -f "$work/report.jsonl"
under_shim FAKECUDA_FAULTS='launch:_Z4fill*#1=fault' "$program" async
status=$?
[ "$status" -eq 70 ] || fail "async: exit status $status, expected 70"
expect shim sync cudaErrorIllegalAddress
[ "$(result shim memcpy)" != cudaSuccess ] || fail "async: the read after the loss was served"
[ "$(count retry)" -eq 0 ] || fail "async: a retry event after the context was lost"
grep -q '"event":"context_lost"' "$work/report.jsonl" || fail "async: no context_lost in the report"
cat "$work"/*.out
exit $bad

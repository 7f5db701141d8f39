#!/usr/bin/env bash
# pool.sh SHIM PROGRAM: pool.cu's cases on fakecuda, without and with SHIM
# preloaded.  Without regions a failed tensor's pointer covers the rest of
# its pool: 13 reads refused where the GPU got one tensor wrong.  With each
# tensor a region (include/cutaint.h) exactly the failed tensor is refused,
# and taken anew it is readable once rewritten.  Each misuse is one line
# and changes nothing.  Without the shim every region call answers
# NO_SHIM and the program runs as it does under the shim.  Without regions
# the allocation is said, once, to look like a pool: in a pool event when
# the second pointer shows after the failure, in the failure event when
# the failing launch itself shows two.  LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 program=$2
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"

faults='launch:_Z4fill*#4=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'
count() { grep -c "\"event\":\"$1\"" "$work/report.jsonl"; }
# run CASE [FAULTS]: without the shim (CASE.out), then with it (CASE_shim.out).
run() {
    local f=${2:-$faults}
    bare FAKECUDA_FAULTS="$f" "$program" "$1" >"$work/$1.out" 2>&1 || fail "$1: exit status $?"
    rm -f "$work/report.jsonl"
    under_shim FAKECUDA_FAULTS="$f" "$program" "$1" || fail "$1 shim: exit status $?"
    cp "$work/shim.out" "$work/$1_shim.out"
    expect "$1" launch3 cudaErrorLaunchOutOfResources
    expect "$1_shim" launch3 cudaErrorLaunchOutOfResources
    expect "$1" refused 0
}
# refused_exactly CASE TENSOR...: under the shim these tensors, and no
# other, were refused; every other read back correct.
refused_exactly() {
    local case=$1 i want
    shift
    for i in $(seq 0 15); do
        want=cudaSuccess/correct
        [[ " $* " == *" $i "* ]] && want=cudaErrorLaunchOutOfResources/poisoned
        expect "${case}_shim" "t$i" "$want"
    done
    expect "${case}_shim" refused $#
    [ "$(count refused_read)" -eq $# ] || fail "$case: $(count refused_read) refused_read events, expected $#"
}

# said CASE LINES EVENTS: the pool line LINES times, EVENTS pool events.
said() {
    local lines
    lines=$(grep -c 'looks like a pool: .* failure #1 now covers the 13312 bytes' "$work/shim.err")
    [ "$lines" -eq "$2" ] || fail "$1: the pool said $lines times, expected $2"
    [ "$(count pool)" -eq "$3" ] || fail "$1: $(count pool) pool events, expected $3"
}

run pool
refused_exactly pool $(seq 3 15)
said pool 1 1
grep -q '"event":"pool",.*"failure":1,.*"covered":13312,"pointers":2,' "$work/report.jsonl" ||
    fail "pool: the pool event does not say what the failure covers"
run reads 'launch:_Z5saxpy*#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'
refused_exactly reads $(seq 3 15)
said reads 1 0
grep -q '"event":"failure",.*"pool":{"allocation":"0x[0-9a-f]*","size":16384,.*"covered":13312,"pointers":2,' \
    "$work/report.jsonl" || fail "reads: the failure event does not carry the pool"
run regions
refused_exactly regions 3
said regions 0 0
expect regions_shim anew3 cudaSuccess/correct
expect regions_shim declared 18,0
expect regions declared 0,18
run misuse
refused_exactly misuse 3
for misuse in overlap unknown outside; do
    expect misuse_shim "$misuse" 1
    expect misuse "$misuse" 2
done
lines=$(grep -c 'CUTAINT_REGION_.* ignored: ' "$work/shim.err")
[ "$lines" -eq 3 ] || fail "misuse: $lines lines saying a region call was ignored, expected 3"
cat "$work"/*.out "$work/shim.err"
exit "$bad"

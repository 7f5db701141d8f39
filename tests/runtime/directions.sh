#!/usr/bin/env bash
# directions.sh SHIM PROGRAM PLUGIN BUILT: directions.cu's cases on fakecuda
# (PLUGIN gives it the kernels), without and with SHIM preloaded.  BUILT
# says what the image holds: ptx or compressed (sm_90 SASS and compute_90
# PTX, whose directions are the running code's) or sass (SASS only: the
# signature's const-ness decides, as before).  LD_LIBRARY_PATH comes from
# meson.
set -uo pipefail
shim=$1 program=$2 plugin=$3 built=$4
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"
export FAKECUDA_KERNELS=$plugin

# run CASE: CASE without the shim (CASE.out), then with it (CASE_shim.out).
run() {
    bare "$program" "$1" >"$work/$1.out" 2>&1 || fail "$1: exit status $?"
    rm -f "$work/report.jsonl"
    under_shim CUTAINT_LOG=debug "$program" "$1" || fail "$1 shim: exit status $?"
    cp "$work/shim.out" "$work/$1_shim.out"
    cat "$work/shim.err" >>"$work/$1_shim.out"
    cp "$work/report.jsonl" "$work/$1.jsonl"
}
roles() { # CASE KERNEL ROLES FROM: the debug line naming the kernel's roles
    grep -q "cutaint: $2(.*): parameter roles $3 (from the $4" "$work/$1_shim.out" ||
        fail "$1: no '$2 ... roles $3 (from the $4' line"
}

# event CASE FIELDS: CASE's shim run's report has a failure event with FIELDS.
event() {
    grep -q "\"event\":\"failure\".*$2" "$work/$1.jsonl" || fail "$1: no failure event with $2"
}

run input
expect input in_host correct
expect input out_host stale
expect input_shim out_host poisoned
run flags
expect flags flag_host correct
expect flags out_host correct
expect flags_shim out_host poisoned
if [ "$built" = sass ]; then
    # No PTX of the running code: a non-const pointer is read and written.
    roles input sum_into 'rw,rw,-' signature
    event input '"roles":"rw,rw,-","roles_from":"signature"'
    expect input_shim in_host poisoned
    expect flags_shim flag_host poisoned
else
    roles input sum_into 'rw,r,-' ptx
    event input '"roles":"rw,r,-","roles_from":"ptx"'
    roles flags mark 's,s,-' ptx
    # in is only read: the refused launch was never to write it.
    expect input_shim in_memcpy cudaSuccess
    expect input_shim in_host correct
    # mark only stores: not skipped for out's taint, so its flag is
    # written; out keeps the taint (mark's extent is unknown).
    expect flags_shim flag_memcpy cudaSuccess
    expect flags_shim flag_host correct
    [ "$(grep -c '"event":"skip"' "$work/flags.jsonl")" -eq 0 ] || fail "flags: mark was skipped"
fi
cat "$work"/*.out
exit $bad

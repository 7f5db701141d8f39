#!/usr/bin/env bash
# preload_file.sh SHIM LAYER PROGRAM: refused.cu's program with SHIM and
# LAYER (tests/integration/layer) loaded the way a node that installs a
# layer through /etc/ld.so.preload loads them, in each order that gives:
# - layer in the file, cutaint in LD_PRELOAD: glibc loads LD_PRELOAD
#   first, so cutaint is first (what `cutaint run` does on such a node);
# - both in the file, cutaint listed first: cutaint first;
# - both in the file, the layer listed first: the layer first.
# In every order cutaint refuses the stale read and reports the failure,
# the layer sees the program's calls, and cutaint says it is not first
# exactly when it is not.
#
# Each run is in a private mount namespace whose /etc is an overlay (the
# file is written into the overlay, never into the machine's /etc: the
# write happens only once the overlay is mounted and checked).  Where no
# such namespace can be made (no unshare, not root, no overlayfs) the test
# is skipped with the reason.  LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 layer=$2 program=$3
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"

# ns_run NAME FILE_LINES [VAR=value...]: PROGRAM with /etc/ld.so.preload
# holding FILE_LINES; NAME.out, NAME.err, NAME.jsonl, NAME.counts.
ns_run() {
    local name=$1 lines=$2
    shift 2
    mkdir -p "$work/ns_$name"
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare -m sh -c '
        set -e
        d=$1 lines=$2
        shift 2
        mount -t tmpfs tmpfs "$d"
        mkdir "$d/upper" "$d/work"
        mount -t overlay overlay -o "lowerdir=/etc,upperdir=$d/upper,workdir=$d/work" /etc
        [ "$(stat -f -c %T /etc)" = overlayfs ]
        printf "%s\n" "$lines" >/etc/ld.so.preload
        exec "$@"' sh "$work/ns_$name" "$lines" \
        env TESTLAYER_COUNTS="$work/$name.counts" CUTAINT_REPORT="$work/$name.jsonl" "$@" \
        >"$work/$name.out" 2>"$work/$name.err"
}

if ! ns_run probe "" true; then
    echo "SKIP: no private mount namespace with an overlay on /etc here ($(head -c 200 "$work/probe.err"))"
    exit 77
fi

# A sanitized build's runtime stays first, in LD_PRELOAD.
first=${CT_PRELOAD_FIRST:+$CT_PRELOAD_FIRST }
ns_run file_layer "$layer" LD_PRELOAD="$first$shim" "$program" || fail "file_layer: exit status $?"
ns_run file_both "$shim $layer" ${first:+LD_PRELOAD="$first"} "$program" || fail "file_both: exit status $?"
ns_run file_layer_first "$layer $shim" ${first:+LD_PRELOAD="$first"} "$program" ||
    fail "file_layer_first: exit status $?"

said='is loaded before libcutaint.so'
for run in file_layer file_both file_layer_first; do
    expect $run launch cudaErrorInvalidValue
    expect $run memcpy cudaErrorInvalidValue
    expect $run host poisoned
    expect $run retry_host correct
    grep -q '"event":"failure".*"kernel":"fill(float\*, int, float)"' "$work/$run.jsonl" ||
        fail "$run: the report names no failure of fill"
    [ "$(grep -c '"event":"refused_read"' "$work/$run.jsonl")" -eq 1 ] || fail "$run: not one refused read"
    launches=$(awk '$1 ~ /^cuLaunchKernel/ {c += $2} END {print c + 0}' "$work/$run.counts")
    [ "$launches" -gt 0 ] || fail "$run: the layer saw no launch"
    want=0
    [ $run = file_layer_first ] && want=1
    [ "$(grep -c "$said" "$work/$run.err")" -eq $want ] || fail "$run: '$said' said $(grep -c "$said" "$work/$run.err") times, want $want"
done
cat "$work"/file_*.out "$work"/file_*.err
exit "$bad"

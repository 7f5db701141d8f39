#!/usr/bin/env bash
# layered.sh SHIM LAYER PROGRAM: refused.cu's program on NVIDIA's runtime
# beside a second interposer (tests/integration/layer/testlayer.c, which
# counts the calls reaching it; built as libtestlayer.so, which stacks, and
# libtestlayer_hami.so, which resolves the driver as HAMi-core does), in
# both load orders:
# - cutaint first: refused.sh's checks hold, and every call cutaint passes
#   down reaches the layer - all the layer alone sees, less the one read
#   cutaint refused;
# - layer first: refused.sh's checks hold (cutaint checks what the layer
#   passes on) and the layer sees every call.
# LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 layer=$2 program=$3
here=$(dirname "$0")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
fail() { echo "FAIL: $*"; bad=1; }
# count FILE NAME: NAME's calls and its per-thread variant's (_ptds, _ptsz).
count() { awk -v n="$2" '$1 == n || $1 == n "_ptds" || $1 == n "_ptsz" {c += $2} END {print c + 0}' "$work/$1"; }

TESTLAYER_COUNTS=$work/alone env LD_PRELOAD="${CT_PRELOAD_FIRST:+$CT_PRELOAD_FIRST }$layer" "$program" >/dev/null 2>&1 || fail "the layer alone: exit status $?"
TESTLAYER_COUNTS=$work/first bash "$here/refused.sh" "$shim $layer" "$program" >"$work/first.out" 2>&1 ||
    { cat "$work/first.out"; fail "cutaint first: refused.sh failed"; }
TESTLAYER_COUNTS=$work/second bash "$here/refused.sh" "$layer $shim" "$program" >"$work/second.out" 2>&1 ||
    { cat "$work/second.out"; fail "layer first: refused.sh failed"; }
for f in alone first second; do [ -s "$work/$f" ] || fail "$f: the layer wrote no counts"; done
[ "$bad" -eq 0 ] || exit 1
for name in cuMemAlloc_v2 cuMemFree_v2 cuLaunchKernel cuGetProcAddress_v2 cuMemcpyDtoH_v2; do
    alone=$(count alone $name) first=$(count first $name) second=$(count second $name)
    want=$alone
    [ $name = cuMemcpyDtoH_v2 ] && want=$((alone - 1)) # the refused read stops at cutaint
    [ "$first" = "$want" ] || fail "cutaint first: $name reached the layer $first times, want $want (alone $alone)"
    [ "$second" = "$alone" ] || fail "layer first: the layer saw $name $second times, alone $alone"
    [ "$alone" -gt 0 ] || fail "the layer alone never saw $name"
done
grep -q 'is loaded before libcutaint.so' "$work/second.out" || fail "layer first: cutaint did not say it is not first"
[ "$bad" -eq 0 ] && echo "ok: both orders on the runtime: refusals hold, the layer sees what cutaint passes on"
exit $bad

#!/usr/bin/env bash
# bypassed.sh SHIM LAYER PROGRAM: refused.cu's program on NVIDIA's runtime
# beside a layer ahead of cutaint that reaches the driver around every
# hook (libtestlayer_bypass.so): no call reaches cutaint, and at exit it
# says once that the process ran unprotected, whichever way the driver
# tears itself down (FAKECUDA_TEARDOWN): in its destructor, after
# cutaint's, or in an exit handler it registered at cuInit, before
# cutaint's destructor (docs/LAYERS.md). The program's exit status and
# output are its own. LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 layer=$2 program=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
fail() { echo "FAIL: $*"; bad=1; }
first=${CT_PRELOAD_FIRST:+$CT_PRELOAD_FIRST } # a sanitizer's runtime, ahead of everything

for teardown in destructor atexit; do
    FAKECUDA_TEARDOWN=$teardown LD_PRELOAD="$first$layer" "$program" >"$work/alone.out" 2>/dev/null
    alone=$?
    FAKECUDA_TEARDOWN=$teardown LD_PRELOAD="$first$layer $shim" CUTAINT_REPORT="$work/$teardown.jsonl" \
        "$program" >"$work/with.out" 2>"$work/with.err"
    with=$?
    [ "$with" = "$alone" ] || fail "teardown $teardown: exit status $with, alone $alone"
    cmp -s "$work/alone.out" "$work/with.out" || fail "teardown $teardown: the program's output changed"
    said=$(grep -c 'none of its calls reached cutaint' "$work/with.err")
    [ "$said" = 1 ] || { cat "$work/with.err"; fail "teardown $teardown: the bypass was said $said times, want 1"; }
    grep -q '"unprotected":true' "$work/$teardown.jsonl" 2>/dev/null ||
        fail "teardown $teardown: the report's exit does not say unprotected"
done
[ "$bad" -eq 0 ] && echo "ok: a layer around every hook is said at exit, whichever teardown the driver uses"
exit $bad

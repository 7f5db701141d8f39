#!/usr/bin/env bash
# regions_py.sh SHIM: regions_py.py without and with SHIM preloaded.  Under
# the shim the region calls answer as include/cutaint.h says (DONE 0,
# REFUSED 1, each refusal one line), without it every call answers NO_SHIM
# (2) and nothing is said; track_torch_allocator() tracks nothing without
# PyTorch on a GPU and says why.  LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"
client=$(dirname "$0")/regions_py.py

python3 "$client" >"$work/base.out" 2>&1 || fail "base: exit status $?"
under_shim python3 "$client" || fail "shim: exit status $?"
cp "$work/shim.out" "$work/shim_run.out"
for key in alloc overlap unknown free; do
    expect base "$key" 2
done
expect shim_run alloc 0
expect shim_run overlap 1
expect shim_run unknown 1
expect shim_run free 0
expect base tracking 0
expect base why 'libcutaint.so is not loaded'
expect shim_run tracking 0
python3 -c 'import torch' 2>/dev/null || expect shim_run why 'PyTorch is not importable'
lines=$(grep -c 'CUTAINT_REGION_.* ignored: ' "$work/shim.err")
[ "$lines" -eq 2 ] || fail "shim: $lines lines saying a region call was ignored, expected 2"
cat "$work/base.out" "$work/shim_run.out" "$work/shim.err"
exit "$bad"

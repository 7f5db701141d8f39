#!/usr/bin/env bash
# Run one nvcc-built CUDA runtime program on fakecuda and judge it:
#   run.sh PROGRAM        pass when it exits 0, its last line is PASS, and
#                         fakecuda said nothing on stderr (a "fakecuda:" line
#                         there means the runtime asked for a table or slot
#                         fakecuda does not emulate)
#   run.sh --skip REASON  print the reason and exit 77, meson's "skipped"
# LD_LIBRARY_PATH (fakecuda first, then the toolkit's lib64) comes from meson.
set -uo pipefail

if [ "${1:-}" = --skip ]; then
    echo "skipped: ${2:-no reason given}"
    exit 77
fi

program=$1
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

"$program" >"$out" 2>"$err"
rc=$?
cat "$out"
cat "$err" >&2

if [ "$rc" -ne 0 ]; then
    echo "run.sh: $program exited with $rc" >&2
    exit 1
fi
if [ "$(tail -n 1 "$out")" != PASS ]; then
    echo "run.sh: $program did not end with PASS" >&2
    exit 1
fi
if grep -q '^fakecuda:' "$err"; then
    echo "run.sh: fakecuda reported something the runtime needs (stderr above)" >&2
    exit 1
fi

#!/usr/bin/env bash
# Run one nvcc-built CUDA runtime program on fakecuda and judge it:
#   run.sh PROGRAM          pass when it exits 0, its last line is PASS, and
#                           fakecuda said nothing on stderr (a "fakecuda:" line
#                           there means the runtime asked for a table or slot
#                           fakecuda does not emulate)
#   run.sh --shim SHIM [--wrong-calls "NAME..."] PROGRAM
#                           the same, once without and once with SHIM
#                           preloaded: both pass, their stdout is identical,
#                           and the shim's report holds no failure but one
#                           for each library call NAME the program makes
#                           wrong on purpose (a wrong argument, answered
#                           with the library's error), each naming it
#   run.sh --skip REASON    print the reason and exit 77, meson's "skipped"
# LD_LIBRARY_PATH (fakecuda first, then the toolkit's lib64) comes from meson.
set -uo pipefail

if [ "${1:-}" = --skip ]; then
    echo "skipped: ${2:-no reason given}"
    exit 77
fi
shim=
if [ "${1:-}" = --shim ]; then
    shim=$2
    shift 2
fi
wrong_calls=
if [ "${1:-}" = --wrong-calls ]; then
    wrong_calls=$2
    shift 2
fi
program=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# judge NAME [ENV...]: one run of the program, its stdout kept as NAME.out
judge() {
    local name=$1 rc
    shift
    env "$@" "$program" >"$work/$name.out" 2>"$work/$name.err"
    rc=$?
    cat "$work/$name.out"
    cat "$work/$name.err" >&2
    if [ "$rc" -ne 0 ]; then
        echo "run.sh: $program ($name) exited with $rc" >&2
        return 1
    fi
    if [ "$(tail -n 1 "$work/$name.out")" != PASS ]; then
        echo "run.sh: $program ($name) did not end with PASS" >&2
        return 1
    fi
    if grep -q '^fakecuda:' "$work/$name.err"; then
        echo "run.sh: fakecuda reported something the runtime needs (stderr above)" >&2
        return 1
    fi
}

# CT_PRELOAD_FIRST (libtsan for an instrumented fakecuda) comes first in both runs.
base_env=()
[ -n "${CT_PRELOAD_FIRST:-}" ] && base_env=(LD_PRELOAD="$CT_PRELOAD_FIRST")
judge base "${base_env[@]}" || exit 1
[ -z "$shim" ] && exit 0
judge shim LD_PRELOAD="${CT_PRELOAD_FIRST:+$CT_PRELOAD_FIRST }$shim" CUTAINT_REPORT="$work/report.jsonl" || exit 1
if ! cmp -s "$work/base.out" "$work/shim.out"; then
    echo "run.sh: the output differs under the shim:" >&2
    diff "$work/base.out" "$work/shim.out" >&2
    exit 1
fi
# The failures' calls, sorted, against the wrong calls named: the same list.
failed=$(sed -n 's/^{"event":"failure",.*"api":"\([^"]*\)".*/\1/p' "$work/report.jsonl" | sort | xargs)
wanted=$(tr ' ' '\n' <<<"$wrong_calls" | sort | xargs)
if [ "$failed" != "$wanted" ] || grep -qE '"event":"(skip|refused_read|context_lost)"' "$work/report.jsonl"; then
    echo "run.sh: the shim's report holds failures of [$failed], expected [$wanted] (the wrong calls), and no other event of a failure:" >&2
    cat "$work/report.jsonl" >&2
    exit 1
fi
grep -q '"event":"exit".*"status":0' "$work/report.jsonl" || { echo "run.sh: no exit event with status 0" >&2; exit 1; }

#!/usr/bin/env bash
# graph_missing.sh SHIM PROGRAM HOW: graph_missing.cu's program (HOW: add,
# capture, query) on fakecuda, without and with SHIM, where its kernels cannot be
# found (built for sm_90: fakecuda has no code for them; for sm_80: the
# driver refuses the runtime's image).  Under cutaint they are stand-ins
# (docs/DESIGN.md, "Stand-ins"), and still every call the program makes
# returns what it returns without cutaint: cudaGraphAddKernelNode of one
# answers cudaErrorInvalidResourceHandle both ways.  One known difference
# is left out (docs/DESIGN.md, "Stand-ins"): cudaGetFuncBySymbol of such a
# kernel answers cudaSuccess under cutaint, its function failing every
# later use.  LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 program=$2 how=$3
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"

bare "$program" "$how" >"$work/base.out" 2>"$work/base.err" || fail "base: exit status $?"
under_shim "$program" "$how" || fail "shim: exit status $?"
cat "$work/base.out" "$work/shim.out"
answers() { grep '^RESULT ' "$work/$1.out" | grep -v '^RESULT func_by_symbol'; }
[ -n "$(answers base)" ] || fail "base: no answers"
diff <(answers base) <(answers shim) || fail "the program's answers differ under the shim"
if [ "$how" = add ]; then
    expect base add_missing cudaErrorInvalidResourceHandle
    expect shim add_missing cudaErrorInvalidResourceHandle
elif [ "$how" = query ]; then
    expect base func_by_symbol "$(result base func_attributes)"
    expect shim func_by_symbol cudaSuccess
fi
grep -q '"event":"image"' "$work/report.jsonl" || fail "shim: no image event: the kernels were found"
exit $bad

#!/usr/bin/env bash
# graph_refused.sh SHIM PROGRAM: graph_refused.cu's program on fakecuda,
# without and with SHIM preloaded.
#   stale: without the shim the graph runs over the input a rejected fill
#     left stale and its output is served; with it the graph launch is
#     skipped (the skip event names the graph exec and the saxpy node that
#     read the tainted input), the graph's host copy is poisoned and the
#     cudaMemcpy of its output refused.
#   clean: correct output, identical without and with the shim, and a
#     report without failures.
#   launch under CUTAINT_INJECT=api:cuGraphLaunch: the graph launch fails,
#     the report names its failure, and its output is refused.
# LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 program=$2
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"
run() { # NAME MODE [ENV...]: the program once, with the shim when ENV is given
    local name=$1 mode=$2
    shift 2
    bare "$@" "$program" "$mode" >"$work/$name.out" 2>"$work/$name.err" || fail "$name: exit status $?"
    cat "$work/$name.out"
}
# Under ASan the sanitizer's runtime comes first: a list with a space in it.
preload="LD_PRELOAD=${CT_PRELOAD_FIRST:+$CT_PRELOAD_FIRST }$shim"

run base_stale stale
run shim_stale stale "$preload" "CUTAINT_REPORT=$work/stale.jsonl"
run base_clean clean
run shim_clean clean "$preload" "CUTAINT_REPORT=$work/clean.jsonl"
run shim_inject launch "$preload" "CUTAINT_REPORT=$work/inject.jsonl" CUTAINT_INJECT='api:cuGraphLaunch=LAUNCH_FAILED'

expect base_stale fill cudaErrorInvalidValue
expect base_stale graph cudaSuccess
expect base_stale graph_host stale
expect base_stale memcpy_host stale
expect shim_stale fill cudaErrorInvalidValue
expect shim_stale graph cudaSuccess
expect shim_stale graph_host poisoned
expect shim_stale memcpy cudaErrorInvalidValue
expect shim_stale memcpy_host poisoned
grep -Eq '"event":"skip".*"api":"cuGraphLaunch(_ptsz)?","kernel":"saxpy\(int, float, float const\*, float\*\)".*"graph":"0x[0-9a-f]+","node":"0x[0-9a-f]+"' \
    "$work/stale.jsonl" || fail "stale: no skip of the graph launch naming its exec and its saxpy node"
grep -Eq '"event":"refused_read".*"api":"cuGraphLaunch(_ptsz)?".*"bytes":4096,.*"poisoned":true' "$work/stale.jsonl" ||
    fail "stale: the graph's copy to the host is not refused"
# Its root failure's code (the fill's), and what cuGraphLaunch returned.
grep -Eq '"event":"refused_read".*"api":"cuGraphLaunch(_ptsz)?".*"error":"CUDA_ERROR_INVALID_VALUE".*"returned":"CUDA_SUCCESS"' \
    "$work/stale.jsonl" || fail "stale: the graph's refused copy does not give the root's code and what the launch returned"
grep -Eq '"event":"refused_read".*"api":"cuMemcpyDtoH_v2(_ptds)?".*"path":\["fill\(float\*, int, float\)","saxpy' \
    "$work/stale.jsonl" || fail "stale: the read of the graph's output is not refused along fill -> the graph"

for run in base_clean shim_clean; do
    expect $run fill cudaSuccess
    expect $run graph cudaSuccess
    expect $run graph_host correct
    expect $run memcpy_host correct
done
cmp -s "$work/base_clean.out" "$work/shim_clean.out" || fail "clean: the output differs under the shim"
! grep -qE '"event":"(failure|skip|refused_read|context_lost)"' "$work/clean.jsonl" ||
    fail "clean: the report holds a failure"

expect shim_inject graph cudaErrorLaunchFailure
expect shim_inject memcpy cudaErrorLaunchFailure
expect shim_inject memcpy_host poisoned
grep -Eq '"event":"failure".*"api":"cuGraphLaunch(_ptsz)?".*"error":"CUDA_ERROR_LAUNCH_FAILED".*"injected":true' \
    "$work/inject.jsonl" || fail "inject: the report names no injected failure of cuGraphLaunch"
exit $bad

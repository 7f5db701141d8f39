#!/usr/bin/env bash
# crash.sh SHIM PROGRAM MODE: crash.cu's program on fakecuda, without and
# with SHIM preloaded.  MODE (synced, unsynced) goes to the program: was
# fill synchronised before crash's launch?  Both runs see crash's launch
# answer cudaSuccess and the next cudaDeviceSynchronize
# cudaErrorIllegalAddress (fakecuda runs work at sync points).  Without the
# shim the program returns 0; with it the process exits 70 and the
# report's context_lost names its suspects exactly: crash alone (synced),
# or fill, prime, then crash behind it on the same default stream
# (unsynced), each from a cuLaunchKernel entry point (_ptsz under
# --default-stream per-thread); the log names the prime one.
# LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 program=$2 mode=$3
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"

case $mode in
synced) want='crash(float*):2:true' ;;
unsynced) want='fill(float*, int, float):1:true crash(float*):2:false' ;;
*) echo "crash.sh: unknown mode $mode" >&2; exit 2 ;;
esac
bare "$program" "$mode" >"$work/base.out" 2>"$work/base.err"
status=$?
[ "$status" -eq 0 ] || fail "base: exit status $status, expected 0"
under_shim "$program" "$mode"
status=$?
cat "$work/base.out" "$work/shim.out"
grep '^==[0-9]*== cutaint' "$work/shim.err"
[ "$status" -eq 70 ] || fail "shim: exit status $status, expected 70"
for run in base shim; do
    expect $run launch_fill cudaSuccess
    [ "$mode" = synced ] && expect $run sync_fill cudaSuccess
    expect $run launch_crash cudaSuccess
    expect $run sync cudaErrorIllegalAddress
done

# kernel:launch:prime for each suspect, in the report's order; and what is
# wrong with the rest of each (api, stream, grid, block, repro).
got=$(python3 - "$work/report.jsonl" <<'PY'
import json, sys
try:
    lost = [e for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "context_lost"]
except (OSError, ValueError) as err:
    print(f"BAD the report: {err}")
    sys.exit()
if len(lost) != 1:
    print(f"BAD {len(lost)} context_lost events")
    sys.exit()
e = lost[0]
sus = e.get("suspects", [])
if e.get("suspects_total") != len(sus):
    print(f"BAD suspects_total {e.get('suspects_total')}, {len(sus)} listed")
for s in sus:
    if not str(s.get("api")).startswith("cuLaunchKernel"):
        print(f"BAD api {s.get('api')}")
    if s.get("stream") != "0x0" or s.get("grid") != [4, 1, 1] or s.get("block") != [256, 1, 1]:
        print(f"BAD stream/grid/block: {json.dumps(s)}")
    if not str(s.get("repro")).startswith(f"compute-sanitizer --tool memcheck --launch-skip {s.get('launch', 0) - 1} "):
        print(f"BAD repro {s.get('repro')}")
print(" ".join(f"{s.get('kernel')}:{s.get('launch')}:{json.dumps(s.get('prime'))}" for s in sus))
PY
)
grep '^BAD' <<<"$got" | while read -r line; do echo "FAIL: context_lost: ${line#BAD }"; done
grep -q '^BAD' <<<"$got" && bad=1
[ "$(tail -n 1 <<<"$got")" = "$want" ] || fail "suspects: $(tail -n 1 <<<"$got"), expected $want"
per_thread=$(grep -c '"api":"cuLaunchKernel_ptsz"' "$work/report.jsonl" 2>/dev/null)
per_thread=${per_thread:-0}
case $program in
*per_thread*) [ "$per_thread" -gt 0 ] || fail "per-thread default stream, but no suspect from cuLaunchKernel_ptsz" ;;
*) [ "$per_thread" -eq 0 ] || fail "a suspect from cuLaunchKernel_ptsz without the per-thread default stream" ;;
esac
prime=${want%%:*}
grep -qF "cutaint:    prime suspect: $prime (" "$work/shim.err" ||
    fail "the log names no prime suspect $prime"
exit "$bad"

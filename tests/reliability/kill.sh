#!/usr/bin/env bash
# tests/reliability/kill.sh BUILD_DIR [RUNS] - crash safety of the report.
# RUNS times (default 30): start a long random program (rel_model --child,
# with injected failures, so it writes failure/skip/refused_read events all
# the time) under the shim, SIGKILL it at a random moment (5..300 ms), then
#   - every complete report line parses as one JSON object with event/time/pid;
#   - `cutaint report` renders the truncated log: exit 0, output non-empty.
# Then a program that crashes with SIGSEGV in its own code (hostile_client
# segv) leaves its failure, skip and refused_read events.
set -euo pipefail
build=${1:?usage: kill.sh BUILD_DIR [RUNS]}
runs=${2:-30}
shim=$build/shim/libcutaint.so
fc=$build/subprojects/fakecuda
model=$build/tests/reliability/rel_model
tool=$build/tools/cutaint/cutaint
hostile=$build/tests/reliability/hostile_client
tmp=$(mktemp -d /tmp/cutaint-kill.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
check_lines() { # FILE -> prints complete-lines count; fails on a bad line
    python3 - "$1" <<'PY'
import json, sys
data = open(sys.argv[1], 'rb').read()
lines = data.split(b'\n')
complete, tail = lines[:-1], lines[-1]
for i, l in enumerate(complete):
    o = json.loads(l)
    assert isinstance(o, dict) and 'event' in o and 'time' in o and 'pid' in o, (i, l[:200])
print(len(complete), 'truncated' if tail else 'whole')
PY
}
survived=0 lines=0 early=0
for i in $(seq 1 "$runs"); do
    rep=$tmp/run$i.jsonl
    LD_PRELOAD=$shim LD_LIBRARY_PATH=$fc CUTAINT_REPORT=$rep CUTAINT_LOG=off REL_NOCHECK=1 \
        CUTAINT_INJECT='launch:*a*#3+=CUDA_ERROR_LAUNCH_FAILED;api:cuMemcpyHtoD#5+=CUDA_ERROR_UNKNOWN' \
        "$model" --child $((RANDOM * 32768 + RANDOM)) --ops 300000 >/dev/null 2>&1 &
    pid=$!
    sleep "0.$(printf '%03d' $((5 + RANDOM % 295)))"
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if [ ! -s "$rep" ]; then # killed before the shim wrote its first line
        early=$((early + 1)); survived=$((survived + 1)); continue
    fi
    got=$(check_lines "$rep") || { echo "run $i: a complete report line does not parse"; exit 1; }
    n=${got% *}
    lines=$((lines + n))
    "$tool" report "$rep" >"$tmp/out$i.txt" 2>&1 || { echo "run $i: cutaint report failed"; cat "$tmp/out$i.txt"; exit 1; }
    [ -s "$tmp/out$i.txt" ] || { echo "run $i: cutaint report printed nothing"; exit 1; }
    if grep -q '"event":"exit"' "$rep"; then echo "run $i: the program was not killed in time"; exit 1; fi
    survived=$((survived + 1))
done
echo "kill.sh: $survived SIGKILLs survived ($early before the first event); $lines complete report lines, all parse; cutaint report rendered every log"
sample=$tmp/out1.txt
grep -iq "exit" "$sample" && echo "kill.sh: cutaint report notes the missing exit event: $(grep -i -m1 exit "$sample")"

rep=$tmp/segv.jsonl
st=0
LD_PRELOAD=$shim LD_LIBRARY_PATH=$fc CUTAINT_REPORT=$rep CUTAINT_LOG=off "$hostile" segv >/dev/null 2>&1 || st=$?
[ "$st" -eq 139 ] || { echo "segv: status $st, expected 139 (SIGSEGV)"; exit 1; }
check_lines "$rep" >/dev/null
for ev in failure skip refused_read; do
    grep -q "\"event\":\"$ev\"" "$rep" || { echo "segv: no $ev event left"; exit 1; }
done
"$tool" report "$rep" >/dev/null
echo "kill.sh: a SIGSEGV in the program's own code left its failure, skip and refused_read events"

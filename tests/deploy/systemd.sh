#!/usr/bin/env bash
# The systemd recipe (deploy/systemd/cutaint-serve.service):
#   systemd.sh SRC_DIR CUTAINT CLIENT FAKECUDA_DIR
# - `systemd-analyze verify` accepts the unit (with ExecStart's cutaint
#   pointed at this build);
# - it restarts on failure and forces a restart on 70, and writes cutaint's
#   %p as %%p (systemd's own %p is the unit's prefix);
# - its ExecStart line, run as systemd would (the specifiers resolved, paths
#   moved into a temporary directory, the server replaced by a test client),
#   exits 70 with the health file written when the context is lost, 0 when
#   healthy, and 2 for a malformed CUTAINT_* value (RestartPreventExitStatus).
# Skipped (77) without systemd-analyze.
set -euo pipefail
src=$1 tool=$2 client=$3 fakecuda=$4
unit=$src/deploy/systemd/cutaint-serve.service
command -v systemd-analyze >/dev/null || { echo "skipped: systemd-analyze is not installed (Debian package systemd)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$work/unit"
sed "s|/usr/local/bin/cutaint|$tool|" "$unit" >"$work/unit/cutaint-serve.service"
systemd-analyze verify "$work/unit/cutaint-serve.service" || fail "systemd-analyze verify rejects the unit"
grep -qx 'Restart=on-failure' "$unit" || fail "no Restart=on-failure"
grep -qx 'RestartForceExitStatus=70' "$unit" || fail "no RestartForceExitStatus=70"
if grep -v '^#' "$unit" | grep -E '(^|[^%])%p' >/dev/null; then fail "a single %p: systemd would expand it"; fi

# ExecStart as words (continuation lines joined, %% -> %), then moved here.
exec_start=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/\\$//' | tr '\n' ' ' | sed 's/^ExecStart=//; s/%%/%/g')
exec_start=${exec_start//\/usr\/local\/bin\/cutaint/$tool}
exec_start=${exec_start//\/var\/log\/cutaint/$work/log}
exec_start=${exec_start//\/var\/lib\/node_exporter\/textfile/$work/textfile}
exec_start=${exec_start//\/run\/cutaint/$work/run}
read -r -a words <<<"${exec_start% -- *}"
mkdir -p "$work/log" "$work/textfile" "$work/run"
export LD_LIBRARY_PATH=$fakecuda

status=0
"${words[@]}" -- "$client" crash >/dev/null 2>&1 || status=$?
[ "$status" -eq 70 ] || fail "a lost context: ExecStart exited $status, not 70"
[ -s "$work/run/serve.health" ] || fail "no health file after a lost context"
ls "$work"/log/serve-[0-9]*.jsonl >/dev/null || fail "no serve-PID.jsonl report (%%p not expanded to the pid?)"
status=0
"${words[@]}" -- "$client" happy >/dev/null 2>&1 || status=$?
[ "$status" -eq 0 ] || fail "healthy: ExecStart exited $status"
status=0
CUTAINT_POISON=purple "${words[@]}" -- "$client" happy >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "a malformed variable: ExecStart exited $status, not 2"
echo "ok: the unit verifies; ExecStart exits 70 on a lost context (restarted), 0 healthy, 2 misconfigured (not restarted)"

# shellcheck shell=bash
# runs.sh: what every Python client test shares, sourced first: the judge
# (tests/runtime/judge.sh: bare, under_shim, expect, fail and $work), the
# skip when the test's package cannot be imported, and the runs each test
# makes, bare and under the shim.  A clean pair must print the same and
# leave no failure in the report; a faulted pair runs with FAKECUDA_FAULTS
# and leaves RUNbase.out and RUNshim.out, and a report of the shim's run
# alone, for the test's own expectations.
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "${BASH_SOURCE[0]}")/../runtime/judge.sh"

# skip_unless_python PYTHON CODE WHY: exit 77 (skipped), saying WHY and
# the last line Python said, unless PYTHON runs CODE.
skip_unless_python() {
    local why
    why=$("$1" -c "$2" 2>&1) && return 0
    echo "SKIP: $3: ${why##*$'\n'}"
    exit 77
}

# clean_runs CMD...: base.out/.err and shim.out/.err of CMD.
clean_runs() {
    bare "$@" >"$work/base.out" 2>"$work/base.err" || fail "base: exit status $?"
    under_shim "$@" || fail "shim: exit status $?"
    cat "$work/base.out" "$work/base.err" "$work/shim.out" "$work/shim.err"
    cmp -s "$work/base.out" "$work/shim.out" || fail "the shim changed the clean run's output"
    grep -q '"event":"failure"' "$work/report.jsonl" && fail "the clean run's report holds a failure"
}

# faulted_runs RUN FAULTS BARE_STATUS SHIM_STATUS CMD...: CMD under
# FAKECUDA_FAULTS=FAULTS, expected to exit BARE_STATUS bare and SHIM_STATUS
# under the shim (1: the program raised; 70: the shim latched a lost
# context).
faulted_runs() {
    local run=$1 faults=$2 want_bare=$3 want_shim=$4 status
    shift 4
    bare FAKECUDA_FAULTS="$faults" "$@" >"$work/${run}base.out" 2>&1
    status=$?
    [ "$status" -eq "$want_bare" ] || fail "$faults, bare: exit status $status, expected $want_bare"
    rm -f "$work/report.jsonl"
    under_shim FAKECUDA_FAULTS="$faults" "$@"
    status=$?
    cp "$work/shim.out" "$work/${run}shim.out"
    cat "$work/${run}base.out" "$work/${run}shim.out" "$work/shim.err"
    [ "$status" -eq "$want_shim" ] || fail "$faults, shim: exit status $status, expected $want_shim"
}

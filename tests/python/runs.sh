# shellcheck shell=bash disable=SC2154 # work: judge.sh's, which the test sources first
# runs.sh: the runs every Python client test makes, each bare and under the
# shim, sourced after tests/runtime/judge.sh (its bare, under_shim, fail and
# $work).  A clean pair must print the same and leave no failure in the
# report; a faulted pair runs with FAKECUDA_FAULTS and leaves RUNbase.out
# and RUNshim.out, and a report of the shim's run alone, for the test's own
# expectations.

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

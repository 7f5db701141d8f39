# judge.sh - sourced by the scripts that judge a runtime test program's
# runs (refused.sh, graph_refused.sh, image.sh, unusable.sh, crash.sh): a
# work folder removed at exit, where run NAME leaves NAME.out, the run
# under the shim, and the verdict kept in $bad.
# shellcheck shell=bash disable=SC2034
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
fail() { echo "FAIL: $*"; bad=1; }
# The last "RESULT KEY=value" line run NAME printed: result NAME KEY.
result() { sed -n "s/^RESULT $2=//p" "$work/$1.out" | tail -n 1; }
expect() { # RUN KEY VALUE
    local got
    got=$(result "$1" "$2")
    [ "$got" = "$3" ] || fail "$1: $2=${got:-<none>}, expected $3"
}
# bare [VAR=value...] PROGRAM [ARGS...]: a run without the shim, after the
# sanitizer runtime a sanitized build names in CT_PRELOAD_FIRST (libtsan
# for an instrumented fakecuda in an nvcc-built program).
bare() {
    if [ -n "${CT_PRELOAD_FIRST:-}" ]; then env LD_PRELOAD="$CT_PRELOAD_FIRST" "$@"; else env "$@"; fi
}
# under_shim [VAR=value...] PROGRAM [ARGS...]: one run with $shim preloaded
# (after the sanitizer runtime a sanitized build names in CT_PRELOAD_FIRST)
# and its report in $work/report.jsonl, kept as shim.out and shim.err; its
# exit status.
# shellcheck disable=SC2154 # $shim is the sourcing script's
under_shim() {
    env LD_PRELOAD="${CT_PRELOAD_FIRST:+$CT_PRELOAD_FIRST }$shim" CUTAINT_REPORT="$work/report.jsonl" "$@" \
        >"$work/shim.out" 2>"$work/shim.err"
}

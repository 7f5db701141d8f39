# judge.sh - sourced by the scripts that judge a runtime test program's
# runs (refused.sh, graph_refused.sh): a work folder removed at exit, where
# run NAME leaves NAME.out, and the verdict kept in $bad.
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

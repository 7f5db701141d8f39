#!/usr/bin/env bash
# tests/perf/footprint.sh LIB - what every thread and every wrapper pays.
#
# - The static TLS block of LIB (readelf's TLS MemSiz), which every thread of
#   the host program carries, stays within TLS_MAX bytes.
# - Every function of the files a wrapper's happy path runs through uses at
#   most STACK_MAX bytes of stack (gcc -fstack-usage, LIB.p/*.su): the
#   wrappers themselves and their before/after hooks.  Paths that report
#   (events.c) or meet a kernel for the first time are not on it.
set -euo pipefail

lib=$1
if [ -n "${FOOTPRINT_SKIP:-}" ]; then
    echo "skipped: $FOOTPRINT_SKIP"
    exit 77
fi
TLS_MAX=${TLS_MAX:-1024}
STACK_MAX=${STACK_MAX:-512}
hot_files="wrappers memory launch scratch context driver"

tls=$(readelf -lW "$lib" | awk '$1 == "TLS" { print $6 }')
if [ -z "$tls" ]; then
    echo "no TLS segment in $lib"
else
    echo "TLS MemSiz $tls ($((tls)) bytes, limit $TLS_MAX)"
    if [ $((tls)) -gt "$TLS_MAX" ]; then
        echo "FAIL: every thread pays $((tls)) bytes of static TLS"
        exit 1
    fi
fi

fail=0
for f in $hot_files; do
    su=$lib.p/$f.c.su
    if [ ! -f "$su" ]; then
        echo "FAIL: $su missing (is the shim built with -fstack-usage?)"
        exit 1
    fi
    over=$(awk -F'\t' -v max="$STACK_MAX" '$2 + 0 > max { print "  " $1 " " $2 " bytes (" $3 ")" }' "$su")
    if [ -n "$over" ]; then
        echo "FAIL: over $STACK_MAX bytes of stack in $f.c:"
        echo "$over"
        fail=1
    fi
    echo "$f.c: largest frame $(awk -F'\t' '$2 + 0 > m { m = $2 + 0 } END { print m + 0 }' "$su") bytes"
done
exit "$fail"

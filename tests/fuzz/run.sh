#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS] [BUILD_DIR] - build the libFuzzer targets with
# clang (-Dfuzz=true) and run each for SECONDS (default 10) on its saved
# corpus (tests/fuzz/corpus/<target>/, used read-only: new inputs go to a
# scratch directory).  Any crash, leak (LeakSanitizer), UB, timeout (-timeout=10 s
# per input) or out-of-memory fails the run; the reproducer is left in the
# scratch directory and its path printed.  Prints executions per target.
# REL_FUZZ_JOBS: parallel workers per target (default 1).
set -euo pipefail
secs=${1:-10}
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$here/build-fuzz}
if [ ! -f "$build/build.ninja" ]; then
    CC=clang meson setup "$build" "$here" -Dfuzz=true -Dtests=disabled \
        -Dtoolkit_include="${CUDA_INCLUDE:-/usr/local/cuda/include}" >/dev/null
fi
targets=(fuzz_config fuzz_args fuzz_inject fuzz_signature fuzz_report fuzz_image fuzz_ptx)
ninja -C "$build" "${targets[@]/#/tests/fuzz/}" >/dev/null
scratch=$(mktemp -d /tmp/cutaint-fuzz.XXXXXX)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
total=0
status=0
for t in "${targets[@]}"; do
    mkdir -p "$scratch/$t"
    log="$scratch/$t.log"
    if ! "$build/tests/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
            -artifact_prefix="$scratch/$t-" -print_final_stats=1 \
            "$scratch/$t" "$here/tests/fuzz/corpus/$t" >"$log" 2>&1; then
        echo "FAIL $t: see $log"; grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -5
        status=1
        continue
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    total=$((total + ${runs:-0}))
    printf '%-16s %10s executions in %ss, no crash, leak or hang\n' "$t" "${runs:-?}" "$secs"
done
echo "fuzz: $total executions in all"
[ $status -eq 0 ] && rm -rf "$scratch"
exit $status

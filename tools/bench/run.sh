#!/usr/bin/env bash
# tools/bench/run.sh - what cutaint adds per hot driver call, on fakecuda.
#
#   tools/bench/run.sh [--quick] [--build DIR] [--rounds N] [--reps R] [--scale F] [--no-callgrind]
#                      [--instr-only]
#
# Builds DIR (default build-bench, -Dbuildtype=release) if needed, then runs
# tools/bench/bench for every case - launch (base and interior pointers),
# DtoH 4 KiB, HtoD 4 KiB, alloc+free 1 KiB, a module load+unload, cuStreamSynchronize, cuGraphLaunch
# of a one-node graph (the interior launch) and of a chain of four such
# nodes (more nodes, the same allocations); at 0, 1000
# and 100000 live allocations; 1 and 8 threads; no taint, and taint on an
# unrelated buffer - without and with libcutaint.so preloaded, interleaved
# (each round runs every case both ways, alternating which goes first), and
# takes the median over rounds of each process's median over reps.
#
# Also:
# - instructions per call added (valgrind --tool=callgrind, collecting only
#   the bench's measured loop; fixed iteration count, with minus without,
#   divided by the count).  fakecuda's 64 GiB arena cannot be mapped under
#   valgrind, so these runs use the stub driver (tools/bench/stubcuda.c);
#   the difference is cutaint's own code either way.  Plus where those
#   instructions go: callgrind_annotate of cutaint's functions, per call.
# - bytes of cutaint memory per live allocation: mallinfo2() heap growth
#   (in-use arena bytes + mmapped blocks) while 100000 allocations are made,
#   with minus without the shim, divided by 100000.
# - cutaint's own scaling over threads: launch, DtoH, HtoD and alloc+free at
#   1, 2 and 8 threads, without and with taint elsewhere, on the stub driver,
#   which shares nothing between threads
#   (fakecuda's locks make its own time per call grow several-fold at 8
#   threads, which hides what cutaint adds).
# - at scale (stub driver): alloc+free at 1M and 5M live allocations, the
#   slowest single step of growing to 1M (the median over 5 runs of each
#   run's maximum, so that one preemption does not decide it), and bytes per
#   live allocation at 5M.
# - the tainted table (callgrind): launch, DtoH and HtoD instructions added
#   with 1, 8, 32, 64, 65, 10,000 and 100,000 allocations carrying taint
#   elsewhere (taint_counts), which must not grow with the count, and
#   launch_dtoh (a launch, then a read of what it wrote) beside the sum of
#   the two calls measured alone.  --instr-only runs the instruction
#   figures alone (what CI prints), no timings, and not first_use's
#   (instr_slow_ops: minutes under callgrind).
# - the floor (callgrind, x86-64): what a pass-through interposer
#   (tools/bench/floor.c, one jump a call) adds, beside every instruction
#   row: what cutaint adds above it is its own.
# - the one-off cost of reading a 100 MB kernel image (tools/bench/image_bench:
#   core/image.c on synthesized fatbins of SASS, of PTX, of zstd PTX).
# The last line is key=value, built from two tables below (instr_rows,
# ns_rows: a new figure is one more entry): <row>_added_instr for every
# instruction row (htod, dtoh, dtoh_taint, alloc_free, launch, launch_taint,
# graph_launch, graph_launch_taint, module_load, libcall (cublasSgemm_v2 of a
# library that does nothing, through the wrapper), first_use: the first use of
# a kernel the driver has no code for, in a 4 MB image loaded as NVIDIA's
# runtime loads its own, launch_dtoh, <op>_taint_<N> for the tainted table,
# and <op>_floor_instr: what a pass-through interposer, tools/bench/floor.c,
# adds - the floor, x86-64 only),
# <row>_added_ns for every timing row, at 100000 live allocations, interior
# pointers, 1 thread, no taint (launch8: 8 threads; *_taint: taint elsewhere;
# *_stub: on the stub driver, the same code with a driver that does nothing,
# steady where fakecuda swings); then bytes_per_alloc,
# launch8_[taint_]stub_scaling = added at 8 threads / at 1 (stub driver), and
# alloc_free_1m_added_ns, alloc_free_5m_added_ns, alloc_max_us_1m,
# bytes_per_alloc_5m (the scale rows, stub driver), and
# image_<case>_ms for every image case (sass, ptx, ptx_zstd: reading 100 MB
# of it once, through process_vm_readv as the shim reads a program's).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${CUTAINT_BENCH_BUILD:-$root/build-bench}
rounds=5
reps=5
scale=1
quick=0
callgrind=1
cg_iters=2000
big=100000  # the live allocations of the headline figures
tainted_many=10000 # allocations carrying taint elsewhere, for the *_taint_many rows
taint_counts="1 8 32 64 65 10000 100000" # the tainted table's columns
taint_ops="launch_interior dtoh htod"     # and its rows
instr_only=0
instr_slow_ops="first_use" # left out by --instr-only (CI): minutes under callgrind
scale_lives="1000000 5000000" # the scale rows' live allocations
lives="0 1000 $big"
threads_list="1 8"

# The figures of the last line, one entry each (a new row is one more line).
# Instructions added per call (callgrind): name op taint (0, or N
# allocations carrying taint elsewhere; many: $tainted_many).
instr_rows=(
    "htod htod 0"
    "dtoh dtoh 0"
    "dtoh_taint dtoh 1"
    "dtoh_taint_many dtoh many"
    "alloc_free alloc_free 0"
    "launch launch_interior 0"
    "launch_taint launch_interior 1"
    "launch_taint_many launch_interior many"
    "graph_launch graph_launch 0"
    "graph_launch_taint graph_launch 1"
    "module_load module_load 0"
    "first_use first_use 0"
    "launch_dtoh launch_dtoh 0"
    "libcall libcall 0"
    "libcall_taint libcall 1"
    "libcall_taint_many libcall many"
)
# Nanoseconds added per call: name op threads taint table (main: fakecuda,
# stub: the stub driver), at $big live allocations.
ns_rows=(
    "launch launch_interior 1 0 main"
    "dtoh dtoh 1 0 main"
    "htod htod 1 0 main"
    "alloc_free alloc_free 1 0 main"
    "module_load module_load 1 0 main"
    "launch8 launch_interior 8 0 main"
    "launch_taint launch_interior 1 1 main"
    "dtoh_taint dtoh 1 1 main"
    "launch8_taint launch_interior 8 1 main"
    "launch_stub launch_interior 1 0 stub"
    "dtoh_stub dtoh 1 0 stub"
    "htod_stub htod 1 0 stub"
    "alloc_free_stub alloc_free 1 0 stub"
    "launch8_stub launch_interior 8 0 stub"
)
# Ops measured under callgrind besides those of instr_rows (printed only).
instr_extra_ops="launch_base sync graph_launch4"

while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 ;;
        --build) build=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --reps) reps=$2; shift ;;
        --scale) scale=$2; shift ;;
        --no-callgrind) callgrind=0 ;;
        --instr-only) instr_only=1 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
        *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
if [ "$quick" = 1 ]; then
    rounds=1; reps=1; scale=0.05; cg_iters=200; lives="0 $big"; tainted_many=100; scale_lives="100000 200000"
fi

if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$root" -Dbuildtype=release \
        -Dtoolkit_include="${CUDA_INCLUDE:-/usr/local/cuda/include}" >/dev/null
fi
floor_target=()
[ "$(uname -m)" = x86_64 ] && floor_target=(tools/bench/libbench_floor.so)
ninja -C "$build" tools/bench/bench tools/bench/image_bench tools/bench/stub/libcuda.so.1 shim/libcutaint.so \
    "${floor_target[@]}" >/dev/null

bench=$build/tools/bench/bench
shim=$build/shim/libcutaint.so
floor_lib=$build/tools/bench/libbench_floor.so # x86-64 only
fakecuda_dir=$build/subprojects/fakecuda
stub_dir=$build/tools/bench/stub
work=$(mktemp -d)
# On failure, what bench and valgrind said goes to stderr before it is removed.
cleanup() {
    local rc=$?
    [ "$rc" = 0 ] || cat "$work/stderr" >&2 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
export CUTAINT_LOG=off
# fakecuda's deterministic schedule: work runs on the calling thread, as the
# bench's figures always have; the asynchronous one's hand-offs to a worker
# thread make fakecuda's own time per call swing far more than what cutaint
# adds.
export FAKECUDA_SCHEDULE=sync

preload_for() { # SHIM(0|1|floor) -> LD_PRELOAD value
    if [ "$1" = 1 ]; then echo "$shim"; fi
    if [ "$1" = floor ]; then echo "$floor_lib"; fi
}

# run_bench SHIM(0|1) ARGS...: one bench process on fakecuda (or on the
# driver in $driver_dir), tagged lines to stdout.
run_bench() {
    local with=$1
    shift
    LD_LIBRARY_PATH=${driver_dir:-$fakecuda_dir} LD_PRELOAD=$(preload_for "$with") "$bench" "$@" \
        2>>"$work/stderr" | sed "s/^/shim=$with /"
}

# sweep OUT "THREADS..." "LIVES..." [ARGS...]: every round, both taint
# regimes, every thread count and live count, without and with the shim
# (alternating which goes first), appended to OUT.
sweep() {
    local out=$1 threads_set=$2 lives_set=$3 round taint threads live with order
    shift 3
    for round in $(seq 1 "$rounds"); do
        if [ $((round % 2)) = 1 ]; then order="0 1"; else order="1 0"; fi
        for taint in 0 1; do
            for threads in $threads_set; do
                for live in $lives_set; do
                    local args=("$@" --live "$live" --threads "$threads" --reps "$reps" --iters-scale "$scale")
                    [ "$taint" = 1 ] && args+=(--taint)
                    for with in $order; do
                        run_bench "$with" "${args[@]}" >>"$out"
                    done
                done
            done
        done
    done
}

# medians FILE: "op live threads taint without with added ratio" per case,
# each the median over rounds, sorted for the table.
medians() {
    awk '
        $2 ~ /^op=/ {
            for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
            key = f["op"] " " f["live"] " " f["threads"] " " f["taint"]
            n = ++cnt[key, f["shim"]]; v[key, f["shim"], n] = f["ns"]; keys[key] = 1
        }
        function median(key, s,    n, i, j, t, a) {
            n = cnt[key, s]
            for (i = 1; i <= n; i++) a[i] = v[key, s, i] + 0
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        END {
            for (key in keys) {
                w0 = median(key, 0); w1 = median(key, 1)
                printf "%s %.1f %.1f %.1f %.2f\n", key, w0, w1, w1 - w0, (w0 > 0 ? w1 / w0 : 0)
            }
        }' "$1" | sort -k4,4n -k3,3n -k1,1 -k2,2n
}

print_table() { # TABLE
    printf '%-16s %7s %4s %5s %12s %12s %10s %7s\n' op live thr taint "without ns" "with ns" "added ns" ratio
    while read -r op live thr taint w0 w1 added ratio; do
        printf '%-16s %7s %4s %5s %12s %12s %10s %7s\n' "$op" "$live" "$thr" "$taint" "$w0" "$w1" "$added" "$ratio"
    done <"$1"
}

echo "cutaint bench: $(uname -m), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "build: $build ($(meson introspect --buildoptions "$build" 2>/dev/null | grep -o '"name": "buildtype", "value": "[a-z]*"' | grep -o '[a-z]*"$' | tr -d '"' || echo '?'))"
echo "rounds=$rounds reps=$reps scale=$scale"

# ---- instructions per call (callgrind, stub driver) ----
declare -A ins bare floor
callgrind_run() { # op taint shim(0|1|floor) -> bench_loop's instructions
    local op=$1 taint=$2 with=$3 out="$work/cg.$1.$2.$3"
    local args=(--callgrind --ops "$op" --live "$big" --iters "$cg_iters")
    [ "$taint" != 0 ] && args+=(--tainted "$taint")
    LD_LIBRARY_PATH=$stub_dir LD_PRELOAD=$(preload_for "$with") valgrind --tool=callgrind --instr-atstart=no \
        --toggle-collect=bench_loop --dump-instr=yes \
        --callgrind-out-file="$out" "$bench" "${args[@]}" >/dev/null 2>>"$work/stderr"
    awk '/^totals:/ { print $2 }' "$out"
}
instr() { # op taint(0, N or many) -> added instructions per call
    local op=$1 taint=${2/many/$tainted_many} with
    # Without the shim the loop does the same whatever the taint (the stub
    # keeps nothing): one bare run per op serves every column.
    [ -n "${bare[$op]:-}" ] || bare[$op]=$(callgrind_run "$op" 0 0)
    with=$(callgrind_run "$op" "$taint" 1)
    [ "$taint" = "$2" ] || cp "$work/cg.$op.$taint.1" "$work/cg.$op.$2.1"
    awk -v a="${bare[$op]}" -v b="$with" -v n="$cg_iters" 'BEGIN { printf "%.0f", (b - a) / n }'
}
floor_instr() { # op -> what the pass-through interposer adds per call (na off x86-64)
    local op=$1 with
    [ -f "$floor_lib" ] || { echo na; return; }
    [ -n "${bare[$op]:-}" ] || bare[$op]=$(callgrind_run "$op" 0 0)
    with=$(callgrind_run "$op" 0 floor)
    awk -v a="${bare[$op]}" -v b="$with" -v n="$cg_iters" 'BEGIN { printf "%.0f", (b - a) / n }'
}

breakdown() { # op taint: cutaint's functions, self instructions per call
    callgrind_annotate --inclusive=no --threshold=100 "$work/cg.$1.$2.1" 2>/dev/null |
        awk -v n="$cg_iters" '/libcutaint/ {
            gsub(",", "", $1); c = $1 / n
            if (c >= 1) { sub(/^[ 0-9,]+(\([ 0-9.%]+\))? */, ""); printf "    %8.1f  %s\n", c, $0 }
        }' | head -25
}

# The table of instructions added per call, then the tainted table (every
# count of taint_counts beside 0); fills ins[op.taint].
instr_tables() {
    local op many t
    echo
    echo "instructions added per call (callgrind, $big live, 1 thread, $cg_iters calls):"
    # every op of a row, once, in the rows' order, then the extra ones
    cg_ops=$(for row in "${instr_rows[@]}"; do echo "${row#* }"; done | awk '!seen[$1]++ { print $1 }')
    printf '%-16s %10s %10s %10s %10s\n' op floor "no taint" "taint" "taint x$tainted_many"
    for op in $cg_ops $instr_extra_ops; do
        if [ "$instr_only" = 1 ] && [[ " $instr_slow_ops " == *" $op "* ]]; then
            printf '%-16s (not with --instr-only: minutes under callgrind)\n' "$op"
            continue
        fi
        floor[$op]=$(floor_instr "$op")
        ins[$op.0]=$(instr "$op" 0)
        ins[$op.1]=$(instr "$op" 1)
        many=$(printf '%s\n' "${instr_rows[@]}" | awk -v op="$op" '$2 == op && $3 == "many" { print "yes" }' | head -1)
        [ -n "$many" ] && ins[$op.many]=$(instr "$op" many)
        printf '%-16s %10s %10s %10s %10s\n' "$op" "${floor[$op]}" "${ins[$op.0]}" "${ins[$op.1]}" "${ins[$op.many]:--}"
    done
    echo "launch_dtoh: ${ins[launch_dtoh.0]}, the two calls alone: $((${ins[launch_interior.0]} + ${ins[dtoh.0]}))"
    echo
    echo "instructions added per call with N allocations carrying taint elsewhere:"
    printf '%-16s' op
    for t in 0 $taint_counts; do printf ' %8s' "$t"; done
    echo
    for op in $taint_ops; do
        printf '%-16s' "$op"
        for t in 0 $taint_counts; do
            [ -n "${ins[$op.$t]:-}" ] || ins[$op.$t]=$(instr "$op" "$t")
            printf ' %8s' "${ins[$op.$t]}"
        done
        echo
    done
}

instr_breakdowns() {
    local op t
    for op in launch_interior graph_launch; do
        for t in 0 1; do
            echo
            echo "where cutaint's instructions go, $op, taint=$t (self Ir per call):"
            breakdown "$op" "$t"
        done
    done
    for op in htod dtoh alloc_free launch_dtoh; do
        echo
        echo "$op, taint=0 (self Ir per call):"
        breakdown "$op" 0
    done
    echo
    echo "dtoh, taint=1 (self Ir per call):"
    breakdown dtoh 1
}

# key=value of the instruction rows and the tainted table, on one line.
instr_line() {
    local row name op taint t
    for row in "${instr_rows[@]}"; do
        read -r name op taint <<<"$row"
        printf '%s ' "${name}_added_instr=${ins[$op.$taint]:-na}"
    done
    for op in $taint_ops; do
        for t in $taint_counts; do printf '%s ' "${op%_interior}_taint_${t}_added_instr=${ins[$op.$t]:-na}"; done
    done
    for op in $taint_ops alloc_free; do printf '%s ' "${op%_interior}_floor_instr=${floor[$op]:-na}"; done
    echo
}

if [ "$instr_only" = 1 ]; then
    command -v valgrind >/dev/null || { echo "run.sh: --instr-only needs valgrind" >&2; exit 2; }
    instr_tables
    instr_line
    exit 0
fi

sweep "$work/times" "$threads_list" "$lives"

if grep -q 'shim=1 taint refused_read=0' "$work/times"; then
    echo "warning: the tainting launch left no taint under cutaint; the taint regime is not measured" >&2
fi

medians "$work/times" >"$work/main_table"
echo
print_table "$work/main_table"

added() { # op live threads taint [TABLE]
    awk -v k="$1 $2 $3 $4" '($1" "$2" "$3" "$4) == k { print $7 }' "${5:-$work/main_table}"
}

# ---- cutaint's own scaling over threads (stub driver) ----
# fakecuda serialises launches and copies on its own locks, so with 8 threads
# its time per call grows several-fold and swamps what cutaint adds.  The
# stub shares nothing between threads: any growth here is cutaint's.  (On a
# 2-CPU machine, 2 threads is the case without oversubscription.)
driver_dir=$stub_dir sweep "$work/stub_times" "1 2 8" "$big" --ops launch_interior,dtoh,htod,alloc_free
medians "$work/stub_times" >"$work/stub_table"
echo
echo "cutaint's own cost over threads (stub driver: no driver work, nothing shared):"
print_table "$work/stub_table"
stub_scaling() { # op taint -> added at 8 threads / added at 1 thread
    awk -v a="$(added "$1" "$big" 1 "$2" "$work/stub_table")" -v b="$(added "$1" "$big" 8 "$2" "$work/stub_table")" \
        'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }'
}

if [ "$callgrind" = 1 ] && command -v valgrind >/dev/null; then
    instr_tables
    instr_breakdowns
else
    echo "(valgrind not found or --no-callgrind: no instruction counts)"
fi

# ---- memory per live allocation ----
mem() { # shim -> heap bytes grown over $big allocations (median of 3)
    local _
    for _ in 1 2 3; do
        run_bench "$1" --mem --live "$big" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^heap_bytes=/) { sub(/heap_bytes=/, "", $i); print $i } }'
    done | sort -n | sed -n 2p
}
heap0=$(mem 0)
heap1=$(mem 1)
bytes_per_alloc=$(awk -v a="$heap0" -v b="$heap1" -v n="$big" 'BEGIN { printf "%.1f", (b - a) / n }')
echo
echo "memory: heap growth over $big allocations: without $heap0 B, with $heap1 B -> $bytes_per_alloc B per live allocation"

# ---- at scale (stub driver: cutaint's own cost, no driver state) ----
scale_added() { # live -> alloc+free ns added, median over rounds (interleaved)
    local live=$1 round with order
    : >"$work/scale.$live"
    for round in $(seq 1 "$rounds"); do
        if [ $((round % 2)) = 1 ]; then order="0 1"; else order="1 0"; fi
        for with in $order; do
            driver_dir=$stub_dir run_bench "$with" --ops alloc_free --live "$live" --reps "$reps" \
                --iters-scale "$scale" >>"$work/scale.$live"
        done
    done
    medians "$work/scale.$live" | awk '{ print $7 }'
}
grow_max() { # live -> the slowest step growing to live, with the shim: median of 5 runs' maxima
    local _
    for _ in 1 2 3 4 5; do
        driver_dir=$stub_dir run_bench 1 --grow-max --live "$1" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^max_us=/) { sub(/max_us=/, "", $i); print $i } }'
    done | sort -n | sed -n 3p
}
declare -A scale_ns
echo
echo "at scale (stub driver):"
for live in $scale_lives; do
    scale_ns[$live]=$(scale_added "$live")
    echo "  alloc+free at $live live: ${scale_ns[$live]} ns added"
done
first_scale=${scale_lives%% *} last_scale=${scale_lives##* }
alloc_max=$(grow_max "$first_scale")
echo "  slowest step growing to $first_scale live (median of 5 runs' maxima): $alloc_max us"
stub_heap0=$(driver_dir=$stub_dir run_bench 0 --mem --live "$last_scale" | sed -n 's/.*heap_bytes=\([0-9]*\).*/\1/p')
stub_heap1=$(driver_dir=$stub_dir run_bench 1 --mem --live "$last_scale" | sed -n 's/.*heap_bytes=\([0-9]*\).*/\1/p')
bytes_scale=$(awk -v a="$stub_heap0" -v b="$stub_heap1" -v n="$last_scale" 'BEGIN { printf "%.1f", (b - a) / n }')
echo "  memory at $last_scale live: $bytes_scale B per live allocation"

# ---- reading a kernel image once ----
image_args=(--mb 100 --reps "$reps")
[ "$quick" = 1 ] && image_args=(--mb 10 --reps 1)
echo
echo "reading a kernel image once (core/image.c; ${image_args[1]} MB of content, median of ${image_args[3]}):"
"$build/tools/bench/image_bench" "${image_args[@]}" 2>>"$work/stderr" | tee "$work/image"
image_ms() { # case -> ms through process_vm_readv, read as every load is (with directions)
    awk -v c="case=$1" '$2 == c && $3 == "fetch=pvr" && $4 == "read=directions" { sub(/ms=/, "", $8); print $8 }' \
        "$work/image"
}

[ "$quick" = 1 ] && echo "(--quick: smoke test only; figures are not stable)"
line=()
for row in "${ns_rows[@]}"; do
    read -r name op thr taint table <<<"$row"
    line+=("${name}_added_ns=$(added "$op" "$big" "$thr" "$taint" "$work/${table}_table")")
done
read -ra instr_fields <<<"$(instr_line)"
line+=("${instr_fields[@]}")
line+=("bytes_per_alloc=$bytes_per_alloc" "launch8_stub_scaling=$(stub_scaling launch_interior 0)"
       "launch8_taint_stub_scaling=$(stub_scaling launch_interior 1)"
       "alloc_free_1m_added_ns=${scale_ns[$first_scale]}" "alloc_free_5m_added_ns=${scale_ns[$last_scale]}"
       "alloc_max_us_1m=$alloc_max" "bytes_per_alloc_5m=$bytes_scale")
for c in sass ptx ptx_zstd; do
    line+=("image_${c}_ms=$(image_ms "$c")")
done
echo "${line[*]}"

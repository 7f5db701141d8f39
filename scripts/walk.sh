#!/usr/bin/env bash
# scripts/walk.sh - how far a refused read travels through cutaint, and how
# big and how repetitive the tree is: the measure of issue 42.
#
#   scripts/walk.sh [--no-build]
#
# The walks: a tiny driver-API client on fakecuda, under libcutaint.so, has
# a host-to-device copy fail (CUTAINT_INJECT), then
#   read   reads the buffer back (cuMemcpyDtoH): refused, host poisoned;
#   graph  launches a graph that copies the buffer to another one and that
#          one to the host: the graph is skipped, its host copy refused.
# Each runs under callgrind, collecting only inside the refused call
# (cuMemcpyDtoH_v2, cuGraphLaunch), in an unoptimised build (BUILD_DIR,
# default build-walk: -O0, so no function hides inlined in another).  A
# walk is counted as the distinct functions of libcutaint.so (shim/, core/)
# that ran and their files; "read decided" is how many times the read rule
# (ct_read_rule) ran, and "store looks" how many times anything asked the
# store whether bytes carry a failure (ct_read_failure, ct_check_written,
# ct_check_rows_written).  Then the sizes (lines of the files git tracks)
# of core/, shim/, the command (tools/cutaint) and fakecuda, and what
# `duplicates` (on PATH, if there) finds in each and in the whole tree.
# Needs valgrind and callgrind_annotate; a C compiler; the CUDA headers
# (CUDA_INCLUDE, default /usr/local/cuda/include).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD_DIR:-build-walk}
cuda_include=${CUDA_INCLUDE:-/usr/local/cuda/include}
[ "${1:-}" = --no-build ] || {
    if [ ! -f "$build/build.ninja" ]; then
        meson setup "$build" -Dbuildtype=debug -Dtoolkit_include="$cuda_include" >/dev/null
    fi
    ninja -C "$build" shim/libcutaint.so subprojects/fakecuda/libcuda.so.1 >/dev/null
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/walk.c" <<'EOF'
#include <cuda.h>
#include <stdio.h>
#include <string.h>

#define N 4096
static unsigned char host[N];

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr a, b;
    cuInit(0);
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
    cuMemAlloc(&a, N);
    cuMemAlloc(&b, N);
    memset(host, 1, N);
    CUresult w = cuMemcpyHtoD(a, host, N); /* fails: CUTAINT_INJECT */
    CUresult r;
    if (argc > 1 && strcmp(argv[1], "graph") == 0) {
        CUgraph g;
        CUgraphNode to_b, to_host;
        CUgraphExec e;
        CUDA_MEMCPY3D d2d = {.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = a,
                             .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = b,
                             .WidthInBytes = N, .Height = 1, .Depth = 1};
        CUDA_MEMCPY3D d2h = {.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = b,
                             .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = host,
                             .WidthInBytes = N, .Height = 1, .Depth = 1};
        cuGraphCreate(&g, 0);
        cuGraphAddMemcpyNode(&to_b, g, NULL, 0, &d2d, ctx);
        cuGraphAddMemcpyNode(&to_host, g, &to_b, 1, &d2h, ctx);
        cuGraphInstantiateWithFlags(&e, g, 0);
        r = cuGraphLaunch(e, 0);
    } else {
        r = cuMemcpyDtoH(host, a, N);
    }
    printf("write=%d read=%d host[0]=0x%02x\n", (int)w, (int)r, host[0]);
    return 0;
}
EOF
cc -std=c11 -g -O0 -I"$cuda_include" "$work/walk.c" -o "$work/walk" -L"$build/subprojects/fakecuda" -l:libcuda.so.1 \
    -Wl,-rpath,"$root/$build/subprojects/fakecuda"

# walk NAME FUNCTION ARG: one walk's line.
walk() {
    local name=$1 fn=$2 arg=$3 out=$work/cg.$1
    CUTAINT_LOG=off CUTAINT_INJECT='api:cuMemcpyHtoD=CUDA_ERROR_UNKNOWN' FAKECUDA_SCHEDULE=sync \
        LD_PRELOAD="$root/$build/shim/libcutaint.so" valgrind --tool=callgrind --collect-atstart=no \
        --toggle-collect="$fn" --compress-strings=no --compress-pos=no --callgrind-out-file="$out" \
        "$work/walk" "$arg" >"$work/said.$name" 2>"$work/valgrind.$name"
    grep -qF 'host[0]=0x01' "$work/said.$name" && {
        echo "walk.sh: the $name walk's host buffer was not poisoned: $(cat "$work/said.$name")" >&2
        exit 1
    }
    # functions of shim/ and core/ that ran (fn= lines under their file),
    # and the calls made to the read checks.
    awk -v name="$name" '
        /^fl=/ { file = substr($0, 4) }
        /^(fi|fe)=/ { file = substr($0, 4) }
        /^fn=/ { fn = substr($0, 4); if (file ~ /(^|\/)(shim|core)\/[^\/]+$/) { fns[fn] = 1; files[file] = 1 } }
        /^cfn=/ { callee = substr($0, 5) }
        /^calls=/ { split($0, c, /[= ]/); calls[callee] += c[2] }
        END {
            for (f in fns) nf++
            for (f in files) nfl++
            looks = calls["ct_read_failure"] + calls["ct_check_written"] + calls["ct_check_rows_written"]
            printf "%-6s %5d files %5d functions   read decided %d   store looks %d\n",
                name, nfl, nf, calls["ct_read_rule"] + 0, looks
            list = ""
            for (f in files) { sub(/.*\/(shim|core)\//, "", f); list = list " " f }
            print "      " list
        }' "$out"
}

echo "the refused-read walks ($build, -O0):"
walk read cuMemcpyDtoH_v2 read
walk graph cuGraphLaunch graph

echo
echo "sizes (lines of tracked files):"
for dir in core shim tools/cutaint subprojects/fakecuda; do
    printf '%-20s %7d lines %4d files\n' "$dir" "$(git ls-files -z "$dir" | xargs -0 cat | wc -l)" \
        "$(git ls-files "$dir" | wc -l)"
done

echo
if command -v duplicates >/dev/null; then
    echo "duplicates (pairs of places sharing 6 or more lines):"
    for dir in core shim tools/cutaint subprojects/fakecuda .; do
        printf '%-20s %s\n' "$dir" "$(duplicates --repo "$dir" --most 1 --seconds 120 | grep -m1 'pairs of places' || echo 'none')"
    done
else
    echo "(duplicates not on PATH: no duplicate counts)"
fi

#!/usr/bin/env bash
# Passes when libcutaint.so ($1) exports nothing but what a program may bind
# to: the driver's entry points (cu[A-Z]...), the CUDA libraries' entry
# points shim/libcalls.def wraps (cublas, curand, cufft, cusolver, cusparse), dlsym and
# include/cutaint.h's
# cutaint_shim_region_* (the program calls them by name).  Anything else - a
# helper only the tests call, a bundled library's global - would interpose
# on the host program's own symbols.
set -euo pipefail
lib=$1
# Names without their version (cuInit@@CUTAINT_1, dlsym@GLIBC_2.2.5), less
# the version definitions themselves (type A).
exports=$(nm -D --defined-only "$lib" | awk '$2 != "A" {sub(/@.*/, "", $NF); print $NF}')
others=$(echo "$exports" | grep -Ev '^((cu|cublas|curand|cufft|cusolver|cusparse)[A-Z][A-Za-z0-9_]*|dlsym|cutaint_shim_region_(alloc|free))$' || true)
echo "libcutaint.so exports $(nm -D --defined-only "$lib" | grep -c ' cu[A-Z]') driver entry points and dlsym"
if [ -n "$others" ]; then
    echo "FAIL: libcutaint.so also exports: $(echo "$others" | tr '\n' ' ')"
    exit 1
fi
# And it brings no library into the process but the C library: a preload
# into every process of a machine must not load others into them (libzstd,
# for one, is opened only when a compressed image has to be read).  A
# sanitizer build's runtimes are the build's, not the product's.
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
    grep -Ev '^(libc\.so\.6|ld-linux.*|lib(a|ub|t)san\.so\.[0-9]+)$' || true)
if [ -n "$needed" ]; then
    echo "FAIL: libcutaint.so needs libraries besides libc: $(echo "$needed" | tr '\n' ' ')"
    exit 1
fi
echo "libcutaint.so needs only libc"

#!/usr/bin/env bash
# tests/gpu/stage-deps.sh [DIR]: copy the build's header/library needs that the
# GPU machine lacks (uthash.h; libiberty's headers and static library) from
# THIS machine (Debian packages uthash-dev and libiberty-dev) into DIR
# (default: .gpu-deps at the repository root), as DIR/include and DIR/lib.
#
# Why: nothing can be installed on the GPU machine, and its image has neither
# package. run.sh looks in .gpu-deps (or $GPU_SUITE_DEPS) when the system
# has no copy and hands the folder to the compiler through CPATH and
# LIBRARY_PATH. The folder travels to the GPU machine with the working tree
# when git does not ignore it; otherwise name it in the device tool's carry.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${1:-$here/../../.gpu-deps}
iberty_a=$(gcc -print-file-name=libiberty.a)

need() {
    if [[ ! -e $1 ]]; then
        echo "stage-deps: $1 not found here: apt-get install $2" >&2
        exit 1
    fi
}
need /usr/include/uthash.h uthash-dev
need /usr/include/libiberty/demangle.h libiberty-dev
need "$iberty_a" libiberty-dev

mkdir -p "$dest/include/libiberty" "$dest/lib"
cp /usr/include/uthash.h "$dest/include/"
cp /usr/include/libiberty/*.h "$dest/include/libiberty/"
cp "$iberty_a" "$dest/lib/libiberty.a"
echo "stage-deps: staged uthash.h, libiberty headers and libiberty.a in $(cd "$dest" && pwd)"

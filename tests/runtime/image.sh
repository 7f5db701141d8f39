#!/usr/bin/env bash
# image.sh SHIM PROGRAM CASE: image.cu's program on fakecuda, with SHIM
# preloaded, where its kernel image is unusable:
#   load   - the driver refuses its library (FAKECUDA_FAULTS: cuLibraryLoadData
#            answers CUDA_ERROR_NO_BINARY_FOR_GPU)
#   lookup - the driver finds no fill in it (cuLibraryGetKernel answers
#            CUDA_ERROR_NOT_FOUND)
#   arch   - PROGRAM is built for another GPU (sm_80 code, no PTX): fakecuda's
#            9.0 device refuses its library as the real driver does
#   healthy - nothing refused: it runs, and the report holds no image event
# The program sees the runtime's error at the launch, as without the shim,
# and the copy is refused (served stale without it); the report's image
# event names the image, its code, its kernels and the device, and the
# launch is a failure from it.  LD_LIBRARY_PATH comes
# from meson.
set -uo pipefail
shim=$1 program=$2 case=$3
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"

case $case in
load) faults='api:cuLibraryLoadData#1=209' ;;
lookup) faults='api:cuLibraryGetKernel#1=500' ;;
healthy | arch) faults= ;;
*) echo "image.sh: unknown case $case" >&2; exit 2 ;;
esac
export FAKECUDA_FAULTS=$faults
bare "$program" >"$work/base.out" 2>"$work/base.err" || fail "base: exit status $?"
under_shim "$program" || fail "shim: exit status $?"
cat "$work/base.out" "$work/shim.out" "$work/shim.err"
report=$work/report.jsonl
event() { grep '"event":"image"' "$report"; }

case $case in
load | arch) refused=cudaErrorNoKernelImageForDevice ;;
lookup) refused=cudaErrorSymbolNotFound ;;
healthy) refused= ;;
esac
for run in base shim; do
    if [ -z "$refused" ]; then
        expect $run launch cudaSuccess
        expect $run host correct
        continue
    fi
    expect $run launch "$refused"
    # Served stale without the shim; refused under it (unusable.sh has the whole story).
    if [ $run = base ]; then
        expect $run memcpy cudaSuccess
        expect $run host stale
    else
        expect $run memcpy "$refused"
        expect $run host poisoned
    fi
done

if [ "$case" = healthy ]; then
    ! grep -q '"event":"image"' "$report" || fail "a healthy image is said to be unusable"
    grep -q '"unusable_images":0' "$report" || fail "the exit event does not count 0 unusable images"
    exit "$bad"
fi
[ "$(event | wc -l)" -eq 1 ] || fail "not one image event: $(event)"
has() { event | grep -q "$1" || fail "the image event lacks $1: $(event)"; }
has '"form":"wrapper"'
has '"status":"ok"'
has '"kernels":\[[^]]*"fill(float\*, int, float)"'
has '"device_cc":"9.0"'
if [ "$case" = arch ]; then
    has '"holds":\["sm_80"\]'
    has '"fit":"none"'
    grep -q 'holds sm_80 code and no PTX; this device (.*) is sm_90, which can run none of it: CUDA_ERROR_NO_BINARY_FOR_GPU' \
        "$work/shim.err" || fail "the warn line does not say sm_80 code cannot run on sm_90"
else
    has '"holds":\["sm_90","compute_90"\]'
    has '"fit":"sass"'
fi
if [ "$case" = load ] || [ "$case" = arch ]; then
    has '"api":"cuLibraryLoadData"'
    has '"error":"CUDA_ERROR_NO_BINARY_FOR_GPU"'
    has '"kernel":null'
else
    has '"api":"cuLibraryGetKernel"'
    has '"error":"CUDA_ERROR_NOT_FOUND"'
    has '"kernel":"_Z4fillPfif"'
fi
grep -q '"unusable_images":1' "$report" || fail "the exit event does not count the unusable image"
grep -q 'cutaint: image 0x[0-9a-f]* (kernels .*fill(float\*, int, float)' "$work/shim.err" ||
    fail "no warn line naming the image and its kernels"
has '"number":1,"stand_in":true'
grep -q '"event":"failure".*"kernel":"fill(float\*, int, float)".*"image":1[,}]' "$report" ||
    fail "the launch of fill is no failure from image #1"
exit "$bad"

#!/usr/bin/env bash
# unusable.sh SHIM PROGRAM CASE HOW [PLUGIN]: unusable.cu's program,
# launching fill (or fill_span) as HOW says, on fakecuda without and with
# SHIM, where fill cannot run:
#   arch    PROGRAM is built for another GPU (sm_80 code, no PTX): the
#           driver refuses the runtime's library
#   lazy    the same, the driver's lazy loading failing at the kernel's
#           lookup instead (FAKECUDA_LAZY_IMAGE_ERRORS=lookup)
#   lookup  the driver finds no fill in the image (FAKECUDA_FAULTS:
#           cuLibraryGetKernel answers CUDA_ERROR_NOT_FOUND)
#   late    the same sm_80 PROGRAM, the driver accepting its library and
#           the lookups and failing the launch itself
#           (FAKECUDA_LAZY_IMAGE_ERRORS=launch; PLUGIN, span_kernels.c,
#           gives fakecuda fill_span): no stand-in image, so no image
#           event and a failure naming none; the driver, which cannot
#           describe what it could not load, gives no layout, so for span
#           only the image's parameter table says where the output is
# Without the shim both copies serve stale bytes (the case is real).  With
# it they are refused and their host buffers poisoned; every other answer
# the program got is the same (but for late's saxpy, below); the driver saw the same calls taking
# library, kernel or function handles (no stand-in reached it); the report
# reads image (none in late) -> failure of fill -> (saxpy's skip) ->
# refused reads, and
# --error-exitcode fires.  LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 program=$2 case=$3 how=$4 plugin=${5:-}
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"

case $case in
arch) want=cudaErrorNoKernelImageForDevice driver_error=CUDA_ERROR_NO_BINARY_FOR_GPU ;;
lazy) want=cudaErrorNoKernelImageForDevice driver_error=CUDA_ERROR_NO_BINARY_FOR_GPU
      export FAKECUDA_LAZY_IMAGE_ERRORS=lookup ;;
lookup) want=cudaErrorSymbolNotFound driver_error=CUDA_ERROR_NOT_FOUND
        export FAKECUDA_FAULTS='api:cuLibraryGetKernel#1=500' ;;
late) want=cudaErrorNoKernelImageForDevice driver_error=CUDA_ERROR_NO_BINARY_FOR_GPU
      [ -n "$plugin" ] || { echo "unusable.sh: late needs the PLUGIN" >&2; exit 2; }
      export FAKECUDA_LAZY_IMAGE_ERRORS=launch FAKECUDA_KERNELS=$plugin ;;
*) echo "unusable.sh: unknown case $case" >&2; exit 2 ;;
esac
export FAKECUDA_LOG=debug
bare "$program" "$how" >"$work/base.out" 2>"$work/base.err" || fail "base: exit status $?"
under_shim CUTAINT_ERROR_EXITCODE=42 "$program" "$how"
status=$?
cat "$work/base.out" "$work/shim.out"
grep '^==[0-9]*== cutaint' "$work/shim.err"
[ "$status" -eq 42 ] || fail "shim: exit status $status, expected 42 (--error-exitcode)"

for key in memcpy memcpy_y; do
    expect base $key cudaSuccess
    expect shim $key "$want"
done
expect base host stale
expect base host_y stale
expect shim host poisoned
expect shim host_y poisoned
answers() { grep '^RESULT ' "$work/$1.out" | grep -Ev "^RESULT ((memcpy|host)(_y)?$also)="; }
also=
if [ "$case" = late ]; then
    # A known gap, left to the shim: it skips saxpy (it reads fill's failed
    # output) and a skip answers cudaSuccess, where the driver would have
    # refused saxpy's launch too (same unusable image).  In arch and lazy
    # saxpy's stand-in refuses it; in lookup its image is usable.
    expect base saxpy cudaErrorNoKernelImageForDevice
    also='|saxpy'
fi
[ -n "$(answers base)" ] || fail "base: no answers"
diff <(answers base) <(answers shim) || fail "the program's answers differ under the shim"
# What the driver saw on handles: the same, but for cutaint's own questions
# about kernels it launched (cuFuncGetName, cuFuncGetParamInfo: on handles
# the driver handed out, never on a stand-in, which kernels.c describes
# from its image).
handles() {
    grep -E '^fakecuda: cu(Library|Kernel|Func|Launch|Occupancy|Graph(Add|Exec)?(Kernel)?Node|Graph(Add|Exec)?NodeSetParams)' \
        "$work/$1.err" | grep -Ev '^fakecuda: cuFunc(GetName|GetParamInfo)$'
}
# Launches aside: the shim hands the driver none of a stand-in's and none it
# skipped.
diff <(handles base | grep -v cuLaunch) <(handles shim | grep -v cuLaunch) ||
    fail "the driver saw other calls on handles under the shim"

report=$work/report.jsonl
line() { grep "\"event\":\"$1\"" "$report" | head -n 1; }
has() { line "$1" | grep -q "$2" || fail "the $1 event lacks $2: $(line "$1")"; }
if [ "$case" = late ]; then # the driver took the image: nothing stood in for it
    ! grep -q '"event":"image"' "$report" || fail "an image event: $(line image)"
    image=null
else
    has image '"number":1,"stand_in":true'
    has image "\"error\":\"$driver_error\""
    image=1
fi
if [ "$how" = span ]; then kernel='fill_span(Span, float)'; else kernel='fill(float\*, int, float)'; fi
has failure "\"kernel\":\"$kernel\""
has failure "\"error\":\"$driver_error\""
has failure "\"image\":${image}[,}]"
fill_id=$(line failure | sed -n 's/.*"id":\([0-9]*\),.*/\1/p')
[ "$(grep -c '"event":"refused_read"' "$report")" -eq 2 ] || fail "not two refused reads"
grep '"event":"refused_read"' "$report" | head -n 1 | grep -q "\"failures\":\[$fill_id\]" ||
    fail "the first refused read does not name fill's failure #$fill_id"
if [ "$case" = lookup ]; then # saxpy's own image is usable: it is skipped for fill's failure
    grep -q "\"event\":\"skip\",.*\"failure\":$fill_id,.*\"kernel\":\"saxpy" "$report" ||
        fail "no skip of saxpy for failure #$fill_id"
    grep '"event":"refused_read"' "$report" | tail -n 1 | grep -q "\"path\":\[\"fill.*\"saxpy" ||
        fail "the read of saxpy's output does not lead back through its skip to fill"
fi
skips=$(grep -c '"event":"skip"' "$report")
launches() { handles "$1" | grep -c cuLaunch; }
[ "$(launches shim)" -eq $(($(launches base) - skips)) ] ||
    fail "the driver saw $(launches shim) launches under the shim, $(launches base) without, and $skips were skipped"
exit "$bad"

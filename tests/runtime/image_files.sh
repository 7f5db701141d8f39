#!/usr/bin/env bash
# image_files.sh SHIM PROGRAM PLUGIN PATH FORM IMAGE: image_files.c loads
# IMAGE (image_files.cu built by nvcc; FORM: ptx, ptx_nul - the same PTX
# with a trailing NUL -, cubin, fatbin, fatbin_compressed) from its file
# through PATH (module: cuModuleLoad, library: cuLibraryLoadFromFile, link:
# cuLinkAddFile), and as the same bytes in memory (cuModuleLoadData,
# cuLibraryLoadData, cuLinkAddData), under SHIM.  A file's end is the end
# of its text: cutaint must read the file exactly as it reads the data.
#   refused: the load (or link input) refused by fakecuda; the image events
#     of the two say the same (form, status, code, kernels, fit).
#   loaded: stash's refused launch and the read back; the two runs see the
#     same, and where the image holds stash's PTX (module and library, every
#     form but cubin) the PTX says stash writes through its const pointer:
#     the read is refused and poisoned, never served stale.
#   empty (link, ptx): the linker's cubin of PTX that defines no kernel,
#     the link destroyed, a kernel looked up in its module: the image event
#     says the cubin holds no kernels (read at its load), no unknown form.
#   gone (module): the file removed after its load, a kernel the module
#     lacks looked up: the image event says what was loaded (kept from the
#     load), as the data's refusal did, not what the path holds now.
# PLUGIN gives fakecuda stash; LD_LIBRARY_PATH comes from meson.
set -uo pipefail
shim=$1 program=$2 plugin=$3 path=$4 form=$5 image=$6
# shellcheck source=tests/runtime/judge.sh
. "$(dirname "$0")/judge.sh"
export FAKECUDA_KERNELS=$plugin

case $form in
ptx | ptx_nul) type=ptx want_form=ptx ;;
cubin) type=cubin want_form=cubin ;;
*) type=fatbin want_form=fatbin ;;
esac
declare -A api=([module_file]=cuModuleLoad [module_data]=cuModuleLoadData [library_file]=cuLibraryLoadFromFile
    [library_data]=cuLibraryLoadData [link_file]=cuLinkAddFile [link_data]=cuLinkAddData)

file=$work/image.$type
cp "$image" "$file"
if [ "$form" = ptx ]; then
    [ "$(tail -c 1 "$file" | od -An -tx1 | tr -d ' ')" != 00 ] || fail "nvcc -ptx wrote a trailing NUL: no test of its absence"
elif [ "$form" = ptx_nul ]; then
    printf '\0' >>"$file"
fi

# images RUN: the image events of RUN's report, the fields the file and the data must share.
images() {
    python3 - "$work/$1.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "image":
        keys = ("error", "form", "status", "holds", "kernels", "kernels_total", "fit")
        print(json.dumps({k: e.get(k) for k in keys}, sort_keys=True))
PY
}

run() { # NAME HOW [VAR=value...]: one run under the shim, NAME.out and NAME.jsonl kept
    local name=$1 how=$2
    shift 2
    under_shim "$@" "$program" "${path}_$how" "$file" "$type" || fail "$name: exit status $?"
    cp "$work/shim.out" "$work/$name.out"
    cp "$work/report.jsonl" "$work/$name.jsonl" 2>/dev/null || : >"$work/$name.jsonl"
    rm -f "$work/report.jsonl"
}

bare "$program" "${path}_file" "$file" "$type" >"$work/bare.out" 2>&1 || fail "bare: exit status $?"
expect bare load CUDA_SUCCESS
expect bare lookup found

for how in file data; do
    run "refused_$how" "$how" "FAKECUDA_FAULTS=api:${api[${path}_$how]}#1=CUDA_ERROR_NO_BINARY_FOR_GPU"
    expect "refused_$how" load CUDA_ERROR_NO_BINARY_FOR_GPU
    images "refused_$how" >"$work/refused_$how.images"
    run "loaded_$how" "$how"
    expect "loaded_$how" load CUDA_SUCCESS
    expect "loaded_$how" launch CUDA_ERROR_INVALID_VALUE
done
[ "$(wc -l <"$work/refused_file.images")" -eq 1 ] || fail "refused: not one image event for the file"
grep -q "\"form\": \"$want_form\", .*\"kernels\": \[\"stash(float const\*, int)\"\].*\"status\": \"ok\"" \
    "$work/refused_file.images" || fail "refused: the file does not read as a whole $want_form holding stash"
cmp -s "$work/refused_file.images" "$work/refused_data.images" ||
    fail "refused: the file reads otherwise than the data: $(cat "$work/refused_file.images") vs $(cat "$work/refused_data.images")"
cmp -s "$work/loaded_file.out" "$work/loaded_data.out" || fail "loaded: the file's run differs from the data's"
if [ "$path" = module ]; then
    cp "$file" "$work/gone.$type"
    under_shim "$program" module_gone "$work/gone.$type" "$type" || fail "gone: exit status $?"
    cp "$work/shim.out" "$work/gone.out"
    cp "$work/report.jsonl" "$work/gone.jsonl"
    expect gone missing CUDA_ERROR_NOT_FOUND
    images gone | sed 's/"error": "[A-Z_]*", //' >"$work/gone.images"
    sed 's/"error": "[A-Z_]*", //' "$work/refused_data.images" | cmp -s - "$work/gone.images" ||
        fail "gone: the lookup says otherwise than the load read: $(cat "$work/gone.images")"
fi
if [ "$path" = link ] && [ "$form" = ptx ]; then
    under_shim "$program" link_empty "$file" ptx || fail "empty: exit status $?"
    cp "$work/shim.out" "$work/empty.out"
    expect empty missing CUDA_ERROR_NOT_FOUND
    grep -q '"event":"image".*"form":"cubin","status":"ok",.*"why":"image 0x[0-9a-f]* holds no kernels: sm_90 code and no PTX;' \
        "$work/report.jsonl" || fail "empty: the image event does not say the cubin holds no kernels: $(cat "$work/report.jsonl")"
fi
if [ "$path" != link ] && [ "$form" != cubin ]; then
    expect loaded_file read CUDA_ERROR_INVALID_VALUE
    expect loaded_file host poisoned
fi
head -n 50 "$work"/*.out "$work"/*.images
exit $bad

#!/usr/bin/env bash
# torch.sh SHIM PYTHON EXTENSIONS_DIR: torch_client.py (PyTorch 2.15 and
# the CUDA 13.2 runtime of its wheels) on fakecuda, without and with SHIM
# preloaded; PyTorch's kernels ship as SASS, so they run as writing
# nothing (FAKECUDA_SASS=nowrite) and only statuses, shapes and data the
# host wrote are compared.  A clean run prints the same bare and under the
# shim.  The first kernel (a fill_) failed by FAKECUDA_FAULTS: bare, the
# read back hands over the bytes from before; under the shim .cpu() raises
# the fill's error and the report names the demangled kernel.  Eight
# tensors of one caching-allocator segment, the fourth fill failed: under
# the shim, with no regions every tensor from the fourth to the segment's
# end is refused; with tools/python's allocator tracker (its extension
# built once into EXTENSIONS_DIR) only the fourth.  Exit 77 (skipped) with
# the reason when PYTHON cannot import torch (CUTAINT_TORCH=1 bash
# scripts/setup.sh installs it) or under a sanitizer build.
set -uo pipefail
export FAKECUDA_PTX=on FAKECUDA_SASS=nowrite TORCH_EXTENSIONS_DIR=$3
shim=$1 python=$2
client=$(dirname "$0")/torch_client.py
if [ -n "${CT_PRELOAD_FIRST:-}" ]; then
    echo "SKIP: PyTorch runs in the plain suite only, not under a sanitizer build (docs/PYTHON.md)"
    exit 77
fi
# shellcheck source=tests/python/runs.sh
. "$(dirname "$0")/runs.sh"
skip_unless_python "$python" 'import torch' \
    "PyTorch is not importable by $python (CUTAINT_TORCH=1 bash scripts/setup.sh installs it)"
fill_error='CUDA error: too many resources requested for launch'
fill_kernel='void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char\*, 1ul>, false>(int, at::native::FillFunctor<float>, std::array<char\*, 1ul>)'

clean_runs "$python" "$client" clean
expect base available True
expect base roundtrip True
expect base elementwise '(4096,) torch.float32'
expect base stream_copy 'True (4096,)'
expect base graph_replayed '(4096,) input=True'
expect base allocator_reuse True

# An api: rule, as fakecuda's launch: rules name only built-in and plugin
# kernels; fill_ is the program's first kernel.
faults='api:cuLaunchKernel#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'
faulted_runs f "$faults" 0 0 "$python" "$client" inject
expect fbase fill "$fill_error"
expect fbase read 'data stale=True'
expect fshim fill "$fill_error"
expect fshim read "raised $fill_error"
grep -q "\"event\":\"failure\".*\"kernel\":\"$fill_kernel\".*\"error\":\"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\"" "$work/report.jsonl" ||
    fail "the report names no failure of the demangled fill kernel"
grep -Eq '"event":"refused_read".*"bytes":16384,.*"error":"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"' "$work/report.jsonl" ||
    fail "the report holds no refused 16384-byte read"

# The fourth of eight tensors of one segment: its fill fails.
faults='api:cuLaunchKernel#4=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'
bare FAKECUDA_FAULTS=$faults "$python" "$client" pool >"$work/pbase.out" 2>&1 || fail "pool, bare: exit status $?"
under_shim FAKECUDA_FAULTS=$faults "$python" "$client" pool || fail "pool, shim: exit status $?"
cp "$work/shim.out" "$work/pshim.out"
under_shim FAKECUDA_FAULTS=$faults "$python" "$client" regions || fail "regions, shim: exit status $?"
cp "$work/shim.out" "$work/rshim.out"
cat "$work/pbase.out" "$work/pshim.out" "$work/rshim.out" "$work/shim.err"
expect pbase segments 1
expect pbase refused none
expect pshim tracking 0
expect pshim refused 3,4,5,6,7
expect rshim tracking 1
expect rshim segments 1
expect rshim refused 3
exit "$bad"

#!/usr/bin/env bash
# numba_jit.sh SHIM PYTHON: numba_jit.py (a @cuda.jit kernel, device
# arrays, copy_to_host) on fakecuda's PTX executor, without and with SHIM
# preloaded.  A clean run prints the same with and without the shim.  With
# the launch failed by FAKECUDA_FAULTS (Numba raises at the launch; the
# program goes on to read back): bare, copy_to_host serves bytes the
# kernel never wrote; under the shim it raises the launch's error, the
# host array is poisoned, and the report names the kernel (Numba's mangled
# name, demangled) and the refused read.  A kernel that faults (sticky)
# raises at copy_to_host bare and under the shim, which latches the
# context (status 70) naming the kernel as the suspect.
#
# numba-cuda links each kernel before loading it: through nvJitLink where
# it can load it (then LTO to SASS, which fakecuda cannot run), else
# through the driver's cuLink* (PTX, which it runs).  So this test hides
# nvJitLink as a machine without it: a file of that soname that is no
# library, first on LD_LIBRARY_PATH, and no CUDA_HOME/CUDA_PATH
# (docs/PYTHON.md).  Exit 77 (skipped) with the reason when PYTHON cannot
# import numba.cuda, or when nvJitLink is found all the same.
set -uo pipefail
export FAKECUDA_PTX=on
shim=$1 python=$2
client=$(dirname "$0")/numba_jit.py
# shellcheck source=tests/python/runs.sh
. "$(dirname "$0")/runs.sh"
skip_unless_python "$python" 'import numba.cuda, numpy' \
    "numba-cuda is not importable by $python (bash scripts/setup.sh installs it)"
mkdir "$work/no-nvjitlink"
echo "nvJitLink is hidden from this test (tests/python/numba_jit.sh)" >"$work/no-nvjitlink/libnvJitLink.so.13"
export LD_LIBRARY_PATH="$work/no-nvjitlink${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset CUDA_HOME CUDA_PATH

clean_runs "$python" "$client"
if ! grep -q 'nvjitlink is not available' "$work/base.err"; then
    echo "SKIP: numba-cuda found nvJitLink all the same (a wheel in the environment?): it links SASS, which fakecuda cannot run"
    exit 77
fi
expect base launch ok
expect base checked correct

# Numba's kernel, by the demangled name fakecuda's launch: rules match.
kernel='"kernel":"__main__::axpy\[abi:v1\]\[abi:[^]]*\](Array<float, 1, C, mutable, aligned>, Array<float, 1, C, mutable, aligned>, float, float)"'
faults='launch:__main__::axpy*#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'
faulted_runs f "$faults" 0 1 "$python" "$client"
expect fbase launch CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
expect fbase raised none
expect fbase checked wrong
expect fshim launch CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
expect fshim raised CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
expect fshim host poisoned
grep -q "\"event\":\"failure\".*$kernel.*\"error\":\"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\"" "$work/report.jsonl" ||
    fail "the report names no failure of __main__::axpy"
grep -Eq '"event":"refused_read".*"api":"cuMemcpyDtoH_v2(_ptds)?".*"bytes":4000,' "$work/report.jsonl" ||
    fail "the report holds no refused 4000-byte read"

# The kernel's work faults as it runs (a sticky error): copy_to_host raises
# it bare and under the shim (Numba's cuCtxGetDevice answers it first, so
# nothing is copied); the shim latches the lost context (exit status 70)
# and its report names the kernel as the suspect.
faults='launch:__main__::axpy*#1=fault'
faulted_runs s "$faults" 1 70 "$python" "$client"
expect sbase raised CUDA_ERROR_ILLEGAL_ADDRESS
expect sshim raised CUDA_ERROR_ILLEGAL_ADDRESS
grep -q "\"event\":\"context_lost\".*\"suspects\":\[{[^}]*$kernel" "$work/report.jsonl" ||
    fail "the report's lost context names no suspect __main__::axpy"
exit "$bad"

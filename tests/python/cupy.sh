#!/usr/bin/env bash
# cupy.sh SHIM PYTHON: cupy_client.py (CuPy: ufuncs, an ElementwiseKernel
# and a ReductionKernel compiled by NVRTC to PTX, a cuBLAS matmul, .get())
# on fakecuda, without and with SHIM preloaded.  A clean run prints the
# same with and without the shim.  With the user's kernel failed by
# FAKECUDA_FAULTS (an isolated error; the program carries on, as a notebook
# does): bare, .get() serves the bytes of a freed array the pool handed to
# the kernel's output; under the shim .get() raises the launch's error, the
# host buffer is poisoned, the matmul (cublasGemmEx) that read the output
# is skipped and its .get() refused, and the report names scale_add.  A
# kernel that faults (sticky) raises at .get() bare and under the shim,
# which latches the context (status 70) and names scale_add as a suspect.  Exit 77 (skipped)
# with the reason when PYTHON cannot import cupy or find cuBLAS.
#
# CuPy's settings (docs/PYTHON.md): CUPY_COMPILE_WITH_PTX=1, as NVRTC's
# default for CuPy is a cubin (SASS), which fakecuda never runs;
# CUPY_CACHE_IN_MEMORY=1, so every run compiles alike and nothing lands in
# ~/.cupy; CUPY_ACCELERATORS empty, as CuPy's default CUB reductions are
# SASS only.  cuBLAS is SASS only: FAKECUDA_SASS=nowrite, statuses only.
set -uo pipefail
export FAKECUDA_PTX=on FAKECUDA_SASS=nowrite
export CUPY_COMPILE_WITH_PTX=1 CUPY_CACHE_IN_MEMORY=1 CUPY_ACCELERATORS=
shim=$1 python=$2
client=$(dirname "$0")/cupy_client.py
# shellcheck source=tests/python/runs.sh
. "$(dirname "$0")/runs.sh"
skip_unless_python "$python" 'import cupy' \
    "CuPy is not importable by $python (bash scripts/setup.sh installs it)"
skip_unless_python "$python" 'from cuda.pathfinder import load_nvidia_dynamic_lib as l; l("cublas")' \
    "CuPy's matmul needs cuBLAS 13 (the CUDA Toolkit's libcublas.so.13 on the loader's path)"

clean_runs "$python" "$client"
expect base checked correct
expect base matmul_raised none
grep -q '^fakecuda:' "$work/base.err" && fail "fakecuda reported something it does not host (base.err)"

# Launch #7 is scale_add's (after arange, multiply, add, the two
# reductions and full's copy): an api: rule, as fakecuda's launch: rules
# name only built-in and plugin kernels.  The report must name scale_add.
faults='api:cuLaunchKernel#7=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'
faulted_runs f "$faults" 0 1 "$python" "$client" catch
expect fbase launch CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
expect fbase z_raised none
expect fbase first 100.0
expect fshim launch CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
expect fshim z_raised cudaErrorLaunchOutOfResources
expect fshim z_host poisoned
expect fshim matmul_raised cudaErrorLaunchOutOfResources
expect fshim matmul_host poisoned
grep -q '"event":"failure".*"kernel":"scale_add".*"error":"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"' "$work/report.jsonl" ||
    fail "the report names no failure of scale_add"
[ "$(grep -Ec '"event":"refused_read".*"bytes":16384,' "$work/report.jsonl")" -eq 2 ] ||
    fail "the report holds not two refused 16384-byte reads (the kernel's output, the matmul's)"
# cutaint's cuBLAS wrapper (shim/libcalls.def) sees CuPy's call, made from
# an extension module dlopened RTLD_LOCAL, through a versioned reference
# (cublasGemmEx@libcublas.so.13), and skips it.
grep -q '"event":"skip".*"api":"cublasGemmEx","kernel":null' "$work/report.jsonl" ||
    fail "the report holds no skipped cublasGemmEx (the matmul)"

# The kernel's work faults as it runs (a sticky error): .get() raises the
# fault bare and under the shim; the shim latches the lost context (exit
# status 70) and its report names scale_add among the suspects.
faults='api:cuLaunchKernel#7=fault'
faulted_runs s "$faults" 1 70 "$python" "$client"
expect sbase z_raised cudaErrorIllegalAddress
expect sshim z_raised cudaErrorIllegalAddress
grep -q '"event":"context_lost".*"suspects":\[.*"kernel":"scale_add"' "$work/report.jsonl" ||
    fail "the report's lost context names no suspect scale_add"
exit "$bad"

#!/usr/bin/env bash
# warp.sh SHIM PYTHON CACHE: warp_client.py (a @wp.kernel, wp.array,
# .numpy()) on fakecuda's PTX executor, without and with SHIM preloaded.
# A clean run prints the same with and without the shim.  With the launch
# failed by FAKECUDA_FAULTS (Warp raises at the launch; the program goes
# on to read back): bare, .numpy() serves the zeros the kernel never
# overwrote; under the shim it raises the launch's error and the report
# names Warp's kernel and the refused read.  A kernel that faults (sticky)
# raises at .numpy() bare and under the shim, which latches the context
# (status 70) naming the kernel as the suspect.
#
# Warp 1.19 (built with CUDA 13.4) hands the driver PTX only when the
# driver reports 13.4 or later, else compiles SASS itself, which fakecuda
# runs only as writing nothing: so fakecuda reports 13.4 here
# (FAKECUDA_DRIVER_VERSION, docs/PYTHON.md).  Warp's kernel cache is CACHE
# (in the build directory), so the test writes nothing outside it.  Exit 77
# (skipped) with the reason when PYTHON cannot import warp.
set -uo pipefail
export FAKECUDA_PTX=on FAKECUDA_DRIVER_VERSION=13040
shim=$1 python=$2
export WARP_CACHE_DIR=$3
rm -rf "$WARP_CACHE_DIR" # each run compiles afresh: no module of another run is reused
client=$(dirname "$0")/warp_client.py
# shellcheck source=tests/python/runs.sh
. "$(dirname "$0")/runs.sh"
skip_unless_python "$python" 'import warp, numpy, cuda.bindings' \
    "warp-lang is not importable by $python (bash scripts/setup.sh installs it)"

clean_runs "$python" "$client"
expect base launch ok
expect base checked correct
expect base sum 999500.0
grep -q 'fakecuda:' "$work/base.err" && fail "fakecuda said something of the clean run (an unmeasured integrity version?)"

# Warp's kernel (its forward function), by the name fakecuda's launch:
# rules match.
kernel='"kernel":"axpy_[0-9a-f]*_cuda_kernel_forward"'
faults='launch:axpy_*_cuda_kernel_forward#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'
faulted_runs f "$faults" 0 1 "$python" "$client"
expect fbase launch CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
expect fbase raised none
expect fbase checked wrong
expect fshim launch CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
expect fshim raised CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
grep -Eq "\"event\":\"failure\".*$kernel.*\"error\":\"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\"" "$work/report.jsonl" ||
    fail "the report names no failure of axpy's forward kernel"
grep -Eq '"event":"refused_read".*"api":"cuMemcpyDtoHAsync_v2(_ptsz)?".*"bytes":4000,.*"poisoned":true' "$work/report.jsonl" ||
    fail "the report holds no refused, poisoned 4000-byte read"

# The kernel's work faults as it runs (a sticky error): .numpy() raises it
# bare and under the shim; the shim latches the lost context (exit status
# 70) and its report names the kernel as the suspect.
faults='launch:axpy_*_cuda_kernel_forward#1=fault'
faulted_runs s "$faults" 1 70 "$python" "$client"
expect sbase raised CUDA_ERROR_ILLEGAL_ADDRESS
expect sshim raised CUDA_ERROR_ILLEGAL_ADDRESS
grep -Eq "\"event\":\"context_lost\".*\"suspects\":\[\{[^}]*$kernel" "$work/report.jsonl" ||
    fail "the report's lost context names no suspect axpy forward kernel"
exit "$bad"

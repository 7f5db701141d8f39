#!/usr/bin/env bash
# cuda_python.sh SHIM PYTHON: cuda_python.py (cuda.bindings: NVRTC to PTX,
# cuModuleLoadData, launch, read back) on fakecuda's PTX executor, without
# and with SHIM preloaded.  A clean run prints the same with and without the
# shim.  With the launch failed by FAKECUDA_FAULTS (an isolated error the
# program does not look at): bare, the read back succeeds and serves bytes
# the kernel never wrote; under the shim it is refused with the launch's error, the
# program raises it, its host buffer is poisoned, and the report names
# scale_add's failure and the refused read.  A kernel that faults (sticky)
# raises bare and under the shim, which latches the context (status 70)
# and names scale_add as the suspect.  Exit 77 (skipped) with the
# reason when PYTHON cannot import cuda.bindings.  LD_LIBRARY_PATH comes
# from meson; the executor is turned on here, over the suite's default
# FAKECUDA_PTX=off, as NVRTC's PTX is the kernel's only code.
set -uo pipefail
export FAKECUDA_PTX=on
shim=$1 python=$2
client=$(dirname "$0")/cuda_python.py
# shellcheck source=tests/python/runs.sh
. "$(dirname "$0")/runs.sh"
skip_unless_python "$python" 'import cuda.bindings.driver, cuda.bindings.nvrtc, numpy' \
    "cuda-python is not importable by $python (bash scripts/setup.sh installs it)"

clean_runs "$python" "$client"
expect base ptx yes
expect base checked correct

# A launch: rule naming NVRTC's kernel by its entry name.
faults='launch:scale_add#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES'
faulted_runs f "$faults" 0 1 "$python" "$client"
expect fbase raised none
expect fbase checked wrong
expect fshim raised CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
expect fshim host poisoned
grep -q '"event":"failure".*"kernel":"scale_add".*"error":"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"' "$work/report.jsonl" ||
    fail "the report names no failure of scale_add"
grep -Eq '"event":"refused_read".*"api":"cuMemcpyDtoH_v2(_ptds)?".*"bytes":4000,' "$work/report.jsonl" ||
    fail "the report holds no refused 4000-byte read"

# The kernel's work faults as it runs (a sticky error): the read back
# raises the fault bare and under the shim; the shim latches the lost
# context (exit status 70) and its report names scale_add as the suspect.
faults='launch:scale_add#1=fault'
faulted_runs s "$faults" 1 70 "$python" "$client"
expect sbase raised CUDA_ERROR_ILLEGAL_ADDRESS
expect sshim raised CUDA_ERROR_ILLEGAL_ADDRESS
expect sshim host poisoned
grep -q '"event":"context_lost".*"suspects":\[{[^}]*"kernel":"scale_add"' "$work/report.jsonl" ||
    fail "the report's lost context names no suspect scale_add"
exit "$bad"

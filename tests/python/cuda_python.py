"""cuda_python.py: a cuda-python (cuda.bindings) client, as a user writes one.

NVRTC compiles a small kernel to PTX (compute_XX, so fakecuda's PTX executor
runs it), the driver API loads it with cuModuleLoadData, allocates, copies in,
launches, copies back and checks the numbers.  Each step prints one
"RESULT KEY=value" line for tests/python/cuda_python.sh to judge; the output
is the same whatever driver runs it and whether libcutaint.so is preloaded.

Like many programs it ignores the launch's result and learns of a failure
from the read back, where cuda.bindings hands back the CUresult and this
program raises (status 1, "RESULT raised=<error name>").
"""

import ctypes
import sys

import numpy as np
from cuda.bindings import driver, nvrtc

KERNEL = b"""
extern "C" __global__ void scale_add(float *y, const float *x, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + b;
}
"""
N = 1000
A, B = 2.0, 0.5


class CudaError(Exception):
    """A cuda.bindings call answered an error: its name."""


def check(result):
    """cuda.bindings returns (error, values...): raise on an error, else the values."""
    err, *values = result
    if err != 0:
        name = err.name if hasattr(err, "name") else str(err)
        raise CudaError(name)
    return values[0] if len(values) == 1 else values


def compile_ptx(arch):
    """KERNEL as PTX for virtual architecture `arch` (b"compute_90")."""
    prog = check(nvrtc.nvrtcCreateProgram(KERNEL, b"scale_add.cu", 0, [], []))
    opts = [b"--gpu-architecture=" + arch]
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        size = check(nvrtc.nvrtcGetProgramLogSize(prog))
        log = b" " * size
        check(nvrtc.nvrtcGetProgramLog(prog, log))
        raise CudaError("NVRTC: " + log.decode(errors="replace"))
    size = check(nvrtc.nvrtcGetPTXSize(prog))
    ptx = b" " * size
    check(nvrtc.nvrtcGetPTX(prog, ptx))
    check(nvrtc.nvrtcDestroyProgram(prog))
    return ptx


def main():
    check(driver.cuInit(0))
    dev = check(driver.cuDeviceGet(0))
    major = check(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    minor = check(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    ctx = check(driver.cuCtxCreate(None, 0, dev))
    ptx = compile_ptx(f"compute_{major}{minor}".encode())
    print(f"RESULT ptx={'yes' if b'.entry scale_add' in ptx else 'no'}")

    module = check(driver.cuModuleLoadData(ptx))
    kernel = check(driver.cuModuleGetFunction(module, b"scale_add"))
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, dtype=np.float32)
    nbytes = x.nbytes
    dx = check(driver.cuMemAlloc(nbytes))
    dy = check(driver.cuMemAlloc(nbytes))
    check(driver.cuMemcpyHtoD(dx, x.ctypes.data, nbytes))

    args = (dy, dx, A, B, N)
    types = (None, None, ctypes.c_float, ctypes.c_float, ctypes.c_int)
    threads = 128
    # The launch's result is not looked at (see the header).
    driver.cuLaunchKernel(kernel, (N + threads - 1) // threads, 1, 1, threads, 1, 1, 0, 0,
                          (args, types), 0)
    try:
        check(driver.cuMemcpyDtoH(y.ctypes.data, dy, nbytes))
        check(driver.cuCtxSynchronize())
    except CudaError as e:
        print(f"RESULT raised={e}")
        host = "poisoned" if (y.view(np.uint32) == 0xFFFFFFFF).all() else "other"
        print(f"RESULT host={host}")
        return 1
    print(f"RESULT raised=none")
    print(f"RESULT checked={'correct' if np.allclose(y, A * x + B) else 'wrong'}")
    print(f"RESULT sum={float(y.sum()):.1f}")
    check(driver.cuMemFree(dx))
    check(driver.cuMemFree(dy))
    check(driver.cuModuleUnload(module))
    check(driver.cuCtxDestroy(ctx))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""numba_jit.py: a Numba (numba-cuda) client, as a user writes one.

A @cuda.jit kernel (Numba's compiler, NVVM, then the linker numba-cuda
picks), device arrays made with cuda.to_device, one launch and
copy_to_host of the result.  Each step prints one "RESULT KEY=value" line
for tests/python/numba_jit.sh to judge; the output is the same whatever
driver runs it and whether libcutaint.so is preloaded.

Numba checks a launch's result and raises at once; this program, like one
that logs a failed batch and goes on, catches that and still reads the
result back, where a failure raises (status 1, "RESULT raised=<error>").
"""

import sys
import warnings

import numpy as np
from numba import cuda
from numba.cuda.cudadrv.driver import CudaAPIError

N = 1000
A, B = np.float32(2.0), np.float32(0.5)


@cuda.jit
def axpy(y, x, a, b):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a * x[i] + b


def error_name(err):
    """The CUresult name of a failed call: a CudaAPIError's code, or the
    "CUDA_ERROR_...: text" of cuda.core's CUDAError (numba-cuda launches
    through cuda.core)."""
    code = getattr(err, "code", None)
    if code is None:
        return str(err).split(":")[0]
    from cuda.bindings import driver
    return driver.CUresult(int(code)).name


def main():
    warnings.filterwarnings("ignore", message="Grid size")  # a small grid, on purpose
    x = np.arange(N, dtype=np.float32)
    dx = cuda.to_device(x)
    dy = cuda.to_device(np.zeros(N, dtype=np.float32))
    threads = 128
    try:
        axpy[(N + threads - 1) // threads, threads](dy, dx, A, B)
        print("RESULT launch=ok")
    except Exception as e:  # whatever the launch raised: logged, and the program goes on
        print(f"RESULT launch={error_name(e)}")
    y = np.zeros(N, dtype=np.float32)
    try:
        dy.copy_to_host(y)
        cuda.synchronize()
    except CudaAPIError as e:
        print(f"RESULT raised={error_name(e)}")
        host = "poisoned" if (y.view(np.uint32) == 0xFFFFFFFF).all() else "other"
        print(f"RESULT host={host}")
        return 1
    print("RESULT raised=none")
    print(f"RESULT checked={'correct' if np.allclose(y, A * x + B) else 'wrong'}")
    print(f"RESULT sum={float(y.sum()):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""cupy_client.py: a CuPy program, as a user writes one.

Array arithmetic (CuPy's own ufunc kernels), an ElementwiseKernel and a
ReductionKernel of the user's (every one compiled by NVRTC at first use), a
matmul through cuBLAS, then the read back (`.get()`) and a check of the
numbers.  Each step prints one "RESULT KEY=value" line for
tests/python/cupy.sh to judge; the output is the same whatever driver runs
it and whether libcutaint.so is preloaded.  The matmul's numbers are not
looked at: cuBLAS ships SASS only, which fakecuda runs as writing nothing
(FAKECUDA_SASS=nowrite), so only its status counts.

An error raised by a read back is printed ("RESULT z_raised=<error
name>") and ends the program with status 1.  `catch` as the first argument
makes the program carry on past an error raised at a launch or a read back
(as a notebook whose cell failed does): it reads the kernel's output
anyway, which the pool handed over holding a freed array's bytes, and
multiplies it.
"""

import sys

import cupy as cp
import numpy as np

DRIVER_ERROR = cp.cuda.driver.CUDADriverError
RUNTIME_ERROR = cp.cuda.runtime.CUDARuntimeError
SIDE = 64
N = SIDE * SIDE
SCALE_ADD = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = 3 * x + y", "scale_add")
SUM_ALL = cp.ReductionKernel("float32 x", "float32 y", "x", "a + b", "y = a", "0", "sum_all")


def error_name(e):
    """CuPy's errors read 'CUDA_ERROR_X: text' (driver) or 'cudaErrorX: text' (runtime)."""
    return str(e).split(":", 1)[0]


def read_back(what, array, host):
    """array.get(out=host), host pre-filled with 7s: True, or False with the
    error and what the host buffer holds printed."""
    host.fill(7)
    try:
        array.get(out=host)
    except (DRIVER_ERROR, RUNTIME_ERROR) as e:
        print(f"RESULT {what}_raised={error_name(e)}")
        if (host.view(np.uint32) == 0xFFFFFFFF).all():
            print(f"RESULT {what}_host=poisoned")
        else:
            print(f"RESULT {what}_host=" + ("untouched" if (host == 7).all() else "other"))
        return False
    print(f"RESULT {what}_raised=none")
    return True


def main():
    carry_on = sys.argv[1:] == ["catch"]
    x = cp.arange(N, dtype=cp.float32)
    y = x * 2 + 1
    total = float(SUM_ALL(y)) + float(y.sum())
    print(f"RESULT reductions={total:.1f}")
    # A freed array of 100s: the pool hands its block to the next array of
    # that size (the kernel's output below).
    stale = cp.full(N, 100, dtype=cp.float32)
    del stale
    z = cp.empty(N, dtype=cp.float32)
    try:
        SCALE_ADD(x, y, z)
        print("RESULT launch=ok")
    except DRIVER_ERROR as e:
        print(f"RESULT launch={error_name(e)}")
        if not carry_on:
            return 1
    host = np.empty(N, dtype=np.float32)
    z_read = read_back("z", z, host)
    if z_read:
        want = 3 * np.arange(N, dtype=np.float32) + (2 * np.arange(N, dtype=np.float32) + 1)
        print(f"RESULT checked={'correct' if np.array_equal(host, want) else 'wrong'}")
        print(f"RESULT first={host[0]:.1f}")
    elif not carry_on:
        return 1
    # cuBLAS reads the kernel's output (its numbers are not looked at).
    product = z.reshape(SIDE, SIDE) @ cp.ones((SIDE, SIDE), dtype=cp.float32)
    print(f"RESULT matmul={product.shape[0]}x{product.shape[1]}")
    product_read = read_back("matmul", product, host.reshape(SIDE, SIDE))
    return 0 if z_read and product_read else 1


if __name__ == "__main__":
    sys.exit(main())

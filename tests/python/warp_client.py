"""warp_client.py: a Warp (warp-lang) client, as a user writes one.

A @wp.kernel (Warp's code generator, its NVRTC to PTX, loaded by the
driver), wp.array inputs, one wp.launch and .numpy() of the result.  Each
step prints one "RESULT KEY=value" line for tests/python/warp.sh to judge;
the output is the same whatever driver runs it and whether libcutaint.so
is preloaded.

Warp's kernel cache goes where WARP_CACHE_DIR names (the build
directory), so a run writes nothing outside it.  Warp raises at a failed
launch; this program, like one that logs a failed batch and goes on,
catches that and still reads the result back, where a failure raises
(status 1, "RESULT raised=<error>").
"""

import os
import re
import sys

import numpy as np
import warp as wp

N = 1000
A, B = 2.0, 0.5


@wp.kernel
def axpy(y: wp.array(dtype=wp.float32), x: wp.array(dtype=wp.float32), a: float, b: float):
    i = wp.tid()
    y[i] = a * x[i] + b


def cuda_error(err):
    """The CUresult name of a failed call, from Warp's "Warp CUDA error
    N: text" (N the CUresult's number)."""
    match = re.search(r"Warp CUDA error (\d+)", str(err))
    if not match:
        return f"unknown ({err})"
    from cuda.bindings import driver
    return driver.CUresult(int(match.group(1))).name


def main():
    wp.config.kernel_cache_dir = os.environ["WARP_CACHE_DIR"]
    wp.config.log_level = wp.LOG_WARNING  # no banner, no load timings: the output is the same each run
    wp.config.cuda_output = "ptx"  # PTX for the driver, which fakecuda's executor runs
    wp.init()
    x = np.arange(N, dtype=np.float32)
    with wp.ScopedDevice("cuda:0"):
        dx = wp.array(x, dtype=wp.float32)
        dy = wp.zeros(N, dtype=wp.float32)
        try:
            wp.launch(axpy, dim=N, inputs=[dy, dx, A, B])
            print("RESULT launch=ok")
        except RuntimeError as e:  # logged, and the program goes on
            print(f"RESULT launch={cuda_error(e)}")
        try:
            y = dy.numpy()
        except RuntimeError as e:
            print(f"RESULT raised={cuda_error(e)}")
            return 1
    print("RESULT raised=none")
    print(f"RESULT checked={'correct' if np.allclose(y, A * x + B) else 'wrong'}")
    print(f"RESULT sum={float(y.sum()):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

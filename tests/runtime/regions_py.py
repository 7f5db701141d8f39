"""regions_py.py: tools/python/cutaint_regions.py on fakecuda, through ctypes.

A driver-API client: one 64 KiB allocation, a 4 KiB region at its start,
then each misuse the shim refuses (an overlapping region, a free of a base
that is no region) and the region's free.  Then track_torch_allocator(),
which needs PyTorch on a GPU: here it must say why it does not track.
Output: "RESULT key=value" lines for regions_py.sh.
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "python"))
import cutaint_regions  # noqa: E402

cuda = ctypes.CDLL("libcuda.so.1")


def check(what, status):
    if status != 0:
        print(f"{what} failed: {status}")
        sys.exit(1)


check("cuInit", cuda.cuInit(0))
device, context, base = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
check("cuDeviceGet", cuda.cuDeviceGet(ctypes.byref(device), 0))
check("cuCtxCreate", cuda.cuCtxCreate_v2(ctypes.byref(context), 0, device))
check("cuMemAlloc", cuda.cuMemAlloc_v2(ctypes.byref(base), ctypes.c_size_t(65536)))
p = base.value
print(f"RESULT alloc={cutaint_regions.region_alloc(p, 4096)}")
print(f"RESULT overlap={cutaint_regions.region_alloc(p + 1024, 16)}")
print(f"RESULT unknown={cutaint_regions.region_free(p + 8)}")
print(f"RESULT free={cutaint_regions.region_free(p)}")
tracking, why = cutaint_regions.track_torch_allocator()
print(f"RESULT tracking={int(tracking)}")
print(f"RESULT why={why}")
check("cuMemFree", cuda.cuMemFree_v2(ctypes.c_uint64(p)))

/*
 * stubcuda.c - the smallest libcuda.so.1 bench.c runs on, for callgrind.
 *
 * fakecuda reserves a 64 GiB arena at cuInit, which valgrind cannot map, so
 * instruction counts are taken on this stub instead: every call the bench
 * makes succeeds at once (addresses are numbers, nothing is copied), except
 * a launch of more than 1024 threads per block, which fails with
 * CUDA_ERROR_INVALID_VALUE as fakecuda's and a real driver's does.  It also
 * answers the calls cutaint makes of its own (cuFuncGetParamInfo,
 * cuFuncGetName, cuCtxGetCurrent), as fakecuda would.  Only the difference
 * with and without cutaint is reported, so the stub's own cost cancels.
 * Single context, single device.  Thread-safe, and nothing shared is
 * written per call, so run.sh also uses it to show how cutaint's own cost
 * scales over threads, which fakecuda's locks would hide.
 */
#include <cuda.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct stub_kernel {
    const char *name;
    unsigned n;
    size_t offset[4], size[4];
} stub_kernel;

static const stub_kernel kernels[] = {
    {"_Z5emptyPvS_S_S_", 4, {0, 8, 16, 24}, {8, 8, 8, 8}},
    {"_Z4fillPfif", 3, {0, 8, 12}, {8, 4, 4}},
};
static atomic_uint_fast64_t next_address = 0x700000000000ULL;
static _Thread_local CUcontext current;
static char the_context, the_module;

EXPORT CUresult cuInit(unsigned flags) { (void)flags; return CUDA_SUCCESS; }
EXPORT CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return CUDA_SUCCESS; }
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = (CUcontext)(void *)&the_context;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext c) { current = c; return CUDA_SUCCESS; }
EXPORT CUresult cuCtxGetCurrent(CUcontext *c) { *c = current; return CUDA_SUCCESS; }
EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    (void)image;
    *m = (CUmodule)(void *)&the_module;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
        if (strcmp(kernels[i].name, name) == 0) {
            *f = (CUfunction)(uintptr_t)&kernels[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
EXPORT CUresult cuFuncGetName(const char **name, CUfunction f)
{
    *name = ((const stub_kernel *)(uintptr_t)f)->name;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *offset, size_t *size)
{
    const stub_kernel *k = (const stub_kernel *)(uintptr_t)f;
    if (i >= k->n)
        return CUDA_ERROR_INVALID_VALUE;
    *offset = k->offset[i];
    *size = k->size[i];
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes)
{
    *p = atomic_fetch_add(&next_address, (bytes + 255) / 256 * 256);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemFree(CUdeviceptr p) { (void)p; return CUDA_SUCCESS; }
EXPORT CUresult cuMemcpyHtoD(CUdeviceptr d, const void *h, size_t n) { (void)d, (void)h, (void)n; return CUDA_SUCCESS; }
EXPORT CUresult cuMemcpyDtoH(void *h, CUdeviceptr d, size_t n) { (void)d, (void)h, (void)n; return CUDA_SUCCESS; }
EXPORT CUresult cuStreamSynchronize(CUstream s) { (void)s; return CUDA_SUCCESS; }
EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                               void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)shared, (void)s, (void)params, (void)extra;
    return (uint64_t)bx * by * bz > 1024 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
EXPORT CUresult cuGetErrorName(CUresult r, const char **name)
{
    *name = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR (stub)";
    return CUDA_SUCCESS;
}

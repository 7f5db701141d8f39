/*
 * libcalls_dlopen.c - a program reaching a CUDA library only through
 * dlopen and dlsym on the library's own handle, as programs that load
 * cuBLAS on demand do: the generated double (argv[1], doubles/every_row.c)
 * opened RTLD_LOCAL, curandGenerateUniform and cublasSgemm_v2 looked up in
 * it, each told to fail, its output read back; then each succeeding.
 */
#include <cublas_api.h>
#include <cuda.h>
#include <curand.h>
#include <dlfcn.h>
#include <stdio.h>

#include "../doubles/control.h"

typedef curandStatus_t generate_fn(curandGenerator_t, float *, size_t);
typedef cublasStatus_t gemm_fn(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float *,
                               const float *, int, const float *, int, const float *, float *, int);

static void read_back(const char *what, CUdeviceptr d, size_t bytes)
{
    static unsigned char host[256];
    const char *name = "?";
    cuGetErrorName(cuMemcpyDtoH_v2(host, d, bytes), &name);
    printf("read %s: %s\n", what, name);
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr x = 0, c = 0;
    if (argc < 2 || cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuMemAlloc_v2(&x, 64) || cuMemAlloc_v2(&c, 64)) {
        fprintf(stderr, "usage: %s LIBRARY (with a driver)\n", argv[0]);
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    generate_fn *generate = library ? (generate_fn *)dlsym(library, "curandGenerateUniform") : NULL;
    gemm_fn *gemm = library ? (gemm_fn *)dlsym(library, "cublasSgemm_v2") : NULL;
    if (!generate || !gemm) {
        fprintf(stderr, "%s: %s\n", argv[1], dlerror());
        return 2;
    }
    float *xp = (float *)(uintptr_t)x, *cp = (float *)(uintptr_t)c;
    float one = 1.0f, zero = 0.0f;
    double_fail_next("curandGenerateUniform", CURAND_STATUS_LAUNCH_FAILURE);
    printf("generate: %d\n", (int)generate(NULL, xp, 16));
    read_back("x", x, 64);
    printf("generate again: %d\n", (int)generate(NULL, xp, 16));
    read_back("x", x, 64);
    double_fail_next("cublasSgemm_v2", CUBLAS_STATUS_INVALID_VALUE);
    printf("gemm: %d\n", (int)gemm(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, xp, 4, xp, 4, &zero, cp, 4));
    read_back("c", c, 64);
    return 0;
}

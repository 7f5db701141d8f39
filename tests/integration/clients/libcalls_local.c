/*
 * libcalls_local.c - a program that reaches a CUDA library only through a
 * library it dlopens RTLD_LOCAL (doubles/local_user.c, as Python loads an
 * extension module and its libcurand): a failed generation, its output read
 * back, a generation that succeeds, read back.
 *
 *   libcalls_local PATH_OF_liblocal_user.so
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int generate_fn(float *out, size_t num, int fail);

static void read_back(CUdeviceptr x)
{
    float host[16];
    memset(host, 0, sizeof host);
    CUresult r = cuMemcpyDtoH_v2(host, x, sizeof host);
    const char *name = "?";
    cuGetErrorName(r, &name);
    unsigned bits;
    memcpy(&bits, &host[0], sizeof bits);
    printf("read x: %s bits=0x%08x\n", name, bits);
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr x;
    void *lib = argc == 2 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    generate_fn *generate = lib ? (generate_fn *)dlsym(lib, "local_generate") : NULL;
    if (!generate || cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuMemAlloc_v2(&x, 16 * sizeof(float)) || cuMemsetD32_v2(x, 0x3f800000u, 16)) {
        fprintf(stderr, "usage: %s liblocal_user.so (and a driver): %s\n", argv[0], dlerror());
        return 2;
    }
    printf("generate x: %d\n", generate((float *)(uintptr_t)x, 16, 1));
    read_back(x);
    printf("generate x again: %d\n", generate((float *)(uintptr_t)x, 16, 0));
    read_back(x);
    return 0;
}

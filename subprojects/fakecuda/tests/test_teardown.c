/*
 * test_teardown.c: once the process is exiting (fakecuda's destructor has
 * run, as the real driver's does), every driver call returns
 * CUDA_ERROR_DEINITIALIZED; the error-string calls still answer.
 * Exit status 0 only if the probe's destructor ran the check and it passed.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static CUdeviceptr live;

static int after_exit(void)
{
    CUdeviceptr d;
    int v;
    const char *name = NULL;
    CUresult r[] = {cuMemAlloc(&d, 16), cuMemFree(live), cuCtxSynchronize(), cuInit(0), cuDriverGetVersion(&v)};
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (r[i] != CUDA_ERROR_DEINITIALIZED) {
            fprintf(stderr, "call %zu during exit returned %d, not CUDA_ERROR_DEINITIALIZED\n", i, (int)r[i]);
            return 1;
        }
    if (cuGetErrorName(CUDA_ERROR_DEINITIALIZED, &name) != CUDA_SUCCESS || strcmp(name, "CUDA_ERROR_DEINITIALIZED")) {
        fprintf(stderr, "cuGetErrorName failed during exit\n");
        return 1;
    }
    return 0;
}

int main(void)
{
    CUcontext ctx;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cuMemAlloc(&live, 64)) {
        fprintf(stderr, "set-up failed\n");
        return 1;
    }
    void *probe = dlopen(FC_PROBE_PATH, RTLD_NOW | RTLD_LOCAL);
    void (*arm)(int (*)(void)) = probe ? (void (*)(int (*)(void)))dlsym(probe, "fc_probe_arm") : NULL;
    if (!arm) {
        fprintf(stderr, "cannot load %s: %s\n", FC_PROBE_PATH, dlerror());
        return 1;
    }
    arm(after_exit);
    return 3; /* replaced by the probe's verdict; 3 means it never ran */
}

/*
 * perf_client.c - the happy-path calls, between markers, for test_perf.c.
 *
 *   perf_client [--taint]
 *
 * Warms up, then for each operation (launch of _Z5emptyPvS_S_S_ with four
 * interior pointers, DtoH 4 KiB, HtoD 4 KiB; and a control: getppid) makes
 * CALLS calls between two
 * marker system calls - write(-1, NULL, MARK_BEGIN + op) and
 * write(-1, NULL, MARK_END + op), both failing with EBADF - so a tracer can
 * count the system calls in between, and prints the heap allocations the
 * thread made in between (counter.c, when preloaded):
 *   op=launch allocs=N
 * --taint: first make an unrelated buffer carry a failure (a fill launch of
 * 2048 threads per block, which the driver refuses).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf_marks.h"

#define CALLS 1000

static void check(const char *what, CUresult r)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "perf_client: %s failed (%d)\n", what, (int)r);
        exit(1);
    }
}

static void mark(long code)
{
    syscall(SYS_write, -1, NULL, code);
}

int main(int argc, char **argv)
{
    int taint = argc > 1 && strcmp(argv[1], "--taint") == 0;
    uint64_t (*allocs)(void) = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "ctperf_allocs");
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction empty, fill;
    check("cuInit", cuInit(0));
    check("cuDeviceGet", cuDeviceGet(&dev, 0));
    check("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev));
    check("cuCtxSetCurrent", cuCtxSetCurrent(ctx));
    check("cuModuleLoadData", cuModuleLoadData(&mod, "any image"));
    check("cuModuleGetFunction", cuModuleGetFunction(&empty, mod, "_Z5emptyPvS_S_S_"));
    check("cuModuleGetFunction", cuModuleGetFunction(&fill, mod, "_Z4fillPfif"));

    CUdeviceptr big[4], args[4];
    void *params[4];
    for (int i = 0; i < 4; i++) {
        check("cuMemAlloc", cuMemAlloc(&big[i], 64 * 1024));
        args[i] = big[i] + 4096 * (uint64_t)(i + 1);
        params[i] = &args[i];
    }
    static unsigned char host[4096];
    check("cuMemcpyHtoD", cuMemcpyHtoD(big[1], host, sizeof host));
    if (taint) {
        CUdeviceptr victim;
        check("cuMemAlloc", cuMemAlloc(&victim, 4096));
        int n = 1024;
        float value = 1.0f;
        void *fill_params[] = {&victim, &n, &value};
        CUresult r = cuLaunchKernel(fill, 1, 1, 1, 2048, 1, 1, 0, NULL, fill_params, NULL);
        printf("taint launch=%d\n", (int)r);
    }

    for (int op = 0; op < PERF_N_OPS; op++) {
        for (int pass = 0; pass < 2; pass++) { /* pass 0: warm-up */
            if (pass)
                mark(PERF_MARK_BEGIN + op);
            uint64_t before = allocs ? allocs() : 0;
            for (int i = 0; i < CALLS; i++) {
                switch (op) {
                case PERF_OP_LAUNCH:
                    check("cuLaunchKernel", cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
                    break;
                case PERF_OP_DTOH: check("cuMemcpyDtoH", cuMemcpyDtoH(host, big[1] + 8192, sizeof host)); break;
                case PERF_OP_HTOD: check("cuMemcpyHtoD", cuMemcpyHtoD(big[2] + 8192, host, sizeof host)); break;
                case PERF_OP_CONTROL: syscall(SYS_getppid); break;
                }
            }
            uint64_t after = allocs ? allocs() : 0;
            if (pass) {
                mark(PERF_MARK_END + op);
                printf("op=%s allocs=%llu\n", perf_op_names[op], (unsigned long long)(after - before));
            }
        }
    }
    check("cuCtxSynchronize", cuCtxSynchronize());
    return 0;
}

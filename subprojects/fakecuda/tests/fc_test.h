/*
 * fc_test.h: helpers shared by fakecuda's own tests: plain driver-API
 * programs linked with -lcuda (fakecuda), no shim.
 *
 * Every Criterion test runs in its own forked process, so each one starts
 * with an uninitialised driver and may set FAKECUDA_* variables before its
 * first driver call (fakecuda reads them once, at that call).
 */
#ifndef FC_TEST_H
#define FC_TEST_H

#include <criterion/criterion.h>
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OK(call)                                                           \
    do {                                                                   \
        CUresult ok_r_ = (call);                                           \
        const char *ok_n_ = "?";                                           \
        cuGetErrorName(ok_r_, &ok_n_);                                     \
        cr_assert_eq(ok_r_, CUDA_SUCCESS, "%s returned %s", #call, ok_n_); \
    } while (0)

#define FAILS(call, code)                                                              \
    do {                                                                               \
        CUresult f_r_ = (call);                                                        \
        const char *f_n_ = "?";                                                        \
        cuGetErrorName(f_r_, &f_n_);                                                   \
        cr_assert_eq(f_r_, (code), "%s returned %s, expected %s", #call, f_n_, #code); \
    } while (0)

/* The deterministic schedule (FAKECUDA_SCHEDULE=sync: work runs only at
 * sync points), for a test that predicts when queued work runs: what has
 * not run yet, or which call after a fault reports it. Before the first
 * driver call. Every other test runs on the default, asynchronous one. */
static inline void fc_schedule_sync(void)
{
    setenv("FAKECUDA_SCHEDULE", "sync", 1);
}

/* The bytes of never-written device memory. */
#define FC_STALE_WORD 0x5A5A5A5Au

/* cuInit, then the primary context made current; returns it. */
static inline CUcontext fc_setup(void)
{
    CUcontext ctx;
    OK(cuInit(0));
    OK(cuDevicePrimaryCtxRetain(&ctx, 0));
    OK(cuCtxSetCurrent(ctx));
    return ctx;
}

/* A function of the built-in kernel library, through a module. */
static inline CUfunction fc_function(const char *name)
{
    static const char image[] = "fakecuda ignores module images";
    CUmodule mod;
    CUfunction f;
    OK(cuModuleLoadData(&mod, image));
    OK(cuModuleGetFunction(&f, mod, name));
    return f;
}

static inline CUdeviceptr fc_upload(const void *host, size_t bytes)
{
    CUdeviceptr d;
    OK(cuMemAlloc(&d, bytes));
    OK(cuMemcpyHtoD(d, host, bytes));
    return d;
}

static inline unsigned fc_as_bits(float f)
{
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/*
 * Launch f over `threads` threads (blocks of up to 256) with args, either as
 * kernelParams (packed == false) or packed into an `extra` buffer laid out by
 * cuFuncGetParamInfo (packed == true).
 */
static inline CUresult fc_launch(CUfunction f, unsigned threads, void **args, bool packed, CUstream s)
{
    unsigned block = threads < 256 ? threads : 256, grid = (threads + block - 1) / block;
    if (!packed)
        return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, args, NULL);
    unsigned char buf[32 * 1024] = {0}; /* the largest layout a kernel may have, 32764 bytes */
    size_t used = 0, off, size;
    for (size_t i = 0; cuFuncGetParamInfo(f, i, &off, &size) == CUDA_SUCCESS; i++) {
        cr_assert_leq(off + size, sizeof buf);
        memcpy(buf + off, args[i], size);
        used = off + size;
    }
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &used, CU_LAUNCH_PARAM_END};
    return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, NULL, extra);
}

#endif

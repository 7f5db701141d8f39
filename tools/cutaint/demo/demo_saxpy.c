/*
 * demo_saxpy.c - the program `cutaint demo` runs: an ordinary, unmodified
 * CUDA driver-API program with an ordinary bug.
 *
 * It computes y = a*x + y with y first set by a `fill` kernel.  The fill is
 * launched with 2048 threads per block - more than any GPU allows - so the
 * launch fails with CUDA_ERROR_INVALID_VALUE, and the program, like much
 * real code, does not check launch errors.  Without cutaint, saxpy then runs
 * on a y nobody wrote and the copy back succeeds: a silently wrong answer.
 * Under cutaint, saxpy is skipped (its input y carries the failure) and the
 * copy back is refused with the fill's error, the host buffer poisoned.
 *
 * Owns nothing else; it knows nothing of cutaint.  The PTX below is real
 * (sm_75 and later), so the same program runs on a GPU; on the CPU, fakecuda
 * runs the kernels by their mangled names and accepts any module image.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char module_ptx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry _Z4fillPfif(.param .u64 out, .param .u32 n, .param .f32 v)\n"
    "{\n"
    "    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .f32 %f<2>; .reg .b64 %rd<5>;\n"
    "    ld.param.u64 %rd1, [out]; ld.param.u32 %r2, [n]; ld.param.f32 %f1, [v];\n"
    "    mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mov.u32 %r5, %tid.x;\n"
    "    mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    "    setp.ge.s32 %p1, %r1, %r2;\n"
    "    @%p1 bra DONE;\n"
    "    cvta.to.global.u64 %rd2, %rd1; mul.wide.s32 %rd3, %r1, 4; add.s64 %rd4, %rd2, %rd3;\n"
    "    st.global.f32 [%rd4], %f1;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n"
    "\n"
    ".visible .entry _Z5saxpyifPKfPf(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)\n"
    "{\n"
    "    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .f32 %f<5>; .reg .b64 %rd<8>;\n"
    "    ld.param.u32 %r2, [n]; ld.param.f32 %f1, [a];\n"
    "    ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [y];\n"
    "    mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mov.u32 %r5, %tid.x;\n"
    "    mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    "    setp.ge.s32 %p1, %r1, %r2;\n"
    "    @%p1 bra DONE;\n"
    "    cvta.to.global.u64 %rd3, %rd1; mul.wide.s32 %rd4, %r1, 4; add.s64 %rd5, %rd3, %rd4;\n"
    "    ld.global.f32 %f2, [%rd5];\n"
    "    cvta.to.global.u64 %rd6, %rd2; add.s64 %rd7, %rd6, %rd4;\n"
    "    ld.global.f32 %f3, [%rd7];\n"
    "    fma.rn.f32 %f4, %f1, %f2, %f3;\n"
    "    st.global.f32 [%rd7], %f4;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

enum { N = 1 << 16 };

static const char *error_name(CUresult rc)
{
    const char *name = NULL;
    return cuGetErrorName(rc, &name) == CUDA_SUCCESS && name ? name : "unknown CUresult";
}

/* Setup calls are checked, as in most programs; launches are not. */
static void check(CUresult rc, const char *what)
{
    if (rc == CUDA_SUCCESS)
        return;
    fprintf(stderr, "demo_saxpy: %s failed: %s\n", what, error_name(rc));
    exit(2);
}

static unsigned blocks_for(unsigned n, unsigned threads)
{
    return (n + threads - 1) / threads;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fill, saxpy;
    CUdeviceptr x, y;
    size_t bytes = N * sizeof(float);
    float *host = malloc(bytes);
    if (!host)
        return 2;

    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    check(cuModuleLoadData(&mod, module_ptx), "cuModuleLoadData");
    check(cuModuleGetFunction(&fill, mod, "_Z4fillPfif"), "cuModuleGetFunction(fill)");
    check(cuModuleGetFunction(&saxpy, mod, "_Z5saxpyifPKfPf"), "cuModuleGetFunction(saxpy)");
    check(cuMemAlloc(&x, bytes), "cuMemAlloc(x)");
    check(cuMemAlloc(&y, bytes), "cuMemAlloc(y)");

    for (int i = 0; i < N; i++)
        host[i] = 1.0f;
    check(cuMemcpyHtoD(x, host, bytes), "cuMemcpyHtoD(x)");

    /* y = 2: the bug - 2048 threads per block is over every GPU's limit
     * (1024), and the launch's result is ignored. */
    int n = N;
    float two = 2.0f;
    unsigned fill_threads = 2048;
    void *fill_args[] = {&y, &n, &two};
    cuLaunchKernel(fill, blocks_for(N, fill_threads), 1, 1, fill_threads, 1, 1, 0, NULL, fill_args, NULL);

    /* y = 3x + y, so every y[i] should be 5. */
    float a = 3.0f;
    void *saxpy_args[] = {&n, &a, &x, &y};
    cuLaunchKernel(saxpy, blocks_for(N, 256), 1, 1, 256, 1, 1, 0, NULL, saxpy_args, NULL);

    memset(host, 0, bytes);
    CUresult rc = cuMemcpyDtoH(host, y, bytes);
    unsigned char *b = (unsigned char *)host;
    printf("demo_saxpy: cuMemcpyDtoH(y) returned %s (%d)\n", error_name(rc), (int)rc);
    printf("demo_saxpy: y[0] = %g (expected 5; bytes %02x %02x %02x %02x)\n", host[0], b[0], b[1], b[2], b[3]);

    cuMemFree(x);
    cuMemFree(y);
    cuModuleUnload(mod);
    cuDevicePrimaryCtxRelease(dev);
    free(host);
    return rc == CUDA_SUCCESS ? 0 : 1;
}

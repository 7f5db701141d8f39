/*
 * hostile_client.c - an unmodified driver-API program that misuses the API
 * on purpose: NULL and garbage handles and pointers to every wrapped family,
 * zero and huge sizes, double and foreign frees, launches with NULL
 * kernelParams and malformed `extra`, calls before cuInit, from threads with
 * no current context, and during process teardown.
 * It prints one line "label code" per call and exits 0: test_hostile.c runs
 * it with and without libcutaint.so and compares (the shim must forward the
 * driver's own answer, never crash, never latch, never change the status).
 * Usage: hostile_client SCENARIO [LATE_LIB]
 */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SHOW(label, call) printf("%s %d\n", label, (int)(call))
/* Each garbage call meets an untainted buffer: a call that failed leaves its
 * bytes unwritten (the shim rightly refuses reads of them and skips launches
 * on them); the memset writes them again, so every answer compared is the
 * driver's own. */
#define SHOWR(label, call)        \
    do {                          \
        SHOW(label, call);        \
        cuMemsetD8(buf, 0, 1024); \
    } while (0)

static CUcontext ctx;
static CUfunction fill, empty, scale;
static CUdeviceptr buf;
static unsigned char host[4096];

static void setup(void)
{
    CUdevice dev;
    CUmodule mod;
    SHOW("init", cuInit(0));
    SHOW("device", cuDeviceGet(&dev, 0));
    SHOW("ctx", cuCtxCreate(&ctx, NULL, 0, dev));
    SHOW("module", cuModuleLoadData(&mod, "image"));
    SHOW("fill", cuModuleGetFunction(&fill, mod, "_Z4fillPfif"));
    SHOW("empty", cuModuleGetFunction(&empty, mod, "_Z5emptyPvS_S_S_"));
    SHOW("scale", cuModuleGetFunction(&scale, mod, "scale"));
    SHOW("alloc", cuMemAlloc(&buf, 1024));
}

static void garbage(void)
{
    CUdeviceptr p = 0, bad = (CUdeviceptr)0xdeadbeef000ULL;
    const CUdeviceptr huge = (CUdeviceptr)1 << 62;
    /* allocate / free */
    SHOWR("alloc_null", cuMemAlloc(NULL, 16));
    SHOWR("alloc_zero", cuMemAlloc(&p, 0));
    SHOWR("alloc_huge", cuMemAlloc(&p, (size_t)1 << 60));
    SHOWR("alloc_pitch_null", cuMemAllocPitch(NULL, NULL, 16, 16, 4));
    SHOWR("free_null", cuMemFree(0));
    SHOWR("free_garbage", cuMemFree(bad));
    CUdeviceptr twice;
    SHOWR("alloc_twice", cuMemAlloc(&twice, 64));
    SHOWR("free_once", cuMemFree(twice));
    SHOWR("free_twice", cuMemFree(twice));
    SHOWR("free_interior", cuMemFree(buf + 16));
    SHOWR("free_host", cuMemFree((CUdeviceptr)(uintptr_t)host));
    /* host writes */
    SHOWR("htod_null_dst", cuMemcpyHtoD(0, host, 16));
    SHOWR("htod_null_src", cuMemcpyHtoD(buf, NULL, 16));
    SHOWR("htod_garbage", cuMemcpyHtoD(bad, host, 16));
    SHOWR("htod_overrun", cuMemcpyHtoD(buf + 1000, host, 100));
    SHOWR("htod_huge", cuMemcpyHtoD(buf, host, (size_t)1 << 62));
    SHOWR("htod_zero", cuMemcpyHtoD(buf, host, 0));
    SHOWR("htod_async_bad_stream", cuMemcpyHtoDAsync(buf, host, 16, (CUstream)(uintptr_t)0x1234));
    SHOWR("memset_garbage", cuMemsetD8(bad, 1, 16));
    SHOWR("memset_huge", cuMemsetD32(buf, 1, (size_t)1 << 60));
    SHOWR("memset_zero", cuMemsetD16(buf, 1, 0));
    SHOWR("memset2d_bad_pitch", cuMemsetD2D8(buf, 64, 1, 128, 16));
    /* reads */
    SHOWR("dtoh_null_dst", cuMemcpyDtoH(NULL, buf, 16));
    SHOWR("dtoh_garbage", cuMemcpyDtoH(host, bad, 16));
    SHOWR("dtoh_overrun", cuMemcpyDtoH(host, buf + 1000, 100));
    SHOWR("dtoh_huge", cuMemcpyDtoH(host, buf, huge));
    SHOWR("dtoh_zero", cuMemcpyDtoH(host, buf, 0));
    SHOWR("copy2d_null", cuMemcpy2D(NULL));
    SHOWR("copy3d_null", cuMemcpy3D(NULL));
    CUDA_MEMCPY2D c2 = {.srcMemoryType = CU_MEMORYTYPE_DEVICE,
                        .srcDevice = bad,
                        .srcPitch = 64,
                        .dstMemoryType = CU_MEMORYTYPE_HOST,
                        .dstHost = host,
                        .dstPitch = 64,
                        .WidthInBytes = 64,
                        .Height = 4};
    SHOWR("copy2d_garbage", cuMemcpy2D(&c2));
    c2.srcDevice = buf;
    c2.Height = (size_t)1 << 40;
    SHOWR("copy2d_huge", cuMemcpy2D(&c2));
    /* device copies */
    SHOWR("dtod_garbage_src", cuMemcpyDtoD(buf, bad, 16));
    SHOWR("dtod_garbage_dst", cuMemcpyDtoD(bad, buf, 16));
    SHOWR("dtod_huge", cuMemcpyDtoD(buf, buf + 512, huge));
    /* launches */
    int n = 4;
    float v = 1;
    CUdeviceptr out = buf;
    void *ok[] = {&out, &n, &v};
    SHOWR("launch_null_func", cuLaunchKernel(NULL, 1, 1, 1, 32, 1, 1, 0, 0, ok, NULL));
    SHOWR("launch_garbage_func", cuLaunchKernel((CUfunction)(uintptr_t)0x4242, 1, 1, 1, 32, 1, 1, 0, 0, ok, NULL));
    SHOWR("launch_null_params", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL));
    SHOWR("launch_null_params_empty", cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL));
    void *holes[] = {&out, NULL, &v};
    SHOWR("launch_null_param_entry", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, holes, NULL));
    SHOWR("launch_bad_stream", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, (CUstream)(uintptr_t)0x99, ok, NULL));
    SHOWR("launch_zero_grid", cuLaunchKernel(fill, 0, 1, 1, 32, 1, 1, 0, 0, ok, NULL));
    SHOWR("launch_huge_block", cuLaunchKernel(fill, 1, 1, 1, 4096, 1, 1, 0, 0, ok, NULL));
    unsigned char packed[16] = {0};
    memcpy(packed, &out, 8);
    size_t small = 4, big = 1 << 20, exact = 16;
    void *extra_small[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &small,
                           CU_LAUNCH_PARAM_END};
    SHOWR("extra_small", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, NULL, extra_small));
    void *extra_nosize[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, NULL,
                            CU_LAUNCH_PARAM_END};
    SHOWR("extra_null_size", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, NULL, extra_nosize));
    void *extra_nobuf[] = {CU_LAUNCH_PARAM_BUFFER_SIZE, &exact, CU_LAUNCH_PARAM_END};
    SHOWR("extra_no_buffer", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, NULL, extra_nobuf));
    void *extra_nullbuf[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, NULL, CU_LAUNCH_PARAM_BUFFER_SIZE, &big,
                             CU_LAUNCH_PARAM_END};
    SHOWR("extra_null_buffer", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, NULL, extra_nullbuf));
    void *extra_junk[] = {(void *)(uintptr_t)7, packed, CU_LAUNCH_PARAM_END};
    SHOWR("extra_unknown_key", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, NULL, extra_junk));
    void *extra_exact[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &exact,
                           CU_LAUNCH_PARAM_END};
    SHOWR("params_and_extra", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, ok, extra_exact));
    CUdeviceptr foreign[4] = {bad, (CUdeviceptr)(uintptr_t)host, 1, ~(CUdeviceptr)0};
    void *fp[] = {&foreign[0], &foreign[1], &foreign[2], &foreign[3]};
    SHOWR("launch_foreign_pointers", cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, 0, fp, NULL));
    SHOWR("launch_ex_null_config", cuLaunchKernelEx(NULL, fill, ok, NULL));
    CUlaunchConfig cfg = {.gridDimX = 1,
                          .gridDimY = 1,
                          .gridDimZ = 1,
                          .blockDimX = 32,
                          .blockDimY = 1,
                          .blockDimZ = 1,
                          .numAttrs = 3,
                          .attrs = NULL};
    SHOWR("launch_ex_null_attrs", cuLaunchKernelEx(&cfg, fill, ok, NULL));
    /* synchronisation and names */
    SHOWR("stream_sync_garbage", cuStreamSynchronize((CUstream)(uintptr_t)0x77));
    SHOWR("event_sync_garbage", cuEventSynchronize((CUevent)(uintptr_t)0x77));
    SHOWR("get_function_null", cuModuleGetFunction(NULL, NULL, "x"));
    CUfunction f;
    SHOWR("get_function_missing", cuModuleGetFunction(&f, NULL, "nope"));
    /* the real work still works, and is read back */
    SHOWR("fill_ok", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, ok, NULL));
    float back[4] = {0};
    SHOWR("read_ok", cuMemcpyDtoH(back, buf, sizeof back));
    printf("values %g %g %g %g\n", back[0], back[1], back[2], back[3]);
    SHOWR("sync", cuCtxSynchronize());
}

static void before_init(void)
{
    CUdeviceptr p;
    CUcontext c;
    SHOW("alloc", cuMemAlloc(&p, 16));
    SHOW("free", cuMemFree(0x1000));
    SHOW("htod", cuMemcpyHtoD(0x1000, host, 16));
    SHOW("dtoh", cuMemcpyDtoH(host, 0x1000, 16));
    SHOW("launch", cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, 0, NULL, NULL));
    SHOW("ctx_sync", cuCtxSynchronize());
    SHOW("stream_sync", cuStreamSynchronize(0));
    SHOW("ctx_get", cuCtxGetCurrent(&c));
    setup();
}

static void *no_context_thread(void *arg)
{
    (void)arg;
    CUdeviceptr p;
    int n = 4;
    float v = 1;
    void *kp[] = {&buf, &n, &v};
    SHOW("t_alloc", cuMemAlloc(&p, 16));
    SHOW("t_htod", cuMemcpyHtoD(buf, host, 16));
    SHOW("t_dtoh", cuMemcpyDtoH(host, buf, 16));
    SHOW("t_memset", cuMemsetD8(buf, 0, 16));
    SHOW("t_launch", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, kp, NULL));
    SHOW("t_ctx_sync", cuCtxSynchronize());
    SHOW("t_stream_sync", cuStreamSynchronize(0));
    SHOW("t_free", cuMemFree(buf));
    return NULL;
}

static void no_context(void)
{
    setup();
    pthread_t t;
    pthread_create(&t, NULL, no_context_thread, NULL);
    pthread_join(t, NULL);
    /* and the main thread after popping its context */
    CUcontext popped;
    SHOW("pop", cuCtxPopCurrent(&popped));
    no_context_thread(NULL);
    SHOW("push", cuCtxPushCurrent(popped));
    SHOW("still_works", cuMemcpyHtoD(buf, host, 16));
}

static void late_calls(void)
{
    /* runs after the driver's destructor: every call is CUDA_ERROR_DEINITIALIZED */
    SHOW("late_free", cuMemFree(buf));
    SHOW("late_dtoh", cuMemcpyDtoH(host, buf, 16));
    SHOW("late_sync", cuCtxSynchronize());
    SHOW("late_launch", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL));
    SHOW("late_ctx_destroy", cuCtxDestroy(ctx));
    fflush(stdout);
}

static void at_exit_calls(void)
{
    SHOW("atexit_free", cuMemFree(buf));
    SHOW("atexit_sync", cuCtxSynchronize());
    fflush(stdout);
}

static void teardown(const char *late_lib)
{
    setup();
    atexit(at_exit_calls);
    SHOW("alloc2", cuMemAlloc(&buf, 64));
    void *h = late_lib ? dlopen(late_lib, RTLD_NOW) : NULL;
    void (*arm)(void (*)(void)) = h ? (void (*)(void (*)(void)))dlsym(h, "hostile_late_arm") : NULL;
    if (!arm) {
        printf("no late library\n");
        return;
    }
    arm(late_calls);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *s = argc > 1 ? argv[1] : "garbage";
    if (!strcmp(s, "garbage")) {
        setup();
        garbage();
    } else if (!strcmp(s, "tainted_huge_read")) {
        /* minimal: a write the driver refuses leaves bytes unwritten, then a
         * read with a size the driver refuses (INVALID_VALUE without the shim) */
        setup();
        SHOW("htod_overrun", cuMemcpyHtoD(buf + 1000, host, 100));
        SHOW("dtoh_huge", cuMemcpyDtoH(host, buf, (size_t)1 << 62));
        CUDA_MEMCPY2D c2 = {.srcMemoryType = CU_MEMORYTYPE_DEVICE,
                            .srcDevice = buf,
                            .srcPitch = 64,
                            .dstMemoryType = CU_MEMORYTYPE_HOST,
                            .dstHost = host,
                            .dstPitch = 64,
                            .WidthInBytes = 64,
                            .Height = (size_t)1 << 40};
        SHOW("copy2d_huge", cuMemcpy2D(&c2));
    } else if (!strcmp(s, "segv")) {
        /* a failure, a skip and a refused read, then a crash in the program's own code */
        setup();
        int n = 4;
        float v = 1;
        void *kp[] = {&buf, &n, &v};
        SHOW("bad_launch", cuLaunchKernel(fill, 1, 1, 1, 4096, 1, 1, 0, 0, kp, NULL));
        SHOW("skipped", cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, 0, kp, NULL));
        SHOW("refused", cuMemcpyDtoH(host, buf, 16));
        volatile int *null = (volatile int *)(uintptr_t)argc - argc;
        *null = 1;
    } else if (!strcmp(s, "before_init")) {
        before_init();
    } else if (!strcmp(s, "no_context")) {
        no_context();
    } else if (!strcmp(s, "teardown")) {
        teardown(argc > 2 ? argv[2] : NULL);
    } else {
        return 2;
    }
    return 0;
}

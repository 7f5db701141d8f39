/*
 * test_async.c: work is queued and runs in order; a kernel's fault is
 * reported by a later call, then sticks; streams, events, contexts; eight
 * threads at once. The tests that say what has not run yet, or that the
 * call after a faulting launch still succeeds, pin the deterministic
 * schedule (fc_schedule_sync); test_schedule.c has their asynchronous
 * counterparts.
 */
#include "fc_test.h"

#include <pthread.h>

static CUdeviceptr crash_launch(CUfunction crash)
{
    CUdeviceptr p;
    OK(cuMemAlloc(&p, 64));
    void *args[] = {&p};
    OK(fc_launch(crash, 1, args, false, NULL));
    return p;
}

Test(async, fault_reported_at_the_next_sync_then_sticky)
{
    fc_schedule_sync();
    fc_setup();
    CUfunction crash = fc_function("_Z5crashPf");
    CUdeviceptr p = crash_launch(crash); /* the launch itself succeeds */
    float host[16];
    CUdeviceptr q;
    OK(cuMemAlloc(&q, 64)); /* not a sync point: the kernel has not run */
    FAILS(cuStreamSynchronize(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(cuMemAlloc(&q, 64), CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(cuMemcpyDtoH(host, p, sizeof host), CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(cuMemFree(p), CUDA_ERROR_ILLEGAL_ADDRESS);
    void *args[] = {&p};
    FAILS(fc_launch(crash, 1, args, false, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);

    /* queries that do not need a working context still answer */
    const char *name;
    int v, n;
    CUcontext cur;
    OK(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &name));
    cr_assert_str_eq(name, "CUDA_ERROR_ILLEGAL_ADDRESS");
    OK(cuDriverGetVersion(&v));
    OK(cuCtxGetCurrent(&cur));
    OK(cuDeviceGetCount(&n));
}

Test(async, fault_reported_by_a_later_copy)
{
    fc_setup();
    CUdeviceptr p = crash_launch(fc_function("_Z5crashPf"));
    float host[4];
    FAILS(cuMemcpyDtoH(host, p, sizeof host), CUDA_ERROR_ILLEGAL_ADDRESS);
}

Test(async, queued_work_runs_in_order_across_streams)
{
    fc_schedule_sync();
    fc_setup();
    CUstream s1, s2;
    OK(cuStreamCreate(&s1, CU_STREAM_DEFAULT));
    OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    float ones[256], *out; /* pinned: a copy into it lands when it runs */
    OK(cuMemAllocHost((void **)&out, 256 * sizeof *out));
    for (int i = 0; i < 256; i++)
        ones[i] = 1;
    CUdeviceptr d;
    OK(cuMemAlloc(&d, sizeof ones));
    OK(cuMemcpyHtoDAsync(d, ones, sizeof ones, s1));
    for (int i = 0; i < 256; i++)
        ones[i] = 99; /* the async copy took its snapshot */
    int n = 256;
    float factor = 3;
    void *args[] = {&d, &n, &factor};
    OK(fc_launch(fc_function("scale"), 256, args, false, s2));
    memset(out, 0, 256 * sizeof *out);
    OK(cuMemcpyDtoHAsync(out, d, 256 * sizeof *out, s1));
    cr_assert_eq(out[0], 0.0f, "an async copy to pinned memory lands at a sync point");
    OK(cuStreamQuery(s1));
    for (int i = 0; i < 256; i++)
        cr_assert_eq(out[i], 3.0f);
    /* Into pageable memory the call returns once the copy ran, as the
       driver documents: the program may read it at once (Warp does). */
    float pageable[256] = {0};
    OK(fc_launch(fc_function("scale"), 256, args, false, s2));
    OK(cuMemcpyDtoHAsync(pageable, d, sizeof pageable, s1));
    for (int i = 0; i < 256; i++)
        cr_assert_eq(pageable[i], 9.0f, "an async copy to pageable memory ran by its return");
    OK(cuMemFreeHost(out));
    OK(cuStreamDestroy(s1));
    OK(cuStreamDestroy(s2));
    FAILS(cuStreamSynchronize(s1), CUDA_ERROR_INVALID_HANDLE);
}

Test(async, events_time_and_order)
{
    fc_schedule_sync();
    fc_setup();
    CUevent a, b, untimed;
    float ms = -1;
    OK(cuEventCreate(&a, CU_EVENT_DEFAULT));
    OK(cuEventCreate(&b, CU_EVENT_DEFAULT));
    OK(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
    FAILS(cuEventElapsedTime(&ms, a, b), CUDA_ERROR_INVALID_HANDLE); /* never recorded */
    OK(cuEventRecord(a, NULL));
    void *p = NULL;
    void *args[] = {&p, &p, &p, &p};
    OK(fc_launch(fc_function("_Z5emptyPvS_S_S_"), 1, args, false, NULL));
    OK(cuEventRecord(b, NULL));
    FAILS(cuEventElapsedTime(&ms, a, b), CUDA_ERROR_NOT_READY);
    OK(cuEventSynchronize(b));
    OK(cuEventQuery(a));
    OK(cuEventElapsedTime(&ms, a, b));
    cr_assert_geq(ms, 0.0f);
    OK(cuEventRecordWithFlags(untimed, NULL, CU_EVENT_RECORD_DEFAULT)); /* runtime 13.2's record */
    FAILS(cuEventRecordWithFlags(untimed, NULL, CU_EVENT_RECORD_EXTERNAL), CUDA_ERROR_NOT_SUPPORTED);
    FAILS(cuEventRecordWithFlags(untimed, NULL, 0x80), CUDA_ERROR_INVALID_VALUE);
    OK(cuEventSynchronize(untimed));
    FAILS(cuEventElapsedTime(&ms, a, untimed), CUDA_ERROR_INVALID_HANDLE);
    OK(cuEventDestroy(a));
    FAILS(cuEventQuery(a), CUDA_ERROR_INVALID_HANDLE);
}

Test(async, created_contexts_and_the_stack)
{
    CUcontext primary = fc_setup(), c, top;
    OK(cuCtxCreate(&c, NULL, 0, 0));
    OK(cuCtxGetCurrent(&top));
    cr_assert_eq(top, c);
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 1024));
    OK(cuCtxPopCurrent(&top));
    cr_assert_eq(top, c);
    OK(cuCtxGetCurrent(&top));
    cr_assert_eq(top, primary);
    OK(cuCtxPushCurrent(c));
    OK(cuCtxDestroy(c)); /* pops it and frees its memory */
    OK(cuCtxGetCurrent(&top));
    cr_assert_eq(top, primary);
    FAILS(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuCtxPushCurrent(c), CUDA_ERROR_INVALID_CONTEXT);
    CUdevice dev = -1;
    OK(cuCtxGetDevice(&dev));
    cr_assert_eq(dev, 0);
    OK(cuDevicePrimaryCtxRelease(0));
    FAILS(cuMemAlloc(&d, 16), CUDA_ERROR_INVALID_CONTEXT); /* the primary context is gone */
}

/* cuEventRecord: "hEvent and hStream must be from the same context", else
 * CUDA_ERROR_INVALID_HANDLE (cuda.h).  fakecuda queued it on the other
 * context's stream, and a later cuEventSynchronize drained the event's own
 * queue to a sequence number it never reaches: a crash. */
Test(async, an_event_is_recorded_only_on_its_own_contexts_streams)
{
    CUcontext primary = fc_setup(), other, top;
    CUevent e;
    OK(cuEventCreate(&e, 0));
    OK(cuCtxCreate(&other, NULL, 0, 0));
    CUstream s;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    FAILS(cuEventRecord(e, s), CUDA_ERROR_INVALID_HANDLE);
    OK(cuStreamWaitEvent(s, e, 0)); /* waiting on another context's event is allowed */
    OK(cuStreamDestroy(s));
    OK(cuCtxPopCurrent(&top));
    cr_assert_eq(top, other);
    OK(cuEventRecord(e, NULL));
    OK(cuEventSynchronize(e));
    OK(cuEventQuery(e));
    OK(cuEventDestroy(e));
    OK(cuCtxDestroy(other));
    OK(cuCtxGetCurrent(&top));
    cr_assert_eq(top, primary);
}

Test(async, calls_need_init_and_a_context)
{
    CUdeviceptr d;
    CUcontext c;
    FAILS(cuMemAlloc(&d, 16), CUDA_ERROR_NOT_INITIALIZED);
    FAILS(cuCtxGetCurrent(&c), CUDA_ERROR_NOT_INITIALIZED);
    OK(cuInit(0));
    FAILS(cuMemAlloc(&d, 16), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cuStreamSynchronize(NULL), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cuInit(1), CUDA_ERROR_INVALID_VALUE);
}

Test(async, bad_handles_are_errors_not_crashes)
{
    fc_setup();
    int junk[64] = {0};
    CUstream bad = (CUstream)(void *)junk;
    CUevent ev = (CUevent)(void *)junk;
    FAILS(cuStreamSynchronize(bad), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuStreamDestroy(bad), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuEventRecord(ev, NULL), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuEventSynchronize(ev), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuModuleUnload((CUmodule)(void *)junk), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuCtxSetCurrent((CUcontext)(void *)junk), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cuStreamCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuEventCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemAlloc(NULL, 16), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemcpyHtoD(0, junk, 4), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemcpyDtoH(junk, (CUdeviceptr)(uintptr_t)junk, 4), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemFreeHost(junk), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGetErrorName(CUDA_SUCCESS, NULL), CUDA_ERROR_INVALID_VALUE);
}

#define THREADS 8
#define ROUNDS 200

static void *worker(void *arg)
{
    CUcontext ctx = arg;
    CUstream s;
    CUfunction saxpy = NULL;
    float x[128], y[128], out[128];
    bool ok = cuCtxSetCurrent(ctx) == CUDA_SUCCESS && cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS;
    CUmodule mod;
    ok = ok && cuModuleLoadData(&mod, "image") == CUDA_SUCCESS &&
         cuModuleGetFunction(&saxpy, mod, "_Z5saxpyifPKfPf") == CUDA_SUCCESS;
    for (int r = 0; ok && r < ROUNDS; r++) {
        for (int i = 0; i < 128; i++) {
            x[i] = (float)(i + r);
            y[i] = (float)r;
        }
        CUdeviceptr dx, dy;
        int n = 128;
        float a = 2;
        void *args[] = {&n, &a, &dx, &dy};
        ok = cuMemAlloc(&dx, sizeof x) == CUDA_SUCCESS && cuMemAlloc(&dy, sizeof y) == CUDA_SUCCESS &&
             cuMemcpyHtoDAsync(dx, x, sizeof x, s) == CUDA_SUCCESS &&
             cuMemcpyHtoDAsync(dy, y, sizeof y, s) == CUDA_SUCCESS &&
             cuLaunchKernel(saxpy, 1, 1, 1, 128, 1, 1, 0, s, args, NULL) == CUDA_SUCCESS &&
             cuMemcpyDtoHAsync(out, dy, sizeof out, s) == CUDA_SUCCESS && cuStreamSynchronize(s) == CUDA_SUCCESS &&
             cuMemFree(dx) == CUDA_SUCCESS && cuMemFree(dy) == CUDA_SUCCESS;
        for (int i = 0; ok && i < 128; i++)
            ok = out[i] == 2.0f * x[i] + y[i];
    }
    return (void *)(uintptr_t)ok;
}

Test(async, eight_threads_at_once)
{
    CUcontext ctx = fc_setup();
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, worker, ctx), 0);
    for (int i = 0; i < THREADS; i++) {
        void *ok;
        pthread_join(t[i], &ok);
        cr_assert(ok, "thread %d saw a wrong result or an error", i);
    }
    size_t free_b, total;
    OK(cuMemGetInfo(&free_b, &total));
    cr_assert_eq(free_b, total);
}

/*
 * schedule_stress.c: fakecuda's asynchronous schedule under load, as a
 * plain program (no Criterion, which cannot run under ThreadSanitizer), so
 * that a TSan build checks the workers against the threads that submit,
 * poll and synchronise: each of THREADS threads, ROUNDS times, on its own
 * stream of the primary context, queues copies and kernels behind a host
 * function it waits on (the simpleCallback pattern), polls a query until
 * its event completes, makes a created context wait on that event, and
 * destroys an event whose record may be pending. Meson runs it bare; run
 * it under LD_PRELOAD=libcutaint.so (after libtsan) to check the shim too.
 * Exit 0 when every result is right; 1 with the failing step otherwise; a
 * hang is the test's timeout.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define THREADS 6
#define ROUNDS 40
#define N 256

static CUcontext primary;
static CUfunction fill_fn, scale_fn;

typedef struct signal {
    pthread_mutex_t m;
    pthread_cond_t c;
    bool set;
} signal_t;

static void CUDA_CB raise_signal(void *arg)
{
    signal_t *s = arg;
    pthread_mutex_lock(&s->m);
    s->set = true;
    pthread_cond_signal(&s->c);
    pthread_mutex_unlock(&s->m);
}

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        CUresult r_ = (call);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                     \
            fprintf(stderr, "schedule_stress: %s returned %d (line %d)\n", #call, (int)r_, __LINE__); \
            return (void *)0;                                                                         \
        }                                                                                             \
    } while (0)

static void *worker(void *arg)
{
    CUcontext other = arg;
    CUstream s, so;
    float host[N], out[N];
    CHECK(cuCtxSetCurrent(primary));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuCtxPushCurrent(other));
    CHECK(cuStreamCreate(&so, CU_STREAM_NON_BLOCKING));
    CHECK(cuCtxPopCurrent(NULL));
    for (int r = 0; r < ROUNDS; r++) {
        CUdeviceptr d;
        CUevent e, gone;
        int n = N;
        float v = (float)r, two = 2;
        void *fargs[] = {&d, &n, &v}, *sargs[] = {&d, &n, &two};
        signal_t sig = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
        for (int i = 0; i < N; i++)
            host[i] = -1;
        CHECK(cuMemAlloc(&d, sizeof host));
        CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
        CHECK(cuEventCreate(&gone, 0));
        CHECK(cuMemcpyHtoDAsync(d, host, sizeof host, s));
        CHECK(cuLaunchKernel(fill_fn, 1, 1, 1, N, 1, 1, 0, s, fargs, NULL));
        CHECK(cuEventRecord(gone, s));
        CHECK(cuEventDestroy(gone)); /* its record may still be pending */
        CHECK(cuLaunchKernel(scale_fn, 1, 1, 1, N, 1, 1, 0, s, sargs, NULL));
        CHECK(cuEventRecord(e, s));
        CHECK(cuMemcpyDtoHAsync(out, d, sizeof out, s));
        CHECK(cuLaunchHostFunc(s, raise_signal, &sig));
        pthread_mutex_lock(&sig.m);
        while (!sig.set)
            pthread_cond_wait(&sig.c, &sig.m);
        pthread_mutex_unlock(&sig.m);
        for (int i = 0; i < N; i++)
            if (out[i] != 2 * v) {
                fprintf(stderr, "schedule_stress: round %d: out[%d] = %g, want %g\n", r, i, out[i], 2 * v);
                return (void *)0;
            }
        CUresult q;
        while ((q = cuEventQuery(e)) == CUDA_ERROR_NOT_READY)
            ;
        CHECK(q);
        /* the other context's stream waits on e, then runs a host function */
        signal_t sig2 = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
        CHECK(cuStreamWaitEvent(so, e, 0));
        CHECK(cuLaunchHostFunc(so, raise_signal, &sig2));
        CHECK(cuStreamSynchronize(so));
        if (!sig2.set) {
            fprintf(stderr, "schedule_stress: round %d: the synchronise returned before the host function\n", r);
            return (void *)0;
        }
        CHECK(cuStreamSynchronize(s));
        CHECK(cuEventDestroy(e));
        CHECK(cuMemFree(d));
    }
    CHECK(cuStreamDestroy(s));
    CHECK(cuStreamDestroy(so));
    return (void *)1;
}

int main(void)
{
    CUmodule mod;
    CUcontext other;
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&primary, 0) != CUDA_SUCCESS ||
        cuCtxSetCurrent(primary) != CUDA_SUCCESS || cuModuleLoadData(&mod, "image") != CUDA_SUCCESS ||
        cuModuleGetFunction(&fill_fn, mod, "_Z4fillPfif") != CUDA_SUCCESS ||
        cuModuleGetFunction(&scale_fn, mod, "scale") != CUDA_SUCCESS ||
        cuCtxCreate(&other, NULL, 0, 0) != CUDA_SUCCESS || cuCtxPopCurrent(NULL) != CUDA_SUCCESS) {
        fprintf(stderr, "schedule_stress: setup failed\n");
        return 1;
    }
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, worker, other) != 0)
            return 1;
    bool ok = true;
    for (int i = 0; i < THREADS; i++) {
        void *res;
        pthread_join(t[i], &res);
        ok = ok && res;
    }
    ok = ok && cuCtxDestroy(other) == CUDA_SUCCESS && cuDevicePrimaryCtxReset(0) == CUDA_SUCCESS;
    puts(ok ? "schedule_stress: OK" : "schedule_stress: FAILED");
    return ok ? 0 : 1;
}

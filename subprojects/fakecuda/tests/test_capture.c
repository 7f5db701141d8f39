/*
 * test_capture.c: stream capture: work on a capturing stream is recorded
 * into a graph in stream order and does not run; status and info queries;
 * forks and joins through events; the operations the driver refuses during
 * a capture (and the invalidation they cause); capture modes and
 * potentially unsafe calls; the per-thread default stream; fault rules.
 */
#include "fc_test.h"

#include <pthread.h>
#include <stdlib.h>

enum { N = 256 };

static CUstream stream(unsigned flags)
{
    CUstream s;
    OK(cuStreamCreate(&s, flags));
    return s;
}

static CUresult fill(CUdeviceptr out, float v, CUstream s)
{
    int n = N;
    void *args[] = {&out, &n, &v};
    return fc_launch(fc_function("_Z4fillPfif"), N, args, false, s);
}

static CUresult scale(CUdeviceptr data, float factor, CUstream s)
{
    int n = N;
    void *args[] = {&data, &n, &factor};
    return fc_launch(fc_function("scale"), N, args, false, s);
}

static CUdeviceptr device_floats(void)
{
    CUdeviceptr d;
    OK(cuMemAlloc(&d, N * sizeof(float)));
    return d;
}

static void all_equal(const float *v, float want)
{
    for (int i = 0; i < N; i++)
        cr_assert_eq(v[i], want, "v[%d] = %g, expected %g", i, (double)v[i], (double)want);
}

static CUgraphExec instantiate(CUgraph g)
{
    CUgraphExec e;
    OK(cuGraphInstantiateWithFlags(&e, g, 0));
    return e;
}

static size_t node_count(CUgraph g)
{
    size_t n = 0;
    OK(cuGraphGetNodes(g, NULL, &n));
    return n;
}

static size_t dep_count(CUgraphNode n)
{
    size_t k = 0;
    OK(cuGraphNodeGetDependencies(n, NULL, NULL, &k));
    return k;
}

static CUstreamCaptureStatus status_of(CUstream s)
{
    CUstreamCaptureStatus st;
    OK(cuStreamIsCapturing(s, &st));
    return st;
}

/* Begins a global-mode capture on s, captures fill(d, v), ends it, returns the graph. */
static CUgraph capture_fill(CUstream s, CUdeviceptr d, float v)
{
    CUgraph g;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(fill(d, v, s));
    OK(cuStreamEndCapture(s, &g));
    return g;
}

Test(capture, work_is_recorded_in_stream_order_and_not_run)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_DEFAULT);
    CUdeviceptr d = device_floats();
    static float src[N], out[N];
    for (int i = 0; i < N; i++)
        src[i] = 2, out[i] = -1;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    cr_assert_eq(status_of(s), CU_STREAM_CAPTURE_STATUS_ACTIVE);
    OK(cuMemsetD32Async(d, 0, N, s));
    OK(cuMemcpyHtoDAsync(d, src, sizeof src, s));
    OK(scale(d, 3, s));
    OK(scale(d, 5, s));
    OK(cuMemcpyDtoHAsync(out, d, sizeof out, s));
    CUgraph g;
    OK(cuStreamEndCapture(s, &g));
    cr_assert_eq(status_of(s), CU_STREAM_CAPTURE_STATUS_NONE);
    OK(cuCtxSynchronize());
    all_equal(out, -1); /* nothing ran */
    unsigned word;
    OK(cuMemcpyDtoH(&word, d, sizeof word));
    cr_assert_eq(word, FC_STALE_WORD, "the device memory was never written");

    /* a chain: each node after the one before */
    CUgraphNode nodes[5];
    size_t n = 5;
    OK(cuGraphGetNodes(g, nodes, &n));
    cr_assert_eq(n, 5);
    CUgraphNodeType want[] = {CU_GRAPH_NODE_TYPE_MEMSET, CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_KERNEL,
                              CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_MEMCPY};
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType t;
        OK(cuGraphNodeGetType(nodes[i], &t));
        cr_assert_eq(t, want[i], "node %zu", i);
        CUgraphNode dep = NULL;
        size_t k = 1;
        OK(cuGraphNodeGetDependencies(nodes[i], &dep, NULL, &k));
        cr_assert_eq(k, i == 0 ? 0u : 1u);
        cr_assert(i == 0 || dep == nodes[i - 1]);
    }
    /* a captured host source is read when the graph launches */
    for (int i = 0; i < N; i++)
        src[i] = 1;
    CUgraphExec e = instantiate(g);
    OK(cuGraphLaunch(e, s));
    OK(cuStreamSynchronize(s));
    all_equal(out, 15);
}

Test(capture, captured_kernel_parameters_are_copied)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = device_floats();
    static float out[N];
    int n = N;
    float v = 7;
    void *args[] = {&d, &n, &v};
    CUgraph g;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(fc_launch(fc_function("_Z4fillPfif"), N, args, false, s));
    v = 8;
    OK(cuStreamEndCapture(s, &g));
    OK(cuGraphLaunch(instantiate(g), s));
    OK(cuMemcpyDtoH(out, d, sizeof out));
    all_equal(out, 7);
}

Test(capture, info_reports_the_sequence)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_DEFAULT), t = stream(CU_STREAM_DEFAULT);
    CUdeviceptr d = device_floats();
    CUstreamCaptureStatus st;
    cuuint64_t id = 0, id2 = 0;
    OK(cuStreamGetCaptureInfo(s, &st, &id, NULL, NULL, NULL, NULL));
    cr_assert_eq(st, CU_STREAM_CAPTURE_STATUS_NONE);
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    OK(cuStreamBeginCapture(t, CU_STREAM_CAPTURE_MODE_RELAXED));
    CUgraph g = NULL;
    const CUgraphNode *deps = NULL;
    const CUgraphEdgeData *edges = NULL;
    size_t n = 99;
    OK(cuStreamGetCaptureInfo(s, &st, &id, &g, &deps, &edges, &n));
    cr_assert(st == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && g != NULL && n == 0);
    OK(cuStreamGetCaptureInfo(t, &st, &id2, NULL, NULL, NULL, NULL));
    cr_assert_neq(id, id2, "each sequence has its own id");
    OK(fill(d, 1, s));
    OK(cuStreamGetCaptureInfo(s, &st, NULL, NULL, &deps, &edges, &n));
    CUgraphNode first;
    size_t one = 1;
    OK(cuGraphGetNodes(g, &first, &one));
    cr_assert(n == 1 && deps[0] == first && edges[0].type == CU_GRAPH_DEPENDENCY_TYPE_DEFAULT);
    FAILS(cuStreamGetCaptureInfo(s, NULL, NULL, NULL, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuStreamGetCaptureInfo(s, &st, NULL, NULL, NULL, &edges, NULL), CUDA_ERROR_INVALID_VALUE);
    /* the legacy stream while a blocking stream captures: an error, but no harm done */
    FAILS(cuStreamIsCapturing(CU_STREAM_LEGACY, &st), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    cr_assert_eq(status_of(s), CU_STREAM_CAPTURE_STATUS_ACTIVE);
    /* a graph being captured into cannot be destroyed or instantiated */
    CUgraphExec e;
    FAILS(cuGraphDestroy(g), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphInstantiateWithFlags(&e, g, 0), CUDA_ERROR_INVALID_VALUE);
    CUgraph got, other;
    OK(cuStreamEndCapture(s, &got));
    cr_assert_eq(got, g);
    OK(cuStreamEndCapture(t, &other));
    cr_assert_eq(node_count(other), 0);
    OK(cuGraphDestroy(got));
}

Test(capture, a_stream_sync_during_capture_invalidates_it)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_DEFAULT);
    CUdeviceptr d = device_floats();
    static float out[N];
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(fill(d, 1, s));
    FAILS(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    cr_assert_eq(status_of(s), CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    FAILS(fill(d, 2, s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    FAILS(cuStreamQuery(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUgraph g = (CUgraph)(uintptr_t)1;
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    cr_assert_null(g);
    /* the stream works again, and the context never broke */
    OK(fill(d, 3, s));
    OK(cuStreamSynchronize(s));
    OK(cuMemcpyDtoH(out, d, sizeof out));
    all_equal(out, 3);
}

Test(capture, the_legacy_stream_and_a_blocking_capture)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_DEFAULT);
    CUdeviceptr d = device_floats();
    float v = 1;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    FAILS(cuMemcpyHtoD(d, &v, sizeof v), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    cr_assert_eq(status_of(s), CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    FAILS(fill(d, 1, NULL), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    FAILS(cuStreamSynchronize(NULL), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CUgraph g;
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    OK(cuMemcpyHtoD(d, &v, sizeof v)); /* capture over: the legacy stream is usable */
}

Test(capture, a_non_blocking_capture_leaves_the_legacy_stream_alone)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = device_floats(), e = device_floats();
    static float out[N];
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    OK(fill(d, 4, s));
    OK(fill(e, 5, NULL)); /* runs, not captured */
    OK(cuMemcpyDtoH(out, e, sizeof out));
    all_equal(out, 5);
    CUgraph g;
    OK(cuStreamEndCapture(s, &g));
    cr_assert_eq(node_count(g), 1);
}

Test(capture, a_context_sync_during_capture_invalidates_it)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUgraph g;
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    OK(cuCtxSynchronize());
}

typedef struct alloc_probe {
    CUcontext ctx;
    CUstreamCaptureMode mode; /* the probing thread's mode */
    CUresult r;
} alloc_probe;

static void *try_alloc(void *arg)
{
    alloc_probe *p = arg;
    CUdeviceptr d;
    cuCtxSetCurrent(p->ctx);
    cuThreadExchangeStreamCaptureMode(&p->mode);
    p->r = cuMemAlloc(&d, 64);
    return NULL;
}

static CUresult alloc_in_other_thread(CUcontext ctx, CUstreamCaptureMode mode)
{
    alloc_probe p = {ctx, mode, CUDA_ERROR_UNKNOWN};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, try_alloc, &p), 0);
    pthread_join(t, NULL);
    return p.r;
}

Test(capture, modes_decide_who_may_make_unsafe_calls)
{
    CUcontext ctx = fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d;
    CUgraph g;
    /* global: every thread in the global mode is prohibited */
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    FAILS(alloc_in_other_thread(ctx, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(alloc_in_other_thread(ctx, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    OK(alloc_in_other_thread(ctx, CU_STREAM_CAPTURE_MODE_RELAXED));
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    OK(cuThreadExchangeStreamCaptureMode(&mode));
    cr_assert_eq(mode, CU_STREAM_CAPTURE_MODE_GLOBAL, "the default mode");
    OK(cuMemAlloc(&d, 64)); /* this thread, relaxed now */
    OK(cuThreadExchangeStreamCaptureMode(&mode));
    FAILS(cuMemAlloc(&d, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* thread-local: only the capturing thread */
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    OK(alloc_in_other_thread(ctx, CU_STREAM_CAPTURE_MODE_GLOBAL));
    void *host;
    FAILS(cuMemAllocHost(&host, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* relaxed: nobody */
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    OK(cuMemAlloc(&d, 64));
    OK(cuMemFree(d));
    OK(alloc_in_other_thread(ctx, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(cuStreamEndCapture(s, &g));
    mode = (CUstreamCaptureMode)7;
    FAILS(cuThreadExchangeStreamCaptureMode(&mode), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuThreadExchangeStreamCaptureMode(NULL), CUDA_ERROR_INVALID_VALUE);
}

typedef struct end_probe {
    CUcontext ctx;
    CUstream s;
    CUresult r;
} end_probe;

static void *end_elsewhere(void *arg)
{
    end_probe *p = arg;
    CUgraph g;
    cuCtxSetCurrent(p->ctx);
    p->r = cuStreamEndCapture(p->s, &g);
    return NULL;
}

static CUresult end_in_other_thread(CUcontext ctx, CUstream s)
{
    end_probe p = {ctx, s, CUDA_ERROR_UNKNOWN};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, end_elsewhere, &p), 0);
    pthread_join(t, NULL);
    return p.r;
}

Test(capture, begin_and_end_are_checked)
{
    CUcontext ctx = fc_setup();
    CUstream s = stream(CU_STREAM_DEFAULT), t = stream(CU_STREAM_DEFAULT);
    CUgraph g;
    FAILS(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    FAILS(cuStreamBeginCapture(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    FAILS(cuStreamBeginCapture(s, (CUstreamCaptureMode)3), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuStreamBeginCapture((CUstream)(uintptr_t)&g, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_ILLEGAL_STATE);
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    FAILS(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
    FAILS(cuStreamEndCapture(s, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuStreamEndCapture(t, &g), CUDA_ERROR_ILLEGAL_STATE);
    FAILS(end_in_other_thread(ctx, s), CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
    OK(cuStreamEndCapture(s, &g));
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    OK(end_in_other_thread(ctx, s)); /* relaxed: any thread may end it */
}

Test(capture, fork_and_join_through_events)
{
    fc_setup();
    CUstream s1 = stream(CU_STREAM_NON_BLOCKING), s2 = stream(CU_STREAM_NON_BLOCKING);
    CUevent fork, join;
    OK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    OK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr a = device_floats(), b = device_floats();
    static float out[N];
    OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(fill(a, 2, s1)); /* A */
    OK(cuEventRecord(fork, s1));
    OK(cuStreamWaitEvent(s2, fork, 0)); /* s2 joins the capture after A */
    cr_assert_eq(status_of(s2), CU_STREAM_CAPTURE_STATUS_ACTIVE);
    FAILS(cuStreamBeginCapture(s2, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
    OK(fill(b, 3, s2));  /* B after A */
    OK(scale(a, 5, s1)); /* C after A */
    OK(cuEventRecord(join, s2));
    OK(cuStreamWaitEvent(s1, join, 0));
    OK(scale(b, 7, s1)); /* D after C and B */
    CUgraph g;
    FAILS(cuStreamEndCapture(s2, &g), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
    OK(cuStreamEndCapture(s1, &g));
    cr_assert_eq(status_of(s2), CU_STREAM_CAPTURE_STATUS_NONE, "the joined stream left with the end");
    CUgraphNode nodes[4];
    size_t n = 4;
    OK(cuGraphGetNodes(g, nodes, &n));
    cr_assert_eq(n, 4);
    cr_assert_eq(dep_count(nodes[0]), 0);
    cr_assert_eq(dep_count(nodes[1]), 1);
    cr_assert_eq(dep_count(nodes[2]), 1);
    cr_assert_eq(dep_count(nodes[3]), 2);
    OK(cuGraphLaunch(instantiate(g), s1));
    OK(cuStreamSynchronize(s1));
    OK(cuMemcpyDtoH(out, a, sizeof out));
    all_equal(out, 10);
    OK(cuMemcpyDtoH(out, b, sizeof out));
    all_equal(out, 21);
    OK(cuEventSynchronize(fork)); /* the capture is over */
}

Test(capture, an_event_recorded_in_a_capture_cannot_be_waited_for)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    CUevent e, t;
    OK(cuEventCreate(&e, 0));
    OK(cuEventCreate(&t, 0));
    OK(cuEventRecord(t, NULL));
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(cuEventRecord(e, s));
    FAILS(cuEventQuery(e), CUDA_ERROR_CAPTURED_EVENT);
    float ms;
    FAILS(cuEventElapsedTime(&ms, t, e), CUDA_ERROR_CAPTURED_EVENT);
    FAILS(cuEventSynchronize(e), CUDA_ERROR_CAPTURED_EVENT);
    CUgraph g;
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    OK(cuEventSynchronize(e)); /* the capture is over: a record that never ran */
    OK(cuEventRecord(e, s));
    OK(cuEventSynchronize(e));
}

Test(capture, a_fork_left_unjoined_fails_the_end)
{
    fc_setup();
    CUstream s1 = stream(CU_STREAM_NON_BLOCKING), s2 = stream(CU_STREAM_NON_BLOCKING);
    CUevent fork;
    OK(cuEventCreate(&fork, 0));
    CUdeviceptr a = device_floats();
    OK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(cuEventRecord(fork, s1));
    OK(cuStreamWaitEvent(s2, fork, 0));
    OK(fill(a, 1, s2));
    CUgraph g = (CUgraph)(uintptr_t)1;
    FAILS(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
    cr_assert_null(g);
    cr_assert_eq(status_of(s2), CU_STREAM_CAPTURE_STATUS_NONE);
}

Test(capture, waiting_on_an_outside_event_breaks_isolation)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING), t = stream(CU_STREAM_NON_BLOCKING), u = stream(CU_STREAM_NON_BLOCKING);
    CUevent outside, in_u;
    OK(cuEventCreate(&outside, 0));
    OK(cuEventCreate(&in_u, 0));
    OK(cuEventRecord(outside, NULL));
    CUgraph g;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    FAILS(cuStreamWaitEvent(s, outside, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* two sequences may not merge */
    OK(cuStreamBeginCapture(t, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(cuStreamBeginCapture(u, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(cuEventRecord(in_u, u));
    FAILS(cuStreamWaitEvent(t, in_u, 0), CUDA_ERROR_STREAM_CAPTURE_MERGE);
    FAILS(cuStreamEndCapture(t, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    FAILS(cuStreamEndCapture(u, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* an external wait is a node fakecuda does not have */
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    FAILS(cuStreamWaitEvent(s, outside, CU_EVENT_WAIT_EXTERNAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
}

static void bump(void *user)
{
    ++*(int *)user;
}

static void callback(CUstream s, CUresult r, void *user)
{
    (void)s;
    (void)r;
    (void)user;
}

Test(capture, host_functions_are_captured_other_stream_work_is_refused)
{
    fc_schedule_sync(); /* it asserts what has not run before the sync */
    fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    int calls = 0;
    CUgraph g;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    OK(cuLaunchHostFunc(s, bump, &calls));
    OK(cuStreamEndCapture(s, &g));
    CUgraphExec e = instantiate(g);
    OK(cuGraphLaunch(e, s));
    OK(cuGraphLaunch(e, s));
    cr_assert_eq(calls, 0);
    OK(cuStreamSynchronize(s));
    cr_assert_eq(calls, 2);
    CUdeviceptr d;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    FAILS(cuStreamAddCallback(s, callback, NULL, 0), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    FAILS(cuMemAllocAsync(&d, 64, s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    OK(cuMemAlloc(&d, 64));
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    FAILS(cuMemFreeAsync(d, s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    FAILS(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    OK(cuMemFreeAsync(d, s));
    OK(cuStreamSynchronize(s));
}

Test(capture, the_per_thread_default_stream_captures)
{
    fc_setup();
    CUdeviceptr d = device_floats();
    static float out[N];
    CUresult (*launch_ptsz)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void **, void **);
    OK(cuGetProcAddress("cuLaunchKernel", (void **)&launch_ptsz, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                        NULL));
    OK(cuStreamBeginCapture(CU_STREAM_PER_THREAD, CU_STREAM_CAPTURE_MODE_RELAXED));
    OK(fill(d, 6, CU_STREAM_PER_THREAD));
    int n = N;
    float factor = 2;
    void *args[] = {&d, &n, &factor};
    OK(launch_ptsz(fc_function("scale"), 1, 1, 1, N, 1, 1, 0, NULL, args, NULL)); /* NULL here: per-thread */
    /* the legacy stream waits for the per-thread one */
    FAILS(fill(d, 1, NULL), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CUgraph g;
    FAILS(cuStreamEndCapture(CU_STREAM_PER_THREAD, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    OK(cuStreamBeginCapture(CU_STREAM_PER_THREAD, CU_STREAM_CAPTURE_MODE_RELAXED));
    OK(fill(d, 6, CU_STREAM_PER_THREAD));
    OK(launch_ptsz(fc_function("scale"), 1, 1, 1, N, 1, 1, 0, NULL, args, NULL));
    OK(cuStreamEndCapture(CU_STREAM_PER_THREAD, &g));
    cr_assert_eq(node_count(g), 2);
    OK(cuGraphLaunch(instantiate(g), NULL));
    OK(cuMemcpyDtoH(out, d, sizeof out));
    all_equal(out, 12);
}

Test(capture, a_graph_launched_into_a_capture_is_captured)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = device_floats();
    static float out[N];
    CUgraphExec inner = instantiate(capture_fill(s, d, 3));
    CUgraph outer;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(cuGraphLaunch(inner, s));
    OK(scale(d, 4, s));
    OK(cuStreamEndCapture(s, &outer));
    cr_assert_eq(node_count(outer), 2);
    OK(cuGraphExecDestroy(inner));
    OK(cuGraphLaunch(instantiate(outer), s));
    OK(cuMemcpyDtoH(out, d, sizeof out));
    all_equal(out, 12);
}

Test(capture, dependencies_can_be_updated_and_capture_can_extend_a_graph)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = device_floats();
    static float out[N];
    CUgraph g;
    CUgraphNode root;
    OK(cuGraphCreate(&g, 0));
    OK(cuGraphAddEmptyNode(&root, g, NULL, 0));
    OK(cuStreamBeginCaptureToGraph(s, g, &root, NULL, 1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(fill(d, 2, s));
    OK(cuStreamUpdateCaptureDependencies(s, NULL, NULL, 0, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
    OK(scale(d, 3, s)); /* no dependency now */
    OK(cuStreamUpdateCaptureDependencies(s, &root, NULL, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
    FAILS(cuStreamUpdateCaptureDependencies(s, &root, NULL, 1, 5), CUDA_ERROR_INVALID_VALUE);
    CUgraph got;
    OK(cuStreamEndCapture(s, &got));
    cr_assert_eq(got, g);
    CUgraphNode nodes[3];
    size_t n = 3;
    OK(cuGraphGetNodes(g, nodes, &n));
    cr_assert(n == 3 && dep_count(nodes[1]) == 1 && dep_count(nodes[2]) == 0);
    FAILS(cuStreamUpdateCaptureDependencies(s, NULL, NULL, 0, 0), CUDA_ERROR_ILLEGAL_STATE);
    /* fill, then scale, in creation order (both roots now) */
    OK(cuGraphLaunch(instantiate(g), s));
    OK(cuMemcpyDtoH(out, d, sizeof out));
    all_equal(out, 6);
}

/* The caller has the graph already: it need not ask for it back
   (graphConditionalNodes fills a conditional body so). */
Test(capture, a_capture_into_a_graph_may_end_without_returning_it)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = device_floats();
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    OK(cuStreamBeginCaptureToGraph(s, g, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(fill(d, 2, s));
    OK(cuStreamEndCapture(s, NULL));
    size_t n = 0;
    OK(cuGraphGetNodes(g, NULL, &n));
    cr_expect_eq(n, 1, "the captured fill is in the graph");
    FAILS(cuStreamEndCapture(s, NULL), CUDA_ERROR_INVALID_VALUE);
    CUstreamCaptureStatus status;
    OK(cuStreamIsCapturing(s, &status));
    cr_expect_eq(status, CU_STREAM_CAPTURE_STATUS_NONE);
}

Test(capture, destroying_the_capturing_stream_ends_the_capture)
{
    fc_setup();
    CUstream s = stream(CU_STREAM_DEFAULT), t = stream(CU_STREAM_DEFAULT);
    CUevent fork;
    OK(cuEventCreate(&fork, 0));
    CUdeviceptr d = device_floats();
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(fill(d, 1, s));
    OK(cuEventRecord(fork, s));
    OK(cuStreamWaitEvent(t, fork, 0));
    OK(cuStreamDestroy(s));
    cr_assert_eq(status_of(t), CU_STREAM_CAPTURE_STATUS_NONE);
    OK(fill(d, 2, NULL)); /* no blocking capture left */
    OK(cuEventDestroy(fork));
    OK(cuCtxSynchronize());
}

Test(capture, launch_rules_count_at_the_graph_launch_not_the_capture)
{
    setenv("FAKECUDA_FAULTS", "launch:scale#1=fault", 1);
    fc_setup();
    CUstream s = stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr d = device_floats();
    CUgraph g;
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    OK(scale(d, 2, s)); /* captured: not counted */
    OK(cuStreamEndCapture(s, &g));
    OK(cuStreamSynchronize(s));
    OK(cuGraphLaunch(instantiate(g), s)); /* scale #1: faults when it runs */
    FAILS(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
}

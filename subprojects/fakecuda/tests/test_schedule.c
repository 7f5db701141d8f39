/*
 * test_schedule.c: fakecuda's asynchronous schedule (the default,
 * FAKECUDA_SCHEDULE=async): queued work runs on a worker thread, between
 * calls, as on a GPU. A host thread released by a host function (the
 * simpleCallback pattern); queries answering CUDA_ERROR_NOT_READY while work
 * is pending; an event behind a slow host function; cuStreamWaitEvent
 * across streams and contexts; a kernel's fault surfacing at the next call;
 * the API refused inside a host function; a forked child; and the
 * deterministic schedule (FAKECUDA_SCHEDULE=sync) still answering as before.
 *
 * Work is held pending with a gate: a host function that waits until the
 * test opens it, so "pending" never depends on timing. Every wait has a
 * generous timeout (WAIT_S), and every test one (30 s) for the driver's
 * own waits, so that a regression fails instead of hanging.
 */
#include "fc_test.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_S 10

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static struct timespec deadline(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += WAIT_S;
    return t;
}

/* Waits under mu until *flag is set; false on timeout. */
static bool wait_flag(const bool *flag)
{
    struct timespec until = deadline();
    pthread_mutex_lock(&mu);
    int rc = 0;
    while (!*flag && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&cv, &mu, &until);
    bool seen = *flag;
    pthread_mutex_unlock(&mu);
    return seen;
}

static void set_flag(bool *flag)
{
    pthread_mutex_lock(&mu);
    *flag = true;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

/* ---- a gate: a host function that holds its stream until opened ---------- */

typedef struct gate {
    bool entered, open, timed_out;
} gate;

static void CUDA_CB gate_hold(void *arg)
{
    gate *g = arg;
    set_flag(&g->entered);
    if (!wait_flag(&g->open))
        g->timed_out = true; /* the test failed to open it: let the queue go on */
}

static void gate_open(gate *g)
{
    set_flag(&g->open);
}

/* ---- a trace of host functions, in the order they ran --------------------- */

static char trace[16];
static int ntrace;

static void CUDA_CB note(void *arg)
{
    pthread_mutex_lock(&mu);
    if (ntrace < (int)sizeof trace - 1)
        trace[ntrace++] = *(const char *)arg;
    pthread_mutex_unlock(&mu);
}

static void fill(CUdeviceptr d, int n, float v, CUstream s)
{
    void *args[] = {&d, &n, &v};
    OK(fc_launch(fc_function("_Z4fillPfif"), (unsigned)n, args, false, s));
}

static void scale(CUdeviceptr d, int n, float factor, CUstream s)
{
    void *args[] = {&d, &n, &factor};
    OK(fc_launch(fc_function("scale"), (unsigned)n, args, false, s));
}

/* ---- simpleCallback: a host thread waits for a host function -------------- */

static bool released;

static void CUDA_CB release_waiter(void *arg)
{
    (void)arg;
    set_flag(&released);
}

/* cuda-samples' simpleCallback: the host thread sleeps on a condition that
 * a host function queued behind the work signals, and never synchronises.
 * Run only at sync points, the host function never runs and this hangs. */
Test(schedule, a_host_function_releases_a_waiting_host_thread, .timeout = 30)
{
    fc_setup();
    CUstream s;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr d;
    float out[64] = {0};
    OK(cuMemAlloc(&d, sizeof out));
    fill(d, 64, 2, s);
    scale(d, 64, 5, s);
    OK(cuMemcpyDtoHAsync(out, d, sizeof out, s));
    OK(cuLaunchHostFunc(s, release_waiter, NULL));
    cr_assert(wait_flag(&released), "the host function did not run within %d s without a sync", WAIT_S);
    for (int i = 0; i < 64; i++)
        cr_assert_eq(out[i], 10.0f, "the work before the host function ran first (out[%d] = %g)", i, out[i]);
    OK(cuStreamSynchronize(s));
    OK(cuStreamDestroy(s));
}

/* The same with a stream callback on the legacy stream, as simpleCallback's
 * cudaStreamAddCallback. */
static CUresult cb_status = CUDA_ERROR_UNKNOWN;

static void CUDA_CB record_status(CUstream s, CUresult status, void *arg)
{
    (void)s;
    cb_status = status;
    set_flag(arg);
}

Test(schedule, a_stream_callback_releases_a_waiting_host_thread, .timeout = 30)
{
    fc_setup();
    static bool done;
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 64 * sizeof(float)));
    fill(d, 64, 1, NULL);
    OK(cuStreamAddCallback(NULL, record_status, &done, 0));
    cr_assert(wait_flag(&done), "the callback did not run within %d s without a sync", WAIT_S);
    cr_assert_eq(cb_status, CUDA_SUCCESS);
}

/* ---- queries ---------------------------------------------------------------- */

Test(schedule, queries_answer_not_ready_while_work_is_pending, .timeout = 30)
{
    fc_setup();
    static gate g;
    CUstream s;
    CUevent e;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    OK(cuEventCreate(&e, CU_EVENT_DEFAULT));
    OK(cuLaunchHostFunc(s, gate_hold, &g));
    OK(cuEventRecord(e, s));
    cr_assert(wait_flag(&g.entered), "the gate never ran");
    FAILS(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    FAILS(cuEventQuery(e), CUDA_ERROR_NOT_READY);
    FAILS(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY); /* the legacy stream waits for s's work */
    gate_open(&g);
    OK(cuStreamSynchronize(s));
    cr_assert(!g.timed_out);
    OK(cuStreamQuery(s));
    OK(cuEventQuery(e));
    OK(cuStreamQuery(NULL));
    OK(cuStreamDestroy(s));
    OK(cuEventDestroy(e));
}

/* ---- an event behind a slow host function ---------------------------------- */

static bool slow_done;

static void CUDA_CB slow(void *arg)
{
    (void)arg;
    struct timespec t = {0, 100 * 1000 * 1000};
    nanosleep(&t, NULL);
    set_flag(&slow_done);
}

Test(schedule, an_event_recorded_behind_a_slow_host_function_completes_after_it, .timeout = 30)
{
    fc_setup();
    static gate g;
    CUstream s;
    CUevent start, end;
    OK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    OK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    OK(cuEventCreate(&end, CU_EVENT_BLOCKING_SYNC));
    OK(cuEventRecord(start, s));
    OK(cuLaunchHostFunc(s, gate_hold, &g));
    OK(cuLaunchHostFunc(s, slow, NULL));
    OK(cuEventRecord(end, s));
    cr_assert(wait_flag(&g.entered), "the gate never ran");
    FAILS(cuEventQuery(end), CUDA_ERROR_NOT_READY);
    float ms = -1;
    FAILS(cuEventElapsedTime(&ms, start, end), CUDA_ERROR_NOT_READY);
    gate_open(&g);
    OK(cuEventSynchronize(end));
    pthread_mutex_lock(&mu);
    bool ran = slow_done;
    pthread_mutex_unlock(&mu);
    cr_assert(ran, "cuEventSynchronize returned before the host function queued ahead of the event finished");
    OK(cuEventQuery(end));
    OK(cuEventElapsedTime(&ms, start, end));
    cr_assert_geq(ms, 0.0f);
    OK(cuStreamDestroy(s));
}

/* ---- cuStreamWaitEvent ------------------------------------------------------- */

/* s2's work waits for an event recorded on s1 behind a held gate. */
Test(schedule, stream_wait_event_orders_work_across_streams, .timeout = 30)
{
    fc_setup();
    static gate g;
    CUstream s1, s2;
    CUevent e;
    OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr d;
    float *out; /* pinned: the copy into it is queued, not waited for */
    OK(cuMemAllocHost((void **)&out, 32 * sizeof *out));
    memset(out, 0, 32 * sizeof *out);
    OK(cuMemAlloc(&d, 32 * sizeof *out));
    OK(cuLaunchHostFunc(s1, gate_hold, &g));
    fill(d, 32, 2, s1);
    OK(cuLaunchHostFunc(s1, note, "a"));
    OK(cuEventRecord(e, s1));
    OK(cuStreamWaitEvent(s2, e, 0));
    OK(cuLaunchHostFunc(s2, note, "b"));
    scale(d, 32, 3, s2);
    OK(cuMemcpyDtoHAsync(out, d, 32 * sizeof *out, s2));
    cr_assert(wait_flag(&g.entered), "the gate never ran");
    FAILS(cuStreamQuery(s2), CUDA_ERROR_NOT_READY);
    gate_open(&g);
    OK(cuStreamSynchronize(s2));
    cr_assert_str_eq(trace, "ab");
    for (int i = 0; i < 32; i++)
        cr_assert_eq(out[i], 6.0f, "s2's scale ran before s1's fill (out[%d] = %g)", i, out[i]);
    OK(cuMemFreeHost(out));
    OK(cuStreamDestroy(s1));
    OK(cuStreamDestroy(s2));
}

/* The event's context and the waiting stream's differ: two workers. */
Test(schedule, stream_wait_event_orders_work_across_contexts, .timeout = 30)
{
    CUcontext a = fc_setup(), b, top;
    static gate g;
    CUstream sa, sb;
    CUevent e;
    OK(cuStreamCreate(&sa, CU_STREAM_NON_BLOCKING));
    OK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr d;
    float *out; /* pinned: the copy into it is queued, not waited for */
    OK(cuMemAllocHost((void **)&out, 32 * sizeof *out));
    memset(out, 0, 32 * sizeof *out);
    OK(cuMemAlloc(&d, 32 * sizeof *out));
    OK(cuLaunchHostFunc(sa, gate_hold, &g));
    fill(d, 32, 2, sa);
    OK(cuLaunchHostFunc(sa, note, "a"));
    OK(cuEventRecord(e, sa));

    OK(cuCtxCreate(&b, NULL, 0, 0));
    OK(cuStreamCreate(&sb, CU_STREAM_NON_BLOCKING));
    OK(cuStreamWaitEvent(sb, e, 0));
    OK(cuLaunchHostFunc(sb, note, "b"));
    scale(d, 32, 3, sb);
    OK(cuMemcpyDtoHAsync(out, d, 32 * sizeof *out, sb));
    cr_assert(wait_flag(&g.entered), "the gate never ran");
    FAILS(cuStreamQuery(sb), CUDA_ERROR_NOT_READY);
    gate_open(&g);
    OK(cuStreamSynchronize(sb));
    cr_assert_str_eq(trace, "ab");
    for (int i = 0; i < 32; i++)
        cr_assert_eq(out[i], 6.0f, "b's scale ran before a's fill (out[%d] = %g)", i, out[i]);
    OK(cuMemFreeHost(out));
    OK(cuCtxDestroy(b));
    OK(cuCtxGetCurrent(&top));
    cr_assert_eq(top, a);
    OK(cuStreamDestroy(sa));
}

/* A context waited on by another's queued wait is released only after it:
 * its work drains, the wait ends, then the context goes. */
Test(schedule, destroying_a_context_another_one_waits_on, .timeout = 30)
{
    CUcontext a = fc_setup(), b, top;
    static gate g;
    CUstream sa, sb;
    CUevent e;
    OK(cuCtxCreate(&b, NULL, 0, 0)); /* b: the waited-on context, current */
    OK(cuStreamCreate(&sb, CU_STREAM_NON_BLOCKING));
    OK(cuEventCreate(&e, 0));
    OK(cuLaunchHostFunc(sb, gate_hold, &g));
    OK(cuEventRecord(e, sb));
    OK(cuCtxPopCurrent(&top));
    OK(cuStreamCreate(&sa, CU_STREAM_NON_BLOCKING));
    OK(cuStreamWaitEvent(sa, e, 0));
    OK(cuLaunchHostFunc(sa, note, "a"));
    cr_assert(wait_flag(&g.entered), "the gate never ran");
    gate_open(&g);
    OK(cuCtxDestroy(b));
    OK(cuStreamSynchronize(sa));
    cr_assert_str_eq(trace, "a");
    OK(cuCtxGetCurrent(&top));
    cr_assert_eq(top, a);
}

/* ---- faults ------------------------------------------------------------------ */

Test(schedule, a_kernel_fault_surfaces_at_the_next_sync, .timeout = 30)
{
    fc_setup();
    CUdeviceptr p;
    OK(cuMemAlloc(&p, 64));
    void *args[] = {&p};
    OK(fc_launch(fc_function("_Z5crashPf"), 1, args, false, NULL)); /* a launch only queues */
    FAILS(cuStreamSynchronize(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(cuStreamQuery(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(cuMemAlloc(&p, 64), CUDA_ERROR_ILLEGAL_ADDRESS);
}

/* Once the fault has happened, the very next call that can report it does,
 * sync point or not, as on a GPU; a callback queued behind it hears it. */
Test(schedule, a_kernel_fault_surfaces_at_the_next_call_once_it_happened, .timeout = 30)
{
    fc_setup();
    static bool heard;
    static gate g;
    CUstream s;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr p;
    OK(cuMemAlloc(&p, 64));
    CUfunction crash = fc_function("_Z5crashPf");
    void *args[] = {&p};
    OK(cuLaunchHostFunc(s, gate_hold, &g)); /* the crash cannot run before the callback is queued */
    OK(fc_launch(crash, 1, args, false, s));
    OK(cuStreamAddCallback(s, record_status, &heard, 0));
    gate_open(&g);
    cr_assert(wait_flag(&heard), "the callback behind the crash did not run within %d s", WAIT_S);
    cr_assert_eq(cb_status, CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(cuMemAlloc(&p, 64), CUDA_ERROR_ILLEGAL_ADDRESS); /* not a sync point */
    FAILS(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
}

/* ---- host functions may not call the API ----------------------------------- */

static CUresult inner;
static bool inner_done;

static void CUDA_CB calls_the_api(void *arg)
{
    (void)arg;
    inner = cuCtxSynchronize(); /* would wait for itself */
    set_flag(&inner_done);
}

Test(schedule, a_host_function_calling_the_api_is_not_permitted, .timeout = 30)
{
    fc_setup();
    OK(cuLaunchHostFunc(NULL, calls_the_api, NULL));
    cr_assert(wait_flag(&inner_done), "the host function did not finish: the worker waits for itself");
    FAILS(inner, CUDA_ERROR_NOT_PERMITTED);
    OK(cuCtxSynchronize());
}

/* ---- fork -------------------------------------------------------------------- */

/* The child has no worker thread: its first submission starts one. */
Test(schedule, a_forked_child_runs_its_work, .timeout = 30)
{
    fc_setup();
    CUdeviceptr d;
    float out[16] = {0};
    OK(cuMemAlloc(&d, sizeof out));
    CUfunction scale_fn = fc_function("scale");
    fill(d, 16, 4, NULL);
    OK(cuCtxSynchronize()); /* the parent's worker is live */
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) { /* no Criterion assertions here: the child reports by its status */
        alarm(WAIT_S);
        int n = 16;
        float two = 2;
        void *args[] = {&d, &n, &two};
        bool ok = cuLaunchHostFunc(NULL, release_waiter, NULL) == CUDA_SUCCESS && wait_flag(&released) &&
                  cuLaunchKernel(scale_fn, 1, 1, 1, 16, 1, 1, 0, NULL, args, NULL) == CUDA_SUCCESS &&
                  cuMemcpyDtoH(out, d, sizeof out) == CUDA_SUCCESS && out[0] == 8.0f;
        _exit(ok ? 0 : 1);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's work did not run (status %#x)", status);
    scale(d, 16, 3, NULL);
    OK(cuMemcpyDtoH(out, d, sizeof out));
    cr_assert_eq(out[0], 12.0f, "the parent's work");
}

/* ---- the deterministic schedule -------------------------------------------- */

/* FAKECUDA_SCHEDULE=sync: nothing runs until a sync point, and a query is
 * one (it never answers CUDA_ERROR_NOT_READY). */
Test(schedule, sync_runs_work_only_at_sync_points, .timeout = 30)
{
    fc_schedule_sync();
    fc_setup();
    OK(cuLaunchHostFunc(NULL, note, "x"));
    struct timespec t = {0, 50 * 1000 * 1000};
    nanosleep(&t, NULL);
    pthread_mutex_lock(&mu);
    int before = ntrace;
    pthread_mutex_unlock(&mu);
    cr_assert_eq(before, 0, "a host function ran before any sync point");
    OK(cuStreamQuery(NULL));
    cr_assert_str_eq(trace, "x");
}

/*
 * queue.c: the asynchronous engine, plus streams and events.
 *
 * Each context has one queue of work items in submission order, whatever
 * their stream. One order for all streams is a schedule the real driver may
 * also choose: it satisfies the legacy and per-thread default streams'
 * rules, events, cuStreamWaitEvent within the context and callbacks, and
 * treats stream priorities as the hints they are. Two schedules run it
 * (FAKECUDA_SCHEDULE, read once):
 * - async (the default): one worker thread per context, started by the
 *   first item queued, runs the items as they come; sync points wait until
 *   done_seq reaches their target, queries answer CUDA_ERROR_NOT_READY
 *   while it has not. Work completes between calls, as on a GPU: a host
 *   thread may wait on a host function, and a kernel's fault surfaces at
 *   whichever call comes next that can report it.
 * - sync: nothing runs until a sync point (stream, event or context
 *   synchronisation and queries, synchronous copies and memsets,
 *   cuMemFree), where the calling thread drains every item up to its
 *   target; every return code of a program is then predictable.
 *
 * Invariants:
 * - Items run exactly once, in seq order, under the queue's exec mutex;
 *   done_seq is the seq of the last item run (or discarded).
 * - Once the sticky fault is set, pending items are discarded, not run.
 * - An item owns what it points to (a copy's staging, a launch's heap
 *   parameters, a wait's reference to the other queue) until
 *   fc_work_discard(), which follows running or dropping it.
 * - A full queue (FC_QUEUE_CAP) waits for its oldest item to run before
 *   taking a new one, as the real driver blocks when its push buffer is full.
 * - An item refers to no stream (a callback is only handed the handle it
 *   was given); an event item records only if the event's latest record is
 *   still that item (so re-recording an event with work pending is
 *   harmless; destroying one first waits for its pending record in async
 *   mode, as its slot may be handed out again).
 * - Host functions and stream callbacks run in queue order, holding the
 *   queue's exec mutex, on the thread that drains (sync) or the worker
 *   (async): like the real driver's, they must not call the CUDA API, and
 *   on a worker every call that needs a context answers
 *   CUDA_ERROR_NOT_PERMITTED (driver.c) rather than wait for itself. After
 *   a sticky fault a stream callback still runs, and is told the error; a
 *   host function does not run.
 * - A worker lives from its context's first queued item until the context
 *   is released (fc_queue_fini joins it once its work is drained) or the
 *   process exits (fc_queue_shutdown: joined within a second, or not waited
 *   for at all when exit() interrupted an entry point, so an exit never
 *   hangs on fakecuda's locks); a forked child has no worker, so the
 *   child's next submission or wait starts one (fork_child below).
 * - A wait on another context's event (FC_W_WAIT, async only) holds an xref
 *   on that context's queue, which fc_queue_fini waits out: seqs are taken
 *   when the wait is queued, so waits only point at earlier work and can
 *   form no cycle.
 * - Stream capture (capture.c) sees every submission, event record and
 *   wait, and stream or event sync first: work for a capturing stream is
 *   recorded into its graph, or refused, and never reaches the queue.
 * - Lock order: workers_lock, then a queue's exec, then its lock; xlock is
 *   taken holding none of them.
 */
#include "fakecuda.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the schedule ---------------------------------------------------------- */

static pthread_once_t schedule_once = PTHREAD_ONCE_INIT;
static atomic_bool schedule_async = true;

static void fc_schedule_load(void)
{
    const char *env = getenv("FAKECUDA_SCHEDULE");
    if (!env || !*env || strcmp(env, "async") == 0)
        return;
    if (strcmp(env, "sync") == 0)
        atomic_store(&schedule_async, false);
    else
        fprintf(stderr, "fakecuda: FAKECUDA_SCHEDULE=%s ignored (sync or async); async used\n", env);
}

bool fc_schedule_async(void)
{
    pthread_once(&schedule_once, fc_schedule_load);
    return atomic_load_explicit(&schedule_async, memory_order_relaxed);
}

/* ---- workers ----------------------------------------------------------------- */

/* Every context with a live worker, for fork and exit; under workers_lock. */
#define FC_MAX_WORKERS 64 /* the context pool's size (handles.c) */
static pthread_mutex_t workers_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext workers[FC_MAX_WORKERS];
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Cross-context waits sleep on xcond; queues wake them while any sleep. */
static pthread_mutex_t xlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t xcond = PTHREAD_COND_INITIALIZER;
static atomic_int xsleepers;
static atomic_bool exiting; /* fc_queue_shutdown: waits end so that workers can be joined */

static _Thread_local CUcontext tls_worker_of; /* the context whose worker this thread is */

bool fc_on_worker(void)
{
    return tls_worker_of != NULL;
}

static void fc_xwake(void)
{
    if (atomic_load(&xsleepers) == 0)
        return;
    pthread_mutex_lock(&xlock);
    pthread_cond_broadcast(&xcond);
    pthread_mutex_unlock(&xlock);
}

CUresult fc_queue_init(fc_queue *q)
{
    q->ring = calloc(FC_QUEUE_CAP, sizeof *q->ring);
    if (!q->ring)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&q->lock, NULL);
    pthread_mutex_init(&q->exec, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->done, NULL);
    return CUDA_SUCCESS;
}

static void *fc_worker_main(void *arg)
{
    CUcontext ctx = arg;
    fc_queue *q = &ctx->q;
    tls_worker_of = ctx;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        while (q->count == 0 && !q->stop)
            pthread_cond_wait(&q->work, &q->lock);
        /* exiting: the boundary also where fc_queue_shutdown could not ask */
        bool stop = q->stop || atomic_load(&exiting), wait = !stop && q->ring[q->head].kind == FC_W_WAIT;
        pthread_mutex_unlock(&q->lock);
        if (stop)
            break;
        /* Only this thread takes items, so the head is still the one seen.
           A wait touches no device state: it sleeps without exec, so that
           fork_prepare, which takes every exec, never waits on a wait. */
        if (!wait)
            pthread_mutex_lock(&q->exec);
        pthread_mutex_lock(&q->lock);
        fc_work w = q->ring[q->head];
        assert(q->count > 0 && w.seq == atomic_load(&q->done_seq) + 1 && "items run exactly once, in seq order");
        q->head = (q->head + 1) % FC_QUEUE_CAP;
        q->count--;
        q->running = w.seq;
        q->waiting_on = wait ? w.u.wait.ctx : NULL;
        pthread_mutex_unlock(&q->lock);
        fc_work_run(q, &w);
        pthread_mutex_lock(&q->lock);
        q->running = 0;
        q->waiting_on = NULL;
        atomic_store(&q->done_seq, w.seq);
        pthread_cond_broadcast(&q->done);
        pthread_mutex_unlock(&q->lock);
        if (!wait)
            pthread_mutex_unlock(&q->exec);
        fc_xwake();
    }
    pthread_mutex_lock(&q->lock);
    q->exited = true; /* for fc_queue_shutdown's bounded wait */
    pthread_cond_broadcast(&q->done);
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/* fork: fork_prepare holds every worker's exec and lock, so no worker is
   inside an item (it holds device memory's lock there) but one sleeping in
   a wait. The child has no worker: it forgets them (its next submission or
   wait starts one), and counts a wait its parent's worker was in as done. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&workers_lock);
    for (int i = 0; i < FC_MAX_WORKERS; i++)
        if (workers[i]) {
            pthread_mutex_lock(&workers[i]->q.exec);
            pthread_mutex_lock(&workers[i]->q.lock);
        }
}

static void fork_parent(void)
{
    for (int i = FC_MAX_WORKERS - 1; i >= 0; i--)
        if (workers[i]) {
            pthread_mutex_unlock(&workers[i]->q.lock);
            pthread_mutex_unlock(&workers[i]->q.exec);
        }
    pthread_mutex_unlock(&workers_lock);
}

static void fork_child(void)
{
    for (int i = FC_MAX_WORKERS - 1; i >= 0; i--)
        if (workers[i]) {
            fc_queue *q = &workers[i]->q;
            if (q->running) {
                atomic_store(&q->done_seq, q->running);
                if (q->waiting_on)
                    atomic_fetch_sub(&q->waiting_on->q.xrefs, 1);
            }
            q->running = 0;
            q->waiting_on = NULL;
            q->worker_live = false;
            q->stop = false;
            q->exited = false;
            /* the condition variables may hold the parent's sleepers */
            pthread_cond_init(&q->work, NULL);
            pthread_cond_init(&q->done, NULL);
            pthread_mutex_unlock(&q->lock);
            pthread_mutex_unlock(&q->exec);
            workers[i] = NULL;
        }
    pthread_cond_init(&xcond, NULL);
    atomic_store(&xsleepers, 0);
    pthread_mutex_unlock(&workers_lock);
}

static void fc_atfork_setup(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Async mode: ctx has a worker. Called holding none of ctx's locks. */
static void fc_worker_ensure(CUcontext ctx)
{
    fc_queue *q = &ctx->q;
    pthread_mutex_lock(&q->lock);
    bool live = q->worker_live;
    pthread_mutex_unlock(&q->lock);
    if (live)
        return;
    pthread_once(&atfork_once, fc_atfork_setup);
    pthread_mutex_lock(&workers_lock);
    pthread_mutex_lock(&q->lock);
    if (!q->worker_live) {
        q->stop = false;
        q->exited = false;
        q->worker_live = pthread_create(&q->worker, NULL, fc_worker_main, ctx) == 0;
        if (!q->worker_live)
            fprintf(stderr, "fakecuda: cannot start a worker thread: work runs at sync points\n");
    }
    for (int i = 0; q->worker_live && i < FC_MAX_WORKERS; i++)
        if (!workers[i]) {
            workers[i] = ctx;
            break;
        }
    pthread_mutex_unlock(&q->lock);
    pthread_mutex_unlock(&workers_lock);
}

/* Asks ctx's worker to stop and joins it; true if there was one. Under workers_lock. */
static bool fc_worker_stop_locked(CUcontext ctx)
{
    fc_queue *q = &ctx->q;
    pthread_mutex_lock(&q->lock);
    bool live = q->worker_live;
    q->stop = true;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->lock);
    if (!live)
        return false;
    pthread_join(q->worker, NULL);
    pthread_mutex_lock(&q->lock);
    q->worker_live = false;
    pthread_mutex_unlock(&q->lock);
    for (int i = 0; i < FC_MAX_WORKERS; i++)
        if (workers[i] == ctx)
            workers[i] = NULL;
    return true;
}

void fc_queue_fini(CUcontext ctx)
{
    fc_queue *q = &ctx->q;
    pthread_mutex_lock(&workers_lock);
    fc_worker_stop_locked(ctx);
    pthread_mutex_unlock(&workers_lock);
    /* Other contexts' workers waiting on this queue: all its work ran. */
    atomic_fetch_add(&xsleepers, 1);
    pthread_mutex_lock(&xlock);
    while (atomic_load(&q->xrefs) > 0) {
        pthread_cond_broadcast(&xcond);
        pthread_cond_wait(&xcond, &xlock);
    }
    pthread_mutex_unlock(&xlock);
    atomic_fetch_sub(&xsleepers, 1);
    pthread_mutex_destroy(&q->lock);
    pthread_mutex_destroy(&q->exec);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->done);
    free(q->ring);
}

/* A worker inside a host function that never returns would hold the exit
   forever: each gets a second to reach its item boundary, then is left.
   An exit() from a signal handler that interrupted an entry point may hold
   any lock here, or sleep inside a wait on q->done, whose broadcast by the
   worker then never returns (glibc's condition variable waits for the woken
   to leave): waiting for anything there could last forever, so nothing is
   waited for; each worker stops at its next item boundary (exiting) or ends
   with the process. */
void fc_queue_shutdown(bool inside_a_call)
{
    atomic_store(&exiting, true);
    if (inside_a_call)
        return;
    pthread_mutex_lock(&xlock);
    pthread_cond_broadcast(&xcond);
    pthread_mutex_unlock(&xlock);
    pthread_mutex_lock(&workers_lock);
    for (int i = 0; i < FC_MAX_WORKERS; i++) {
        CUcontext ctx = workers[i];
        if (!ctx || (tls_worker_of && pthread_equal(ctx->q.worker, pthread_self())))
            continue; /* exit() from a host function: its worker cannot join itself */
        fc_queue *q = &ctx->q;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_mutex_lock(&q->lock);
        q->stop = true;
        pthread_cond_signal(&q->work);
        int rc = 0;
        while (!q->exited && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&q->done, &q->lock, &until);
        bool exited = q->exited;
        if (exited)
            q->worker_live = false;
        pthread_mutex_unlock(&q->lock);
        if (exited)
            pthread_join(q->worker, NULL);
        else
            pthread_detach(q->worker);
        workers[i] = NULL;
    }
    pthread_mutex_unlock(&workers_lock);
}

bool fc_is_default_stream(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

/* The context a stream's work goes to; *st is NULL for a default stream. */
CUresult fc_resolve_stream(CUstream s, CUcontext *ctx, CUstream *st)
{
    CUresult r = fc_current(ctx);
    if (r != CUDA_SUCCESS)
        return r;
    *st = NULL;
    if (fc_is_default_stream(s))
        return CUDA_SUCCESS;
    if (!fc_obj_valid(s, FC_K_STREAM))
        return CUDA_ERROR_INVALID_HANDLE;
    *st = s;
    *ctx = s->hdr.ctx;
    return CUDA_SUCCESS;
}

void fc_work_discard(fc_work *w)
{
    if (w->kind == FC_W_COPY)
        free(w->u.copy.staging);
    else if (w->kind == FC_W_KERNEL)
        free(w->u.kernel.heap);
    else if (w->kind == FC_W_WAIT && w->u.wait.ctx) {
        pthread_mutex_lock(&xlock);
        atomic_fetch_sub(&w->u.wait.ctx->q.xrefs, 1);
        pthread_cond_broadcast(&xcond);
        pthread_mutex_unlock(&xlock);
        w->u.wait.ctx = NULL;
    } else if (w->kind == FC_W_COND)
        fc_cond_discard(&w->u.cond);
}

/* A copy of a template item (a graph node's) that owns its own parameters.
   Templates hold no staging, so a copy item shares nothing. */
CUresult fc_work_clone(fc_work *dst, const fc_work *src)
{
    *dst = *src;
    if (src->kind == FC_W_COND)
        return fc_cond_clone(&dst->u.cond, &src->u.cond);
    if (src->kind != FC_W_KERNEL || !src->u.kernel.heap)
        return CUDA_SUCCESS;
    if (!(dst->u.kernel.heap = malloc(src->u.kernel.nbytes)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(dst->u.kernel.heap, src->u.kernel.heap, src->u.kernel.nbytes);
    return CUDA_SUCCESS;
}

static uint64_t fc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1;
}

static CUresult fc_run_memory_work(fc_work *w)
{
    fc_mem_rdlock();
    CUresult r = w->kind == FC_W_KERNEL ? fc_kernel_run(&w->u.kernel)
                 : w->kind == FC_W_COPY ? fc_run_copy(&w->u.copy)
                                        : fc_run_fill(&w->u.fill);
    fc_mem_unlock();
    return r;
}

/* Under the queue lock, so it cannot interleave with a new record of the event. */
static void fc_run_event(fc_queue *q, const fc_work *w)
{
    pthread_mutex_lock(&q->lock);
    if (atomic_load(&w->u.event.e->seq) == w->seq)
        atomic_store(&w->u.event.e->done_ns, fc_now_ns());
    pthread_mutex_unlock(&q->lock);
}

/* The other context cannot go (its release waits for our xref), and all
   it must reach was queued before this wait. */
static void fc_run_wait(const fc_work *w)
{
    fc_queue *other = &w->u.wait.ctx->q;
    if (atomic_load(&other->done_seq) >= w->u.wait.seq)
        return;
    fc_worker_ensure(w->u.wait.ctx);
    atomic_fetch_add(&xsleepers, 1);
    pthread_mutex_lock(&xlock);
    while (atomic_load(&other->done_seq) < w->u.wait.seq && fc_sticky() == CUDA_SUCCESS && !atomic_load(&exiting))
        pthread_cond_wait(&xcond, &xlock);
    pthread_mutex_unlock(&xlock);
    atomic_fetch_sub(&xsleepers, 1);
}

static void fc_run_host(const fc_host_call *h, CUresult status)
{
    if (h->callback)
        h->callback(h->stream, status, h->user);
    else if (status == CUDA_SUCCESS)
        h->fn(h->user);
}

void fc_work_run(fc_queue *q, fc_work *w)
{
    CUresult r = CUDA_SUCCESS;
    if (fc_sticky() != CUDA_SUCCESS) {
        if (w->kind == FC_W_HOST)
            fc_run_host(&w->u.host, fc_sticky());
        fc_work_discard(w);
        return;
    }
    switch (w->kind) {
    case FC_W_KERNEL:
    case FC_W_COPY:
    case FC_W_FILL: r = w->fault ? CUDA_ERROR_ILLEGAL_ADDRESS : fc_run_memory_work(w); break;
    case FC_W_EVENT: fc_run_event(q, w); break;
    case FC_W_FREE: r = fc_mem_free_now(w->u.free) == CUDA_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_ADDRESS; break;
    case FC_W_FAULT: r = CUDA_ERROR_ILLEGAL_ADDRESS; break;
    case FC_W_HOST: fc_run_host(&w->u.host, CUDA_SUCCESS); break;
    case FC_W_WAIT: fc_run_wait(w); break;
    case FC_W_COND: r = fc_cond_run(q, &w->u.cond); break;
    }
    if (w->fault)
        r = CUDA_ERROR_ILLEGAL_ADDRESS;
    if (r != CUDA_SUCCESS) {
        fc_set_sticky(r);
        fc_xwake(); /* waits on other contexts end: their work is discarded now */
    }
    fc_work_discard(w);
}

/* Sync mode: the calling thread runs every item up to target. */
static CUresult fc_drain_here(CUcontext ctx, uint64_t target)
{
    fc_queue *q = &ctx->q;
    pthread_mutex_lock(&q->exec);
    while (atomic_load(&q->done_seq) < target) {
        pthread_mutex_lock(&q->lock);
        fc_work w = q->ring[q->head];
        assert(q->count > 0 && w.seq == atomic_load(&q->done_seq) + 1 && "items run exactly once, in seq order");
        q->head = (q->head + 1) % FC_QUEUE_CAP;
        q->count--;
        pthread_mutex_unlock(&q->lock);
        fc_work_run(q, &w);
        atomic_store(&q->done_seq, w.seq);
    }
    pthread_mutex_unlock(&q->exec);
    return fc_sticky();
}

/* Async mode: waits for the worker. Under q->lock; returns with it held. */
static void fc_wait_done_locked(fc_queue *q, uint64_t target)
{
    while (atomic_load(&q->done_seq) < target)
        pthread_cond_wait(&q->done, &q->lock);
}

CUresult fc_drain(CUcontext ctx, uint64_t target)
{
    fc_queue *q = &ctx->q;
    if (atomic_load(&q->done_seq) >= target)
        return fc_sticky();
    if (!fc_schedule_async())
        return fc_drain_here(ctx, target);
    if (tls_worker_of == ctx)
        return CUDA_ERROR_NOT_PERMITTED; /* a host function waiting for itself */
    fc_worker_ensure(ctx);
    pthread_mutex_lock(&q->lock);
    fc_wait_done_locked(q, target);
    pthread_mutex_unlock(&q->lock);
    return fc_sticky();
}

static uint64_t fc_tail(CUcontext ctx, CUstream st)
{
    pthread_mutex_lock(&ctx->q.lock);
    uint64_t t = st ? st->last_seq : ctx->q.next_seq;
    pthread_mutex_unlock(&ctx->q.lock);
    return t;
}

CUresult fc_drain_all(CUcontext ctx)
{
    return fc_drain(ctx, fc_tail(ctx, NULL));
}

static uint64_t fc_enqueue(CUcontext ctx, CUstream st, fc_work *w)
{
    fc_queue *q = &ctx->q;
    bool async = fc_schedule_async();
    if (fc_fault_pending_take())
        w->fault = true;
    if (async)
        fc_worker_ensure(ctx);
    pthread_mutex_lock(&q->lock);
    while (q->count == FC_QUEUE_CAP) {
        uint64_t oldest = q->ring[q->head].seq;
        if (async) {
            fc_wait_done_locked(q, oldest);
            continue;
        }
        pthread_mutex_unlock(&q->lock);
        fc_drain(ctx, oldest);
        pthread_mutex_lock(&q->lock);
    }
    assert(q->count < FC_QUEUE_CAP && "a full queue waits for its oldest item before taking one");
    w->seq = ++q->next_seq;
    q->ring[(q->head + q->count) % FC_QUEUE_CAP] = *w;
    q->count++;
    if (st)
        st->last_seq = w->seq;
    if (w->kind == FC_W_EVENT) {
        atomic_store(&w->u.event.e->seq, w->seq);
        atomic_store(&w->u.event.e->done_ns, 0);
    }
    if (async)
        pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->lock);
    return w->seq;
}

/* Queue w on stream s (as the call named it, already resolved to ctx); a
   synchronous submission returns when it (and all before it) ran. Takes w:
   it is queued or discarded. A stream-ordered copy from pageable host
   memory takes its snapshot here, as it is queued. */
CUresult fc_submit(CUcontext ctx, CUstream s, fc_work *w, bool sync)
{
    CUresult cr;
    if (fc_capture_take(ctx, s, w, sync, &cr))
        return cr; /* recorded into a graph, or refused */
    if (!sync && w->kind == FC_W_COPY && !w->u.copy.src.device && !fc_copy_src_pinned(&w->u.copy)) {
        CUresult r = fc_copy_stage(&w->u.copy);
        if (r != CUDA_SUCCESS) {
            fc_work_discard(w);
            return r;
        }
    }
    uint64_t seq = fc_enqueue(ctx, fc_is_default_stream(s) ? NULL : s, w);
    return sync ? fc_drain(ctx, seq) : CUDA_SUCCESS;
}

CUresult fc_submit_async(CUstream s, fc_work *w)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r != CUDA_SUCCESS) {
        fc_work_discard(w);
        return r;
    }
    return fc_submit(ctx, s, w, false);
}

/* ---- streams ------------------------------------------------------------- */

CUresult fc_stream_create(CUstream *ps, unsigned flags, int priority)
{
    CUcontext ctx;
    if (!ps || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    CUstream s = fc_obj_new(FC_P_STREAM, FC_K_STREAM, ctx);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->flags = flags;
    s->priority = fc_priority_clamp(priority);
    *ps = s;
    return CUDA_SUCCESS;
}

/* The range a Hopper reports: 0 (least, the default) down to -5 (greatest).
   One queue runs every stream in submission order, so a priority is kept and
   answered, and changes no schedule: a legal one, as priorities are hints. */
#define FC_PRIORITY_LEAST 0
#define FC_PRIORITY_GREATEST (-5)

int fc_priority_clamp(int priority)
{
    if (priority > FC_PRIORITY_LEAST)
        return FC_PRIORITY_LEAST;
    return priority < FC_PRIORITY_GREATEST ? FC_PRIORITY_GREATEST : priority;
}

CUresult fc_ctx_priority_range(int *least, int *greatest)
{
    CUcontext ctx;
    CUresult r = fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    if (least)
        *least = FC_PRIORITY_LEAST;
    if (greatest)
        *greatest = FC_PRIORITY_GREATEST;
    return CUDA_SUCCESS;
}

/* The default streams have the least priority and no flags but their own. */
CUresult fc_stream_get(CUstream s, int *priority, unsigned *flags)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r != CUDA_SUCCESS)
        return r;
    if (priority)
        *priority = st ? st->priority : FC_PRIORITY_LEAST;
    if (flags)
        *flags = st ? st->flags : 0;
    return CUDA_SUCCESS;
}

CUresult fc_stream_destroy(CUstream s)
{
    if (!fc_obj_valid(s, FC_K_STREAM))
        return CUDA_ERROR_INVALID_HANDLE;
    fc_capture_stream_gone(s);
    fc_obj_free(s);
    return CUDA_SUCCESS;
}

CUresult fc_stream_sync(CUstream s)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r == CUDA_SUCCESS)
        r = fc_capture_refuse(ctx, s);
    return r == CUDA_SUCCESS ? fc_drain(ctx, fc_tail(ctx, st)) : r;
}

/* Whether ctx's queue reached target: sync mode runs the work (so a query
   never answers CUDA_ERROR_NOT_READY there), async mode only looks. */
static CUresult fc_query(CUcontext ctx, uint64_t target)
{
    if (!fc_schedule_async() || atomic_load(&ctx->q.done_seq) >= target)
        return fc_drain(ctx, target);
    fc_worker_ensure(ctx); /* a forked child's first look starts the work */
    return CUDA_ERROR_NOT_READY;
}

/* A default stream's query covers all of the context's work: in one order
   that is everything the stream may be waiting for. */
CUresult fc_stream_query(CUstream s)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r == CUDA_SUCCESS)
        r = fc_capture_refuse(ctx, s);
    return r == CUDA_SUCCESS ? fc_query(ctx, fc_tail(ctx, st)) : r;
}

CUresult fc_stream_wait_event(CUstream s, CUevent e, unsigned flags)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r != CUDA_SUCCESS)
        return r;
    if (!fc_obj_valid(e, FC_K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    r = fc_capture_event_wait(ctx, s, e, flags);
    if (r != CUDA_SUCCESS || fc_capturing(s))
        return r;
    /* Within a context the one order already waits. Sync mode runs no
       other context's work at a sync point, so there it does not wait. */
    CUcontext other = e->hdr.ctx;
    uint64_t seq = atomic_load(&e->seq);
    if (!fc_schedule_async() || other == ctx || seq == 0 || atomic_load(&other->q.done_seq) >= seq)
        return CUDA_SUCCESS;
    atomic_fetch_add(&other->q.xrefs, 1);
    fc_work w = {.kind = FC_W_WAIT, .u.wait = {.ctx = other, .seq = seq}};
    fc_enqueue(ctx, st, &w);
    return CUDA_SUCCESS;
}

/* ---- events -------------------------------------------------------------- */

#define FC_EVENT_FLAGS (CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)

CUresult fc_event_create(CUevent *pe, unsigned flags)
{
    CUcontext ctx;
    if (!pe || (flags & ~(unsigned)FC_EVENT_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    CUevent e = fc_obj_new(FC_P_EVENT, FC_K_EVENT, ctx);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->flags = flags;
    *pe = e;
    return CUDA_SUCCESS;
}

CUresult fc_event_record(CUevent e, CUstream s)
{
    CUcontext ctx;
    CUstream st;
    if (!fc_obj_valid(e, FC_K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r != CUDA_SUCCESS || fc_capture_event_record(ctx, s, e, &r))
        return r;
    /* An event's completion is a point in its own context's queue. */
    if (ctx != e->hdr.ctx)
        return CUDA_ERROR_INVALID_HANDLE;
    fc_work w = {.kind = FC_W_EVENT, .u.event.e = e};
    fc_enqueue(ctx, st, &w);
    return CUDA_SUCCESS;
}

/*
 * Runtime 13.2's cudaEventRecord (PyTorch's every record) calls this with
 * flags 0: cuEventRecord. CU_EVENT_RECORD_EXTERNAL asks for an event record
 * node in a capture (invalid outside one), which fakecuda does not make.
 */
CUresult fc_event_record_with_flags(CUevent e, CUstream s, unsigned int flags)
{
    if (flags == CU_EVENT_RECORD_DEFAULT)
        return fc_event_record(e, s);
    return flags == CU_EVENT_RECORD_EXTERNAL ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
}

/* An event never recorded is complete. */
CUresult fc_event_sync(CUevent e)
{
    if (!fc_obj_valid(e, FC_K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = fc_capture_event_check(e);
    return r == CUDA_SUCCESS ? fc_drain(e->hdr.ctx, atomic_load(&e->seq)) : r;
}

CUresult fc_event_query(CUevent e)
{
    if (!fc_obj_valid(e, FC_K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = fc_capture_event_check(e);
    return r == CUDA_SUCCESS ? fc_query(e->hdr.ctx, atomic_load(&e->seq)) : r;
}

CUresult fc_event_destroy(CUevent e)
{
    if (!fc_obj_valid(e, FC_K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    /* The driver lets the record complete after the call; here its item
       reads the slot, which a new event may take (and zero) at once. */
    if (fc_schedule_async())
        fc_drain(e->hdr.ctx, atomic_load(&e->seq));
    fc_capture_event_gone(e);
    fc_obj_free(e);
    return CUDA_SUCCESS;
}

CUresult fc_event_elapsed(float *ms, CUevent a, CUevent b)
{
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_obj_valid(a, FC_K_EVENT) || !fc_obj_valid(b, FC_K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = fc_capture_event_check(a);
    if (r != CUDA_SUCCESS || (r = fc_capture_event_check(b)) != CUDA_SUCCESS)
        return r;
    if (atomic_load(&a->seq) == 0 || atomic_load(&b->seq) == 0)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t ta = atomic_load(&a->done_ns), tb = atomic_load(&b->done_ns);
    if (ta == 0 || tb == 0)
        return CUDA_ERROR_NOT_READY;
    *ms = (float)((double)((int64_t)(tb - ta)) / 1e6);
    return CUDA_SUCCESS;
}

CUresult fc_launch_host_func(CUstream s, CUhostFn fn, void *user)
{
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    fc_work w = {.kind = FC_W_HOST, .u.host = {.fn = fn, .user = user}};
    return fc_submit_async(s, &w);
}

CUresult fc_stream_add_callback(CUstream s, CUstreamCallback cb, void *user, unsigned flags)
{
    if (!cb || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    fc_work w = {.kind = FC_W_HOST, .u.host = {.callback = cb, .stream = s, .user = user}};
    return fc_submit_async(s, &w);
}

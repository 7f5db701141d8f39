/*
 * queue.c: the asynchronous engine, plus streams and events.
 *
 * Each context has one queue of work items in submission order, whatever
 * their stream. Work runs only at sync points (stream, event or context
 * synchronisation and queries, synchronous copies and memsets, cuMemFree),
 * on the calling thread: draining to a target runs every item up to it.
 * One order for all streams is a schedule the real driver may also choose,
 * and it satisfies the legacy default stream's ordering rules; it makes a
 * kernel's fault surface at the next sync point, never at its launch.
 *
 * Invariants:
 * - Items run exactly once, in seq order, under the queue's exec mutex;
 *   done_seq is the seq of the last item run (or discarded).
 * - Once the sticky fault is set, pending items are discarded, not run.
 * - An item owns what it points to (a copy's staging, a launch's heap
 *   parameters) until fc_work_discard(), which follows running or dropping it.
 * - A full queue (FC_QUEUE_CAP) drains its oldest item before taking a new
 *   one, as the real driver blocks when its push buffer is full.
 * - An item refers to no stream (a callback is only handed the handle it
 *   was given); an event item records only if the event's latest record is
 *   still that item (so destroying or re-recording an event with work
 *   pending is harmless).
 * - Host functions and stream callbacks run in queue order on the thread
 *   that drains, holding the queue's exec mutex: like the real driver's,
 *   they must not call the CUDA API. After a sticky fault a stream callback
 *   still runs, and is told the error; a host function does not run.
 * - Stream capture (capture.c) sees every submission, event record and
 *   wait, and stream or event sync first: work for a capturing stream is
 *   recorded into its graph, or refused, and never reaches the queue.
 */
#include "fakecuda.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

CUresult fc_queue_init(fc_queue *q)
{
    q->ring = calloc(FC_QUEUE_CAP, sizeof *q->ring);
    if (!q->ring)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&q->lock, NULL);
    pthread_mutex_init(&q->exec, NULL);
    return CUDA_SUCCESS;
}

void fc_queue_fini(fc_queue *q)
{
    pthread_mutex_destroy(&q->lock);
    pthread_mutex_destroy(&q->exec);
    free(q->ring);
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
}

/* A copy of a template item (a graph node's) that owns its own parameters.
   Templates hold no staging, so a copy item shares nothing. */
CUresult fc_work_clone(fc_work *dst, const fc_work *src)
{
    *dst = *src;
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
               : w->kind == FC_W_COPY   ? fc_run_copy(&w->u.copy)
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

static void fc_run_host(const fc_host_call *h, CUresult status)
{
    if (h->callback)
        h->callback(h->stream, status, h->user);
    else if (status == CUDA_SUCCESS)
        h->fn(h->user);
}

static void fc_run(fc_queue *q, fc_work *w)
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
    case FC_W_FILL:
        r = w->fault ? CUDA_ERROR_ILLEGAL_ADDRESS : fc_run_memory_work(w);
        break;
    case FC_W_EVENT:
        fc_run_event(q, w);
        break;
    case FC_W_FREE:
        r = fc_mem_free_now(w->u.free) == CUDA_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_ADDRESS;
        break;
    case FC_W_FAULT:
        r = CUDA_ERROR_ILLEGAL_ADDRESS;
        break;
    case FC_W_HOST:
        fc_run_host(&w->u.host, CUDA_SUCCESS);
        break;
    }
    if (w->fault)
        r = CUDA_ERROR_ILLEGAL_ADDRESS;
    if (r != CUDA_SUCCESS)
        fc_set_sticky(r);
    fc_work_discard(w);
}

CUresult fc_drain(CUcontext ctx, uint64_t target)
{
    fc_queue *q = &ctx->q;
    if (atomic_load(&q->done_seq) >= target)
        return fc_sticky();
    pthread_mutex_lock(&q->exec);
    while (atomic_load(&q->done_seq) < target) {
        pthread_mutex_lock(&q->lock);
        fc_work w = q->ring[q->head];
        q->head = (q->head + 1) % FC_QUEUE_CAP;
        q->count--;
        pthread_mutex_unlock(&q->lock);
        fc_run(q, &w);
        atomic_store(&q->done_seq, w.seq);
    }
    pthread_mutex_unlock(&q->exec);
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
    if (fc_fault_pending_take())
        w->fault = true;
    pthread_mutex_lock(&q->lock);
    while (q->count == FC_QUEUE_CAP) {
        uint64_t oldest = q->ring[q->head].seq;
        pthread_mutex_unlock(&q->lock);
        fc_drain(ctx, oldest);
        pthread_mutex_lock(&q->lock);
    }
    w->seq = ++q->next_seq;
    q->ring[(q->head + q->count) % FC_QUEUE_CAP] = *w;
    q->count++;
    if (st)
        st->last_seq = w->seq;
    if (w->kind == FC_W_EVENT) {
        atomic_store(&w->u.event.e->seq, w->seq);
        atomic_store(&w->u.event.e->done_ns, 0);
    }
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
    s->priority = priority;
    *ps = s;
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

/* Synchronize and Query: a query that ran the work reports it complete. */
CUresult fc_stream_sync(CUstream s)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r == CUDA_SUCCESS)
        r = fc_capture_refuse(ctx, s);
    return r == CUDA_SUCCESS ? fc_drain(ctx, fc_tail(ctx, st)) : r;
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
    return fc_capture_event_wait(ctx, s, e, flags);
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

/* Synchronize and Query; an event never recorded is complete. */
CUresult fc_event_sync(CUevent e)
{
    if (!fc_obj_valid(e, FC_K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = fc_capture_event_check(e);
    return r == CUDA_SUCCESS ? fc_drain(e->hdr.ctx, atomic_load(&e->seq)) : r;
}

CUresult fc_event_destroy(CUevent e)
{
    if (!fc_obj_valid(e, FC_K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
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

/*
 * capture.c: stream capture. While a stream captures, the work submitted
 * to it is recorded as nodes of a graph instead of being queued, as on the
 * real driver, and the operations that would break the capture are refused.
 *
 * A capture sequence begins on one stream (cuStreamBeginCapture, into a new
 * graph, or cuStreamBeginCaptureToGraph, into an existing one); other
 * streams join it by waiting on an event recorded in it (a fork), and each
 * stream in it keeps the set of nodes its next captured work depends on. A
 * captured launch, copy, memset or host function becomes a node after its
 * stream's set, and the set becomes that node, so in-stream order becomes
 * edges. cuStreamEndCapture on the origin stream returns the graph, unless
 * the sequence was invalidated or a joined stream's work was never joined
 * back into the origin stream (CUDA_ERROR_STREAM_CAPTURE_UNJOINED).
 *
 * What is refused, after the real driver's rules (the error invalidates
 * the sequence concerned unless said otherwise):
 * - synchronising or querying a capturing stream, a synchronous call on
 *   one, stream-ordered work no node here stands for (stream callbacks,
 *   stream-ordered allocation and free), waiting on an external event:
 *   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; cuCtxSynchronize while any
 *   stream of the context captures: the same, for every such sequence;
 * - the legacy stream (work, synchronous calls, syncs, event records and
 *   waits) while a blocking stream of the context captures:
 *   CUDA_ERROR_STREAM_CAPTURE_IMPLICIT (cuStreamIsCapturing and
 *   cuStreamGetCaptureInfo answer it without invalidating anything);
 * - waiting on an event recorded outside the sequence:
 *   CUDA_ERROR_STREAM_CAPTURE_ISOLATION; in another one:
 *   CUDA_ERROR_STREAM_CAPTURE_MERGE (both invalidated);
 * - synchronising, querying or timing an event last recorded in a live
 *   sequence: CUDA_ERROR_CAPTURED_EVENT;
 * - potentially unsafe calls (cuMemAlloc and its kin, cuMemFree,
 *   cuMemAllocHost, cuMemHostAlloc, cuMemFreeHost) from a thread the capture
 *   modes prohibit: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, invalidating the
 *   sequences that prohibit it.
 * Once invalidated, a sequence's streams answer
 * CUDA_ERROR_STREAM_CAPTURE_INVALIDATED to work until the capture is ended.
 *
 * Invariants:
 * - All capture state (sequences, the streams' parts, events' capture
 *   records) changes under one lock; nlive counts live sequences, so the
 *   common case, no capture anywhere, costs one atomic load.
 * - A stream is in at most one sequence; a sequence's members are exactly
 *   the streams whose part points to it, the origin first; ending it resets
 *   them all.
 * - A sequence's graph is marked capturing until the end, so it is not
 *   destroyed, instantiated or pruned meanwhile; a dependency set holds
 *   distinct nodes of that graph.
 * - An event counts as captured while the sequence it was last recorded in
 *   is live, matched by id, never by pointer (sequences are freed at the end).
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct fc_capture {
    uint64_t id;
    CUgraph graph;
    bool owns_graph; /* made by cuStreamBeginCapture: destroyed if the capture fails */
    CUcontext ctx;
    CUstreamCaptureMode mode;
    pthread_t thread; /* that began it */
    bool invalidated;
    unsigned blocking;      /* members the legacy stream would wait for */
    fc_stream_cap **member; /* member[0] is the origin */
    size_t nmember, cap;
    fc_capture *next; /* in the list of live sequences */
};

static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static fc_capture *live;
static _Atomic unsigned nlive;
static uint64_t last_id;
static _Thread_local CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static _Thread_local fc_stream_cap per_thread_stream;

static bool fc_none_live(void)
{
    return atomic_load_explicit(&nlive, memory_order_acquire) == 0;
}

/* The capture part of stream s (validated): NULL for the legacy stream, which never captures. */
static fc_stream_cap *fc_part(CUstream s)
{
    if (!fc_is_default_stream(s))
        return &s->cap;
    return fc_is_legacy_stream(s) ? NULL : &per_thread_stream;
}

/* The per-thread default stream synchronises with the legacy stream, as a blocking stream does. */
static bool fc_blocking(CUstream s)
{
    return fc_is_default_stream(s) || !(s->flags & CU_STREAM_NON_BLOCKING);
}

static fc_capture *fc_find_locked(uint64_t id)
{
    for (fc_capture *c = live; id && c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

static bool fc_blocking_capture_locked(CUcontext ctx)
{
    for (fc_capture *c = live; c; c = c->next)
        if (c->ctx == ctx && c->blocking > 0)
            return true;
    return false;
}

/* Refuses an operation with r, breaking the sequence it concerns. */
static CUresult fc_break_locked(fc_capture *c, CUresult r)
{
    c->invalidated = true;
    return r;
}

/* The legacy stream used while blocking streams of ctx capture: their sequences break. */
static CUresult fc_implicit_locked(CUcontext ctx)
{
    for (fc_capture *c = live; c; c = c->next)
        if (c->ctx == ctx && c->blocking > 0)
            c->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
}

/* Adds n to a dependency set unless it is there. */
static bool fc_deps_add(fc_nodes *deps, CUgraphNode n)
{
    return fc_nodes_has(deps, n) || fc_nodes_add(deps, n);
}

/* ---- members ------------------------------------------------------------------- */

static bool fc_add_member_locked(fc_capture *c, fc_stream_cap *p, bool blocking)
{
    if (c->nmember == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4;
        fc_stream_cap **v = realloc(c->member, cap * sizeof *v);
        if (!v)
            return false;
        c->member = v;
        c->cap = cap;
    }
    assert(!p->seq && "a stream is in at most one sequence");
    c->member[c->nmember++] = p;
    c->blocking += blocking;
    p->seq = c;
    return true;
}

static void fc_part_reset(fc_stream_cap *p)
{
    p->seq = NULL;
    fc_nodes_free(&p->deps);
}

static void fc_remove_member_locked(fc_capture *c, fc_stream_cap *p, bool blocking)
{
    for (size_t i = 1; i < c->nmember; i++)
        if (c->member[i] == p) {
            memmove(&c->member[i], &c->member[i + 1], (c->nmember - i - 1) * sizeof *c->member);
            c->nmember--;
            c->blocking -= blocking;
            break;
        }
    fc_part_reset(p);
}

/* Unlinks c, resets every member and frees it. */
static void fc_drop_locked(fc_capture *c)
{
    for (size_t i = 0; i < c->nmember; i++) {
        assert(c->member[i]->seq == c && "a sequence's members are the streams whose part points to it");
        fc_part_reset(c->member[i]);
    }
    for (fc_capture **pp = &live; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    unsigned was_live = atomic_fetch_sub(&nlive, 1);
    assert(was_live > 0 && "nlive counts the live sequences, c among them");
    (void)was_live;
    free(c->member);
    free(c);
}

/* Marks the nodes of l and their ancestors in seen (by index), each pushed once. */
static void fc_mark_ancestors(const fc_nodes *l, unsigned char *seen, CUgraphNode *stack)
{
    size_t top = 0;
    for (size_t i = 0; i < l->n; i++)
        if (!seen[l->v[i]->index]) {
            seen[l->v[i]->index] = 1;
            stack[top++] = l->v[i];
        }
    while (top > 0) {
        const fc_nodes *deps = &stack[--top]->deps;
        for (size_t j = 0; j < deps->n; j++)
            if (!seen[deps->v[j]->index]) {
                seen[deps->v[j]->index] = 1;
                stack[top++] = deps->v[j];
            }
    }
}

/* Whether some joined stream's last work is not an ancestor of the origin's next. */
static bool fc_unjoined(const fc_capture *c)
{
    CUgraph g = c->graph;
    size_t n = g->nodes.n;
    if (c->nmember < 2)
        return false;
    unsigned char *seen = calloc(n ? n : 1, 1);
    CUgraphNode *stack = malloc((n ? n : 1) * sizeof *stack);
    bool unjoined = false;
    if (seen && stack) {
        for (size_t i = 0; i < n; i++)
            g->nodes.v[i]->index = i;
        fc_mark_ancestors(&c->member[0]->deps, seen, stack);
        for (size_t m = 1; m < c->nmember; m++)
            for (size_t j = 0; j < c->member[m]->deps.n; j++)
                unjoined |= !seen[c->member[m]->deps.v[j]->index];
    }
    free(seen);
    free(stack);
    return unjoined;
}

/* Ends c: *out (where given) is its graph unless it was invalidated or left a fork unjoined. */
static CUresult fc_finish_locked(fc_capture *c, CUgraph *out)
{
    CUresult r = c->invalidated   ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                 : fc_unjoined(c) ? CUDA_ERROR_STREAM_CAPTURE_UNJOINED
                                  : CUDA_SUCCESS;
    CUgraph g = c->graph;
    assert(g->capturing && "a sequence's graph is marked capturing until the end");
    g->capturing = false;
    if (out)
        *out = r == CUDA_SUCCESS ? g : NULL;
    if (r != CUDA_SUCCESS && c->owns_graph)
        fc_graph_destroy(g);
    fc_drop_locked(c);
    return r;
}

/* ---- beginning and ending ----------------------------------------------------------- */

static CUresult fc_check_target(CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n)
{
    if (!g)
        return n ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (!fc_obj_valid(g, FC_K_GRAPH) || g->capturing)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_edges_default(edges, n))
        return CUDA_ERROR_NOT_SUPPORTED;
    return fc_graph_check_deps(g, deps, n);
}

/* Under the lock: s's part starts sequence c (already filled in) after deps. */
static CUresult fc_start_locked(fc_capture *c, fc_stream_cap *p, CUstream s, const CUgraphNode *deps, size_t n)
{
    if (p->seq)
        return CUDA_ERROR_ILLEGAL_STATE; /* already capturing */
    if (!fc_nodes_set(&p->deps, deps, n) || !fc_add_member_locked(c, p, fc_blocking(s)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->id = ++last_id;
    c->graph->capturing = true;
    c->next = live;
    live = c;
    atomic_fetch_add(&nlive, 1);
    return CUDA_SUCCESS;
}

CUresult fc_capture_begin_to(CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,
                             CUstreamCaptureMode mode)
{
    CUcontext ctx;
    CUstream st;
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r != CUDA_SUCCESS)
        return r;
    fc_stream_cap *p = fc_part(s);
    if (!p)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
    if ((r = fc_check_target(g, deps, edges, n)) != CUDA_SUCCESS)
        return r;
    fc_capture *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *c = (fc_capture){.graph = g, .owns_graph = !g, .ctx = ctx, .mode = mode, .thread = pthread_self()};
    if (!g && (r = fc_graph_create(&c->graph, 0)) != CUDA_SUCCESS) {
        free(c);
        return r;
    }
    pthread_mutex_lock(&cap_lock);
    r = fc_start_locked(c, p, s, deps, n);
    pthread_mutex_unlock(&cap_lock);
    if (r != CUDA_SUCCESS) {
        if (c->owns_graph)
            fc_graph_destroy(c->graph);
        free(c->member);
        free(c);
    }
    return r;
}

CUresult fc_capture_begin(CUstream s, CUstreamCaptureMode mode)
{
    return fc_capture_begin_to(s, NULL, NULL, NULL, 0, mode);
}

/* Resolve s and take the capture lock: *p is its part (NULL for the legacy
 * stream), *c the sequence it belongs to (NULL if none). On failure nothing
 * is held. */
static CUresult fc_lock_part(CUstream s, CUcontext *ctx, fc_stream_cap **p, fc_capture **c)
{
    CUstream st;
    CUresult r = fc_resolve_stream(s, ctx, &st);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&cap_lock);
    *p = fc_part(s);
    *c = *p ? (*p)->seq : NULL;
    return CUDA_SUCCESS;
}

/* A capture into the caller's graph (cuStreamBeginCaptureToGraph) may end
   without asking for it back: graphConditionalNodes fills a conditional
   body so, passing NULL. */
CUresult fc_capture_end(CUstream s, CUgraph *out)
{
    CUcontext ctx;
    fc_stream_cap *p;
    fc_capture *c;
    CUresult r = fc_lock_part(s, &ctx, &p, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!c)
        r = out ? CUDA_ERROR_ILLEGAL_STATE : CUDA_ERROR_INVALID_VALUE;
    else if (!out && c->owns_graph)
        r = CUDA_ERROR_INVALID_VALUE;
    else if (c->member[0] != p)
        r = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    else if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->thread, pthread_self()))
        r = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    else
        r = fc_finish_locked(c, out);
    pthread_mutex_unlock(&cap_lock);
    return r;
}

/* ---- queries -------------------------------------------------------------------- */

/* cuStreamGetCaptureInfo_v3's edge data: all zero, one per dependency, kept with the stream. */
static bool fc_zero_edges(fc_stream_cap *p)
{
    if (p->nedges >= p->deps.n && p->edges)
        return true;
    CUgraphEdgeData *v = calloc(p->deps.n ? p->deps.n : 1, sizeof *v);
    if (!v)
        return false;
    free(p->edges);
    p->edges = v;
    p->nedges = p->deps.n ? p->deps.n : 1;
    return true;
}

static CUresult fc_info_out_locked(fc_stream_cap *p, cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                                   const CUgraphEdgeData **edges, size_t *num)
{
    if (edges && !fc_zero_edges(p))
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (id)
        *id = p->seq->id;
    if (graph)
        *graph = p->seq->graph;
    if (deps)
        *deps = p->deps.v;
    if (edges)
        *edges = p->edges;
    if (num)
        *num = p->deps.n;
    return CUDA_SUCCESS;
}

/* cuStreamIsCapturing and every cuStreamGetCaptureInfo: the rest is valid only while ACTIVE. */
CUresult fc_capture_info(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                         const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *num)
{
    CUcontext ctx;
    if (!status || (edges && !deps))
        return CUDA_ERROR_INVALID_VALUE;
    fc_stream_cap *p;
    fc_capture *c;
    CUresult r = fc_lock_part(s, &ctx, &p, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!p && fc_blocking_capture_locked(ctx))
        r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    *status = !c               ? CU_STREAM_CAPTURE_STATUS_NONE
              : c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                               : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (c && !c->invalidated)
        r = fc_info_out_locked(p, id, graph, deps, edges, num);
    pthread_mutex_unlock(&cap_lock);
    return r;
}

CUresult fc_capture_update_deps(CUstream s, CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n, unsigned flags)
{
    CUcontext ctx;
    if (flags > CU_STREAM_SET_CAPTURE_DEPENDENCIES || (n && !deps))
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_edges_default(edges, n))
        return CUDA_ERROR_NOT_SUPPORTED;
    fc_stream_cap *p;
    fc_capture *c;
    CUresult r = fc_lock_part(s, &ctx, &p, &c);
    if (r != CUDA_SUCCESS)
        return r;
    r = !c               ? CUDA_ERROR_ILLEGAL_STATE
        : c->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                         : fc_graph_check_deps(c->graph, deps, n);
    if (r == CUDA_SUCCESS && flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES)
        p->deps.n = 0;
    for (size_t i = 0; r == CUDA_SUCCESS && i < n; i++)
        if (!fc_deps_add(&p->deps, deps[i]))
            r = fc_break_locked(c, CUDA_ERROR_OUT_OF_MEMORY);
    pthread_mutex_unlock(&cap_lock);
    return r;
}

CUresult fc_capture_exchange_mode(CUstreamCaptureMode *mode)
{
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

bool fc_capturing(CUstream s)
{
    if (fc_none_live())
        return false;
    pthread_mutex_lock(&cap_lock);
    fc_stream_cap *p = fc_part(s);
    bool on = p && p->seq;
    pthread_mutex_unlock(&cap_lock);
    return on;
}

/* ---- work on a stream ------------------------------------------------------------- */

/* The node type of work a graph can hold here; false for the rest. */
static bool fc_capturable(const fc_work *w, CUgraphNodeType *type)
{
    switch (w->kind) {
    case FC_W_KERNEL: *type = CU_GRAPH_NODE_TYPE_KERNEL; return true;
    case FC_W_COPY: *type = CU_GRAPH_NODE_TYPE_MEMCPY; return true;
    case FC_W_FILL: *type = CU_GRAPH_NODE_TYPE_MEMSET; return true;
    case FC_W_HOST: *type = CU_GRAPH_NODE_TYPE_HOST; return !w->u.host.callback;
    default: return false;
    }
}

/* w becomes a node after the stream's set, and the set becomes it. Takes w. */
static CUresult fc_record_locked(fc_stream_cap *p, fc_work *w, bool sync)
{
    fc_capture *c = p->seq;
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    CUgraphNode n;
    CUresult r = c->invalidated                     ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                 : sync || !fc_capturable(w, &type) ? fc_break_locked(c, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
                                                    : CUDA_SUCCESS;
    if (r != CUDA_SUCCESS) {
        fc_work_discard(w);
        return r;
    }
    r = fc_graph_add(&n, c->graph, p->deps.v, p->deps.n, type, w);
    if (r == CUDA_SUCCESS && !fc_nodes_set(&p->deps, &n, 1))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    return r == CUDA_SUCCESS ? r : fc_break_locked(c, r);
}

/* What an operation on s meets: s's part when s is capturing, else NULL,
 * with *implicit set when s is a stream a blocking capture of ctx forbids
 * (fc_implicit_locked answers it). */
static fc_stream_cap *fc_capturing_locked(CUcontext ctx, CUstream s, bool *implicit)
{
    fc_stream_cap *p = fc_part(s);
    *implicit = !p && fc_blocking_capture_locked(ctx);
    return p && p->seq ? p : NULL;
}

/* fc_submit asks first: true if capture took w (recorded it, or refused it with *r). */
bool fc_capture_take(CUcontext ctx, CUstream s, fc_work *w, bool sync, CUresult *r)
{
    if (fc_none_live() || w->kind == FC_W_FAULT)
        return false;
    bool implicit;
    pthread_mutex_lock(&cap_lock);
    fc_stream_cap *p = fc_capturing_locked(ctx, s, &implicit);
    if (p) {
        *r = fc_record_locked(p, w, sync);
    } else if (implicit) {
        *r = fc_implicit_locked(ctx);
        fc_work_discard(w);
    }
    pthread_mutex_unlock(&cap_lock);
    return p || implicit;
}

/* An operation on s no capture can hold: a sync or query, stream-ordered allocation. */
CUresult fc_capture_refuse(CUcontext ctx, CUstream s)
{
    if (fc_none_live())
        return CUDA_SUCCESS;
    bool implicit;
    pthread_mutex_lock(&cap_lock);
    fc_stream_cap *p = fc_capturing_locked(ctx, s, &implicit);
    CUresult r = p          ? fc_break_locked(p->seq, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
                 : implicit ? fc_implicit_locked(ctx)
                            : CUDA_SUCCESS;
    pthread_mutex_unlock(&cap_lock);
    return r;
}

/* cuCtxSynchronize would wait for every capturing stream of ctx. */
CUresult fc_capture_sync_ctx(CUcontext ctx)
{
    bool any = false;
    if (fc_none_live())
        return CUDA_SUCCESS;
    pthread_mutex_lock(&cap_lock);
    for (fc_capture *c = live; c; c = c->next)
        if (c->ctx == ctx)
            any = c->invalidated = true;
    pthread_mutex_unlock(&cap_lock);
    return any ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* Whether capture c forbids the calling thread potentially unsafe calls (cuThreadExchangeStreamCaptureMode). */
static bool fc_prohibits(const fc_capture *c)
{
    if (thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
        return false;
    if (pthread_equal(c->thread, pthread_self()))
        return c->mode != CU_STREAM_CAPTURE_MODE_RELAXED;
    return thread_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
}

CUresult fc_capture_unsafe(void)
{
    bool hit = false;
    if (fc_none_live())
        return CUDA_SUCCESS;
    pthread_mutex_lock(&cap_lock);
    for (fc_capture *c = live; c; c = c->next)
        if (fc_prohibits(c))
            hit = c->invalidated = true;
    pthread_mutex_unlock(&cap_lock);
    return hit ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* ---- events ----------------------------------------------------------------------- */

static CUresult fc_record_event_locked(fc_stream_cap *p, CUevent e)
{
    if (p->seq->invalidated)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (!fc_nodes_set(&e->cap_deps, p->deps.v, p->deps.n))
        return fc_break_locked(p->seq, CUDA_ERROR_OUT_OF_MEMORY);
    e->cap_id = p->seq->id;
    return CUDA_SUCCESS;
}

/* An event recorded in a capture marks the stream's set there (for forks and joins); nothing is queued. */
bool fc_capture_event_record(CUcontext ctx, CUstream s, CUevent e, CUresult *r)
{
    if (fc_none_live())
        return false;
    bool implicit;
    pthread_mutex_lock(&cap_lock);
    fc_stream_cap *p = fc_capturing_locked(ctx, s, &implicit);
    if (p)
        *r = fc_record_event_locked(p, e);
    else if (implicit)
        *r = fc_implicit_locked(ctx);
    else
        e->cap_id = 0;
    pthread_mutex_unlock(&cap_lock);
    return p || implicit;
}

/* s waits on an event recorded in sequence c: s joins c (a fork) or takes the event's nodes (a join). */
static CUresult fc_join_locked(fc_stream_cap *p, CUstream s, fc_capture *c, CUevent e)
{
    if (p->seq && p->seq != c) {
        fc_break_locked(p->seq, CUDA_ERROR_STREAM_CAPTURE_MERGE);
        return fc_break_locked(c, CUDA_ERROR_STREAM_CAPTURE_MERGE);
    }
    if (c->invalidated)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (!p->seq) {
        p->deps.n = 0;
        if (!fc_add_member_locked(c, p, fc_blocking(s)))
            return fc_break_locked(c, CUDA_ERROR_OUT_OF_MEMORY);
    }
    for (size_t i = 0; i < e->cap_deps.n; i++)
        if (!fc_deps_add(&p->deps, e->cap_deps.v[i]))
            return fc_break_locked(c, CUDA_ERROR_OUT_OF_MEMORY);
    return CUDA_SUCCESS;
}

CUresult fc_capture_event_wait(CUcontext ctx, CUstream s, CUevent e, unsigned flags)
{
    if (fc_none_live())
        return CUDA_SUCCESS;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&cap_lock);
    fc_stream_cap *p = fc_part(s);
    fc_capture *from = fc_find_locked(e->cap_id);
    if (!p && fc_blocking_capture_locked(ctx))
        r = fc_implicit_locked(ctx);
    else if (!p && from)
        r = fc_break_locked(from, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED); /* the legacy stream cannot join */
    else if (p && from)
        r = fc_join_locked(p, s, from, e);
    else if (p && p->seq)
        r = fc_break_locked(p->seq, flags & CU_EVENT_WAIT_EXTERNAL ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                                                                   : CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
    pthread_mutex_unlock(&cap_lock);
    return r;
}

/* Synchronising, querying or timing an event recorded in a live capture. */
CUresult fc_capture_event_check(CUevent e)
{
    if (fc_none_live())
        return CUDA_SUCCESS;
    pthread_mutex_lock(&cap_lock);
    fc_capture *c = fc_find_locked(e->cap_id);
    CUresult r = c ? fc_break_locked(c, CUDA_ERROR_CAPTURED_EVENT) : CUDA_SUCCESS;
    pthread_mutex_unlock(&cap_lock);
    return r;
}

/* ---- streams and events going away -------------------------------------------------- */

/* A destroyed stream leaves its sequence broken; a destroyed origin ends it. */
void fc_capture_stream_gone(void *stream)
{
    CUstream s = stream;
    fc_stream_cap *p = &s->cap;
    CUgraph none;
    pthread_mutex_lock(&cap_lock);
    fc_capture *c = p->seq;
    if (c) {
        c->invalidated = true;
        if (c->member[0] == p)
            fc_finish_locked(c, &none);
        else
            fc_remove_member_locked(c, p, fc_blocking(s));
    }
    fc_part_reset(p);
    free(p->edges);
    p->edges = NULL;
    p->nedges = 0;
    pthread_mutex_unlock(&cap_lock);
}

void fc_capture_event_gone(void *event)
{
    CUevent e = event;
    pthread_mutex_lock(&cap_lock);
    fc_nodes_free(&e->cap_deps);
    e->cap_id = 0;
    pthread_mutex_unlock(&cap_lock);
}

/*
 * graphs.c - CUDA graphs: stream capture, and the read and write sets of
 * executable graphs, checked at cuGraphLaunch as a launch's are.
 *
 * Capture: work on a capturing stream is recorded, not run; it runs when
 * the graph is launched.  So a launch, copy or memset the driver records is
 * passed through untouched (neither checked nor tainted, never skipped):
 * the graph launch is what is checked.  The wrappers of the capture calls
 * count the captures begun and not yet ended (captures_live); while it is
 * 0, which is always outside a capture, the check costs one load.  Above 0,
 * the driver is asked (cuStreamIsCapturing) whether the call's stream
 * captures: it knows the streams that joined a capture through an event,
 * and the legacy stream's implicit ties to a capturing blocking stream
 * (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: the driver refuses that work, so it
 * is passed through too).
 *
 * Executable graphs: at cuGraphInstantiate (every version) the source
 * graph's nodes are walked through the driver and decoded once: kernel
 * nodes with the launch's own decoder (kernels.c's registry and layouts),
 * memcpy and memset nodes with the copies' shapes (memory.c).  A graph's
 * *exec sets* are its read set and write set: every range its nodes read
 * or write, merged per allocation (overlapping ranges coalesced), so a
 * check costs in proportion to the graph's distinct allocations, not its
 * nodes.  Each merged read remembers the first node reading it, for the
 * skip event.  cuGraphExec*SetParams re-decode the node they change;
 * cuGraphExecUpdate re-decodes from the new graph; cuGraphExecDestroy
 * (once the driver destroyed it, only the lifetime it ended: the driver
 * may have handed the handle to another thread's instantiate meanwhile)
 * and the end of the owning context forget the exec.
 *
 * At cuGraphLaunch, with no taint anywhere nothing is looked up.  Otherwise
 * a read set carrying a failure skips the whole graph launch when core's
 * ct_exec_rule says so (the driver never runs it; the rule also says which
 * read names the skip): the write set takes that failure, and its
 * device-to-host nodes are reads core's ct_skipped_read_rule judges (a
 * refused one is poisoned and counted as a refused read).  A failed graph launch taints its write set; a successful
 * one checked while taint existed releases it (it is the last writer).
 *
 * Invariants:
 * - The registry changes under execs_lock held for writing; launches hold
 *   it for reading.  No driver call is made while it is held (decoding
 *   walks the graph first, then takes the lock to swap the sets in; a
 *   launch asks for the context between two looks under it).
 * - Nodes of a kind not followed (child graphs, memory allocation
 *   nodes, ...) make the exec *opaque*: what they touch is not checked
 *   nor tainted, logged once per exec; the decoded nodes keep their
 *   checks.  A kernel without a known layout touches no tracked memory,
 *   as its launches do.
 * - A conditional node is followed into its bodies (the graphs
 *   cuGraphAddNode handed out for it, remembered by node and parent graph,
 *   CT_BODY_DEPTH_MAX deep): their nodes are the exec's nodes too, marked
 *   in_body, and core's ct_graph_use_rule says what their uses count for
 *   (a body may or may not run).  A conditional node cutaint did not see
 *   made (a clone's, say), or seen in another graph than the one it was
 *   made in, makes the exec opaque.  Body nodes come after the top-level
 *   ones: only those (n_ordered) have an order.
 * - An exec's sets are filed under its handle's lifetime (core/lifetimes.h,
 *   ct_g.execs): an instantiate starts a new one and replaces what the
 *   handle held; a destroy forgets only the lifetime it took before the
 *   driver's call, and only when the driver destroyed it.
 * - Sets hold exact ranges of allocations known at decoding: a kernel
 *   pointer's open extent (CT_TO_END) is cut at its region's end (taint.h)
 *   or else its allocation's, as the regions were at decoding, and
 *   addresses outside every allocation are dropped.
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inflight.h"
#include "kernels.h"
#include "shim.h"
#include "summary.h"

atomic_uint ct_captures_live;

/* ---- capture ------------------------------------------------------------ */

/* A _ptsz/_ptds entry point reads stream 0 as the per-thread stream. */
static CUstream stream_of(const ct_call *call, CUstream s)
{
    if (s != NULL)
        return s;
    const char *name = ct_entries[call->id].name;
    size_t len = strlen(name);
    bool per_thread = len > 5 && (strcmp(name + len - 5, "_ptsz") == 0 || strcmp(name + len - 5, "_ptds") == 0);
    return per_thread ? CU_STREAM_PER_THREAD : NULL;
}

bool ct_captured_ask(ct_call *call, CUstream s)
{
    __typeof__(&cuStreamIsCapturing) is_capturing = CT_HELPER(cuStreamIsCapturing);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = is_capturing ? is_capturing(stream_of(call, s), &status) : CUDA_ERROR_NOT_FOUND;
    bool captured =
        r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT || (r == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE);
    if (captured)
        call->tracked = false; /* no after hook, no probe: the graph launch is what counts */
    return captured;
}

/* Was the stream capturing before cuStreamEndCapture?  Asked in its before
 * hook, so a refused end (a stream that was not capturing) ends nothing. */
static CT_HOT_TLS bool ending_live;

void ct_after_begin_capture(ct_call *call)
{
    if (call->result == CUDA_SUCCESS)
        atomic_fetch_add_explicit(&ct_captures_live, 1, memory_order_relaxed);
}

bool ct_before_end_capture(ct_call *call, CUstream s)
{
    __typeof__(&cuStreamIsCapturing) is_capturing = CT_HELPER(cuStreamIsCapturing);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    ending_live = is_capturing && is_capturing(stream_of(call, s), &status) == CUDA_SUCCESS &&
                  status != CU_STREAM_CAPTURE_STATUS_NONE;
    return true;
}

/* An invalidated capture ends too, with an error: what counts is that the
 * stream captured before and does not now. */
void ct_after_end_capture(ct_call *call, CUstream s)
{
    __typeof__(&cuStreamIsCapturing) is_capturing = CT_HELPER(cuStreamIsCapturing);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (!ending_live || !is_capturing || is_capturing(stream_of(call, s), &status) != CUDA_SUCCESS ||
        status != CU_STREAM_CAPTURE_STATUS_NONE)
        return;
    unsigned live = atomic_load_explicit(&ct_captures_live, memory_order_relaxed);
    while (live > 0 && !atomic_compare_exchange_weak_explicit(&ct_captures_live, &live, live - 1, memory_order_relaxed,
                                                              memory_order_relaxed))
        ;
}

/* ---- exec sets ------------------------------------------------------------ */
/* A read of bytes a copy or memset of the same graph writes first (one that
 * runs before the reader, by the graph's edges) is not in the read set: the
 * graph satisfies it itself, as a memset before a launch does outside one.
 * Kernel writes never satisfy a read (their extent is not known). */

typedef struct ct_use { /* one range a node reads or writes */
    ct_range r;
    uint64_t base; /* of its allocation */
    bool read, write;
    bool unreleased; /* written to an extent not known exactly (a too-tall shape's bounding
                               * span, a kernel's stores): tainted by a failure, never released */
} ct_use;

typedef struct ct_node_uses { /* what one node touches */
    uint64_t node;            /* the source graph's node handle */
    const char *kernel;       /* its kernel, NULL for copies and memsets */
    bool exact;               /* a copy or memset: its writes are exact, so they cover what later nodes read */
    bool to_host;             /* a device-to-host copy: src its source, host its destination */
    ct_rows src;
    ct_side host;
    bool in_body;     /* inside a conditional node's body: it may not run */
    bool conditional; /* a conditional node: its bodies are followed (follow_bodies) */
    unsigned n;
    ct_use *use;
} ct_node_uses;

typedef struct ct_read { /* a merged read and the first node reading it */
    ct_range r;
    uint64_t base; /* of its allocation: ranges merge only within one */
    unsigned node;
} ct_read;

typedef struct ct_exec {
    uint64_t handle, context;
    uint64_t lifetime;           /* the handle's (ct_g.execs) when the sets were decoded */
    bool opaque;                 /* some node was of a kind not followed */
    unsigned n_nodes, n_ordered; /* all nodes; the top-level ones, first, which have an order */
    unsigned room;               /* nodes allocated */
    ct_node_uses *nodes;
    uint64_t *ancestors; /* n_ordered rows of words(n_ordered) bits: node j runs before node i; NULL unknown */
    size_t n_reads, n_writes;
    ct_read *reads;
    ct_range *read_ranges; /* reads[i].r, contiguous, for one store check */
    ct_range *writes;      /* what a failure or a skip taints */
    ct_range *released;    /* what a success releases: writes less the unreleased */
    size_t n_released;
    UT_hash_handle hh;
} ct_exec;

static ct_exec *execs;
static pthread_rwlock_t execs_lock = PTHREAD_RWLOCK_INITIALIZER;

/* The bodies of the conditional nodes cutaint saw made: filed by node,
 * with the graph the node was added to.  An entry is replaced when its
 * node's handle is handed out again for another conditional node. */
typedef struct ct_cond_bodies {
    uint64_t node;
    uint64_t graph;
    unsigned n;
    CUgraph *body;
    UT_hash_handle hh;
} ct_cond_bodies;

static ct_cond_bodies *conds;
static pthread_mutex_t conds_lock = PTHREAD_MUTEX_INITIALIZER;

void ct_graphs_atfork_child(void)
{
    pthread_rwlock_init(&execs_lock, NULL);
    pthread_mutex_init(&conds_lock, NULL);
}

static void node_uses_free(ct_node_uses *n)
{
    free(n->use);
    n->use = NULL;
    n->n = 0;
}

static void exec_free(ct_exec *x)
{
    if (!x)
        return;
    for (unsigned i = 0; i < x->n_nodes; i++)
        node_uses_free(&x->nodes[i]);
    free(x->nodes);
    free(x->ancestors);
    free(x->reads);
    free(x->read_ranges);
    free(x->writes);
    free(x->released);
    free(x);
}

/* r as an exact range of its allocation (whose base *base receives); false
 * when it lies in none. */
static bool exact(ct_range *r, uint64_t *base)
{
    ct_extent e;
    if (r->len == 0 || !ct_store_extent(ct_g.store, r->addr, &e))
        return false;
    *base = e.allocation;
    uint64_t left = (r->len == CT_TO_END ? e.end : e.allocation + e.size) - r->addr;
    if (r->len > left)
        r->len = left;
    assert(r->addr >= e.allocation && r->len <= e.allocation + e.size - r->addr &&
           "a set holds exact ranges of an allocation known at decoding");
    return true;
}

/* Each of r that lies in a known allocation, as uses of n.  False when out
 * of memory. */
static bool add_uses(ct_node_uses *n, const ct_range *r, unsigned count, ct_use how)
{
    if (count == 0)
        return true;
    ct_use *grown = realloc(n->use, (n->n + count) * sizeof *grown);
    if (!grown)
        return false;
    n->use = grown;
    for (unsigned i = 0; i < count; i++) {
        how.r = r[i];
        if (exact(&how.r, &how.base))
            n->use[n->n++] = how;
    }
    return true;
}

static bool add_ranges(ct_node_uses *n, const ct_range *r, unsigned count, bool read, bool write)
{
    return add_uses(n, r, count, (ct_use){.read = read, .write = write});
}

/* A copy's or memset's destination, row by row (never its gaps); past
 * CT_TALL_ROWS_MAX rows its bounding span, tainted but never released. */
static bool add_written_rows(ct_node_uses *n, const ct_side *s)
{
    ct_range r[CT_CALL_RANGES];
    if (ct_side_row_count(s) > CT_TALL_ROWS_MAX)
        return add_uses(n, r, ct_side_ranges(s, r), (ct_use){.write = true, .unreleased = true});
    unsigned got;
    for (uint64_t first = 0; (got = ct_side_rows(s, first, r, CT_CALL_RANGES)) != 0; first += got)
        if (!add_ranges(n, r, got, false, true))
            return false;
    return true;
}

static bool decode_kernel(ct_node_uses *n, CUfunction f, void **params, void **extra)
{
    ct_kernel *k = f ? ct_kernel_for(f) : NULL;
    n->kernel = k ? k->pretty : NULL;
    if (!k)
        return true;
    const ct_range *in, *out;
    unsigned n_in, n_out, n_release;
    ct_launch_bindings(k, params, extra, &in, &n_in, &out, &n_out, &n_release);
    /* Stores of unknown extent: tainted by a failed graph launch, never
     * released by a good one. */
    return add_ranges(n, in, n_in, true, false) && add_ranges(n, out, n_release, false, true) &&
           add_uses(n, out + n_release, n_out - n_release, (ct_use){.write = true, .unreleased = true});
}

static bool decode_copy(ct_node_uses *n, const CUDA_MEMCPY3D *p)
{
    ct_copy_shape shape = ct_shape_3d(p);
    n->exact = true;
    ct_range r[CT_CALL_RANGES];
    unsigned count = ct_side_ranges(&shape.src, r);
    if (!add_ranges(n, r, count, true, false))
        return false;
    if (!shape.dst.device) {
        n->to_host = shape.src.device && shape.dst.rows.addr != 0;
        n->src = shape.src.rows;
        n->host = shape.dst;
        return true;
    }
    return add_written_rows(n, &shape.dst);
}

static bool decode_memset(ct_node_uses *n, const CUDA_MEMSET_NODE_PARAMS *p)
{
    uint64_t width = (uint64_t)p->width * p->elementSize, pitch = p->pitch ? p->pitch : width;
    ct_side s = {.device = true,
                 .rows = {.addr = p->dst,
                          .width = width,
                          .pitch = pitch,
                          .height = p->height,
                          .slice = pitch * p->height,
                          .depth = 1}};
    n->exact = true;
    return add_written_rows(n, &s);
}

/* What a node touches, from the driver; *opaque when its kind is not followed.
 * False only when out of memory. */
static bool decode_node(ct_node_uses *n, CUgraphNode node, bool *opaque)
{
    __typeof__(&cuGraphNodeGetType) get_type = CT_HELPER(cuGraphNodeGetType);
    __typeof__(&cuGraphKernelNodeGetParams_v2) get_kernel = CT_HELPER(cuGraphKernelNodeGetParams_v2);
    __typeof__(&cuGraphMemcpyNodeGetParams) get_copy = CT_HELPER(cuGraphMemcpyNodeGetParams);
    __typeof__(&cuGraphMemsetNodeGetParams) get_memset = CT_HELPER(cuGraphMemsetNodeGetParams);
    memset(n, 0, sizeof *n);
    n->node = (uint64_t)(uintptr_t)node;
    CUgraphNodeType type;
    if (!get_type || get_type(node, &type) != CUDA_SUCCESS) {
        *opaque = true;
        return true;
    }
    CUDA_KERNEL_NODE_PARAMS kp;
    CUDA_MEMCPY3D cp;
    CUDA_MEMSET_NODE_PARAMS mp;
    switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        if (get_kernel && get_kernel(node, &kp) == CUDA_SUCCESS)
            return decode_kernel(n, kp.func ? kp.func : (CUfunction)(void *)kp.kern, kp.kernelParams, kp.extra);
        break;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (get_copy && get_copy(node, &cp) == CUDA_SUCCESS)
            return decode_copy(n, &cp);
        break;
    case CU_GRAPH_NODE_TYPE_MEMSET:
        if (get_memset && get_memset(node, &mp) == CUDA_SUCCESS)
            return decode_memset(n, &mp);
        break;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: /* its bodies' nodes are decoded as the exec's (follow_bodies) */
        n->conditional = true;
        return true;
    case CU_GRAPH_NODE_TYPE_EMPTY:
    case CU_GRAPH_NODE_TYPE_HOST: /* a host function may not call CUDA */
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return true;
    default: break;
    }
    *opaque = true;
    return true;
}

static int by_addr(const void *a, const void *b)
{
    const ct_read *x = a, *y = b;
    if (x->base != y->base)
        return x->base < y->base ? -1 : 1;
    if (x->r.addr != y->r.addr)
        return x->r.addr < y->r.addr ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Sort and coalesce overlapping or adjacent ranges of one allocation in
 * place (core resolves a range by its first byte: a range never spans two
 * allocations); how many are left. */
static size_t coalesce(ct_read *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, by_addr);
    size_t out = 0;
    for (size_t i = 1; i < n; i++) {
        uint64_t end = v[out].r.addr + v[out].r.len;
        if (v[i].base == v[out].base && v[i].r.addr <= end) {
            uint64_t i_end = v[i].r.addr + v[i].r.len;
            if (i_end > end)
                v[out].r.len = i_end - v[out].r.addr;
            if (v[i].node < v[out].node)
                v[out].node = v[i].node;
        } else {
            v[++out] = v[i];
        }
    }
    return out + 1;
}

/* ---- reads a graph satisfies itself ---- */

static size_t words(size_t n)
{
    return (n + 63) / 64;
}

static bool runs_before(const ct_exec *x, unsigned j, unsigned i)
{
    if (i >= x->n_ordered || j >= x->n_ordered) /* a body's node: no order known */
        return false;
    const uint64_t *row = x->ancestors + (size_t)i * words(x->n_ordered);
    return row[j / 64] >> (j % 64) & 1;
}

/* What use u of node n counts for (core's rule). */
static ct_graph_use_verdict use_verdict(const ct_node_uses *n, const ct_use *u)
{
    ct_graph_use_facts f = {.in_body = n->in_body, .exact_node = n->exact, .extent_known = !u->unreleased};
    return ct_graph_use_rule(&f);
}

/* Does a copy or memset that runs before node i write every byte of u?  Then
 * node i reads what its own graph wrote, not what the graph was handed. */
static bool covered(const ct_exec *x, unsigned i, const ct_use *u)
{
    if (!x->ancestors)
        return false;
    for (unsigned j = 0; j < x->n_nodes; j++) {
        if (!runs_before(x, j, i))
            continue;
        for (unsigned k = 0; k < x->nodes[j].n; k++) {
            const ct_use *w = &x->nodes[j].use[k];
            if (w->write && use_verdict(&x->nodes[j], w).satisfies && w->base == u->base && w->r.addr <= u->r.addr &&
                w->r.addr + w->r.len >= u->r.addr + u->r.len)
                return true;
        }
    }
    return false;
}

/* Which nodes run before which, from each node's dependencies (no lock
 * held: driver calls).  Left NULL (no read counts as satisfied) when the
 * driver will not say or the graph is too large to be worth it. */
#define CT_ORDER_MAX_NODES 4096
static void order_nodes(ct_exec *x, const CUgraphNode *nodes)
{
    __typeof__(&cuGraphNodeGetDependencies) get_deps = CT_HELPER(cuGraphNodeGetDependencies);
    size_t n = x->n_ordered, w = words(n);
    if (!get_deps || n == 0 || n > CT_ORDER_MAX_NODES || !(x->ancestors = calloc(n * w, sizeof *x->ancestors)))
        return;
    CUgraphNode deps[64];
    for (size_t i = 0; i < n; i++) {
        size_t nd = sizeof deps / sizeof *deps;
        if (get_deps(nodes[i], deps, &nd) != CUDA_SUCCESS || nd > sizeof deps / sizeof *deps) {
            free(x->ancestors);
            x->ancestors = NULL;
            return;
        }
        for (size_t d = 0; d < nd; d++)
            for (size_t j = 0; j < n; j++)
                if (nodes[j] == deps[d])
                    x->ancestors[i * w + j / 64] |= 1ULL << (j % 64);
    }
    /* transitive closure: a row takes its ancestors' rows until nothing changes */
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                if (!(x->ancestors[i * w + j / 64] >> (j % 64) & 1))
                    continue;
                for (size_t k = 0; k < w; k++) {
                    uint64_t grown = x->ancestors[i * w + k] | x->ancestors[j * w + k];
                    changed |= grown != x->ancestors[i * w + k];
                    x->ancestors[i * w + k] = grown;
                }
            }
    }
}

/* The ranges of n merged uses, contiguous (malloc'd), or NULL. */
static ct_range *ranges_of(const ct_read *u, size_t n)
{
    ct_range *r = malloc((n ? n : 1) * sizeof *r);
    for (size_t i = 0; r && i < n; i++)
        r[i] = u[i].r;
    return r;
}

/* The merged read and write sets of x's nodes.  False when out of memory. */
static bool merge(ct_exec *x)
{
    size_t total = 0;
    for (unsigned i = 0; i < x->n_nodes; i++)
        total += x->nodes[i].n;
    ct_read *reads = malloc((total ? total : 1) * sizeof *reads);
    ct_read *writes = malloc((total ? total : 1) * sizeof *writes);
    ct_read *released = malloc((total ? total : 1) * sizeof *released);
    if (!reads || !writes || !released) {
        free(reads);
        free(writes);
        free(released);
        return false;
    }
    size_t nr = 0, nw = 0, nrel = 0;
    for (unsigned i = 0; i < x->n_nodes; i++)
        for (unsigned j = 0; j < x->nodes[i].n; j++) {
            const ct_use *u = &x->nodes[i].use[j];
            ct_graph_use_verdict v = use_verdict(&x->nodes[i], u);
            if (u->read && v.checked && !covered(x, i, u))
                reads[nr++] = (ct_read){u->r, u->base, i};
            if (u->write && v.tainted)
                writes[nw++] = (ct_read){u->r, u->base, i};
            if (u->write && v.released)
                released[nrel++] = (ct_read){u->r, u->base, i};
        }
    nr = coalesce(reads, nr);
    nw = coalesce(writes, nw);
    nrel = coalesce(released, nrel);
    ct_range *read_ranges = ranges_of(reads, nr);
    ct_range *write_ranges = ranges_of(writes, nw);
    ct_range *released_ranges = ranges_of(released, nrel);
    free(writes);
    free(released);
    if (!read_ranges || !write_ranges || !released_ranges) {
        free(reads);
        free(read_ranges);
        free(write_ranges);
        free(released_ranges);
        return false;
    }
    free(x->reads);
    free(x->read_ranges);
    free(x->writes);
    free(x->released);
    x->reads = reads;
    x->read_ranges = read_ranges;
    x->writes = write_ranges;
    x->released = released_ranges;
    x->n_reads = nr;
    x->n_writes = nw;
    x->n_released = nrel;
    return true;
}

/* ---- conditional nodes' bodies ---- */

static void cond_bodies_free(ct_cond_bodies *c)
{
    if (c)
        free(c->body);
    free(c);
}

void ct_after_add_node(ct_call *call, const CUgraphNode *node, CUgraph g, const CUgraphNodeParams *p)
{
    if (call->result != CUDA_SUCCESS || !node || !*node || !p || p->type != CU_GRAPH_NODE_TYPE_CONDITIONAL ||
        !p->conditional.phGraph_out)
        return;
    uint64_t key = (uint64_t)(uintptr_t)*node;
    unsigned n = p->conditional.size;
    ct_cond_bodies *c = calloc(1, sizeof *c), *old = NULL, *dropped = NULL;
    CUgraph *body = malloc((n ? n : 1) * sizeof *body);
    if (c && body) {
        memcpy(body, p->conditional.phGraph_out, n * sizeof *body);
        *c = (ct_cond_bodies){.node = key, .graph = (uint64_t)(uintptr_t)g, .n = n, .body = body};
    } else { /* out of memory: the node stays unknown, its execs opaque */
        free(body);
        free(c);
        c = NULL;
    }
    pthread_mutex_lock(&conds_lock);
    HASH_FIND(hh, conds, &key, sizeof key, old); /* a node gone, whose handle this one took */
    if (old)
        HASH_DELETE(hh, conds, old);
    if (c) {
        HASH_ADD(hh, conds, node, sizeof c->node, c);
        if (!ct_hash_added(&c->hh))
            dropped = c;
    }
    pthread_mutex_unlock(&conds_lock);
    cond_bodies_free(old);
    cond_bodies_free(dropped);
}

/* The bodies of conditional node `node` made in graph g (malloc'd, *n of
 * them), or NULL when cutaint did not see it made there. */
static CUgraph *bodies_of(CUgraphNode node, CUgraph g, unsigned *n)
{
    uint64_t key = (uint64_t)(uintptr_t)node;
    CUgraph *copy = NULL;
    ct_cond_bodies *c;
    pthread_mutex_lock(&conds_lock);
    HASH_FIND(hh, conds, &key, sizeof key, c);
    if (c && c->graph == (uint64_t)(uintptr_t)g && (copy = malloc((c->n ? c->n : 1) * sizeof *copy))) {
        memcpy(copy, c->body, c->n * sizeof *copy);
        *n = c->n;
    }
    pthread_mutex_unlock(&conds_lock);
    return copy;
}

/* Node `node` decoded as x's next (grown as needed).  False when out of memory. */
static bool add_node(ct_exec *x, CUgraphNode node, bool in_body)
{
    if (x->n_nodes == x->room) {
        unsigned room = x->room ? 2 * x->room : 16;
        ct_node_uses *grown = realloc(x->nodes, room * sizeof *grown);
        if (!grown)
            return false;
        x->nodes = grown;
        x->room = room;
    }
    if (!decode_node(&x->nodes[x->n_nodes], node, &x->opaque)) {
        node_uses_free(&x->nodes[x->n_nodes]);
        return false;
    }
    x->nodes[x->n_nodes++].in_body = in_body;
    return true;
}

/* Nested conditionals deeper than this make the exec opaque. */
#define CT_BODY_DEPTH_MAX 8

static bool decode_body(ct_exec *x, CUgraph body, unsigned depth);

/* When x's node i, node (of graph g), is a conditional node (as
 * decode_node found), its bodies' nodes as x's; x opaque when its bodies
 * are unknown.  False when out of memory. */
static bool follow_bodies(ct_exec *x, unsigned i, CUgraphNode node, CUgraph g, unsigned depth)
{
    if (!x->nodes[i].conditional)
        return true;
    unsigned n = 0;
    CUgraph *body = depth <= CT_BODY_DEPTH_MAX ? bodies_of(node, g, &n) : NULL;
    if (!body)
        x->opaque = true;
    bool ok = true;
    for (unsigned b = 0; ok && body && b < n; b++)
        ok = decode_body(x, body[b], depth);
    free(body);
    return ok;
}

/* The nodes of a graph (malloc'd, *n of them), or NULL when the driver will
 * not list them or out of memory. */
static CUgraphNode *nodes_of(CUgraph g, size_t *n)
{
    __typeof__(&cuGraphGetNodes) get_nodes = CT_HELPER(cuGraphGetNodes);
    *n = 0;
    if (!get_nodes || get_nodes(g, NULL, n) != CUDA_SUCCESS)
        return NULL;
    CUgraphNode *nodes = malloc((*n ? *n : 1) * sizeof *nodes);
    if (nodes && get_nodes(g, nodes, n) != CUDA_SUCCESS) {
        free(nodes);
        return NULL;
    }
    return nodes;
}

static bool decode_body(ct_exec *x, CUgraph body, unsigned depth)
{
    size_t n;
    CUgraphNode *nodes = nodes_of(body, &n);
    if (!nodes) {
        x->opaque = true;
        return true;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++)
        ok = add_node(x, nodes[i], true) && follow_bodies(x, x->n_nodes - 1, nodes[i], body, depth + 1);
    free(nodes);
    return ok;
}

/* A new exec record decoded from graph g (no lock held: driver calls).
 * NULL when out of memory or the driver cannot list the nodes. */
static ct_exec *decode_graph(CUgraph g, uint64_t handle, uint64_t lifetime)
{
    size_t n;
    CUgraphNode *nodes = nodes_of(g, &n);
    if (!nodes)
        return NULL;
    ct_exec *x = calloc(1, sizeof *x);
    if (!x)
        goto fail;
    x->handle = handle;
    x->lifetime = lifetime;
    x->context = ct_current_context();
    for (size_t i = 0; i < n; i++)
        if (!add_node(x, nodes[i], false))
            goto fail;
    x->n_ordered = x->n_nodes;
    order_nodes(x, nodes);
    for (size_t i = 0; i < n; i++)
        if (!follow_bodies(x, (unsigned)i, nodes[i], g, 1))
            goto fail;
    if (!merge(x))
        goto fail;
    free(nodes);
    return x;
fail:
    free(nodes);
    exec_free(x);
    return NULL;
}

static ct_exec *find_locked(uint64_t handle)
{
    ct_exec *x;
    HASH_FIND(hh, execs, &handle, sizeof handle, x);
    return x;
}

/* Put x in place of whatever was known of its handle (x NULL: forget it). */
static void replace(uint64_t handle, ct_exec *x)
{
    pthread_rwlock_wrlock(&execs_lock);
    ct_exec *old = find_locked(handle);
    if (old)
        HASH_DELETE(hh, execs, old);
    if (x) {
        HASH_ADD(hh, execs, handle, sizeof x->handle, x);
        if (!ct_hash_added(&x->hh))
            exec_free(x);
    }
    pthread_rwlock_unlock(&execs_lock);
    exec_free(old);
}

static void learn(uint64_t handle, uint64_t lifetime, CUgraph g, const char *api)
{
    ct_exec *x = decode_graph(g, handle, lifetime);
    if (!x)
        ct_log(CT_LOG_WARN,
               "%s: could not decode graph exec 0x%llx (out of memory, or the driver would not "
               "list its nodes): its launches are not checked",
               api, (unsigned long long)handle);
    else if (x->opaque)
        ct_log(CT_LOG_INFO,
               "%s: graph exec 0x%llx has nodes of a kind cutaint does not follow (child graph, "
               "memory, a conditional node it did not see made, ...): what they touch is not checked",
               api, (unsigned long long)handle);
    replace(handle, x);
}

void ct_after_instantiate(ct_call *call, uint64_t exec, CUgraph g)
{
    if (call->result != CUDA_SUCCESS || !exec)
        return;
    /* The lifetime it replaced has ended (the driver handed its handle out
     * again): what it filed is replaced below. */
    uint64_t replaced;
    learn(exec, ct_lifetime_born(ct_g.execs, exec, &replaced), g, ct_entries[call->id].name);
}

void ct_after_exec_update(ct_call *call, CUgraphExec exec, CUgraph g)
{
    if (call->result != CUDA_SUCCESS || !exec)
        return;
    uint64_t handle = (uint64_t)(uintptr_t)exec;
    ct_exec *x = decode_graph(g, handle, ct_lifetime_of(ct_g.execs, handle));
    /* SetParams names the nodes of the graph the exec was instantiated
     * from: the new graph's nodes pair with them in order. */
    pthread_rwlock_rdlock(&execs_lock);
    const ct_exec *old = find_locked(handle);
    if (x && old && old->n_nodes == x->n_nodes)
        for (unsigned i = 0; i < x->n_nodes; i++)
            x->nodes[i].node = old->nodes[i].node;
    pthread_rwlock_unlock(&execs_lock);
    if (!x)
        ct_log(CT_LOG_WARN, "%s: could not decode graph exec 0x%llx again: its launches are not checked",
               ct_entries[call->id].name, (unsigned long long)handle);
    replace(handle, x);
}

/* The exec's lifetime is taken before the driver destroys it and
 * forgotten after, only when the driver destroyed it: a destroy it refuses
 * keeps the exec checked.  Once the driver has destroyed it, another
 * thread's cuGraphInstantiate may be handed the same handle (bug 8): that
 * one's sets are filed under a new lifetime, which this forget leaves. */
bool ct_before_exec_destroy(ct_call *call, CUgraphExec exec)
{
    call->subject = (uint64_t)(uintptr_t)exec;
    call->lifetime = ct_lifetime_ending(ct_g.execs, call->subject);
    return true;
}

void ct_after_exec_destroy(ct_call *call)
{
    bool gone = call->result == CUDA_SUCCESS;
    ct_exec *x = NULL;
    if (gone && call->subject) {
        pthread_rwlock_wrlock(&execs_lock);
        x = find_locked(call->subject);
        if (x && x->lifetime == call->lifetime)
            HASH_DELETE(hh, execs, x);
        else
            x = NULL;
        pthread_rwlock_unlock(&execs_lock);
    }
    exec_free(x);
    ct_lifetime_ended(ct_g.execs, call->subject, call->lifetime, gone);
}

size_t ct_graphs_forget_context(uint64_t context)
{
    if (!context)
        return 0;
    size_t n = 0;
    ct_exec *x, *next, *gone = NULL;
    pthread_rwlock_wrlock(&execs_lock);
    HASH_ITER(hh, execs, x, next)
    {
        /* cppcheck-suppress uninitvar ; uthash's HASH_ITER sets x before the body (a macro it does not follow) */
        if (x->context == context) {
            HASH_DELETE(hh, execs, x);
            x->hh.next = gone;
            gone = x;
            n++;
        }
    }
    pthread_rwlock_unlock(&execs_lock);
    while (gone) {
        next = gone->hh.next;
        exec_free(gone);
        gone = next;
    }
    return n;
}

/* One node's new parameters (decoded by `decode` from `params`) in place
 * of its old ones. */
static void set_node(ct_call *call, CUgraphExec exec, CUgraphNode node, bool (*decode)(ct_node_uses *, const void *),
                     const void *params)
{
    if (call->result != CUDA_SUCCESS || !exec || !params)
        return;
    ct_node_uses fresh = {.node = (uint64_t)(uintptr_t)node};
    bool ok = decode(&fresh, params);
    uint64_t handle = (uint64_t)(uintptr_t)exec;
    pthread_rwlock_wrlock(&execs_lock);
    ct_exec *x = find_locked(handle);
    ct_node_uses *slot = NULL;
    for (unsigned i = 0; x && i < x->n_nodes && !slot; i++)
        if (x->nodes[i].node == fresh.node)
            slot = &x->nodes[i];
    if (slot && ok) {
        fresh.in_body = slot->in_body;
        node_uses_free(slot);
        *slot = fresh;
        fresh.use = NULL;
        ok = merge(x);
    }
    if (x && !ok) { /* out of memory: forget the exec rather than check a stale set */
        HASH_DELETE(hh, execs, x);
    }
    pthread_rwlock_unlock(&execs_lock);
    free(fresh.use);
    if (x && !ok) {
        ct_log(CT_LOG_WARN, "%s: out of memory: graph exec 0x%llx is no longer checked", ct_entries[call->id].name,
               (unsigned long long)handle);
        exec_free(x);
    }
}

static bool decode_kernel_v2(ct_node_uses *n, const void *p)
{
    const CUDA_KERNEL_NODE_PARAMS *kp = p;
    return decode_kernel(n, kp->func ? kp->func : (CUfunction)(void *)kp->kern, kp->kernelParams, kp->extra);
}

static bool decode_kernel_v1(ct_node_uses *n, const void *p)
{
    const CUDA_KERNEL_NODE_PARAMS_v1 *kp = p;
    return decode_kernel(n, kp->func, kp->kernelParams, kp->extra);
}

static bool decode_copy_node(ct_node_uses *n, const void *p)
{
    return decode_copy(n, p);
}

static bool decode_memset_node(ct_node_uses *n, const void *p)
{
    return decode_memset(n, p);
}

/* cuGraphExecNodeSetParams: the generic form, by the node type it names. */
static bool decode_any_node(ct_node_uses *n, const void *p)
{
    const CUgraphNodeParams *np = p;
    switch (np->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        return decode_kernel(n, np->kernel.func ? np->kernel.func : (CUfunction)(void *)np->kernel.kern,
                             np->kernel.kernelParams, np->kernel.extra);
    case CU_GRAPH_NODE_TYPE_MEMCPY: return decode_copy(n, &np->memcpy.copyParams);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS mp = {np->memset.dst,         np->memset.pitch, np->memset.value,
                                      np->memset.elementSize, np->memset.width, np->memset.height};
        return decode_memset(n, &mp);
    }
    default: return true;
    }
}

void ct_after_exec_kernel_set(ct_call *call, CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    set_node(call, e, n, decode_kernel_v2, p);
}

void ct_after_exec_kernel_set_v1(ct_call *call, CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    set_node(call, e, n, decode_kernel_v1, p);
}

void ct_after_exec_memcpy_set(ct_call *call, CUgraphExec e, CUgraphNode n, const CUDA_MEMCPY3D *p)
{
    set_node(call, e, n, decode_copy_node, p);
}

void ct_after_exec_memset_set(ct_call *call, CUgraphExec e, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p)
{
    set_node(call, e, n, decode_memset_node, p);
}

void ct_after_exec_node_set(ct_call *call, CUgraphExec e, CUgraphNode n, const CUgraphNodeParams *p)
{
    set_node(call, e, n, decode_any_node, p);
}

/* ---- the launch ------------------------------------------------------------- */

/* Whether this thread's graph launch in flight, once it succeeds, has a
 * write set to release: some of it carried a failure when it was checked.
 * Like a launch's (launch.c), a write set found clean is not looked up
 * again after the driver returns. */
static CT_HOT_TLS bool writes_carried;

/* The device-to-host nodes of a skipped graph would have delivered bytes to
 * the host: each is a read core's ct_skipped_read_rule judges, as every
 * read is judged, and a refused one is poisoned and counted, naming what
 * its source carries once the skip passed the failure on (its source may be
 * untouched by the graph's failure: then what the graph's tainted input
 * carries). */
static void refuse_host_nodes(const ct_call *call, const ct_exec *x, const ct_range *tainted, int error)
{
    ct_refusal *refusal = NULL;
    int returned = ct_skip_result(ct_g.cfg.on_skip, error, CUDA_SUCCESS);
    for (unsigned i = 0; i < x->n_nodes; i++) {
        const ct_node_uses *n = &x->nodes[i];
        if (!n->to_host)
            continue;
        if (!refusal && !(refusal = malloc(sizeof *refusal)))
            return;
        if (ct_skipped_read_rule(ct_g.store, &n->src, &n->host.rows, tainted, refusal) != CT_READ_REFUSE)
            continue;
        bool poisoned = ct_poison(&n->host);
        atomic_fetch_add(&ct_g.refused_reads, 1);
        ct_event_refused(ct_entries[call->id].name, n->src.addr,
                         n->host.rows.width * n->host.rows.height * n->host.rows.depth, refusal, returned, poisoned);
    }
    free(refusal);
}

/* Under the read lock: skip x, named by its read `at` (ct_exec_rule's). */
static bool skip_locked(ct_call *call, const ct_exec *x, ct_failure_id root, int error, size_t at)
{
    const ct_node_uses *node = &x->nodes[x->reads[at].node];
    ct_skip_desc skip = {
        .kernel = node->kernel,
        .needed = x->read_ranges[at].addr,
        .graph = x->handle,
        .node = node->node,
    };
    ct_settle_skip(call, root, error, &skip, x->writes, (unsigned)x->n_writes);
    refuse_host_nodes(call, x, &x->read_ranges[at], error);
    return false;
}

bool ct_before_graph_launch(ct_call *call, CUgraphExec exec, CUstream s)
{
    writes_carried = false;
    if (ct_captured(call, s)) /* launched into a capture: a child graph node, run later */
        return true;
    if (!ct_inputs_checked(ct_summary_tainted(ct_g.summary), call->injected))
        return true;
    uint64_t handle = (uint64_t)(uintptr_t)exec;
    pthread_rwlock_rdlock(&execs_lock);
    const ct_exec *x = find_locked(handle);
    bool carried = x && ct_read_failure(ct_g.store, x->read_ranges, x->n_reads, NULL) != 0;
    writes_carried = x && ct_read_failure(ct_g.store, x->writes, x->n_writes, NULL) != 0;
    pthread_rwlock_unlock(&execs_lock);
    /* The context is a driver call, so it is asked between the two looks,
     * and only when the first found something the rule could skip for. */
    if (!carried)
        return true;
    bool has_context = ct_has_current_context();
    ct_failure_id root = 0;
    int error = 0;
    size_t at = 0;
    bool go = true;
    pthread_rwlock_rdlock(&execs_lock);
    x = find_locked(handle); /* the exec may have changed or gone meanwhile */
    if (x && ct_exec_rule(ct_g.store, x->read_ranges, x->n_reads, has_context, &root, &error, &at) == CT_SKIP)
        go = skip_locked(call, x, root, error, at);
    pthread_rwlock_unlock(&execs_lock);
    return go;
}

void ct_after_graph_launch(ct_call *call, CUgraphExec exec, CUstream s)
{
    if (call->result == CUDA_SUCCESS) {
        ct_flight_slot *kept = ct_inflight_claim();
        kept->launch = (ct_flight_launch){.what = (uint64_t)(uintptr_t)exec, .stream = (uint64_t)(uintptr_t)s};
        ct_inflight_commit(kept, call->id, ct_launch_number_last(), CT_FLIGHT_GRAPH);
    }
    if (call->result == CUDA_SUCCESS && !writes_carried)
        return;
    uint64_t handle = (uint64_t)(uintptr_t)exec;
    pthread_rwlock_rdlock(&execs_lock);
    const ct_exec *x = find_locked(handle);
    if (x && call->result == CUDA_SUCCESS) {
        ct_written(ct_g.store, x->released, x->n_released);
    } else if (x) {
        ct_failure_desc failed = ct_describe(call, call->result);
        failed.stream = (uint64_t)(uintptr_t)s;
        ct_settle_writes(call, x->writes, x->n_writes, &failed);
    }
    pthread_rwlock_unlock(&execs_lock);
}

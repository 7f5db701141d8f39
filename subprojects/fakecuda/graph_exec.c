/*
 * graph_exec.c: executable graphs: instantiation (a snapshot of a graph's
 * nodes and a topological order of them), launch (each node queued on the
 * stream as ordinary work, in that order), per-node parameter changes,
 * whole-graph updates, upload and destruction.
 *
 * Running the nodes one after another in a topological order satisfies
 * every dependency; it is the schedule queue.c's one ordered queue gives any
 * work, and one the driver may choose too. So a launched graph's kernels,
 * copies and memsets are queue items like any other: they run at the next
 * sync point, fault sticky like any other, and plugin kernels see the
 * launch's stream.
 *
 * Invariants:
 * - An executable graph owns copies of its nodes' work, independent of the
 *   graph (which may change or be destroyed); a launch queues copies of those.
 * - node[] is in the graph's creation order, and order[] a topological order
 *   of it (depth first over dependencies, roots taken in creation order, so
 *   a captured chain runs in capture order).
 * - Executable nodes name their graph nodes by serial, never by handle: a
 *   destroyed node's slot may hold another node.
 * - launch: fault rules (FAKECUDA_FAULTS) count each kernel node when the
 *   graph launches, in order; a rule's code fails the launch with nothing
 *   queued, "fault" makes that kernel's queued work fault. A conditional
 *   body's kernels are not counted: how often they run is known only then.
 * - A conditional node's work (FC_W_COND) owns its bodies' work, built at
 *   instantiation (or update) from the body graphs as they are then, each
 *   body in a topological order. It runs as one queue item: it reads the
 *   condition cell when the queue reaches it, runs the chosen body's items
 *   in order as queued items run (a fault is sticky and ends it), and a
 *   while node reads the cell again after each pass.
 * - A launch first stores each CU_GRAPH_COND_ASSIGN_DEFAULT handle's
 *   default into its cell (a queued 4-byte memset), so the reset is
 *   ordered with the work before and after it on the stream.
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FC_INSTANTIATE_FLAGS                                                                \
    (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | \
     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

static CUgraphExec fc_exec_resolve(CUgraphExec e)
{
    return fc_obj_valid(e, FC_K_GEXEC) ? e : NULL;
}

static void fc_exec_free(CUgraphExec e)
{
    for (size_t i = 0; e->node && i < e->n; i++) {
        fc_work_discard(&e->node[i].op);
        free(e->node[i].deps);
    }
    free(e->node);
    free(e->order);
    free(e->resets);
    fc_obj_free(e);
}

/* Positions in g's creation order, kept in each node's index. */
static void fc_index_nodes(CUgraph g)
{
    for (size_t i = 0; i < g->nodes.n; i++)
        g->nodes.v[i]->index = i;
}

/* Depth first over dependencies, with an explicit stack (a chain may be as long as the graph). */
static CUresult fc_topo_order(CUgraph g, size_t *order, CUgraphNode *bad)
{
    enum { WHITE, GRAY, BLACK };
    typedef struct {
        size_t node, next;
    } frame;
    size_t n = g->nodes.n, out = 0;
    unsigned char *color = calloc(n ? n : 1, 1);
    frame *stack = malloc((n ? n : 1) * sizeof *stack);
    CUresult r = color && stack ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    fc_index_nodes(g);
    for (size_t root = 0; r == CUDA_SUCCESS && root < n; root++) {
        size_t top = 0;
        if (color[root] != WHITE)
            continue;
        color[root] = GRAY;
        stack[top++] = (frame){root, 0};
        while (top > 0 && r == CUDA_SUCCESS) {
            frame *f = &stack[top - 1];
            const fc_nodes *deps = &g->nodes.v[f->node]->deps;
            if (f->next == deps->n) {
                color[f->node] = BLACK;
                order[out++] = f->node;
                top--;
                continue;
            }
            CUgraphNode dep = deps->v[f->next++];
            size_t d = dep->index;
            assert(d < n && g->nodes.v[d] == dep && "a dependency is a node of the same graph");
            if (color[d] == GRAY) {
                *bad = g->nodes.v[d];
                r = CUDA_ERROR_INVALID_VALUE; /* a cycle */
            } else if (color[d] == WHITE) {
                assert(top < n && "a node is pushed once, when it turns gray");
                color[d] = GRAY;
                stack[top++] = (frame){d, 0};
            }
        }
    }
    assert((r != CUDA_SUCCESS || out == n) && "order[] holds every node once");
    free(color);
    free(stack);
    return r;
}

/* ---- conditional nodes ------------------------------------------------------------ */

struct fc_body {
    fc_work *item; /* owned; a body's empty nodes are left out */
    size_t n;
};

static CUresult fc_cond_work(fc_work *op, CUgraphNode n);

/* The work a node runs in an executable graph: a copy of its template, or
   for a conditional node, its bodies' work. Under fc_graph_index_lock. */
static CUresult fc_exec_op(fc_work *op, CUgraphNode src)
{
    return src->type == CU_GRAPH_NODE_TYPE_CONDITIONAL ? fc_cond_work(op, src) : fc_work_clone(op, &src->op);
}

static void fc_body_discard(fc_body *b)
{
    for (size_t i = 0; i < b->n; i++)
        fc_work_discard(&b->item[i]);
    free(b->item);
    *b = (fc_body){0};
}

void fc_cond_discard(fc_cond *c)
{
    for (unsigned i = 0; c->body && i < c->nbody; i++)
        fc_body_discard(&c->body[i]);
    free(c->body);
    c->body = NULL;
    c->nbody = 0;
}

static CUresult fc_body_build(fc_body *b, CUgraph g)
{
    CUgraphNode bad = NULL;
    size_t n = g->nodes.n, *order = malloc((n ? n : 1) * sizeof *order);
    b->item = calloc(n ? n : 1, sizeof *b->item);
    CUresult r = order && b->item ? fc_topo_order(g, order, &bad) : CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t k = 0; r == CUDA_SUCCESS && k < n; k++) {
        CUgraphNode src = g->nodes.v[order[k]];
        if (src->type != CU_GRAPH_NODE_TYPE_EMPTY && (r = fc_exec_op(&b->item[b->n], src)) == CUDA_SUCCESS)
            b->n++;
    }
    free(order);
    return r;
}

static CUresult fc_cond_work(fc_work *op, CUgraphNode n)
{
    const CUDA_CONDITIONAL_NODE_PARAMS *p = &n->cond;
    *op = (fc_work){.kind = FC_W_COND, .u.cond = {.cell = p->handle, .type = p->type}};
    fc_cond *c = &op->u.cond;
    if (!(c->body = calloc(p->size, sizeof *c->body)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->nbody = p->size;
    CUresult r = CUDA_SUCCESS;
    for (unsigned i = 0; r == CUDA_SUCCESS && i < p->size; i++)
        r = fc_body_build(&c->body[i], p->phGraph_out[i]);
    if (r != CUDA_SUCCESS)
        fc_cond_discard(c);
    return r;
}

/* dst starts as a copy of src's fields; it gets its own bodies. */
CUresult fc_cond_clone(fc_cond *dst, const fc_cond *src)
{
    dst->nbody = 0;
    if (!(dst->body = calloc(src->nbody ? src->nbody : 1, sizeof *dst->body)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    dst->nbody = src->nbody;
    for (unsigned i = 0; i < src->nbody; i++) {
        const fc_body *from = &src->body[i];
        fc_body *to = &dst->body[i];
        bool ok = !from->n || (to->item = calloc(from->n, sizeof *to->item));
        for (; ok && to->n < from->n; to->n++)
            ok = fc_work_clone(&to->item[to->n], &from->item[to->n]) == CUDA_SUCCESS;
        if (!ok) {
            fc_cond_discard(dst);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    return CUDA_SUCCESS;
}

static bool fc_cond_read(CUdeviceptr cell, uint32_t *v)
{
    fc_mem_rdlock();
    const void *p = fc_mem_view_locked(cell, sizeof *v);
    if (p)
        memcpy(v, p, sizeof *v);
    fc_mem_unlock();
    return p != NULL;
}

/* The body a condition value selects, or NULL for none. */
static const fc_body *fc_cond_pick(const fc_cond *c, uint32_t v)
{
    assert(c->nbody > 0 && (c->type != CU_GRAPH_COND_TYPE_WHILE || c->nbody == 1) &&
           (c->type != CU_GRAPH_COND_TYPE_IF || c->nbody <= 2) &&
           "a conditional's shape was checked when its node was made");
    switch (c->type) {
    case CU_GRAPH_COND_TYPE_IF: return v ? &c->body[0] : c->nbody == 2 ? &c->body[1] : NULL;
    case CU_GRAPH_COND_TYPE_WHILE: return v ? &c->body[0] : NULL;
    default: return v < c->nbody ? &c->body[v] : NULL;
    }
}

/* Under q's exec mutex, as the queue item it is (a cell that is not device
   memory faults like a kernel's bad address). */
CUresult fc_cond_run(fc_queue *q, const fc_cond *c)
{
    for (;;) {
        uint32_t v;
        if (!fc_cond_read(c->cell, &v))
            return CUDA_ERROR_ILLEGAL_ADDRESS;
        const fc_body *b = fc_cond_pick(c, v);
        for (size_t i = 0; b && i < b->n; i++) {
            fc_work w;
            CUresult r = fc_work_clone(&w, &b->item[i]);
            if (r != CUDA_SUCCESS)
                return r;
            if (w.kind == FC_W_KERNEL)
                w.u.kernel.stream = c->stream;
            else if (w.kind == FC_W_COND)
                w.u.cond.stream = c->stream;
            fc_work_run(q, &w);
            if (fc_sticky() != CUDA_SUCCESS)
                return CUDA_SUCCESS; /* already reported */
        }
        if (!b || c->type != CU_GRAPH_COND_TYPE_WHILE)
            return CUDA_SUCCESS;
    }
}

/* The graph's handles that a launch resets. */
static CUresult fc_exec_resets(CUgraphExec e, CUgraph g)
{
    e->resets = malloc((g->nhandles ? g->nhandles : 1) * sizeof *e->resets);
    if (!e->resets)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < g->nhandles; i++)
        if (g->handles[i].reset)
            e->resets[e->nresets++] = g->handles[i];
    return CUDA_SUCCESS;
}

static CUresult fc_queue_resets(CUcontext ctx, CUstream s, CUgraphExec e)
{
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0; r == CUDA_SUCCESS && i < e->nresets; i++) {
        fc_work w = {.kind = FC_W_FILL};
        r = fc_fill_make(&w.u.fill, e->resets[i].cell, 0, e->resets[i].value, 4, 1, 1);
        if (r == CUDA_SUCCESS)
            r = fc_submit(ctx, s, &w, false);
    }
    return r;
}

static CUresult fc_exec_node_from(fc_exec_node *x, CUgraphNode src)
{
    x->serial = src->serial;
    x->type = src->type;
    x->ndeps = src->deps.n;
    if (!(x->deps = malloc((x->ndeps ? x->ndeps : 1) * sizeof *x->deps)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t j = 0; j < x->ndeps; j++)
        x->deps[j] = src->deps.v[j]->index;
    return fc_exec_op(&x->op, src);
}

static CUresult fc_exec_build(CUgraphExec e, CUgraph g, CUgraphNode *bad)
{
    size_t n = g->nodes.n;
    e->n = n;
    e->node = calloc(n ? n : 1, sizeof *e->node);
    e->order = malloc((n ? n : 1) * sizeof *e->order);
    if (!e->node || !e->order)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_graph_index_lock();
    CUresult r = fc_topo_order(g, e->order, bad);
    for (size_t i = 0; r == CUDA_SUCCESS && i < n; i++)
        r = fc_exec_node_from(&e->node[i], g->nodes.v[i]);
    if (r == CUDA_SUCCESS)
        r = fc_exec_resets(e, g);
    fc_graph_index_unlock();
    return r;
}

static CUresult fc_check_instantiate(CUgraphExec *out, CUgraph g, cuuint64_t flags,
                                     const CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    if (!out || !fc_obj_valid(g, FC_K_GRAPH) || g->capturing || (flags & ~(cuuint64_t)FC_INSTANTIATE_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
        return CUDA_ERROR_NOT_SUPPORTED; /* no device-side launch without device code */
    if (!(flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD))
        return CUDA_SUCCESS;
    CUcontext ctx;
    CUstream st;
    return p ? fc_resolve_stream(p->hUploadStream, &ctx, &st) : CUDA_ERROR_INVALID_VALUE;
}

static CUgraphInstantiateResult fc_instantiate_result(CUresult r, CUgraphNode bad)
{
    if (r == CUDA_SUCCESS)
        return CUDA_GRAPH_INSTANTIATE_SUCCESS;
    if (bad)
        return CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
    return r == CUDA_ERROR_NOT_SUPPORTED ? CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED
                                         : CUDA_GRAPH_INSTANTIATE_ERROR;
}

/* Nothing to upload: the work is on the host. Flags are kept; none changes what runs. */
CUresult fc_graph_instantiate(CUgraphExec *out, CUgraph g, cuuint64_t flags, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    CUgraphNode bad = NULL;
    CUresult r = fc_check_instantiate(out, g, flags, p);
    CUgraphExec e = r == CUDA_SUCCESS ? fc_obj_new(FC_P_GEXEC, FC_K_GEXEC, NULL) : NULL;
    if (r == CUDA_SUCCESS && !e)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (e && (r = fc_exec_build(e, g, &bad)) != CUDA_SUCCESS)
        fc_exec_free(e);
    if (r == CUDA_SUCCESS) {
        e->flags = flags;
        *out = e;
    }
    if (p) {
        p->hErrNode_out = bad;
        p->result_out = fc_instantiate_result(r, bad);
    }
    return r;
}

CUresult fc_graph_instantiate_params(CUgraphExec *out, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    return p ? fc_graph_instantiate(out, g, p->flags, p) : CUDA_ERROR_INVALID_VALUE;
}

CUresult fc_graph_instantiate_v1(CUgraphExec *out, CUgraph g, CUgraphNode *err, char *log, size_t log_size)
{
    CUDA_GRAPH_INSTANTIATE_PARAMS p = {0};
    CUresult r = fc_graph_instantiate(out, g, 0, &p);
    if (err)
        *err = p.hErrNode_out;
    if (log && log_size)
        snprintf(log, log_size, "%s", p.hErrNode_out ? "the graph has a cycle" : "");
    return r;
}

/* ---- launch --------------------------------------------------------------------- */

/* Counts the launch: rules for every kernel node, in order, before anything is queued. */
static CUresult fc_launch_rules(CUgraphExec e, fc_action *act)
{
    for (size_t k = 0; k < e->n; k++) {
        size_t i = e->order[k];
        if (e->node[i].type != CU_GRAPH_NODE_TYPE_KERNEL)
            continue;
        act[i] = fc_faults_launch(e->node[i].op.u.kernel.k->name);
        if (act[i].code != CUDA_SUCCESS)
            return act[i].code;
    }
    return CUDA_SUCCESS;
}

static CUresult fc_exec_queue(CUcontext ctx, CUstream s, const fc_exec_node *x, fc_action a)
{
    fc_work w;
    if (x->type == CU_GRAPH_NODE_TYPE_EMPTY)
        return CUDA_SUCCESS;
    CUresult r = fc_work_clone(&w, &x->op);
    if (r != CUDA_SUCCESS)
        return r;
    if (w.kind == FC_W_KERNEL)
        w.u.kernel.stream = s;
    else if (w.kind == FC_W_COND)
        w.u.cond.stream = s;
    w.fault = a.fault;
    return fc_submit(ctx, s, &w, false);
}

CUresult fc_graph_launch(CUgraphExec e, CUstream s)
{
    CUcontext ctx;
    CUstream st;
    if (!fc_exec_resolve(e))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r != CUDA_SUCCESS)
        return r;
    fc_action *act = calloc(e->n ? e->n : 1, sizeof *act);
    if (!act)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (!fc_capturing(s)) /* captured, the kernels count when the outer graph launches */
        r = fc_launch_rules(e, act);
    if (r == CUDA_SUCCESS)
        r = fc_queue_resets(ctx, s, e);
    for (size_t k = 0; r == CUDA_SUCCESS && k < e->n; k++)
        r = fc_exec_queue(ctx, s, &e->node[e->order[k]], act[e->order[k]]);
    free(act);
    return r;
}

CUresult fc_graph_upload(CUgraphExec e, CUstream s)
{
    CUcontext ctx;
    CUstream st;
    return fc_exec_resolve(e) ? fc_resolve_stream(s, &ctx, &st) : CUDA_ERROR_INVALID_VALUE;
}

/* Queued launches hold their own copies: destroying right after a launch is safe. */
CUresult fc_graph_exec_destroy(CUgraphExec e)
{
    if (!fc_exec_resolve(e))
        return CUDA_ERROR_INVALID_VALUE;
    fc_exec_free(e);
    return CUDA_SUCCESS;
}

CUresult fc_graph_exec_flags(CUgraphExec e, cuuint64_t *flags)
{
    if (!fc_exec_resolve(e) || !flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = e->flags;
    return CUDA_SUCCESS;
}

/* ---- changing what runs ---------------------------------------------------------- */

static fc_exec_node *fc_exec_node_of(CUgraphExec e, CUgraphNode n)
{
    if (!fc_exec_resolve(e) || !fc_node_resolve(n))
        return NULL;
    for (size_t i = 0; i < e->n; i++)
        if (e->node[i].serial == n->serial)
            return &e->node[i];
    return NULL;
}

/* Later launches run the new parameters; work already queued keeps the old. */
CUresult fc_exec_set(CUgraphExec e, CUgraphNode n, CUgraphNodeType type, const void *params, bool v1)
{
    fc_work op;
    fc_exec_node *x = fc_exec_node_of(e, n);
    if (!x || x->type != type)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_node_op(&op, type, params, v1);
    if (r == CUDA_SUCCESS) {
        fc_work_discard(&x->op);
        x->op = op;
    }
    return r;
}

/* Memcpy and memset nodes name a context too: NULL or a live one. */
CUresult fc_exec_set_in(CUgraphExec e, CUgraphNode n, CUgraphNodeType type, const void *params, CUcontext ctx)
{
    CUresult r = fc_check_node_ctx(ctx);
    return r == CUDA_SUCCESS ? fc_exec_set(e, n, type, params, false) : r;
}

CUresult fc_exec_set_params(CUgraphExec e, CUgraphNode n, CUgraphNodeParams *p)
{
    fc_node_params typed;
    CUresult r = fc_node_params_from(p, &typed);
    return r == CUDA_SUCCESS ? fc_exec_set(e, n, p->type, &typed, false) : r;
}

static bool fc_same_deps(CUgraphNode gn, const fc_exec_node *x)
{
    if (gn->deps.n != x->ndeps)
        return false;
    for (size_t j = 0; j < gn->deps.n; j++) {
        bool found = false;
        for (size_t k = 0; !found && k < x->ndeps; k++)
            found = x->deps[k] == gn->deps.v[j]->index;
        if (!found)
            return false;
    }
    return true;
}

static CUresult fc_update_check_locked(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *res);

/* The graph must have the executable graph's topology: nodes paired in creation order. */
static CUresult fc_update_check(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *res)
{
    fc_graph_index_lock();
    CUresult r = fc_update_check_locked(e, g, res);
    fc_graph_index_unlock();
    return r;
}

static CUresult fc_update_check_locked(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *res)
{
    if (!fc_exec_resolve(e) || !fc_obj_valid(g, FC_K_GRAPH) || g->capturing)
        return CUDA_ERROR_INVALID_VALUE;
    res->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    if (g->nodes.n != e->n)
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    fc_index_nodes(g);
    for (size_t i = 0; i < e->n; i++) {
        CUgraphNode gn = g->nodes.v[i];
        res->errorNode = gn;
        if (gn->type != e->node[i].type) {
            res->result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
            return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
        }
        if (!fc_same_deps(gn, &e->node[i]))
            return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    *res = (CUgraphExecUpdateResultInfo){CU_GRAPH_EXEC_UPDATE_SUCCESS, NULL, NULL};
    return CUDA_SUCCESS;
}

/* All of the graph's work is copied before any of the executable graph's is replaced. */
static CUresult fc_update_apply(CUgraphExec e, CUgraph g)
{
    fc_work *ops = calloc(e->n ? e->n : 1, sizeof *ops);
    CUresult r = ops ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    size_t done = 0;
    fc_graph_index_lock();
    while (r == CUDA_SUCCESS && done < e->n) {
        r = fc_exec_op(&ops[done], g->nodes.v[done]);
        done++;
    }
    fc_graph_index_unlock();
    for (size_t i = 0; i < done; i++) {
        if (r != CUDA_SUCCESS) {
            fc_work_discard(&ops[i]);
            continue;
        }
        fc_work_discard(&e->node[i].op);
        e->node[i].op = ops[i];
    }
    free(ops);
    return r;
}

CUresult fc_graph_exec_update(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
    CUgraphExecUpdateResultInfo res = {CU_GRAPH_EXEC_UPDATE_ERROR, NULL, NULL};
    CUresult r = fc_update_check(e, g, &res);
    if (r == CUDA_SUCCESS && (r = fc_update_apply(e, g)) != CUDA_SUCCESS)
        res = (CUgraphExecUpdateResultInfo){CU_GRAPH_EXEC_UPDATE_ERROR, NULL, NULL};
    if (info)
        *info = res;
    return r;
}

CUresult fc_graph_exec_update_v1(CUgraphExec e, CUgraph g, CUgraphNode *err, CUgraphExecUpdateResult *result)
{
    CUgraphExecUpdateResultInfo info;
    CUresult r = fc_graph_exec_update(e, g, &info);
    if (err)
        *err = info.errorNode;
    if (result)
        *result = info.result;
    return r;
}

/*
 * graph.c: graphs and their nodes, built explicitly (cuGraphAdd*Node and
 * dependencies) or by stream capture (capture.c adds through fc_graph_add),
 * the queries and parameter changes on them, and clones.
 *
 * A node holds the work it stands for as a template work item (fc_work,
 * the queue's own item): a kernel with its parameters copied when the node
 * is made (the driver copies kernelParams too, so the caller may reuse its
 * buffers at once), a copy or memset with its shape checked, a host
 * function. Instantiating copies the templates (graph_exec.c) and launching
 * queues copies of those, so a graph, its executable graphs and the queued
 * work never share memory.
 *
 * Invariants:
 * - A node belongs to one graph and is in its list once, in creation order;
 *   its dependencies are nodes of the same graph, each at most once;
 *   destroying a node removes every edge to it.
 * - A node's template owns its parameters and never holds staging: a host
 *   source is read when a launch queues the copy. An empty node's template
 *   is unused (zero); nothing looks at it but by the node's type.
 * - A kernel node's argv points into its own template's parameters, and is
 *   rebuilt whenever the template is replaced.
 * - A clone's node names the node it copies by serial (origin), never by
 *   handle: the original may be destroyed first.
 * - A conditional node owns its body graphs (cond.phGraph_out, cond.size of
 *   them), each naming the node as its owner: only the node destroys them.
 *   Its template work is unused; instantiation builds the conditional's
 *   work from the bodies as they are then (graph_exec.c).
 * - A conditional handle is the device address of a 4-byte cell placed for
 *   the driver in the handle's context and kept until the context goes, so
 *   clones and executable graphs, which outlive the graph, never read a
 *   freed cell; the graph lists its handles for the launch-time resets.
 * - Graph objects are not internally synchronized, as the driver's are not:
 *   the caller serialises calls that change one graph (capture.c serialises
 *   its own additions under its lock). Instantiating, updating from and
 *   cloning only read it but for the nodes' index scratch, which they
 *   write under fc_graph_index_lock, so those may overlap (a program's
 *   threads instantiating one graph at once: tests/integration's
 *   graph_reuse).
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t next_serial;

/* ---- node lists ------------------------------------------------------------ */

bool fc_nodes_add(fc_nodes *l, CUgraphNode n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4;
        CUgraphNode *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return false;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = n;
    return true;
}

bool fc_nodes_has(const fc_nodes *l, CUgraphNode n)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == n)
            return true;
    return false;
}

bool fc_nodes_remove(fc_nodes *l, CUgraphNode n)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == n) {
            memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
            l->n--;
            assert(!fc_nodes_has(l, n) && "a node is in its graph's list, or a dependency set, once");
            return true;
        }
    return false;
}

bool fc_nodes_set(fc_nodes *l, const CUgraphNode *v, size_t n)
{
    l->n = 0;
    for (size_t i = 0; i < n; i++)
        if (!fc_nodes_add(l, v[i]))
            return false;
    return true;
}

void fc_nodes_free(fc_nodes *l)
{
    free(l->v);
    *l = (fc_nodes){0};
}

/* ---- graphs ------------------------------------------------------------------ */

static CUgraph fc_graph_resolve(CUgraph g)
{
    return fc_obj_valid(g, FC_K_GRAPH) ? g : NULL;
}

CUgraphNode fc_node_resolve(CUgraphNode n)
{
    return fc_obj_valid(n, FC_K_GNODE) ? n : NULL;
}

static CUgraphNode fc_node_of_type(CUgraphNode n, CUgraphNodeType type)
{
    return fc_node_resolve(n) && n->type == type ? n : NULL;
}

CUresult fc_graph_create(CUgraph *out, unsigned flags)
{
    if (!out || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraph g = fc_obj_new(FC_P_GRAPH, FC_K_GRAPH, NULL);
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = g;
    return CUDA_SUCCESS;
}

static CUresult fc_graph_destroy_any(CUgraph g);

static void fc_node_free(CUgraphNode n)
{
    for (unsigned i = 0; n->type == CU_GRAPH_NODE_TYPE_CONDITIONAL && n->cond.phGraph_out && i < n->cond.size; i++)
        if (n->cond.phGraph_out[i]) {
            assert(n->cond.phGraph_out[i]->owner == n && "a conditional node's bodies are its own");
            fc_graph_destroy_any(n->cond.phGraph_out[i]);
        }
    free(n->cond.phGraph_out);
    fc_work_discard(&n->op);
    fc_nodes_free(&n->deps);
    free(n->argv);
    fc_obj_free(n);
}

static CUresult fc_graph_destroy_any(CUgraph g)
{
    if (!fc_graph_resolve(g) || g->capturing)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < g->nodes.n; i++)
        fc_node_free(g->nodes.v[i]);
    fc_nodes_free(&g->nodes);
    free(g->handles);
    fc_obj_free(g);
    return CUDA_SUCCESS;
}

/* A conditional node's body goes with its node, never on its own. */
CUresult fc_graph_destroy(CUgraph g)
{
    return fc_graph_resolve(g) && !g->owner ? fc_graph_destroy_any(g) : CUDA_ERROR_INVALID_VALUE;
}

/* ---- conditional handles and nodes ------------------------------------------------ */

static bool fc_cond_store(CUdeviceptr cell, unsigned value)
{
    fc_mem_rdlock();
    unsigned char *p = fc_mem_view_locked(cell, sizeof value);
    if (p)
        memcpy(p, &value, sizeof value);
    fc_mem_unlock();
    return p != NULL;
}

CUresult fc_cond_handle_create(CUgraphConditionalHandle *out, CUgraph g, CUcontext ctx, unsigned value, unsigned flags)
{
    CUcontext cur;
    if (!out || !fc_graph_resolve(g) || (flags & ~(unsigned)CU_GRAPH_COND_ASSIGN_DEFAULT))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = ctx ? fc_check_node_ctx(ctx) : fc_current(&cur);
    fc_cond_handle h = {.value = value, .reset = flags & CU_GRAPH_COND_ASSIGN_DEFAULT};
    if (r == CUDA_SUCCESS)
        r = fc_mem_alloc_global(&h.cell, sizeof value, ctx ? ctx : cur);
    if (r != CUDA_SUCCESS)
        return r;
    fc_cond_handle *v = realloc(g->handles, (g->nhandles + 1) * sizeof *v);
    if (!v || !fc_cond_store(h.cell, value)) {
        if (v)
            g->handles = v;
        fc_mem_free_now(h.cell);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    g->handles = v;
    g->handles[g->nhandles++] = h;
    *out = h.cell;
    return CUDA_SUCCESS;
}

static bool fc_cond_shape_ok(const CUDA_CONDITIONAL_NODE_PARAMS *c)
{
    switch (c->type) {
    case CU_GRAPH_COND_TYPE_IF: return c->size == 1 || c->size == 2;
    case CU_GRAPH_COND_TYPE_WHILE: return c->size == 1;
    case CU_GRAPH_COND_TYPE_SWITCH: return c->size > 0;
    default: return false;
    }
}

/* Empty body graphs, owned by node n; their array is handed out in p->phGraph_out. */
static CUresult fc_cond_bodies(CUgraphNode n, CUDA_CONDITIONAL_NODE_PARAMS *p)
{
    n->cond = *p;
    if (!(n->cond.phGraph_out = calloc(p->size, sizeof *n->cond.phGraph_out)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned i = 0; i < p->size; i++) {
        CUresult r = fc_graph_create(&n->cond.phGraph_out[i], 0);
        if (r != CUDA_SUCCESS)
            return r;
        n->cond.phGraph_out[i]->owner = n;
    }
    p->phGraph_out = n->cond.phGraph_out;
    return CUDA_SUCCESS;
}

static CUresult fc_graph_add_cond(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                                  CUDA_CONDITIONAL_NODE_PARAMS *p)
{
    fc_work none = {0};
    if (!p->handle || !fc_cond_shape_ok(p))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_check_node_ctx(p->ctx);
    if (r == CUDA_SUCCESS)
        r = fc_graph_add(out, g, deps, n, CU_GRAPH_NODE_TYPE_CONDITIONAL, &none);
    if (r == CUDA_SUCCESS && (r = fc_cond_bodies(*out, p)) != CUDA_SUCCESS) {
        fc_nodes_remove(&g->nodes, *out); /* new: nothing depends on it yet */
        fc_node_free(*out);
    }
    return r;
}

/* ---- the work a node stands for -------------------------------------------------- */

static CUresult fc_kernel_op(fc_work *op, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    bool by_kernel = !p->func && p->kern;
    CUfunction f = by_kernel ? (CUfunction)(void *)p->kern : p->func;
    fc_dims d = {p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ};
    CUresult r = fc_kernel_work(op, f, d, p->sharedMemBytes, p->kernelParams, p->extra, false);
    if (r == CUDA_SUCCESS)
        op->u.kernel.by_kernel = by_kernel;
    return r;
}

static CUDA_KERNEL_NODE_PARAMS fc_kernel_params_v2(const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    return (CUDA_KERNEL_NODE_PARAMS){p->func,         p->gridDimX,  p->gridDimY,  p->gridDimZ,
                                     p->blockDimX,    p->blockDimY, p->blockDimZ, p->sharedMemBytes,
                                     p->kernelParams, p->extra,     NULL,         NULL};
}

static CUresult fc_copy_op(fc_work *op, const CUDA_MEMCPY3D *p)
{
    *op = (fc_work){.kind = FC_W_COPY};
    CUresult r = fc_copy_from_3d(&op->u.copy, p);
    return r == CUDA_SUCCESS ? fc_copy_check(&op->u.copy) : r;
}

/* The pitch is unused for one row. */
static CUresult fc_fill_op(fc_work *op, const CUDA_MEMSET_NODE_PARAMS *p)
{
    if (!p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) || !p->width || !p->height)
        return CUDA_ERROR_INVALID_VALUE;
    *op = (fc_work){.kind = FC_W_FILL};
    return fc_fill_make(&op->u.fill, p->dst, p->height > 1 ? p->pitch : 0, p->value, p->elementSize, p->width,
                        p->height);
}

static CUresult fc_host_op(fc_work *op, const CUDA_HOST_NODE_PARAMS *p)
{
    if (!p || !p->fn)
        return CUDA_ERROR_INVALID_VALUE;
    *op = (fc_work){.kind = FC_W_HOST, .u.host = {.fn = p->fn, .user = p->userData}};
    return CUDA_SUCCESS;
}

CUresult fc_node_op(fc_work *op, CUgraphNodeType type, const void *params, bool v1)
{
    CUDA_KERNEL_NODE_PARAMS k;
    switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        if (v1 && params)
            k = fc_kernel_params_v2(params);
        return fc_kernel_op(op, v1 && params ? &k : params);
    case CU_GRAPH_NODE_TYPE_MEMCPY: return fc_copy_op(op, params);
    case CU_GRAPH_NODE_TYPE_MEMSET: return fc_fill_op(op, params);
    case CU_GRAPH_NODE_TYPE_HOST: return fc_host_op(op, params);
    case CU_GRAPH_NODE_TYPE_EMPTY: *op = (fc_work){0}; return CUDA_SUCCESS;
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
}

CUresult fc_node_params_from(const CUgraphNodeParams *p, fc_node_params *out)
{
    if (!p || p->reserved0[0] || p->reserved0[1] || p->reserved0[2] || p->reserved2)
        return CUDA_ERROR_INVALID_VALUE;
    const CUDA_KERNEL_NODE_PARAMS_v3 *k = &p->kernel;
    const CUDA_MEMSET_NODE_PARAMS_v2 *m = &p->memset;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        out->kernel = (CUDA_KERNEL_NODE_PARAMS){k->func,         k->gridDimX,  k->gridDimY,  k->gridDimZ,
                                                k->blockDimX,    k->blockDimY, k->blockDimZ, k->sharedMemBytes,
                                                k->kernelParams, k->extra,     k->kern,      k->ctx};
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (p->memcpy.flags || p->memcpy.reserved)
            return CUDA_ERROR_INVALID_VALUE;
        out->copy = p->memcpy.copyParams;
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_MEMSET:
        out->memset = (CUDA_MEMSET_NODE_PARAMS){m->dst, m->pitch, m->value, m->elementSize, m->width, m->height};
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_HOST:
        out->host = (CUDA_HOST_NODE_PARAMS){p->host.fn, p->host.userData};
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_EMPTY: return CUDA_SUCCESS;
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
}

/* A kernel node's kernelParams, pointing into its template's parameter buffer. */
static bool fc_node_argv(CUgraphNode n)
{
    free(n->argv);
    n->argv = NULL;
    if (n->type != CU_GRAPH_NODE_TYPE_KERNEL || n->op.u.kernel.k->nparams == 0)
        return true;
    const fc_kernel *k = n->op.u.kernel.k;
    if (!(n->argv = malloc(k->nparams * sizeof *n->argv)))
        return false;
    unsigned char *base = fc_kwork_params(&n->op.u.kernel);
    for (unsigned i = 0; i < k->nparams; i++)
        n->argv[i] = base + k->param[i].offset;
    return true;
}

/* ---- adding nodes -------------------------------------------------------------- */

/* Dependencies must be distinct nodes of g. */
CUresult fc_graph_check_deps(CUgraph g, const CUgraphNode *deps, size_t n)
{
    if (!fc_graph_resolve(g) || (n && !deps))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++) {
        if (!fc_node_resolve(deps[i]) || deps[i]->graph != g)
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i])
                return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* A new node of g after deps, running op; takes op whatever the outcome. */
CUresult fc_graph_add(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n, CUgraphNodeType type, fc_work *op)
{
    CUresult r = out ? fc_graph_check_deps(g, deps, n) : CUDA_ERROR_INVALID_VALUE;
    CUgraphNode node = r == CUDA_SUCCESS ? fc_obj_new(FC_P_GNODE, FC_K_GNODE, NULL) : NULL;
    if (!node) {
        fc_work_discard(op);
        return r == CUDA_SUCCESS ? CUDA_ERROR_OUT_OF_MEMORY : r;
    }
    node->graph = g;
    node->type = type;
    node->serial = atomic_fetch_add(&next_serial, 1) + 1;
    node->op = *op;
    if (!fc_nodes_set(&node->deps, deps, n) || !fc_node_argv(node) || !fc_nodes_add(&g->nodes, node)) {
        fc_node_free(node);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = node;
    return CUDA_SUCCESS;
}

static CUresult fc_graph_add_typed(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n, CUgraphNodeType type,
                                   const void *params, bool v1)
{
    fc_work op;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_node_op(&op, type, params, v1);
    return r == CUDA_SUCCESS ? fc_graph_add(out, g, deps, n, type, &op) : r;
}

CUresult fc_graph_add_kernel(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                             const CUDA_KERNEL_NODE_PARAMS *p)
{
    return fc_graph_add_typed(out, g, deps, n, CU_GRAPH_NODE_TYPE_KERNEL, p, false);
}

CUresult fc_graph_add_kernel_v1(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                                const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    return fc_graph_add_typed(out, g, deps, n, CU_GRAPH_NODE_TYPE_KERNEL, p, true);
}

/* One device: a node's context may be NULL (the current one) or any live context. */
CUresult fc_check_node_ctx(CUcontext ctx)
{
    return !ctx || fc_obj_valid(ctx, FC_K_CTX) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult fc_graph_add_memcpy(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n, const CUDA_MEMCPY3D *p,
                             CUcontext ctx)
{
    CUresult r = fc_check_node_ctx(ctx);
    return r == CUDA_SUCCESS ? fc_graph_add_typed(out, g, deps, n, CU_GRAPH_NODE_TYPE_MEMCPY, p, false) : r;
}

CUresult fc_graph_add_memset(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                             const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    CUresult r = fc_check_node_ctx(ctx);
    return r == CUDA_SUCCESS ? fc_graph_add_typed(out, g, deps, n, CU_GRAPH_NODE_TYPE_MEMSET, p, false) : r;
}

CUresult fc_graph_add_host(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                           const CUDA_HOST_NODE_PARAMS *p)
{
    return fc_graph_add_typed(out, g, deps, n, CU_GRAPH_NODE_TYPE_HOST, p, false);
}

CUresult fc_graph_add_empty(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n)
{
    return fc_graph_add_typed(out, g, deps, n, CU_GRAPH_NODE_TYPE_EMPTY, NULL, false);
}

/* Only ordinary (all-zero) edge data: every edge is a full dependency here. */
bool fc_edges_default(const CUgraphEdgeData *e, size_t n)
{
    static const CUgraphEdgeData zero;
    for (size_t i = 0; e && i < n; i++)
        if (memcmp(&e[i], &zero, sizeof zero) != 0)
            return false;
    return true;
}

CUresult fc_graph_add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,
                           CUgraphNodeParams *p)
{
    fc_node_params typed;
    if (!fc_edges_default(edges, n))
        return CUDA_ERROR_NOT_SUPPORTED;
    if (p && p->type == CU_GRAPH_NODE_TYPE_CONDITIONAL && !p->reserved0[0] && !p->reserved0[1] && !p->reserved0[2] &&
        !p->reserved2)
        return fc_graph_add_cond(out, g, deps, n, &p->conditional);
    CUresult r = fc_node_params_from(p, &typed);
    return r == CUDA_SUCCESS ? fc_graph_add_typed(out, g, deps, n, p->type, &typed, false) : r;
}

/* ---- dependencies ------------------------------------------------------------- */

static bool fc_edge_repeated(const CUgraphNode *from, const CUgraphNode *to, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (from[j] == from[i] && to[j] == to[i])
            return true;
    return false;
}

/* Every edge is checked before any changes: an edge to add must be new, one to remove must exist. */
static CUresult fc_check_edges(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, size_t n, bool add)
{
    for (size_t i = 0; i < n; i++) {
        if (!fc_node_resolve(from[i]) || !fc_node_resolve(to[i]) || from[i]->graph != g || to[i]->graph != g ||
            from[i] == to[i] || fc_edge_repeated(from, to, i) || fc_nodes_has(&to[i]->deps, from[i]) != !add)
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult fc_graph_edges_change(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *edges,
                               size_t n, bool add)
{
    if (!fc_graph_resolve(g) || (n && (!from || !to)))
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_edges_default(edges, n))
        return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = fc_check_edges(g, from, to, n, add);
    for (size_t i = 0; r == CUDA_SUCCESS && i < n; i++) {
        if (add && !fc_nodes_add(&to[i]->deps, from[i]))
            r = CUDA_ERROR_OUT_OF_MEMORY;
        else if (!add)
            fc_nodes_remove(&to[i]->deps, from[i]);
    }
    return r;
}

/* ---- queries ------------------------------------------------------------------ */

/* The driver's list convention: NULL out asks the count; else *num entries are
   filled (NULL past the end) and *num becomes how many were real. */
static void fc_list_out(CUgraphNode *out, CUgraphEdgeData *edges, size_t *num, const fc_nodes *l)
{
    if (!out) {
        *num = l->n;
        return;
    }
    for (size_t i = 0; i < *num; i++) {
        out[i] = i < l->n ? l->v[i] : NULL;
        if (edges)
            edges[i] = (CUgraphEdgeData){0};
    }
    if (*num > l->n)
        *num = l->n;
}

CUresult fc_graph_get_nodes(CUgraph g, CUgraphNode *out, size_t *num, bool roots_only)
{
    if (!fc_graph_resolve(g) || !num)
        return CUDA_ERROR_INVALID_VALUE;
    if (!roots_only) {
        fc_list_out(out, NULL, num, &g->nodes);
        return CUDA_SUCCESS;
    }
    fc_nodes roots = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < g->nodes.n; i++)
        if (g->nodes.v[i]->deps.n == 0)
            ok = fc_nodes_add(&roots, g->nodes.v[i]);
    if (ok)
        fc_list_out(out, NULL, num, &roots);
    fc_nodes_free(&roots);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult fc_node_get_deps(CUgraphNode n, CUgraphNode *out, CUgraphEdgeData *edges, size_t *num, bool dependents)
{
    if (!fc_node_resolve(n) || !num || (edges && !out))
        return CUDA_ERROR_INVALID_VALUE;
    if (!dependents) {
        fc_list_out(out, edges, num, &n->deps);
        return CUDA_SUCCESS;
    }
    fc_nodes after = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < n->graph->nodes.n; i++)
        if (fc_nodes_has(&n->graph->nodes.v[i]->deps, n))
            ok = fc_nodes_add(&after, n->graph->nodes.v[i]);
    if (ok)
        fc_list_out(out, edges, num, &after);
    fc_nodes_free(&after);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult fc_graph_get_edges(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *edges, size_t *num)
{
    if (!fc_graph_resolve(g) || !num || !from != !to || (edges && !from))
        return CUDA_ERROR_INVALID_VALUE;
    size_t k = 0;
    for (size_t i = 0; i < g->nodes.n; i++)
        for (size_t j = 0; j < g->nodes.v[i]->deps.n; j++, k++)
            if (from && k < *num) {
                from[k] = g->nodes.v[i]->deps.v[j];
                to[k] = g->nodes.v[i];
            }
    for (size_t i = k; from && i < *num; i++)
        from[i] = to[i] = NULL;
    for (size_t i = 0; edges && i < *num; i++)
        edges[i] = (CUgraphEdgeData){0};
    if (!from || *num > k)
        *num = k;
    return CUDA_SUCCESS;
}

CUresult fc_node_get_type(CUgraphNode n, CUgraphNodeType *type)
{
    if (!fc_node_resolve(n) || !type)
        return CUDA_ERROR_INVALID_VALUE;
    *type = n->type;
    return CUDA_SUCCESS;
}

/* A graph being captured into keeps its nodes until the capture ends. */
CUresult fc_node_destroy(CUgraphNode n)
{
    if (!fc_node_resolve(n) || n->graph->capturing)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraph g = n->graph;
    fc_nodes_remove(&g->nodes, n);
    for (size_t i = 0; i < g->nodes.n; i++)
        fc_nodes_remove(&g->nodes.v[i]->deps, n);
    fc_node_free(n);
    return CUDA_SUCCESS;
}

/* ---- node parameters ------------------------------------------------------------- */

CUresult fc_node_kernel_get(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!p || !fc_node_of_type(n, CU_GRAPH_NODE_TYPE_KERNEL))
        return CUDA_ERROR_INVALID_VALUE;
    const fc_kwork *kw = &n->op.u.kernel;
    /* A CUkernel is reported as one, however it was named: NVIDIA's runtime
       launches its CUkernels as CUfunctions, and finds a captured node's
       kernel again only through .kern (then cuKernelGetFunction). */
    bool by_kernel = kw->by_kernel || fc_obj_valid(kw->func, FC_K_KERNEL);
    *p = (CUDA_KERNEL_NODE_PARAMS){
        .func = by_kernel ? NULL : kw->func,
        .gridDimX = kw->dims.gx,
        .gridDimY = kw->dims.gy,
        .gridDimZ = kw->dims.gz,
        .blockDimX = kw->dims.bx,
        .blockDimY = kw->dims.by,
        .blockDimZ = kw->dims.bz,
        .sharedMemBytes = kw->smem,
        .kernelParams = n->argv,
        .kern = by_kernel ? (CUkernel)(void *)kw->func : NULL,
    };
    return CUDA_SUCCESS;
}

CUresult fc_node_kernel_get_v1(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    CUDA_KERNEL_NODE_PARAMS q;
    CUresult r = p ? fc_node_kernel_get(n, &q) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *p = (CUDA_KERNEL_NODE_PARAMS_v1){n->op.u.kernel.func, q.gridDimX,  q.gridDimY,  q.gridDimZ,
                                          q.blockDimX,         q.blockDimY, q.blockDimZ, q.sharedMemBytes,
                                          q.kernelParams,      q.extra};
    return r;
}

CUresult fc_node_memcpy_get(CUgraphNode n, CUDA_MEMCPY3D *p)
{
    if (!p || !fc_node_of_type(n, CU_GRAPH_NODE_TYPE_MEMCPY))
        return CUDA_ERROR_INVALID_VALUE;
    fc_copy_to_3d(&n->op.u.copy, p);
    return CUDA_SUCCESS;
}

CUresult fc_node_memset_get(CUgraphNode n, CUDA_MEMSET_NODE_PARAMS *p)
{
    if (!p || !fc_node_of_type(n, CU_GRAPH_NODE_TYPE_MEMSET))
        return CUDA_ERROR_INVALID_VALUE;
    const fc_fill *f = &n->op.u.fill;
    *p = (CUDA_MEMSET_NODE_PARAMS){f->dst, f->pitch, f->value, f->elem, f->width, f->height};
    return CUDA_SUCCESS;
}

CUresult fc_node_host_get(CUgraphNode n, CUDA_HOST_NODE_PARAMS *p)
{
    if (!p || !fc_node_of_type(n, CU_GRAPH_NODE_TYPE_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    *p = (CUDA_HOST_NODE_PARAMS){n->op.u.host.fn, n->op.u.host.user};
    return CUDA_SUCCESS;
}

/* New parameters for a node of that type: its template is rebuilt from them. */
CUresult fc_node_set(CUgraphNode n, CUgraphNodeType type, const void *params, bool v1)
{
    fc_work op;
    if (!fc_node_of_type(n, type))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_node_op(&op, type, params, v1);
    if (r != CUDA_SUCCESS)
        return r;
    fc_work_discard(&n->op);
    n->op = op;
    return fc_node_argv(n) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult fc_node_set_params(CUgraphNode n, CUgraphNodeParams *p)
{
    fc_node_params typed;
    CUresult r = fc_node_params_from(p, &typed);
    return r == CUDA_SUCCESS ? fc_node_set(n, p->type, &typed, false) : r;
}

/* ---- cloning ------------------------------------------------------------------- */

/* A deep copy: every node's template copied (its own parameters), every
   edge between the copies, creation order kept, so that the clone
   instantiates and runs as the original does and changes to either never
   reach the other. Each copy remembers its original's serial, which names
   the original uniquely for cuGraphNodeFindInClone. */
static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;

void fc_graph_index_lock(void)
{
    pthread_mutex_lock(&index_lock);
}

void fc_graph_index_unlock(void)
{
    pthread_mutex_unlock(&index_lock);
}

static CUresult fc_graph_clone_locked(CUgraph *out, CUgraph g);

/* A conditional node's copy gets copies of its bodies (their nodes are not
   findable in the outer clone: cuGraphNodeFindInClone searches one graph). */
static CUresult fc_cond_clone_bodies(CUgraphNode copy, CUgraphNode n)
{
    copy->cond = n->cond;
    if (!(copy->cond.phGraph_out = calloc(n->cond.size, sizeof *copy->cond.phGraph_out)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned i = 0; i < n->cond.size; i++) {
        CUresult r = fc_graph_clone_locked(&copy->cond.phGraph_out[i], n->cond.phGraph_out[i]);
        if (r != CUDA_SUCCESS)
            return r;
        copy->cond.phGraph_out[i]->owner = copy;
    }
    return CUDA_SUCCESS;
}

CUresult fc_graph_clone(CUgraph *out, CUgraph g)
{
    fc_graph_index_lock();
    CUresult r = fc_graph_clone_locked(out, g);
    fc_graph_index_unlock();
    return r;
}

static CUresult fc_graph_clone_locked(CUgraph *out, CUgraph g)
{
    if (!out || !fc_graph_resolve(g) || g->capturing)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraph c;
    CUresult r = fc_graph_create(&c, 0);
    if (r != CUDA_SUCCESS)
        return r;
    if (g->nhandles && !(c->handles = malloc(g->nhandles * sizeof *c->handles)))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (g->nhandles) {
        memcpy(c->handles, g->handles, g->nhandles * sizeof *c->handles);
        c->nhandles = g->nhandles;
    }
    for (size_t i = 0; i < g->nodes.n; i++)
        g->nodes.v[i]->index = i;
    /* cuGraphAddDependencies may make a node depend on a later one, so the
       edges are made once every copy exists. */
    for (size_t i = 0; i < g->nodes.n && r == CUDA_SUCCESS; i++) {
        CUgraphNode n = g->nodes.v[i], copy;
        fc_work op = {0};
        if (n->type != CU_GRAPH_NODE_TYPE_EMPTY && (r = fc_work_clone(&op, &n->op)) != CUDA_SUCCESS)
            break;
        if ((r = fc_graph_add(&copy, c, NULL, 0, n->type, &op)) != CUDA_SUCCESS)
            break;
        copy->origin = n->serial;
        if (n->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
            r = fc_cond_clone_bodies(copy, n);
    }
    for (size_t i = 0; i < g->nodes.n && r == CUDA_SUCCESS; i++) {
        const fc_nodes *from = &g->nodes.v[i]->deps;
        CUgraphNode copy = c->nodes.v[i];
        for (size_t j = 0; j < from->n && r == CUDA_SUCCESS; j++)
            if (!fc_nodes_add(&copy->deps, c->nodes.v[from->v[j]->index]))
                r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (r != CUDA_SUCCESS) {
        fc_graph_destroy_any(c);
        return r;
    }
    *out = c;
    return CUDA_SUCCESS;
}

CUresult fc_graph_find_in_clone(CUgraphNode *out, CUgraphNode original, CUgraph clone)
{
    if (!out || !fc_node_resolve(original) || !fc_graph_resolve(clone))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < clone->nodes.n; i++)
        if (clone->nodes.v[i]->origin == original->serial) {
            *out = clone->nodes.v[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

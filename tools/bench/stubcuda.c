/*
 * stubcuda.c - the smallest libcuda.so.1 bench.c runs on, for callgrind.
 *
 * fakecuda reserves a 64 GiB arena at cuInit, which valgrind cannot map, so
 * instruction counts are taken on this stub instead: every call the bench
 * makes succeeds at once (addresses are numbers, nothing is copied), except
 * a launch of more than 1024 threads per block, which fails with
 * CUDA_ERROR_INVALID_VALUE as fakecuda's and a real driver's does.  It also
 * answers the calls cutaint makes of its own (cuFuncGetParamInfo,
 * cuFuncGetName, cuCtxGetCurrent, cuCtxGetDevice, cuDeviceGetAttribute,
 * cuDeviceGetName, cuModuleGetLoadingMode: lazy), as fakecuda would.  A
 * library (bench.c's first_use) loads and holds no kernel the stub knows:
 * every cuLibraryGetKernel answers CUDA_ERROR_NOT_FOUND, as fakecuda's for
 * a kernel it has no code for.  Graphs hold kernel
 * nodes only (bench.c's graph_launch): a node keeps its own copy of its
 * arguments, as a real driver's does, and answers the calls cutaint decodes
 * a graph with at instantiation (cuGraphGetNodes, cuGraphNodeGetType,
 * cuGraphNodeGetDependencies, cuGraphKernelNodeGetParams_v2); launching an
 * exec does nothing.  Only the difference
 * with and without cutaint is reported, so the stub's own cost cancels.
 * Single context, single device.  Thread-safe, and nothing shared is
 * written per call, so run.sh also uses it to show how cutaint's own cost
 * scales over threads, which fakecuda's locks would hide.
 */
#include <cuda.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct stub_kernel {
    const char *name;
    unsigned n;
    size_t offset[4], size[4];
} stub_kernel;

static const stub_kernel kernels[] = {
    {"_Z5emptyPvS_S_S_", 4, {0, 8, 16, 24}, {8, 8, 8, 8}},
    {"_Z4fillPfif", 3, {0, 8, 12}, {8, 4, 4}},
};
static atomic_uint_fast64_t next_address = 0x700000000000ULL;
static _Thread_local CUcontext current;
static char the_context, the_library;
/* Every load gets a handle of its own, as a real driver's does (bench.c's
 * module stays loaded while module_load loads and unloads another): one
 * handle for all made each load replace that module, and each unload
 * leave cutaint's tables of modules empty.  The handles are numbers; no
 * call reads through one. */
static atomic_uintptr_t modules_loaded;

EXPORT CUresult cuInit(unsigned flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    *d = ordinal;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = (CUcontext)(void *)&the_context;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
    current = c;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
    *c = current;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    (void)image;
    *m = (CUmodule)(uintptr_t)(0x40000 + 16 * (atomic_fetch_add(&modules_loaded, 1) + 1));
    return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleUnload(CUmodule m)
{
    (void)m;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
        if (strcmp(kernels[i].name, name) == 0) {
            *f = (CUfunction)(uintptr_t)&kernels[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
EXPORT CUresult cuLibraryLoadData(CUlibrary *l, const void *code, CUjit_option *jit, void **jit_values, unsigned n_jit,
                                  CUlibraryOption *options, void **values, unsigned n_options)
{
    (void)code, (void)jit, (void)jit_values, (void)n_jit, (void)options, (void)values, (void)n_options;
    *l = (CUlibrary)(void *)&the_library;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
    (void)k, (void)l, (void)name;
    return CUDA_ERROR_NOT_FOUND;
}
EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    *mode = CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    *d = 0;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute attribute, CUdevice d)
{
    (void)d;
    *v = attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    strncpy(name, "stub", (size_t)len);
    if (len > 0)
        name[len - 1] = '\0';
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetName(const char **name, CUfunction f)
{
    *name = ((const stub_kernel *)(uintptr_t)f)->name;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *offset, size_t *size)
{
    const stub_kernel *k = (const stub_kernel *)(uintptr_t)f;
    if (i >= k->n)
        return CUDA_ERROR_INVALID_VALUE;
    *offset = k->offset[i];
    *size = k->size[i];
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes)
{
    *p = atomic_fetch_add(&next_address, (bytes + 255) / 256 * 256);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemFree(CUdeviceptr p)
{
    (void)p;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemcpyHtoD(CUdeviceptr d, const void *h, size_t n)
{
    (void)d, (void)h, (void)n;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemcpyDtoH(void *h, CUdeviceptr d, size_t n)
{
    (void)d, (void)h, (void)n;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream s, void **params, void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)shared, (void)s, (void)params, (void)extra;
    return (uint64_t)bx * by * bz > 1024 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
/* ---- graphs: kernel nodes only ---- */
#define STUB_GRAPH_NODES 8
#define STUB_ARG_BYTES 32 /* the kernels' largest argument block */

typedef struct stub_node {
    CUDA_KERNEL_NODE_PARAMS params; /* kernelParams points at arg[] */
    unsigned char args[STUB_ARG_BYTES];
    void *arg[4];
    size_t n_deps;
    CUgraphNode deps[STUB_GRAPH_NODES];
} stub_node;

typedef struct stub_graph {
    size_t n;
    stub_node node[STUB_GRAPH_NODES];
} stub_graph;

/* Up to *count handles of from[] into to[] (to NULL: count only). */
static void list_handles(CUgraphNode *to, size_t *count, const CUgraphNode *from, size_t n)
{
    if (to) {
        for (size_t i = 0; i < *count; i++)
            to[i] = i < n ? from[i] : NULL;
        if (*count > n)
            *count = n;
    } else {
        *count = n;
    }
}

EXPORT CUresult cuGraphCreate(CUgraph *g, unsigned flags)
{
    (void)flags;
    *g = calloc(1, sizeof(stub_graph));
    return *g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult cuGraphDestroy(CUgraph g)
{
    free(g);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *out, CUgraph graph, const CUgraphNode *deps, size_t n_deps,
                                     const CUDA_KERNEL_NODE_PARAMS *p)
{
    stub_graph *g = (stub_graph *)graph;
    const stub_kernel *k = (const stub_kernel *)(uintptr_t)p->func;
    if (g->n == STUB_GRAPH_NODES || n_deps > STUB_GRAPH_NODES || !k || p->extra)
        return CUDA_ERROR_NOT_SUPPORTED;
    stub_node *n = &g->node[g->n++];
    n->params = *p;
    n->params.kernelParams = n->arg;
    for (unsigned i = 0; i < k->n; i++) {
        memcpy(n->args + k->offset[i], p->kernelParams[i], k->size[i]);
        n->arg[i] = n->args + k->offset[i];
    }
    n->n_deps = n_deps;
    if (n_deps)
        memcpy(n->deps, deps, n_deps * sizeof *deps);
    *out = (CUgraphNode)(void *)n;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphGetNodes(CUgraph graph, CUgraphNode *nodes, size_t *count)
{
    const stub_graph *g = (const stub_graph *)graph;
    CUgraphNode all[STUB_GRAPH_NODES];
    for (size_t i = 0; i < g->n; i++)
        all[i] = (CUgraphNode)(void *)&g->node[i];
    list_handles(nodes, count, all, g->n);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphNodeGetType(CUgraphNode n, CUgraphNodeType *type)
{
    (void)n;
    *type = CU_GRAPH_NODE_TYPE_KERNEL;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphKernelNodeGetParams(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p)
{
    *p = ((const stub_node *)(void *)n)->params;
    return CUDA_SUCCESS;
}
/* The unversioned name is the one without edge data, which cutaint asks for. */
#undef cuGraphNodeGetDependencies
CUresult cuGraphNodeGetDependencies(CUgraphNode n, CUgraphNode *deps, size_t *count);
EXPORT CUresult cuGraphNodeGetDependencies(CUgraphNode n, CUgraphNode *deps, size_t *count)
{
    const stub_node *node = (const stub_node *)(void *)n;
    list_handles(deps, count, node->deps, node->n_deps);
    return CUDA_SUCCESS;
}
/* An exec outlives its graph and launches nothing: all it keeps is a handle of its own. */
EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g, unsigned long long flags)
{
    (void)flags;
    size_t *nodes = malloc(sizeof *nodes);
    if (!nodes)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *nodes = ((const stub_graph *)g)->n;
    *exec = (CUgraphExec)(void *)nodes;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    free(exec);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream s)
{
    (void)exec, (void)s;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorName(CUresult r, const char **name)
{
    *name = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR (stub)";
    return CUDA_SUCCESS;
}

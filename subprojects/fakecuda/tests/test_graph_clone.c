/*
 * test_graph_clone.c: cuGraphClone makes a deep copy (nodes, their own
 * parameters, edges, including an edge to a node created later) that
 * instantiates and runs like the original and is independent of it;
 * cuGraphNodeFindInClone maps an original node to its copy; bad arguments.
 */
#include "fc_test.h"

enum { N = 256 };

static CUgraphNode add_kernel(CUgraph g, const CUgraphNode *deps, size_t nd, const char *name, void **args)
{
    CUDA_KERNEL_NODE_PARAMS p = {.func = fc_function(name),
                                 .gridDimX = N / 64,
                                 .gridDimY = 1,
                                 .gridDimZ = 1,
                                 .blockDimX = 64,
                                 .blockDimY = 1,
                                 .blockDimZ = 1,
                                 .kernelParams = args};
    CUgraphNode n;
    OK(cuGraphAddKernelNode(&n, g, deps, nd, &p));
    return n;
}

static CUgraphNode add_fill(CUgraph g, CUdeviceptr out, float value)
{
    int n = N;
    void *args[] = {&out, &n, &value};
    return add_kernel(g, NULL, 0, "_Z4fillPfif", args);
}

static CUgraphNode add_scale(CUgraph g, CUdeviceptr data, float factor)
{
    int n = N;
    void *args[] = {&data, &n, &factor};
    return add_kernel(g, NULL, 0, "scale", args);
}

static void edge(CUgraph g, CUgraphNode from, CUgraphNode to)
{
    OK(cuGraphAddDependencies(g, &from, &to, NULL, 1));
}

static void run(CUgraph g)
{
    CUgraphExec e;
    OK(cuGraphInstantiateWithFlags(&e, g, 0));
    OK(cuGraphLaunch(e, NULL));
    OK(cuCtxSynchronize());
    OK(cuGraphExecDestroy(e));
}

static void expect(const float *h, float v)
{
    for (int i = 0; i < N; i++)
        cr_assert_eq(h[i], v, "h[%d] = %f, expected %f", i, h[i], v);
}

/* scale created first, made to depend on the fill created after it; then a copy to the host. */
static CUgraph scaled_fill(CUdeviceptr d, float *host, CUgraphNode nodes[3])
{
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    nodes[0] = add_scale(g, d, 3.0f);
    nodes[1] = add_fill(g, d, 2.0f);
    edge(g, nodes[1], nodes[0]);
    CUDA_MEMCPY3D p = {.srcMemoryType = CU_MEMORYTYPE_DEVICE,
                       .srcDevice = d,
                       .dstMemoryType = CU_MEMORYTYPE_HOST,
                       .dstHost = host,
                       .WidthInBytes = N * sizeof(float),
                       .Height = 1,
                       .Depth = 1};
    OK(cuGraphAddMemcpyNode(&nodes[2], g, &nodes[0], 1, &p, NULL));
    return g;
}

Test(graph_clone, a_clone_runs_like_the_original_and_is_independent)
{
    fc_setup();
    CUdeviceptr d;
    OK(cuMemAlloc(&d, N * sizeof(float)));
    static float host[N];
    CUgraphNode orig[3];
    CUgraph g = scaled_fill(d, host, orig);
    CUgraph c;
    OK(cuGraphClone(&c, g));
    cr_assert_neq(c, g);
    /* the same shape: three nodes, two edges, between the copies */
    CUgraphNode copy[3];
    for (int i = 0; i < 3; i++) {
        OK(cuGraphNodeFindInClone(&copy[i], orig[i], c));
        cr_assert_neq(copy[i], orig[i]);
        CUgraphNodeType a, b;
        OK(cuGraphNodeGetType(orig[i], &a));
        OK(cuGraphNodeGetType(copy[i], &b));
        cr_assert_eq(a, b);
    }
    size_t n = 0;
    OK(cuGraphGetNodes(c, NULL, &n));
    cr_assert_eq(n, 3);
    CUgraphNode from[4], to[4];
    n = 4;
    OK(cuGraphGetEdges(c, from, to, NULL, &n));
    cr_assert_eq(n, 2);
    bool fill_scale = false, scale_copy = false;
    for (size_t i = 0; i < n; i++) {
        fill_scale |= from[i] == copy[1] && to[i] == copy[0];
        scale_copy |= from[i] == copy[0] && to[i] == copy[2];
    }
    cr_assert(fill_scale && scale_copy, "the clone's edges join the copies as the original's join the originals");
    /* a change to the original after cloning does not reach the clone */
    float factor = 10.0f;
    int count = N;
    void *args[] = {&d, &count, &factor};
    CUDA_KERNEL_NODE_PARAMS kp;
    OK(cuGraphKernelNodeGetParams(orig[0], &kp));
    kp.kernelParams = args;
    OK(cuGraphKernelNodeSetParams(orig[0], &kp));
    OK(cuGraphDestroy(g)); /* nor does destroying it */
    run(c);
    expect(host, 6.0f);
    /* the clone's kernel node holds its own parameters */
    OK(cuGraphKernelNodeGetParams(copy[0], &kp));
    float got;
    memcpy(&got, kp.kernelParams[2], sizeof got);
    cr_assert_eq(got, 3.0f);
    OK(cuGraphDestroy(c));
}

Test(graph_clone, changing_a_clone_leaves_the_original)
{
    fc_setup();
    CUdeviceptr d;
    OK(cuMemAlloc(&d, N * sizeof(float)));
    static float host[N];
    CUgraphNode orig[3];
    CUgraph g = scaled_fill(d, host, orig);
    CUgraph c;
    OK(cuGraphClone(&c, g));
    CUgraphNode copy;
    OK(cuGraphNodeFindInClone(&copy, orig[2], c));
    OK(cuGraphDestroyNode(copy)); /* the clone no longer copies back */
    OK(cuGraphNodeFindInClone(&copy, orig[1], c));
    CUgraphNode extra;
    OK(cuGraphAddEmptyNode(&extra, c, &copy, 1));
    size_t n = 0;
    OK(cuGraphGetNodes(g, NULL, &n));
    cr_assert_eq(n, 3);
    run(g);
    expect(host, 6.0f);
    memset(host, 0, sizeof host);
    run(c);
    expect(host, 0.0f);
}

Test(graph_clone, a_clone_of_a_clone_and_empty_graphs)
{
    fc_setup();
    CUgraph g, c1, c2, e, ec;
    OK(cuGraphCreate(&g, 0));
    CUgraphNode a, b, found;
    OK(cuGraphAddEmptyNode(&a, g, NULL, 0));
    OK(cuGraphClone(&c1, g));
    OK(cuGraphNodeFindInClone(&b, a, c1));
    OK(cuGraphClone(&c2, c1));
    OK(cuGraphNodeFindInClone(&found, b, c2));
    cr_assert_neq(found, b);
    FAILS(cuGraphNodeFindInClone(&found, a, c2), CUDA_ERROR_INVALID_VALUE); /* c2 copies c1, not g */
    OK(cuGraphCreate(&e, 0));
    OK(cuGraphClone(&ec, e));
    size_t n = 7;
    OK(cuGraphGetNodes(ec, NULL, &n));
    cr_assert_eq(n, 0);
}

Test(graph_clone, bad_arguments)
{
    fc_setup();
    CUgraph g, other, c;
    OK(cuGraphCreate(&g, 0));
    OK(cuGraphCreate(&other, 0));
    CUgraphNode a, late, stranger, found;
    OK(cuGraphAddEmptyNode(&a, g, NULL, 0));
    OK(cuGraphAddEmptyNode(&stranger, other, NULL, 0));
    FAILS(cuGraphClone(NULL, g), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphClone(&c, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphClone(&c, (CUgraph)(void *)a), CUDA_ERROR_INVALID_VALUE);
    OK(cuGraphClone(&c, g));
    OK(cuGraphAddEmptyNode(&late, g, NULL, 0));
    FAILS(cuGraphNodeFindInClone(NULL, a, c), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphNodeFindInClone(&found, NULL, c), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphNodeFindInClone(&found, a, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphNodeFindInClone(&found, late, c), CUDA_ERROR_INVALID_VALUE); /* added after the clone */
    FAILS(cuGraphNodeFindInClone(&found, stranger, c), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphNodeFindInClone(&found, a, g), CUDA_ERROR_INVALID_VALUE); /* g is no clone */
    OK(cuGraphDestroy(c));
    FAILS(cuGraphNodeFindInClone(&found, a, c), CUDA_ERROR_INVALID_VALUE);
    /* a graph a capture is building */
    CUstream s;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CUgraph live;
    CUstreamCaptureStatus st;
    OK(cuStreamGetCaptureInfo(s, &st, NULL, &live, NULL, NULL, NULL));
    FAILS(cuGraphClone(&c, live), CUDA_ERROR_INVALID_VALUE);
    OK(cuStreamEndCapture(s, &live));
    OK(cuGraphClone(&c, live));
}

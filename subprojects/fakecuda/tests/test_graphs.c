/*
 * test_graphs.c: explicitly built graphs: kernel, memcpy, memset, host and
 * empty nodes with dependencies run in a topological order when launched,
 * as queued work (at the next sync point); parameters are copied when a
 * node is made; queries; executable graph parameter changes and updates;
 * destruction; faults; bad arguments.
 */
#include "fc_test.h"

enum { N = 256 };

static CUDA_KERNEL_NODE_PARAMS kernel_params(const char *name, unsigned threads, void **args)
{
    return (CUDA_KERNEL_NODE_PARAMS){.func = fc_function(name),
                                     .gridDimX = (threads + 63) / 64,
                                     .gridDimY = 1,
                                     .gridDimZ = 1,
                                     .blockDimX = 64,
                                     .blockDimY = 1,
                                     .blockDimZ = 1,
                                     .kernelParams = args};
}

static CUgraphNode add_kernel(CUgraph g, const CUgraphNode *deps, size_t nd, const char *name, void **args)
{
    CUDA_KERNEL_NODE_PARAMS p = kernel_params(name, N, args);
    CUgraphNode n;
    OK(cuGraphAddKernelNode(&n, g, deps, nd, &p));
    return n;
}

/* scale(data, N, factor) */
static CUgraphNode add_scale(CUgraph g, const CUgraphNode *deps, size_t nd, CUdeviceptr data, float factor)
{
    int n = N;
    void *args[] = {&data, &n, &factor};
    return add_kernel(g, deps, nd, "scale", args);
}

/* fill(out, N, value) */
static CUgraphNode add_fill(CUgraph g, const CUgraphNode *deps, size_t nd, CUdeviceptr out, float value)
{
    int n = N;
    void *args[] = {&out, &n, &value};
    return add_kernel(g, deps, nd, "_Z4fillPfif", args);
}

static CUDA_MEMCPY3D dtoh(float *host, CUdeviceptr src, size_t bytes)
{
    return (CUDA_MEMCPY3D){.srcMemoryType = CU_MEMORYTYPE_DEVICE,
                           .srcDevice = src,
                           .dstMemoryType = CU_MEMORYTYPE_HOST,
                           .dstHost = host,
                           .WidthInBytes = bytes,
                           .Height = 1,
                           .Depth = 1};
}

static CUDA_MEMCPY3D htod(CUdeviceptr dst, const float *host, size_t bytes)
{
    return (CUDA_MEMCPY3D){.srcMemoryType = CU_MEMORYTYPE_HOST,
                           .srcHost = host,
                           .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                           .dstDevice = dst,
                           .WidthInBytes = bytes,
                           .Height = 1,
                           .Depth = 1};
}

static CUgraphExec instantiate(CUgraph g)
{
    CUgraphExec e;
    OK(cuGraphInstantiateWithFlags(&e, g, 0));
    return e;
}

static void all_equal(const float *v, float want)
{
    for (int i = 0; i < N; i++)
        cr_assert_eq(v[i], want, "v[%d] = %g, expected %g", i, (double)v[i], (double)want);
}

static CUdeviceptr device_floats(void)
{
    CUdeviceptr d;
    OK(cuMemAlloc(&d, N * sizeof(float)));
    return d;
}

Test(graphs, nodes_run_in_dependency_order_not_creation_order)
{
    fc_schedule_sync(); /* it asserts what has not run before the sync */
    fc_setup();
    CUdeviceptr x = device_floats(), y = device_floats();
    static float host[N];
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    /* made backwards: copy-out first, the fills last; the edges say the order */
    CUDA_MEMCPY3D out = dtoh(host, y, sizeof host);
    CUgraphNode copy, saxpy, memset, fill;
    OK(cuGraphAddMemcpyNode(&copy, g, NULL, 0, &out, NULL));
    int n = N;
    float a = 3;
    void *sargs[] = {&n, &a, &x, &y};
    saxpy = add_kernel(g, NULL, 0, "_Z5saxpyifPKfPf", sargs);
    CUDA_MEMSET_NODE_PARAMS ms = {.dst = x, .value = 0x3f800000u /* 1.0f */, .elementSize = 4, .width = N, .height = 1};
    OK(cuGraphAddMemsetNode(&memset, g, NULL, 0, &ms, NULL));
    fill = add_fill(g, NULL, 0, y, 2.0f);
    CUgraphNode from[] = {memset, fill, saxpy}, to[] = {saxpy, saxpy, copy};
    OK(cuGraphAddDependencies(g, from, to, NULL, 3));
    CUgraphExec e = instantiate(g);
    host[0] = -1;
    OK(cuGraphLaunch(e, NULL));
    cr_assert_eq(host[0], -1.0f, "a launched graph runs at the next sync point");
    OK(cuStreamSynchronize(NULL));
    all_equal(host, 3 * 1 + 2);
    /* again: the fill resets y first, so the same result */
    for (int i = 0; i < N; i++)
        host[i] = 0;
    OK(cuGraphLaunch(e, NULL));
    OK(cuGraphLaunch(e, NULL));
    OK(cuCtxSynchronize());
    all_equal(host, 5.0f);
    OK(cuGraphExecDestroy(e));
    OK(cuGraphDestroy(g));
}

Test(graphs, kernel_parameters_are_copied_when_the_node_is_made)
{
    fc_setup();
    CUdeviceptr y = device_floats(), first = y, other = device_floats();
    static float host[N];
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    int n = N;
    float v = 4;
    void *args[] = {&y, &n, &v};
    CUgraphNode fill = add_kernel(g, NULL, 0, "_Z4fillPfif", args);
    v = 99; /* the node keeps 4 and the first pointer */
    y = other;
    CUgraphExec e = instantiate(g);
    OK(cuGraphLaunch(e, NULL));
    OK(cuMemcpyDtoH(host, first, sizeof host));
    all_equal(host, 4.0f);
    unsigned word;
    OK(cuMemcpyDtoH(&word, other, sizeof word));
    cr_assert_eq(word, FC_STALE_WORD, "other was never written");
    CUDA_KERNEL_NODE_PARAMS got;
    OK(cuGraphKernelNodeGetParams(fill, &got));
    cr_assert_eq(*(float *)got.kernelParams[2], 4.0f, "the node's own copy of value");
    cr_assert_eq(*(int *)got.kernelParams[1], N);
    cr_assert_eq(*(CUdeviceptr *)got.kernelParams[0], first);
    cr_assert(got.gridDimX == N / 64 && got.blockDimX == 64 && got.func != NULL);
}

Test(graphs, a_kernel_handle_is_reported_as_a_kernel)
{
    fc_setup();
    static const char image[] = "fakecuda ignores library images";
    CUlibrary lib;
    CUkernel k;
    OK(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, "_Z4fillPfif"));
    CUdeviceptr y = device_floats();
    int n = N;
    float v = 1;
    void *args[] = {&y, &n, &v};
    CUDA_KERNEL_NODE_PARAMS p = kernel_params("_Z4fillPfif", N, args), got;
    CUgraph g;
    CUgraphNode as_func, as_kern;
    OK(cuGraphCreate(&g, 0));
    p.func = (CUfunction)(void *)k; /* as the runtime launches it */
    OK(cuGraphAddKernelNode(&as_func, g, NULL, 0, &p));
    OK(cuGraphKernelNodeGetParams(as_func, &got));
    cr_assert(got.func == NULL && got.kern == k);
    p.func = NULL;
    p.kern = k;
    OK(cuGraphAddKernelNode(&as_kern, g, NULL, 0, &p));
    OK(cuGraphKernelNodeGetParams(as_kern, &got));
    cr_assert(got.func == NULL && got.kern == k);
    p = kernel_params("scale", N, args);
    OK(cuGraphAddKernelNode(&as_func, g, NULL, 0, &p));
    OK(cuGraphKernelNodeGetParams(as_func, &got));
    cr_assert(got.kern == NULL && got.func != NULL && got.func == p.func);
}

Test(graphs, host_nodes_and_empty_nodes_keep_their_place)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    static float host[N];
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    CUgraphNode f = add_fill(g, NULL, 0, y, 6.0f), join, copy;
    OK(cuGraphAddEmptyNode(&join, g, &f, 1));
    CUDA_MEMCPY3D out = dtoh(host, y, sizeof host);
    OK(cuGraphAddMemcpyNode(&copy, g, &join, 1, &out, NULL));
    CUgraphExec e = instantiate(g);
    OK(cuGraphLaunch(e, NULL));
    OK(cuStreamSynchronize(NULL));
    all_equal(host, 6.0f);
    CUgraphNodeType t;
    OK(cuGraphNodeGetType(join, &t));
    cr_assert_eq(t, CU_GRAPH_NODE_TYPE_EMPTY);
}

static void count_call(void *user)
{
    ++*(int *)user;
}

Test(graphs, a_host_node_runs_at_the_sync_point_in_order)
{
    fc_schedule_sync(); /* it asserts what has not run before the sync */
    fc_setup();
    int calls = 0;
    CUgraph g;
    CUgraphNode h;
    OK(cuGraphCreate(&g, 0));
    CUDA_HOST_NODE_PARAMS hp = {count_call, &calls};
    OK(cuGraphAddHostNode(&h, g, NULL, 0, &hp));
    CUgraphExec e = instantiate(g);
    OK(cuGraphLaunch(e, NULL));
    OK(cuGraphLaunch(e, NULL));
    cr_assert_eq(calls, 0);
    OK(cuCtxSynchronize());
    cr_assert_eq(calls, 2);
    CUDA_HOST_NODE_PARAMS got;
    OK(cuGraphHostNodeGetParams(h, &got));
    cr_assert(got.fn == count_call && got.userData == &calls);
}

Test(graphs, a_memcpy_node_reads_the_host_when_launched)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    static float src[N], back[N];
    CUgraph g;
    CUgraphNode in, out;
    OK(cuGraphCreate(&g, 0));
    CUDA_MEMCPY3D p = htod(y, src, sizeof src);
    OK(cuGraphAddMemcpyNode(&in, g, NULL, 0, &p, NULL));
    CUDA_MEMCPY3D q = dtoh(back, y, sizeof back);
    OK(cuGraphAddMemcpyNode(&out, g, &in, 1, &q, NULL));
    for (int i = 0; i < N; i++)
        src[i] = 8; /* after the node was made */
    CUgraphExec e = instantiate(g);
    OK(cuGraphLaunch(e, NULL));
    for (int i = 0; i < N; i++)
        src[i] = 9; /* after the launch: the launch took its snapshot */
    OK(cuStreamSynchronize(NULL));
    all_equal(back, 8.0f);
    CUDA_MEMCPY3D got;
    OK(cuGraphMemcpyNodeGetParams(in, &got));
    cr_assert(got.srcHost == src && got.dstDevice == y && got.WidthInBytes == sizeof src);
}

Test(graphs, queries_report_the_structure)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    CUgraphNode a = add_fill(g, NULL, 0, y, 1), b = add_scale(g, &a, 1, y, 2), c = add_scale(g, &a, 1, y, 3);
    CUgraphNode bc[] = {b, c}, d;
    OK(cuGraphAddEmptyNode(&d, g, bc, 2));
    size_t num = 0;
    OK(cuGraphGetNodes(g, NULL, &num));
    cr_assert_eq(num, 4);
    CUgraphNode nodes[6] = {0};
    num = 6;
    OK(cuGraphGetNodes(g, nodes, &num));
    cr_assert(num == 4 && nodes[0] == a && nodes[3] == d && nodes[4] == NULL);
    num = 2;
    OK(cuGraphGetNodes(g, nodes, &num));
    cr_assert(num == 2 && nodes[1] == b);
    OK(cuGraphGetRootNodes(g, nodes, &(size_t){6}));
    cr_assert(nodes[0] == a && nodes[1] == NULL);
    CUgraphNode from[8], to[8];
    num = 8;
    OK(cuGraphGetEdges(g, from, to, NULL, &num));
    cr_assert_eq(num, 4);
    num = 4;
    OK(cuGraphNodeGetDependencies(d, nodes, NULL, &num));
    cr_assert(num == 2 && nodes[0] == b && nodes[1] == c);
    num = 4;
    OK(cuGraphNodeGetDependentNodes(a, nodes, NULL, &num));
    cr_assert(num == 2 && nodes[0] == b && nodes[1] == c);
    OK(cuGraphRemoveDependencies(g, &a, &c, NULL, 1));
    num = 0;
    OK(cuGraphNodeGetDependencies(c, NULL, NULL, &num));
    cr_assert_eq(num, 0);
    FAILS(cuGraphRemoveDependencies(g, &a, &c, NULL, 1), CUDA_ERROR_INVALID_VALUE); /* no such edge */
    FAILS(cuGraphAddDependencies(g, &a, &b, NULL, 1), CUDA_ERROR_INVALID_VALUE);    /* already there */
    CUgraphEdgeData programmatic = {.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC};
    FAILS(cuGraphAddDependencies(g, &a, &c, &programmatic, 1), CUDA_ERROR_NOT_SUPPORTED);
    OK(cuGraphDestroyNode(b));
    num = 0;
    OK(cuGraphNodeGetDependencies(d, NULL, NULL, &num));
    cr_assert_eq(num, 1, "destroying a node removes its edges");
    FAILS(cuGraphNodeGetType(b, &(CUgraphNodeType){0}), CUDA_ERROR_INVALID_VALUE);
    OK(cuGraphDestroy(g));
    FAILS(cuGraphNodeGetType(a, &(CUgraphNodeType){0}), CUDA_ERROR_INVALID_VALUE);
}

Test(graphs, exec_set_params_changes_later_launches_only)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    static float host[N];
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    CUgraphNode s = add_scale(g, NULL, 0, y, 2.0f);
    CUgraphExec e = instantiate(g);
    void *fargs[] = {&y, &(int){N}, &(float){1.0f}};
    OK(fc_launch(fc_function("_Z4fillPfif"), N, fargs, false, NULL));
    OK(cuGraphLaunch(e, NULL)); /* queued with factor 2 */
    int n = N;
    float five = 5;
    void *args[] = {&y, &n, &five};
    CUDA_KERNEL_NODE_PARAMS p = kernel_params("scale", N, args);
    OK(cuGraphExecKernelNodeSetParams(e, s, &p));
    OK(cuGraphLaunch(e, NULL));
    OK(cuMemcpyDtoH(host, y, sizeof host));
    all_equal(host, 10.0f);
    /* the graph itself still says 2 */
    CUDA_KERNEL_NODE_PARAMS got;
    OK(cuGraphKernelNodeGetParams(s, &got));
    cr_assert_eq(*(float *)got.kernelParams[2], 2.0f);
    /* a memset node of another exec is not this exec's */
    CUDA_MEMSET_NODE_PARAMS ms = {.dst = y, .elementSize = 4, .width = N, .height = 1};
    FAILS(cuGraphExecMemsetNodeSetParams(e, s, &ms, NULL), CUDA_ERROR_INVALID_VALUE);
}

Test(graphs, exec_update_takes_a_graph_of_the_same_shape)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    static float host[N];
    CUgraph g1, g2, g3, g4;
    OK(cuGraphCreate(&g1, 0));
    CUgraphNode f1 = add_fill(g1, NULL, 0, y, 1.0f);
    add_scale(g1, &f1, 1, y, 2.0f);
    OK(cuGraphCreate(&g2, 0));
    CUgraphNode f2 = add_fill(g2, NULL, 0, y, 3.0f);
    add_scale(g2, &f2, 1, y, 7.0f);
    CUgraphExec e = instantiate(g1);
    CUgraphExecUpdateResultInfo info;
    OK(cuGraphExecUpdate(e, g2, &info));
    cr_assert_eq(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
    OK(cuGraphDestroy(g2));
    OK(cuGraphLaunch(e, NULL));
    OK(cuMemcpyDtoH(host, y, sizeof host));
    all_equal(host, 21.0f);
    /* another shape: no edge */
    OK(cuGraphCreate(&g3, 0));
    add_fill(g3, NULL, 0, y, 3.0f);
    add_scale(g3, NULL, 0, y, 7.0f);
    FAILS(cuGraphExecUpdate(e, g3, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    cr_assert_eq(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    /* another node type */
    OK(cuGraphCreate(&g4, 0));
    CUgraphNode f4 = add_fill(g4, NULL, 0, y, 3.0f), m4;
    CUDA_MEMSET_NODE_PARAMS ms = {.dst = y, .elementSize = 4, .width = N, .height = 1};
    OK(cuGraphAddMemsetNode(&m4, g4, &f4, 1, &ms, NULL));
    FAILS(cuGraphExecUpdate(e, g4, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    cr_assert(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED && info.errorNode == m4);
    /* a failed update changed nothing */
    OK(cuGraphLaunch(e, NULL));
    OK(cuMemcpyDtoH(host, y, sizeof host));
    all_equal(host, 21.0f);
    /* the legacy form, as cuGetProcAddress gives it to a CUDA 11 program */
    CUresult (*update_v1)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *);
    OK(cuGetProcAddress("cuGraphExecUpdate", (void **)&update_v1, 11000, 0, NULL));
    CUgraphNode err = NULL;
    CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    FAILS(update_v1(e, g4, &err, &res), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    cr_assert(res == CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED && err == m4);
}

Test(graphs, an_exec_outlives_its_graph_and_queued_work_outlives_the_exec)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    static float host[N];
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    add_fill(g, NULL, 0, y, 12.0f);
    CUgraphExec e = instantiate(g);
    OK(cuGraphDestroy(g));
    OK(cuGraphLaunch(e, NULL));
    OK(cuGraphExecDestroy(e));
    OK(cuMemcpyDtoH(host, y, sizeof host));
    all_equal(host, 12.0f);
    FAILS(cuGraphLaunch(e, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphExecDestroy(e), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphDestroy(g), CUDA_ERROR_INVALID_VALUE);
}

Test(graphs, a_cycle_fails_instantiation)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    CUgraphNode a = add_fill(g, NULL, 0, y, 1), b = add_scale(g, &a, 1, y, 2);
    OK(cuGraphAddDependencies(g, &b, &a, NULL, 1));
    CUgraphExec e;
    FAILS(cuGraphInstantiateWithFlags(&e, g, 0), CUDA_ERROR_INVALID_VALUE);
    CUDA_GRAPH_INSTANTIATE_PARAMS p = {0};
    FAILS(cuGraphInstantiateWithParams(&e, g, &p), CUDA_ERROR_INVALID_VALUE);
    cr_assert_eq(p.result_out, CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE);
    cr_assert(p.hErrNode_out == a || p.hErrNode_out == b);
    OK(cuGraphRemoveDependencies(g, &b, &a, NULL, 1));
    OK(cuGraphInstantiateWithParams(&e, g, &p));
    cr_assert_eq(p.result_out, CUDA_GRAPH_INSTANTIATE_SUCCESS);
    cuuint64_t flags = 1;
    OK(cuGraphExecGetFlags(e, &flags));
    cr_assert_eq(flags, 0);
    OK(cuGraphUpload(e, NULL));
}

Test(graphs, a_faulting_kernel_node_is_a_sticky_fault_at_the_sync)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    void *args[] = {&y};
    add_kernel(g, NULL, 0, "_Z5crashPf", args);
    CUgraphExec e = instantiate(g);
    OK(cuGraphLaunch(e, NULL));
    FAILS(cuStreamSynchronize(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(cuGraphLaunch(e, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
}

Test(graphs, the_generic_node_api)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    static float host[N];
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    int n = N;
    float v = 2.5f;
    void *args[] = {&y, &n, &v};
    CUgraphNodeParams p = {.type = CU_GRAPH_NODE_TYPE_KERNEL};
    p.kernel.func = fc_function("_Z4fillPfif");
    p.kernel.gridDimX = p.kernel.gridDimY = p.kernel.gridDimZ = 1;
    p.kernel.blockDimX = N;
    p.kernel.blockDimY = p.kernel.blockDimZ = 1;
    p.kernel.kernelParams = args;
    CUgraphNode k;
    OK(cuGraphAddNode(&k, g, NULL, NULL, 0, &p));
    CUgraphExec e = instantiate(g);
    OK(cuGraphLaunch(e, NULL));
    OK(cuMemcpyDtoH(host, y, sizeof host));
    all_equal(host, 2.5f);
    v = 1.5f;
    OK(cuGraphExecNodeSetParams(e, k, &p));
    OK(cuGraphLaunch(e, NULL));
    OK(cuMemcpyDtoH(host, y, sizeof host));
    all_equal(host, 1.5f);
    CUgraphNodeParams bad = {.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC};
    FAILS(cuGraphAddNode(&k, g, NULL, NULL, 0, &bad), CUDA_ERROR_NOT_SUPPORTED);
}

Test(graphs, bad_arguments_are_errors)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    CUgraph g, other;
    CUgraphNode n, a;
    CUgraphExec e;
    FAILS(cuGraphCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphCreate(&g, 1), CUDA_ERROR_INVALID_VALUE);
    OK(cuGraphCreate(&g, 0));
    OK(cuGraphCreate(&other, 0));
    CUgraph bogus = (CUgraph)(uintptr_t)&y;
    FAILS(cuGraphAddEmptyNode(&n, bogus, NULL, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphAddEmptyNode(NULL, g, NULL, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphAddEmptyNode(&n, g, NULL, 1), CUDA_ERROR_INVALID_VALUE);
    OK(cuGraphAddEmptyNode(&a, other, NULL, 0));
    FAILS(cuGraphAddEmptyNode(&n, g, &a, 1), CUDA_ERROR_INVALID_VALUE); /* a node of another graph */
    CUgraphNode twice[] = {a, a};
    FAILS(cuGraphAddEmptyNode(&n, other, twice, 2), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphAddDependencies(other, &a, &a, NULL, 1), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphAddDependencies(g, &a, &a, NULL, 1), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphAddKernelNode(&n, g, NULL, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    CUDA_KERNEL_NODE_PARAMS kp = kernel_params("scale", N, NULL);
    FAILS(cuGraphAddKernelNode(&n, g, NULL, 0, &kp), CUDA_ERROR_INVALID_VALUE); /* no parameters */
    kp.func = (CUfunction)(uintptr_t)&kp;
    FAILS(cuGraphAddKernelNode(&n, g, NULL, 0, &kp), CUDA_ERROR_INVALID_HANDLE);
    int cnt = N;
    float f = 1;
    void *args[] = {&y, &cnt, &f};
    kp = kernel_params("scale", N, args);
    kp.blockDimX = 2048;
    FAILS(cuGraphAddKernelNode(&n, g, NULL, 0, &kp), CUDA_ERROR_INVALID_VALUE);
    CUDA_MEMSET_NODE_PARAMS ms = {.dst = y, .elementSize = 3, .width = N, .height = 1};
    FAILS(cuGraphAddMemsetNode(&n, g, NULL, 0, &ms, NULL), CUDA_ERROR_INVALID_VALUE);
    ms.elementSize = 4;
    ms.width = 10 * N; /* past the allocation */
    FAILS(cuGraphAddMemsetNode(&n, g, NULL, 0, &ms, NULL), CUDA_ERROR_INVALID_VALUE);
    static float host[N];
    CUDA_MEMCPY3D cp = dtoh(host, y, 2 * sizeof host);
    FAILS(cuGraphAddMemcpyNode(&n, g, NULL, 0, &cp, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphAddMemcpyNode(&n, g, NULL, 0, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphAddHostNode(&n, g, NULL, 0, &(CUDA_HOST_NODE_PARAMS){NULL, NULL}), CUDA_ERROR_INVALID_VALUE);
    size_t num;
    FAILS(cuGraphGetNodes(g, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphGetNodes(bogus, NULL, &num), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphKernelNodeGetParams(a, &kp), CUDA_ERROR_INVALID_VALUE); /* not a kernel node */
    FAILS(cuGraphInstantiateWithFlags(NULL, g, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphInstantiateWithFlags(&e, bogus, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphInstantiateWithFlags(&e, g, 1u << 20), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphInstantiateWithParams(&e, g, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuGraphInstantiateWithFlags(&e, g, 0)); /* an empty graph */
    FAILS(cuGraphLaunch(e, (CUstream)(uintptr_t)&y), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuGraphLaunch((CUgraphExec)(uintptr_t)&e, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGraphExecKernelNodeSetParams(e, a, &kp), CUDA_ERROR_INVALID_VALUE); /* not in this exec */
    FAILS(cuGraphExecUpdate(e, bogus, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuGraphLaunch(e, NULL));
    OK(cuCtxSynchronize()); /* none of it hurt the context */
}

Test(graphs, the_legacy_entry_points)
{
    fc_setup();
    CUdeviceptr y = device_floats();
    static float host[N];
    CUresult (*add_v1)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_KERNEL_NODE_PARAMS_v1 *);
    CUresult (*get_v1)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v1 *);
    CUresult (*deps_v1)(CUgraph, const CUgraphNode *, const CUgraphNode *, size_t);
    CUresult (*edges_v1)(CUgraph, CUgraphNode *, CUgraphNode *, size_t *);
    CUresult (*inst_v1)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
    OK(cuGetProcAddress("cuGraphAddKernelNode", (void **)&add_v1, 11000, 0, NULL));
    OK(cuGetProcAddress("cuGraphKernelNodeGetParams", (void **)&get_v1, 11000, 0, NULL));
    OK(cuGetProcAddress("cuGraphAddDependencies", (void **)&deps_v1, 11000, 0, NULL));
    OK(cuGetProcAddress("cuGraphGetEdges", (void **)&edges_v1, 11000, 0, NULL));
    OK(cuGetProcAddress("cuGraphInstantiate", (void **)&inst_v1, 11000, 0, NULL));
    CUgraph g;
    OK(cuGraphCreate(&g, 0));
    int n = N;
    float v = 3, factor = 4;
    void *fargs[] = {&y, &n, &v}, *sargs[] = {&y, &n, &factor};
    CUDA_KERNEL_NODE_PARAMS_v1 fp = {fc_function("_Z4fillPfif"), 1, 1, 1, N, 1, 1, 0, fargs, NULL};
    CUDA_KERNEL_NODE_PARAMS_v1 sp = {fc_function("scale"), 1, 1, 1, N, 1, 1, 0, sargs, NULL};
    CUgraphNode f, s;
    OK(add_v1(&s, g, NULL, 0, &sp));
    OK(add_v1(&f, g, NULL, 0, &fp));
    OK(deps_v1(g, &f, &s, 1));
    CUgraphNode from[2], to[2];
    size_t num = 2;
    OK(edges_v1(g, from, to, &num));
    cr_assert(num == 1 && from[0] == f && to[0] == s);
    CUDA_KERNEL_NODE_PARAMS_v1 got;
    OK(get_v1(s, &got));
    cr_assert(got.func == sp.func && *(float *)got.kernelParams[2] == 4.0f);
    CUgraphExec e;
    char log[64] = "unchanged";
    CUgraphNode err = (CUgraphNode)(uintptr_t)1;
    OK(inst_v1(&e, g, &err, log, sizeof log));
    cr_assert(err == NULL && log[0] == '\0');
    OK(cuGraphLaunch(e, NULL));
    OK(cuMemcpyDtoH(host, y, sizeof host));
    all_equal(host, 12.0f);
}

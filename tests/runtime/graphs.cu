/*
 * graphs.cu: the CUDA runtime's graph API on fakecuda. A stream capture of
 * a memset, four launches and a copy back records a graph and runs nothing;
 * the instantiated graph is launched several times; a kernel node's
 * parameters are changed in the executable graph; the executable graph is
 * updated from a second capture; a graph built with cudaGraphAdd*Node runs
 * its nodes in dependency order; a stream synchronise during a capture is
 * refused and invalidates it, and the context carries on. The kernels are
 * fakecuda's built-in fill, saxpy and scale.
 * Prints one line per step and "PASS"; exits 1 at the first wrong value or
 * failed call.
 */
#include "runtime_test.cuh"

extern "C" __global__ void scale(float *data, int n, float factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
}

#define EXPECT(cond)                                                   \
    do {                                                               \
        if (!(cond)) {                                                 \
            std::printf("FAIL %s:%d %s\n", __FILE__, __LINE__, #cond); \
            std::exit(1);                                              \
        }                                                              \
    } while (0)

static const int N = 4096;
static const size_t BYTES = N * sizeof(float);
static float *dx, *dy, *hy;

/* hy = -1 everywhere, so a copy that did not run shows. */
static void poison(void)
{
    for (int i = 0; i < N; i++)
        hy[i] = -1.0f;
}

static int wrong(float want)
{
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += hy[i] != want;
    return bad;
}

/* x = 1, y = 2 (after a memset), y = a*x + y, y *= 0.5, copied to hy: (a + 2) / 2. */
static cudaGraph_t capture(cudaStream_t s, float a)
{
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemsetAsync(dy, 0, BYTES, s));
    fill<<<N / 256, 256, 0, s>>>(dx, N, 1.0f);
    fill<<<N / 256, 256, 0, s>>>(dy, N, 2.0f);
    saxpy<<<N / 256, 256, 0, s>>>(N, a, dx, dy);
    scale<<<N / 256, 256, 0, s>>>(dy, N, 0.5f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(hy, dy, BYTES, cudaMemcpyDeviceToHost, s));
    cudaStreamCaptureStatus status;
    unsigned long long id = 0;
    CHECK(cudaStreamIsCapturing(s, &status));
    EXPECT(status == cudaStreamCaptureStatusActive);
    CHECK(cudaStreamGetCaptureInfo(s, &status, &id));
    EXPECT(status == cudaStreamCaptureStatusActive && id != 0);
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaStreamIsCapturing(s, &status));
    EXPECT(status == cudaStreamCaptureStatusNone);
    return g;
}

/* The graph's saxpy node, found by its kernel. */
static cudaGraphNode_t saxpy_node(cudaGraph_t g)
{
    cudaGraphNode_t nodes[16];
    size_t n = 16;
    CHECK(cudaGraphGetNodes(g, nodes, &n));
    for (size_t i = 0; i < n; i++) {
        cudaGraphNodeType type;
        CHECK(cudaGraphNodeGetType(nodes[i], &type));
        cudaKernelNodeParams kp;
        if (type == cudaGraphNodeTypeKernel && cudaGraphKernelNodeGetParams(nodes[i], &kp) == cudaSuccess &&
            kp.func == (void *)saxpy)
            return nodes[i];
    }
    std::printf("FAIL no saxpy node\n");
    std::exit(1);
}

static void launch_and_check(cudaGraphExec_t e, cudaStream_t s, float want, const char *what)
{
    poison();
    CHECK(cudaGraphLaunch(e, s));
    CHECK(cudaStreamSynchronize(s));
    int bad = wrong(want);
    std::printf("%s: y[0]=%g y[%d]=%g, %d wrong\n", what, hy[0], N - 1, hy[N - 1], bad);
    EXPECT(bad == 0);
}

static void captured_graph(cudaStream_t s)
{
    poison();
    cudaGraph_t g = capture(s, 3.0f);
    CHECK(cudaStreamSynchronize(s));
    EXPECT(wrong(-1.0f) == 0); /* captured, not run */
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &nodes));
    std::printf("captured %zu nodes, nothing ran\n", nodes);
    EXPECT(nodes == 6);

    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    for (int round = 1; round <= 3; round++) {
        char what[32];
        std::snprintf(what, sizeof what, "launch %d", round);
        launch_and_check(e, s, 2.5f, what);
    }

    /* saxpy's a = 5 in the executable graph only */
    cudaGraphNode_t node = saxpy_node(g);
    cudaKernelNodeParams kp;
    CHECK(cudaGraphKernelNodeGetParams(node, &kp));
    int n = N;
    float a = 5.0f;
    void *args[] = {&n, &a, &dx, &dy};
    kp.kernelParams = args;
    CHECK(cudaGraphExecKernelNodeSetParams(e, node, &kp));
    launch_and_check(e, s, 3.5f, "after set params");

    /* the same shape captured with a = 7 */
    cudaGraph_t g2 = capture(s, 7.0f);
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(e, g2, &info));
    EXPECT(info.result == cudaGraphExecUpdateSuccess);
    launch_and_check(e, s, 4.5f, "after update");

    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(g2));
}

/* fill(x, 4) -> scale(x, 3) -> copy to hy, made in reverse and tied by edges. */
static void built_graph(cudaStream_t s)
{
    cudaGraph_t g;
    cudaGraphNode_t f, sc, cp;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddMemcpyNode1D(&cp, g, NULL, 0, hy, dx, BYTES, cudaMemcpyDeviceToHost));
    int n = N;
    float three = 3.0f, four = 4.0f;
    void *sargs[] = {&dx, &n, &three}, *fargs[] = {&dx, &n, &four};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)scale;
    kp.gridDim = dim3(N / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = sargs;
    CHECK(cudaGraphAddKernelNode(&sc, g, NULL, 0, &kp));
    kp.func = (void *)fill;
    kp.kernelParams = fargs;
    CHECK(cudaGraphAddKernelNode(&f, g, NULL, 0, &kp));
    cudaGraphNode_t from[] = {f, sc}, to[] = {sc, cp};
    CHECK(cudaGraphAddDependencies(g, from, to, NULL, 2));
    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    launch_and_check(e, s, 12.0f, "built graph");
    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(g));
}

/* A synchronise inside a capture is refused, the capture yields no graph, and work goes on. */
static void invalid_capture(cudaStream_t s)
{
    cudaGraph_t g = (cudaGraph_t)1;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    fill<<<N / 256, 256, 0, s>>>(dx, N, 9.0f);
    cudaError_t sync = cudaStreamSynchronize(s);
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(s, &status));
    cudaError_t end = cudaStreamEndCapture(s, &g);
    std::printf("sync during capture: %s; end: %s, graph %s\n", cudaGetErrorName(sync), cudaGetErrorName(end),
                g ? "returned" : "NULL");
    EXPECT(sync == cudaErrorStreamCaptureUnsupported);
    EXPECT(status == cudaStreamCaptureStatusInvalidated);
    EXPECT(end == cudaErrorStreamCaptureInvalidated && g == NULL);
    cudaGetLastError();
    fill<<<N / 256, 256, 0, s>>>(dx, N, 9.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(hy, dx, BYTES, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(wrong(9.0f) == 0);
    std::printf("after the invalid capture: y[0]=%g\n", hy[0]);
}

int main()
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMalloc(&dx, BYTES));
    CHECK(cudaMalloc(&dy, BYTES));
    CHECK(cudaMallocHost(&hy, BYTES));
    captured_graph(s);
    built_graph(s);
    invalid_capture(s);
    CHECK(cudaFreeHost(hy));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaStreamDestroy(s));
    std::printf("PASS\n");
    return 0;
}

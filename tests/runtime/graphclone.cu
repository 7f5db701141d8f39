/*
 * graphclone.cu: a captured graph cloned (cudaGraphClone, as cuda-samples'
 * simpleCudaGraphs does), the original destroyed, the clone instantiated
 * and launched twice; each clone node found from its original
 * (cudaGraphNodeFindInClone) with the same type. The graph: copy x in,
 * fill y, y = a*x + y, copy y out. The kernels are fakecuda's built-in
 * saxpy and fill.
 * Prints one line per step and "PASS"; exits 1 at the first wrong value
 * or failed call.
 */
#include "runtime_test.cuh"

static const int N = 8192;

int main()
{
    float *hx, *hy, *dx, *dy;
    CHECK(cudaMallocHost(&hx, N * sizeof(float)));
    CHECK(cudaMallocHost(&hy, N * sizeof(float)));
    CHECK(cudaMalloc(&dx, N * sizeof(float)));
    CHECK(cudaMalloc(&dy, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        hx[i] = (float)i;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t graph, clone;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemcpyAsync(dx, hx, N * sizeof(float), cudaMemcpyHostToDevice, s));
    fill<<<N / 256, 256, 0, s>>>(dy, N, 4.0f);
    saxpy<<<N / 256, 256, 0, s>>>(N, 0.5f, dx, dy);
    CHECK(cudaMemcpyAsync(hy, dy, N * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaGraphClone(&clone, graph));

    size_t n = 0;
    CHECK(cudaGraphGetNodes(graph, nullptr, &n));
    cudaGraphNode_t nodes[8];
    int bad = n != 4;
    if (n > 8)
        n = 8;
    CHECK(cudaGraphGetNodes(graph, nodes, &n));
    int same = 0;
    for (size_t i = 0; i < n; i++) {
        cudaGraphNode_t copy;
        cudaGraphNodeType a, b;
        CHECK(cudaGraphNodeFindInClone(&copy, nodes[i], clone));
        CHECK(cudaGraphNodeGetType(nodes[i], &a));
        CHECK(cudaGraphNodeGetType(copy, &b));
        same += a == b && copy != nodes[i];
    }
    size_t m = 0;
    CHECK(cudaGraphGetNodes(clone, nullptr, &m));
    std::printf("clone: %zu nodes, %d found with the original's type\n", m, same);
    bad += m != n || same != (int)n;
    CHECK(cudaGraphDestroy(graph));

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, clone, 0));
    for (int round = 1; round <= 2; round++) {
        for (int i = 0; i < N; i++)
            hy[i] = -1.0f;
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
        int wrong = 0;
        for (int i = 0; i < N; i++)
            wrong += hy[i] != 0.5f * (float)i + 4.0f;
        std::printf("launch %d of the clone: y[1]=%g y[%d]=%g, %d wrong\n", round, hy[1], N - 1, hy[N - 1], wrong);
        bad += wrong;
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(clone));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaFreeHost(hx));
    CHECK(cudaFreeHost(hy));
    std::puts(bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}

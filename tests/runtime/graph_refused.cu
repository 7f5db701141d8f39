/*
 * graph_refused.cu: a captured graph over an input a rejected launch left
 * stale. fill<<<1, 2048>>> (the limit is 1024 threads per block) never
 * writes x; the program ignores the error and launches a graph captured
 * earlier: y = 0 (memset), y = 2*x + y (saxpy), y copied to the pinned host
 * buffer hy. Without cutaint the graph runs over the stale x and hy holds
 * its garbage; under cutaint the graph launch is skipped, hy is poisoned
 * and a later cudaMemcpy of y is refused. Then x is filled correctly and
 * the same graph gives correct output.
 *
 *   graph_refused stale    the rejected launch, then the graph
 *   graph_refused clean    the graph over a correctly filled x
 *   graph_refused launch   the graph over a correctly filled x, its launch
 *                          failing when CUTAINT_INJECT says so
 * Prints "RESULT key=value" lines for tests/runtime/graph_refused.sh:
 * fill, graph (error names), graph_host and memcpy_host (correct, poisoned
 * or stale), memcpy (error name).
 */
#include <cstring>

#include "runtime_test.cuh"

static const int N = 1024;
static const size_t BYTES = N * sizeof(float);

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "clean";
    float *dx, *dy, *hy;
    static float h[N];
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMalloc(&dx, BYTES));
    CHECK(cudaMalloc(&dy, BYTES));
    CHECK(cudaMallocHost(&hy, BYTES));
    /* x starts as 7 everywhere: the stale value a rejected fill leaves */
    for (int i = 0; i < N; i++)
        h[i] = 7.0f;
    CHECK(cudaMemcpy(dx, h, BYTES, cudaMemcpyHostToDevice));

    cudaGraph_t g;
    cudaGraphExec_t e;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemsetAsync(dy, 0, BYTES, s));
    saxpy<<<N / 256, 256, 0, s>>>(N, 2.0f, dx, dy);
    CHECK(cudaMemcpyAsync(hy, dy, BYTES, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&e, g, 0));

    bool stale = std::strcmp(mode, "stale") == 0; /* "clean" and "launch" fill x correctly */
    fill<<<stale ? 1 : N / 256, stale ? 2048 : 256, 0, s>>>(dx, N, 1.0f);
    std::printf("RESULT fill=%s\n", cudaGetErrorName(cudaGetLastError()));
    CHECK(cudaStreamSynchronize(s));

    for (int i = 0; i < N; i++)
        hy[i] = -1.0f;
    cudaError_t launch = cudaGraphLaunch(e, s);
    cudaError_t sync = cudaStreamSynchronize(s);
    std::printf("RESULT graph=%s\nRESULT graph_sync=%s\nRESULT graph_host=%s\n", cudaGetErrorName(launch),
                cudaGetErrorName(sync), classify(hy, N, 2.0f));
    (void)cudaGetLastError();
    std::memset(h, 0, sizeof h);
    cudaError_t copy = cudaMemcpy(h, dy, BYTES, cudaMemcpyDeviceToHost);
    std::printf("RESULT memcpy=%s\nRESULT memcpy_host=%s\n", cudaGetErrorName(copy), classify(h, N, 2.0f));

    CHECK(cudaGraphExecDestroy(e));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFreeHost(hy));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaStreamDestroy(s));
    return 0;
}

/*
 * graph_missing.cu: graphs of kernels the driver cannot find (fakecuda has
 * no code for them: its lookup answers CUDA_ERROR_NOT_FOUND), as a program
 * builds them.  argv[1] says how:
 *   add      cudaGraphAddKernelNode of one, then of saxpy (which fakecuda
 *            knows), and the graph instantiated
 *   capture  launches of eight of them captured from a stream, the capture
 *            ended and the graph instantiated
 *   query    the runtime calls that ask about a kernel outside launches:
 *            cudaGetFuncBySymbol, cudaFuncGetAttributes, cudaFuncSetAttribute,
 *            cudaFuncSetCacheConfig, the occupancy API
 * Prints "RESULT key=value" lines (error names) for graph_missing.sh: the
 * program's view under cutaint is its view without it.  capture also
 * prints "TIME capture_us=N" (the capture's wall time, not judged: the
 * cost of a first use is measured in tools/bench).
 */
#include <chrono>
#include <cstring>

#include "runtime_test.cuh"

/* No fakecuda code for any of these. */
#define MISSING(name)                                  \
    __global__ void name(float *out, int n)            \
    {                                                  \
        int i = blockIdx.x * blockDim.x + threadIdx.x; \
        if (i < n)                                     \
            out[i] = 3.0f;                             \
    }
MISSING(missing0)
MISSING(missing1)
MISSING(missing2)
MISSING(missing3)
MISSING(missing4)
MISSING(missing5)
MISSING(missing6)
MISSING(missing7)

typedef void (*kernel)(float *, int);
static const kernel missing[] = {missing0, missing1, missing2, missing3, missing4, missing5, missing6, missing7};

static const int N = 1024;

static void show(const char *key, cudaError_t e)
{
    std::printf("RESULT %s=%s\n", key, cudaGetErrorName(e));
}

static void by_add(float *d)
{
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    int n = N;
    float a = 2.0f;
    void *args[] = {&d, &n};
    cudaKernelNodeParams p = {};
    p.func = (void *)missing0;
    p.gridDim = dim3(N / 256);
    p.blockDim = dim3(256);
    p.kernelParams = args;
    cudaGraphNode_t node = nullptr;
    show("add_missing", cudaGraphAddKernelNode(&node, g, nullptr, 0, &p));
    show("after_add_missing", cudaGetLastError());
    void *saxpy_args[] = {&n, &a, &d, &d};
    p.func = (void *)saxpy;
    p.kernelParams = saxpy_args;
    show("add_saxpy", cudaGraphAddKernelNode(&node, g, nullptr, 0, &p));
    cudaGraphExec_t e = nullptr;
    show("instantiate", cudaGraphInstantiate(&e, g, 0));
    if (e)
        cudaGraphExecDestroy(e);
    CHECK(cudaGraphDestroy(g));
}

/* The runtime calls that ask the driver about a kernel, outside launches. */
static void by_query()
{
    cudaFunction_t f = nullptr;
    show("func_by_symbol", cudaGetFuncBySymbol(&f, (const void *)missing0));
    (void)cudaGetLastError();
    cudaFuncAttributes attr;
    show("func_attributes", cudaFuncGetAttributes(&attr, missing1));
    (void)cudaGetLastError();
    show("func_set_attribute", cudaFuncSetAttribute(missing2, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024));
    (void)cudaGetLastError();
    show("func_cache_config", cudaFuncSetCacheConfig(missing3, cudaFuncCachePreferL1));
    (void)cudaGetLastError();
    int blocks = 0;
    show("occupancy", cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, missing4, 256, 0));
    (void)cudaGetLastError();
    show("func_by_symbol_again", cudaGetFuncBySymbol(&f, (const void *)missing0));
    (void)cudaGetLastError();
}

static void by_capture(float *d)
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    auto start = std::chrono::steady_clock::now();
    show("begin_capture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (kernel k : missing) {
        k<<<N / 256, 256, 0, s>>>(d, N);
        show("captured_launch", cudaGetLastError());
    }
    cudaGraph_t g = nullptr;
    show("end_capture", cudaStreamEndCapture(s, &g));
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    cudaGraphExec_t e = nullptr;
    if (g)
        show("instantiate", cudaGraphInstantiate(&e, g, 0));
    std::printf("TIME capture_us=%lld\n", (long long)us);
    if (e)
        cudaGraphExecDestroy(e);
    if (g)
        cudaGraphDestroy(g);
    (void)cudaGetLastError();
    CHECK(cudaStreamDestroy(s));
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "";
    float *d;
    CHECK(cudaMalloc(&d, N * sizeof(float)));
    if (!std::strcmp(how, "add"))
        by_add(d);
    else if (!std::strcmp(how, "capture"))
        by_capture(d);
    else if (!std::strcmp(how, "query"))
        by_query();
    else {
        std::printf("usage: graph_missing add|capture|query\n");
        return 2;
    }
    CHECK(cudaFree(d));
    return 0;
}

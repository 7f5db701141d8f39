/*
 * unusable.cu: a runtime program whose kernel the driver cannot use (built
 * for another GPU, or its kernel refused: FAKECUDA_FAULTS), launching it in
 * one of the ways programs do, then reading back the buffer it was to
 * write.  argv[1] says how:
 *   chevron        fill<<<...>>>
 *   launch_kernel  cudaLaunchKernel
 *   launch_ex      cudaLaunchKernelExC
 *   graph          captured into a graph, instantiated and launched
 *   queried        cudaFuncGetAttributes and the occupancy API first, then <<<...>>>
 *   span           fill_span<<<...>>>, its output inside a struct passed by
 *                  value: only the image's parameter table says where
 * The buffer holds 7s; fill would write 1s.  Then saxpy reads it into a
 * second buffer (2 * 1 + 0 each, had fill run).  Without cutaint the
 * runtime fails fill's launch without reaching the driver and both copies
 * serve stale bytes; with it both are refused and their host buffers
 * poisoned (saxpy, reading fill's output, is skipped where its own image
 * is usable), while every other runtime answer stays the same.  Prints
 * "RESULT key=value" lines for tests/runtime/unusable.sh: each call's
 * error, then memcpy/host and memcpy_y/host_y (correct, poisoned, stale).
 */
#include <vector>

#include "runtime_test.cuh"

static const int N = 1000;

struct Span {
    float *p;
    int n;
};

__global__ void fill_span(Span s, float value)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < s.n)
        s.p[i] = value;
}

static void show(const char *key, cudaError_t e)
{
    std::printf("RESULT %s=%s\n", key, cudaGetErrorName(e));
}

static void by_graph(float *d, int n, float v)
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    show("begin_capture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    fill<<<(n + 255) / 256, 256, 0, s>>>(d, n, v);
    show("captured_launch", cudaGetLastError());
    cudaGraph_t g = nullptr;
    show("end_capture", cudaStreamEndCapture(s, &g));
    cudaGraphExec_t exec = nullptr;
    show("instantiate", cudaGraphInstantiate(&exec, g, 0));
    show("graph_launch", cudaGraphLaunch(exec, s));
    show("stream_sync", cudaStreamSynchronize(s));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
}

static void queried(float *d, int n, float v)
{
    cudaFuncAttributes attr;
    show("func_attributes", cudaFuncGetAttributes(&attr, fill));
    int blocks = 0;
    show("occupancy_blocks", cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fill, 256, 0));
    int grid = 0, block = 0;
    show("occupancy_block_size", cudaOccupancyMaxPotentialBlockSize(&grid, &block, fill));
    fill<<<(n + 255) / 256, 256>>>(d, n, v);
    show("launch", cudaGetLastError());
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "";
    float *d = nullptr;
    CHECK(cudaMalloc(&d, N * sizeof(float)));
    std::vector<float> h(N, 7.0f);
    CHECK(cudaMemcpy(d, h.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    int n = N;
    float v = 1.0f;
    void *args[] = {&d, &n, &v};
    if (!std::strcmp(how, "chevron")) {
        fill<<<(N + 255) / 256, 256>>>(d, N, v);
        show("launch", cudaGetLastError());
    } else if (!std::strcmp(how, "launch_kernel")) {
        show("launch", cudaLaunchKernel((const void *)fill, dim3((N + 255) / 256), dim3(256), args, 0, 0));
    } else if (!std::strcmp(how, "launch_ex")) {
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3((N + 255) / 256);
        config.blockDim = dim3(256);
        show("launch", cudaLaunchKernelExC(&config, (const void *)fill, args));
    } else if (!std::strcmp(how, "graph")) {
        by_graph(d, N, v);
    } else if (!std::strcmp(how, "span")) {
        fill_span<<<(N + 255) / 256, 256>>>(Span{d, N}, v);
        show("launch", cudaGetLastError());
    } else if (!std::strcmp(how, "queried")) {
        queried(d, N, v);
    } else {
        std::printf("FAIL unknown way to launch: %s\n", how);
        return 2;
    }
    show("last_error", cudaGetLastError());
    float *y = nullptr;
    CHECK(cudaMalloc(&y, N * sizeof(float)));
    CHECK(cudaMemset(y, 0, N * sizeof(float)));
    saxpy<<<(N + 255) / 256, 256>>>(N, 2.0f, d, y);
    show("saxpy", cudaGetLastError());
    show("synchronize", cudaDeviceSynchronize());
    show("memcpy", cudaMemcpy(h.data(), d, N * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("RESULT host=%s\n", classify(h.data(), N, 1.0f));
    show("memcpy_y", cudaMemcpy(h.data(), y, N * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("RESULT host_y=%s\n", classify(h.data(), N, 2.0f));
    show("free", cudaFree(d));
    show("free_y", cudaFree(y));
    return 0;
}

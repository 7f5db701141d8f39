/*
 * profiler.cu: cudaProfilerStart / cudaProfilerStop around timed work, as
 * cuda-samples' asyncAPI and matrixMul do: the calls succeed (fakecuda has
 * no profiling tool to toggle), starting twice and stopping twice are
 * harmless, and the work between them computes what it should. The kernels
 * are fakecuda's built-in saxpy and fill.
 * Prints one line per step and "PASS"; exits 1 at the first wrong value
 * or failed call.
 */
#include "runtime_test.cuh"

#include <cuda_profiler_api.h>

static const int N = 1 << 14;

int main()
{
    float *hx, *hy, *dx, *dy;
    CHECK(cudaMallocHost(&hx, N * sizeof(float)));
    CHECK(cudaMallocHost(&hy, N * sizeof(float)));
    CHECK(cudaMalloc(&dx, N * sizeof(float)));
    CHECK(cudaMalloc(&dy, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        hx[i] = (float)i;
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaProfilerStart());
    CHECK(cudaProfilerStart()); /* already started: no effect */
    CHECK(cudaEventRecord(start, 0));
    CHECK(cudaMemcpyAsync(dx, hx, N * sizeof(float), cudaMemcpyHostToDevice, 0));
    fill<<<N / 256, 256>>>(dy, N, 1.0f);
    CHECK(cudaGetLastError());
    saxpy<<<N / 256, 256>>>(N, 2.0f, dx, dy);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(hy, dy, N * sizeof(float), cudaMemcpyDeviceToHost, 0));
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaProfilerStop());
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaProfilerStop()); /* already stopped: no effect */
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    int bad = ms < 0;
    for (int i = 0; i < N; i++)
        bad += hy[i] != 2.0f * (float)i + 1.0f;
    std::printf("profiled work: y[1]=%g y[%d]=%g, elapsed %s, %d wrong\n", hy[1], N - 1, hy[N - 1],
                ms >= 0 ? "ok" : "negative", bad);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaFreeHost(hx));
    CHECK(cudaFreeHost(hy));
    std::puts(bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}

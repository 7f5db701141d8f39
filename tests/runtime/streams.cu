/*
 * streams.cu: the CUDA runtime's stream, event, pinned-memory and memset
 * paths on fakecuda: device properties, a created stream with async copies,
 * a memset and two launches on it, events around the work, a stream
 * synchronise, then cudaDeviceReset() and a second stream on the fresh
 * context. The kernels are fakecuda's built-in saxpy and fill.
 * Prints one line per step and "PASS"; exits 1 at the first wrong value
 * or failed call.
 */
#include "runtime_test.cuh"

static const int N = 4096;

/* On one created stream: x = i, y = y0 (fill), y += a*x; then checks y. */
static int on_stream(int round, float a, float y0)
{
    cudaStream_t s;
    cudaEvent_t start, stop;
    float *hx, *hy, *dx, *dy;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaMallocHost(&hx, N * sizeof(float)));
    CHECK(cudaMallocHost(&hy, N * sizeof(float)));
    CHECK(cudaMalloc(&dx, N * sizeof(float)));
    CHECK(cudaMalloc(&dy, N * sizeof(float)));
    for (int i = 0; i < N; i++) {
        hx[i] = (float)i;
        hy[i] = -1.0f;
    }
    CHECK(cudaEventRecord(start, s));
    CHECK(cudaMemsetAsync(dx, 0, N * sizeof(float), s));
    CHECK(cudaMemcpyAsync(dx, hx, N * sizeof(float), cudaMemcpyHostToDevice, s));
    fill<<<N / 256, 256, 0, s>>>(dy, N, y0);
    CHECK(cudaGetLastError());
    saxpy<<<N / 256, 256, 0, s>>>(N, a, dx, dy);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(hy, dy, N * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaEventRecord(stop, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaEventSynchronize(stop));
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    int bad = ms < 0;
    for (int i = 0; i < N; i++)
        bad += hy[i] != a * (float)i + y0;
    std::printf("stream round %d: y[1]=%g y[%d]=%g, elapsed %s, %d wrong\n", round, hy[1], N - 1, hy[N - 1],
                ms >= 0 ? "ok" : "negative", bad);
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaFreeHost(hx));
    CHECK(cudaFreeHost(hy));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaStreamDestroy(s));
    return bad;
}

int main()
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, compute capability %d.%d, %d SMs\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount);
    int bad = prop.major != 9 || prop.minor != 0;
    size_t free_bytes = 0, total = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total));
    bad += free_bytes == 0 || free_bytes > total;
    bad += on_stream(1, 3.0f, 2.0f);
    CHECK(cudaDeviceReset());
    bad += on_stream(2, -1.0f, 0.5f);
    std::puts(bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}

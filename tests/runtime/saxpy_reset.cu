/*
 * saxpy_reset.cu: a CUDA runtime program that fakecuda must host: the
 * runtime's start (private tables, integrity check, lazy module
 * registration), a launch, copies both ways, then cudaDeviceReset() and the
 * same again on the fresh primary context. The kernels' mangled names are
 * fakecuda's built-in saxpy and fill, which compute what these bodies do.
 * Prints one line per round and "PASS"; exits 1 at the first wrong value
 * or failed call.
 */
#include "runtime_test.cuh"

static const int N = 1000;

/* y = a*x + y with x[i] = i, y set by fill on the device; returns the errors. */
static int round_trip(int round, float a, float y0)
{
    static float x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i;
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, N * sizeof(float)));
    CHECK(cudaMalloc(&dy, N * sizeof(float)));
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    int threads = 256, blocks = (N + threads - 1) / threads;
    fill<<<blocks, threads>>>(dy, N, y0);
    CHECK(cudaGetLastError());
    saxpy<<<blocks, threads>>>(N, a, dx, dy);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += y[i] != a * (float)i + y0;
    std::printf("round %d: y[0]=%g y[%d]=%g, %d wrong\n", round, y[0], N - 1, y[N - 1], bad);
    return bad;
}

int main()
{
    int devices = 0;
    CHECK(cudaGetDeviceCount(&devices));
    std::printf("devices: %d\n", devices);
    int bad = round_trip(1, 2.0f, 1.0f);
    CHECK(cudaDeviceReset());
    bad += round_trip(2, 0.5f, 3.0f);
    std::puts(bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}

/*
 * wrong_arch.cu: a CUDA runtime program built for sm_80 only (meson.build:
 * -gencode arch=compute_80,code=sm_80, no PTX), as a build for the wrong
 * GPU is. WRONG_ARCH_EXPECT says what the device and the loading mode make
 * of it:
 *   runs    the device runs sm_80 (8.x): the kernel fills the buffer
 *   launch  it cannot: the launch fails with cudaErrorNoKernelImageForDevice,
 *           the kernel never runs, and the context stays usable
 *   start   it cannot, and CUDA_MODULE_LOADING=EAGER makes the runtime load
 *           its modules when it starts: its first call (cudaMalloc) fails
 *           with that error, and so does the launch
 * Prints what each call returned, then PASS or FAIL.
 */
#include "runtime_test.cuh"

static const int N = 256;

static bool expect(const char *what, cudaError_t got, cudaError_t want)
{
    std::printf("%s: %s\n", what, cudaGetErrorName(got));
    if (got == want)
        return true;
    std::printf("FAIL %s returned %s, expected %s\n", what, cudaGetErrorName(got), cudaGetErrorName(want));
    return false;
}

int main()
{
    const char *want = std::getenv("WRONG_ARCH_EXPECT");
    if (!want || (std::strcmp(want, "runs") && std::strcmp(want, "launch") && std::strcmp(want, "start"))) {
        std::puts("FAIL WRONG_ARCH_EXPECT must be runs, launch or start");
        return 1;
    }
    bool runs = std::strcmp(want, "runs") == 0, at_start = std::strcmp(want, "start") == 0;
    const cudaError_t refused = cudaErrorNoKernelImageForDevice;
    float *d = nullptr;
    bool ok = expect("cudaMalloc", cudaMalloc(&d, N * sizeof(float)), at_start ? refused : cudaSuccess);
    if (at_start) {
        fill<<<1, N>>>(d, N, 2.0f);
        ok = expect("launch", cudaGetLastError(), refused) && ok;
        std::puts(ok ? "PASS" : "FAIL");
        return ok ? 0 : 1;
    }
    CHECK(cudaMemset(d, 0, N * sizeof(float)));
    fill<<<1, N>>>(d, N, 2.0f);
    ok = expect("launch", cudaGetLastError(), runs ? cudaSuccess : refused) && ok;
    ok = expect("cudaDeviceSynchronize", cudaDeviceSynchronize(), cudaSuccess) && ok;
    static float h[N];
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    int filled = 0;
    for (int i = 0; i < N; i++)
        filled += h[i] == 2.0f;
    std::printf("elements the kernel wrote: %d of %d\n", filled, N);
    if (filled != (runs ? N : 0)) {
        std::printf("FAIL expected %d\n", runs ? N : 0);
        ok = false;
    }
    CHECK(cudaFree(d));
    std::puts(ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}

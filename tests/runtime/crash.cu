/*
 * crash.cu: a runtime program whose kernel faults at execution, after a
 * fill.  crash(float*) stores far outside any allocation; its mangled name
 * is fakecuda's built-in _Z5crashPf, which fails with
 * CUDA_ERROR_ILLEGAL_ADDRESS when it runs, as fill is _Z4fillPfif
 * (runtime_test.cuh).  The launch answers cudaSuccess; the next
 * cudaDeviceSynchronize cudaErrorIllegalAddress.  argv[1] says whether fill
 * was synchronised before crash's launch:
 *   synced    fill, cudaDeviceSynchronize, crash, cudaDeviceSynchronize
 *   unsynced  fill, crash, cudaDeviceSynchronize
 * The program ignores the error and returns 0.  Prints "RESULT key=value"
 * lines for tests/runtime/crash.sh: each call's error.
 */
#include "runtime_test.cuh"

static const int N = 1024;

__global__ void crash(float *p)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    p[i + (1ll << 36)] = 1.0f; /* 256 GiB past the buffer: an illegal address */
}

static void show(const char *key, cudaError_t e)
{
    std::printf("RESULT %s=%s\n", key, cudaGetErrorName(e));
}

int main(int argc, char **argv)
{
    bool synced = argc > 1 && std::strcmp(argv[1], "synced") == 0;
    float *x = nullptr, *y = nullptr;
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMalloc(&y, N * sizeof(float)));
    fill<<<N / 256, 256>>>(x, N, 1.0f);
    show("launch_fill", cudaGetLastError());
    if (synced)
        show("sync_fill", cudaDeviceSynchronize());
    crash<<<N / 256, 256>>>(y);
    show("launch_crash", cudaGetLastError());
    show("sync", cudaDeviceSynchronize());
    return 0;
}

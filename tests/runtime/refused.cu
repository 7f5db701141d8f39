/*
 * refused.cu: the bug cutaint exists for, in an ordinary CUDA runtime
 * program. A launch with 2048 threads per block (the limit is 1024) never
 * runs; the program ignores its error and copies the output back with
 * cudaMemcpy. Without cutaint that copy succeeds and hands over whatever the
 * buffer held; under cutaint it must fail, with the host buffer poisoned.
 * Then the program does it right: it clears the buffer with cudaMemset (a
 * non-const pointer is an input too, and 4 blocks of 256 are fewer threads in
 * all than the refused 2048: no retry, so a launch over the stale buffer
 * would be skipped; retry.cu has the retries), relaunches correctly and
 * reads back correct values; and once more after cudaDeviceReset().
 *
 * fill's mangled name is fakecuda's built-in fill. Prints "RESULT key=value"
 * lines for tests/runtime/refused.sh: launch and memcpy (error names), host
 * (correct, poisoned or stale), then retry_* and reset_* the same way.
 */
#include <cstring>

#include "runtime_test.cuh"

static const int N = 1000;

/* One launch of fill with `threads` per block, its error ignored, and the read back. */
static void launch_and_read(const char *prefix, float *d, unsigned threads, float value)
{
    static float h[N];
    std::memset(h, 0, sizeof h);
    (void)cudaGetLastError(); /* the runtime keeps the last error: start from none */
    if (*prefix)
        cudaMemset(d, 0, N * sizeof(float));
    fill<<<(N + threads - 1) / threads, threads>>>(d, N, value);
    cudaError_t launch = cudaGetLastError();
    cudaError_t copy = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    std::printf("RESULT %slaunch=%s\nRESULT %smemcpy=%s\nRESULT %shost=%s\n", prefix, cudaGetErrorName(launch), prefix,
                cudaGetErrorName(copy), prefix, classify(h, N, value));
}

int main()
{
    float *d = nullptr;
    if (cudaMalloc(&d, N * sizeof(float)) != cudaSuccess)
        return 1;
    launch_and_read("", d, 2048, 1.0f);
    launch_and_read("retry_", d, 256, 2.0f);
    cudaDeviceReset();
    if (cudaMalloc(&d, N * sizeof(float)) != cudaSuccess)
        return 1;
    launch_and_read("reset_", d, 256, 3.0f);
    cudaFree(d);
    return 0;
}

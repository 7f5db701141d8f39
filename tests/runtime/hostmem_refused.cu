/*
 * hostmem_refused.cu: registered and mapped pinned host memory when a
 * kernel fails (fakecuda's FAKECUDA_FAULTS fails the launches the judge,
 * hostmem_refused.sh, names).
 * - registered: a buffer cudaHostRegister'd as the host side of an async
 *   copy back from a device buffer whose fill failed (the first fill);
 *   under cutaint the copy is refused and the registered buffer poisoned.
 * - zero-copy: a fill through cudaHostAlloc'd mapped memory's device
 *   pointer fails (the second fill); the host then reads the buffer with
 *   plain loads, which no driver call sees: stale with or without cutaint,
 *   which says so.
 * Output: "RESULT key=value" lines; exit 0 unless a call the test does not
 * expect to fail fails.
 */
#include "runtime_test.cuh"

static const int N = 4096;

int main()
{
    size_t bytes = N * sizeof(float);
    void *p = nullptr;
    if (posix_memalign(&p, 4096, bytes) != 0)
        return 1;
    float *registered = (float *)p;
    for (int i = 0; i < N; i++)
        registered[i] = -1.0f;
    CHECK(cudaHostRegister(registered, bytes, cudaHostRegisterMapped));
    float *d;
    CHECK(cudaMalloc(&d, bytes));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    fill<<<N / 256, 256, 0, s>>>(d, N, 2.0f);
    std::printf("RESULT registered_launch=%s\n", cudaGetErrorName(cudaGetLastError()));
    cudaError_t copied = cudaMemcpyAsync(registered, d, bytes, cudaMemcpyDeviceToHost, s);
    cudaError_t synced = cudaStreamSynchronize(s);
    std::printf("RESULT registered_memcpy=%s\n", cudaGetErrorName(copied != cudaSuccess ? copied : synced));
    std::printf("RESULT registered_host=%s\n", classify(registered, N, 2.0f));

    float *mapped, *device_view;
    CHECK(cudaHostAlloc((void **)&mapped, bytes, cudaHostAllocMapped));
    for (int i = 0; i < N; i++)
        mapped[i] = -1.0f;
    CHECK(cudaHostGetDevicePointer((void **)&device_view, mapped, 0));
    fill<<<N / 256, 256>>>(device_view, N, 3.0f);
    std::printf("RESULT mapped_launch=%s\n", cudaGetErrorName(cudaGetLastError()));
    cudaDeviceSynchronize();
    std::printf("RESULT mapped_host=%s\n", classify(mapped, N, 3.0f));
    std::printf("RESULT mapped_at=%p\n", (void *)mapped);

    CHECK(cudaFreeHost(mapped));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    CHECK(cudaHostUnregister(registered));
    free(p);
    return 0;
}

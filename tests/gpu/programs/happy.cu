// happy.cu: an ordinary CUDA runtime program in which nothing fails.
//
// It exercises the calls cutaint intercepts on the happy path (allocation,
// host/device copies, memsets, launches on the default and a created stream,
// stream-ordered allocation, events, 2D copies) and prints integer-valued
// checksums, so its output must be byte-for-byte the same with and without the
// shim. It checks every result against a CPU reference and exits 1 on a
// mismatch.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                     \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

// Integer sums are exact whatever the order of the atomics.
__global__ void sum_u64(const float *x, unsigned long long *acc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(acc, (unsigned long long)x[i]);
}

int main()
{
    const int n = 1 << 20;
    const size_t bytes = n * sizeof(float);
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; ++i) {
        hx[i] = (float)(i % 1000);
        hy[i] = (float)(i % 7);
    }

    float *x, *y, *z;
    unsigned long long *acc;
    CHECK(cudaMalloc(&x, bytes));
    CHECK(cudaMalloc(&y, bytes));
    CHECK(cudaMalloc(&acc, sizeof *acc));
    CHECK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(y, hy.data(), bytes, cudaMemcpyHostToDevice));

    // Default stream: y = 2x + y.
    saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
    CHECK(cudaGetLastError());

    // A created stream, pinned memory, an async copy back, events.
    cudaStream_t s;
    cudaEvent_t start, stop;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    float *pinned;
    CHECK(cudaMallocHost(&pinned, bytes));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(start, s));
    CHECK(cudaMemcpyAsync(pinned, y, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaEventRecord(stop, s));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaStreamSynchronize(s));
    unsigned long long want_y = 0, got_y = 0;
    for (int i = 0; i < n; ++i) {
        float w = 2.0f * hx[i] + hy[i];
        if (pinned[i] != w) {
            printf("saxpy mismatch at %d: %g != %g\n", i, pinned[i], w);
            return 1;
        }
        want_y += (unsigned long long)w;
        got_y += (unsigned long long)pinned[i];
    }
    printf("saxpy checksum=%llu\n", got_y);

    // Stream-ordered allocation, device-to-device copy, memset, reduction.
    CHECK(cudaMallocAsync(&z, bytes, s));
    CHECK(cudaMemcpyAsync(z, y, bytes, cudaMemcpyDeviceToDevice, s));
    CHECK(cudaMemsetAsync(acc, 0, sizeof *acc, s));
    sum_u64<<<(n + 255) / 256, 256, 0, s>>>(z, acc, n);
    CHECK(cudaGetLastError());
    unsigned long long got_sum = 0;
    CHECK(cudaMemcpyAsync(&got_sum, acc, sizeof got_sum, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    printf("device sum=%llu (host %llu)\n", got_sum, want_y);
    if (got_sum != want_y)
        return 1;

    // A 2D copy of a 64x64 corner of x viewed as 1024 wide, through a pitched buffer.
    float *pitched;
    size_t pitch;
    CHECK(cudaMallocPitch(&pitched, &pitch, 64 * sizeof(float), 64));
    CHECK(cudaMemcpy2D(pitched, pitch, x, 1024 * sizeof(float), 64 * sizeof(float), 64, cudaMemcpyDeviceToDevice));
    std::vector<float> corner(64 * 64);
    CHECK(cudaMemcpy2D(corner.data(), 64 * sizeof(float), pitched, pitch, 64 * sizeof(float), 64,
                       cudaMemcpyDeviceToHost));
    unsigned long long corner_sum = 0;
    for (int r = 0; r < 64; ++r)
        for (int c = 0; c < 64; ++c) {
            if (corner[r * 64 + c] != hx[r * 1024 + c]) {
                printf("2D copy mismatch at %d,%d\n", r, c);
                return 1;
            }
            corner_sum += (unsigned long long)corner[r * 64 + c];
        }
    printf("2D corner sum=%llu\n", corner_sum);

    CHECK(cudaFreeAsync(z, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaFree(pitched));
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(acc));
    CHECK(cudaFree(y));
    CHECK(cudaFree(x));
    printf("RESULT ok=1\n");
    return 0;
}

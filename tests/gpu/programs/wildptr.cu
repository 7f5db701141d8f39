// wildptr.cu: a kernel writes through a pointer nobody set, and the program
// carries on as a server would.
//
// One slot of the batch's output table is left null, so the kernel stores to
// address 0 and the context is destroyed (cudaErrorIllegalAddress). The
// program reports the error, tries to keep serving (every later call fails),
// and returns 0, which is what hides the dead process from a supervisor.
// Under cutaint the exit status must be 70, the report must carry
// context_lost and the health file the operator-facing reason.
#include <cstdio>
#include <cuda_runtime.h>

struct Batch {
    float *out[4]; // one output buffer per request
    int n;
};

__global__ void write_results(Batch b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < b.n)
        b.out[blockIdx.y][i] = (float)(blockIdx.y * 1000 + i);
}

int main()
{
    const int n = 4096;
    Batch b = {};
    b.n = n;
    for (int r = 0; r < 3; ++r) // the bug: request 3's slot is never filled in
        cudaMalloc(&b.out[r], n * sizeof(float));

    write_results<<<dim3(n / 256, 4), 256>>>(b);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    printf("launch: %s, synchronize: %s\n", cudaGetErrorName(launch), cudaGetErrorName(sync));

    // "Keep serving": the next request. Every call fails now.
    float host[4] = {0, 0, 0, 0};
    float *next = nullptr;
    cudaError_t alloc = cudaMalloc(&next, n * sizeof(float));
    cudaError_t copy = cudaMemcpy(host, b.out[0], sizeof host, cudaMemcpyDeviceToHost);
    printf("next request: cudaMalloc %s, cudaMemcpy %s\n", cudaGetErrorName(alloc), cudaGetErrorName(copy));

    printf("RESULT sync=%s\n", cudaGetErrorName(sync));
    printf("RESULT next_memcpy=%s\n", cudaGetErrorName(copy));
    return 0; // the program's own status says all is well
}

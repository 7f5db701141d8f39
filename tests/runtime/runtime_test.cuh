/*
 * runtime_test.cuh: what the runtime test programs share: the kernels
 * whose mangled names are fakecuda built-ins (saxpy _Z5saxpyifPKfPf, fill
 * _Z4fillPfif), so fakecuda runs them as these bodies say; CHECK, which
 * ends the program with "FAIL ..." at the first failed runtime call; and
 * classify, what a host buffer read back holds.
 */
#ifndef RUNTIME_TEST_CUH
#define RUNTIME_TEST_CUH

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void fill(float *out, int n, float value)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = value;
}

#define CHECK(call)                                                                                              \
    do {                                                                                                         \
        cudaError_t e_ = (call);                                                                                 \
        if (e_ != cudaSuccess) {                                                                                 \
            std::printf("FAIL %s:%d %s: %s (%d)\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_), (int)e_); \
            std::exit(1);                                                                                        \
        }                                                                                                        \
    } while (0)

/* "correct" (every one of the n floats is want), "poisoned" (every byte is
 * cutaint's 0xff) or "stale" (anything else: bytes served as data). */
static inline const char *classify(const float *h, int n, float want)
{
    unsigned char poison[sizeof(float)];
    std::memset(poison, 0xff, sizeof poison);
    bool correct = true, poisoned = true;
    for (int i = 0; i < n; i++) {
        correct = correct && h[i] == want;
        poisoned = poisoned && std::memcmp(&h[i], poison, sizeof poison) == 0;
    }
    return correct ? "correct" : poisoned ? "poisoned" : "stale";
}

#endif

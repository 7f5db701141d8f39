/*
 * runtime_test.cuh: what the runtime test programs share: the kernels
 * whose mangled names are fakecuda built-ins (saxpy _Z5saxpyifPKfPf, fill
 * _Z4fillPfif), so fakecuda runs them as these bodies say, and CHECK, which
 * ends the program with "FAIL ..." at the first failed runtime call.
 */
#ifndef RUNTIME_TEST_CUH
#define RUNTIME_TEST_CUH

#include <cstdio>
#include <cstdlib>
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

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess) {                                                      \
            std::printf("FAIL %s:%d %s: %s (%d)\n", __FILE__, __LINE__, #call,        \
                        cudaGetErrorString(e_), (int)e_);                             \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

#endif

/*
 * image.cu: a runtime program whose kernel image the driver cannot use, as
 * a new user meets it: it fills a buffer with 7, launches fill (value 1)
 * over it, ignores the launch's error, and copies the buffer back.  Built
 * for this device it runs; built for another GPU (-gencode
 * arch=compute_80,code=sm_80 on a 9.0 device), or when the driver refuses
 * its image or its kernel (FAKECUDA_FAULTS), the launch fails inside the
 * runtime without reaching the driver and the copy serves the 7s.
 * Prints RESULT launch=, memcpy=, host= (correct, poisoned or stale) for
 * tests/runtime/image.sh.
 */
#include <vector>

#include "runtime_test.cuh"

static const int N = 1000;

int main()
{
    float *d = nullptr;
    if (cudaMalloc(&d, N * sizeof(float)) != cudaSuccess)
        return 1;
    std::vector<float> h(N, 7.0f);
    if (cudaMemcpy(d, h.data(), N * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
        return 1;
    fill<<<(N + 255) / 256, 256>>>(d, N, 1.0f);
    cudaError_t launch = cudaGetLastError();
    cudaError_t copy = cudaMemcpy(h.data(), d, N * sizeof(float), cudaMemcpyDeviceToHost);
    std::printf("RESULT launch=%s\nRESULT memcpy=%s\nRESULT host=%s\n", cudaGetErrorName(launch),
                cudaGetErrorName(copy), classify(h.data(), N, 1.0f));
    cudaFree(d);
    return 0;
}

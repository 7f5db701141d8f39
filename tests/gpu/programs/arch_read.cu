// arch_read.cu: a kernel built for another GPU, then a read of its output.
//
// tests/gpu/run.sh builds this program with -gencode arch=compute_80,code=sm_80
// only (sm_80 SASS, no PTX), as wrong_arch.cu is: an sm_90 GPU can neither
// run nor compile its kernel. Without cutaint the runtime fails both
// launches itself (cudaErrorNoKernelImageForDevice) and the copy back
// succeeds with the bytes the buffer held before: stale data served as a
// result. With cutaint every launch fails the same way, but the copy back is
// refused and the host buffer left all 0xff.
//
// The buffer is filled by cudaMemcpy with 7s; scale would make them 21s.
// It is launched twice, with <<<>>> and with cudaLaunchKernel, and neither
// error is acted on. Built twice by run.sh: static cudart and -cudart shared.
// It runs on fakecuda too, whose built-in extern "C" scale has this
// signature.
//
// Output: human-readable lines, then "RESULT key=value" lines for run.sh:
// malloc, fill, launch, launch_kernel, last_error, sync, memcpy, host
// (correct, poisoned, stale or other), free. Only the cudaMemcpy back line,
// memcpy and host may differ under cutaint.
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

extern "C" __global__ void scale(float *data, int n, float factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
}

static const int N = 1024;
static const float VALUE = 7.0f;
static const float FACTOR = 3.0f;

// What the host buffer holds after the copy back: scale's answer, the
// filled value no kernel touched, cutaint's poison, or something else.
static const char *classify(const std::vector<float> &h)
{
    bool correct = true, stale = true, poisoned = true;
    const unsigned char *b = reinterpret_cast<const unsigned char *>(h.data());
    for (size_t i = 0; i < h.size(); ++i) {
        if (h[i] != FACTOR * VALUE)
            correct = false;
        if (h[i] != VALUE)
            stale = false;
    }
    for (size_t i = 0; i < h.size() * sizeof(float); ++i)
        if (b[i] != 0xff)
            poisoned = false;
    return correct ? "correct" : stale ? "stale" : poisoned ? "poisoned" : "other";
}

static void result(const char *key, const char *value)
{
    printf("RESULT %s=%s\n", key, value);
}

int main()
{
    const size_t bytes = N * sizeof(float);
    std::vector<float> h(N, VALUE);
    float *d = nullptr;
    cudaError_t malloc_err = cudaMalloc(&d, bytes);
    printf("cudaMalloc: %s\n", cudaGetErrorName(malloc_err));
    if (malloc_err != cudaSuccess) {
        result("malloc", cudaGetErrorName(malloc_err));
        return 1;
    }
    cudaError_t fill = cudaMemcpy(d, h.data(), bytes, cudaMemcpyHostToDevice);
    printf("cudaMemcpy of %d x %g to the device: %s\n", N, VALUE, cudaGetErrorName(fill));

    scale<<<N / 256, 256>>>(d, N, FACTOR);
    cudaError_t launch = cudaGetLastError();
    printf("scale<<<>>>: %s (ignored)\n", cudaGetErrorName(launch));

    int n = N;
    float f = FACTOR;
    void *args[] = {&d, &n, &f};
    cudaError_t launch_kernel = cudaLaunchKernel((const void *)scale, dim3(N / 256), dim3(256), args, 0, nullptr);
    printf("cudaLaunchKernel(scale): %s (ignored)\n", cudaGetErrorName(launch_kernel));
    cudaError_t last = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    printf("cudaGetLastError: %s, cudaDeviceSynchronize: %s\n", cudaGetErrorName(last), cudaGetErrorName(sync));

    std::vector<float> back(N, 0.0f);
    cudaError_t copy = cudaMemcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost);
    const char *seen = classify(back);
    printf("cudaMemcpy back: %s, host buffer %s, h[0]=%g\n", cudaGetErrorName(copy), seen, back[0]);
    cudaError_t freed = cudaFree(d);
    printf("cudaFree: %s\n", cudaGetErrorName(freed));

    result("malloc", cudaGetErrorName(malloc_err));
    result("fill", cudaGetErrorName(fill));
    result("launch", cudaGetErrorName(launch));
    result("launch_kernel", cudaGetErrorName(launch_kernel));
    result("last_error", cudaGetErrorName(last));
    result("sync", cudaGetErrorName(sync));
    result("memcpy", cudaGetErrorName(copy));
    result("host", seen);
    result("free", cudaGetErrorName(freed));
    return 0;
}

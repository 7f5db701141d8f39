// badconfig.cu: a launch whose error nobody checks, then a read of its output.
//
// The kernel is launched with 2048 threads per block (the limit is 1024), so
// it never runs. The program does not check the launch (it only records what
// cudaGetLastError said, to print it) and copies the output back. Without
// cutaint that copy succeeds and hands over the previous contents of the
// buffer; with cutaint it must fail and leave 0xff bytes in the host buffer.
// Then the program retries correctly: the same buffer, now written by a
// successful launch, must read back correct under the shim too.
//
// Built three ways by tests/gpu/run.sh: static cudart (nvcc's default),
// --default-stream per-thread, and -cudart shared.
//
// Output: human-readable lines, then "RESULT key=value" lines for run.sh.
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

__global__ void scale(const float *in, float *out, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * in[i];
}

// What the host buffer holds after a copy back: the right answer, the stale
// contents the buffer had before, cutaint's poison, or something else.
static const char *classify(const std::vector<float> &h, float a, float stale)
{
    bool correct = true, is_stale = true, poisoned = true;
    const unsigned char *b = reinterpret_cast<const unsigned char *>(h.data());
    for (size_t i = 0; i < h.size(); ++i) {
        if (h[i] != a * (float)i)
            correct = false;
        if (h[i] != stale)
            is_stale = false;
    }
    for (size_t i = 0; i < h.size() * sizeof(float); ++i)
        if (b[i] != 0xff)
            poisoned = false;
    return correct ? "correct" : is_stale ? "stale" : poisoned ? "poisoned" : "other";
}

int main()
{
    const int n = 1 << 16;
    const size_t bytes = n * sizeof(float);
    std::vector<float> h_in(n), h_prev(n, -1.0f), h_out(n);
    for (int i = 0; i < n; ++i)
        h_in[i] = (float)i;

    float *in, *out;
    if (cudaMalloc(&in, bytes) != cudaSuccess || cudaMalloc(&out, bytes) != cudaSuccess) {
        printf("cudaMalloc failed\n");
        return 1;
    }
    cudaMemcpy(in, h_in.data(), bytes, cudaMemcpyHostToDevice);
    // The output buffer still holds an earlier request's answer (-1 everywhere).
    cudaMemcpy(out, h_prev.data(), bytes, cudaMemcpyHostToDevice);

    scale<<<n / 2048, 2048>>>(in, out, n, 2.0f); // the bug: 2048 > 1024 threads
    cudaError_t launch = cudaGetLastError();

    memset(h_out.data(), 0, bytes);
    cudaError_t copy = cudaMemcpy(h_out.data(), out, bytes, cudaMemcpyDeviceToHost);
    const char *seen = classify(h_out, 2.0f, -1.0f);
    printf("launch with 2048 threads: %s (ignored)\n", cudaGetErrorName(launch));
    printf("cudaMemcpy back: %s, host buffer %s, out[0]=%g\n", cudaGetErrorName(copy), seen, h_out[0]);

    // The fix: 256 threads per block. The read must now succeed and be right.
    scale<<<n / 256, 256>>>(in, out, n, 2.0f);
    cudaError_t relaunch = cudaGetLastError();
    memset(h_out.data(), 0, bytes);
    cudaError_t recopy = cudaMemcpy(h_out.data(), out, bytes, cudaMemcpyDeviceToHost);
    const char *reseen = classify(h_out, 2.0f, -1.0f);
    printf("retry with 256 threads: %s; cudaMemcpy back: %s, host buffer %s\n", cudaGetErrorName(relaunch),
           cudaGetErrorName(recopy), reseen);

    cudaFree(in);
    cudaFree(out);
    printf("RESULT launch=%s\n", cudaGetErrorName(launch));
    printf("RESULT memcpy=%s\n", cudaGetErrorName(copy));
    printf("RESULT host=%s\n", seen);
    printf("RESULT retry_memcpy=%s\n", cudaGetErrorName(recopy));
    printf("RESULT retry_host=%s\n", reseen);
    return 0;
}

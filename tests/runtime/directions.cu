/*
 * directions.cu: kernels whose pointer parameters are not const but only
 * read, or only written, as real code has them; the image's PTX says
 * which (docs/IMAGES.md, "Parameter directions").  directions.sh runs each
 * case without and with the shim.  argv[1] names the case:
 *   input    sum_into(out, in, n) with 2048 threads per block is refused:
 *            `in`, which it only reads, is served; `out` is refused
 *   flags    mark(out, flag, n) stores through both and reads neither: over
 *            an `out` a refused launch left unwritten it still runs, so its
 *            flag is written and served, while `out` stays refused (its
 *            extent is unknown: only a retry clears it)
 * Each case prints "RESULT key=value" lines: in_memcpy/out_memcpy/
 * flag_memcpy (error names) and in_host/out_host/flag_host (correct,
 * poisoned or stale).  sum_into and mark are dir_kernels.c's (a fakecuda
 * kernel plugin).
 */
#include <cstring>

#include "runtime_test.cuh"

__global__ void sum_into(float *out, float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += in[i];
}

__global__ void mark(float *out, int *flag, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 1.0f;
    if (i == 0)
        *flag = 1;
}

static const int N = 4096;
static float h[N];

static void read_back(const char *what, const float *d, float want)
{
    std::memset(h, 0, sizeof h);
    cudaError_t copy = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    std::printf("RESULT %s_memcpy=%s\nRESULT %s_host=%s\n", what, cudaGetErrorName(copy), what, classify(h, N, want));
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    float *out = nullptr, *in = nullptr;
    int *flag = nullptr;
    CHECK(cudaMalloc(&out, N * sizeof(float)));
    CHECK(cudaMalloc(&in, N * sizeof(float)));
    CHECK(cudaMalloc(&flag, sizeof(int)));
    for (int i = 0; i < N; i++)
        h[i] = 2.0f;
    CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(out, 0, N * sizeof(float)));
    CHECK(cudaMemset(flag, 0, sizeof(int)));
    if (!std::strcmp(c, "input")) {
        sum_into<<<N / 2048, 2048>>>(out, in, N); /* refused: 2048 > 1024 threads */
        (void)cudaGetLastError();
        read_back("in", in, 2.0f);
        read_back("out", out, 2.0f);
    } else if (!std::strcmp(c, "flags")) {
        sum_into<<<N / 2048, 2048>>>(out, in, N); /* refused: out unwritten */
        (void)cudaGetLastError();
        mark<<<N / 256, 256>>>(out, flag, N);
        int got = 0;
        cudaError_t copy = cudaMemcpy(&got, flag, sizeof got, cudaMemcpyDeviceToHost);
        std::printf("RESULT flag_memcpy=%s\nRESULT flag_host=%s\n", cudaGetErrorName(copy),
                    got == 1    ? "correct"
                    : got == -1 ? "poisoned"
                                : "stale");
        read_back("out", out, 1.0f);
    } else {
        std::printf("usage: directions input|flags\n");
        return 2;
    }
    return 0;
}

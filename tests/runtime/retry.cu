/*
 * retry.cu: programs that recover from a launch the driver refused, as
 * code with adaptive block sizes and warm-ups does, and near misses that
 * must stay refused.  retry.sh runs each case without and with the shim
 * and compares.  argv[1] names the case:
 *   adaptive   fill with 2048 threads per block is refused (the limit is
 *              1024); the same fill on the same buffer with 256 threads and
 *              as many threads in all is a retry: it runs, the read is served
 *   warmup     the first of 300 identical saxpy launches (matrixMul's
 *              warm-up) fails at once (FAKECUDA_FAULTS or CUTAINT_INJECT from
 *              retry.sh); the next one is its retry
 *   ladder     2048, then 1024 per block (refused by an injection in
 *              retry.sh), then 256: a retry of a retry
 *   fewer      the retry has fewer threads in all: half the buffer would stay
 *              unwritten, so it is skipped and the read refused
 *   other      the same kernel and buffer with another value: not the same
 *              work, skipped
 *   tainted    saxpy's retry reads x, which another failed launch was to
 *              write: skipped whatever it retries
 *   async      fill faults as it runs (FAKECUDA_FAULTS fault from retry.sh):
 *              the driver reports it later, the context is lost, and the
 *              same fill again is no retry: nothing is served
 * Each case prints "RESULT launch=" (the last launch's error), "RESULT
 * memcpy=" and "RESULT host=" (correct, poisoned or stale).  fill and saxpy
 * are fakecuda's built-ins (runtime_test.cuh).
 */
#include <cstring>

#include "runtime_test.cuh"

static const int N = 4096; /* a multiple of 2048: the retries have as many threads in all */
static float h[N];

static void read_back(const float *d, float want)
{
    cudaError_t launch = cudaGetLastError();
    std::memset(h, 0, sizeof h);
    cudaError_t copy = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    std::printf("RESULT launch=%s\nRESULT memcpy=%s\nRESULT host=%s\n", cudaGetErrorName(launch),
                cudaGetErrorName(copy), classify(h, N, want));
}

/* fill with `threads` per block over all of d; its error left for read_back. */
static void fill_with(float *d, unsigned threads, float value)
{
    (void)cudaGetLastError();
    fill<<<N / threads, threads>>>(d, N, value);
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    float *d = nullptr, *x = nullptr;
    CHECK(cudaMalloc(&d, N * sizeof(float)));
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMemset(d, 0, N * sizeof(float)));
    CHECK(cudaMemset(x, 0, N * sizeof(float)));
    if (!std::strcmp(c, "adaptive") || !std::strcmp(c, "ladder")) {
        fill_with(d, 2048, 2.0f);
        if (!std::strcmp(c, "ladder"))
            fill_with(d, 1024, 2.0f);
        fill_with(d, 256, 2.0f);
        read_back(d, 2.0f);
    } else if (!std::strcmp(c, "warmup")) {
        fill_with(x, 256, 1.0f);
        for (int i = 0; i < 300; i++) /* d = 0 + 299 * (0.5 * 1) without the warm-up */
            saxpy<<<N / 256, 256>>>(N, 0.5f, x, d);
        read_back(d, 299 * 0.5f);
    } else if (!std::strcmp(c, "fewer")) {
        fill_with(d, 2048, 2.0f);
        (void)cudaGetLastError();
        fill<<<N / 512, 256>>>(d, N, 2.0f); /* half the threads: half of d */
        read_back(d, 2.0f);
    } else if (!std::strcmp(c, "other")) {
        fill_with(d, 2048, 2.0f);
        fill_with(d, 256, 3.0f);
        read_back(d, 3.0f);
    } else if (!std::strcmp(c, "tainted")) {
        (void)cudaGetLastError();
        saxpy<<<N / 2048, 2048>>>(N, 0.5f, x, d); /* refused: d carries it */
        fill_with(x, 2048, 1.0f);                 /* refused: x carries it */
        (void)cudaGetLastError();
        saxpy<<<N / 256, 256>>>(N, 0.5f, x, d); /* x is no output of it */
        read_back(d, 0.0f);
    } else if (!std::strcmp(c, "async")) {
        fill_with(d, 256, 2.0f);
        std::printf("RESULT sync=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
        fill_with(d, 256, 2.0f);
        read_back(d, 2.0f);
    } else {
        std::printf("usage: retry adaptive|warmup|ladder|fewer|other|tainted|async\n");
        return 2;
    }
    return 0;
}

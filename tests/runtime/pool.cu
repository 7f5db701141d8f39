/*
 * pool.cu: a caching allocator's pattern.  16 tensors carved out of one
 * cudaMalloc, each written by its own fill; the fill of tensor 3 fails
 * (fakecuda's FAKECUDA_FAULTS, so the program sees the same with and
 * without cutaint) and the program catches the error and goes on, then
 * reads every tensor back.  Cases:
 *   pool     no regions: to cutaint tensor 3's pointer covers the rest
 *            of the allocation
 *   regions  each tensor declared with CUTAINT_REGION_ALLOC (cutaint.h);
 *            then tensor 3's block is freed and taken anew, and rewritten
 *   misuse   regions, and the three misuses: an overlapping region, a
 *            free of an unknown base, a region outside every allocation
 *   reads    no regions, and tensor 3 is written by a saxpy reading
 *            tensor 2 (the one that fails: FAKECUDA_FAULTS names saxpy):
 *            the failing launch alone shows two pointers into the pool
 * Prints RESULT launch3=, one RESULT tI=<memcpy result>/<what it held>
 * per tensor, RESULT refused=<reads that failed>, and for the regions
 * RESULT declared=<calls answered DONE>,<answered NO_SHIM>.
 */
#include <cstring>

#include "cutaint.h"
#include "runtime_test.cuh"

#define TENSORS 16
#define N 256

static float *tensor(float *pool, int i)
{
    return pool + i * N;
}

static int read_back(float *pool, int i, const char *label)
{
    static float host[N];
    cudaError_t e = cudaMemcpy(host, tensor(pool, i), sizeof host, cudaMemcpyDeviceToHost);
    std::printf("RESULT %s%d=%s/%s\n", label, i, cudaGetErrorName(e), classify(host, N, (float)(i + 1)));
    cudaGetLastError(); /* a refused read is the program's to catch, as a failed one */
    return e != cudaSuccess;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "pool";
    bool regions = std::strcmp(mode, "regions") == 0 || std::strcmp(mode, "misuse") == 0;
    bool reads = std::strcmp(mode, "reads") == 0;
    float *pool;
    CHECK(cudaMalloc(&pool, TENSORS * N * sizeof(float)));
    CHECK(cudaMemset(pool, 0, TENSORS * N * sizeof(float)));
    int answers[3] = {0, 0, 0}; /* by CUTAINT_REGION_* answer */
    for (int i = 0; regions && i < TENSORS; i++)
        answers[CUTAINT_REGION_ALLOC(tensor(pool, i), N * sizeof(float))]++;
    if (std::strcmp(mode, "misuse") == 0) {
        static float host_only[N];
        std::printf("RESULT overlap=%d\n", CUTAINT_REGION_ALLOC(tensor(pool, 3) + 2, 16));
        std::printf("RESULT unknown=%d\n", CUTAINT_REGION_FREE(tensor(pool, 3) + 1));
        std::printf("RESULT outside=%d\n", CUTAINT_REGION_ALLOC(host_only, sizeof host_only));
    }
    for (int i = 0; i < TENSORS; i++) {
        if (reads && i == 3)
            saxpy<<<1, N>>>(N, 0.0f, tensor(pool, 2), tensor(pool, 3));
        else
            fill<<<1, N>>>(tensor(pool, i), N, (float)(i + 1));
        cudaError_t e = cudaGetLastError();
        if (i == 3)
            std::printf("RESULT launch3=%s\n", cudaGetErrorName(e));
    }
    CHECK(cudaDeviceSynchronize());
    int refused = 0;
    for (int i = 0; i < TENSORS; i++)
        refused += read_back(pool, i, "t");
    std::printf("RESULT refused=%d\n", refused);
    if (std::strcmp(mode, "regions") == 0) {
        /* The pool gives tensor 3's block back and hands it out anew. */
        answers[CUTAINT_REGION_FREE(tensor(pool, 3))]++;
        answers[CUTAINT_REGION_ALLOC(tensor(pool, 3), N * sizeof(float))]++;
        fill<<<1, N>>>(tensor(pool, 3), N, 4.0f);
        CHECK(cudaDeviceSynchronize());
        read_back(pool, 3, "anew");
    }
    if (regions)
        std::printf("RESULT declared=%d,%d\n", answers[CUTAINT_REGION_DONE], answers[CUTAINT_REGION_NO_SHIM]);
    CHECK(cudaFree(pool));
    std::printf("PASS\n");
    return 0;
}

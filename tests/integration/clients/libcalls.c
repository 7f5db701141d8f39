/*
 * libcalls.c - a program calling CUDA libraries (the test doubles of
 * tests/integration/doubles, linked as a program links cuBLAS and cuRAND)
 * over driver memory, never checking their statuses' consequences: what it
 * reads back and every status it got are printed for test_libcalls.c.
 *
 *   rand_fail   curandGenerateUniform fails; its output read back
 *   gemm        a GEMM with a bad leading dimension, its C read back; then
 *               a correct GEMM (beta 0) over the same C, read back
 *   skip        a GEMM whose A is a failed generation's output: skipped
 *   release     a generation fails over all of x; a GEMM writing the first
 *               M x N of x succeeds (the double writes nothing the driver
 *               sees): exactly those bytes read, the rest of x refused
 *   nested      cublasGemmEx, which probes cublasSgemm_v2 with a bad ld
 *               before the real call: one clean GEMM to the program
 *   batched     cublasSgemmBatched over (a0, b, c0) and (a1, b, c1): with a
 *               bad ldc (both Cs read back), correct (both read), then
 *               with a0 a failed generation's output (both read)
 *   potrf       cusolverDnSpotrf of a positive definite A, read back; then
 *               of one that is not (devInfo = 2 on the device, status
 *               success), A read back, then devInfo (the order given:
 *               "potrf info-first" reads devInfo first); then the same
 *               again read back asynchronously (not checked)
 */
#include <cublas_api.h>
#include <cuda.h>
#include <curand.h>
#include <cusolverDn.h>
#include <stdio.h>
#include <string.h>

#include "../doubles/control.h"

#define M 4
#define N 3
#define K 2

static CUdeviceptr alloc_filled(size_t n, float value)
{
    CUdeviceptr d = 0;
    float host[64];
    for (size_t i = 0; i < n; i++)
        host[i] = value + (float)i;
    if (cuMemAlloc_v2(&d, n * sizeof(float)) != CUDA_SUCCESS || cuMemcpyHtoD_v2(d, host, n * sizeof(float)))
        return 0;
    return d;
}

/* "read what: CODE first=... bits=0x..." */
static void read_back(const char *what, CUdeviceptr d, size_t n, float *out)
{
    float host[64];
    memset(host, 0, sizeof host);
    CUresult r = cuMemcpyDtoH_v2(host, d, n * sizeof(float));
    const char *name = "?";
    cuGetErrorName(r, &name);
    unsigned bits;
    memcpy(&bits, &host[0], sizeof bits);
    printf("read %s: %s bits=0x%08x\n", what, name, bits);
    if (out)
        memcpy(out, host, n * sizeof(float));
}

/* C = A * B for A (M x K, ld M) = 1, 2, ... and B (K x N, ld K) = 10, 11, ...,
 * checked on the host. */
static void expect_product(const char *what, const float *c)
{
    float a[M * K], b[K * N];
    for (int i = 0; i < M * K; i++)
        a[i] = 1.0f + (float)i;
    for (int i = 0; i < K * N; i++)
        b[i] = 10.0f + (float)i;
    int wrong = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            float sum = 0;
            for (int p = 0; p < K; p++)
                sum += a[i + p * M] * b[p + j * K];
            wrong += c[i + j * M] != sum;
        }
    printf("%s: %s\n", what, wrong ? "wrong" : "correct");
}

static int rand_fail(void)
{
    curandGenerator_t g;
    curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    CUdeviceptr x = alloc_filled(16, 1.0f);
    double_fail_next("curandGenerateUniform", CURAND_STATUS_LAUNCH_FAILURE);
    printf("generate x: %d\n", (int)curandGenerateUniform(g, (float *)(uintptr_t)x, 16));
    read_back("x", x, 16, NULL);
    printf("generate x again: %d\n", (int)curandGenerateUniform(g, (float *)(uintptr_t)x, 16));
    read_back("x", x, 16, NULL);
    return 0;
}

static cublasStatus_t gemm(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int ldc)
{
    float one = 1.0f, zero = 0.0f;
    return cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, (const float *)(uintptr_t)a, M,
                          (const float *)(uintptr_t)b, K, &zero, (float *)(uintptr_t)c, ldc);
}

static int gemm_bad_then_good(void)
{
    CUdeviceptr a = alloc_filled(M * K, 1.0f), b = alloc_filled(K * N, 10.0f), c = alloc_filled(M * N, 7.0f);
    printf("gemm ldc=%d: %d\n", M - 1, (int)gemm(a, b, c, M - 1));
    read_back("c", c, M * N, NULL);
    printf("gemm ldc=%d: %d\n", M, (int)gemm(a, b, c, M));
    float out[M * N];
    read_back("c", c, M * N, out);
    expect_product("c", out);
    return 0;
}

static int skip(void)
{
    curandGenerator_t g;
    curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    CUdeviceptr a = alloc_filled(M * K, 1.0f), b = alloc_filled(K * N, 10.0f), c = alloc_filled(M * N, 7.0f);
    double_fail_next("curandGenerateUniform", CURAND_STATUS_LAUNCH_FAILURE);
    printf("generate a: %d\n", (int)curandGenerateUniform(g, (float *)(uintptr_t)a, M * K));
    printf("gemm: %d\n", (int)gemm(a, b, c, M));
    read_back("c", c, M * N, NULL);
    return 0;
}

static int release(void)
{
    curandGenerator_t g;
    curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    CUdeviceptr a = alloc_filled(M * K, 1.0f), b = alloc_filled(K * N, 10.0f), x = alloc_filled(16, 1.0f);
    double_fail_next("curandGenerateUniform", CURAND_STATUS_LAUNCH_FAILURE);
    printf("generate x: %d\n", (int)curandGenerateUniform(g, (float *)(uintptr_t)x, 16));
    double_fail_next("cublasSgemm_v2", CUBLAS_STATUS_SUCCESS);
    printf("gemm into x: %d\n", (int)gemm(a, b, x, M));
    read_back("c", x, M * N, NULL);
    read_back("x", x, 16, NULL);
    return 0;
}

static int nested(void)
{
    CUdeviceptr a = alloc_filled(M * K, 1.0f), b = alloc_filled(K * N, 10.0f), c = alloc_filled(M * N, 7.0f);
    float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasGemmEx(NULL, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, (const void *)(uintptr_t)a,
                                    CUDA_R_32F, M, (const void *)(uintptr_t)b, CUDA_R_32F, K, &zero,
                                    (void *)(uintptr_t)c, CUDA_R_32F, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    printf("gemm ex: %d\n", (int)s);
    float out[M * N];
    read_back("c", c, M * N, out);
    expect_product("c", out);
    return 0;
}

static cublasStatus_t gemm_batched(CUdeviceptr arrays, int ldc)
{
    float one = 1.0f, zero = 0.0f;
    const float *const *a = (const float *const *)(uintptr_t)arrays;
    return cublasSgemmBatched(NULL, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a, M, a + 2, K, &zero,
                              (float *const *)(uintptr_t)(arrays + 4 * sizeof(float *)), ldc, 2);
}

static void read_product(const char *what, CUdeviceptr c)
{
    float out[M * N];
    read_back(what, c, M * N, out);
    expect_product(what, out);
}

static int batched(void)
{
    curandGenerator_t g;
    curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    CUdeviceptr a0 = alloc_filled(M * K, 1.0f), a1 = alloc_filled(M * K, 1.0f), b = alloc_filled(K * N, 10.0f);
    CUdeviceptr c0 = alloc_filled(M * N, 7.0f), c1 = alloc_filled(M * N, 7.0f), arrays = 0;
    CUdeviceptr pointers[6] = {a0, a1, b, b, c0, c1};
    if (cuMemAlloc_v2(&arrays, sizeof pointers) || cuMemcpyHtoD_v2(arrays, pointers, sizeof pointers))
        return 1;
    printf("batched ldc=%d: %d\n", M - 1, (int)gemm_batched(arrays, M - 1));
    read_back("c0", c0, M * N, NULL);
    read_back("c1", c1, M * N, NULL);
    printf("batched ldc=%d: %d\n", M, (int)gemm_batched(arrays, M));
    read_product("c0", c0);
    read_product("c1", c1);
    double_fail_next("curandGenerateUniform", CURAND_STATUS_LAUNCH_FAILURE);
    printf("generate a0: %d\n", (int)curandGenerateUniform(g, (float *)(uintptr_t)a0, M * K));
    printf("batched: %d\n", (int)gemm_batched(arrays, M));
    read_back("c0", c0, M * N, NULL);
    read_product("c1", c1);
    return 0;
}

/* A 2 x 2 symmetric matrix [d 2; 2 d]: positive definite when d > 2. */
static CUdeviceptr symmetric(float d)
{
    float host[4] = {d, 2.0f, 2.0f, d};
    CUdeviceptr a = 0;
    if (cuMemAlloc_v2(&a, sizeof host) != CUDA_SUCCESS || cuMemcpyHtoD_v2(a, host, sizeof host) != CUDA_SUCCESS)
        return 0;
    return a;
}

static void read_info(CUdeviceptr info)
{
    int value = -1000;
    CUresult r = cuMemcpyDtoH_v2(&value, info, sizeof value);
    const char *name = "?";
    cuGetErrorName(r, &name);
    printf("read info: %s %d\n", name, value);
}

static int potrf(int info_first)
{
    CUdeviceptr info = 0;
    cuMemAlloc_v2(&info, sizeof(int));
    CUdeviceptr good = symmetric(3.0f), bad = symmetric(1.0f);
    printf("potrf good: %d\n", (int)cusolverDnSpotrf(NULL, CUBLAS_FILL_MODE_LOWER, 2, (float *)(uintptr_t)good, 2, NULL,
                                                     0, (int *)(uintptr_t)info));
    read_back("a", good, 4, NULL);
    printf("potrf bad: %d\n", (int)cusolverDnSpotrf(NULL, CUBLAS_FILL_MODE_LOWER, 2, (float *)(uintptr_t)bad, 2, NULL,
                                                    0, (int *)(uintptr_t)info));
    if (info_first)
        read_info(info);
    read_back("a", bad, 4, NULL);
    read_info(info);
    CUdeviceptr again = symmetric(1.0f);
    printf("potrf bad: %d\n", (int)cusolverDnSpotrf(NULL, CUBLAS_FILL_MODE_LOWER, 2, (float *)(uintptr_t)again, 2, NULL,
                                                    0, (int *)(uintptr_t)info));
    float host[4];
    CUresult r = cuMemcpyDtoHAsync_v2(host, again, sizeof host, NULL);
    cuCtxSynchronize();
    unsigned bits;
    memcpy(&bits, &host[0], sizeof bits);
    printf("read a async: %d bits=0x%08x\n", (int)r, bits);
    return 0;
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    if (argc < 2 || cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
        fprintf(stderr, "usage: %s rand_fail|gemm|skip|release|nested|batched|potrf (and a driver)\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "rand_fail") == 0)
        return rand_fail();
    if (strcmp(argv[1], "gemm") == 0)
        return gemm_bad_then_good();
    if (strcmp(argv[1], "skip") == 0)
        return skip();
    if (strcmp(argv[1], "release") == 0)
        return release();
    if (strcmp(argv[1], "nested") == 0)
        return nested();
    if (strcmp(argv[1], "batched") == 0)
        return batched();
    if (strcmp(argv[1], "potrf") == 0)
        return potrf(argc > 2 && strcmp(argv[2], "info-first") == 0);
    return 2;
}

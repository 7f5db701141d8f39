/*
 * blas.c - a test-double cuBLAS (libcublas_double.so): cublasSgemm_v2,
 * cublasSgemmBatched (its matrices behind device pointer arrays) and
 * cublasGemmEx with the toolkit header's signatures, computed on the host
 * over fakecuda memory through the driver (as the real library's kernels
 * would reach it through the driver), and refusing the arguments cuBLAS
 * refuses with CUBLAS_STATUS_INVALID_VALUE, writing nothing.  Host pointer
 * mode only (alpha and beta are host scalars).  cublasGemmEx calls
 * cublasSgemm_v2 through its exported name, as cuBLAS calls cuBLASLt: first
 * a probe the library refuses, then the real call.
 */
#include <cublas_api.h>
#include <cuda.h>
#include <stdlib.h>

#include "control.h"

#define EXPORT __attribute__((visibility("default")))

/* Element (i, j) of a column-major matrix, transposed or not. */
static float at(const float *x, int ld, int transposed, int i, int j)
{
    return transposed ? x[j + (size_t)i * ld] : x[i + (size_t)j * ld];
}

static float *fetch(const float *device, size_t n)
{
    float *host = calloc(n ? n : 1, sizeof *host);
    if (host && n)
        cuMemcpyDtoH_v2(host, (CUdeviceptr)(uintptr_t)device, n * sizeof *host);
    return host;
}

static int stored(int rows, int cols, int ld)
{
    return rows && cols ? (cols - 1) * ld + rows : 0;
}

/* C = alpha op(A) op(B) + beta C, or the status cuBLAS refuses the
 * arguments with. */
static cublasStatus_t sgemm(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const float *alpha,
                            const float *A, int lda, const float *B, int ldb, const float *beta, float *C, int ldc)
{
    int ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
    int a_rows = ta ? k : m, b_rows = tb ? n : k;
    if (m < 0 || n < 0 || k < 0 || lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1) ||
        ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    float *a = fetch(A, (size_t)stored(a_rows, ta ? m : k, lda));
    float *b = fetch(B, (size_t)stored(b_rows, tb ? k : n, ldb));
    float *c = fetch(C, (size_t)stored(m, n, ldc));
    if (!a || !b || !c)
        return CUBLAS_STATUS_ALLOC_FAILED;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float sum = 0;
            for (int p = 0; p < k; p++)
                sum += at(a, lda, ta, i, p) * at(b, ldb, tb, p, j);
            float *out = &c[i + (size_t)j * ldc];
            *out = *alpha * sum + (*beta == 0 ? 0 : *beta * *out);
        }
    size_t bytes = (size_t)stored(m, n, ldc) * sizeof *c;
    CUresult r = bytes ? cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)C, c, bytes) : CUDA_SUCCESS;
    free(a);
    free(b);
    free(c);
    return r == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                     int n, int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                                     const float *beta, float *C, int ldc)
{
    (void)handle;
    int status;
    if (double_take_failure("cublasSgemm_v2", &status))
        return (cublasStatus_t)status;
    return sgemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* Each matrix's pointer read from the device arrays, as the real kernels
 * read them; a bad argument refuses the whole batch, writing nothing. */
EXPORT cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float *alpha, const float *const Aarray[], int lda,
                                         const float *const Barray[], int ldb, const float *beta, float *const Carray[],
                                         int ldc, int batchCount)
{
    (void)handle;
    int status;
    if (double_take_failure("cublasSgemmBatched", &status))
        return (cublasStatus_t)status;
    if (batchCount < 0 || ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    size_t bytes = (size_t)batchCount * sizeof(float *);
    float **a = malloc(bytes + 1), **b = malloc(bytes + 1), **c = malloc(bytes + 1);
    cublasStatus_t s = a && b && c ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
    if (s == CUBLAS_STATUS_SUCCESS && bytes &&
        (cuMemcpyDtoH_v2(a, (CUdeviceptr)(uintptr_t)Aarray, bytes) ||
         cuMemcpyDtoH_v2(b, (CUdeviceptr)(uintptr_t)Barray, bytes) ||
         cuMemcpyDtoH_v2(c, (CUdeviceptr)(uintptr_t)Carray, bytes)))
        s = CUBLAS_STATUS_EXECUTION_FAILED;
    for (int i = 0; s == CUBLAS_STATUS_SUCCESS && i < batchCount; i++)
        s = sgemm(transa, transb, m, n, k, alpha, a[i], lda, b[i], ldb, beta, c[i], ldc);
    free(a);
    free(b);
    free(c);
    return s;
}

EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                   int n, int k, const void *alpha, const void *A, cudaDataType Atype, int lda,
                                   const void *B, cudaDataType Btype, int ldb, const void *beta, void *C,
                                   cudaDataType Ctype, int ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)computeType;
    (void)algo;
    if (Atype != CUDA_R_32F || Btype != CUDA_R_32F || Ctype != CUDA_R_32F)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    /* A probe of a kernel the library then does without: it fails, and the
     * call goes on. */
    (void)cublasSgemm_v2(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, 0);
    return cublasSgemm_v2(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

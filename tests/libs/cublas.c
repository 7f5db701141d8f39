/*
 * cublas.c: cuBLAS on fakecuda: a handle on a stream of ours with a
 * workspace of ours, an SGEMM, a GEMM with a wrong argument (the library's
 * CUBLAS_STATUS_INVALID_VALUE, nothing launched), and the handle destroyed.
 * Its kernels are SASS only, so it runs under FAKECUDA_SASS=nowrite and
 * checks statuses, never numbers.
 */
#include "libs_test.h"

#include <cublas_v2.h>

enum { N = 64 };

int main(void)
{
    cublasHandle_t h;
    cudaStream_t stream;
    float *a, *b, *c, *workspace, alpha = 1.0f, beta = 0.0f;
    CHECK_LIB(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    CHECK_RT(cudaStreamCreate(&stream));
    CHECK_LIB(cublasSetStream(h, stream), CUBLAS_STATUS_SUCCESS);
    CHECK_RT(cudaMalloc((void **)&workspace, 4 << 20));
    CHECK_LIB(cublasSetWorkspace(h, workspace, 4 << 20), CUBLAS_STATUS_SUCCESS);
    CHECK_RT(cudaMalloc((void **)&a, N * N * sizeof(float)));
    CHECK_RT(cudaMalloc((void **)&b, N * N * sizeof(float)));
    CHECK_RT(cudaMalloc((void **)&c, N * N * sizeof(float)));
    CHECK_RT(cudaMemset(a, 0, N * N * sizeof(float)));
    CHECK_RT(cudaMemset(b, 0, N * N * sizeof(float)));
    CHECK_LIB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, a, N, b, N, &beta, c, N),
              CUBLAS_STATUS_SUCCESS);
    CHECK_RT(cudaStreamSynchronize(stream));
    /* lda smaller than m: refused by the library before any launch. */
    CHECK_LIB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, a, N - 1, b, N, &beta, c, N),
              CUBLAS_STATUS_INVALID_VALUE);
    CHECK_LIB(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
    CHECK_RT(cudaStreamDestroy(stream));
    CHECK_RT(cudaFree(a));
    CHECK_RT(cudaFree(b));
    CHECK_RT(cudaFree(c));
    CHECK_RT(cudaFree(workspace));
    printf("PASS\n");
    return 0;
}

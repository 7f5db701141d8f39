/*
 * benchlib.c - the library the bench's libcall row calls: cublasSgemm_v2
 * with cuBLAS's own signature, doing nothing and answering success, so that
 * the row measures what an interposer adds to a library call and nothing
 * of the library (libbench_cublas.so; tools/bench/run.sh).
 */
#include <cublas_api.h>

__attribute__((visibility("default"))) cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                                     cublasOperation_t transb, int m, int n, int k,
                                                                     const float *alpha, const float *A, int lda,
                                                                     const float *B, int ldb, const float *beta,
                                                                     float *C, int ldc)
{
    (void)handle, (void)transa, (void)transb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda, (void)B;
    (void)ldb, (void)beta, (void)C, (void)ldc;
    return CUBLAS_STATUS_SUCCESS;
}

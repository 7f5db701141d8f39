/*
 * cublaslt.c: cuBLASLt on fakecuda: a handle, an operation descriptor and
 * three matrix layouts, a heuristic's algorithm for them, a matmul with a
 * workspace of ours on a stream of ours, everything destroyed; and a layout
 * with a leading dimension smaller than its rows, refused by the library at
 * the matmul (CUBLAS_STATUS_INVALID_VALUE). Under FAKECUDA_SASS=nowrite it
 * checks statuses, never numbers.
 */
#include "libs_test.h"

#include <cublasLt.h>

enum { N = 64, WORKSPACE = 4 << 20 };

int main(void)
{
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc, bad;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t result;
    cudaStream_t stream;
    float *a, *b, *c, alpha = 1.0f, beta = 0.0f;
    void *workspace;
    int found = 0;
    size_t ws = WORKSPACE;
    CHECK_RT(cudaStreamCreate(&stream));
    CHECK_RT(cudaMalloc((void **)&a, N * N * sizeof(float)));
    CHECK_RT(cudaMalloc((void **)&b, N * N * sizeof(float)));
    CHECK_RT(cudaMalloc((void **)&c, N * N * sizeof(float)));
    CHECK_RT(cudaMalloc(&workspace, WORKSPACE));
    CHECK_RT(cudaMemset(a, 0, N * N * sizeof(float)));
    CHECK_RT(cudaMemset(b, 0, N * N * sizeof(float)));
    CHECK_LIB(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, N, N, N), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, N, N, N), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, N, N, N), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
              CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &result, &found), CUBLAS_STATUS_SUCCESS);
    printf("algorithms found: %d\n", found > 0);
    CHECK_LIB(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, c, lc, c, lc, &result.algo, workspace, WORKSPACE,
                             stream),
              CUBLAS_STATUS_SUCCESS);
    CHECK_RT(cudaStreamSynchronize(stream));
    CHECK_LIB(cublasLtMatrixLayoutCreate(&bad, CUDA_R_32F, N, N, N - 1), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatmul(lt, op, &alpha, a, bad, b, lb, &beta, c, lc, c, lc, NULL, workspace, WORKSPACE, stream),
              CUBLAS_STATUS_INVALID_VALUE);
    CHECK_LIB(cublasLtMatrixLayoutDestroy(bad), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatmulPreferenceDestroy(pref), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatrixLayoutDestroy(lc), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatrixLayoutDestroy(lb), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatrixLayoutDestroy(la), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtMatmulDescDestroy(op), CUBLAS_STATUS_SUCCESS);
    CHECK_LIB(cublasLtDestroy(lt), CUBLAS_STATUS_SUCCESS);
    CHECK_RT(cudaFree(workspace));
    CHECK_RT(cudaFree(c));
    CHECK_RT(cudaFree(b));
    CHECK_RT(cudaFree(a));
    CHECK_RT(cudaStreamDestroy(stream));
    printf("PASS\n");
    return 0;
}

/*
 * cusparse.c: cuSPARSE's generic SpMV on fakecuda: a handle on a stream of
 * ours, a 4x4 CSR matrix and dense vectors, the buffer size query, SpMV,
 * the descriptors and handle destroyed; and a CSR matrix of negative rows,
 * which the library refuses (CUSPARSE_STATUS_INVALID_VALUE). Under
 * FAKECUDA_SASS=nowrite it checks statuses, never numbers.
 */
#include "libs_test.h"

#define DISABLE_CUSPARSE_DEPRECATED /* the header's legacy API, unused */
#include <cusparse.h>

enum { N = 4, NNZ = 4 };

int main(void)
{
    cusparseHandle_t h;
    cusparseSpMatDescr_t mat, bad;
    cusparseDnVecDescr_t x, y;
    cudaStream_t stream;
    int *rows, *cols;
    float *vals, *dx, *dy, alpha = 1.0f, beta = 0.0f;
    void *buffer;
    size_t size = 0;
    const int h_rows[N + 1] = {0, 1, 2, 3, 4}, h_cols[NNZ] = {0, 1, 2, 3};
    CHECK_RT(cudaStreamCreate(&stream));
    CHECK_RT(cudaMalloc((void **)&rows, sizeof h_rows));
    CHECK_RT(cudaMalloc((void **)&cols, sizeof h_cols));
    CHECK_RT(cudaMalloc((void **)&vals, NNZ * sizeof(float)));
    CHECK_RT(cudaMalloc((void **)&dx, N * sizeof(float)));
    CHECK_RT(cudaMalloc((void **)&dy, N * sizeof(float)));
    CHECK_RT(cudaMemcpy(rows, h_rows, sizeof h_rows, cudaMemcpyHostToDevice));
    CHECK_RT(cudaMemcpy(cols, h_cols, sizeof h_cols, cudaMemcpyHostToDevice));
    CHECK_RT(cudaMemset(vals, 0, NNZ * sizeof(float)));
    CHECK_RT(cudaMemset(dx, 0, N * sizeof(float)));
    CHECK_LIB(cusparseCreate(&h), CUSPARSE_STATUS_SUCCESS);
    CHECK_LIB(cusparseSetStream(h, stream), CUSPARSE_STATUS_SUCCESS);
    CHECK_LIB(cusparseCreateCsr(&mat, N, N, NNZ, rows, cols, vals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
              CUSPARSE_STATUS_SUCCESS);
    CHECK_LIB(cusparseCreateDnVec(&x, N, dx, CUDA_R_32F), CUSPARSE_STATUS_SUCCESS);
    CHECK_LIB(cusparseCreateDnVec(&y, N, dy, CUDA_R_32F), CUSPARSE_STATUS_SUCCESS);
    CHECK_LIB(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, x, &beta, y, CUDA_R_32F,
                                      CUSPARSE_SPMV_ALG_DEFAULT, &size),
              CUSPARSE_STATUS_SUCCESS);
    CHECK_RT(cudaMalloc(&buffer, size ? size : 1));
    CHECK_LIB(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, x, &beta, y, CUDA_R_32F,
                           CUSPARSE_SPMV_ALG_DEFAULT, buffer),
              CUSPARSE_STATUS_SUCCESS);
    CHECK_RT(cudaStreamSynchronize(stream));
    CHECK_LIB(cusparseCreateCsr(&bad, -1, N, NNZ, rows, cols, vals, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
              CUSPARSE_STATUS_INVALID_VALUE);
    CHECK_LIB(cusparseDestroyDnVec(x), CUSPARSE_STATUS_SUCCESS);
    CHECK_LIB(cusparseDestroyDnVec(y), CUSPARSE_STATUS_SUCCESS);
    CHECK_LIB(cusparseDestroySpMat(mat), CUSPARSE_STATUS_SUCCESS);
    CHECK_LIB(cusparseDestroy(h), CUSPARSE_STATUS_SUCCESS);
    CHECK_RT(cudaFree(buffer));
    CHECK_RT(cudaFree(dy));
    CHECK_RT(cudaFree(dx));
    CHECK_RT(cudaFree(vals));
    CHECK_RT(cudaFree(cols));
    CHECK_RT(cudaFree(rows));
    CHECK_RT(cudaStreamDestroy(stream));
    printf("PASS\n");
    return 0;
}

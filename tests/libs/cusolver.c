/*
 * cusolver.c: cuSOLVER's dense LU on fakecuda: a handle on a stream of
 * ours, the workspace size query, getrf with pivots and devInfo into
 * device memory, and a Cholesky potrf of negative size, which the library
 * refuses (CUSOLVER_STATUS_INVALID_VALUE; getrf reports its argument
 * errors through devInfo instead, a number this test does not read). Under FAKECUDA_SASS=nowrite it
 * checks statuses, never numbers (devInfo included).
 */
#include "libs_test.h"

#include <cusolverDn.h>

enum { N = 16 };

int main(void)
{
    cusolverDnHandle_t h;
    cudaStream_t stream;
    float *a, *work;
    int *pivots, *info, lwork = 0;
    CHECK_RT(cudaStreamCreate(&stream));
    CHECK_RT(cudaMalloc((void **)&a, N * N * sizeof(float)));
    CHECK_RT(cudaMalloc((void **)&pivots, N * sizeof(int)));
    CHECK_RT(cudaMalloc((void **)&info, sizeof(int)));
    CHECK_RT(cudaMemset(a, 0, N * N * sizeof(float)));
    CHECK_LIB(cusolverDnCreate(&h), CUSOLVER_STATUS_SUCCESS);
    CHECK_LIB(cusolverDnSetStream(h, stream), CUSOLVER_STATUS_SUCCESS);
    CHECK_LIB(cusolverDnSgetrf_bufferSize(h, N, N, a, N, &lwork), CUSOLVER_STATUS_SUCCESS);
    CHECK_RT(cudaMalloc((void **)&work, (lwork > 0 ? lwork : 1) * sizeof(float)));
    CHECK_LIB(cusolverDnSgetrf(h, N, N, a, N, work, pivots, info), CUSOLVER_STATUS_SUCCESS);
    CHECK_RT(cudaStreamSynchronize(stream));
    CHECK_LIB(cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, -1, a, N, work, lwork, info), CUSOLVER_STATUS_INVALID_VALUE);
    CHECK_LIB(cusolverDnDestroy(h), CUSOLVER_STATUS_SUCCESS);
    CHECK_RT(cudaFree(work));
    CHECK_RT(cudaFree(info));
    CHECK_RT(cudaFree(pivots));
    CHECK_RT(cudaFree(a));
    CHECK_RT(cudaStreamDestroy(stream));
    printf("PASS\n");
    return 0;
}

/*
 * solver.c - a test-double cuSOLVER (libcusolver_double.so):
 * cusolverDnSpotrf with the toolkit header's signature, a Cholesky
 * factorisation (lower) computed on the host over fakecuda memory through
 * the driver, which, as the real library does, answers success and reports
 * a matrix that is not positive definite only on the device: devInfo = i,
 * the order of the first leading minor that is not, the factor left half
 * done.  This is the result a program (CuPy, by design) never reads.
 */
#include <cuda.h>
#include <cusolverDn.h>
#include <math.h>
#include <stdlib.h>

#include "control.h"

#define EXPORT __attribute__((visibility("default")))

/* A's lower triangle overwritten by L, column by column; the order of the
 * first leading minor that is not positive definite, or 0. */
static int cholesky(float *a, int n, int lda)
{
    for (int j = 0; j < n; j++) {
        float d = a[j + (size_t)j * lda];
        for (int p = 0; p < j; p++)
            d -= a[j + (size_t)p * lda] * a[j + (size_t)p * lda];
        if (!(d > 0))
            return j + 1;
        a[j + (size_t)j * lda] = sqrtf(d);
        for (int i = j + 1; i < n; i++) {
            float s = a[i + (size_t)j * lda];
            for (int p = 0; p < j; p++)
                s -= a[i + (size_t)p * lda] * a[j + (size_t)p * lda];
            a[i + (size_t)j * lda] = s / a[j + (size_t)j * lda];
        }
    }
    return 0;
}

EXPORT cusolverStatus_t cusolverDnSpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, float *A, int lda,
                                         float *Workspace, int Lwork, int *devInfo)
{
    (void)handle;
    (void)uplo;
    (void)Workspace;
    (void)Lwork;
    int status;
    if (double_take_failure("cusolverDnSpotrf", &status))
        return (cusolverStatus_t)status;
    if (n < 0 || lda < (n > 1 ? n : 1))
        return CUSOLVER_STATUS_INVALID_VALUE;
    size_t bytes = (size_t)lda * (size_t)n * sizeof(float);
    float *a = malloc(bytes ? bytes : 1);
    if (!a)
        return CUSOLVER_STATUS_ALLOC_FAILED;
    CUresult r = bytes ? cuMemcpyDtoH_v2(a, (CUdeviceptr)(uintptr_t)A, bytes) : CUDA_SUCCESS;
    int info = cholesky(a, n, lda);
    if (r == CUDA_SUCCESS && bytes)
        r = cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)A, a, bytes);
    if (r == CUDA_SUCCESS)
        r = cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)devInfo, &info, sizeof info);
    free(a);
    return r == CUDA_SUCCESS ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_EXECUTION_FAILED;
}

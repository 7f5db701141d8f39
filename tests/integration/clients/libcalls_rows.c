/*
 * libcalls_rows.c - library calls whose extents depend on more than their
 * arguments, through the wrappers into the generated double
 * (doubles/every_row.c, which writes nothing), over driver memory; what
 * each read back gives is printed for test_libcalls.c.
 *
 *   fft     a C2C plan of 2 x 16 made, an execution on it fails: the plan's
 *           256 bytes of the output refused, the rest served; the plan
 *           destroyed, an execution on it fails: the whole output refused
 *   scaled  y = alpha * op(...) + beta * y through cusparseSpMV, cusparseSpMM
 *           and cublasLtMatmul (C = D = y), over a y a failed generation
 *           left tainted, with beta a host 0 (runs: y cleaned), a host 1
 *           (skipped: y refused), a device 0 (counted as read: skipped), and
 *           cuBLASLt's BETA_ZERO mode (runs)
 */
#include <cublasLt.h>
#include <cuda.h>
#include <cufft.h>
#include <curand.h>
#define DISABLE_CUSPARSE_DEPRECATED /* its deprecated legacy API: not ours to warn about */
#include <cusparse.h>
#include <stdio.h>
#include <string.h>

#include "../doubles/control.h"

static CUdeviceptr alloc_zeroed(size_t bytes)
{
    CUdeviceptr d = 0;
    if (cuMemAlloc_v2(&d, bytes) != CUDA_SUCCESS || cuMemsetD8_v2(d, 0, bytes) != CUDA_SUCCESS)
        return 0;
    return d;
}

/* "read what: CODE" */
static void read_back(const char *what, CUdeviceptr d, size_t bytes)
{
    static unsigned char host[4096];
    const char *name = "?";
    cuGetErrorName(cuMemcpyDtoH_v2(host, d, bytes), &name);
    printf("read %s: %s\n", what, name);
}

static int fft(void)
{
    cufftHandle plan = 0;
    printf("plan: %d\n", (int)cufftPlan1d(&plan, 16, CUFFT_C2C, 2));
    CUdeviceptr in = alloc_zeroed(4096), out = alloc_zeroed(4096);
    double_fail_next("cufftExecC2C", CUFFT_EXEC_FAILED);
    printf("exec: %d\n",
           (int)cufftExecC2C(plan, (cufftComplex *)(uintptr_t)in, (cufftComplex *)(uintptr_t)out, CUFFT_FORWARD));
    read_back("out in the plan", out, 256);
    read_back("out past the plan", out + 256, 256);
    printf("destroy: %d\n", (int)cufftDestroy(plan));
    out = alloc_zeroed(4096);
    double_fail_next("cufftExecC2C", CUFFT_EXEC_FAILED);
    printf("exec on a destroyed plan: %d\n",
           (int)cufftExecC2C(plan, (cufftComplex *)(uintptr_t)in, (cufftComplex *)(uintptr_t)out, CUFFT_FORWARD));
    read_back("out in the plan", out, 256);
    read_back("out past the plan", out + 256, 256);
    return 0;
}

#define N 8 /* y's floats */

static CUdeviceptr y;
static const float one = 1.0f;

static int spmv(const void *beta)
{
    cusparseDnVecDescr_t x_desc, y_desc;
    CUdeviceptr x = alloc_zeroed(N * sizeof(float));
    cusparseCreateDnVec(&x_desc, N, (void *)(uintptr_t)x, CUDA_R_32F);
    cusparseCreateDnVec(&y_desc, N, (void *)(uintptr_t)y, CUDA_R_32F);
    int status = (int)cusparseSpMV(NULL, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, NULL, x_desc, beta, y_desc, CUDA_R_32F,
                                   CUSPARSE_SPMV_ALG_DEFAULT, NULL);
    cusparseDestroyDnVec(x_desc);
    cusparseDestroyDnVec(y_desc);
    return status;
}

static int spmm(const void *beta)
{
    cusparseDnMatDescr_t b_desc, c_desc;
    CUdeviceptr b = alloc_zeroed(N * sizeof(float));
    cusparseCreateDnMat(&b_desc, 2, 4, 2, (void *)(uintptr_t)b, CUDA_R_32F, CUSPARSE_ORDER_COL);
    cusparseCreateDnMat(&c_desc, 2, 4, 2, (void *)(uintptr_t)y, CUDA_R_32F, CUSPARSE_ORDER_COL);
    int status = (int)cusparseSpMM(NULL, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, NULL,
                                   b_desc, beta, c_desc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, NULL);
    cusparseDestroyDnMat(b_desc);
    cusparseDestroyDnMat(c_desc);
    return status;
}

static int32_t matmul_mode = CUBLASLT_POINTER_MODE_HOST;

/* D = C = y, 2 x 4 */
static int matmul(const void *beta)
{
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a_layout, y_layout;
    CUdeviceptr a = alloc_zeroed(N * sizeof(float));
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &matmul_mode, sizeof matmul_mode);
    cublasLtMatrixLayoutCreate(&a_layout, CUDA_R_32F, 2, 2, 2);
    cublasLtMatrixLayoutCreate(&y_layout, CUDA_R_32F, 2, 4, 2);
    int status =
        (int)cublasLtMatmul(NULL, desc, &one, (void *)(uintptr_t)a, a_layout, (void *)(uintptr_t)a, y_layout, beta,
                            (void *)(uintptr_t)y, y_layout, (void *)(uintptr_t)y, y_layout, NULL, NULL, 0, NULL);
    cublasLtMatrixLayoutDestroy(a_layout);
    cublasLtMatrixLayoutDestroy(y_layout);
    cublasLtMatmulDescDestroy(desc);
    return status;
}

/* y carries a failure, then the call: "NAME HOW: STATUS", y read back. */
static void over_tainted_y(const char *name, const char *how, int (*call)(const void *), const void *beta)
{
    y = alloc_zeroed(N * sizeof(float));
    double_fail_next("curandGenerateUniform", CURAND_STATUS_LAUNCH_FAILURE);
    (void)curandGenerateUniform(NULL, (float *)(uintptr_t)y, N);
    printf("%s %s: %d\n", name, how, call(beta));
    read_back("y", y, N * sizeof(float));
    cuMemFree_v2(y);
}

static int scaled(void)
{
    static const float zero = 0.0f;
    CUdeviceptr device_zero = alloc_zeroed(sizeof(float));
    const void *on_device = (const void *)(uintptr_t)device_zero;
    static const struct {
        const char *name;
        int (*call)(const void *);
    } calls[] = {{"spmv", spmv}, {"spmm", spmm}, {"matmul", matmul}};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        over_tainted_y(calls[i].name, "beta 0", calls[i].call, &zero);
        over_tainted_y(calls[i].name, "beta 1", calls[i].call, &one);
        cusparseSetPointerMode(NULL, CUSPARSE_POINTER_MODE_DEVICE);
        matmul_mode = CUBLASLT_POINTER_MODE_DEVICE;
        over_tainted_y(calls[i].name, "device beta 0", calls[i].call, on_device);
        cusparseSetPointerMode(NULL, CUSPARSE_POINTER_MODE_HOST);
        matmul_mode = CUBLASLT_POINTER_MODE_HOST;
    }
    matmul_mode = CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO;
    over_tainted_y("matmul", "beta zero mode", matmul, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    if (argc < 2 || cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
        fprintf(stderr, "usage: %s fft|scaled (with a driver)\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "fft") == 0)
        return fft();
    if (strcmp(argv[1], "scaled") == 0)
        return scaled();
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
}

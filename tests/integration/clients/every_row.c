/*
 * every_row.c - every row of shim/libcalls.def called through its wrapper
 * (libcutaint.so, preloaded) into the generated double of
 * doubles/every_row.c, over driver memory, with what the wrapper did read
 * back through refused and served device-to-host copies.  The calls are
 * generated from the table; what they should do is not: the test compares
 * this program's output with libcalls_every_row.expected, a reviewed file.
 *
 * Each pointer argument gets its own allocation, the pointer GUARD bytes
 * in and PAYLOAD bytes before its end; every integer argument a fixed odd
 * value (below), so a row whose extent names the wrong argument, type or
 * direction prints another number.  Per row, three steps:
 *
 *   fail   the double returns an error: "fail NAME status S" then, per
 *          pointer argument, "  ARG tainted L" (L bytes from the pointer
 *          refused, nothing before it or after them)
 *   again  the same call, the double succeeding: a row that reads what it
 *          writes is skipped, one that only writes releases its outputs
 *   skip   fresh allocations whose first 4 bytes carry a failure (a failed
 *          curandGenerate): a row reading any argument is skipped, and
 *          answers CUTAINT_ON_SKIP in its library's codes
 *   reads  per pointer argument, "  ARG reads L": the bytes from the
 *          pointer a failure in skips the call (bisected)
 */
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda.h>
#include <cufft.h>
#include <curand.h>
#include <cusolverDn.h>
#define DISABLE_CUSPARSE_DEPRECATED /* its deprecated legacy API: not ours to warn about */
#include <cusparse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../doubles/control.h"

#define GUARD 64
#define PAYLOAD 8192
#define MAX_ARGS 16

typedef struct arg_buffer {
    const char *name;
    CUdeviceptr base;
} arg_buffer;

static arg_buffer args_of_row[MAX_ARGS];
static unsigned n_args;

/* The descriptors a row's call made (cuSPARSE's, cuBLASLt's), destroyed
 * with its allocations. */
typedef struct row_descriptor {
    void *d;
    void (*destroy)(void *);
} row_descriptor;

#define MAX_DESCRIPTORS 64 /* a row's call makes a few, its steps a few calls */

static row_descriptor descriptors[MAX_DESCRIPTORS];
static unsigned n_descriptors;

/* Past MAX_DESCRIPTORS one is left to leak: the call still needs it. */
static void keep_descriptor(void *d, void (*destroy)(void *))
{
    if (d && n_descriptors < MAX_DESCRIPTORS)
        descriptors[n_descriptors++] = (row_descriptor){d, destroy};
    else if (d)
        fprintf(stderr, "more than %d descriptors in a row: one leaked\n", MAX_DESCRIPTORS);
}
static int taint_new_buffers;
static const char *current_row; /* the row being checked: its cuFFT plan is of the kind its name ends in */
static const char *probed_arg;  /* its allocation carries a failure at probed_at */
static size_t probed_at;

/* Whether reading [at, at + len) is refused. */
static int refused(CUdeviceptr at, size_t len)
{
    static unsigned char host[GUARD + PAYLOAD];
    return cuMemcpyDtoH_v2(host, at, len) != CUDA_SUCCESS;
}

/* The 4 bytes at p carry a failure: a generation that failed. */
static void taint_head(CUdeviceptr p)
{
    double_fail_next("curandGenerate", CURAND_STATUS_LAUNCH_FAILURE);
    (void)curandGenerate(NULL, (unsigned int *)(uintptr_t)p, 1);
}

/* The argument name's pointer in this row: GUARD bytes into its own
 * allocation. */
static void *arg_ptr(const char *name)
{
    for (unsigned i = 0; i < n_args; i++)
        if (strcmp(args_of_row[i].name, name) == 0)
            return (void *)(uintptr_t)(args_of_row[i].base + GUARD);
    CUdeviceptr base = 0;
    if (n_args == MAX_ARGS || cuMemAlloc_v2(&base, GUARD + PAYLOAD) != CUDA_SUCCESS ||
        cuMemsetD8_v2(base, 0, GUARD + PAYLOAD) != CUDA_SUCCESS) {
        fprintf(stderr, "no memory for %s\n", name);
        return NULL;
    }
    args_of_row[n_args++] = (arg_buffer){name, base};
    if (taint_new_buffers)
        taint_head(base + GUARD);
    if (probed_arg && strcmp(probed_arg, name) == 0)
        taint_head(base + GUARD + probed_at);
    return (void *)(uintptr_t)(base + GUARD);
}

static void free_args(void)
{
    for (unsigned i = 0; i < n_args; i++)
        cuMemFree_v2(args_of_row[i].base);
    n_args = 0;
    for (unsigned i = 0; i < n_descriptors; i++)
        descriptors[i].destroy(descriptors[i].d);
    n_descriptors = 0;
}

/* How many bytes from p are refused, by bisection (a tainted extent is one
 * run of bytes); -1 when bytes before p or after the run are refused too. */
static long tainted_run(CUdeviceptr p)
{
    if (refused(p - GUARD, GUARD))
        return -1;
    size_t lo = 0, hi = PAYLOAD; /* bytes [p, p + lo) refused; p + hi readable or the end */
    if (refused(p, PAYLOAD)) {
        while (lo < hi) {
            size_t mid = lo + (hi - lo + 1) / 2;
            if (refused(p + mid - 1, 1))
                lo = mid;
            else
                hi = mid - 1;
        }
    }
    if (lo < PAYLOAD && refused(p + lo, PAYLOAD - lo))
        return -1;
    return (long)lo;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const arg_buffer *)a)->name, ((const arg_buffer *)b)->name);
}

/* By name: the order a compiler evaluates arguments in is its own. */
static void print_taint(void)
{
    qsort(args_of_row, n_args, sizeof args_of_row[0], by_name);
    for (unsigned i = 0; i < n_args; i++)
        printf("  %s tainted %ld\n", args_of_row[i].name, tainted_run(args_of_row[i].base + GUARD));
}

/* The status each library's double returns when told to fail. */
enum {
    fails_cublas = CUBLAS_STATUS_INVALID_VALUE,
    fails_curand = CURAND_STATUS_LAUNCH_FAILURE,
    fails_cufft = CUFFT_INVALID_PLAN,
    fails_cusolver = CUSOLVER_STATUS_INVALID_VALUE,
    fails_cusparse = CUSPARSE_STATUS_INVALID_VALUE,
};

/* Whether the call is skipped with 4 bytes at offset at of arg's payload
 * carrying a failure (under CUTAINT_ON_SKIP=error a skipped call answers
 * its library's execution failure; the double's success is 0 in each). */
static int skipped_with(int (*call)(void), const char *arg, size_t at)
{
    probed_arg = arg;
    probed_at = at;
    int status = call();
    probed_arg = NULL;
    free_args();
    return status != 0;
}

/* How many bytes from arg's pointer the call reads: the largest offset a
 * failure there skips it at, by bisection; PAYLOAD: up to the end. */
static long read_run(int (*call)(void), const char *arg)
{
    if (!skipped_with(call, arg, 0))
        return 0;
    size_t lo = 0, hi = PAYLOAD - 4; /* skipped at lo; the answer lies in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (skipped_with(call, arg, mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo == PAYLOAD - 4 ? PAYLOAD : (long)lo + 1;
}

/* "  ARG reads L" for each pointer argument, by name. */
static void print_reads(int (*call)(void))
{
    (void)call();
    qsort(args_of_row, n_args, sizeof args_of_row[0], by_name);
    const char *names[MAX_ARGS];
    unsigned n_names = n_args;
    for (unsigned i = 0; i < n_args; i++)
        names[i] = args_of_row[i].name;
    free_args();
    for (unsigned i = 0; i < n_names; i++)
        printf("  %s reads %ld\n", names[i], read_run(call, names[i]));
}

static void check_row(const char *name, int (*call)(void), int failure)
{
    current_row = name;
    double_fail_next(name, failure);
    printf("fail %s status %d\n", name, call());
    print_taint();
    printf("again %s status %d\n", name, call());
    print_taint();
    free_args();
    taint_new_buffers = 1;
    int status = call();
    taint_new_buffers = 0;
    printf("skip %s skip-status %d\n", name, status);
    print_taint();
    free_args();
    printf("reads %s\n", name);
    print_reads(call);
}

static void destroy_plan(void *d)
{
    cufftDestroy((cufftHandle)(intptr_t)d);
}

/* A cuFFT plan of the current row's kind, made through its wrapper: rank 2
 * (3 x 4), 2 transforms, an advanced layout on both sides, so that an
 * execution's extents are its plan's (libcalls_every_row.expected works
 * them out). */
static cufftHandle fft_plan(void)
{
    static const struct {
        const char *suffix;
        cufftType type;
    } kinds[] = {{"C2C", CUFFT_C2C}, {"Z2Z", CUFFT_Z2Z}, {"R2C", CUFFT_R2C},
                 {"D2Z", CUFFT_D2Z}, {"C2R", CUFFT_C2R}, {"Z2D", CUFFT_Z2D}};
    const char *suffix = current_row + strlen(current_row) - 3;
    cufftType type = CUFFT_C2C;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].suffix, suffix) == 0)
            type = kinds[i].type;
    int dims[2] = {3, 4}, inembed[2] = {0, 5}, onembed[2] = {0, 6};
    cufftHandle p = 0;
    if (cufftPlanMany(&p, 2, dims, inembed, 2, 37, onembed, 1, 41, type, 2) != CUFFT_SUCCESS)
        fprintf(stderr, "no plan for %s\n", current_row);
    keep_descriptor((void *)(intptr_t)p, destroy_plan);
    return p;
}

static void destroy_layout(void *d)
{
    cublasLtMatrixLayoutDestroy(d);
}

static void destroy_dense_vector(void *d)
{
    cusparseDestroyDnVec(d);
}

static void destroy_dense_matrix(void *d)
{
    cusparseDestroyDnMat(d);
}

/* A cuSPARSE dense vector, matrix over the argument's allocation. */
static cusparseDnVecDescr_t dense_vector(const char *name, int64_t size, cudaDataType type)
{
    cusparseDnVecDescr_t d = NULL;
    cusparseCreateDnVec(&d, size, arg_ptr(name), type);
    keep_descriptor(d, destroy_dense_vector);
    return d;
}

static cusparseDnMatDescr_t dense_matrix(const char *name, int64_t rows, int64_t cols, int64_t ld, cudaDataType type,
                                         cusparseOrder_t order)
{
    cusparseDnMatDescr_t d = NULL;
    cusparseCreateDnMat(&d, rows, cols, ld, arg_ptr(name), type, order);
    keep_descriptor(d, destroy_dense_matrix);
    return d;
}

/* A cuBLASLt layout of the argument's matrix. */
static cublasLtMatrixLayout_t layout(const char *name, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld,
                                     int32_t order, int32_t batch, int64_t stride)
{
    cublasLtMatrixLayout_t d = NULL;
    (void)arg_ptr(name); /* its allocation, for the measures */
    cublasLtMatrixLayoutCreate(&d, type, rows, cols, ld);
    cublasLtMatrixLayoutSetAttribute(d, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order);
    cublasLtMatrixLayoutSetAttribute(d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
    cublasLtMatrixLayoutSetAttribute(d, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
    keep_descriptor(d, destroy_layout);
    return d;
}

/* Every argument of the table by its name: pointers get their own
 * allocation, the rest fixed values, odd and distinct where they size an
 * extent. */
#define handle NULL
#define generator NULL
#define plan fft_plan()
#define transa CUBLAS_OP_N
#define transb CUBLAS_OP_T
#define trans CUBLAS_OP_T
#define diag CUBLAS_DIAG_NON_UNIT
#define side CUBLAS_SIDE_LEFT  /* A m x m */
#define mode CUBLAS_SIDE_RIGHT /* x n elements */
#define uplo CUBLAS_FILL_MODE_LOWER
#define m 3
#define n 5
#define k 7
#define lda 11
#define ldb 13
#define ldc 17
#define incx 2
#define incy 3
#define batchCount 2
#define strideA 101
#define strideB 103
#define strideC 107
#define num 37
#define Atype CUDA_R_32F
#define Btype CUDA_R_16F
#define Ctype CUDA_R_64F
#define computeType 0 /* a cublasComputeType_t in some rows, a cudaDataType in others */
#define algo 0        /* a cublasGemmAlgo_t in some rows, a pointer in others */
#define mean 0.0
#define stddev 1.0
#define lambda 1.0
#define direction CUFFT_FORWARD
#define Lwork 0 /* an int in some rows, an int * (a host result) in others */
#define alpha arg_ptr("alpha")
#define beta arg_ptr("beta")
#define A arg_ptr("A")
#define B arg_ptr("B")
#define C arg_ptr("C")
#define Aarray arg_ptr("Aarray")
#define Barray arg_ptr("Barray")
#define Carray arg_ptr("Carray")
#define x arg_ptr("x")
#define y arg_ptr("y")
#define result arg_ptr("result")
#define cosine arg_ptr("cosine")
#define sine arg_ptr("sine")
#define outputPtr arg_ptr("outputPtr")
#define idata arg_ptr("idata")
#define odata arg_ptr("odata")
#define Workspace arg_ptr("Workspace")
#define devIpiv arg_ptr("devIpiv")
#define devInfo arg_ptr("devInfo")
#define info arg_ptr("info")
#define nrhs 9
#define jobu 'S'
#define jobvt 'A'
#define jobz CUSOLVER_EIG_MODE_VECTOR
#define ldu 19
#define ldvt 23
#define lwork 0 /* like Lwork */
#define S arg_ptr("S")
#define U arg_ptr("U")
#define VT arg_ptr("VT")
#define W arg_ptr("W")
#define work arg_ptr("work")
#define rwork arg_ptr("rwork")
#define D arg_ptr("D")
#define Adesc layout("A", CUDA_R_32F, 3, 7, 11, CUBLASLT_ORDER_COL, 1, 0)
#define Bdesc layout("B", CUDA_R_16F, 7, 5, 13, CUBLASLT_ORDER_COL, 2, 101)
#define Cdesc layout("C", CUDA_R_64F, 3, 5, 17, CUBLASLT_ORDER_ROW, 1, 0)
#define Ddesc layout("D", CUDA_R_64F, 3, 5, 17, CUBLASLT_ORDER_COL, 2, 107)
#define lightHandle NULL
#define computeDesc NULL
#define workspace arg_ptr("workspace")
#define workspaceSizeInBytes 0
#define stream NULL
#define opA CUSPARSE_OPERATION_NON_TRANSPOSE
#define opB CUSPARSE_OPERATION_TRANSPOSE
#define alg 0
#define matA NULL /* its arrays are not followed */
#define externalBuffer arg_ptr("externalBuffer")
#define vecX dense_vector("vecX", 29, CUDA_R_32F)
#define vecY dense_vector("vecY", 31, CUDA_R_64F)
#define matB dense_matrix("matB", 3, 5, 11, CUDA_R_32F, CUSPARSE_ORDER_COL)
#define matC dense_matrix("matC", 5, 3, 7, CUDA_R_64F, CUSPARSE_ORDER_ROW)

#define CT_LIBCALL(lib, name, params, args, extents) \
    static int call_##name(void)                     \
    {                                                \
        return (int)name args;                       \
    }
#include "libcalls.def"

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
        fprintf(stderr, "no driver\n");
        return 1;
    }
#define CT_LIBCALL(lib, name, params, args, extents) check_row(#name, call_##name, fails_##lib);
#include "libcalls.def"
    return 0;
}

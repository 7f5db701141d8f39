/*
 * every_row.c - one test-double library (libevery_row_double.so) exporting
 * every entry point of shim/libcalls.def, generated from it with the
 * toolkit headers' prototypes: each returns the status control.h ordered
 * for it, or its library's success, and never touches memory; and, by
 * hand, cuBLASLt's matrix layouts and matmul descriptors, cuSPARSE's dense
 * descriptors and pointer mode, cuFFT's plan handles (constructors,
 * getters and destructors).  What the
 * wrappers make of those statuses is what clients/every_row.c measures.
 */
#include <cublasLt.h>
#include <cublas_api.h>
#include <cufft.h>
#include <curand.h>
#include <cusolverDn.h>
#define DISABLE_CUSPARSE_DEPRECATED /* its deprecated legacy API: not ours to warn about */
#include <cusparse.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"

#define EXPORT __attribute__((visibility("default")))

/* cuSPARSE's dense descriptors, which the wrappers read through the
 * library's own getters: created and read as the library does. */
struct cusparseDnVecDescr {
    int64_t size;
    void *values;
    cudaDataType type;
};

struct cusparseDnMatDescr {
    int64_t rows, cols, ld;
    void *values;
    cudaDataType type;
    cusparseOrder_t order;
};

EXPORT cusparseStatus_t cusparseCreateDnVec(cusparseDnVecDescr_t *d, int64_t size, void *values, cudaDataType type)
{
    *d = malloc(sizeof **d);
    if (!*d)
        return CUSPARSE_STATUS_ALLOC_FAILED;
    **d = (struct cusparseDnVecDescr){size, values, type};
    return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseDestroyDnVec(cusparseConstDnVecDescr_t d)
{
    free((void *)d);
    return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseDestroyDnMat(cusparseConstDnMatDescr_t d)
{
    free((void *)d);
    return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseConstDnVecGet(cusparseConstDnVecDescr_t d, int64_t *size, const void **values,
                                              cudaDataType *type)
{
    *size = d->size;
    *values = d->values;
    *type = d->type;
    return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseCreateDnMat(cusparseDnMatDescr_t *d, int64_t rows, int64_t cols, int64_t ld,
                                            void *values, cudaDataType type, cusparseOrder_t order)
{
    *d = malloc(sizeof **d);
    if (!*d)
        return CUSPARSE_STATUS_ALLOC_FAILED;
    **d = (struct cusparseDnMatDescr){rows, cols, ld, values, type, order};
    return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseConstDnMatGet(cusparseConstDnMatDescr_t d, int64_t *rows, int64_t *cols, int64_t *ld,
                                              const void **values, cudaDataType *type, cusparseOrder_t *order)
{
    *rows = d->rows;
    *cols = d->cols;
    *ld = d->ld;
    *values = d->values;
    *type = d->type;
    *order = d->order;
    return CUSPARSE_STATUS_SUCCESS;
}

/* cuBLASLt's matrix layouts, which the wrappers read through the
 * library's getter: each attribute kept in the opaque struct's word of its
 * own number (TYPE 0 ... BATCH_MODE 8 of its 8 words: the first 8). */
EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *d, cudaDataType type, uint64_t rows,
                                                 uint64_t cols, int64_t ld)
{
    *d = calloc(1, sizeof **d);
    if (!*d)
        return CUBLAS_STATUS_ALLOC_FAILED;
    (*d)->data[CUBLASLT_MATRIX_LAYOUT_TYPE] = (uint64_t)type;
    (*d)->data[CUBLASLT_MATRIX_LAYOUT_ROWS] = rows;
    (*d)->data[CUBLASLT_MATRIX_LAYOUT_COLS] = cols;
    (*d)->data[CUBLASLT_MATRIX_LAYOUT_LD] = (uint64_t)ld;
    (*d)->data[CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT] = 1;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

static int layout_word(cublasLtMatrixLayoutAttribute_t attribute, size_t size)
{
    return (unsigned)attribute < 8 && size <= sizeof(uint64_t);
}

EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t d,
                                                       cublasLtMatrixLayoutAttribute_t attribute, const void *buf,
                                                       size_t size)
{
    if (!layout_word(attribute, size))
        return CUBLAS_STATUS_INVALID_VALUE;
    d->data[attribute] = 0;
    memcpy(&d->data[attribute], buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t d,
                                                       cublasLtMatrixLayoutAttribute_t attribute, void *buf,
                                                       size_t size, size_t *written)
{
    if (!layout_word(attribute, size))
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, &d->data[attribute], size);
    *written = size;
    return CUBLAS_STATUS_SUCCESS;
}

/* cuSPARSE's pointer mode, one for every handle (the clients use one). */
static cusparsePointerMode_t sparse_mode = CUSPARSE_POINTER_MODE_HOST;

EXPORT cusparseStatus_t cusparseSetPointerMode(cusparseHandle_t handle, cusparsePointerMode_t mode)
{
    (void)handle;
    sparse_mode = mode;
    return CUSPARSE_STATUS_SUCCESS;
}

EXPORT cusparseStatus_t cusparseGetPointerMode(cusparseHandle_t handle, cusparsePointerMode_t *mode)
{
    (void)handle;
    *mode = sparse_mode;
    return CUSPARSE_STATUS_SUCCESS;
}

/* cuBLASLt's matmul descriptors: each int32_t attribute in the word of its
 * own number (the first 32), as the layouts' above. */
EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                               cudaDataType_t scale)
{
    *d = calloc(1, sizeof **d);
    if (!*d)
        return CUBLAS_STATUS_ALLOC_FAILED;
    (*d)->data[CUBLASLT_MATMUL_DESC_COMPUTE_TYPE] = (uint64_t)compute;
    (*d)->data[CUBLASLT_MATMUL_DESC_SCALE_TYPE] = (uint64_t)scale;
    (*d)->data[CUBLASLT_MATMUL_DESC_POINTER_MODE] = CUBLASLT_POINTER_MODE_HOST;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

static int matmul_word(cublasLtMatmulDescAttributes_t attribute, size_t size)
{
    return (unsigned)attribute < 32 && size == sizeof(int32_t);
}

EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attribute,
                                                     const void *buf, size_t size)
{
    if (!matmul_word(attribute, size))
        return CUBLAS_STATUS_INVALID_VALUE;
    int32_t value;
    memcpy(&value, buf, sizeof value);
    d->data[attribute] = (uint64_t)(uint32_t)value;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attribute,
                                                     void *buf, size_t size, size_t *written)
{
    if (!matmul_word(attribute, size))
        return CUBLAS_STATUS_INVALID_VALUE;
    int32_t value = (int32_t)(uint32_t)d->data[attribute];
    memcpy(buf, &value, sizeof value);
    *written = size;
    return CUBLAS_STATUS_SUCCESS;
}

/* cuFFT's plan handles: numbered from 1, never reused (as the library's
 * are until destroyed: a test sees a stale plan as a number again only
 * when it asks for it). */
static cufftHandle next_plan = 1;

EXPORT cufftResult cufftCreate(cufftHandle *plan)
{
    *plan = next_plan++;
    return CUFFT_SUCCESS;
}

#define CT_LIBRARY(lib, status_type, success, exec_failure) \
    typedef status_type double_status_##lib;                \
    enum { double_success_##lib = success };
#include "libcalls.def"

#define CT_LIBCALL(lib, name, params, args, extents)      \
    EXPORT double_status_##lib name params                \
    {                                                     \
        int status;                                       \
        if (double_take_failure(#name, &status))          \
            return (double_status_##lib)status;           \
        return (double_status_##lib)double_success_##lib; \
    }
#include "libcalls.def"

/* The plan calls: fail when told to, else succeed (making a handle where
 * the call makes one). */
#define CT_FFT_DOUBLE(name, params, made)        \
    EXPORT cufftResult name params               \
    {                                            \
        int status;                              \
        if (double_take_failure(#name, &status)) \
            return (cufftResult)status;          \
        made;                                    \
        return CUFFT_SUCCESS;                    \
    }
#define CT_FFT_PLAN(name, params, args, shape) CT_FFT_DOUBLE(name, params, *plan = next_plan++)
#define CT_FFT_MAKE_PLAN(name, params, args, shape) CT_FFT_DOUBLE(name, params, (void)plan)
#define CT_FFT_DESTROY(name, params, args) CT_FFT_DOUBLE(name, params, (void)plan)
#include "libcalls.def"

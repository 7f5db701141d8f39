/*
 * every_row.c - one test-double library (libevery_row_double.so) exporting
 * every entry point of shim/libcalls.def, generated from it with the
 * toolkit headers' prototypes: each returns the status control.h ordered
 * for it, or its library's success, and never touches memory; and, by
 * hand, the cuSPARSE dense descriptors' constructors and getters.  What the
 * wrappers make of those statuses is what clients/every_row.c measures.
 */
#include <cublas_api.h>
#include <cufft.h>
#include <curand.h>
#include <cusolverDn.h>
#define DISABLE_CUSPARSE_DEPRECATED /* its deprecated legacy API: not ours to warn about */
#include <cusparse.h>
#include <stdlib.h>

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

/*
 * every_row.c - one test-double library (libevery_row_double.so) exporting
 * every entry point of shim/libcalls.def, generated from it with the
 * toolkit headers' prototypes: each returns the status control.h ordered
 * for it, or its library's success, and never touches memory.  What the
 * wrappers make of those statuses is what clients/every_row.c measures.
 */
#include <cublas_api.h>
#include <cufft.h>
#include <curand.h>
#include <cusolverDn.h>

#include "control.h"

#define EXPORT __attribute__((visibility("default")))

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

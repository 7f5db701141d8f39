/*
 * local_user.c - a library that needs the cuRAND double, as a Python
 * extension module needs libcurand: the program dlopens it RTLD_LOCAL, so
 * the double lies in a local scope no global lookup past libcutaint.so
 * reaches (liblocal_user.so, for clients/libcalls_local.c).
 */
#include <curand.h>

#include "control.h"

/* One generation of num floats into out, failing first when fail is set. */
__attribute__((visibility("default"))) int local_generate(float *out, size_t num, int fail)
{
    curandGenerator_t g;
    if (curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT) != CURAND_STATUS_SUCCESS)
        return -1;
    if (fail)
        double_fail_next("curandGenerateUniform", CURAND_STATUS_LAUNCH_FAILURE);
    return (int)curandGenerateUniform(g, out, num);
}

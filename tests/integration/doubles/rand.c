/*
 * rand.c - a test-double cuRAND (libcurand_double.so): a generator handle,
 * and curandGenerateUniform with the toolkit header's signature writing
 * (i + 0.5) / num through the driver, or failing as control.h orders,
 * writing nothing: the measured case of issue 46, whose seed kernel failed
 * and whose output kernel never ran.
 */
#include <cuda.h>
#include <curand.h>
#include <stdlib.h>

#include "control.h"

#define EXPORT __attribute__((visibility("default")))

static int generator;

EXPORT curandStatus_t curandCreateGenerator(curandGenerator_t *out, curandRngType_t type)
{
    (void)type;
    *out = (curandGenerator_t)&generator;
    return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandGenerateUniform(curandGenerator_t g, float *outputPtr, size_t num)
{
    int status;
    if (g != (curandGenerator_t)&generator)
        return CURAND_STATUS_NOT_INITIALIZED;
    if (double_take_failure("curandGenerateUniform", &status))
        return (curandStatus_t)status;
    float *host = malloc((num ? num : 1) * sizeof *host);
    if (!host)
        return CURAND_STATUS_ALLOCATION_FAILED;
    for (size_t i = 0; i < num; i++)
        host[i] = ((float)i + 0.5f) / (float)num;
    CUresult r = cuMemcpyHtoD_v2((CUdeviceptr)(uintptr_t)outputPtr, host, num * sizeof *host);
    free(host);
    return r == CUDA_SUCCESS ? CURAND_STATUS_SUCCESS : CURAND_STATUS_LAUNCH_FAILURE;
}

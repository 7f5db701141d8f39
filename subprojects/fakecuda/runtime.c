/*
 * runtime.c: the public entry points NVIDIA's CUDA runtime needs at start
 * that plain driver-API programs did not: the device UUID, a context's API
 * version and the module loading mode.
 *
 * Invariants: the device UUID is one fixed value (the ASCII bytes of
 * "fakecuda-device0") in every process and through both cuDeviceGetUuid
 * variants, because the runtime's integrity check (private.c) hashes it
 * and compares with what it read itself.
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* What the real driver reports for every context since CUDA 3.2. */
#define FC_CTX_API_VERSION 3020

static const CUuuid fc_uuid = {{'f', 'a', 'k', 'e', 'c', 'u', 'd', 'a', '-', 'd', 'e', 'v', 'i', 'c', 'e', '0'}};
_Static_assert(sizeof fc_uuid.bytes == sizeof "fakecuda-device0" - 1, "the UUID is the text's bytes, no NUL");

CUresult fc_device_uuid(CUuuid *uuid, CUdevice d)
{
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_device_check(d) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    assert(memcmp(fc_uuid.bytes, "fakecuda-device0", sizeof fc_uuid.bytes) == 0 && "one fixed UUID");
    *uuid = fc_uuid;
    return CUDA_SUCCESS;
}

CUresult fc_ctx_api_version(CUcontext c, unsigned *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_ctx_or_current(&c);
    if (r == CUDA_SUCCESS)
        *version = FC_CTX_API_VERSION;
    return r;
}

/*
 * What CUDA_MODULE_LOADING asks for, with the real driver's default (lazy
 * since CUDA 12.2). Read at every call, so the mode reported and the one
 * each load uses (modules.c: where an image the device cannot run is
 * reported) are the same.
 */
bool fc_loading_eager(void)
{
    const char *env = getenv("CUDA_MODULE_LOADING");
    return env && strcmp(env, "EAGER") == 0;
}

CUresult fc_module_loading_mode(CUmoduleLoadingMode *mode)
{
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = fc_loading_eager() ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
}

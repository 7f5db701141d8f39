/*
 * test_managed.c: managed memory's placement hints (UnifiedMemoryPerf):
 * cuStreamAttachMemAsync, cuMemPrefetchAsync (legacy and _v2), cuMemAdvise
 * (legacy and _v2) take a managed range and are checked as the driver
 * checks them; the memory stays usable by host and device after each.
 */
#include "fc_test.h"

static CUdeviceptr managed(size_t bytes)
{
    CUdeviceptr p;
    OK(cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL));
    return p;
}

Test(managed, attach_takes_a_whole_managed_allocation)
{
    CUstream s;
    fc_setup();
    OK(cuStreamCreate(&s, 0));
    CUdeviceptr p = managed(4096), dev;
    OK(cuMemAlloc(&dev, 4096));
    OK(cuStreamAttachMemAsync(s, p, 0, CU_MEM_ATTACH_SINGLE));
    OK(cuStreamAttachMemAsync(s, p, 4096, CU_MEM_ATTACH_HOST));
    OK(cuStreamAttachMemAsync(NULL, p, 0, CU_MEM_ATTACH_GLOBAL));
    FAILS(cuStreamAttachMemAsync(s, p + 256, 0, CU_MEM_ATTACH_HOST), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuStreamAttachMemAsync(s, p, 8192, CU_MEM_ATTACH_HOST), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuStreamAttachMemAsync(s, p, 0, CU_MEM_ATTACH_HOST | CU_MEM_ATTACH_SINGLE), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuStreamAttachMemAsync(s, dev, 0, CU_MEM_ATTACH_HOST), CUDA_ERROR_INVALID_VALUE);
    OK(cuStreamSynchronize(s));
    /* still the host's and the device's */
    ((unsigned *)(uintptr_t)p)[0] = 0xC0FFEEu;
    unsigned back = 0;
    OK(cuMemcpyDtoH(&back, p, sizeof back));
    cr_assert_eq(back, 0xC0FFEEu);
    OK(cuStreamDestroy(s));
    FAILS(cuStreamAttachMemAsync(s, p, 0, CU_MEM_ATTACH_HOST), CUDA_ERROR_INVALID_HANDLE);
}

Test(managed, prefetch_takes_a_managed_range_and_a_location)
{
    CUstream s;
    fc_setup();
    OK(cuStreamCreate(&s, 0));
    CUdeviceptr p = managed(8192), dev;
    OK(cuMemAlloc(&dev, 4096));
    CUmemLocation gpu = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    CUmemLocation host = {.type = CU_MEM_LOCATION_TYPE_HOST, .id = 0};
    CUmemLocation other = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 3};
    OK(cuMemPrefetchAsync(p, 8192, gpu, 0, s));
    OK(cuMemPrefetchAsync(p + 4096, 100, host, 0, s));
    FAILS(cuMemPrefetchAsync(p, 8193, gpu, 0, s), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemPrefetchAsync(dev, 16, gpu, 0, s), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemPrefetchAsync(p, 0, gpu, 0, s), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemPrefetchAsync(p, 16, gpu, 1, s), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemPrefetchAsync(p, 16, other, 0, s), CUDA_ERROR_INVALID_DEVICE);
    /* the legacy form (CUDA 8.0's ABI) names a device ordinal */
    CUresult (*legacy)(CUdeviceptr, size_t, CUdevice, CUstream);
    OK(cuGetProcAddress("cuMemPrefetchAsync", (void **)&legacy, 8000, 0, NULL));
    OK(legacy(p, 8192, 0, s));
    OK(legacy(p, 8192, CU_DEVICE_CPU, NULL));
    FAILS(legacy(p, 8192, 5, s), CUDA_ERROR_INVALID_DEVICE);
    OK(cuStreamSynchronize(s));
}

Test(managed, advise_takes_a_managed_range)
{
    fc_setup();
    CUdeviceptr p = managed(4096);
    CUmemLocation gpu = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    OK(cuMemAdvise(p, 4096, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, gpu));
    OK(cuMemAdvise(p, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, (CUmemLocation){.type = 99}));
    FAILS(cuMemAdvise(p, 64, (CUmem_advise)42, gpu), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemAdvise(p, 8192, CU_MEM_ADVISE_SET_ACCESSED_BY, gpu), CUDA_ERROR_INVALID_VALUE);
    CUresult (*legacy)(CUdeviceptr, size_t, CUmem_advise, CUdevice);
    OK(cuGetProcAddress("cuMemAdvise", (void **)&legacy, 8000, 0, NULL));
    OK(legacy(p, 64, CU_MEM_ADVISE_SET_ACCESSED_BY, 0));
    FAILS(legacy(p, 64, CU_MEM_ADVISE_SET_ACCESSED_BY, 4), CUDA_ERROR_INVALID_DEVICE);
}

/*
 * test_hostmem.c: profiler control, registered host memory
 * (cuMemHostRegister / Unregister), mapped pinned memory
 * (cuMemHostAlloc with DEVICEMAP, cuMemHostGetDevicePointer,
 * cuMemHostGetFlags): the device address is the host address, and kernels,
 * copies and memsets reach it; every documented error code.
 */
#include "fc_test.h"

#include <cudaProfiler.h>

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

Test(hostmem, profiler_start_stop_need_a_current_context)
{
    FAILS(cuProfilerStart(), CUDA_ERROR_NOT_INITIALIZED);
    OK(cuInit(0));
    FAILS(cuProfilerStart(), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cuProfilerStop(), CUDA_ERROR_INVALID_CONTEXT);
    fc_setup();
    OK(cuProfilerStart());
    OK(cuProfilerStart()); /* already enabled: no effect */
    OK(cuProfilerStop());
    OK(cuProfilerStop());
}

/* A page-aligned pageable buffer of n floats, each i. */
static float *host_floats(size_t n)
{
    void *p = NULL;
    cr_assert_eq(posix_memalign(&p, 4096, n * sizeof(float)), 0);
    float *f = p;
    for (size_t i = 0; i < n; i++)
        f[i] = (float)i;
    return f;
}

Test(hostmem, registered_memory_is_mapped_at_its_host_address)
{
    fc_setup();
    enum { N = 1000 };
    float *h = host_floats(N);
    OK(cuMemHostRegister(h, N * sizeof(float), CU_MEMHOSTREGISTER_DEVICEMAP));
    CUdeviceptr d;
    OK(cuMemHostGetDevicePointer(&d, h + 10, 0));
    cr_assert_eq(d, (CUdeviceptr)(uintptr_t)(h + 10), "the device address of registered memory is its host address");
    OK(cuMemHostGetDevicePointer(&d, h, 0));
    unsigned flags = 99;
    OK(cuMemHostGetFlags(&flags, h + 5));
    cr_assert_eq(flags, CU_MEMHOSTREGISTER_DEVICEMAP);
    /* a kernel reads and writes it */
    int n = N;
    float factor = 3;
    void *args[] = {&d, &n, &factor};
    OK(fc_launch(fc_function("scale"), N, args, false, NULL));
    OK(cuCtxSynchronize());
    for (int i = 0; i < N; i++)
        cr_assert_eq(h[i], 3.0f * (float)i, "h[%d] = %f", i, h[i]);
    /* memsets and copies name it as device memory */
    OK(cuMemsetD32(d + 4 * 100, fc_as_bits(7.0f), 10));
    cr_assert_eq(h[100], 7.0f);
    cr_assert_eq(h[109], 7.0f);
    cr_assert_eq(h[110], 330.0f);
    CUdeviceptr dev;
    OK(cuMemAlloc(&dev, N * sizeof(float)));
    OK(cuMemcpyDtoD(dev, d, N * sizeof(float)));
    float back[N];
    OK(cuMemcpyDtoH(back, dev, sizeof back));
    cr_assert_arr_eq(back, h, sizeof back);
    float one = 42;
    OK(cuMemcpyHtoD(d + 4 * 999, &one, sizeof one));
    cr_assert_eq(h[999], 42.0f);
    OK(cuMemHostUnregister(h));
    FAILS(cuMemHostGetDevicePointer(&d, h, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemcpyHtoD(d, &one, sizeof one), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemHostGetFlags(&flags, h), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFree(dev));
    free(h);
}

Test(hostmem, a_kernel_on_unregistered_memory_faults)
{
    fc_setup();
    float *h = host_floats(64);
    OK(cuMemHostRegister(h, 64 * sizeof(float), 0));
    CUdeviceptr d;
    OK(cuMemHostGetDevicePointer(&d, h, 0));
    OK(cuMemHostUnregister(h));
    int n = 64;
    float v = 1;
    void *args[] = {&d, &n, &v};
    OK(fc_launch(fc_function("_Z4fillPfif"), 64, args, false, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    cr_assert_eq(h[0], 0.0f, "a faulting kernel writes nothing");
    free(h);
}

Test(hostmem, a_kernel_past_the_registered_range_faults)
{
    fc_setup();
    float *h = host_floats(128);
    OK(cuMemHostRegister(h, 64 * sizeof(float), 0));
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)h;
    int n = 65;
    float v = 1;
    void *args[] = {&d, &n, &v};
    OK(fc_launch(fc_function("_Z4fillPfif"), 65, args, false, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    free(h);
}

Test(hostmem, register_errors)
{
    FAILS(cuMemHostRegister(NULL, 64, 0), CUDA_ERROR_NOT_INITIALIZED);
    OK(cuInit(0));
    float *h = host_floats(4096);
    FAILS(cuMemHostRegister(h, 4096, 0), CUDA_ERROR_INVALID_CONTEXT);
    fc_setup();
    FAILS(cuMemHostRegister(NULL, 64, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemHostRegister(h, 0, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemHostRegister(h, 64, 0x100), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemHostRegister(h, 64, CU_MEMHOSTREGISTER_IOMEMORY), CUDA_ERROR_NOT_SUPPORTED);
    OK(cuMemHostRegister(h + 1024, 1024 * sizeof(float), CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_READ_ONLY));
    FAILS(cuMemHostRegister(h + 1024, 1024 * sizeof(float), 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    FAILS(cuMemHostRegister(h + 1500, 16, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    FAILS(cuMemHostRegister(h, 1025 * sizeof(float), 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    FAILS(cuMemHostRegister(h + 2047, 8, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    OK(cuMemHostRegister(h, 1024 * sizeof(float), 0)); /* adjacent, not overlapping */
    OK(cuMemHostRegister(h + 2048, 16, 0));
    unsigned flags;
    OK(cuMemHostGetFlags(&flags, h + 1024));
    cr_assert_eq(flags, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_READ_ONLY);
    /* pinned memory from the driver is registered already */
    void *pinned;
    OK(cuMemHostAlloc(&pinned, 4096, 0));
    FAILS(cuMemHostRegister((char *)pinned + 100, 100, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    /* device memory, managed memory and unmapped pages are not host memory to pin */
    CUdeviceptr d, m;
    OK(cuMemAlloc(&d, 4096));
    OK(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
    FAILS(cuMemHostRegister((void *)(uintptr_t)d, 4096, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemHostRegister((void *)(uintptr_t)m, 4096, 0), CUDA_ERROR_INVALID_VALUE);
    long page = sysconf(_SC_PAGESIZE);
    char *hole = mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(hole, MAP_FAILED);
    cr_assert_eq(munmap(hole + page, (size_t)page), 0);
    FAILS(cuMemHostRegister(hole, 3 * (size_t)page, 0), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemHostRegister(hole, (size_t)page, 0));
}

Test(hostmem, unregister_errors)
{
    fc_setup();
    float *h = host_floats(256);
    FAILS(cuMemHostUnregister(NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemHostUnregister(h), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    OK(cuMemHostRegister(h, 256 * sizeof(float), 0));
    FAILS(cuMemHostUnregister(h + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    OK(cuMemHostUnregister(h));
    FAILS(cuMemHostUnregister(h), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    OK(cuMemHostRegister(h, 256 * sizeof(float), 0)); /* the range is free again */
    OK(cuMemHostUnregister(h));
    OK(cuCtxSetCurrent(NULL));
    FAILS(cuMemHostUnregister(h), CUDA_ERROR_INVALID_CONTEXT);
}

Test(hostmem, a_context_takes_its_registrations_with_it)
{
    OK(cuInit(0));
    CUcontext c;
    OK(cuCtxCreate(&c, NULL, 0, 0));
    float *h = host_floats(256);
    OK(cuMemHostRegister(h, 256, 0));
    OK(cuMemHostRegister(h + 128, 256, CU_MEMHOSTREGISTER_PORTABLE));
    OK(cuCtxDestroy(c));
    fc_setup();
    OK(cuMemHostRegister(h, 256, 0));
    FAILS(cuMemHostRegister(h + 128, 256, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
}

Test(hostmem, mapped_pinned_memory)
{
    fc_setup();
    float *p;
    OK(cuMemHostAlloc((void **)&p, 256 * sizeof(float), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    unsigned flags;
    OK(cuMemHostGetFlags(&flags, p));
    cr_assert_eq(flags, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    CUdeviceptr d;
    OK(cuMemHostGetDevicePointer(&d, p + 8, 0));
    cr_assert_eq(d, (CUdeviceptr)(uintptr_t)(p + 8));
    int n = 200;
    float v = 2.5f;
    void *args[] = {&d, &n, &v};
    OK(fc_launch(fc_function("_Z4fillPfif"), 200, args, false, NULL));
    OK(cuCtxSynchronize());
    for (int i = 8; i < 208; i++)
        cr_assert_eq(p[i], 2.5f);
    /* a stream-ordered copy from pinned memory reads it when it runs, after the kernel */
    CUstream s;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr dev;
    OK(cuMemAlloc(&dev, 256 * sizeof(float)));
    v = 9.0f;
    OK(fc_launch(fc_function("_Z4fillPfif"), 200, args, false, s));
    OK(cuMemcpyHtoDAsync(dev, p + 8, 200 * sizeof(float), s));
    OK(cuStreamSynchronize(s));
    float back[200];
    OK(cuMemcpyDtoH(back, dev, sizeof back));
    for (int i = 0; i < 200; i++)
        cr_assert_eq(back[i], 9.0f, "back[%d] = %f", i, back[i]);
    /* cuMemAllocHost memory is mapped too (unified addressing), flags 0 */
    void *q;
    OK(cuMemAllocHost(&q, 64));
    OK(cuMemHostGetFlags(&flags, q));
    cr_assert_eq(flags, 0);
    OK(cuMemHostGetDevicePointer(&d, q, 0));
    cr_assert_eq(d, (CUdeviceptr)(uintptr_t)q);
    OK(cuMemFreeHost(q));
    FAILS(cuMemHostGetDevicePointer(&d, q, 0), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFreeHost(p));
}

Test(hostmem, device_pointer_and_flags_errors)
{
    fc_setup();
    void *p;
    FAILS(cuMemHostAlloc(&p, 64, 0x80), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemHostAlloc(&p, 64, CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr d;
    FAILS(cuMemHostGetDevicePointer(NULL, p, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemHostGetDevicePointer(&d, p, 1), CUDA_ERROR_INVALID_VALUE);
    char pageable[64];
    FAILS(cuMemHostGetDevicePointer(&d, pageable, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemHostGetDevicePointer(&d, (char *)p + 64, 0), CUDA_ERROR_INVALID_VALUE);
    unsigned flags;
    FAILS(cuMemHostGetFlags(NULL, p), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemHostGetFlags(&flags, pageable), CUDA_ERROR_INVALID_VALUE);
    OK(cuCtxSetCurrent(NULL));
    FAILS(cuMemHostGetDevicePointer(&d, p, 0), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cuMemHostGetFlags(&flags, p), CUDA_ERROR_INVALID_CONTEXT);
}

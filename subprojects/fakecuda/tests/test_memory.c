/*
 * test_memory.c: device memory is not host memory (dereferencing it
 * crashes), allocation alignment, accounting and out-of-memory, address
 * ranges and pointer attributes, freeing 0, managed and pinned memory, the
 * legacy 32-bit entry points, and
 * every copy and memset shape.
 */
#include "fc_test.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

Test(memory, dereferencing_a_device_pointer_crashes)
{
    fc_setup();
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 64));
    pid_t child = fork();
    cr_assert_neq(child, -1);
    if (child == 0) {
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would turn the crash into an exit */
        volatile float *p = (volatile float *)(uintptr_t)d;
        p[0] = 1.0f;
        _exit(0);
    }
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x", status);
}

Test(memory, managed_memory_is_host_accessible)
{
    fc_setup();
    CUdeviceptr d;
    OK(cuMemAllocManaged(&d, 100 * sizeof(float), CU_MEM_ATTACH_GLOBAL));
    float *p = (float *)(uintptr_t)d;
    for (int i = 0; i < 100; i++)
        p[i] = (float)i;
    int n = 100;
    float factor = 2;
    void *args[] = {&d, &n, &factor};
    OK(fc_launch(fc_function("scale"), 100, args, false, NULL));
    OK(cuCtxSynchronize());
    for (int i = 0; i < 100; i++)
        cr_assert_eq(p[i], 2.0f * (float)i);
    OK(cuMemFree(d));
}

Test(memory, alignment_ranges_and_accounting)
{
    fc_setup();
    size_t free0, total, free1;
    OK(cuMemGetInfo(&free0, &total));
    cr_assert_eq(total, (size_t)1 << 30, "default device size is 1 GiB");
    CUdeviceptr a, b, base;
    size_t size;
    OK(cuMemAlloc(&a, 1000));
    OK(cuMemAlloc(&b, 1));
    cr_assert_eq(a % 256, 0);
    cr_assert_eq(b % 256, 0);
    cr_assert_neq(a, b);
    OK(cuMemGetInfo(&free1, &total));
    cr_assert_eq(free0 - free1, 1024 + 256);
    OK(cuMemGetAddressRange(&base, &size, a + 999));
    cr_assert_eq(base, a);
    cr_assert_eq(size, 1000);
    FAILS(cuMemGetAddressRange(&base, &size, a + 1000), CUDA_ERROR_NOT_FOUND);
    FAILS(cuMemFree(a + 8), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFree(a));
    FAILS(cuMemFree(a), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemAlloc(&a, 0), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFree(b));
    OK(cuMemGetInfo(&free1, &total));
    cr_assert_eq(free1, free0);
}

/* The runtime's cudaFree(NULL), which NVIDIA's libraries call at start. */
Test(memory, freeing_zero_succeeds_once_a_context_is_current)
{
    OK(cuInit(0));
    FAILS(cuMemFree(0), CUDA_ERROR_INVALID_CONTEXT);
    fc_setup();
    size_t free0, free1, total;
    OK(cuMemGetInfo(&free0, &total));
    OK(cuMemFree(0));
    OK(cuMemGetInfo(&free1, &total));
    cr_assert_eq(free1, free0, "freeing 0 frees nothing");
}

Test(memory, device_size_and_out_of_memory)
{
    setenv("FAKECUDA_DEVICE_MEMORY", "1M", 1);
    fc_setup();
    size_t free_b, total;
    OK(cuMemGetInfo(&free_b, &total));
    cr_assert_eq(total, (size_t)1 << 20);
    CUdeviceptr a, b;
    OK(cuMemAlloc(&a, 768 << 10));
    FAILS(cuMemAlloc(&b, 512 << 10), CUDA_ERROR_OUT_OF_MEMORY);
    OK(cuMemFree(a));
    OK(cuMemAlloc(&b, 1 << 20));
}

Test(memory, addresses_are_reused_after_the_arena_wraps)
{
    fc_setup();
    /* 80 x 1 GiB of allocations walk past the 64 GiB address arena */
    CUdeviceptr seen[80];
    bool reused = false;
    for (int i = 0; i < 80; i++) {
        OK(cuMemAlloc(&seen[i], (size_t)1 << 30));
        for (int k = 0; k < i; k++)
            reused |= seen[k] == seen[i];
        unsigned word = 1;
        OK(cuMemcpyDtoH(&word, seen[i] + ((size_t)1 << 30) - 4, 4));
        cr_assert_eq(word, 0, "allocations over 64 MiB start zeroed");
        OK(cuMemFree(seen[i]));
    }
    cr_assert(reused);
}

Test(memory, a_released_contexts_addresses_are_handed_out_again)
{
    fc_setup();
    CUdeviceptr keep, first, second, again;
    OK(cuMemAlloc(&keep, 4096)); /* the primary context's: it stays */
    CUcontext c;
    OK(cuCtxCreate(&c, NULL, 0, 0));
    OK(cuMemAlloc(&first, 4096));
    OK(cuMemAlloc(&second, 1 << 20));
    OK(cuCtxDestroy(c));
    OK(cuCtxCreate(&c, NULL, 0, 0));
    OK(cuMemAlloc(&again, 8192));
    cr_assert_eq(again, first, "the destroyed context's first address comes back");
    cr_assert_gt(again, keep);
    OK(cuCtxDestroy(c));
    OK(cuDevicePrimaryCtxReset(0));
    CUcontext primary;
    OK(cuDevicePrimaryCtxRetain(&primary, 0));
    OK(cuCtxSetCurrent(primary));
    OK(cuMemAlloc(&again, 16));
    cr_assert_eq(again, keep, "a reset primary context's too");
}

Test(memory, fresh_memory_is_stale_not_zero)
{
    fc_setup();
    CUdeviceptr d;
    unsigned word;
    OK(cuMemAlloc(&d, 64));
    OK(cuMemcpyDtoH(&word, d, 4));
    cr_assert_eq(word, FC_STALE_WORD);
}

Test(memory, pinned_host_memory)
{
    fc_setup();
    void *p, *q;
    OK(cuMemAllocHost(&p, 4096));
    OK(cuMemHostAlloc(&q, 100, 0));
    memset(p, 7, 4096);
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 4096));
    OK(cuMemcpyHtoD(d, p, 4096));
    OK(cuMemcpyDtoH(q, d, 100));
    cr_assert_arr_eq(q, p, 100);
    OK(cuMemFreeHost(p));
    OK(cuMemFreeHost(q));
    FAILS(cuMemFreeHost(q), CUDA_ERROR_INVALID_VALUE);
}

Test(memory, legacy_32bit_entry_points)
{
    fc_setup();
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CUresult (*alloc_v1)(unsigned *, unsigned) = (CUresult(*)(unsigned *, unsigned))dlsym(h, "cuMemAlloc");
    CUresult (*htod_v1)(unsigned, const void *, unsigned) =
        (CUresult(*)(unsigned, const void *, unsigned))dlsym(h, "cuMemcpyHtoD");
    CUresult (*dtoh_v1)(void *, unsigned, unsigned) = (CUresult(*)(void *, unsigned, unsigned))dlsym(h, "cuMemcpyDtoH");
    CUresult (*free_v1)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuMemFree");
    unsigned d = 0;
    OK(alloc_v1(&d, 64));
    cr_assert_neq(d, 0);
    int in[4] = {1, 2, 3, 4}, out[4];
    OK(htod_v1(d, in, sizeof in));
    OK(cuMemcpyDtoH(out, (CUdeviceptr)d, sizeof out)); /* the same allocation through _v2 */
    cr_assert_arr_eq(out, in, sizeof in);
    memset(out, 0, sizeof out);
    OK(dtoh_v1(out, d, sizeof out));
    cr_assert_arr_eq(out, in, sizeof in);
    OK(free_v1(d));
    dlclose(h);
}

Test(memory, copies_by_address_and_between_devices)
{
    CUcontext ctx = fc_setup();
    int in[64], out[64];
    for (int i = 0; i < 64; i++)
        in[i] = i * i;
    CUdeviceptr a, b;
    OK(cuMemAlloc(&a, sizeof in));
    OK(cuMemAlloc(&b, sizeof in));
    OK(cuMemcpy(a, (CUdeviceptr)(uintptr_t)in, sizeof in));
    OK(cuMemcpyDtoD(b, a, sizeof in));
    OK(cuMemcpyPeer(a, ctx, b, ctx, sizeof in));
    OK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)out, a, sizeof out, NULL));
    OK(cuCtxSynchronize());
    cr_assert_arr_eq(out, in, sizeof in);
    FAILS(cuMemcpyDtoD(b, a, sizeof in + 1), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemcpyDtoD(b, a, 0));
}

Test(memory, copies_2d_and_3d)
{
    fc_setup();
    unsigned char host[4][10], back[4][10];
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 10; x++)
            host[y][x] = (unsigned char)(y * 10 + x);
    CUdeviceptr d;
    size_t pitch;
    OK(cuMemAllocPitch(&d, &pitch, 10, 4, 4));
    cr_assert_eq(pitch, 512);
    CUDA_MEMCPY2D up = {.srcMemoryType = CU_MEMORYTYPE_HOST,
                        .srcHost = host,
                        .srcPitch = 10,
                        .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                        .dstDevice = d,
                        .dstPitch = pitch,
                        .WidthInBytes = 10,
                        .Height = 4};
    OK(cuMemcpy2D(&up));
    unsigned char row2[10];
    OK(cuMemcpyDtoH(row2, d + 2 * pitch, 10));
    cr_assert_arr_eq(row2, host[2], 10);

    CUDA_MEMCPY3D down = {.srcMemoryType = CU_MEMORYTYPE_UNIFIED,
                          .srcDevice = d,
                          .srcPitch = pitch,
                          .srcHeight = 2,
                          .dstMemoryType = CU_MEMORYTYPE_UNIFIED,
                          .dstDevice = (CUdeviceptr)(uintptr_t)back,
                          .dstPitch = 10,
                          .dstHeight = 2,
                          .WidthInBytes = 10,
                          .Height = 2,
                          .Depth = 2};
    memset(back, 0, sizeof back);
    OK(cuMemcpy3D(&down));
    cr_assert_arr_eq(back, host, sizeof host);
    up.Height = 5;
    FAILS(cuMemcpy2D(&up), CUDA_ERROR_INVALID_VALUE);
    up.Height = 2;
    up.dstMemoryType = CU_MEMORYTYPE_ARRAY; /* dstArray NULL: no array (test_texture.c copies to real ones) */
    FAILS(cuMemcpy2D(&up), CUDA_ERROR_INVALID_VALUE);
}

Test(memory, memsets)
{
    fc_setup();
    CUdeviceptr d;
    unsigned char b[64];
    unsigned short s[32];
    unsigned w[16];
    OK(cuMemAlloc(&d, 64));
    OK(cuMemsetD8(d, 0xAB, 64));
    OK(cuMemcpyDtoH(b, d, 64));
    for (int i = 0; i < 64; i++)
        cr_assert_eq(b[i], 0xAB);
    OK(cuMemsetD16Async(d, 0x1234, 32, NULL));
    OK(cuMemcpyDtoH(s, d, 64));
    for (int i = 0; i < 32; i++)
        cr_assert_eq(s[i], 0x1234);
    OK(cuMemsetD32(d, 0xDEADBEEF, 16));
    OK(cuMemcpyDtoH(w, d, 64));
    for (int i = 0; i < 16; i++)
        cr_assert_eq(w[i], 0xDEADBEEF);
    OK(cuMemsetD2D32(d, 32, 7, 2, 2)); /* 2 rows of 2 words, 32 bytes apart */
    OK(cuMemcpyDtoH(w, d, 64));
    cr_assert(w[0] == 7 && w[1] == 7 && w[2] == 0xDEADBEEF && w[8] == 7 && w[9] == 7 && w[10] == 0xDEADBEEF);
    OK(cuMemsetD2D8Async(d, 16, 1, 4, 4, NULL));
    OK(cuCtxSynchronize());
    FAILS(cuMemsetD32(d + 2, 0, 1), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemsetD8(d, 0, 65), CUDA_ERROR_INVALID_VALUE);
}

Test(memory, stream_ordered_free)
{
    fc_setup();
    CUstream s;
    CUdeviceptr d;
    OK(cuStreamCreate(&s, 0));
    OK(cuMemAllocAsync(&d, 256, s));
    OK(cuMemsetD8Async(d, 1, 256, s));
    OK(cuMemFreeAsync(d, s));
    OK(cuStreamSynchronize(s));
    FAILS(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemFreeAsync(d, s), CUDA_ERROR_INVALID_VALUE);
}

/* cuPointerGetAttribute on device memory: cuFFT asks for BUFFER_ID, unique
   in the process even where an address is handed out again. */
static unsigned long long buffer_id(CUdeviceptr p)
{
    unsigned long long id = 0;
    OK(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p));
    return id;
}

Test(memory, pointer_attributes_of_device_memory)
{
    CUcontext ctx = fc_setup();
    CUdeviceptr a, b;
    OK(cuMemAlloc(&a, 1000));
    OK(cuMemAlloc(&b, 1000));
    unsigned long long ida = buffer_id(a), idb = buffer_id(b);
    cr_assert(ida != 0 && idb != 0 && ida != idb);
    cr_assert_eq(buffer_id(a + 999), ida, "an interior address names its allocation");
    OK(cuMemFree(a));
    CUdeviceptr again;
    OK(cuMemAlloc(&again, 1000));
    if (again == a)
        cr_assert_neq(buffer_id(again), ida, "IDs are not reused");

    CUcontext owner = NULL;
    unsigned type = 0;
    CUdeviceptr start = 0, dev = 0;
    size_t size = 0;
    int ordinal = -1;
    unsigned managed = 1;
    OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, b + 8));
    OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, b + 8));
    OK(cuPointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, b + 8));
    OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, b + 8));
    OK(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, b + 8));
    OK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, b + 8));
    OK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, b + 8));
    cr_assert_eq(owner, ctx);
    cr_assert_eq(type, CU_MEMORYTYPE_DEVICE);
    cr_assert_eq(dev, b + 8);
    cr_assert_eq(start, b);
    cr_assert_eq(size, 1000);
    cr_assert_eq(ordinal, 0);
    cr_assert_eq(managed, 0);

    int host = 0;
    unsigned long long id;
    FAILS(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, (CUdeviceptr)(uintptr_t)&host),
          CUDA_ERROR_INVALID_VALUE);
    FAILS(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, a), CUDA_ERROR_INVALID_VALUE); /* freed */
    CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens;
    FAILS(cuPointerGetAttribute(&tokens, CU_POINTER_ATTRIBUTE_P2P_TOKENS, b), CUDA_ERROR_NOT_SUPPORTED);
    FAILS(cuPointerGetAttribute(NULL, CU_POINTER_ATTRIBUTE_BUFFER_ID, b), CUDA_ERROR_INVALID_VALUE);
}

/*
 * test_mempool.c: stream-ordered memory pools (streamOrderedAllocation):
 * the default pool, the device's current pool, created pools and their
 * attributes, allocations from a pool.
 */
#include "fc_test.h"

static CUmemPoolProps device_props(void)
{
    CUmemPoolProps p = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                        .handleTypes = CU_MEM_HANDLE_TYPE_NONE,
                        .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    return p;
}

Test(mempool, default_pool_is_current_and_stays)
{
    CUmemoryPool def, again, cur;
    fc_setup();
    OK(cuDeviceGetDefaultMemPool(&def, 0));
    cr_assert_not_null(def);
    OK(cuDeviceGetDefaultMemPool(&again, 0));
    cr_assert_eq(def, again);
    OK(cuDeviceGetMemPool(&cur, 0));
    cr_assert_eq(cur, def);
    FAILS(cuMemPoolDestroy(def), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuDeviceGetDefaultMemPool(&def, 1), CUDA_ERROR_INVALID_DEVICE);
    FAILS(cuDeviceGetDefaultMemPool(NULL, 0), CUDA_ERROR_INVALID_VALUE);
}

Test(mempool, release_threshold_and_reuse_are_kept)
{
    CUmemoryPool pool;
    cuuint64_t t = 0;
    int reuse = -1;
    fc_setup();
    OK(cuDeviceGetDefaultMemPool(&pool, 0));
    OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &t));
    cr_assert_eq(t, 0);
    t = UINT64_MAX;
    OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &t));
    t = 0;
    OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &t));
    cr_assert_eq(t, UINT64_MAX);
    OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse));
    cr_assert_eq(reuse, 1);
    reuse = 0;
    OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse));
    reuse = -1;
    OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse));
    cr_assert_eq(reuse, 0);
    FAILS(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &t), CUDA_ERROR_NOT_SUPPORTED);
    FAILS(cuMemPoolGetAttribute(pool, (CUmemPool_attribute)99, &t), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemPoolTrimTo(pool, 0));
}

Test(mempool, created_pool_allocates_and_can_be_current)
{
    CUmemoryPool pool, cur, def;
    CUstream s;
    CUmemPoolProps props = device_props();
    fc_setup();
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    OK(cuMemPoolCreate(&pool, &props));
    OK(cuDeviceSetMemPool(0, pool));
    OK(cuDeviceGetMemPool(&cur, 0));
    cr_assert_eq(cur, pool);

    CUdeviceptr p;
    unsigned in[64], out[64];
    for (unsigned i = 0; i < 64; i++)
        in[i] = i * 7u;
    OK(cuMemAllocFromPoolAsync(&p, sizeof in, pool, s));
    OK(cuMemcpyHtoDAsync(p, in, sizeof in, s));
    OK(cuMemcpyDtoHAsync(out, p, sizeof out, s));
    OK(cuMemFreeAsync(p, s));
    OK(cuStreamSynchronize(s));
    cr_assert_arr_eq(in, out, sizeof in);

    OK(cuMemPoolDestroy(pool)); /* the default becomes current again */
    OK(cuDeviceGetMemPool(&cur, 0));
    OK(cuDeviceGetDefaultMemPool(&def, 0));
    cr_assert_eq(cur, def);
    FAILS(cuMemAllocFromPoolAsync(&p, 64, pool, s), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuDeviceSetMemPool(0, pool), CUDA_ERROR_INVALID_VALUE);
}

Test(mempool, creation_refuses_what_cannot_be_placed)
{
    CUmemoryPool pool;
    CUmemPoolProps props = device_props();
    fc_setup();
    FAILS(cuMemPoolCreate(&pool, NULL), CUDA_ERROR_INVALID_VALUE);
    props.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
    FAILS(cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_VALUE);
    props = device_props();
    props.location.id = 2;
    FAILS(cuMemPoolCreate(&pool, &props), CUDA_ERROR_INVALID_DEVICE);
    props = device_props();
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    FAILS(cuMemPoolCreate(&pool, &props), CUDA_ERROR_NOT_SUPPORTED);
}

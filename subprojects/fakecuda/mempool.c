/*
 * mempool.c: stream-ordered memory pools (streamOrderedAllocation): the
 * device's default pool, created pools, the device's current pool, pool
 * attributes and trimming.
 *
 * A pool holds no memory of its own: fakecuda allocates at once for a
 * stream-ordered allocation (memory.c, a legal schedule) and frees at the
 * free, so a pool is its properties and its attributes, and trimming has
 * nothing to release. Allocations from any pool are plain device
 * allocations, as the program and a tool below it see them.
 * Invariants: the default pool exists from the first ask and is never
 * destroyed; the current pool is always a live pool (destroying it makes
 * the default current again); pools belong to no context. All of it under
 * pool_lock.
 */
#include "fakecuda.h"

#include <assert.h>

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static CUmemoryPool default_pool, current_pool;

static void fc_pool_init(CUmemoryPool p, const CUmemPoolProps *props)
{
    p->props = *props;
    p->release_threshold = 0;
    for (int i = 0; i < 3; i++)
        p->reuse[i] = 1;
}

/* The default pool, made on first use; NULL when no slot is left. */
static CUmemoryPool fc_default_pool_locked(void)
{
    if (!default_pool) {
        CUmemPoolProps props = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
        default_pool = fc_obj_new(FC_P_MEMPOOL, FC_K_MEMPOOL, NULL);
        if (default_pool)
            fc_pool_init(default_pool, &props);
        current_pool = default_pool;
    }
    assert((!current_pool || fc_obj_valid(current_pool, FC_K_MEMPOOL)) && "the current pool is a live pool");
    return default_pool;
}

CUresult fc_pool_get_default(CUmemoryPool *pool, CUdevice d, bool current)
{
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_device_check(d) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&pool_lock);
    CUmemoryPool p = fc_default_pool_locked();
    if (current)
        p = current_pool;
    pthread_mutex_unlock(&pool_lock);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pool = p;
    return CUDA_SUCCESS;
}

CUresult fc_pool_set_current(CUdevice d, CUmemoryPool pool)
{
    if (fc_device_check(d) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!fc_obj_valid(pool, FC_K_MEMPOOL))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&pool_lock);
    fc_default_pool_locked();
    current_pool = pool;
    pthread_mutex_unlock(&pool_lock);
    return CUDA_SUCCESS;
}

/* A pinned pool of device 0's memory, with no shareable handle: what fakecuda can place. */
CUresult fc_pool_create(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    if (!pool || !props || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (fc_device_check(props->location.id) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE)
        return CUDA_ERROR_NOT_SUPPORTED;
    CUmemoryPool p = fc_obj_new(FC_P_MEMPOOL, FC_K_MEMPOOL, NULL);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_pool_init(p, props);
    *pool = p;
    return CUDA_SUCCESS;
}

CUresult fc_pool_destroy(CUmemoryPool pool)
{
    pthread_mutex_lock(&pool_lock);
    CUresult r = CUDA_SUCCESS;
    if (!fc_obj_valid(pool, FC_K_MEMPOOL) || pool == fc_default_pool_locked()) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        if (current_pool == pool)
            current_pool = default_pool;
        fc_obj_free(pool);
    }
    pthread_mutex_unlock(&pool_lock);
    return r;
}

CUresult fc_pool_check(CUmemoryPool pool)
{
    return fc_obj_valid(pool, FC_K_MEMPOOL) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Nothing is held back in a pool, so there is never anything to trim. */
CUresult fc_pool_trim(CUmemoryPool pool, size_t keep)
{
    (void)keep;
    return fc_pool_check(pool);
}

/* The counters of reserved and used memory are not kept: they answer
   CUDA_ERROR_NOT_SUPPORTED rather than a number that is not true. */
CUresult fc_pool_attribute(CUmemoryPool pool, CUmemPool_attribute a, void *v, bool set)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&pool_lock);
    CUresult r = fc_pool_check(pool);
    if (r == CUDA_SUCCESS) {
        switch (a) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: {
            int *reuse = &pool->reuse[a - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
            if (set)
                *reuse = *(const int *)v != 0;
            else
                *(int *)v = *reuse;
            break;
        }
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
            if (set)
                pool->release_threshold = *(const cuuint64_t *)v;
            else
                *(cuuint64_t *)v = pool->release_threshold;
            break;
        default:
            r = a >= CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT && a <= CU_MEMPOOL_ATTR_USED_MEM_HIGH
                    ? CUDA_ERROR_NOT_SUPPORTED
                    : CUDA_ERROR_INVALID_VALUE;
        }
    }
    pthread_mutex_unlock(&pool_lock);
    return r;
}

/* An allocation from a pool is an allocation of device memory (memory.c). */
CUresult fc_pool_alloc_async(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s)
{
    CUresult r = fc_pool_check(pool);
    return r == CUDA_SUCCESS ? fc_mem_alloc_async(dptr, bytes, s) : r;
}

/*
 * handles.c: fixed pools of handle objects (contexts, streams, events,
 * modules and libraries, functions and kernels, physical memory handles,
 * graphs, graph nodes, executable graphs, link states, memory pools,
 * arrays and texture objects).
 *
 * A handle is the address of a pool slot, so checking one never
 * dereferences a foreign pointer: it must fall inside the pool, on a slot
 * boundary, and the slot's kind must be the one expected.
 * Invariants: a slot's kind is FC_K_FREE exactly while it is on the free
 * list; slots are zeroed when handed out; pool memory is never returned to
 * the system, so a stale handle reads a free (or reused) slot, never
 * unmapped memory; a slot's owner is read under its pool's lock, as it is
 * written (another thread's create may be handing the slot out again).
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct fc_pool {
    size_t elem, cap;
    pthread_mutex_t lock;
    unsigned char *slots;
    size_t *free_list; /* stack of free slot indexes */
    size_t nfree;
} fc_pool;

#define FC_POOL(type, n)                                            \
    {                                                               \
        sizeof(type), (n), PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0 \
    }

static fc_pool pools[FC_P_COUNT] = {
    [FC_P_CTX] = FC_POOL(struct CUctx_st, 64),
    [FC_P_STREAM] = FC_POOL(struct CUstream_st, 4096),
    [FC_P_EVENT] = FC_POOL(struct CUevent_st, 65536),
    [FC_P_MODULE] = FC_POOL(struct CUmod_st, 4096),
    [FC_P_FUNC] = FC_POOL(struct CUfunc_st, 65536),
    [FC_P_MEMHANDLE] = FC_POOL(struct fc_memhandle, 65536),
    [FC_P_GRAPH] = FC_POOL(struct CUgraph_st, 4096),
    [FC_P_GNODE] = FC_POOL(struct CUgraphNode_st, 65536),
    [FC_P_GEXEC] = FC_POOL(struct CUgraphExec_st, 4096),
    [FC_P_LINK] = FC_POOL(struct CUlinkState_st, 1024),
    [FC_P_MEMPOOL] = FC_POOL(struct CUmemPoolHandle_st, 256),
    [FC_P_ARRAY] = FC_POOL(struct CUarray_st, 4096),
    [FC_P_TEXOBJ] = FC_POOL(struct CUtexobj_st, 4096),
};
static pthread_once_t pools_once = PTHREAD_ONCE_INIT;

/* calloc'd slots cost no memory until used; a pool that cannot be set up stays empty. */
static void fc_pools_setup(void)
{
    for (int i = 0; i < FC_P_COUNT; i++) {
        fc_pool *p = &pools[i];
        p->slots = calloc(p->cap, p->elem);
        p->free_list = malloc(p->cap * sizeof *p->free_list);
        if (!p->slots || !p->free_list) {
            free(p->slots);
            free(p->free_list);
            p->slots = NULL;
            p->free_list = NULL;
            continue;
        }
        for (size_t k = 0; k < p->cap; k++)
            p->free_list[k] = p->cap - 1 - k;
        p->nfree = p->cap;
    }
}

void *fc_obj_new(fc_pool_id id, fc_kind kind, CUcontext owner)
{
    fc_pool *p = &pools[id];
    pthread_once(&pools_once, fc_pools_setup);
    pthread_mutex_lock(&p->lock);
    fc_obj *o = NULL;
    if (p->nfree > 0) {
        size_t slot = p->free_list[--p->nfree];
        assert(slot < p->cap && "the free list holds slot indexes of its own pool");
        o = (fc_obj *)(p->slots + slot * p->elem);
        memset(o, 0, p->elem);
        o->ctx = owner;
        atomic_store(&o->kind, kind);
    }
    pthread_mutex_unlock(&p->lock);
    return o;
}

static fc_pool *fc_pool_of(const void *h)
{
    for (int i = 0; i < FC_P_COUNT; i++) {
        const unsigned char *b = pools[i].slots;
        if (b && (const unsigned char *)h >= b && (const unsigned char *)h < b + pools[i].cap * pools[i].elem)
            return &pools[i];
    }
    return NULL;
}

bool fc_obj_valid(const void *h, fc_kind kind)
{
    pthread_once(&pools_once, fc_pools_setup);
    fc_pool *p = h ? fc_pool_of(h) : NULL;
    if (!p || ((const unsigned char *)h - p->slots) % p->elem != 0)
        return false;
    return atomic_load(&((fc_obj *)(uintptr_t)h)->kind) == (int)kind;
}

void fc_obj_free(void *h)
{
    fc_pool *p = fc_pool_of(h);
    assert(p && ((unsigned char *)h - p->slots) % p->elem == 0 && "only a handle checked valid is freed: a slot");
    pthread_mutex_lock(&p->lock);
    atomic_store(&((fc_obj *)h)->kind, FC_K_FREE);
    p->free_list[p->nfree++] = (size_t)((unsigned char *)h - p->slots) / p->elem;
    pthread_mutex_unlock(&p->lock);
}

/* Release (then free) every live object of the pool owned by `owner`. */
void fc_obj_free_owned(fc_pool_id id, CUcontext owner, void (*release)(void *))
{
    fc_pool *p = &pools[id];
    pthread_once(&pools_once, fc_pools_setup);
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; p->slots && i < p->cap; i++) {
        fc_obj *o = (fc_obj *)(p->slots + i * p->elem);
        if (atomic_load(&o->kind) == FC_K_FREE || o->ctx != owner)
            continue;
        pthread_mutex_unlock(&p->lock); /* release may free objects of this pool */
        if (release)
            release(o);
        fc_obj_free(o);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
}

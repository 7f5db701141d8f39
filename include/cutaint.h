/*
 * cutaint.h - tell cutaint where the tensors of a pool lie.
 *
 * A caching allocator (PyTorch's, TensorFlow's BFC, RMM's pools) carves
 * many tensors out of one driver allocation, and to cutaint a failed
 * kernel's pointer covers the rest of that allocation.  A region says
 * where one tensor ends:
 *
 *     CUTAINT_REGION_ALLOC(ptr, bytes);  // the block is handed to a tensor
 *     CUTAINT_REGION_FREE(ptr);          // the block goes back to the pool
 *
 * A kernel pointer into a region then covers the rest of the region only;
 * a region allocated anew starts clean; a freed region's bytes are the
 * allocation's again.  Misuse (overlapping regions, a free of an unknown
 * base, a region outside every allocation) is said in one line and
 * changes nothing.
 *
 * Without libcutaint.so the calls cost one cached load: each resolves the
 * shim's entry point once with dlsym(RTLD_DEFAULT) and keeps the answer.
 * No link dependency (dlsym is libc's since glibc 2.34; link -ldl before
 * that).  Weak references would not do: a non-PIE or static executable
 * binds them to 0 before any preload is seen.  Thread-safe: the cache is
 * written with atomics, and two threads racing both find the same answer.
 */
#ifndef CUTAINT_H
#define CUTAINT_H

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#define CUTAINT_REGION_DONE 0    /* recorded */
#define CUTAINT_REGION_REFUSED 1 /* misuse, said in one line; nothing changed */
#define CUTAINT_REGION_NO_SHIM 2 /* libcutaint.so is not loaded */

/* glibc's RTLD_DEFAULT, which <dlfcn.h> defines only under _GNU_SOURCE. */
#define CUTAINT__RTLD_DEFAULT ((void *)0)
#define CUTAINT__ABSENT ((void *)1)

static inline void *cutaint__entry(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(CUTAINT__RTLD_DEFAULT, name);
        if (!f)
            f = CUTAINT__ABSENT;
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f == CUTAINT__ABSENT ? NULL : f;
}

/* The entry point as a function pointer, copied rather than cast: ISO C
 * has no conversion from void * to a function pointer (-Wpedantic). */
static inline int cutaint_region_alloc(const void *base, size_t bytes)
{
    static void *cache;
    void *entry = cutaint__entry(&cache, "cutaint_shim_region_alloc");
    int (*f)(const void *, size_t);
    if (!entry)
        return CUTAINT_REGION_NO_SHIM;
    memcpy(&f, &entry, sizeof f);
    return f(base, bytes);
}

static inline int cutaint_region_free(const void *base)
{
    static void *cache;
    void *entry = cutaint__entry(&cache, "cutaint_shim_region_free");
    int (*f)(const void *);
    if (!entry)
        return CUTAINT_REGION_NO_SHIM;
    memcpy(&f, &entry, sizeof f);
    return f(base);
}

#define CUTAINT_REGION_ALLOC(base, bytes) cutaint_region_alloc((const void *)(base), (size_t)(bytes))
#define CUTAINT_REGION_FREE(base) cutaint_region_free((const void *)(base))

#endif

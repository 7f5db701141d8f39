/*
 * vmm.c: virtual memory management: address reservations, physical memory
 * handles (cuMemCreate), mappings of one into the other, and their access.
 *
 * A reservation is a range of device addresses with no memory behind it: an
 * entry of memory.c's table (so no allocation lands in it, and touching it
 * faults like any bad device address), plus, here, a host "shadow" range of
 * the same size, PROT_NONE until something is mapped. A handle is physical
 * memory: a range of memory.c's physical memory file, charged to the device
 * like an allocation. cuMemMap maps that file range into the shadow at the
 * mapping's offset, so adjacent mappings of different handles make one
 * contiguous host view, and kernels and copies reach the bytes through
 * memory.c's lookup, which asks fc_vmm_view_locked.
 *
 * Invariants (all state changes under memory.c's write lock; lookups under
 * its read lock):
 * - A reservation's mappings are sorted by offset and never overlap; each
 *   lies inside its reservation and inside its handle's memory.
 * - A mapping starts with no access (CU_MEM_ACCESS_FLAGS_PROT_NONE), as on
 *   the real driver: kernels and copies reach it only after cuMemSetAccess.
 * - A handle's memory lives while refs + maps > 0; released and unmapped, it
 *   is freed and its slot returned. A released handle still mapped cannot be
 *   mapped again (refs == 0) until cuMemRetainAllocationHandle revives it.
 * - Unmap and set-access are synchronous (as documented): the current
 *   context's queued work runs first, against the mappings it was queued with.
 * - Shareable handles (export, import, IPC) are not emulated: no handle type
 *   can be requested, and those entry points stay NOT_SUPPORTED stubs.
 * - The granularity is fixed for the process's life, read once:
 *   FAKECUDA_VMM_GRANULARITY, a power of two from the page size up (tests
 *   that model memory byte by byte ask for a small one), else 2 MiB.
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct fc_vmap {
    size_t off, size; /* in the reservation */
    struct fc_memhandle *h;
    size_t h_off;              /* in the handle's memory */
    unsigned long long access; /* CUmemAccess_flags of the one device */
} fc_vmap;

struct fc_vres {
    unsigned char *shadow; /* host view of the whole reservation */
    size_t size;
    fc_vmap *map;
    size_t n, cap;
};

size_t fc_vmm_granule(void)
{
    static atomic_size_t granule;
    size_t g = atomic_load_explicit(&granule, memory_order_relaxed);
    if (g)
        return g;
    g = (size_t)2 << 20;
    const char *env = getenv("FAKECUDA_VMM_GRANULARITY");
    size_t asked = env ? fc_parse_size(env) : 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (asked >= page && (asked & (asked - 1)) == 0)
        g = asked;
    else if (env)
        fprintf(stderr,
                "fakecuda: FAKECUDA_VMM_GRANULARITY=\"%s\" ignored: expected a power of two of at least %zu "
                "bytes (suffix K, M or G allowed); using 2M\n",
                env, page);
    assert(g >= page && (g & (g - 1)) == 0 && "the granularity is a power of two from the page size up");
    size_t none = 0;
    atomic_compare_exchange_strong(&granule, &none, g);
    return atomic_load(&granule);
}

static bool fc_granular(size_t v)
{
    return v % FC_VMM_GRANULARITY == 0;
}

/* The handle, if h names a live one; under the memory lock, as handles die under it. */
static struct fc_memhandle *fc_handle_locked(CUmemGenericAllocationHandle h)
{
    void *p = (void *)(uintptr_t)h;
    return fc_obj_valid(p, FC_K_MEMHANDLE) ? p : NULL;
}

/* The one device is the only location; host memory through VMM is not emulated. */
static CUresult fc_device_location(const CUmemLocation *l)
{
    if (l->type == CU_MEM_LOCATION_TYPE_HOST || l->type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
        l->type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (l->type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_device_check(l->id);
}

static CUresult fc_check_prop(const CUmemAllocationProp *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->type == CU_MEM_ALLOCATION_TYPE_MANAGED)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (p->type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_device_location(&p->location);
    if (r != CUDA_SUCCESS)
        return r;
    return p->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
}

CUresult fc_vmm_granularity(size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags option)
{
    if (!g || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_check_prop(prop);
    if (r == CUDA_SUCCESS)
        *g = FC_VMM_GRANULARITY;
    return r;
}

/* ---- the mappings of one reservation ------------------------------------ */

/* Index of the first mapping that starts after off. */
static size_t fc_upper(const fc_vres *r, size_t off)
{
    return FC_UPPER_BOUND(r->map, r->n, off, off);
}

static fc_vmap *fc_mapping_containing(const fc_vres *r, size_t off)
{
    size_t i = fc_upper(r, off);
    return i > 0 && off - r->map[i - 1].off < r->map[i - 1].size ? &r->map[i - 1] : NULL;
}

static fc_vmap *fc_mapping_at_locked(CUdeviceptr p)
{
    CUdeviceptr base;
    fc_vres *r = fc_mem_vres_locked(p, &base);
    return r ? fc_mapping_containing(r, p - base) : NULL;
}

/* The mappings [*first, *last) that exactly tile [off, off + size): whole mappings only. */
static bool fc_tiles(const fc_vres *r, size_t off, size_t size, size_t *first, size_t *last)
{
    size_t i = fc_upper(r, off);
    if (i == 0 || r->map[i - 1].off != off)
        return false;
    size_t j = i - 1, end = off;
    while (j < r->n && r->map[j].off == end && end - off < size)
        end += r->map[j++].size;
    *first = i - 1;
    *last = j;
    return end - off == size;
}

/* The reservation whose whole mappings [*first, *last) are [ptr, ptr + size), or NULL. */
static fc_vres *fc_whole_mappings_locked(CUdeviceptr ptr, size_t size, size_t *first, size_t *last)
{
    CUdeviceptr base;
    fc_vres *r = fc_mem_vres_locked(ptr, &base);
    if (!r || size == 0 || size > r->size - (ptr - base))
        return NULL;
    return fc_tiles(r, ptr - base, size, first, last) ? r : NULL;
}

/* Host view of [off, off + bytes): accessible mappings must cover it without a gap. */
void *fc_vmm_view_locked(const fc_vres *r, size_t off, size_t bytes)
{
    size_t i = fc_upper(r, off), cur = off, end = off + (bytes ? bytes : 1);
    if (i == 0)
        return NULL;
    for (i--; i < r->n && r->map[i].off <= cur && r->map[i].access != CU_MEM_ACCESS_FLAGS_PROT_NONE; i++) {
        cur = r->map[i].off + r->map[i].size;
        if (cur >= end)
            return r->shadow + off;
    }
    return NULL;
}

bool fc_vmm_range_locked(const fc_vres *r, size_t off, size_t *map_off, size_t *map_size)
{
    const fc_vmap *m = fc_mapping_containing(r, off);
    if (m) {
        *map_off = m->off;
        *map_size = m->size;
    }
    return m != NULL;
}

/* ---- reservations --------------------------------------------------------- */

static void fc_vres_destroy(fc_vres *r)
{
    munmap(r->shadow, r->size);
    free(r->map);
    free(r);
}

static fc_vres *fc_vres_new(size_t size)
{
    fc_vres *r = calloc(1, sizeof *r);
    void *shadow = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r && shadow != MAP_FAILED) {
        r->shadow = shadow;
        r->size = size;
        return r;
    }
    if (shadow != MAP_FAILED)
        munmap(shadow, size);
    free(r);
    return NULL;
}

CUresult fc_vmm_reserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr hint, unsigned long long flags)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (!ptr || size == 0 || size % page || hint % page || flags || (align & (align - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    fc_vres *r = fc_vres_new(size);
    if (!r)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* At least the granularity, so a mapping may start at the reservation's start. */
    size_t a = align > FC_VMM_GRANULARITY ? align : FC_VMM_GRANULARITY;
    fc_mem_wrlock();
    CUresult res = fc_mem_va_reserve_locked(ptr, size, a, hint, r);
    fc_mem_unlock();
    if (res != CUDA_SUCCESS)
        fc_vres_destroy(r);
    return res;
}

/* The exact reservation, once nothing is mapped in it. */
CUresult fc_vmm_free(CUdeviceptr ptr, size_t size)
{
    CUdeviceptr base = 0;
    fc_mem_wrlock();
    fc_vres *r = fc_mem_vres_locked(ptr, &base);
    bool ok = r && base == ptr && r->size == size && r->n == 0;
    if (ok)
        fc_mem_va_release_locked(base);
    fc_mem_unlock();
    if (ok)
        fc_vres_destroy(r);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- physical memory handles ---------------------------------------------- */

CUresult fc_vmm_create(CUmemGenericAllocationHandle *out, size_t size, const CUmemAllocationProp *prop,
                       unsigned long long flags)
{
    if (!out || flags || size == 0 || !fc_granular(size))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_check_prop(prop);
    if (r != CUDA_SUCCESS)
        return r;
    fc_action a = fc_faults_alloc();
    if (a.code != CUDA_SUCCESS)
        return a.code;
    struct fc_memhandle *h = fc_obj_new(FC_P_MEMHANDLE, FC_K_MEMHANDLE, NULL);
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_mem_wrlock();
    r = fc_mem_phys_alloc_locked(size, &h->off);
    if (r == CUDA_SUCCESS) {
        h->size = size;
        h->prop = *prop;
        h->prop.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_NONE; /* how a program learns it got none */
        h->refs = 1;
    } else {
        fc_obj_free(h);
    }
    fc_mem_unlock();
    if (r == CUDA_SUCCESS)
        *out = (CUmemGenericAllocationHandle)(uintptr_t)h;
    return r;
}

/* Frees the memory once it is neither referenced nor mapped. */
static void fc_handle_drop_locked(struct fc_memhandle *h)
{
    if (h->refs > 0 || h->maps > 0)
        return;
    fc_mem_phys_free_locked(h->off);
    fc_obj_free(h);
}

CUresult fc_vmm_release(CUmemGenericAllocationHandle hv)
{
    fc_mem_wrlock();
    struct fc_memhandle *h = fc_handle_locked(hv);
    bool ok = h && h->refs > 0;
    if (ok) {
        h->refs--;
        fc_handle_drop_locked(h);
    }
    fc_mem_unlock();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fc_vmm_properties(CUmemAllocationProp *prop, CUmemGenericAllocationHandle hv)
{
    if (!prop)
        return CUDA_ERROR_INVALID_VALUE;
    fc_mem_rdlock();
    struct fc_memhandle *h = fc_handle_locked(hv);
    if (h)
        *prop = h->prop;
    fc_mem_unlock();
    return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fc_vmm_retain(CUmemGenericAllocationHandle *out, void *addr)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    fc_mem_wrlock();
    fc_vmap *m = fc_mapping_at_locked((CUdeviceptr)(uintptr_t)addr);
    if (m) {
        m->h->refs++;
        *out = (CUmemGenericAllocationHandle)(uintptr_t)m->h;
    }
    fc_mem_unlock();
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- mapping, unmapping, access ------------------------------------------- */

static bool fc_vres_grow(fc_vres *r)
{
    size_t cap = r->cap ? 2 * r->cap : 8;
    fc_vmap *v = realloc(r->map, cap * sizeof *v);
    if (!v)
        return false;
    r->map = v;
    r->cap = cap;
    return true;
}

static CUresult fc_map_locked(CUdeviceptr ptr, size_t size, size_t offset, struct fc_memhandle *h)
{
    CUdeviceptr base = 0;
    fc_vres *r = fc_mem_vres_locked(ptr, &base);
    if (!h || h->refs == 0 || offset > h->size || size > h->size - offset)
        return CUDA_ERROR_INVALID_VALUE;
    size_t off = ptr - base;
    if (!r || size > r->size - off)
        return CUDA_ERROR_INVALID_VALUE;
    size_t i = fc_upper(r, off);
    if ((i > 0 && r->map[i - 1].off + r->map[i - 1].size > off) || (i < r->n && r->map[i].off < off + size))
        return CUDA_ERROR_INVALID_VALUE; /* part of it is mapped already */
    if (r->n == r->cap && !fc_vres_grow(r))
        return CUDA_ERROR_OUT_OF_MEMORY;
    void *p = mmap(r->shadow + off, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fc_mem_phys_fd_locked(),
                   (off_t)(h->off + offset));
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memmove(&r->map[i + 1], &r->map[i], (r->n - i) * sizeof *r->map);
    r->map[i] = (fc_vmap){off, size, h, offset, CU_MEM_ACCESS_FLAGS_PROT_NONE};
    r->n++;
    assert((i == 0 || r->map[i - 1].off + r->map[i - 1].size <= off) &&
           (i + 1 == r->n || off + size <= r->map[i + 1].off) && "mappings are sorted and never overlap");
    assert(off + size <= r->size && offset + size <= h->size &&
           "a mapping lies inside its reservation and its handle's memory");
    h->maps++;
    return CUDA_SUCCESS;
}

CUresult fc_vmm_map(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle hv,
                    unsigned long long flags)
{
    if (flags || size == 0 || !fc_granular(ptr) || !fc_granular(size) || !fc_granular(offset))
        return CUDA_ERROR_INVALID_VALUE;
    fc_mem_wrlock();
    CUresult r = fc_map_locked(ptr, size, offset, fc_handle_locked(hv));
    fc_mem_unlock();
    return r;
}

static void fc_unmap_locked(fc_vres *r, size_t first, size_t last)
{
    for (size_t i = first; i < last; i++) {
        fc_vmap *m = &r->map[i];
        mmap(r->shadow + m->off, m->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        assert(m->h->maps > 0 && "a mapped handle counts its mappings: it lives while maps > 0");
        m->h->maps--;
        fc_handle_drop_locked(m->h);
    }
    memmove(&r->map[first], &r->map[last], (r->n - last) * sizeof *r->map);
    r->n -= last - first;
}

/* Synchronous calls: the current context's queued work runs first. */
static CUresult fc_settle(void)
{
    CUcontext ctx;
    return fc_current(&ctx) == CUDA_SUCCESS ? fc_drain_all(ctx) : CUDA_SUCCESS;
}

CUresult fc_vmm_unmap(CUdeviceptr ptr, size_t size)
{
    CUresult r = fc_settle();
    if (r != CUDA_SUCCESS)
        return r;
    size_t first = 0, last = 0;
    fc_mem_wrlock();
    fc_vres *v = fc_whole_mappings_locked(ptr, size, &first, &last);
    if (v)
        fc_unmap_locked(v, first, last);
    fc_mem_unlock();
    return v ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static bool fc_access_flags_ok(unsigned long long f)
{
    return f == CU_MEM_ACCESS_FLAGS_PROT_NONE || f == CU_MEM_ACCESS_FLAGS_PROT_READ ||
           f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

CUresult fc_vmm_set_access(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    if (!desc || count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        CUresult r = fc_device_location(&desc[i].location);
        if (r != CUDA_SUCCESS)
            return r;
        if (!fc_access_flags_ok(desc[i].flags))
            return CUDA_ERROR_INVALID_VALUE;
    }
    CUresult r = fc_settle();
    if (r != CUDA_SUCCESS)
        return r;
    size_t first = 0, last = 0;
    fc_mem_wrlock();
    fc_vres *v = fc_whole_mappings_locked(ptr, size, &first, &last);
    for (size_t i = first; v && i < last; i++)
        v->map[i].access = desc[count - 1].flags; /* one device: its last descriptor wins */
    fc_mem_unlock();
    return v ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fc_vmm_get_access(unsigned long long *flags, const CUmemLocation *loc, CUdeviceptr ptr)
{
    if (!flags || !loc)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_device_location(loc);
    if (r != CUDA_SUCCESS)
        return r;
    fc_mem_rdlock();
    const fc_vmap *m = fc_mapping_at_locked(ptr);
    if (m)
        *flags = m->access;
    fc_mem_unlock();
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

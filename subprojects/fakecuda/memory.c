/*
 * memory.c: emulated device memory, the pinned host blocks of
 * cuMemAllocHost / cuMemHostAlloc, and host ranges registered with
 * cuMemHostRegister.
 *
 * Device addresses come from a large PROT_NONE reservation (the arena), so a
 * program that dereferences one gets SIGSEGV, as on a GPU. Each allocation's
 * bytes live in a separate host buffer found through a table sorted by
 * address; managed allocations instead map their arena pages read-write, so
 * the host may touch them as it may touch real managed memory.
 * Legacy (32-bit) entry points allocate from a second, small arena below
 * 4 GiB so their addresses fit a CUdeviceptr_v1.
 * Virtual memory management (vmm.c) takes two things from here: address
 * reservations, entries of the same table (kind FC_MEM_RESERVED) whose
 * bytes vmm.c resolves through its mappings, and physical memory, ranges of
 * one sparse memfd placed like allocations in an arena of file offsets.
 *
 * Pinned blocks and registered ranges are mapped for the device at their
 * host address, as on a unified-addressing system (the device reports
 * CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING and
 * CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM): kernels and copies reach them
 * through fc_mem_view_locked like device memory, yet they are host memory
 * (fc_mem_is_device says no), so the program uses them directly.
 *
 * Invariants:
 * - Live allocations never overlap; a freed entry stays as a tombstone
 *   (live == false) until compaction, and in the device and physical
 *   tables (whose addresses come from arenas) no live entry overlaps a
 *   tombstone, so a binary search for the last base <= address finds the
 *   only allocation that can contain it.  The pinned host table's
 *   addresses come from the C heap, which may hand out a freed block's
 *   bytes again: it is compacted at every free, so it holds no tombstone
 *   and its live blocks (heap blocks) never overlap. The registration
 *   table is compacted at every unregistration too, and a registration
 *   overlapping a pinned block or another registration is refused, so an
 *   interior address finds its block or range by the same search.
 * - Fresh device memory up to FC_STALE_MAX holds FC_STALE bytes, never
 *   zeros: it is what a GPU shows in memory nobody wrote.
 * - used <= total; both count bytes rounded up to the allocation alignment,
 *   plus the physical memory of cuMemCreate; a reservation costs nothing.
 * - span is the address space an entry occupies: placement never overlaps
 *   two spans of one table.
 * - Everything here runs under mem.lock: readers (lookups, running work)
 *   share it, allocation and free take it exclusively.
 */
#include "fakecuda.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FC_GIB ((size_t)1 << 30)
#define FC_ARENA_MIN (64 * FC_GIB)
#define FC_LOW_ARENA ((size_t)256 << 20)
#define FC_PITCH_ALIGN 512u

typedef struct fc_range {
    uintptr_t base;
    size_t size;         /* as requested: bounds checks are exact */
    size_t charged;      /* counted against the device size */
    size_t span;         /* address space it occupies */
    unsigned char *host; /* where the bytes live; NULL for a reservation */
    fc_vres *vres;       /* a reservation's mappings (vmm.c) */
    CUcontext ctx;
    fc_mem_kind kind;
    unsigned flags; /* pinned blocks and registrations: the caller's flags */
    bool live;
    unsigned long long id; /* CU_POINTER_ATTRIBUTE_BUFFER_ID: unique in the process, never 0 */
} fc_range;

typedef struct fc_table {
    fc_range *v;
    size_t n, cap, dead;
} fc_table;

typedef struct fc_arena {
    uintptr_t base, end, bump;
} fc_arena;

/* The physical memory file of cuMemCreate: offsets from FC_PHYS_BASE (never 0). */
typedef struct fc_phys {
    int fd; /* -1 until the first cuMemCreate */
    fc_arena arena;
    fc_table tbl;
} fc_phys;

#define FC_PHYS_BASE FC_VMM_GRANULARITY

static struct {
    pthread_rwlock_t lock;
    fc_table dev, host, reg;
    fc_arena main, low;
    fc_phys phys;
    size_t used, total;
} mem = {.phys.fd = -1};

static pthread_once_t mem_once = PTHREAD_ONCE_INIT;

static size_t fc_round(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

/* ---- the sorted table ------------------------------------------------- */

static size_t tbl_upper(const fc_table *t, uintptr_t a)
{
    return FC_UPPER_BOUND(t->v, t->n, base, a);
}

static fc_range *tbl_find(const fc_table *t, uintptr_t a)
{
    size_t i = tbl_upper(t, a);
    if (i == 0)
        return NULL;
    fc_range *e = &t->v[i - 1];
    return e->live && a - e->base < e->size ? e : NULL;
}

static bool tbl_insert(fc_table *t, const fc_range *r)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        fc_range *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return false;
        t->v = v;
        t->cap = cap;
    }
    size_t i = tbl_upper(t, r->base);
    assert((i == 0 || t->v[i - 1].base + t->v[i - 1].span <= r->base) &&
           (i == t->n || r->base + r->span <= t->v[i].base) && "placement never overlaps two spans of one table");
    static _Atomic unsigned long long last_id;
    memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof *t->v);
    t->v[i] = *r;
    t->v[i].id = atomic_fetch_add(&last_id, 1) + 1;
    t->n++;
    return true;
}

static void tbl_compact(fc_table *t)
{
    size_t out = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].live)
            t->v[out++] = t->v[i];
    t->n = out;
    t->dead = 0;
}

static void tbl_remove(fc_table *t, fc_range *e)
{
    e->live = false;
    if (++t->dead > 64 && 2 * t->dead > t->n)
        tbl_compact(t);
}

/* ---- the address arenas ----------------------------------------------- */

static bool arena_reserve(fc_arena *a, size_t size, int extra_flags)
{
    void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | extra_flags, -1, 0);
    if (p == MAP_FAILED)
        return false;
    a->base = a->bump = (uintptr_t)p;
    a->end = a->base + size;
    return true;
}

/* First fit between the live entries of table t in the arena (after compaction). */
static uintptr_t arena_gap(const fc_arena *a, fc_table *t, size_t size, size_t align)
{
    tbl_compact(t);
    uintptr_t cur = a->base;
    for (size_t i = 0; i < t->n; i++) {
        const fc_range *e = &t->v[i];
        if (e->base < a->base || e->base >= a->end)
            continue;
        if (fc_round(cur, align) + size <= e->base)
            return fc_round(cur, align);
        cur = e->base + e->span;
    }
    uintptr_t p = fc_round(cur, align);
    return p <= a->end && size <= a->end - p ? p : 0;
}

static void arena_taken(fc_arena *a, uintptr_t p, size_t size)
{
    if (p != 0 && p + size > a->bump)
        a->bump = p + size;
}

static uintptr_t arena_place(fc_arena *a, fc_table *t, size_t size, size_t align)
{
    uintptr_t p = fc_round(a->bump, align);
    if (a->end == 0 || p > a->end || size > a->end - p)
        p = arena_gap(a, t, size, align);
    arena_taken(a, p, size);
    return p;
}

/* Whether [p, p + size) lies in the arena, aligned, clear of every entry of t. */
static bool arena_free_at(const fc_arena *a, fc_table *t, uintptr_t p, size_t size, size_t align)
{
    if (p % align != 0 || p < a->base || p >= a->end || size > a->end - p)
        return false;
    tbl_compact(t);
    size_t i = tbl_upper(t, p + size - 1);
    return i == 0 || t->v[i - 1].base + t->v[i - 1].span <= p;
}

/* ---- set-up -------------------------------------------------------------- */

size_t fc_parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end && !end[1])
        shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 64;
    else if (*end)
        shift = 64;
    if (errno || end == s || *s == '-' || v == 0 || shift == 64 || v > (SIZE_MAX >> (shift + 4)))
        return 0;
    return (size_t)v << shift;
}

static void fc_mem_setup(void)
{
    pthread_rwlockattr_t at;
    pthread_rwlockattr_init(&at);
    pthread_rwlockattr_setkind_np(&at, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&mem.lock, &at);
    pthread_rwlockattr_destroy(&at);

    size_t total = FC_GIB;
    const char *env = getenv("FAKECUDA_DEVICE_MEMORY");
    if (env && !(total = fc_parse_size(env))) {
        fprintf(stderr,
                "fakecuda: FAKECUDA_DEVICE_MEMORY=\"%s\" ignored: expected a byte count (suffix K, M or G allowed); "
                "using 1G\n",
                env);
        total = FC_GIB;
    }
    size_t arena = 4 * total > FC_ARENA_MIN ? 4 * total : FC_ARENA_MIN;
    /* A constrained address space (valgrind's, a ulimit -v) gets a smaller
     * arena, down to the device size itself. */
    while (!arena_reserve(&mem.main, arena, 0)) {
        if (arena / 2 < total)
            return;
        arena /= 2;
    }
#ifdef MAP_32BIT
    arena_reserve(&mem.low, FC_LOW_ARENA, MAP_32BIT);
#endif
    mem.total = total;
}

size_t fc_mem_total(void)
{
    pthread_once(&mem_once, fc_mem_setup);
    return mem.total;
}

/* ---- allocation ---------------------------------------------------------- */

static unsigned char *fc_backing(size_t size)
{
    if (size > FC_STALE_MAX) {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    unsigned char *b = malloc(size);
    if (b)
        memset(b, FC_STALE, size);
    return b;
}

static void fc_unback(const fc_range *e)
{
    if (e->kind == FC_MEM_MANAGED)
        mmap(e->host, e->charged, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    else if (e->size > FC_STALE_MAX)
        munmap(e->host, e->size);
    else
        free(e->host);
}

/* Under the write lock: choose the address, map managed pages, record it. */
static CUresult fc_place_locked(fc_range *r)
{
    fc_arena *a = r->kind == FC_MEM_LOW32 ? &mem.low : &mem.main;
    size_t align = r->kind == FC_MEM_MANAGED ? (size_t)sysconf(_SC_PAGESIZE) : FC_ALIGN;
    r->charged = r->span = fc_round(r->size, align);
    if (r->charged < r->size || r->charged > mem.total - mem.used)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r->base = arena_place(a, &mem.dev, r->charged, align);
    if (!r->base)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (r->kind == FC_MEM_MANAGED) {
        void *p =
            mmap((void *)r->base, r->charged, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (p == MAP_FAILED)
            return CUDA_ERROR_OUT_OF_MEMORY;
        r->host = p;
    }
    if (!tbl_insert(&mem.dev, r)) {
        if (r->kind == FC_MEM_MANAGED)
            fc_unback(r);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    mem.used += r->charged;
    assert(mem.used <= mem.total && "used <= total");
    return CUDA_SUCCESS;
}

static CUresult fc_mem_make(CUdeviceptr *dptr, size_t bytes, fc_mem_kind kind, CUcontext ctx)
{
    fc_range e = {.size = bytes, .ctx = ctx, .kind = kind, .live = true};
    if (kind != FC_MEM_MANAGED && !(e.host = fc_backing(bytes)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_rwlock_wrlock(&mem.lock);
    CUresult r = fc_place_locked(&e);
    pthread_rwlock_unlock(&mem.lock);
    if (r != CUDA_SUCCESS && kind != FC_MEM_MANAGED)
        fc_unback(&e);
    if (r == CUDA_SUCCESS)
        *dptr = e.base;
    return r;
}

static CUresult fc_mem_alloc_now(CUdeviceptr *dptr, size_t bytes, fc_mem_kind kind)
{
    CUcontext ctx;
    if (!dptr || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    fc_action a = fc_faults_alloc();
    if (a.code != CUDA_SUCCESS)
        return a.code;
    return fc_mem_make(dptr, bytes, kind, ctx);
}

CUresult fc_mem_alloc_global(CUdeviceptr *dptr, size_t bytes, CUcontext ctx)
{
    return fc_mem_make(dptr, bytes, FC_MEM_DEVICE, ctx);
}

/* An allocation is not stream-ordered: capture forbids it where it forbids unsafe calls. */
CUresult fc_mem_alloc(CUdeviceptr *dptr, size_t bytes, fc_mem_kind kind)
{
    CUresult r = fc_capture_unsafe();
    return r == CUDA_SUCCESS ? fc_mem_alloc_now(dptr, bytes, kind) : r;
}

CUresult fc_mem_alloc_v1(CUdeviceptr_v1 *dptr, unsigned bytes)
{
    CUdeviceptr p = 0;
    CUresult r = dptr ? fc_mem_alloc(&p, bytes, FC_MEM_LOW32) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr_v1)p;
    return r;
}

static CUresult fc_pitch_alloc(CUdeviceptr *dptr, size_t *pitch, size_t w, size_t h, unsigned elem, fc_mem_kind kind)
{
    if (!dptr || !pitch || w == 0 || h == 0 || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t p = fc_round(w, FC_PITCH_ALIGN);
    if (p < w || p > SIZE_MAX / h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = fc_mem_alloc(dptr, p * h, kind);
    if (r == CUDA_SUCCESS)
        *pitch = p;
    return r;
}

CUresult fc_mem_alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t w, size_t h, unsigned elem)
{
    return fc_pitch_alloc(dptr, pitch, w, h, elem, FC_MEM_DEVICE);
}

CUresult fc_mem_alloc_pitch_v1(CUdeviceptr_v1 *dptr, unsigned *pitch, unsigned w, unsigned h, unsigned elem)
{
    CUdeviceptr p = 0;
    size_t pi = 0;
    CUresult r = dptr && pitch ? fc_pitch_alloc(&p, &pi, w, h, elem, FC_MEM_LOW32) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        *dptr = (CUdeviceptr_v1)p;
        *pitch = (unsigned)pi;
    }
    return r;
}

CUresult fc_mem_alloc_managed(CUdeviceptr *dptr, size_t bytes, unsigned flags)
{
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_mem_alloc(dptr, bytes, FC_MEM_MANAGED);
}

/* Whether [p, p + bytes) lies in one managed allocation (bytes 0: p is the base of one). */
static bool fc_managed_span(CUdeviceptr p, size_t bytes)
{
    pthread_once(&mem_once, fc_mem_setup);
    pthread_rwlock_rdlock(&mem.lock);
    const fc_range *e = tbl_find(&mem.dev, p);
    bool ok = e && e->kind == FC_MEM_MANAGED && (bytes ? bytes <= e->size - (p - e->base) : e->base == p);
    pthread_rwlock_unlock(&mem.lock);
    return ok;
}

/* Managed memory is the host's and the device's at once (mapped at its
   device address), so where it is attached, prefetched or advised to live
   changes nothing: each call is checked as the driver checks it, then kept
   as the hint it is. cuStreamAttachMemAsync: length 0 (the whole
   allocation) or the allocation's size, from its base (a GPU without
   concurrent managed access allows nothing else); one flag. */
CUresult fc_managed_attach(CUstream s, CUdeviceptr p, size_t length, unsigned flags)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r != CUDA_SUCCESS)
        return r;
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST && flags != CU_MEM_ATTACH_SINGLE)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_managed_span(p, 0) || (length && !fc_managed_span(p, length)))
        return CUDA_ERROR_INVALID_VALUE;
    return fc_capture_refuse(ctx, s);
}

/* cuMemPrefetchAsync (_v2 and the legacy device form) and cuMemAdvise:
   a managed range and a host or device location. */
CUresult fc_managed_hint(CUdeviceptr p, size_t bytes, CUmemLocation loc, CUstream s, bool stream)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = stream ? fc_resolve_stream(s, &ctx, &st) : fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    if (!bytes || !fc_managed_span(p, bytes))
        return CUDA_ERROR_INVALID_VALUE;
    bool host = loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT ||
                loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA;
    if (!host && (loc.type != CU_MEM_LOCATION_TYPE_DEVICE || fc_device_check(loc.id) != CUDA_SUCCESS))
        return CUDA_ERROR_INVALID_DEVICE;
    return stream ? fc_capture_refuse(ctx, s) : CUDA_SUCCESS;
}

/* Read-mostly advice ignores the location; the others name one. */
CUresult fc_managed_advise(CUdeviceptr p, size_t bytes, CUmem_advise advice, CUmemLocation loc)
{
    if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
        return CUDA_ERROR_INVALID_VALUE;
    if (advice == CU_MEM_ADVISE_SET_READ_MOSTLY || advice == CU_MEM_ADVISE_UNSET_READ_MOSTLY)
        loc = (CUmemLocation){.type = CU_MEM_LOCATION_TYPE_HOST};
    return fc_managed_hint(p, bytes, loc, NULL, false);
}

/* The legacy forms name a device ordinal, CU_DEVICE_CPU for the host. */
CUmemLocation fc_location_of_device(CUdevice d)
{
    CUmemLocation loc = {.type = d == CU_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE,
                         .id = d == CU_DEVICE_CPU ? 0 : d};
    return loc;
}

/* Stream-ordered allocation is usable at once: allocating early is a legal schedule. */
CUresult fc_mem_alloc_async(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r == CUDA_SUCCESS)
        r = fc_capture_refuse(ctx, s); /* graph allocation nodes are not emulated */
    return r == CUDA_SUCCESS ? fc_mem_alloc_now(dptr, bytes, FC_MEM_DEVICE) : r;
}

CUresult fc_mem_free_now(CUdeviceptr p)
{
    CUresult r = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&mem.lock);
    fc_range *e = tbl_find(&mem.dev, p);
    if (e && e->base == p && e->kind != FC_MEM_RESERVED) {
        fc_unback(e);
        assert(e->charged <= mem.used && "a live allocation's bytes are counted in used");
        mem.used -= e->charged;
        tbl_remove(&mem.dev, e);
    } else {
        r = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_rwlock_unlock(&mem.lock);
    return r;
}

/*
 * Like the real driver, cuMemFree waits for the context's pending work first.
 * Freeing 0 is a no-op that succeeds once a context is current: the
 * runtime's cudaFree(NULL), which NVIDIA's libraries call to set their
 * context up, reaches cuMemFree_v2(0), and cublasCreate and
 * curandCreateGenerator fail on any other answer (README, "Device memory").
 */
CUresult fc_mem_free(CUdeviceptr p)
{
    CUcontext ctx;
    CUresult r = fc_current(&ctx);
    if (r == CUDA_SUCCESS && p == 0)
        return CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        r = fc_capture_unsafe();
    if (r == CUDA_SUCCESS)
        r = fc_drain_all(ctx);
    return r == CUDA_SUCCESS ? fc_mem_free_now(p) : r;
}

static bool fc_is_base(CUdeviceptr p)
{
    pthread_rwlock_rdlock(&mem.lock);
    const fc_range *e = tbl_find(&mem.dev, p);
    bool ok = e && e->base == p && e->kind != FC_MEM_RESERVED;
    pthread_rwlock_unlock(&mem.lock);
    return ok;
}

CUresult fc_mem_free_async(CUdeviceptr p, CUstream s)
{
    if (!fc_is_base(p))
        return CUDA_ERROR_INVALID_VALUE;
    fc_work w = {.kind = FC_W_FREE, .u.free = p};
    return fc_submit_async(s, &w);
}

CUresult fc_mem_info(size_t *free_bytes, size_t *total)
{
    CUcontext ctx;
    if (!free_bytes || !total)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_rwlock_rdlock(&mem.lock);
    *free_bytes = mem.total - mem.used;
    *total = mem.total;
    pthread_rwlock_unlock(&mem.lock);
    return CUDA_SUCCESS;
}

static unsigned fc_clamp32(size_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
}

CUresult fc_mem_info_v1(unsigned *free_bytes, unsigned *total)
{
    size_t f, t;
    CUresult r = free_bytes && total ? fc_mem_info(&f, &t) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        *free_bytes = fc_clamp32(f);
        *total = fc_clamp32(t);
    }
    return r;
}

CUresult fc_mem_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    CUcontext ctx;
    CUresult r = fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_rwlock_rdlock(&mem.lock);
    const fc_range *e = tbl_find(&mem.dev, p);
    size_t off = 0, n = e ? e->size : 0;
    /* Mapped memory reports its mapping, as the driver reports one cuMemMap's range. */
    bool found = e && (e->kind != FC_MEM_RESERVED || fc_vmm_range_locked(e->vres, p - e->base, &off, &n));
    if (found && base)
        *base = e->base + off;
    if (found && size)
        *size = n;
    pthread_rwlock_unlock(&mem.lock);
    return found ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult fc_mem_range_v1(CUdeviceptr_v1 *base, unsigned *size, CUdeviceptr_v1 p)
{
    CUdeviceptr b;
    size_t n;
    CUresult r = fc_mem_range(&b, &n, p);
    if (r == CUDA_SUCCESS && base)
        *base = (CUdeviceptr_v1)b;
    if (r == CUDA_SUCCESS && size)
        *size = fc_clamp32(n);
    return r;
}

/* ---- cuPointerGetAttribute: device memory ------------------------------- */

/* Its n-byte answer at data, read from the allocation e (under the lock);
   false for an attribute fakecuda does not answer. */
static bool fc_pointer_answer_locked(void *data, CUpointer_attribute a, const fc_range *e, CUdeviceptr p)
{
    union {
        CUcontext ctx;
        unsigned u32;
        int i32;
        unsigned long long u64;
        CUdeviceptr ptr;
        size_t size;
    } v;
    size_t n;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: v.ctx = e->ctx, n = sizeof v.ctx; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: /* managed memory's type is not measured: not answered */
        if (e->kind == FC_MEM_MANAGED)
            return false;
        v.u32 = CU_MEMORYTYPE_DEVICE, n = sizeof v.u32;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: v.ptr = p, n = sizeof v.ptr; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: v.u64 = e->id, n = sizeof v.u64; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: v.u32 = e->kind == FC_MEM_MANAGED, n = sizeof v.u32; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: v.i32 = e->ctx ? (int)e->ctx->dev : 0, n = sizeof v.i32; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: v.ptr = e->base, n = sizeof v.ptr; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: v.size = e->size, n = sizeof v.size; break;
    default: return false;
    }
    memcpy(data, &v, n);
    return true;
}

/*
 * The attributes of a device allocation (not a reservation) that cuFFT
 * asks for (BUFFER_ID, at plan creation, of the buffer it copies its
 * kernel arguments to) and their plain neighbours, as cuda.h describes
 * them. Any other attribute is CUDA_ERROR_NOT_SUPPORTED; a pointer
 * fakecuda did not allocate for the device (host memory, pinned or not)
 * is CUDA_ERROR_INVALID_VALUE, what cutaint's shim reads as "host memory".
 */
CUresult fc_pointer_attribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_rwlock_rdlock(&mem.lock);
    const fc_range *e = tbl_find(&mem.dev, p);
    bool found = e && e->kind != FC_MEM_RESERVED;
    bool answered = found && fc_pointer_answer_locked(data, a, e, p);
    pthread_rwlock_unlock(&mem.lock);
    if (!found)
        return CUDA_ERROR_INVALID_VALUE;
    if (!answered)
        fc_debug("cuPointerGetAttribute: attribute %d is not emulated", (int)a);
    return answered ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- pinned host memory: plain page-aligned host blocks ------------------ */

#define FC_HOSTALLOC_FLAGS (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)
#define FC_HOSTREGISTER_FLAGS                                                                   \
    (CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY | \
     CU_MEMHOSTREGISTER_READ_ONLY)

/* The pinned block or registered range holding [p, p + bytes), under the lock. */
static const fc_range *fc_pinned_locked(uintptr_t p, size_t bytes)
{
    const fc_range *e = tbl_find(&mem.host, p);
    if (!e)
        e = tbl_find(&mem.reg, p);
    return e && bytes <= e->size - (p - e->base) ? e : NULL;
}

/* Whether [p, p + n) meets a pinned block or a registration. */
static bool fc_pinned_overlap_locked(uintptr_t p, size_t n)
{
    const fc_table *t[] = {&mem.host, &mem.reg};
    for (size_t k = 0; k < 2; k++) {
        size_t i = tbl_upper(t[k], p + n - 1);
        if (i > 0 && t[k]->v[i - 1].base + t[k]->v[i - 1].size > p)
            return true;
    }
    return false;
}

/* Pinned memory is not stream-ordered work: like cuMemFree, taking it back
   waits for the context's queued work, which may still read or write it. */
static CUresult fc_pinned_call(CUcontext *ctx, bool drain)
{
    CUresult r = fc_current(ctx);
    if (r == CUDA_SUCCESS)
        r = fc_capture_unsafe();
    if (r == CUDA_SUCCESS && drain)
        r = fc_drain_all(*ctx);
    return r;
}

CUresult fc_host_alloc(void **pp, size_t bytes, unsigned flags)
{
    CUcontext ctx;
    if (!pp || bytes == 0 || (flags & ~FC_HOSTALLOC_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_current(&ctx);
    if (r == CUDA_SUCCESS)
        r = fc_capture_unsafe();
    if (r != CUDA_SUCCESS)
        return r;
    void *p;
    if (posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), bytes) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_range e =
        {.base = (uintptr_t)p, .size = bytes, .span = bytes, .host = p, .ctx = ctx, .flags = flags, .live = true};
    pthread_rwlock_wrlock(&mem.lock);
    bool ok = tbl_insert(&mem.host, &e);
    pthread_rwlock_unlock(&mem.lock);
    if (!ok)
        free(p);
    else
        *pp = p;
    return ok ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult fc_host_free(void *p)
{
    CUcontext ctx;
    CUresult r = fc_pinned_call(&ctx, true);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_rwlock_wrlock(&mem.lock);
    fc_range *e = tbl_find(&mem.host, (uintptr_t)p);
    if (e && e->base == (uintptr_t)p) {
        free(e->host);
        tbl_remove(&mem.host, e);
        tbl_compact(&mem.host);
    } else {
        r = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_rwlock_unlock(&mem.lock);
    return r;
}

/* Whether every page of [p, p + n) is mapped in the process (mincore fails
   with ENOMEM on a hole), as the driver must pin each page it registers. */
static bool fc_host_mapped(uintptr_t p, size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = p / page * page, end = fc_round(p + n, page);
    unsigned char vec[256];
    while (a < end) {
        size_t chunk = end - a < sizeof vec * page ? end - a : sizeof vec * page;
        if (mincore((void *)a, chunk, vec) != 0)
            return false;
        a += chunk;
    }
    return true;
}

static bool fc_in_arena(const fc_arena *a, uintptr_t p, size_t n)
{
    return a->end != 0 && p < a->end && p + n > a->base;
}

/* cuMemHostRegister: pins (records) [p, p + bytes) and maps it for the
   device at its own address. */
CUresult fc_host_register(void *p, size_t bytes, unsigned flags)
{
    CUcontext ctx;
    uintptr_t a = (uintptr_t)p;
    if (!p || bytes == 0 || a + bytes < a || (flags & ~FC_HOSTREGISTER_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_pinned_call(&ctx, false);
    if (r != CUDA_SUCCESS)
        return r;
    if (flags & CU_MEMHOSTREGISTER_IOMEMORY)
        return CUDA_ERROR_NOT_SUPPORTED; /* there is no PCI aperture to map */
    fc_range e = {.base = a, .size = bytes, .span = bytes, .host = p, .ctx = ctx, .flags = flags, .live = true};
    pthread_rwlock_wrlock(&mem.lock);
    /* Device addresses (managed memory too) are the driver's, not host memory to pin. */
    if (fc_in_arena(&mem.main, a, bytes) || fc_in_arena(&mem.low, a, bytes) || !fc_host_mapped(a, bytes))
        r = CUDA_ERROR_INVALID_VALUE;
    else if (fc_pinned_overlap_locked(a, bytes))
        r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    else if (!tbl_insert(&mem.reg, &e))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_rwlock_unlock(&mem.lock);
    return r;
}

/* cuMemHostUnregister takes the base cuMemHostRegister was given. */
CUresult fc_host_unregister(void *p)
{
    CUcontext ctx;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_pinned_call(&ctx, true);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_rwlock_wrlock(&mem.lock);
    fc_range *e = tbl_find(&mem.reg, (uintptr_t)p);
    if (e && e->base == (uintptr_t)p) {
        tbl_remove(&mem.reg, e);
        tbl_compact(&mem.reg);
    } else {
        r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    pthread_rwlock_unlock(&mem.lock);
    return r;
}

/* Unified addressing: the device address of pinned host memory is its host address. */
CUresult fc_host_device_pointer(CUdeviceptr *dptr, void *p, unsigned flags)
{
    CUcontext ctx;
    if (!dptr || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_rwlock_rdlock(&mem.lock);
    bool found = fc_pinned_locked((uintptr_t)p, 1) != NULL;
    pthread_rwlock_unlock(&mem.lock);
    if (found)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fc_host_device_pointer_v1(CUdeviceptr_v1 *dptr, void *p, unsigned flags)
{
    CUdeviceptr d = 0;
    CUresult r = dptr ? fc_host_device_pointer(&d, p, flags) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && d > UINT32_MAX)
        r = CUDA_ERROR_INVALID_VALUE; /* host memory above 4 GiB has no 32-bit device address */
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr_v1)d;
    return r;
}

/* The flags a pinned block was allocated, or a range registered, with. */
CUresult fc_host_get_flags(unsigned *flags, void *p)
{
    CUcontext ctx;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_rwlock_rdlock(&mem.lock);
    const fc_range *e = fc_pinned_locked((uintptr_t)p, 1);
    if (e)
        *flags = e->flags;
    pthread_rwlock_unlock(&mem.lock);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

bool fc_mem_host_pinned(const void *p, size_t bytes)
{
    pthread_once(&mem_once, fc_mem_setup);
    fc_mem_rdlock();
    bool pinned = fc_pinned_locked((uintptr_t)p, bytes) != NULL;
    fc_mem_unlock();
    return pinned;
}

/* ---- context teardown ------------------------------------------------- */

/* The arena's next address falls back to the end of its highest live
 * range (after compaction), so the addresses a released context held at the
 * top are handed out again, as the real driver reuses its virtual addresses
 * once a context is gone.  A range's end is its span: a reservation charges
 * nothing to the device, yet its addresses stay its own (it belongs to no
 * context, and outlives them). */
static void arena_rewind(fc_arena *a)
{
    if (a->end == 0)
        return;
    uintptr_t top = a->base;
    for (size_t i = 0; i < mem.dev.n; i++) {
        const fc_range *e = &mem.dev.v[i];
        uintptr_t end = e->base + (e->span > e->charged ? e->span : e->charged);
        if (e->base >= a->base && e->base < a->end && end > top)
            top = end;
    }
    a->bump = top;
}

void fc_mem_release_ctx(CUcontext ctx)
{
    pthread_rwlock_wrlock(&mem.lock);
    for (size_t i = 0; i < mem.dev.n; i++) {
        fc_range *e = &mem.dev.v[i];
        if (e->live && e->ctx == ctx) {
            fc_unback(e);
            assert(e->charged <= mem.used && "a live allocation's bytes are counted in used");
            mem.used -= e->charged;
            e->live = false;
        }
    }
    tbl_compact(&mem.dev);
    /* A context's registrations go with it, unless made portable to every context. */
    for (size_t i = 0; i < mem.reg.n; i++)
        if (mem.reg.v[i].ctx == ctx && !(mem.reg.v[i].flags & CU_MEMHOSTREGISTER_PORTABLE))
            mem.reg.v[i].live = false;
    tbl_compact(&mem.reg);
    arena_rewind(&mem.main);
    arena_rewind(&mem.low);
    pthread_rwlock_unlock(&mem.lock);
}

/* ---- lookups for copies and kernels -------------------------------------- */

void fc_mem_rdlock(void)
{
    pthread_rwlock_rdlock(&mem.lock);
}

void fc_mem_unlock(void)
{
    pthread_rwlock_unlock(&mem.lock);
}

/* Host view of [p, p + bytes) if it lies inside one live allocation (or one
   reservation's accessible mappings, or one pinned block or registration). */
void *fc_mem_view_locked(CUdeviceptr p, size_t bytes)
{
    const fc_range *e = tbl_find(&mem.dev, p);
    if (!e) {
        e = fc_pinned_locked(p, bytes);
        return e ? e->host + (p - e->base) : NULL;
    }
    if (bytes > e->size - (p - e->base))
        return NULL;
    if (e->kind == FC_MEM_RESERVED)
        return fc_vmm_view_locked(e->vres, p - e->base, bytes);
    return e->host + (p - e->base);
}

/* Reserved addresses are device addresses, mapped or not. */
bool fc_mem_is_device(CUdeviceptr p)
{
    fc_mem_rdlock();
    bool dev = tbl_find(&mem.dev, p) != NULL;
    fc_mem_unlock();
    return dev;
}

bool fc_mem_span_ok(CUdeviceptr p, size_t bytes)
{
    fc_mem_rdlock();
    bool ok = fc_mem_view_locked(p, bytes) != NULL;
    fc_mem_unlock();
    return ok;
}

/* ---- for vmm.c: reservations and physical memory, under the write lock -- */

void fc_mem_wrlock(void)
{
    pthread_once(&mem_once, fc_mem_setup);
    pthread_rwlock_wrlock(&mem.lock);
}

/* A reservation at the hint if that range is free, else wherever it fits. */
CUresult fc_mem_va_reserve_locked(CUdeviceptr *out, size_t size, size_t align, CUdeviceptr hint, fc_vres *vres)
{
    fc_range e = {.size = size, .span = size, .kind = FC_MEM_RESERVED, .vres = vres, .live = true};
    if (hint && arena_free_at(&mem.main, &mem.dev, hint, size, align)) {
        e.base = hint;
        arena_taken(&mem.main, hint, size);
    } else {
        e.base = arena_place(&mem.main, &mem.dev, size, align);
    }
    if (!e.base || !tbl_insert(&mem.dev, &e))
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = e.base;
    return CUDA_SUCCESS;
}

/* The reservation containing p, its base in *base; NULL if p is in none. */
fc_vres *fc_mem_vres_locked(CUdeviceptr p, CUdeviceptr *base)
{
    const fc_range *e = tbl_find(&mem.dev, p);
    if (!e || e->kind != FC_MEM_RESERVED)
        return NULL;
    *base = e->base;
    return e->vres;
}

void fc_mem_va_release_locked(CUdeviceptr base)
{
    fc_range *e = tbl_find(&mem.dev, base);
    if (e && e->base == base && e->kind == FC_MEM_RESERVED)
        tbl_remove(&mem.dev, e);
}

/* The sparse file, 4x the device size (like the arena) so placement rarely fragments. */
static bool fc_phys_setup(void)
{
    if (mem.phys.fd >= 0)
        return true;
    size_t size = 4 * mem.total;
    int fd = memfd_create("fakecuda-vmm", MFD_CLOEXEC);
    if (fd < 0)
        return false;
    if (ftruncate(fd, (off_t)(FC_PHYS_BASE + size)) != 0) {
        close(fd);
        return false;
    }
    mem.phys.fd = fd;
    mem.phys.arena = (fc_arena){FC_PHYS_BASE, FC_PHYS_BASE + size, FC_PHYS_BASE};
    return true;
}

/* Fresh physical memory shows stale bytes, as fresh allocations do. */
static void fc_phys_stale(uint64_t off, size_t size)
{
    if (size > FC_STALE_MAX)
        return;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mem.phys.fd, (off_t)off);
    if (p == MAP_FAILED)
        return;
    memset(p, FC_STALE, size);
    munmap(p, size);
}

/* size bytes of physical memory (a multiple of the granularity), charged to the device. */
CUresult fc_mem_phys_alloc_locked(size_t size, uint64_t *off)
{
    if (size > mem.total - mem.used || !fc_phys_setup())
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_range e = {.size = size, .charged = size, .span = size, .live = true};
    e.base = arena_place(&mem.phys.arena, &mem.phys.tbl, size, FC_VMM_GRANULARITY);
    if (!e.base || !tbl_insert(&mem.phys.tbl, &e))
        return CUDA_ERROR_OUT_OF_MEMORY;
    mem.used += size;
    assert(mem.used <= mem.total && "used <= total");
    fc_phys_stale(e.base, size);
    *off = e.base;
    return CUDA_SUCCESS;
}

/* Gives the pages back (a hole in the file) and the bytes to the device. */
void fc_mem_phys_free_locked(uint64_t off)
{
    fc_range *e = tbl_find(&mem.phys.tbl, off);
    if (!e || e->base != off)
        return;
    fallocate(mem.phys.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)e->size);
    assert(e->charged <= mem.used && "physical memory's bytes are counted in used");
    mem.used -= e->charged;
    tbl_remove(&mem.phys.tbl, e);
}

int fc_mem_phys_fd_locked(void)
{
    return mem.phys.fd;
}

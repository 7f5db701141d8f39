/*
 * fakecuda internal interface: the types and functions the fakecuda source
 * files share. Nothing here is exported from libcuda.so.1; the exported
 * entry points are generated in exports.c from api.def.
 *
 * cuda.h is included the way the real driver builds itself
 * (__CUDA_API_VERSION_INTERNAL), so every legacy, _v2, _ptds and _ptsz
 * prototype is declared with its real signature, and with
 * __CUDA_API_PUSH_VISIBILITY_DEFAULT so those declarations (and only they)
 * have default visibility in a library built with -fvisibility=hidden.
 *
 * Invariants shared by every file:
 * - A handle (context, stream, event, module, library, function, kernel) is
 *   a slot of a fixed pool (handles.c); it is dereferenced only after
 *   fc_obj_valid() said the slot is live with the expected kind.
 * - Device addresses are never host addresses, except pinned and registered
 *   host memory, mapped for the device at its host address (unified
 *   addressing): device bytes are reached only through memory.c, under its
 *   read lock.
 * - Work is executed in submission order per context, never at the call
 *   that queued it: by fc_drain() on the thread at a sync point
 *   (FAKECUDA_SCHEDULE=sync), or by the context's worker thread (async, the
 *   default; queue.c).
 * - The kernel registry (plugins.c) is complete before any entry point goes
 *   past fc_enter() and never changes afterwards, so a kernel's index and
 *   fc_kernel pointer are stable for the life of the process.
 * Asserted in: handles.c, memory.c, queue.c, plugins.c.
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#define __CUDA_API_VERSION_INTERNAL 1
#define __CUDA_API_PUSH_VISIBILITY_DEFAULT 1
#include <cuda.h>
/* The profiler entry points are declared apart from cuda.h, without its
   visibility push: exported here like the rest. */
#pragma GCC visibility push(default)
#include <cudaProfiler.h>
#pragma GCC visibility pop

#include "entry.h"
#include "log.h"
#include "fakecuda_kernel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FC_DRIVER_VERSION 13000   /* the API fakecuda implements; the default it reports */
#define FC_ALIGN 256u             /* device allocation alignment */
#define FC_INLINE_PARAM_BYTES 64u /* parameters a queued launch holds without the heap */
#define FC_MAX_PARAM_BYTES FAKECUDA_KERNEL_MAX_PARAM_BYTES
#define FC_QUEUE_CAP 1024u /* pending work items per context */
#define FC_DEFAULT_SMEM (48u * 1024u)
#define FC_OPTIN_SMEM (227u * 1024u)
#define FC_STALE 0x5A                   /* the bytes of fresh device memory */
#define FC_STALE_MAX ((size_t)64 << 20) /* larger allocations are zeroed pages mapped on demand */
/* cuMemCreate / cuMemMap granularity: 2 MiB, a GPU's, unless
 * FAKECUDA_VMM_GRANULARITY asks for another (vmm.c). */
#define FC_VMM_GRANULARITY fc_vmm_granule()
size_t fc_vmm_granule(void);
/* A byte count with an optional K, M or G suffix (memory.c); 0 if malformed. */
size_t fc_parse_size(const char *s);

/* ---- sorted tables (memory.c's allocations, vmm.c's mappings) ---------- */

/* The upper bound of x in n records stride bytes apart from v, sorted by
 * the 64-bit unsigned start at byte offset key of each: the index of the
 * first record starting after x.  FC_UPPER_BOUND names the array and the
 * start's field. */
static inline size_t fc_upper_bound(const void *v, size_t n, size_t stride, size_t key, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t start;
        memcpy(&start, (const char *)v + mid * stride + key, sizeof start);
        if (start <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
#define FC_UPPER_BOUND(array, n, field, x)                                                        \
    ((void)sizeof(char[sizeof((array)->field) == sizeof(uint64_t) ? 1 : -1]), /* 64-bit starts */ \
     fc_upper_bound((array), (n), sizeof *(array), offsetof(__typeof__(*(array)), field), (x)))

/* ---- driver state (driver.c) ------------------------------------------ */

/* What an entry point needs before it may run (api.def, column cls). */
typedef enum fc_cls {
    FC_PURE, /* always works, even during teardown (error strings) */
    FC_ANY,  /* works before cuInit (init, version, entry-point lookup) */
    FC_DEV,  /* needs cuInit; unaffected by a sticky fault (queries) */
    FC_CTX,  /* needs cuInit; fails with the sticky fault once there is one */
} fc_cls;

CUresult fc_enter(unsigned api_id, fc_cls cls);
/* How many entry points the calling thread is inside (exports.c): a signal
   handler that exits from inside one may hold any of fakecuda's locks. */
extern _Thread_local unsigned fc_calls_in;
void fc_mark_per_thread(void);
bool fc_is_legacy_stream(CUstream s);
CUresult fc_leave(CUresult r);
CUresult fc_sticky(void);
void fc_set_sticky(CUresult r);
bool fc_error_by_name(const char *name, CUresult *out);

CUresult fc_init(unsigned int flags);
CUresult fc_driver_version(int *v);
CUresult fc_device_get(CUdevice *d, int ordinal);
CUresult fc_device_count(int *n);
CUresult fc_device_name(char *name, int len, CUdevice d);
CUresult fc_device_attribute(int *v, CUdevice_attribute a, CUdevice d);
CUresult fc_device_total_mem(size_t *bytes, CUdevice d);
CUresult fc_device_total_mem_v1(unsigned *bytes, CUdevice d);
CUresult fc_device_check(CUdevice d);
CUresult fc_get_error_name(CUresult r, const char **s);
CUresult fc_get_error_string(CUresult r, const char **s);

/* ---- handle pools (handles.c) ------------------------------------------ */

typedef enum fc_kind {
    FC_K_FREE = 0,
    FC_K_CTX,
    FC_K_STREAM,
    FC_K_EVENT,
    FC_K_MODULE,
    FC_K_LIBRARY,
    FC_K_FUNC,
    FC_K_KERNEL,
    FC_K_MEMHANDLE,
    FC_K_GRAPH,
    FC_K_GNODE,
    FC_K_GEXEC,
    FC_K_LINK,
    FC_K_MEMPOOL,
    FC_K_ARRAY,
    FC_K_TEXOBJ,
} fc_kind;

typedef struct fc_obj {
    _Atomic int kind; /* fc_kind; FC_K_FREE while the slot is unused */
    CUcontext ctx;    /* owner, released with it; NULL for none */
} fc_obj;

typedef enum fc_pool_id {
    FC_P_CTX,
    FC_P_STREAM,
    FC_P_EVENT,
    FC_P_MODULE,
    FC_P_FUNC,
    FC_P_MEMHANDLE,
    FC_P_GRAPH,
    FC_P_GNODE,
    FC_P_GEXEC,
    FC_P_LINK,
    FC_P_MEMPOOL,
    FC_P_ARRAY,
    FC_P_TEXOBJ,
    FC_P_COUNT
} fc_pool_id;

void *fc_obj_new(fc_pool_id pool, fc_kind kind, CUcontext owner);
bool fc_obj_valid(const void *h, fc_kind kind);
void fc_obj_free(void *h);
void fc_obj_free_owned(fc_pool_id pool, CUcontext owner, void (*release)(void *));

/* ---- contexts (context.c) ---------------------------------------------- */

typedef struct fc_work fc_work;

typedef struct fc_queue {
    pthread_mutex_t lock; /* guards the ring, next_seq, streams' last_seq and the worker fields */
    pthread_mutex_t exec; /* held while items run, so they run in order */
    fc_work *ring;        /* FC_QUEUE_CAP items */
    unsigned head, count;
    uint64_t next_seq;         /* seq of the newest queued item */
    _Atomic uint64_t done_seq; /* every item up to this seq has run */
    /* async mode (queue.c): the worker that runs the items */
    pthread_cond_t work; /* signalled when an item is queued or the worker must stop */
    pthread_cond_t done; /* broadcast when done_seq moves */
    pthread_t worker;
    bool worker_live;            /* a worker thread runs (or must be joined) */
    bool stop;                   /* the worker leaves at its next item boundary */
    bool exited;                 /* it left (set by the worker itself, last) */
    uint64_t running;            /* seq of the item the worker runs; 0 between items */
    struct CUctx_st *waiting_on; /* the context whose queue that item (a wait) waits on */
    _Atomic unsigned xrefs;      /* other contexts' queued waits on this queue (FC_W_WAIT) */
} fc_queue;

/* A context's enumerated settings, kept as the ints the driver API passes. */
typedef enum fc_ctx_choice { FC_CHOICE_CACHE, FC_CHOICE_SHARED, FC_CHOICE_COUNT } fc_ctx_choice;

typedef struct fc_ctx_settings { /* settings.c */
    size_t limit[CU_LIMIT_MAX];
    int choice[FC_CHOICE_COUNT]; /* CUfunc_cache, CUsharedconfig */
} fc_ctx_settings;

struct CUctx_st {
    fc_obj hdr;
    CUdevice dev;
    uint64_t id; /* cuCtxGetId: unique in the process, a new one at each (re)creation */
    unsigned flags;
    bool primary;
    fc_queue q;
    fc_ctx_settings settings;
};

CUresult fc_current(CUcontext *ctx);
CUresult fc_ctx_or_current(CUcontext *ctx);
CUresult fc_ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev);
CUresult fc_ctx_create_v3(CUcontext *pctx, CUexecAffinityParam *ap, int nap, unsigned flags, CUdevice dev);
CUresult fc_ctx_create_v4(CUcontext *pctx, CUctxCreateParams *cp, unsigned flags, CUdevice dev);
CUresult fc_ctx_destroy(CUcontext ctx);
CUresult fc_ctx_get_current(CUcontext *pctx);
CUresult fc_ctx_get_id(CUcontext ctx, unsigned long long *id);
CUresult fc_ctx_set_current(CUcontext ctx);
CUresult fc_ctx_push(CUcontext ctx);
CUresult fc_ctx_pop(CUcontext *pctx);
CUresult fc_ctx_get_device(CUdevice *dev, CUcontext ctx);
CUresult fc_ctx_synchronize(CUcontext ctx);
CUresult fc_primary_retain(CUcontext *pctx, CUdevice dev);
CUresult fc_primary_release(CUdevice dev);
CUresult fc_primary_reset(CUdevice dev);
CUresult fc_primary_state(CUdevice dev, unsigned *flags, int *active);
CUresult fc_primary_set_flags(CUdevice dev, unsigned flags);

/* ---- device and context settings (settings.c) --------------------------- */

void fc_ctx_settings_init(fc_ctx_settings *s);
/* The device's compute capability as major * 10 + minor (90 for 9.0). */
int fc_device_cc(void);
/* The version cuDriverGetVersion reports: FAKECUDA_DRIVER_VERSION or 13000. */
int fc_reported_driver_version(void);
CUresult fc_device_compute_capability(int *major, int *minor, CUdevice d);
CUresult fc_device_pci_bus_id(char *id, int len, CUdevice d);
CUresult fc_device_can_access_peer(int *can, CUdevice d, CUdevice peer);
CUresult fc_ctx_enable_peer(CUcontext peer, unsigned flags);
CUresult fc_ctx_disable_peer(CUcontext peer);
CUresult fc_ctx_set_limit(CUlimit l, size_t v);
CUresult fc_ctx_get_limit(size_t *v, CUlimit l);
CUresult fc_ctx_get_choice(fc_ctx_choice which, int *v);
CUresult fc_ctx_set_choice(fc_ctx_choice which, int v);

/* ---- memory (memory.c) ------------------------------------------------- */

typedef enum fc_mem_kind { FC_MEM_DEVICE, FC_MEM_MANAGED, FC_MEM_LOW32, FC_MEM_RESERVED } fc_mem_kind;

typedef struct fc_vres fc_vres; /* an address reservation's mappings (vmm.c) */

CUresult fc_mem_alloc(CUdeviceptr *dptr, size_t bytes, fc_mem_kind kind);
/* Memory the driver places for itself in ctx (a module's global): no FAKECUDA_FAULTS rule counts it. */
CUresult fc_mem_alloc_global(CUdeviceptr *dptr, size_t bytes, CUcontext ctx);
CUresult fc_mem_alloc_v1(CUdeviceptr_v1 *dptr, unsigned bytes);
CUresult fc_mem_alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned elem);
CUresult fc_mem_alloc_pitch_v1(CUdeviceptr_v1 *dptr, unsigned *pitch, unsigned width, unsigned height, unsigned elem);
CUresult fc_mem_alloc_managed(CUdeviceptr *dptr, size_t bytes, unsigned flags);
CUresult fc_mem_alloc_async(CUdeviceptr *dptr, size_t bytes, CUstream s);
/* arrays and texture objects (texture.c) */
struct CUarray_st {
    fc_obj hdr;
    CUDA_ARRAY3D_DESCRIPTOR desc;
    CUdeviceptr data; /* the texels, row after row, slice after slice */
    size_t pitch;     /* bytes per row: Width * texel size */
    size_t rows;      /* rows per slice: Height, or 1 */
};
struct CUtexobj_st {
    fc_obj hdr;
    CUdeviceptr at; /* the descriptor (ptx/ptx_tex.h): the handle */
    CUDA_RESOURCE_DESC res;
    CUDA_TEXTURE_DESC tex;
};
CUresult fc_array_create(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *d);
CUresult fc_array_create_2d(CUarray *out, const CUDA_ARRAY_DESCRIPTOR *d);
CUresult fc_array_destroy(CUarray a);
CUresult fc_array_descriptor(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a);
CUresult fc_array_descriptor_2d(CUDA_ARRAY_DESCRIPTOR *d, CUarray a);
CUresult fc_array_memory(CUarray a, CUdeviceptr *data, size_t *pitch, size_t *rows);
CUresult fc_tex_create(CUtexObject *out, const CUDA_RESOURCE_DESC *res, const CUDA_TEXTURE_DESC *td,
                       const CUDA_RESOURCE_VIEW_DESC *view);
CUresult fc_tex_destroy(CUtexObject h);
CUresult fc_tex_get(CUDA_RESOURCE_DESC *res, CUDA_TEXTURE_DESC *td, CUtexObject h);

/* memory pools (mempool.c) */
struct CUmemPoolHandle_st {
    fc_obj hdr;
    CUmemPoolProps props;
    cuuint64_t release_threshold;
    int reuse[3]; /* FOLLOW_EVENT_DEPENDENCIES, ALLOW_OPPORTUNISTIC, ALLOW_INTERNAL_DEPENDENCIES */
};
CUresult fc_pool_get_default(CUmemoryPool *pool, CUdevice d, bool current);
CUresult fc_pool_set_current(CUdevice d, CUmemoryPool pool);
CUresult fc_pool_create(CUmemoryPool *pool, const CUmemPoolProps *props);
CUresult fc_pool_destroy(CUmemoryPool pool);
CUresult fc_pool_check(CUmemoryPool pool);
CUresult fc_pool_trim(CUmemoryPool pool, size_t keep);
CUresult fc_pool_attribute(CUmemoryPool pool, CUmemPool_attribute a, void *v, bool set);
CUresult fc_pool_alloc_async(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream s);
CUresult fc_managed_attach(CUstream s, CUdeviceptr p, size_t length, unsigned flags);
CUresult fc_managed_hint(CUdeviceptr p, size_t bytes, CUmemLocation loc, CUstream s, bool stream);
CUresult fc_managed_advise(CUdeviceptr p, size_t bytes, CUmem_advise advice, CUmemLocation loc);
CUmemLocation fc_location_of_device(CUdevice d);
CUresult fc_mem_free(CUdeviceptr p);
CUresult fc_mem_free_async(CUdeviceptr p, CUstream s);
CUresult fc_mem_free_now(CUdeviceptr p);
CUresult fc_mem_info(size_t *free_bytes, size_t *total);
CUresult fc_mem_info_v1(unsigned *free_bytes, unsigned *total);
CUresult fc_mem_range(CUdeviceptr *base, size_t *size, CUdeviceptr p);
CUresult fc_pointer_attribute(void *data, CUpointer_attribute a, CUdeviceptr p);
CUresult fc_mem_range_v1(CUdeviceptr_v1 *base, unsigned *size, CUdeviceptr_v1 p);
CUresult fc_host_alloc(void **pp, size_t bytes, unsigned flags);
CUresult fc_host_free(void *p);
CUresult fc_host_register(void *p, size_t bytes, unsigned flags);
CUresult fc_host_unregister(void *p);
CUresult fc_host_device_pointer(CUdeviceptr *dptr, void *p, unsigned flags);
CUresult fc_host_device_pointer_v1(CUdeviceptr_v1 *dptr, void *p, unsigned flags);
CUresult fc_host_get_flags(unsigned *flags, void *p);
/* Whether [p, p + bytes) is one pinned block's or registration's. */
bool fc_mem_host_pinned(const void *p, size_t bytes);
void fc_mem_release_ctx(CUcontext ctx);
size_t fc_mem_total(void);

bool fc_mem_is_device(CUdeviceptr p);
bool fc_mem_span_ok(CUdeviceptr p, size_t bytes);
void fc_mem_rdlock(void);
void fc_mem_unlock(void);
void *fc_mem_view_locked(CUdeviceptr p, size_t bytes);

/* For vmm.c, which calls them holding the write lock. */
void fc_mem_wrlock(void);
CUresult fc_mem_va_reserve_locked(CUdeviceptr *out, size_t size, size_t align, CUdeviceptr hint, fc_vres *vres);
fc_vres *fc_mem_vres_locked(CUdeviceptr p, CUdeviceptr *base);
void fc_mem_va_release_locked(CUdeviceptr base);
CUresult fc_mem_phys_alloc_locked(size_t size, uint64_t *off);
void fc_mem_phys_free_locked(uint64_t off);
int fc_mem_phys_fd_locked(void);

/* ---- virtual memory management (vmm.c) --------------------------------- */

struct fc_memhandle { /* a CUmemGenericAllocationHandle: physical memory */
    fc_obj hdr;
    uint64_t off; /* where its bytes are in the physical memory file */
    size_t size;
    CUmemAllocationProp prop;
    unsigned refs; /* cuMemCreate and retains, less releases */
    unsigned maps; /* live mappings */
};

CUresult fc_vmm_granularity(size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags option);
CUresult fc_vmm_reserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr hint, unsigned long long flags);
CUresult fc_vmm_free(CUdeviceptr ptr, size_t size);
CUresult fc_vmm_create(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
                       unsigned long long flags);
CUresult fc_vmm_release(CUmemGenericAllocationHandle h);
CUresult fc_vmm_map(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                    unsigned long long flags);
CUresult fc_vmm_unmap(CUdeviceptr ptr, size_t size);
CUresult fc_vmm_set_access(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);
CUresult fc_vmm_get_access(unsigned long long *flags, const CUmemLocation *loc, CUdeviceptr ptr);
CUresult fc_vmm_retain(CUmemGenericAllocationHandle *h, void *addr);
CUresult fc_vmm_properties(CUmemAllocationProp *prop, CUmemGenericAllocationHandle h);
/* memory.c's lookups into a reservation, under the memory lock */
void *fc_vmm_view_locked(const fc_vres *r, size_t off, size_t bytes);
bool fc_vmm_range_locked(const fc_vres *r, size_t off, size_t *map_off, size_t *map_size);

/* ---- streams, events and the work queue (queue.c) ---------------------- */

typedef struct fc_end { /* one side of a copy, origin already applied */
    bool device;
    CUdeviceptr dev;
    unsigned char *host;
    size_t pitch, height; /* row pitch; rows per slice */
} fc_end;

typedef struct fc_copy {
    fc_end dst, src;
    size_t width, rows, depth;
    void *staging; /* owned snapshot of a host source, or NULL */
} fc_copy;

typedef struct fc_fill {
    CUdeviceptr dst;
    size_t pitch, width, height; /* width in elements */
    unsigned elem;               /* 1, 2 or 4 bytes */
    uint32_t value;
} fc_fill;

typedef struct fc_kernel fc_kernel;

typedef struct fc_dims {
    unsigned gx, gy, gz, bx, by, bz;
} fc_dims;

/* A queued launch. Work items are copied by value, so the parameters are
   found through fc_kwork_params(), never through a pointer into the item. */
typedef struct fc_kwork {
    const fc_kernel *k;
    CUfunction func;  /* the handle the launch or node named, for graph nodes to report */
    bool by_kernel;   /* a node named it as a CUkernel (CUDA_KERNEL_NODE_PARAMS.kern) */
    bool cooperative; /* cuLaunchCooperativeKernel, or the cooperative launch attribute */
    fc_dims dims;
    unsigned smem;
    CUstream stream;     /* as the launch named it, for plugin kernels to see */
    size_t nbytes;       /* fc_kernel_param_bytes(k) */
    unsigned char *heap; /* owned; the parameters when nbytes > FC_INLINE_PARAM_BYTES */
    _Alignas(max_align_t) unsigned char params[FC_INLINE_PARAM_BYTES];
} fc_kwork;

static inline unsigned char *fc_kwork_params(fc_kwork *kw)
{
    return kw->heap ? kw->heap : kw->params;
}

typedef enum fc_work_kind {
    FC_W_KERNEL,
    FC_W_COPY,
    FC_W_FILL,
    FC_W_EVENT,
    FC_W_FREE,
    FC_W_FAULT,
    FC_W_HOST,
    FC_W_WAIT, /* async only: wait for another context's queue to reach seq (cuStreamWaitEvent) */
    FC_W_COND, /* a conditional graph node: reads its condition cell, runs a body (graph_exec.c) */
} fc_work_kind;

typedef struct fc_host_call { /* cuLaunchHostFunc, or cuStreamAddCallback when callback is set */
    CUhostFn fn;
    CUstreamCallback callback;
    CUstream stream;
    void *user;
} fc_host_call;

typedef struct fc_body fc_body; /* a body graph's work, in a topological order (graph_exec.c) */

typedef struct fc_cond {
    CUdeviceptr cell; /* the handle: a 4-byte condition cell in device memory */
    CUgraphConditionalNodeType type;
    unsigned nbody;
    fc_body *body;   /* owned: nbody bodies */
    CUstream stream; /* as the graph launch named it, for the bodies' kernels */
} fc_cond;

struct fc_work {
    fc_work_kind kind;
    bool fault; /* injected: executing it destroys the context */
    uint64_t seq;
    union {
        fc_kwork kernel;
        fc_copy copy;
        fc_fill fill;
        struct {
            CUevent e;
        } event;
        CUdeviceptr free;
        fc_host_call host;
        struct {
            CUcontext ctx;
            uint64_t seq;
        } wait; /* holds one of ctx's xrefs */
        fc_cond cond;
    } u;
};

typedef struct fc_nodes {
    CUgraphNode *v;
    size_t n, cap;
} fc_nodes; /* a list of graph nodes */

typedef struct fc_capture fc_capture; /* a capture sequence (capture.c) */

typedef struct fc_stream_cap { /* a stream's part in stream capture, under capture.c's lock */
    fc_capture *seq;           /* the sequence it captures into; NULL: not capturing */
    fc_nodes deps;             /* what its next captured work depends on */
    CUgraphEdgeData *edges;    /* zeros for cuStreamGetCaptureInfo_v3 */
    size_t nedges;
} fc_stream_cap;

struct CUstream_st {
    fc_obj hdr;
    unsigned flags;
    int priority;
    uint64_t last_seq; /* under the owner's queue lock */
    fc_stream_cap cap;
};

struct CUevent_st {
    fc_obj hdr;
    unsigned flags;
    _Atomic uint64_t seq;     /* item that records it; 0: never recorded */
    _Atomic uint64_t done_ns; /* when it ran; 0: not yet */
    uint64_t cap_id;          /* the capture it was last recorded in; 0: none (capture.c's lock) */
    fc_nodes cap_deps;        /* that stream's dependencies then */
};

/* FAKECUDA_SCHEDULE: true for async (the default), false for sync. */
bool fc_schedule_async(void);
/* Whether the calling thread is a context's worker (async mode). */
bool fc_on_worker(void);
CUresult fc_queue_init(fc_queue *q);
/* Stops and joins ctx's worker (its work already drained), waits until no
   other context's queued wait names it, then frees the queue. */
void fc_queue_fini(CUcontext ctx);
/* Process exit: every worker stops at its next item boundary; it is joined
   unless the exiting thread was interrupted inside an entry point. */
void fc_queue_shutdown(bool inside_a_call);
CUresult fc_resolve_stream(CUstream s, CUcontext *ctx, CUstream *st);
bool fc_is_default_stream(CUstream s);
CUresult fc_drain(CUcontext ctx, uint64_t target);
CUresult fc_drain_all(CUcontext ctx);
CUresult fc_submit(CUcontext ctx, CUstream s, fc_work *w, bool sync);
CUresult fc_submit_async(CUstream s, fc_work *w);
void fc_work_discard(fc_work *w);
CUresult fc_work_clone(fc_work *dst, const fc_work *src);
/* Runs one item now, on the thread that holds q's exec mutex, and discards it. */
void fc_work_run(fc_queue *q, fc_work *w);

CUresult fc_stream_create(CUstream *ps, unsigned flags, int priority);
int fc_priority_clamp(int priority);
CUresult fc_ctx_priority_range(int *least, int *greatest);
CUresult fc_stream_get(CUstream s, int *priority, unsigned *flags);
CUresult fc_stream_destroy(CUstream s);
CUresult fc_stream_sync(CUstream s);
CUresult fc_stream_query(CUstream s);
CUresult fc_event_query(CUevent e);
CUresult fc_stream_wait_event(CUstream s, CUevent e, unsigned flags);
CUresult fc_event_create(CUevent *pe, unsigned flags);
CUresult fc_event_record(CUevent e, CUstream s);
CUresult fc_event_record_with_flags(CUevent e, CUstream s, unsigned int flags);
CUresult fc_event_sync(CUevent e);
CUresult fc_event_destroy(CUevent e);
CUresult fc_event_elapsed(float *ms, CUevent a, CUevent b);
CUresult fc_launch_host_func(CUstream s, CUhostFn fn, void *user);
CUresult fc_stream_add_callback(CUstream s, CUstreamCallback cb, void *user, unsigned flags);

/* ---- copies and memsets (copy.c) --------------------------------------- */

CUresult fc_copy_linear(CUdeviceptr dst, bool dst_dev, CUdeviceptr src, bool src_dev, size_t n, CUstream s, bool async);
CUresult fc_copy_auto(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, bool async);
CUresult fc_copy_3d(const CUDA_MEMCPY3D *p, CUstream s, bool async);
CUresult fc_copy_2d(const CUDA_MEMCPY2D *p, CUstream s, bool async);
CUresult fc_copy_2d_v1(const CUDA_MEMCPY2D_v1 *p, CUstream s, bool async);
CUresult fc_copy_3d_v1(const CUDA_MEMCPY3D_v1 *p, CUstream s, bool async);
CUresult fc_copy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s,
                      bool async);
CUresult fc_copy_3d_peer(const CUDA_MEMCPY3D_PEER *p, CUstream s, bool async);
CUresult fc_copy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs,
                       size_t *attrs_idxs, size_t n_attrs, size_t *fail_idx, CUstream s);
CUresult fc_copy_3d_batch(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, unsigned long long flags,
                          CUstream s);
CUresult fc_memset(CUdeviceptr dst, size_t pitch, uint32_t value, unsigned elem, size_t width, size_t height,
                   CUstream s, bool async);
CUresult fc_run_copy(fc_copy *c);
CUresult fc_run_fill(const fc_fill *f);
CUresult fc_copy_check(const fc_copy *c);
bool fc_copy_src_pinned(const fc_copy *c);
/* The host destination is pageable memory (neither pinned nor registered). */
bool fc_copy_dst_pageable(const fc_copy *c);
CUresult fc_copy_stage(fc_copy *c);
CUresult fc_copy_from_3d(fc_copy *c, const CUDA_MEMCPY3D *p);
CUresult fc_fill_make(fc_fill *f, CUdeviceptr dst, size_t pitch, uint32_t value, unsigned elem, size_t width,
                      size_t height);
void fc_copy_to_3d(const fc_copy *c, CUDA_MEMCPY3D *p);

/* Entry-point shorthands for the two directions a linear copy can take. */
#define FC_H(p) ((CUdeviceptr)(uintptr_t)(p))

/* ---- module and library images (image.c) ------------------------------ */

typedef struct fc_names {
    char *text; /* owned */
    size_t len, cap;
} fc_names;

typedef struct fc_image {
    bool read;            /* a wrapper, container, cubin or PTX text, read whole */
    bool runs;            /* (read) it has SASS the device runs or PTX it can compile */
    unsigned char *holds; /* owned; holds[i]: known kernel i is in it; NULL: every kernel */
    char *ptx;            /* owned, NUL-terminated: the PTX text the executor runs (FAKECUDA_PTX), or NULL */
    size_t ptx_len;
    fc_names names;      /* the kernels it holds: each name NUL-terminated, back to back */
    fc_names vars;       /* its cubin's variables: each name NUL-terminated, then its u64 size */
    bool names_complete; /* (read) names and vars list every kernel and variable */
} fc_image;

/* An image given by address (a bogus address is an image not read). */
void fc_image_read_memory(fc_image *img, const void *image);
/* An image file; CUDA_ERROR_FILE_NOT_FOUND when it cannot be read. */
CUresult fc_image_read_file(fc_image *img, const char *path);
/* The n bytes at src, copied (owned by the caller); NULL unless all are readable. */
unsigned char *fc_image_copy_in(const void *src, size_t n);
/* n bytes at data, copied in whole; false when they are not all readable. */
bool fc_image_read_bytes(fc_image *img, const void *data, size_t n);
void fc_image_drop(fc_image *img);

/* ---- the linker (link.c) ----------------------------------------------- */

struct CUlinkState_st {
    fc_obj hdr;
    unsigned char *holds; /* owned; the union of the inputs' kernels (fc_image.holds) */
    bool every;           /* an input fakecuda does not read: every known kernel */
    size_t inputs;        /* inputs added */
    char *ptx;            /* owned; the first PTX input defining a kernel, NUL-terminated; or NULL */
    unsigned char *image; /* owned; what cuLinkComplete made last; NULL before */
    size_t image_size;
    char *error_log; /* the caller's CU_JIT_ERROR_LOG_BUFFER, or NULL */
    size_t error_log_size;
};

CUresult fc_link_create(unsigned nopt, CUjit_option *opt, void **val, CUlinkState *out);
CUresult fc_link_add_data(CUlinkState st, CUjitInputType type, void *data, size_t size, const char *name, unsigned nopt,
                          CUjit_option *opt, void **val);
CUresult fc_link_add_file(CUlinkState st, CUjitInputType type, const char *path, unsigned nopt, CUjit_option *opt,
                          void **val);
CUresult fc_link_complete(CUlinkState st, void **cubin, size_t *size);
CUresult fc_link_destroy(CUlinkState st);

/* ---- modules, libraries, functions (modules.c) ------------------------- */

#define FC_SCRATCH_BYTES 4096u /* every module's global "scratch" (modules.c) */

struct CUfunc_st { /* a CUfunction, or a CUkernel (kind FC_K_KERNEL) */
    fc_obj hdr;
    struct CUmod_st *owner;
    const fc_kernel *k;
    int max_dyn_smem;
    int non_portable_cluster; /* CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, kept */
    atomic_bool loaded;       /* cuFuncLoad or a launch needed its code (lazy loading) */
};

struct CUmod_st { /* a CUmodule, or a CUlibrary (kind FC_K_LIBRARY) */
    fc_obj hdr;
    struct CUfunc_st **entry;   /* owned; [i] function, [n + i] kernel handle of
                                 kernel i of the n known ones; made on request */
    unsigned char *holds;       /* owned; the image's kernels (fc_image.holds); NULL: every one */
    bool eager;                 /* loaded with CUDA_MODULE_LOADING=EAGER: its functions are loaded */
    CUresult lookup_error;      /* what every lookup answers (lazy: an image the device */
    CUresult launch_error;      /* cannot run), what every launch answers; else CUDA_SUCCESS */
    CUdeviceptr scratch;        /* the module's global "scratch"; 0 until asked for */
    struct fc_ptx_image *ptx;   /* owned: the kernels and variables of its PTX (ptx_module.c), or NULL */
    fc_names names, vars;       /* owned: its image's (fc_image) */
    bool names_complete;        /* they list every kernel and variable of its image */
    struct fc_nowrite *nowrite; /* owned: its kernels without code run as no-ops (sass.c) */
};

CUresult fc_module_load_file(CUmodule *m, const char *path);
CUresult fc_module_load_image(CUmodule *m, const void *image);
CUresult fc_module_unload(CUmodule m);
void fc_module_release(void *m);
CUresult fc_module_get_function(CUfunction *f, CUmodule m, const char *name);
size_t fc_module_each_function(CUmodule m, void (*each)(void *arg, CUfunction f), void *arg);
CUresult fc_library_load(CUlibrary *l, const void *code);
CUresult fc_library_load_file(CUlibrary *l, const char *path);
CUresult fc_library_unload(CUlibrary l);
CUresult fc_library_get_kernel(CUkernel *k, CUlibrary l, const char *name);
CUresult fc_kernel_get_function(CUfunction *f, CUkernel k);
CUresult fc_kernel_get_name(const char **name, CUkernel k);
CUresult fc_func_get_name(const char **name, CUfunction f);
CUresult fc_func_param_info(CUfunction f, size_t i, size_t *off, size_t *size);
CUresult fc_func_get_attribute(int *v, CUfunction_attribute a, CUfunction f);
CUresult fc_func_set_attribute(CUfunction f, CUfunction_attribute a, int v);
CUresult fc_kernel_set_attribute(CUfunction_attribute a, int v, CUkernel k);
CUresult fc_func_load(CUfunction f);
CUresult fc_func_is_loaded(CUfunctionLoadingState *state, CUfunction f);
struct CUfunc_st *fc_func_resolve(CUfunction f);
CUresult fc_module_get_global(CUdeviceptr *dptr, size_t *bytes, CUmodule m, const char *name, bool legacy);
CUresult fc_library_get_global(CUdeviceptr *dptr, size_t *bytes, CUlibrary l, const char *name);

/* ---- the PTX executor's kernels (ptx_module.c, ptx/) ------------------- */

bool fc_ptx_on(void);
void fc_ptx_attach(struct CUmod_st *mod, const fc_image *img);
void fc_ptx_detach(struct CUmod_st *mod);
void fc_ptx_free_handles(struct CUmod_st *mod); /* its PTX kernels' handles (cuModuleUnload) */
/* The handle slot and description of the module's PTX kernel name; NULL if none. */
struct CUfunc_st **fc_ptx_slot(struct CUmod_st *mod, const char *name, bool kernel_handle, const fc_kernel **k);
bool fc_ptx_global(struct CUmod_st *mod, const char *name, CUdeviceptr *p, size_t *size);

/* ---- kernels without code: FAKECUDA_SASS (sass.c) ---------------------- */

/* FAKECUDA_SASS=nowrite: a kernel without a built-in, a plugin or PTX
   launches, succeeds and writes nothing; fail (the default) refuses it. */
bool fc_sass_nowrite(void);
/* The handle slot and description of the module's kernel name run as a
   no-op under FAKECUDA_SASS=nowrite; NULL when that is off or the image
   does not name it. */
struct CUfunc_st **fc_nowrite_slot(struct CUmod_st *mod, const char *name, bool kernel_handle, const fc_kernel **k);
/* Under FAKECUDA_SASS=nowrite, a variable of the module's cubin, placed
   zeroed in device memory at its first request; CUDA_ERROR_NOT_FOUND else. */
CUresult fc_nowrite_global(struct CUmod_st *mod, const char *name, CUdeviceptr *at, size_t *size);
void fc_nowrite_detach(struct CUmod_st *mod);

/* ---- the built-in kernel library (kernels.c) --------------------------- */

typedef struct fc_param {
    uint32_t offset, size;
} fc_param;

/* A known kernel: a built-in (run) or a plugin's (host). */
struct fc_kernel {
    const char *name;
    CUresult (*run)(const void *params, uint64_t threads); /* NULL for a plugin kernel */
    unsigned nparams;
    const fc_param *param;
    fakecuda_kernel_fn host;
    void *user;
    const char *origin; /* the plugin's path; NULL for a built-in */
};

#define FC_NKERNELS 9 /* entries of the built-in kernel library */

extern const fc_kernel fc_kernels[FC_NKERNELS];

/* ---- the kernel registry and kernel plugins (plugins.c) ---------------- */

bool fc_plugins_load(void);
unsigned fc_kernel_count(void);
const fc_kernel *fc_kernel_at(unsigned i);
const fc_kernel *fc_kernel_find(const char *name, unsigned *index);
size_t fc_kernel_param_bytes(const fc_kernel *k);
CUresult fc_kernel_run(fc_kwork *kw);

/* ---- launches (launch.c) ----------------------------------------------- */

CUresult fc_kernel_work(fc_work *w, CUfunction f, fc_dims d, unsigned smem, void **params, void **extra,
                        bool cooperative);
CUresult fc_launch(CUfunction f, fc_dims d, unsigned smem, CUstream s, void **params, void **extra, bool cooperative);
CUresult fc_launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra);
/* Occupancy on fakecuda's device: 8 SMs of 2048 threads, 32 blocks and
   228 KiB of shared memory each. */
CUresult fc_occupancy_blocks(int *n, CUfunction f, int block_size, size_t smem);
CUresult fc_occupancy_block_size(int *grid, int *block_size, CUfunction f, CUoccupancyB2DSize b2d, size_t smem,
                                 int limit);
CUresult fc_occupancy_dyn_smem(size_t *bytes, CUfunction f, int num_blocks, int block_size);
CUresult fc_occupancy_clusters(int *n, CUfunction f, const CUlaunchConfig *cfg);
/* cuFuncSetCacheConfig / cuFuncSetSharedMemConfig: checked, then ignored. */
CUresult fc_func_set_config(CUfunction f, int v, int max);

/* ---- graphs (graph.c) and executable graphs (graph_exec.c) ------------- */

bool fc_nodes_add(fc_nodes *l, CUgraphNode n);
bool fc_nodes_has(const fc_nodes *l, CUgraphNode n);
bool fc_nodes_remove(fc_nodes *l, CUgraphNode n);
bool fc_nodes_set(fc_nodes *l, const CUgraphNode *v, size_t n);
void fc_nodes_free(fc_nodes *l);

typedef struct fc_cond_handle { /* cuGraphConditionalHandleCreate */
    CUdeviceptr cell;           /* the handle; held until its context goes */
    unsigned value;             /* defaultLaunchValue */
    bool reset;                 /* CU_GRAPH_COND_ASSIGN_DEFAULT: value stored at each launch */
} fc_cond_handle;

struct CUgraph_st {
    fc_obj hdr;
    fc_nodes nodes;          /* in creation order */
    CUgraphNode owner;       /* a conditional node's body: that node, which destroys it */
    fc_cond_handle *handles; /* created on this graph; owned */
    size_t nhandles;
    bool capturing; /* a capture is building it: not destroyed, instantiated or pruned */
};

struct CUgraphNode_st {
    fc_obj hdr;
    CUgraph graph;
    CUgraphNodeType type;
    uint64_t serial;                   /* unique in the process: executable graphs name their origins by it */
    uint64_t origin;                   /* a clone's node: the serial of the node it copies; else 0 */
    fc_nodes deps;                     /* the nodes it depends on, each once */
    fc_work op;                        /* what it runs (kernel, copy, fill, host function); owned */
    void **argv;                       /* a kernel's kernelParams, into op's parameters (GetParams reports them) */
    CUDA_CONDITIONAL_NODE_PARAMS cond; /* a conditional node: phGraph_out is body[], owned */
    size_t index;                      /* scratch: its position in graph->nodes where that is computed
                              (outside a capture, under fc_graph_index_lock) */
};

typedef struct fc_exec_node {
    uint64_t serial; /* of the node it was instantiated from */
    CUgraphNodeType type;
    fc_work op;          /* owned */
    size_t *deps, ndeps; /* its dependencies, as positions in creation order */
} fc_exec_node;

struct CUgraphExec_st {
    fc_obj hdr;
    fc_exec_node *node; /* in the graph's creation order */
    size_t n;
    size_t *order; /* a topological order of node */
    cuuint64_t flags;
    fc_cond_handle *resets; /* the graph's handles with CU_GRAPH_COND_ASSIGN_DEFAULT; owned */
    size_t nresets;
};

/* Held while a node's index scratch is written and read: instantiating,
   updating from or cloning one graph in several threads at once only
   reads the graph but for that scratch. */
void fc_graph_index_lock(void);
void fc_graph_index_unlock(void);
CUresult fc_graph_create(CUgraph *g, unsigned flags);
CUresult fc_graph_destroy(CUgraph g);
CUresult fc_graph_clone(CUgraph *out, CUgraph g);
CUresult fc_graph_find_in_clone(CUgraphNode *out, CUgraphNode original, CUgraph clone);
CUresult fc_graph_add(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n, CUgraphNodeType type,
                      fc_work *op);
CUresult fc_graph_add_kernel(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                             const CUDA_KERNEL_NODE_PARAMS *p);
CUresult fc_graph_add_kernel_v1(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                                const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult fc_graph_add_memcpy(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n, const CUDA_MEMCPY3D *p,
                             CUcontext ctx);
CUresult fc_graph_add_memset(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                             const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx);
CUresult fc_graph_add_host(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                           const CUDA_HOST_NODE_PARAMS *p);
CUresult fc_graph_add_empty(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n);
CUresult fc_graph_add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,
                           CUgraphNodeParams *p);
CUresult fc_graph_edges_change(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *edges,
                               size_t n, bool add);
CUresult fc_graph_get_nodes(CUgraph g, CUgraphNode *out, size_t *num, bool roots_only);
CUresult fc_graph_get_edges(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *edges, size_t *num);
CUresult fc_node_get_deps(CUgraphNode n, CUgraphNode *out, CUgraphEdgeData *edges, size_t *num, bool dependents);
CUresult fc_node_get_type(CUgraphNode n, CUgraphNodeType *type);
CUresult fc_node_destroy(CUgraphNode n);
CUresult fc_node_kernel_get(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS *p);
CUresult fc_node_kernel_get_v1(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult fc_node_memcpy_get(CUgraphNode n, CUDA_MEMCPY3D *p);
CUresult fc_node_memset_get(CUgraphNode n, CUDA_MEMSET_NODE_PARAMS *p);
CUresult fc_node_host_get(CUgraphNode n, CUDA_HOST_NODE_PARAMS *p);
CUresult fc_node_set(CUgraphNode n, CUgraphNodeType type, const void *params, bool v1);
CUresult fc_node_set_params(CUgraphNode n, CUgraphNodeParams *p);

/* The typed parameters a generic CUgraphNodeParams carries. */
typedef union fc_node_params {
    CUDA_KERNEL_NODE_PARAMS kernel;
    CUDA_MEMCPY3D copy;
    CUDA_MEMSET_NODE_PARAMS memset;
    CUDA_HOST_NODE_PARAMS host;
} fc_node_params;

CUresult fc_node_params_from(const CUgraphNodeParams *p, fc_node_params *out);
/* The work of a node of this type from its parameters (v1: CUDA_KERNEL_NODE_PARAMS_v1). */
CUresult fc_node_op(fc_work *op, CUgraphNodeType type, const void *params, bool v1);
CUgraphNode fc_node_resolve(CUgraphNode n);
CUresult fc_graph_check_deps(CUgraph g, const CUgraphNode *deps, size_t n);
bool fc_edges_default(const CUgraphEdgeData *e, size_t n);
CUresult fc_check_node_ctx(CUcontext ctx);

CUresult fc_graph_instantiate(CUgraphExec *out, CUgraph g, cuuint64_t flags, CUDA_GRAPH_INSTANTIATE_PARAMS *p);
CUresult fc_graph_instantiate_v1(CUgraphExec *out, CUgraph g, CUgraphNode *err, char *log, size_t log_size);
CUresult fc_graph_instantiate_params(CUgraphExec *out, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p);
CUresult fc_graph_launch(CUgraphExec e, CUstream s);
CUresult fc_graph_upload(CUgraphExec e, CUstream s);
CUresult fc_graph_exec_destroy(CUgraphExec e);
CUresult fc_graph_exec_flags(CUgraphExec e, cuuint64_t *flags);
CUresult fc_exec_set(CUgraphExec e, CUgraphNode n, CUgraphNodeType type, const void *params, bool v1);
CUresult fc_exec_set_in(CUgraphExec e, CUgraphNode n, CUgraphNodeType type, const void *params, CUcontext ctx);
CUresult fc_exec_set_params(CUgraphExec e, CUgraphNode n, CUgraphNodeParams *p);
CUresult fc_graph_exec_update(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info);
CUresult fc_graph_exec_update_v1(CUgraphExec e, CUgraph g, CUgraphNode *err, CUgraphExecUpdateResult *res);
/* conditional nodes (graph.c makes them, graph_exec.c runs them) */
CUresult fc_cond_handle_create(CUgraphConditionalHandle *out, CUgraph g, CUcontext ctx, unsigned value, unsigned flags);
CUresult fc_cond_clone(fc_cond *dst, const fc_cond *src);
void fc_cond_discard(fc_cond *c);
CUresult fc_cond_run(fc_queue *q, const fc_cond *c);

/* ---- stream capture (capture.c) ----------------------------------------- */

CUresult fc_capture_begin(CUstream s, CUstreamCaptureMode mode);
CUresult fc_capture_begin_to(CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,
                             CUstreamCaptureMode mode);
CUresult fc_capture_end(CUstream s, CUgraph *out);
CUresult fc_capture_info(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                         const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *num);
CUresult fc_capture_update_deps(CUstream s, CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n, unsigned flags);
CUresult fc_capture_exchange_mode(CUstreamCaptureMode *mode);
/* The hooks of the rest of fakecuda (s as the call named it, validated). */
bool fc_capturing(CUstream s);
bool fc_capture_take(CUcontext ctx, CUstream s, fc_work *w, bool sync, CUresult *r);
CUresult fc_capture_refuse(CUcontext ctx, CUstream s);
CUresult fc_capture_sync_ctx(CUcontext ctx);
CUresult fc_capture_unsafe(void);
bool fc_capture_event_record(CUcontext ctx, CUstream s, CUevent e, CUresult *r);
CUresult fc_capture_event_wait(CUcontext ctx, CUstream s, CUevent e, unsigned flags);
CUresult fc_capture_event_check(CUevent e);
void fc_capture_stream_gone(void *stream);
void fc_capture_event_gone(void *event);

/* ---- fault injection (faults.c) ---------------------------------------- */

typedef struct fc_action {
    CUresult code;
    bool fault;
} fc_action;

void fc_faults_load(void);
fc_action fc_faults_api(const fc_api_row *row);
fc_action fc_faults_launch(const char *kernel);
fc_action fc_faults_alloc(void);
void fc_fault_pending_set(bool on);
bool fc_fault_pending_take(void);

/* ---- entry points (procaddr.c) ----------------------------------------- */

CUresult fc_get_proc_address(const char *sym, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status);

/* ---- the runtime's private tables (private.c) -------------------------- */

/* caller: the return address of cuGetExportTable, to name who asked. */
CUresult fc_get_export_table(const void **table, const CUuuid *id, const void *caller);
/* Runs the context's local-storage destructors; context.c calls it before freeing ctx. */
void fc_ctx_storage_drop(CUcontext ctx);

/* ---- what NVIDIA's runtime needs at start (runtime.c) ------------------ */

CUresult fc_device_uuid(CUuuid *uuid, CUdevice d);
CUresult fc_ctx_api_version(CUcontext c, unsigned *version);
CUresult fc_module_loading_mode(CUmoduleLoadingMode *mode);
bool fc_loading_eager(void);

/* ---- the profiler control calls (profiler.c) --------------------------- */

CUresult fc_profiler_start(void);
CUresult fc_profiler_stop(void);

#endif

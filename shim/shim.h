/*
 * shim.h - what the parts of the interposer share.
 *
 * The shim only translates driver calls into core operations (core/taint.h)
 * and questions (core/rules.h: what a read refuses and poisons, when work is
 * skipped) and back; every decision about taint lives in core, which knows
 * no CUDA (error codes reach it as integers).  Its files:
 *   driver.c    the real libcuda: handle, real dlsym, the slot of each real function
 *   wrappers.c  every exported cu* wrapper, generated from intercept.def
 *   libcalls.c  the CUDA libraries' wrappers (cuBLAS, cuRAND, ...), from libcalls.def
 *   regions.c   include/cutaint.h's entry points: a pool's tensors, said
 *   memory.c    allocations, frees, host writes, reads, device copies
 *   settle.c    what a call's end does: write scopes closed, refused launches, skips
 *   kernels.c   the kernel registry: names, parameter layouts and roles of handles
 *   launch.c    kernel launches: bindings, skips, launch numbers
 *   scratch.c   each thread's room for the unusual paths, allocated on first use
 *   inflight.c  work in flight and what proved it finished: a loss's suspects
 *   images.c    kernel images the driver refused: read and said
 *   standins.c  the handles made up for the runtime's refused images
 *   graphs.c    stream capture; executable graphs' read and write sets, checked at launch
 *   context.c   each thread's current context; what a context takes when it goes
 *   dlsym.c     the dlsym override and the real dlsym (built uninstrumented)
 *   chain.c     beside other interposers: the next function, the load order
 *   entry.c     the cuGetProcAddress wrappers
 *   fault.c     probe, latch, exit status, health file
 *   events.c    report events, each said in the log
 *   log.c       log lines, the stderr and log sinks, what every sink shares
 *   errnames.c  CUresult names and the error vocabulary core's CUTAINT_INJECT
 *               grammar is handed (core knows no CUDA)
 *   metrics.c   CUTAINT_METRICS_FILE, rewritten at each event
 *   init.c      configuration, start-up, fork and exit handling
 *
 * Invariants every file keeps:
 * - No lock is held across a real driver call; core's mutex is taken and
 *   released inside each core call.
 * - The happy path makes no system call, no heap allocation and no getenv
 *   (configuration is read once, at load).
 * - A device pointer is a number: the shim never dereferences one.
 * - The shim never calls its own exported wrappers: real functions only.
 * Asserted in: driver.c, entry.c.
 */
#ifndef CT_SHIM_H
#define CT_SHIM_H

/* The driver's own view of cuda.h: every entry point under its real name,
 * legacy prototypes included, and none of the renaming macros. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "config.h"
#include "files.h"
#include "hot_tls.h"
#include "latch.h"
#include "lifetimes.h"
#include "metrics.h"
#include "reported.h"
#include "rules.h"
#include "scope.h"
#include "summary.h"
#include "taint.h"

#define CT_EXPORT __attribute__((visibility("default")))
/* The library's own data its hot paths read: addressed straight, not
 * through the GOT. */
#define CT_HIDDEN __attribute__((visibility("hidden")))
#define CT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- the table ------------------------------------------------------- */
enum ct_entry_id {
#define CT_WRAP(name, ...) CT_ID_##name,
#define CT_PTDS(name, ...) CT_ID_##name, CT_ID_##name##_ptds,
#define CT_PTSZ(name, ...) CT_ID_##name, CT_ID_##name##_ptsz,
#include "intercept.def"
#undef CT_WRAP
#undef CT_PTDS
#undef CT_PTSZ
    CT_ID_cuGetProcAddress,
    CT_ID_cuGetProcAddress_v2,
    CT_N_ENTRIES
};

typedef struct ct_entry {
    const char *name;   /* exported name */
    const char *family; /* name without version or stream suffix */
    void *wrapper;      /* cutaint's function of that name */
    bool per_thread;    /* a _ptsz or _ptds twin: stream 0 is the per-thread default stream */
} ct_entry;

extern const ct_entry ct_entries[CT_N_ENTRIES];
/* Index of an exported name in ct_entries, or -1. */
int ct_entry_find(const char *name);

/* ---- the real driver (driver.c) --------------------------------------- */
/* Driver functions the shim calls for itself without wrapping them, each
 * given a slot after the table's, so that they too are looked up once. */
/* An X-macro table, laid out by hand: */
/* clang-format off */
#define CT_HELPERS(X)                                                                      \
    X(cuCtxGetCurrent) X(cuPointerGetAttribute) X(cuFuncGetName) X(cuFuncGetParamInfo)    \
    X(cuDevicePrimaryCtxGetState) X(cuDevicePrimaryCtxRetain)                              \
    X(cuStreamIsCapturing) X(cuGraphGetNodes) X(cuGraphNodeGetType) X(cuGraphNodeGetDependencies)                          \
    X(cuGraphKernelNodeGetParams_v2) X(cuGraphMemcpyNodeGetParams) X(cuGraphMemsetNodeGetParams)         \
    X(cuCtxGetDevice) X(cuDeviceGetAttribute) X(cuDeviceGetName) X(cuModuleGetLoadingMode)
/* clang-format on */
enum ct_helper_id {
    CT_HELPER_BEFORE_FIRST = CT_N_ENTRIES - 1,
#define CT_HELPER_ID(name) CT_HELPER_##name,
    CT_HELPERS(CT_HELPER_ID)
#undef CT_HELPER_ID
        CT_N_SLOTS
};
/* The real function of an entry or a helper, resolved on first use and
 * remembered (missing ones too); NULL if the driver lacks it or cannot be
 * loaded.  Inline: every wrapper asks, and once resolved it is one load
 * (driver.c owns the slots; ct_real_resolve fills one). */
#define CT_MISSING ((void *)1) /* a slot's function the driver lacks */
extern CT_HIDDEN _Atomic(void *) ct_slots[CT_N_SLOTS];
void *ct_real_resolve(int id);
static inline void *ct_real(int id)
{
    void *fn = atomic_load_explicit(&ct_slots[id], memory_order_acquire);
    if (CT_UNLIKELY(!fn))
        return ct_real_resolve(id);
    return fn == CT_MISSING ? NULL : fn;
}
/* A helper, typed as cuda.h declares it (NULL if missing):
 *   __typeof__(&cuCtxGetCurrent) get = CT_HELPER(cuCtxGetCurrent); */
#define CT_HELPER(name) ((__typeof__(&name))ct_real(CT_HELPER_##name))
/* The driver's own function for an entry, whoever stands in front of it. */
void *ct_real_own(int id);
/* glibc's dlsym, found with dlvsym past this library: the true answer. */
void *ct_real_dlsym(void *handle, const char *name);
/* The answer of the next dlsym after this library: another interposer's
 * override when one is loaded after us, else glibc's. */
void *ct_chain_dlsym(void *handle, const char *name);
/* Find (once) and return the real dlsym; safe before any constructor ran. */
void *ct_find_next_dlsym(void);
/* cu[A-Z]...: the only names the dlsym hook looks at twice. */
static inline bool ct_looks_like_driver_name(const char *name)
{
    return name && name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z';
}
/* Is addr inside the loaded libcuda?  (dladdr) */
bool ct_in_driver(const void *addr);
/* cublas..., curand..., cufft..., cusolver..., cusparse...: the names the
 * dlsym hook looks up among the libraries' wrappers (libcalls.c). */
static inline bool ct_looks_like_library_name(const char *name)
{
    return name && name[0] == 'c' && name[1] == 'u' &&
           (strncmp(name + 2, "blas", 4) == 0 || strncmp(name + 2, "rand", 4) == 0 ||
            strncmp(name + 2, "fft", 3) == 0 || strncmp(name + 2, "s", 1) == 0);
}
/* The wrapper of a library entry point shim/libcalls.def names, or NULL. */
void *ct_lib_wrapper_find(const char *name);

/* ---- chain.c: beside another interposer ------------------------------- */
/* The function a wrapper of `name` calls: another interposer's, when one is
 * loaded after libcutaint.so and defines or hooks the name (through its
 * exports or its dlsym), else the driver's own.  NULL if neither has it. */
void *ct_chain_resolve(void *driver_handle, const char *name);
/* Is addr inside libcutaint.so? */
bool ct_in_self(const void *addr);
/* Once per program, when it first reaches the driver: say so when another
 * library ahead of libcutaint.so defines driver entry points or dlsym. */
void ct_chain_check_order(void);
/* The file name of a library loaded ahead of libcutaint.so that defines a
 * driver entry point cutaint wraps, or dlsym; NULL when none.  Looked up
 * once (every name), then remembered. */
const char *ct_chain_library_ahead(void);
/* At exit, when no driver call reached cutaint: if the loaded driver says
 * it was used anyway (core's ct_bypass_rule), write the start event, say
 * once that the process ran unprotected and mark it (ct_g.unprotected). */
void ct_chain_check_bypass(void);
/* From the constructor, on the main thread: ask the driver again as exit
 * begins, before any exit handler (ct_chain_check_bypass decides). */
void ct_chain_arm_bypass_check(void);
/* Has a real driver been loaded? Triggers the load on first call. */
bool ct_driver_loaded(void);
/* In a forked child: empty the slots, so the child's first call of each
 * entry point is seen (ct_reached_driver) before it runs. */
void ct_driver_atfork_child(void);
/* Was a real driver loaded by this very process (not a fork's parent)?
 * Never triggers the load. */
bool ct_driver_used_here(void);
/* The CUresult to hand back when no real function exists. */
#define CT_NO_DRIVER_RESULT CUDA_ERROR_NO_DEVICE

/* ---- shared state (init.c) -------------------------------------------- */
typedef struct ct_shim {
    atomic_int ready; /* 0 not yet, 1 initialising, 2 ready */
    ct_config cfg;
    ct_store *store;
    const struct ct_summary *summary; /* the store's (ct_store_summary), for inline looks */
    ct_scope_gate scope_gate;         /* the store's (ct_store_scope_gate), for inline scopes */
    struct ct_flight *flight;         /* work in flight and its proofs (core/flight.h) */
    ct_reported_set *reported;        /* devInfo results waiting for a synchronous read (libcalls.c) */
    struct ct_lifetimes *contexts;    /* context handles' lifetimes: what allocations, kernels
                                         and execs belong to (core/lifetimes.h) */
    struct ct_lifetimes *images;      /* module and library handles' lifetimes: what kernels
                                         and read images belong to */
    struct ct_lifetimes *execs;       /* graph exec handles' lifetimes: their exec sets */
    struct ct_lifetimes *events;      /* event handles' lifetimes: their records (inflight.c) */
    struct ct_lifetimes *streams;     /* created streams' lifetimes: their flags (inflight.c) */
    ct_latch *latch;
    atomic_bool exiting;              /* exit() has begun: teardown errors are not faults */
    atomic_bool simulated_loss;       /* CUTAINT_INJECT simulated a destroyed context */
    atomic_bool exit_interrupted;     /* exit() began inside a wrapper on its thread (a signal
                                     handler, a driver callback): locks are only tried */
    atomic_bool exit_check_skipped;   /* ... so the check at exit did not ask the driver */
    atomic_bool unprotected;          /* the driver was used, and no call of it reached cutaint */
    bool forked;                      /* this process is a fork child (set in the child at fork) */
    atomic_uint_fast64_t failures;    /* distinct failures minted */
    atomic_uint_fast64_t occurrences; /* failures including folded repeats */
    atomic_uint_fast64_t skips;
    atomic_uint_fast64_t retries; /* retries of refused launches that succeeded */
    atomic_uint_fast64_t refused_reads;
    atomic_uint_fast64_t failed_reads;    /* reads to the host the driver (or CUTAINT_INJECT) failed */
    atomic_uint_fast64_t unusable_images; /* image events: loads and lookups the driver refused */
} ct_shim;

extern CT_HIDDEN ct_shim ct_g;

/* ---- the calling thread's hot state ------------------------------------ */
/* The calling thread's current context as the id of its handle's lifetime
 * (ct_g.contexts), while known (context.c). */
typedef struct ct_context_mirror {
    uint64_t lifetime;
    bool known;
} ct_context_mirror;
/* The proofs of the context this thread's last synchronous copy proved,
 * kept (core's entry is the context's for the process's life): the next
 * copy on that context proves through it with no lookup (inflight.h). */
struct ct_flight_context_proofs;
typedef struct ct_kept_proofs {
    uint64_t context; /* 0: none kept */
    struct ct_flight_context_proofs *proofs;
} ct_kept_proofs;
/* What every wrapper of the calling thread may read, in one thread-local:
 * in a shared object each initial-exec thread-local costs a GOT load of
 * its offset, so a wrapper loads this one's once and reaches every field
 * from it. */
typedef struct ct_thread_state {
    /* How many wrappers the thread is inside (0 outside cutaint).  An exit
     * that starts with it above 0 interrupted cutaint or the driver on this
     * thread (a signal handler, a callback calling exit()): exit-time work
     * then takes no lock that code may hold and makes no driver call. */
    unsigned wrapper_depth;
    /* The epoch of the proof this thread's call in flight began (wrappers
     * do not nest on a thread, but for a driver callback, which proves
     * nothing). */
    uint64_t proof_upto;
    ct_kept_proofs kept_proofs;
    ct_context_mirror mirror;
    struct ct_flight_ring *ring; /* its launches' (inflight.c): NULL until its first */
    struct ct_scratch *scratch;  /* see ct_thread_scratch */
} ct_thread_state;
extern CT_HOT_TLS ct_thread_state ct_mine;
/* Make sure configuration is loaded: inline, once ready it is one load
 * and a test in every wrapper (ct_ensure_ready_slow loads it). */
void ct_ensure_ready_slow(void);
static inline void ct_ensure_ready(void)
{
    if (CT_UNLIKELY(atomic_load_explicit(&ct_g.ready, memory_order_acquire) != 2))
        ct_ensure_ready_slow();
}
/* The process has reached the driver (driver_version 0: none could be
 * loaded): the first call in each process writes the start event and opens
 * what the configuration names; later calls return at once.  Until then a
 * process writes nothing and creates no file. */
void ct_reached_driver(int driver_version);
/* Has a driver call reached cutaint in this process (the start event)? */
bool ct_was_reached(void);

/* ---- one intercepted call (wrappers.c) -------------------------------- */
#define CT_CALL_RANGES 64       /* rows a pitched copy is tracked by, at most */
#define CT_CALL_INLINE_RANGES 4 /* ... of which the call itself holds this many */

/* A write set's rows (memory.c): few in the call or the thread's scratch;
 * a tall shape's on the heap, freed when the call settles; past any room
 * the bounding span, which a failure taints and a success never releases
 * (precision lost, never soundness). */
typedef enum { CT_WRITES_ROOM, CT_WRITES_HEAP, CT_WRITES_SPAN } ct_writes_kind;

typedef struct ct_call {
    int id;
    CUresult result;
    bool tracked;       /* false: pure pass-through */
    bool answered;      /* cutaint produced result itself: no probe */
    bool injected;      /* CUTAINT_INJECT fired on this call */
    bool inject_loss;   /* ... and simulates a destroyed context */
    bool per_thread;    /* ct_entries[id].per_thread, a constant where it is set */
    const char *kernel; /* a launch's kernel, for the probe's reason */
    uint64_t subject;   /* the handle a destroy, unload or primary drop may end ... */
    uint64_t lifetime;  /* ... and its lifetime then (core/lifetimes.h) */
    ct_failure_id provisional;
    unsigned n_writes;   /* the write set of a copy or memset: its exact rows */
    ct_range *writes;    /* inline_writes, the thread's scratch, or the heap */
    uint8_t writes_kind; /* ct_writes_kind: where writes lives, what it may release */
    ct_range inline_writes[CT_CALL_INLINE_RANGES];
} ct_call;

/* Count this call against CUTAINT_INJECT's rules of `kind`; true when one
 * fires: call->result then holds the injected error, and the driver is not
 * called (the after hook settles the call as a failure).  Inline: with no
 * rule (production) every wrapper pays one load and a branch. */
bool ct_call_inject_rules(ct_call *call, ct_inject_kind kind, const char *name, const char *alt);
static inline bool ct_call_inject(ct_call *call, ct_inject_kind kind, const char *name, const char *alt)
{
    return ct_g.cfg.inject.n != 0 && ct_call_inject_rules(call, kind, name, alt);
}
void ct_after_plain(ct_call *call);

/* ---- settle.c: what a call's end does to taint, the counters and the report */
/* Settle a write scope entered with call->provisional: success releases w,
 * failure taints it with the real failure (reported on first occurrence).
 * Returns the failure id (0 on success). */
ct_failure_id ct_settle_writes(ct_call *call, const ct_range *w, size_t n, const ct_failure_desc *failed);
/* A launch the driver (or an injection) refused at once: its outputs w take
 * the failure, which keeps key for recognising a retry (core/taint.h). */
struct ct_kernel;
ct_failure_id ct_settle_refused_launch(ct_call *call, const ct_range *w, size_t n, const ct_range *in, size_t n_in,
                                       const ct_failure_desc *failed, const ct_launch_key *key,
                                       const struct ct_kernel *k);
/* Work skipped because an input carries `root`: w takes the same failure,
 * the skip is recorded and reported, and the call answered as
 * CUTAINT_ON_SKIP says.  skip carries kernel, launch and needed; the rest is
 * filled here. */
void ct_settle_skip(ct_call *call, ct_failure_id root, int error, ct_skip_desc *skip, const ct_range *w, unsigned n);
/* A failure description of this call with the caller's thread and time. */
ct_failure_desc ct_describe(const ct_call *call, CUresult error);

/* ---- regions.c: pools noticed -------------------------------------------- */
/* A new failure id of a launch writing out and reading in: watch each
 * allocation it covers from inside; true with *due when one already looks
 * like a pool (then said with the failure's event). */
bool ct_pool_failed(ct_failure_id id, const ct_range *out, size_t n_out, const ct_range *in, size_t n_in,
                    ct_pool_facts *due);
/* Pointers met on a path that decodes (a skip, a refused read, a launch
 * meeting taint), in one or two lists (b may be empty): a watched
 * allocation due is said (ct_event_pool). */
void ct_pool_met(const ct_range *a, size_t n_a, const ct_range *b, size_t n_b);

/* ---- scratch.c: each thread's room beyond the stack -------------------- */
#define CT_MAX_BINDINGS 256
/* Where a launch's pointer words are held: each word, its role, and the
 * words split into inputs and outputs (launch.c); cap words at most. */
typedef struct ct_words {
    ct_range *bound, *in, *out;
    uint8_t *roles;
    unsigned cap;
} ct_words;
typedef struct ct_scratch {
    ct_range bound[CT_MAX_BINDINGS]; /* a launch's pointer words (launch.c) */
    uint8_t roles[CT_MAX_BINDINGS];  /* ... the role of each */
    ct_range in[CT_MAX_BINDINGS];    /* ... those it reads */
    ct_range out[CT_MAX_BINDINGS];   /* ... those it writes */
    ct_range writes[CT_CALL_RANGES]; /* a copy's rows past CT_CALL_INLINE_RANGES */
    ct_range reads[CT_CALL_RANGES];  /* a pitched copy's source rows (memory.c) */
    ct_words wide;                   /* a launch's words past CT_MAX_BINDINGS: one heap block,
                                         grown to the most a launch has passed (bound owns it) */
} ct_scratch;
/* The calling thread's scratch, allocated on its first use and freed when
 * the thread exits; NULL when out of memory (logged once): the caller then
 * lets the call through unchecked.  Inline: once it exists, one TLS load. */
ct_scratch *ct_scratch_first(void);
static inline ct_scratch *ct_thread_scratch(void)
{
    ct_scratch *s = ct_mine.scratch;
    return CT_UNLIKELY(!s) ? ct_scratch_first() : s;
}

/* ---- memory.c --------------------------------------------------------- */
/* A copy's side: which memory, and the rows it touches there, as core's
 * rules take them (slice = pitch * rows per slice).  rows.addr is the first
 * byte: a device address, or on a host side the host pointer as a number
 * (0 when there is none, or the memory is an array cutaint does not
 * follow). */
typedef struct ct_side {
    bool device; /* false: host memory, nothing to track */
    ct_rows rows;
} ct_side;
typedef struct ct_copy_shape { /* a 1D/2D/3D copy: its two sides */
    ct_side src, dst;
} ct_copy_shape;

void ct_after_alloc(ct_call *call, uint64_t base, uint64_t size);
/* w has just taken a failure: the first time it reaches managed or pinned
 * memory (which host loads read without the driver), the log says so. */
void ct_tell_if_host_visible(const ct_range *w, size_t n);
void ct_after_alloc_pitch(ct_call *call, uint64_t base, uint64_t pitch, uint64_t height); /* height rows of pitch */
void ct_after_alloc_ordered(ct_call *call, uint64_t base, uint64_t size); /* stream-ordered: no context */
/* cuMemAddressReserve, cuMemAddressFree: the reservations mappings belong
 * to; cuMemMap: a mapping joins those of its reservation beside it. */
void ct_after_reserve(ct_call *call, uint64_t base, uint64_t size);
void ct_after_address_free(ct_call *call, uint64_t base, uint64_t size);
void ct_after_map(ct_call *call, uint64_t base, uint64_t size);
bool ct_before_free(ct_call *call, uint64_t base);
/* A 2D memset of height rows of width elements of `bits` bits at pitch
 * bytes; settled by ct_after_write. */
bool ct_before_memset_2d(ct_call *call, uint64_t dst, uint64_t pitch, uint64_t width, uint64_t height, unsigned bits);
void ct_after_write(ct_call *call);

/* The scope's provisional failure: what a read racing the write, or made
 * after a write that never returned, is refused with. */
#define CT_PROVISIONAL_ERROR CUDA_ERROR_UNKNOWN

/* A linear write (a host-to-device copy, a 1D memset: bytes at dst), one
 * range, its scope opened and settled inline in the thread's own slot
 * (core/scope.h): every host write pays this.  Its after hook is
 * ct_after_linear_write, with the same dst and bytes.  No clock, no thread
 * id: a provisional failure is reported only as "had not finished", and
 * every copy pays for its description. */
static inline bool ct_before_linear_write(ct_call *call, uint64_t dst, uint64_t bytes)
{
    if (bytes == 0)
        return true;
    call->n_writes = 1;
    ct_scope_desc provisional = {CT_PROVISIONAL_ERROR, ct_entries[call->id].name};
    call->provisional = ct_scope_enter_one(&ct_g.scope_gate, (ct_range){dst, bytes}, provisional);
    return true;
}
/* A memset of n elements of `bits` bits each. */
static inline bool ct_before_memset(ct_call *call, uint64_t dst, uint64_t n, unsigned bits)
{
    return ct_before_linear_write(call, dst, n * (bits / 8));
}

/* A linear write that failed: settled (settle.c) and reported.  Out of
 * line: a success pays no frame for the failure's description. */
void ct_after_linear_write_failed(ct_call *call, uint64_t dst, uint64_t bytes);
static inline void ct_after_linear_write(ct_call *call, uint64_t dst, uint64_t bytes)
{
    if (CT_UNLIKELY(call->result != CUDA_SUCCESS)) {
        if (call->n_writes != 0)
            ct_after_linear_write_failed(call, dst, bytes);
    } else {
        ct_scope_exit_one(&ct_g.scope_gate, call->provisional, (ct_range){dst, bytes});
    }
}
/* ct_after_linear_write of a memset of n elements of `bits` bits. */
static inline void ct_after_memset(ct_call *call, uint64_t dst, uint64_t n, unsigned bits)
{
    ct_after_linear_write(call, dst, n * (bits / 8));
}
/* A linear read to the host: refused when a byte it reads carries a
 * failure.  Inline: while nothing is tainted anywhere (or the call was
 * injected) a read is one look at the summary's counts, with no call. */
bool ct_before_read_looking(ct_call *call, void *dst_host, uint64_t src, uint64_t bytes);
static inline bool ct_before_read(ct_call *call, void *dst_host, uint64_t src, uint64_t bytes)
{
    if (!ct_inputs_checked(ct_summary_tainted(ct_g.summary), call->injected))
        return true;
    return ct_before_read_looking(call, dst_host, src, bytes);
}
/* A synchronous read to the host: the program has synchronised, so the
 * devInfo results waiting on what it reads are read and settled first
 * (libcalls.c; their outputs may then carry a failure), then it is checked
 * as any read.  While none waits, one more load. */
void ct_lib_reported_before_read(int entry, uint64_t src, uint64_t bytes);
static inline bool ct_before_sync_read(ct_call *call, void *dst_host, uint64_t src, uint64_t bytes)
{
    if (CT_UNLIKELY(ct_reported_waiting(ct_g.reported) != 0) && !call->injected)
        ct_lib_reported_before_read(call->id, src, bytes);
    return ct_before_read(call, dst_host, src, bytes);
}
/* After a read to the host: one that failed is a root failure, its host
 * destination poisoned where the copy could have written it (rules.h).
 * Inline: a read that succeeded, or that cutaint answered, pays a test. */
void ct_read_failed(ct_call *call, void *dst_host, uint64_t src, uint64_t bytes);
static inline bool ct_read_did_fail(const ct_call *call)
{
    return CT_UNLIKELY(call->result != CUDA_SUCCESS && !call->answered);
}
static inline void ct_after_read(ct_call *call, void *dst_host, uint64_t src, uint64_t bytes)
{
    if (ct_read_did_fail(call))
        ct_read_failed(call, dst_host, src, bytes);
}
void ct_after_unified(ct_call *call, uint64_t dst, uint64_t src, uint64_t bytes);
/* After a 2D/3D copy: one that succeeded, or that cutaint answered,
 * settles its write set; one that failed (a read to the host, or a device
 * write) has its descriptor decoded again: ct_shape_2d_after(call, pCopy)... */
/* An X-macro table, laid out by hand: */
/* clang-format off */
#define CT_SHAPES(X)                                                                                   \
    X(ct_shape_2d, CUDA_MEMCPY2D) X(ct_shape_2d_v1, CUDA_MEMCPY2D_v1) X(ct_shape_3d, CUDA_MEMCPY3D)      \
    X(ct_shape_3d_v1, CUDA_MEMCPY3D_v1) X(ct_shape_3d_peer, CUDA_MEMCPY3D_PEER)
/* clang-format on */
#define CT_SHAPE_AFTER_DECL(shape, desc_t) void shape##_after(ct_call *call, const desc_t *c);
CT_SHAPES(CT_SHAPE_AFTER_DECL)
#undef CT_SHAPE_AFTER_DECL
bool ct_before_unified(ct_call *call, uint64_t dst, uint64_t src, uint64_t bytes);
bool ct_before_device_copy(ct_call *call, uint64_t dst, uint64_t src, uint64_t bytes);
bool ct_before_copy_nd(ct_call *call, ct_copy_shape shape);
/* A side's device bytes as ranges (rows, up to CT_CALL_RANGES of them,
 * else the bounding span: what a check of a source needs); how many were
 * written to out. */
unsigned ct_side_ranges(const ct_side *s, ct_range *out);
/* Rows a write set holds exactly at most (16 MiB of ranges on the heap);
 * a taller side is its bounding span, never released. */
#define CT_TALL_ROWS_MAX (1u << 20)
/* How many rows a side's device bytes are (1: dense; CT_TALL_ROWS_MAX + 1
 * for any more), and up to cap of them from row `first` into out: how
 * many (0 past the last). */
uint64_t ct_side_row_count(const ct_side *s);
unsigned ct_side_rows(const ct_side *s, uint64_t first, ct_range *out, unsigned cap);
/* Fill the rows of a host side with the poison byte; false when poisoning
 * is off or there is no host pointer. */
bool ct_poison(const ct_side *host);
ct_copy_shape ct_shape_2d(const CUDA_MEMCPY2D *c);
ct_copy_shape ct_shape_2d_v1(const CUDA_MEMCPY2D_v1 *c);
ct_copy_shape ct_shape_3d(const CUDA_MEMCPY3D *c);
ct_copy_shape ct_shape_3d_v1(const CUDA_MEMCPY3D_v1 *c);
ct_copy_shape ct_shape_3d_peer(const CUDA_MEMCPY3D_PEER *c);
/* The copies of a batch: linear ones by address (cuMemcpyBatchAsync) or 3D
 * operations (cuMemcpy3DBatchAsync); n 0 when an array is NULL. */
typedef struct ct_batch {
    size_t n;
    const CUdeviceptr *dsts, *srcs;
    const size_t *sizes;
    const CUDA_MEMCPY3D_BATCH_OP *ops;
} ct_batch;
ct_batch ct_batch_linear(const CUdeviceptr *dsts, const CUdeviceptr *srcs, const size_t *sizes, size_t n);
ct_batch ct_batch_3d(const CUDA_MEMCPY3D_BATCH_OP *ops, size_t n);
/* fail_idx (may be NULL): where a batch cutaint answers names its first
 * copy from tainted memory. */
bool ct_before_batch(ct_call *call, ct_batch batch, size_t *fail_idx);
void ct_after_batch(ct_call *call, ct_batch batch);
/* Managed memory: remembered as such for the honest-limit log line. */
void ct_after_alloc_managed(ct_call *call, uint64_t base, uint64_t size);
/* Pinned host memory (allocated or registered): remembered, never tracked,
 * so that a failure writing through it is said (memory.c). */
void ct_after_alloc_pinned(ct_call *call, const void *host, uint64_t size);
bool ct_before_free_pinned(ct_call *call, const void *host);
void ct_after_host_device_pointer(ct_call *call, uint64_t device, const void *host);
/* cuMemUnmap, cuMemAddressFree: the mappings inside the range are forgotten. */
void ct_after_unmap(ct_call *call, uint64_t addr, uint64_t size);
/* After fork(), in the child: the spare refusal's lock is usable again. */
void ct_memory_atfork_child(void);

/* ---- launch.c --------------------------------------------------------- */
typedef struct ct_launch {
    CUfunction f;
    unsigned grid[3];
    unsigned block[3];
    CUstream stream;
    void **params;
    void **extra;
} ct_launch;

bool ct_before_launch(ct_call *call, const ct_launch *launch);
/* cuLaunchKernelEx: the launch its config describes (none: no grid). */
bool ct_before_launch_ex(ct_call *call, const CUlaunchConfig *config, CUfunction f, void **params, void **extra);
void ct_after_launch(ct_call *call);
/* ---- graphs.c ---------------------------------------------------------- */
/* Captures begun and not yet ended: 0 outside any capture. */
extern CT_HIDDEN atomic_uint ct_captures_live;
bool ct_captured_ask(ct_call *call, CUstream s);
/* Is s capturing (work on it recorded, not run)?  Then the call is passed
 * through untouched (call->tracked false).  One load outside a capture. */
static inline bool ct_captured(ct_call *call, CUstream s)
{
    return CT_UNLIKELY(atomic_load_explicit(&ct_captures_live, memory_order_relaxed) != 0) && ct_captured_ask(call, s);
}
void ct_after_begin_capture(ct_call *call);
bool ct_before_end_capture(ct_call *call, CUstream s);
void ct_after_end_capture(ct_call *call, CUstream s);
/* cuGraphAddNode: a conditional node's bodies, remembered for its execs. */
void ct_after_add_node(ct_call *call, const CUgraphNode *node, CUgraph g, const CUgraphNodeParams *p);
void ct_after_instantiate(ct_call *call, uint64_t exec, CUgraph g);
void ct_after_exec_update(ct_call *call, CUgraphExec exec, CUgraph g);
bool ct_before_exec_destroy(ct_call *call, CUgraphExec exec);
void ct_after_exec_destroy(ct_call *call);
void ct_after_exec_kernel_set(ct_call *call, CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p);
void ct_after_exec_kernel_set_v1(ct_call *call, CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p);
void ct_after_exec_memcpy_set(ct_call *call, CUgraphExec e, CUgraphNode n, const CUDA_MEMCPY3D *p);
void ct_after_exec_memset_set(ct_call *call, CUgraphExec e, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p);
void ct_after_exec_node_set(ct_call *call, CUgraphExec e, CUgraphNode n, const CUgraphNodeParams *p);
bool ct_before_graph_launch(ct_call *call, CUgraphExec exec, CUstream s);
void ct_after_graph_launch(ct_call *call, CUgraphExec exec, CUstream s);
/* A context is gone: its executable graphs are forgotten; how many. */
size_t ct_graphs_forget_context(uint64_t context);
void ct_graphs_atfork_child(void);

/* ---- kernels.c ------------------------------------------------------- */
/* Where handles meet names: cuModuleGetFunction, cuLibraryGetKernel,
 * cuKernelGetFunction. */
void ct_after_get_function(ct_call *call, uint64_t handle, const char *name, uint64_t module);
void ct_after_get_kernel(ct_call *call, CUkernel *out, const char *name, uint64_t library);
void ct_after_kernel_function(ct_call *call, uint64_t handle, uint64_t kernel);
/* cuModuleUnload, cuLibraryUnload: once the driver unloaded, the kernels
 * and image of the lifetime the before hook took are forgotten. */
void ct_after_unload(ct_call *call);
/* A context is gone: the kernels of its modules are forgotten; how many. */
size_t ct_kernels_forget_context(uint64_t context);
/* cuFuncLoad: a function whose loading failed is said as a lookup is. */
void ct_after_func_load(ct_call *call, CUfunction f);

/* ---- images.c --------------------------------------------------------- */
/* Every image-loading call: a success remembers where handle's image lies
 * (image, or the file path); a failure is read and said (an image event). */
void ct_after_image_load(ct_call *call, uint64_t handle, const void *image, const char *path);
/* cuLibraryLoadData: as ct_after_image_load, and a refusal of the runtime's
 * own image is answered with a stand-in library (core's ct_stand_in_rule). */
void ct_after_library_load(ct_call *call, CUlibrary *library, const void *code, const CUlibraryOption *options,
                           void *const *values, unsigned n_options);
/* cuLinkAddData / cuLinkAddFile: an input the driver refused (size bytes at
 * data, 0 unknown, or the file path). */
void ct_after_link_input(ct_call *call, const void *data, size_t size, const char *path);
/* cuLibraryGetModule: the module is made from its library's image. */
void ct_after_module_of_library(ct_call *call, uint64_t module, uint64_t library);
/* An owner below is the lifetime of a module's or library's handle
 * (ct_g.images), 0 when cutaint knows none.
 * A lookup of kernel in owner's image failed: its image is said, from what
 * was read of it at its load (read now only when nothing was kept).
 * stand_in (cuLibraryGetKernel's out parameter, else NULL): a failed lookup
 * in the runtime's own library is answered with a stand-in kernel there. */
void ct_image_lookup_failed(ct_call *call, uint64_t owner, const char *kernel, CUkernel *stand_in);
/* The image owner (a module or library) was loaded from, as its load kept
 * it (else read again): only the runtime's own, which it keeps until the
 * unload (preserved); NULL otherwise, or out of memory.  Released with
 * ct_image_release. */
struct ct_image *ct_image_of(uint64_t owner);
void ct_image_release(struct ct_image *img);
/* Kernel `mangled` of owner (a module or library): its parameters'
 * directions (core/ptx.h) as the PTX of the code that runs on the current
 * device states them, read when owner loaded; at most cap into out.  -1
 * when not known (core/image.h, ct_image_kernel_directions). */
int ct_image_directions(uint64_t owner, const char *mangled, uint8_t *out, unsigned cap);
/* cuModuleUnload, cuLibraryUnload: the lifetime the unload may end is taken
 * (call->subject, call->lifetime) for ct_after_unload. */
bool ct_before_image_unload(ct_call *call, uint64_t handle);
/* What was read of the image of an ended lifetime is forgotten. */
void ct_images_forget(uint64_t lifetime);
void ct_images_atfork_child(void);

/* ---- inflight.c: work in flight, and what proved it finished ------------ */
/* The first launch's taking of the thread's ring (ct_mine.ring; NULL when
 * out of memory: said once). */
struct ct_flight_ring;
struct ct_flight_ring *ct_inflight_ring_first(void);
/* The before hook of a call that may prove work finished, ct_before_proof,
 * and a synchronous copy's after hook, ct_sync_copy_done: inflight.h. */
void ct_after_ctx_sync(ct_call *call, CUcontext ctx);
void ct_after_stream_sync(ct_call *call, CUstream s); /* and a successful query */
void ct_after_event_record(ct_call *call, CUevent e, CUstream s);
void ct_after_event_done(ct_call *call, CUevent e); /* a synchronise or a successful query */
void ct_after_stream_wait(ct_call *call, CUstream s, CUevent e);
void ct_after_event_create(ct_call *call, uint64_t event);
bool ct_before_event_destroy(ct_call *call, CUevent e);
void ct_after_event_destroy(ct_call *call);
bool ct_before_stream_destroy(ct_call *call, CUstream s);
void ct_after_stream_destroy(ct_call *call);
void ct_after_stream_create(ct_call *call, uint64_t stream, unsigned flags);
void ct_inflight_atfork_child(void);
/* What a stream handle a launch named is (core/flight.h's ct_flight_streams). */
struct ct_flight_stream ct_inflight_streams(uint64_t handle, uint32_t api, uint64_t context, uint64_t thread);

/* ---- standins.c: handles made up for the runtime ------------------------ */
struct ct_image;
extern CT_HIDDEN atomic_uint ct_stand_ins_made;
static inline bool ct_stand_ins_exist(void)
{
    return atomic_load_explicit(&ct_stand_ins_made, memory_order_relaxed) != 0;
}
/* What a call on stand-in handle answers (*image: its image event's
 * number); false when handle is no stand-in. */
bool ct_stand_in_answer(uint64_t handle, CUresult *answer, uint32_t *image);
bool ct_not_stand_in_slow(ct_call *call, uint64_t handle);
/* The before hook of every entry point taking a library, kernel or
 * function handle: false, with call->result the stand-in's answer, when
 * handle is a stand-in. */
static inline bool ct_not_stand_in(ct_call *call, uint64_t handle)
{
    return !ct_stand_ins_exist() || ct_not_stand_in_slow(call, handle);
}
bool ct_not_stand_in_nodes(ct_call *call, const CUDA_KERNEL_NODE_PARAMS *p);
bool ct_not_stand_in_node_v1(ct_call *call, const CUDA_KERNEL_NODE_PARAMS_v1 *p);
bool ct_not_stand_in_node_params(ct_call *call, const CUgraphNodeParams *p);
bool ct_not_stand_in_launches(ct_call *call, const CUDA_LAUNCH_PARAMS *list, unsigned n);
/* A stand-in library for an image the driver refused with error (image:
 * its event's number; img: the image read, the stand-in's from now on);
 * 0 when none could be made (img stays the caller's). */
uint64_t ct_stand_in_library(CUresult error, uint32_t image, struct ct_image *img);
/* A stand-in kernel `name` of library (a stand-in or a real one), its
 * layout from img (NULL: its signature), in place of the kernel handle
 * replaced the runtime held; 0 when none could be made. */
uint64_t ct_stand_in_kernel(uint64_t library, const char *name, CUresult error, uint32_t image,
                            const struct ct_image *img, uint64_t replaced);
/* cuKernelGetFunction: a stand-in kernel is answered (core's
 * ct_stand_in_call_rule: itself, its own function); true when the driver
 * is called. */
bool ct_before_kernel_function(ct_call *call, CUfunction *out, CUkernel kernel);
/* cuLibraryGetKernel on a stand-in library answers a stand-in kernel. */
bool ct_before_library_kernel(ct_call *call, CUkernel *out, CUlibrary library, const char *name);
/* cuLibraryUnload: a stand-in is unloaded here; a real library's lifetime
 * is taken (ct_before_image_unload) and ends after the driver's unload. */
bool ct_before_library_unload(ct_call *call, CUlibrary library);
/* A real library's lifetime ended: its stand-in kernels answer as unloaded. */
void ct_stand_ins_unloaded(uint64_t library);
void ct_stand_ins_atfork_child(void);

/* ---- context.c -------------------------------------------------------- */
/* The calling thread's current context as the id of its handle's lifetime
 * (ct_g.contexts; 0: none, or the driver would not say): what allocations,
 * kernels and execs are filed under.  A driver call and a lookup only when
 * the thread's mirror (ct_mine.mirror) is unknown. */
uint64_t ct_current_context_slow(void);
static inline uint64_t ct_current_context(void)
{
    return __builtin_expect(ct_mine.mirror.known, 1) ? ct_mine.mirror.lifetime : ct_current_context_slow();
}
/* The lifetime id of a context named by its handle (0 for NULL). */
uint64_t ct_context_lifetime(CUcontext ctx);
void ct_after_ctx_set(ct_call *call, CUcontext ctx);
void ct_after_ctx_push(ct_call *call, CUcontext ctx);
void ct_after_ctx_pop(ct_call *call);
void ct_after_ctx_create(ct_call *call, uint64_t created);
bool ct_before_ctx_destroy(ct_call *call, CUcontext ctx);
void ct_after_ctx_destroy(ct_call *call);
void ct_after_primary_retain(ct_call *call, uint64_t retained);
bool ct_before_primary_drop(ct_call *call, CUdevice dev);
void ct_after_primary_reset(ct_call *call);
void ct_after_primary_release(ct_call *call, CUdevice dev);

/* ---- fault.c ---------------------------------------------------------- */
/* After an error from the driver: probe, and latch when the context is gone. */
void ct_probe_after_error(const char *api, const char *kernel, CUresult error);
/* Simulated loss (CUTAINT_INJECT ... =context_lost). */
void ct_simulate_context_loss(const char *api, const char *kernel);
/* Every call after a simulated loss fails like the real thing would. */
static inline bool ct_context_simulated_lost(void)
{
    return atomic_load_explicit(&ct_g.simulated_loss, memory_order_relaxed);
}
void ct_on_exit(int status, void *unused);
/* From cutaint's constructor: register the check made as exit begins (fault.c). */
void ct_arm_exit_check(void);
/* Is a context current on the calling thread?  (a driver call: only on the
 * paths where something is already wrong) */
bool ct_has_current_context(void);
/* The status a process that lost its context exits with. */
int ct_fault_status(void);
/* The kernel registry's lock, made safe again in a forked child. */
void ct_kernels_atfork_child(void);

/* ---- log.c ------------------------------------------------------------- */
/* At load, first: fd 2 as it is now is the process's stderr. */
void ct_log_stderr_at_load(void);
/* At load, the path expanded: the log's sink. */
void ct_log_configure(void);
/* In a forked child: the stderr and log sinks' locks made safe again ... */
void ct_log_after_fork(void);
/* ... then, its path changed by %p, the log writes the child's own file. */
void ct_log_follow_path(void);
/* The log and the report never share a file: the log yields, the report
 * is refused only when the log already writes into it (events.c). */
void ct_log_apart_from(ct_sink *report);
/* "==PID== text" on stderr, while fd 2 is still the process's own. */
void ct_stderr_line(const char *text);
void ct_log(ct_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The level of the n-th of a kind of line shown `shown` times at warn:
 * after them, one line says where the rest are, and they go to info. */
ct_log_level ct_log_nth_level(atomic_uint *count, unsigned shown, const char *what);
/* A refused read, explained (or, a story told before, in one line). */
void ct_log_refusal(const char *api, uint64_t addr, uint64_t bytes, const ct_refusal *r, int returned, bool poisoned);
/* The i-th step of a refusal's path: the root's kernel (or api), then each
 * skip's, as the log and the event name them. */
const char *ct_refusal_step(const ct_failure_info *root, size_t i);
void ct_log_summary(void); /* the closing log line, when anything happened */
/* The stderr and log sinks' counters into m's outputs. */
void ct_log_output_counts(ct_metrics *m);
/* What every sink of the shim shares: whether a line may wait for a sink's
 * lock (not while an exit interrupted cutaint), saying its trouble on
 * stderr, its counters, and following a path a fork changed (true if it
 * did: the child's own file, opened when it first has a line). */
bool ct_output_may_wait(void);
void ct_tell_sink_trouble(ct_sink *s, ct_sink_result r, const char *variable, const char *consequence);
void ct_output_counts(ct_metrics_output *out, const ct_sink *s);
bool ct_output_follows(ct_sink *s, const char *path);

/* ---- events.c ---------------------------------------------------------- */
/* At load, the paths expanded: the sinks of the log and the report. */
void ct_events_configure(void);
/* The sinks' counters into m's outputs (metrics.c, before each write). */
void ct_events_output_counts(ct_metrics *m);
/* This process wrote its start event: it reached the driver. */
bool ct_events_started(void);
void ct_events_set_argv(int argc, char **argv);
void ct_events_after_fork(void);         /* in the child: new pid, the sinks' locks usable */
void ct_events_follow_paths(void);       /* ... then a sink whose path %p changed writes its own file */
void ct_event_start(int driver_version); /* once per process, opening the report; 0 = no driver */
/* k: a launch's kernel, whose parameter roles the event names; NULL otherwise. */
/* pool: the failure's allocation already looks like a pool (regions.c), or NULL. */
void ct_event_failure(ct_failure_id id, const ct_failure_desc *d, bool injected, const struct ct_kernel *k,
                      const ct_pool_facts *pool);
/* A pool noticed after its failure's event: the line and a pool event. */
void ct_event_pool(ct_failure_id id, const ct_pool_facts *p);
/* A failure folded into live failure id: d describes this occurrence. */
void ct_event_repeat(ct_failure_id id, const ct_failure_desc *d, const ct_occurrence *occ, bool injected);
void ct_event_skip(ct_failure_id root, const ct_skip_desc *skip);
/* A launch retried failure `retried` and succeeded: its outputs were released. */
void ct_event_retry(ct_failure_id retried, const char *kernel, uint64_t launch_seq);
void ct_event_refused(const char *api, uint64_t addr, uint64_t bytes, const ct_refusal *r, int returned, bool poisoned);
void ct_event_probe(const char *after, CUresult error, CUresult probe, bool lost);
/* A launch not proven finished when the context was lost (fault.c). */
typedef struct ct_suspect_desc {
    const char *api;
    const char *kernel; /* NULL: a graph launch, or not known */
    uint64_t graph, launch, stream, thread;
    uint32_t grid[3], block[3];
    bool prime;
} ct_suspect_desc;
void ct_event_context_lost(const char *reason, bool simulated, const ct_suspect_desc *suspects, size_t n, size_t total);
/* The compute-sanitizer line that replays launch seq of this program. */
void ct_repro_line(uint64_t seq, char *line, size_t cap);
void ct_event_exit(int status, int program_status);
/* An image the driver could not use (a failed load), or a kernel it could
 * not find in one (kernel set): images.c read `image` to say why. */
struct ct_image;
typedef struct ct_image_report {
    const char *api;
    int error;
    uint64_t address;   /* 0 for a file */
    const char *path;   /* NULL for an image in memory */
    const char *kernel; /* a failed lookup's mangled name */
    const struct ct_image *image;
    const char *device; /* NULL: no device could be asked */
    unsigned cc;        /* major * 10 + minor; 0 unknown */
    uint32_t number;    /* the event's number in the process, from 1 */
    bool stand_in;      /* answered for the runtime with a stand-in (standins.c) */
} ct_image_report;
void ct_event_image(const ct_image_report *r);
const char *ct_cu_error_name(CUresult r); /* never NULL */

/* ---- metrics.c: the report's events, counted for CUTAINT_METRICS_FILE ---- */
void ct_metrics_atfork_child(void);
void ct_metrics_start(int driver_version); /* zero counts, first file */
/* Each event: false when an interrupted exit found the lock taken and the
 * file was not written. */
bool ct_metrics_failure_event(const ct_failure_desc *d);
bool ct_metrics_skip_event(void);
/* A library call (libcalls.c) returned an error status. */
bool ct_metrics_library_failure_event(const char *library);
bool ct_metrics_refused_event(uint64_t bytes);
bool ct_metrics_context_lost_event(void);
bool ct_metrics_exit_event(void);
/* A marked file (CT_OUTPUT_HEALTH, CT_OUTPUT_METRICS) could not be written. */
void ct_metrics_output_failed(int output);
uint64_t ct_thread_id(void);
int64_t ct_now_ns(void);

#endif

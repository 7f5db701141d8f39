/*
 * rules.h - what the shim does with one read to the host or one piece of
 * work (a launch, a device copy, a graph launch), and what a driver's
 * answer says of the context, decided from plain numbers.  The shim
 * translates a driver call into a question here and the answer back into a
 * driver call, or none (docs/DESIGN.md, "Rules").
 *
 * Invariants:
 * - A rule only looks: it reads the store through taint.h and changes
 *   nothing; the operation that follows (ct_propagate) is the caller's.
 * - has_context is called at most once per rule, and only when the answer
 *   depends on it: on the shim's side it is a driver call.  ct_exec_rule
 *   takes the answer instead, for a caller that must ask it outside a lock
 *   of its own; that caller asks only once a first look found a read
 *   carried.
 * - While nothing is tainted anywhere a rule costs one atomic load.
 */
#ifndef CT_RULES_H
#define CT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ptx.h"
#include "signature.h"
#include "taint.h"

/* Whether cutaint's checks of a call's inputs (a read's refusal; a copy's,
 * batch's or graph launch's skip) look at the call at all: not while
 * nothing is tainted anywhere, and not when CUTAINT_INJECT fired on it.
 * An injected failure wins over a refusal or a skip: the call fails as
 * its rule says, whatever its memory carries, and its write set takes
 * that failure.  Inline: every read and copy asks it. */
static inline bool ct_inputs_checked(bool tainted_anywhere, bool injected)
{
    return tainted_anywhere && !injected;
}

/* Where a write scope waits while its work runs (core/taint.c, "Scope
 * slots"): in its thread's own slot, out of the store, when the slot holds
 * its ranges (n of at most slot_ranges) and no other scope of the thread's
 * (a write made inside another, from a signal handler say); otherwise
 * placed in the store at once, under its lock, as a thread with no slot
 * of its own (every slot another thread's) places it.  Either way what
 * any other operation sees is the same.  Inline: every host write asks. */
typedef enum ct_scope_keeping {
    CT_SCOPE_IN_OWN_SLOT,
    CT_SCOPE_PLACED,
} ct_scope_keeping;
static inline ct_scope_keeping ct_scope_rule(size_t n, size_t slot_ranges, bool own_slot_idle)
{
    return n <= slot_ranges && own_slot_idle ? CT_SCOPE_IN_OWN_SLOT : CT_SCOPE_PLACED;
}

typedef enum ct_read_verdict {
    CT_READ_CLEAN,     /* no byte it reads carries a failure: the driver reads */
    CT_READ_MALFORMED, /* a shape the driver must reject (rows overlapping, a span
                        * past 2^64, host rows narrower than a row): its answer */
    CT_READ_PAST_END,  /* it runs past the end of its allocation: the driver's to
                        * refuse; refusing it would poison as many host bytes as a
                        * garbage size says */
    CT_READ_REFUSE,    /* a byte of its rows carries a failure: refuse it (the
                        * rule's why says which) and poison ct_poison_row's
                        * rows of host */
} ct_read_verdict;

/* A read of the device rows src into the host rows host (host->addr: the
 * host pointer as a number; its width, height and depth are src's).  why
 * (may be NULL): a refusal is described there in the same pass that
 * decides it, under one look at the store, so nothing can clean the rows
 * between the two; without it the rule only decides. */
ct_read_verdict ct_read_rule(ct_store *s, const ct_rows *src, const ct_rows *host, ct_refusal *why);

/* A read to the host that a skip kept from running (a device-to-host copy
 * of a skipped graph): the read rule's verdict on its own rows, so a
 * malformed or past-the-end read stays the driver's; rows that carry
 * nothing are refused all the same, described by what the skip's input
 * `skipped` carries, since the host never received them.  An empty read
 * is clean. */
ct_read_verdict ct_skipped_read_rule(ct_store *s, const ct_rows *src, const ct_rows *host, const ct_range *skipped,
                                     ct_refusal *why);

/* A read of src into host that failed (the driver's error, or CUTAINT_INJECT's):
 * whether its host rows are poisoned as a refused read's are.  Only where
 * the copy could have written them: a host pointer, shapes the driver
 * accepts, and src wholly inside one known allocation (a garbage size the
 * driver refused is not one it started to copy).  Whether the destination
 * is host memory at all is the caller's to ask, as for a refusal. */
bool ct_failed_read_poisons(ct_store *s, const ct_rows *src, const ct_rows *host);

/* The poison extent of a refused read: how many rows of host (0 for a shape
 * the driver must reject: rows or slices overlapping), and row i of them,
 * exactly the bytes the copy would have written there (width bytes at each
 * row's start, never the gaps between rows or slices).  ct_poison_row is
 * false past the last row. */
uint64_t ct_poison_rows(const ct_rows *host);
bool ct_poison_row(const ct_rows *host, uint64_t i, ct_range *row);

typedef enum ct_skip_verdict {
    CT_RUN,            /* no input carries a failure */
    CT_RUN_UNTRACKED,  /* a copy into memory cutaint does not track: it could not
                        * carry the failure, so the driver answers */
    CT_RUN_NO_CONTEXT, /* no context is current on the thread: the driver refuses
                        * the call itself and runs nothing; that answer is the
                        * program's, not a skip */
    CT_SKIP,           /* skip it: its outputs take *root (ct_propagate) */
    CT_RUN_RETRY,      /* a launch that would be skipped retries the refused launch
                        * whose failure it reads (ct_launch_skip_rule): the driver
                        * runs it */
} ct_skip_verdict;

/* Whether a context is current on the calling thread. */
typedef bool (*ct_context_query)(void);

/* Work (a batch of copies, say) whose inputs carry root (0: none). */
ct_skip_verdict ct_skip_rule(ct_failure_id root, ct_context_query has_context);
/* A device copy reading in[n] into dst.  *root and *error (may be NULL)
 * receive the failure an input carries and its error, 0 when none. */
ct_skip_verdict ct_copy_rule(ct_store *s, const ct_range *in, size_t n, uint64_t dst, ct_context_query has_context,
                             ct_failure_id *root, int *error);
/* A launch reading in[n] (its outputs are wherever its arguments point). */
ct_skip_verdict ct_launch_rule(ct_store *s, const ct_range *in, size_t n, ct_context_query has_context,
                               ct_failure_id *root, int *error);
/* ---- retries: a launch that redoes one the driver refused ------------- */

/* A launch key's params are hashed as the parameters are read: ct_fnv1a
 * (ct_hash.h) from CT_FNV_OFFSET over the kernel's name and each
 * parameter's bytes in order, then ended here, which mixes in how many
 * bytes there were and spreads every bit over the whole word. */
uint64_t ct_launch_key_end(uint64_t h, uint64_t total_bytes);
/* grid times block, saturating. */
uint64_t ct_launch_threads(const uint32_t grid[3], const uint32_t block[3]);

/* More words than this in a launch's inputs or outputs: never taken for a
 * retry (the look is quadratic in them). */
#define CT_RETRY_WORDS_MAX 64

typedef struct ct_retry_facts {
    ct_launch_key key;
    const ct_range *in, *out; /* the launch's inputs and outputs */
    size_t n_in, n_out;
    bool context_lost; /* the latch is set: what failed may have run in part */
} ct_retry_facts;

/* A launch an input of which carries a failure (ct_launch_rule said
 * CT_SKIP): is it a retry, to be handed to the driver after all?  Yes only
 * when every byte of in that carries a failure lies in out (the retry
 * writes again what the refused launch was to write) and carries an intact
 * failure (taint.h) one of whose attempts key repeats: the same function,
 * byte-identical parameters, at least as many threads.  Anything else
 * carried - a const input the failure reached, a skip's outputs, another
 * failure - keeps it skipped, and so does a lost context (its failures
 * were reported later: work may have run in part).  *retried receives the
 * oldest failure it retries, 0 when none.  Its success then releases out
 * as any launch's does. */
bool ct_retry_rule(ct_store *s, const ct_retry_facts *f, ct_failure_id *retried);

/* A launch's retry facts, filled only when asked (its key hashes every
 * parameter): launch is the caller's own. */
typedef void (*ct_retry_facts_of)(const void *launch, ct_retry_facts *f);

/* A launch reading in[n]: skipped when an input carries a failure
 * (ct_launch_rule), unless it is a retry (ct_retry_rule, on the facts
 * facts_of fills, asked only of a launch that would be skipped): then
 * CT_RUN_RETRY.  *root and *error as ct_launch_rule's; *retried (may be
 * NULL) receives the failure retried, 0 when none. */
ct_skip_verdict ct_launch_skip_rule(ct_store *s, const ct_range *in, size_t n, ct_context_query has_context,
                                    ct_retry_facts_of facts_of, const void *launch, ct_failure_id *root, int *error,
                                    ct_failure_id *retried);

/* A graph launch whose merged read set is reads[n].  *root and *error as
 * ct_copy_rule's; *at (may be NULL) receives the index of the first read
 * carrying the root, the one the skip names (0 when none carries one).
 * has_context: whether a context is current, asked by the caller (see the
 * invariants above). */
ct_skip_verdict ct_exec_rule(ct_store *s, const ct_range *reads, size_t n, bool has_context, ct_failure_id *root,
                             int *error, size_t *at);
/* What one range a node of an executable graph reads or writes counts for
 * in the graph's sets.  A node of a conditional node's body (at any depth)
 * may or may not run at a launch: the condition is a kernel's to set. */
typedef struct ct_graph_use_facts {
    bool in_body;      /* the node is inside a conditional node's body */
    bool exact_node;   /* a copy or memset: it writes what it names */
    bool extent_known; /* this write's extent is known exactly (not a kernel's stores, not a tall span) */
} ct_graph_use_facts;
typedef struct ct_graph_use_verdict {
    bool checked;   /* a read is in the read set: carrying a failure, it skips the graph */
    bool tainted;   /* a write takes a failed or skipped launch's failure */
    bool released;  /* a write is released by a good launch (the graph was its last writer) */
    bool satisfies; /* a write satisfies the reads of nodes that run after it */
} ct_graph_use_verdict;
/* Every read is checked and every write tainted, in a body too: a body
 * that may run is work the launch may do.  Only what surely runs and
 * surely writes its whole extent releases or satisfies: a body's writes
 * never do (it may not have run). */
ct_graph_use_verdict ct_graph_use_rule(const ct_graph_use_facts *f);
/* A batch of n copies (cuMemcpyBatchAsync), skipped whole when a copy's
 * source carries a failure: the first such copy in the batch's order names
 * the skip (*first) and its failure is the root (*root, *error), as the
 * program would meet them one copy at a time.  sources(batch, i, room)
 * writes copy i's source ranges into room (the caller's, as many as one
 * copy can need) and returns how many; *first is n when none carries. */
typedef unsigned (*ct_copy_sources)(const void *batch, size_t i, ct_range *room);
ct_skip_verdict ct_batch_rule(ct_store *s, size_t n, ct_copy_sources sources, const void *batch, ct_range *room,
                              ct_context_query has_context, ct_failure_id *root, int *error, size_t *first);

/* ---- what a driver answer says of the context ------------------------- */

/* The driver's codes by what they say, handed by the shim (core knows no
 * CUDA): success and not-ready answer "alive"; the no-context codes say
 * there is no usable context to judge (not initialised, deinitialised, no
 * or a destroyed context); capture codes are stream capture's own rules
 * broken, which say nothing of the context. */
typedef struct ct_answer_kinds {
    int success, not_ready, deinitialized;
    const int *no_context;
    size_t n_no_context;
    const int *capture;
    size_t n_capture;
} ct_answer_kinds;

typedef enum ct_answer_verdict {
    CT_ANSWER_ALIVE,      /* success, or work still running */
    CT_ANSWER_NO_CONTEXT, /* nothing to judge: never a loss (a false latch turns a
                           * clean exit into 70, as bad as a missed one) */
    CT_ANSWER_CAPTURE,    /* a capture's rules broken: never a loss */
    CT_ANSWER_LOST,       /* the context is destroyed */
} ct_answer_verdict;

/* What a skipped call returns (CUTAINT_ON_SKIP): the root failure's error
 * under "error", else success (success: the driver's code for it), as if
 * the work had run; its outputs carry the failure either way.  A skipped
 * graph's refused host copies report the same answer. */
int ct_skip_result(ct_on_skip on_skip, int root_error, int success);

/* What a batch cutaint answers whole (one of its copies reads carried
 * bytes) returns: the refusal's code when a read of it was refused; else,
 * when it had device writes to skip, what the skip answers (skip_result:
 * CUTAINT_ON_SKIP's); else the root's error (nothing of it ran). */
int ct_batch_result(bool refused, int refused_code, bool skipped, int skip_result, int root_error);

/* ---- kernel images the driver refused: stand-ins for the runtime -------- */

/* What a refused load's or lookup's error says, as the shim reads its
 * code: the image cannot be used on this device (no code for it, PTX it
 * cannot JIT, not an image), the kernel is not in it, or something else
 * (memory, the context, a bad argument). */
typedef enum ct_load_refusal { CT_REFUSED_OTHER, CT_REFUSED_IMAGE, CT_REFUSED_KERNEL } ct_load_refusal;

typedef struct ct_stand_in_facts {
    ct_load_refusal refused;
    bool lookup;        /* a kernel lookup in a library, else the library's load */
    bool runtime_image; /* the library is NVIDIA's runtime's own: its fatbin wrapper, preserved */
    bool library_ahead; /* a library loaded ahead of libcutaint.so defines driver entry points */
    bool eager;         /* the driver loads modules eagerly (CUDA_MODULE_LOADING=EAGER) */
} ct_stand_in_facts;

typedef enum ct_stand_in_verdict {
    CT_STAND_IN,             /* answer success with a stand-in handle: the launch fails instead */
    CT_DRIVER_ANSWERS,       /* the driver's error is the caller's, as without cutaint */
    CT_DRIVER_ANSWERS_AHEAD, /* ... because the library ahead could hand a stand-in to the driver */
} ct_stand_in_verdict;

/* Whether a refused load or lookup is answered with a stand-in: only an
 * image's or kernel's refusal (a missing kernel only in a lookup), only of
 * the runtime's own image (a driver-API program handles its own errors and
 * must see them), never under eager loading (the runtime then loads its
 * images as it starts and fails its first call with the load's error: a
 * stand-in would turn that into success), and only while nothing ahead of
 * cutaint could pass the made-up handle on to the driver unseen. */
ct_stand_in_verdict ct_stand_in_rule(const ct_stand_in_facts *f);

/* A call the program's runtime makes on a stand-in handle. */
typedef struct ct_stand_in_call_facts {
    bool unloaded;      /* the stand-in's library was unloaded */
    bool kernel;        /* a stand-in kernel, else a library */
    bool gets_function; /* the call asks for the kernel's function (cuKernelGetFunction) */
    bool sets_node;     /* the call puts the kernel in a graph's kernel node (add, set its params) */
} ct_stand_in_call_facts;

typedef enum ct_stand_in_call_verdict {
    CT_STAND_IN_DEFERRED, /* answer the refused load's or lookup's error: the runtime fails as its own failed load made it */
    CT_STAND_IN_UNLOADED, /* answer CUDA_ERROR_INVALID_HANDLE, as for any unloaded handle */
    CT_STAND_IN_ITSELF,   /* answer success: a stand-in kernel is its own function (a kernel handle is one) */
    CT_STAND_IN_REPLACED, /* answer what the driver answers when asked for the function of the handle the
                             stand-in took the place of */
} ct_stand_in_call_verdict;

/* What a call on a stand-in answers.  A launch fails with the deferred
 * error (it reaches cutaint, which fails it and taints its outputs), and
 * so does nearly every other call: the runtime's answer is then the one its
 * own failed load or lookup gave.  But NVIDIA's runtime, adding a graph
 * kernel node (cudaGraphAddKernelNode, and setting a node's params), does
 * not stop at its failed lookup: it asks the driver for the function of
 * whatever handle the lookup left it holding, and hands the program the
 * driver's answer (measured on fakecuda: CUDA_ERROR_INVALID_HANDLE,
 * cudaErrorInvalidResourceHandle, where the deferred error would be
 * cudaErrorSymbolNotFound).  Elsewhere (cudaFuncGetAttributes, the
 * occupancy calls) it stops at the lookup, and it asks for the function on
 * both paths, so that question cannot tell them apart: a stand-in kernel
 * answers it with itself, and the node call that only the node path makes
 * is answered as the driver answered the question without cutaint. */
ct_stand_in_call_verdict ct_stand_in_call_rule(const ct_stand_in_call_facts *f);

/* ---- regions: the program's own allocations inside a driver one ------- */

/* What a region call finds (ct_store_region_alloc / _free, taint.h). */
typedef struct ct_region_facts {
    bool freeing;           /* a free: only is_region_base matters */
    bool is_region_base;    /* base is a live region's base */
    uint64_t bytes;         /* an allocation's size; 0 or past 2^64 is empty */
    bool overflows;         /* base + bytes runs past 2^64 */
    bool within_allocation; /* every byte lies in one known allocation (or run) */
    bool overlaps_region;   /* some byte lies in a live region */
} ct_region_facts;

/* Whether a region call is taken.  A refused one changes nothing: a
 * region outside every allocation would name memory the driver never
 * handed out, and overlapping regions would give one byte two extents. */
ct_region_verdict ct_region_rule(const ct_region_facts *f);
/* "outside every allocation cutaint knows", ...: for the misuse line. */
const char *ct_region_verdict_text(ct_region_verdict v);

/* ---- pools noticed ------------------------------------------------------- */

/* A failure whose taint runs to the end of an allocation from a pointer
 * inside it, and what the program showed of that allocation. */
typedef struct ct_pool_facts {
    uint64_t allocation, size; /* the driver allocation (or run) */
    uint64_t from;             /* where the failed pointer points */
    uint64_t covered;          /* bytes the failure now covers: from to the end */
    unsigned pointers;         /* distinct pointers into it met so far, the failed one included */
    bool in_region;            /* from lies in a region: its extent is the region's */
    bool said;                 /* already said of this allocation */
} ct_pool_facts;

/* Several distinct pointers into one allocation. */
#define CT_POOL_POINTERS 2

/* Whether to say now that the allocation looks like a pool: the failure's
 * taint reaches past the pointer's own tensor as far as anyone knows (not
 * in a region, from an interior pointer), and the program has used the
 * allocation through several distinct pointers; once per allocation. */
bool ct_pool_rule(const ct_pool_facts *f);

/* ---- bypassed: a driver used behind cutaint's back ---------------------- */

/* What the driver says, asked at exit, of whether anyone initialised it (a
 * query such as a device count, which needs cuInit first). */
typedef enum ct_driver_answer {
    CT_DRIVER_NOT_ASKED,       /* not asked at that moment (or no driver loaded) */
    CT_DRIVER_INITIALISED,     /* it answered: someone called cuInit */
    CT_DRIVER_NOT_INITIALISED, /* nobody called cuInit */
    CT_DRIVER_OTHER,           /* anything else, shut down included: a driver
                                  torn down answers so whether used or not */
} ct_driver_answer;

typedef struct ct_bypass_facts {
    bool reached;       /* a driver call reached cutaint (the start event) */
    bool forked;        /* a fork child: the driver's state may be its parent's */
    bool driver_loaded; /* libcuda.so.1 was in the process when asked */
    /* The driver asked twice (docs/LAYERS.md): as exit began, before any
     * exit handler (a driver that registered its teardown with atexit at
     * cuInit still answers then, but not a thread's exit other than the
     * main thread's), and from cutaint's destructor (a driver torn down by
     * its own destructor, loaded after cutaint, still answers then, from
     * whichever thread exits). */
    ct_driver_answer as_exit_began;
    ct_driver_answer at_unload;
} ct_bypass_facts;

/* Whether to say at exit that the process used the driver unprotected:
 * no call reached cutaint, yet the loaded driver said at either moment
 * that it was initialised (another library reached it without going
 * through any hook cutaint offers; once initialised, a driver stays so
 * until its teardown, so either answer proves it).  A process that never
 * used the driver stays silent, and so does a fork child, whose driver
 * may have been initialised by its parent. */
bool ct_bypass_rule(const ct_bypass_facts *f);

/* ---- work in flight: the suspects of a lost context --------------------- */

/* What proofs cover a launch's scopes (core/flight.h): the latest epoch
 * through which its context, its stream, and its context's blocking
 * streams were proven finished (0: never); nonblocking: its stream was
 * created non-blocking, so the legacy default stream's ordering does not
 * reach it. */
typedef struct ct_proven {
    uint64_t context, stream, blocking;
    bool nonblocking;
} ct_proven;

/* Is a launch of epoch `epoch` a suspect: not proven finished by a
 * synchronise of its context, of its stream (or a query, an event, a wait
 * chain), or, on a blocking stream, by the legacy default stream's
 * ordering (a synchronous copy)? */
bool ct_suspect_rule(uint64_t epoch, const ct_proven *p);

/* ---- which kernel parameters are memory, in which direction ----------- */

/* A kernel parameter's role, and whether its words are scanned (a struct by
 * value may hold pointers).  Decided in order: the CUTAINT_ARGS rule's role
 * when it gives one; else the signature's kind (a pointer to const is read
 * only, other pointers and structs read and written, values never memory);
 * with no signature for it, the size (8 bytes may be a pointer, more are
 * scanned, less cannot hold one). */
typedef struct ct_param_role {
    uint8_t role; /* ct_role */
    bool scan;
} ct_param_role;
typedef struct ct_param_facts {
    const ct_signature *sig; /* NULL: none */
    const uint8_t *dirs;     /* the kernel's PTX directions (ct_ptx_dir), n_dirs of them; NULL: none
                               * (SASS only, PTX not of the code that runs, or unreadable) */
    unsigned n_dirs;
    const ct_arg_rule *rule; /* NULL: no CUTAINT_ARGS rule names the kernel */
} ct_param_facts;
/* Parameter i of size bytes.  Decided in order: the CUTAINT_ARGS rule's
 * role; else the PTX's direction (loads only: read; stores only: store;
 * both: read and written; never used as an address: not memory); else
 * the signature's kind; else the size.  Whether words are scanned comes
 * from the signature or the size. */
ct_param_role ct_param_role_rule(const ct_param_facts *f, unsigned i, uint32_t size);

/* After a simulated loss (CUTAINT_INJECT ...=context_lost), whether a call
 * of this entry-point family still reaches the driver: only the ways out
 * of a lost context do (making another context current, destroying,
 * resetting or releasing one), as on a really destroyed context; every
 * other call fails as it would there.  The shim names the ways out. */
bool ct_survives_simulated_loss(const char *family, const char *const *ways_out, size_t n);

/* What a probe's (or the exit check's) answer says. */
ct_answer_verdict ct_answer_rule(const ct_answer_kinds *k, int answer);
/* Whether an error a call returned is worth a probe: not work still running,
 * not a driver tearing down, not a capture's own rules. */
bool ct_probe_rule(const ct_answer_kinds *k, int error);

/* ---- library calls: cuBLAS, cuRAND, cuFFT, cuSOLVER (shim/libcalls.def) ----
 * A library entry point is work like a launch: what it reads and writes are
 * the extents its table row names, computed here from plain numbers.  An
 * extent an invalid argument makes unknowable (a negative size, a leading
 * dimension under the rows, a product past 2^64) is CT_TO_END: the rest of
 * the allocation the pointer lies in, where the store clips every range, so
 * a garbage size never reaches a neighbour's bytes. */

/* A column-major rows x cols matrix, columns ld elements apart:
 * ((cols - 1) * ld + rows) * esize bytes; 0 when rows or cols is 0. */
uint64_t ct_lib_matrix_bytes(int64_t rows, int64_t cols, int64_t ld, uint64_t esize);
/* The same of op(X): a transposed operand is stored cols x rows. */
uint64_t ct_lib_op_matrix_bytes(bool transposed, int64_t rows, int64_t cols, int64_t ld, uint64_t esize);
/* n elements inc apart (either sign: the extent is the same): (1 + (n - 1) * |inc|) * esize; 0 when n <= 0
 * (the libraries do nothing then). */
uint64_t ct_lib_vector_bytes(int64_t n, int64_t inc, uint64_t esize);
/* n elements side by side. */
uint64_t ct_lib_count_bytes(int64_t n, uint64_t esize);
/* batch operands of one_bytes each, stride elements apart:
 * (batch - 1) * stride * esize + one_bytes; 0 when batch is 0. */
uint64_t ct_lib_strided_bytes(uint64_t one_bytes, int64_t stride, int64_t batch, uint64_t esize);

/* A cuBLASLt matrix layout as the library's getter told it at the call. */
typedef struct ct_lib_layout {
    bool described;     /* the getter gave its type, rows, columns and ld */
    bool plain_order;   /* column- or row-major, not an interleaved order */
    bool row_major;     /* rows ld elements apart (else columns) */
    bool planar;        /* planar complex: a plane offset, not followed */
    bool pointer_array; /* batches through a pointer array: not followed */
    uint64_t rows, cols;
    int64_t ld;
    int64_t batch, stride; /* batch matrices stride elements apart */
    uint64_t esize;        /* CT_TO_END: a type the shim cannot size */
} ct_lib_layout;
/* Its bytes: its batch of matrices; CT_TO_END (the rest of the allocation)
 * for one it cannot describe (undescribed, interleaved, planar, pointer
 * arrays, dimensions past 2^63). */
uint64_t ct_lib_layout_bytes(const ct_lib_layout *l);

/* beta of a call computing out = alpha * op(...) + beta * out, as the shim
 * found it: on the host (its bytes readable here), on the device, or said
 * to be zero by the call's own mode. */
typedef struct ct_lib_scalar {
    const void *host; /* its bytes in host memory; NULL: on the device (the
                         pointer mode says so, it lies in device memory, or
                         the mode is unknown): never dereferenced */
    uint64_t size;    /* its type's bytes; CT_TO_END: a type the shim cannot size */
    bool zero;        /* the call's mode fixes it to zero (cuBLASLt's BETA_ZERO) */
} ct_lib_scalar;
/* Whether the call reads out: always, but where beta is zero - fixed so, or
 * a host scalar whose bytes are all zero (a negative zero counts as read:
 * the type of its bytes is not known here).  A beta on the device is
 * counted as read: reading it would add a synchronisation.  So a call over
 * a tainted out with beta = 0 runs, and its success cleans out. */
bool ct_lib_reads_output(ct_lib_scalar beta);

/* A cuFFT plan's shape, as it was made (core/fftplans.h keeps them by
 * handle).  Every field a whole int64_t word: the table copies plans word by
 * word. */
typedef enum ct_fft_kind {
    CT_FFT_C2C, /* complex to complex, single */
    CT_FFT_Z2Z, /* double */
    CT_FFT_R2C, /* real to complex: the output's last dimension n / 2 + 1 */
    CT_FFT_D2Z,
    CT_FFT_C2R, /* complex to real: the input's last dimension n / 2 + 1 */
    CT_FFT_Z2D,
    CT_FFT_N_KINDS
} ct_fft_kind;
#define CT_FFT_MAX_RANK 3
/* One side's advanced layout: element (b, x[0..rank)) at b * dist +
 * stride * sum(x[d] * embed[d+1] * ... * embed[rank-1]); embed[0] unused. */
typedef struct ct_fft_side {
    int64_t embed[CT_FFT_MAX_RANK];
    int64_t stride, dist;
} ct_fft_side;
typedef struct ct_fft_plan {
    int64_t kind; /* a ct_fft_kind */
    int64_t rank, batch;
    int64_t n[CT_FFT_MAX_RANK]; /* the transform's logical sizes */
    int64_t advanced;           /* 1: in and out hold the layout (inembed and
                                   onembed both given), 0: the basic one */
    ct_fft_side in, out;
} ct_fft_plan;
/* What an execution of plan p reads from idata and writes to odata, in
 * bytes: its batch of transforms in its layout.  In place (in_place:
 * idata == odata) under the basic layout, a real side is padded to its
 * complex side's size.  A plan no execution could run (a kind, rank, size
 * or layout out of range, a product past 2^64) gives CT_TO_END both ways. */
void ct_lib_fft_bytes(const ct_fft_plan *p, bool in_place, uint64_t *in, uint64_t *out);

typedef enum ct_lib_verdict {
    CT_LIB_PASS, /* inside another wrapped library call of the thread: the outermost accounts */
    CT_LIB_RUN,  /* no input carries a failure: the library runs */
    CT_LIB_SKIP, /* an input carries *root: not run, its outputs take *root (ct_propagate) */
} ct_lib_verdict;
/* A library call reading in[n], made at depth (how many wrapped library
 * calls the thread is already inside: a cuBLAS call into cuBLASLt).
 * *root and *error (may be NULL) as ct_launch_rule's.  The store is looked
 * at only at depth 0. */
ct_lib_verdict ct_lib_call_rule(ct_store *s, unsigned depth, const ct_range *in, size_t n, ct_failure_id *root,
                                int *error);
/* A library call that ran returned status: did it write its outputs
 * (released exactly on their extents), or fail (they take a failure naming
 * the call and its status)?  Only its success status is success: a
 * library's warnings do not exist in these APIs. */
bool ct_lib_wrote(int status, int success);

/* What a nonzero devInfo (a cuSOLVER result written on the device) says of
 * the outputs it vouches for, by the library's documentation. */
typedef enum ct_lib_info_kind {
    CT_INFO_POSITIVE_COMPUTED, /* getrf: info = i > 0, U(i,i) is exactly zero, yet the
                                * factorisation was completed (a singular U is data);
                                * getrs: never positive */
    CT_INFO_NONZERO_FAILED,    /* potrf: the leading minor of order i is not positive
                                * definite, the factorisation not completed; gesvd,
                                * syevd: i values did not converge */
} ct_lib_info_kind;
/* A devInfo value read once the call was done: were its outputs not
 * computed?  Negative (parameter -info was wrong) always; positive as kind
 * says; zero never. */
bool ct_lib_info_failed(ct_lib_info_kind kind, int32_t info);

#endif

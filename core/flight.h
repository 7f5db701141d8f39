/*
 * flight.h - work in flight: what each thread launched, and what proved it
 * finished, so that a lost context can name its suspects.
 *
 * An asynchronous fault (an illegal address) surfaces at a later
 * synchronise, far from the launch that caused it.  The work that may have
 * caused it is what had not been proven complete on that context: every
 * launch since the last proof that covered it.  Here each launching thread
 * keeps a ring of what it launched (a few stores a launch, into its own
 * memory, no lock, no allocation), and a proof table says what each
 * synchronise, query or event proved; a latched loss asks
 * ct_flight_suspects, which applies core's ct_suspect_rule (rules.h) to
 * every remembered launch.
 *
 * Epochs order launches against proofs without a shared counter written
 * per launch: a launch reads the epoch after the driver accepted it; a
 * call that may prove something (a synchronise, a query, an event record,
 * a stream's wait on an event) advances it before reaching the driver and
 * proves, on success, the work of epoch at most the value it advanced from.
 * Reading after the launch and advancing before the proof is conservative:
 * a race leaves a finished launch a suspect, never drops an unfinished one.
 *
 * Scopes of a proof: a context (cuCtxSynchronize), a stream (its
 * synchronise, a successful query, an event recorded on it and found
 * complete, and through cuStreamWaitEvent the streams it waited on), or a
 * context's blocking streams (a synchronous copy on the legacy default
 * stream waits for all of them first).  A stream is named by a
 * ct_flight_stream: its handle, or for a default stream its context and,
 * for the per-thread one, its thread.
 *
 * Invariants:
 * - A ring is written by its own thread only; other threads read it (the
 *   latch, the census) through relaxed atomics, and an entry being written
 *   while read is skipped by its sequence (never a torn suspect).
 * - A ring keeps the oldest CT_FLIGHT_PINNED unproven launches and the
 *   newest CT_FLIGHT_RECENT; between them launches are counted, not kept
 *   (with the newest epoch among them: only a proof of their context
 *   covers them).
 *   The pinned part is pruned of proven launches only when it is full and
 *   a proof was made since its last pruning: at most once per proof.
 * - The proof table changes under its mutex; proofs only grow.  It is
 *   bounded: past CT_FLIGHT_MAX_SCOPES scopes or CT_FLIGHT_MAX_EVENTS
 *   events, new ones are not recorded, which leaves more suspects, never
 *   fewer.
 * - Rings are never freed: a thread that ends leaves its ring (its launches
 *   may still be running) for a thread started later to take over.
 */
#ifndef CT_FLIGHT_H
#define CT_FLIGHT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_FLIGHT_PINNED 32
#define CT_FLIGHT_RECENT 64
/* The holders a ring remembers: its launches older than the oldest are
 * named by it. */
#define CT_FLIGHT_OWNERS 4
#define CT_FLIGHT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CT_FLIGHT_MAX_SCOPES 4096
#define CT_FLIGHT_MAX_EVENTS 65536
/* Waits remembered per stream: the newest. */
#define CT_FLIGHT_WAITS 8

/* A stream: handle for a created stream; 0 with its context for the legacy
 * default stream, and with its thread too for a per-thread default one. */
typedef struct ct_flight_stream {
    uint64_t handle, context, thread;
} ct_flight_stream;

typedef enum ct_flight_kind { CT_FLIGHT_LAUNCH = 1, CT_FLIGHT_GRAPH } ct_flight_kind;

/* One launch or graph launch, as its ring keeps it. */
typedef struct ct_flight_work {
    uint64_t seq;   /* launch number, from 1 */
    uint64_t epoch; /* read after the driver took it */
    uint64_t what;  /* the CUfunction, or the CUgraphExec */
    ct_flight_stream stream;
    uint32_t grid[3], block[3];
    uint64_t thread;     /* OS thread id */
    uint32_t api;        /* the caller's name for the entry point (the shim's table index) */
    uint64_t index;      /* its place among its ring's launches (flight.c) */
    uint64_t raw_stream; /* the stream as the caller named it (stream: what it is) */
    uint8_t kind;        /* ct_flight_kind */
} ct_flight_work;

typedef struct ct_flight ct_flight;

/* The epoch (from 1) and the count of proofs made: read inline by every
 * launch, so one for the process (ct_flight_clock_now), whatever ct_flight
 * a caller holds. */
typedef struct ct_flight_clock {
    atomic_uint_fast64_t epoch, generation;
} ct_flight_clock;

/* The proof clock every launch reads: the epoch (from 1) and the count of
 * proofs made, the same for every ct_flight.  Hidden: the library that
 * holds core reads it straight, not through its GOT. */
extern __attribute__((visibility("hidden"))) ct_flight_clock ct_flight_clock_now;

/* The epoch a launch reads once the driver took it. */
static inline uint64_t ct_flight_epoch(const ct_flight *f)
{
    (void)f;
    return atomic_load_explicit(&ct_flight_clock_now.epoch, memory_order_relaxed);
}

/* ---- a thread's ring (its fast path inline: a launch pays its stores) ---- */

/* A launch as the shim holds it while the driver has the call: laid out as
 * the shim's ct_launch (shim.h asserts it), so that the shim's copy of the
 * launch is the slot's. */
typedef struct ct_flight_launch {
    uint64_t what;
    uint32_t grid[3], block[3];
    uint64_t stream;
    uint64_t params, extra; /* the shim's own, for its after hook */
} ct_flight_launch;

/* One launch as a ring keeps it.  seq is 0 while the slot is written or
 * empty, and written last: a reader (flight.c) that finds the same non-zero
 * seq before and after reading the rest has read one whole launch.  kind:
 * the ct_flight_kind, api the caller's entry; launch.stream as the caller
 * named it, which ct_flight_streams says the meaning of when the ring is
 * read. */
typedef struct ct_flight_slot {
    atomic_uint_fast64_t seq;
    uint64_t epoch, context;
    uint32_t api, kind;
    uint64_t index; /* its place among its ring's launches, from 0 */
    ct_flight_launch launch;
} ct_flight_slot;

/* A thread's ring: its newest CT_FLIGHT_RECENT launches, written in turn,
 * and a copy of its oldest CT_FLIGHT_PINNED not proven at the last
 * pruning, which a full pinned part and a proof made since (a new
 * generation) trigger at the thread's next launch. */
typedef struct ct_flight_ring {
    /* What every launch reads first, at the ring's start. */
    uint64_t generation;    /* the proof generation it was last pruned at */
    atomic_uint_fast64_t n; /* launches kept so far: the next one's index */
    atomic_uint n_pinned;
    ct_flight_slot recent[CT_FLIGHT_RECENT], pinned[CT_FLIGHT_PINNED];
    struct ct_flight_ring *next, *next_spare;
    /* Who held it from which launch on, the newest its present holder: a
     * ring taken over keeps its ended thread's launches (they may still
     * run), named by their own thread. */
    struct {
        uint64_t thread, from;
    } owners[CT_FLIGHT_OWNERS];
    unsigned n_owners;
} ct_flight_ring;

/* The ring's slow path: a proof was made since its last pruning. */
void ct_flight_prune(ct_flight *f, ct_flight_ring *r, uint64_t generation);

/* The recent slot r's next launch goes to, emptied for it. */
static inline ct_flight_slot *ct_flight_next_slot(ct_flight_ring *r)
{
    ct_flight_slot *s = &r->recent[atomic_load_explicit(&r->n, memory_order_relaxed) % CT_FLIGHT_RECENT];
    atomic_store_explicit(&s->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    return s;
}

/* A proof made since the last pruning may have freed room in a full
 * pinned part (copies prove, and a program may copy between every two
 * launches: at most once per CT_FLIGHT_PINNED launches then).  The
 * generation first: while no proof is made, that is the one test. */
static inline bool ct_flight_must_prune(const ct_flight_ring *r, uint64_t generation)
{
    return CT_FLIGHT_UNLIKELY(generation != r->generation) &&
           atomic_load_explicit(&r->n_pinned, memory_order_relaxed) == CT_FLIGHT_PINNED;
}

/* The slot the calling thread's next launch is copied into, before the
 * driver is called; nothing is kept of it until ct_flight_commit. */
static inline ct_flight_slot *ct_flight_claim(ct_flight *f, ct_flight_ring *r)
{
    uint64_t generation = atomic_load_explicit(&ct_flight_clock_now.generation, memory_order_relaxed);
    if (ct_flight_must_prune(r, generation))
        ct_flight_prune(f, r, generation);
    return ct_flight_next_slot(r);
}

/* ct_flight_claim for the common launch, which prunes nothing: NULL when
 * r must be pruned first (ct_flight_claim then).  Calls nothing. */
static inline ct_flight_slot *ct_flight_claim_fast(ct_flight_ring *r)
{
    if (ct_flight_must_prune(r, atomic_load_explicit(&ct_flight_clock_now.generation, memory_order_relaxed)))
        return NULL;
    return ct_flight_next_slot(r);
}

/* The claimed launch was taken by the driver: kept, launch number seq, on
 * context, through entry api, of kind (ct_flight_kind); and pinned while
 * the pinned part has room (the oldest launches since the last pruning).
 * No call: the shim's after hook stays a leaf. */
static inline void ct_flight_commit(ct_flight_ring *r, ct_flight_slot *s, uint64_t seq, uint64_t context, uint32_t api,
                                    uint32_t kind)
{
    uint64_t n = atomic_load_explicit(&r->n, memory_order_relaxed);
    s->epoch = atomic_load_explicit(&ct_flight_clock_now.epoch, memory_order_relaxed);
    s->context = context;
    s->api = api;
    s->kind = kind;
    s->index = n;
    atomic_store_explicit(&s->seq, seq, memory_order_release);
    atomic_store_explicit(&r->n, n + 1, memory_order_release);
    unsigned pinned = atomic_load_explicit(&r->n_pinned, memory_order_relaxed);
    if (CT_FLIGHT_UNLIKELY(pinned < CT_FLIGHT_PINNED)) {
        ct_flight_slot *p = &r->pinned[pinned];
        atomic_store_explicit(&p->seq, 0, memory_order_relaxed);
        atomic_thread_fence(memory_order_release);
        p->epoch = s->epoch, p->context = context, p->api = api, p->kind = kind, p->index = n;
        p->launch = s->launch;
        atomic_store_explicit(&p->seq, seq, memory_order_release);
        atomic_store_explicit(&r->n_pinned, pinned + 1, memory_order_release);
    }
}

/* A whole launch into r at once (what the shim does in two steps). */
void ct_flight_record(ct_flight *f, ct_flight_ring *r, const ct_flight_work *w);

/* What a stream handle, named through entry api by a thread on context,
 * is: the caller's (the shim's: the driver's special handles and its
 * per-thread entry points); given when the rings are read.  NULL: the
 * handle as it is, 0 the context's default stream. */
typedef ct_flight_stream (*ct_flight_streams)(uint64_t handle, uint32_t api, uint64_t context, uint64_t thread);

/* streams: as above, for the rings' launches; the proof calls name their
 * streams already resolved. */
ct_flight *ct_flight_new(ct_flight_streams streams);
void ct_flight_free(ct_flight *f);
/* In a forked child: the mutex fresh, every ring emptied (the child runs
 * none of its parent's work). */
void ct_flight_atfork_child(ct_flight *f);

/* The calling thread's ring, made (or taken over from a thread that ended)
 * on its first launch; NULL when out of memory: its launches are not
 * remembered.  thread: its OS thread id, the ring's launches'.
 * ct_flight_ring_release when the thread ends. */
ct_flight_ring *ct_flight_ring_take(ct_flight *f, uint64_t thread);
void ct_flight_ring_release(ct_flight *f, ct_flight_ring *r);

/* ---- proofs: each ct_flight_begin_proof's value goes to at most one
 * proof, made once the driver said the call succeeded. -------------------- */

/* Advances the epoch: the work a proof made now may cover is that of
 * epoch at most the value returned.  Inline: every synchronous copy
 * begins one. */
static inline uint64_t ct_flight_begin_proof(ct_flight *f)
{
    (void)f; /* the clock is the process's (above) */
    return atomic_fetch_add_explicit(&ct_flight_clock_now.epoch, 1, memory_order_relaxed);
}
/* All work of context through epoch `upto` finished (cuCtxSynchronize). */
void ct_flight_prove_context(ct_flight *f, uint64_t context, uint64_t upto);
/* All work of stream s through upto finished (its synchronise or a
 * successful query), and of the streams it waited on before then. */
void ct_flight_prove_stream(ct_flight *f, const ct_flight_stream *s, uint64_t upto);
/* A context's proofs, for a caller that proves the same context often (a
 * thread's synchronous copies): the context's entry in the table, claimed
 * on this first ask; NULL for context 0 or when the table has no room (then
 * nothing is recorded: more suspects, never fewer).  An entry is its
 * context's for the flight's life: a context is never forgotten, and
 * context lifetimes are never reused, so the caller may keep it. */
typedef struct ct_flight_context_proofs ct_flight_context_proofs;
ct_flight_context_proofs *ct_flight_context_proofs_of(ct_flight *f, uint64_t context);
/* All work of the blocking streams of c's context through upto finished:
 * a synchronous copy on the legacy default stream waited for them. */
void ct_flight_prove_blocking_at(ct_flight_context_proofs *c, uint64_t upto);
/* A stream created under handle `stream`, its lifetime `lifetime`
 * (core/lifetimes.h): whatever the handle's earlier stream proved, waited
 * on or was flagged goes; a non-blocking one no legacy ordering proves. */
void ct_flight_stream_created(ct_flight *f, uint64_t stream, uint64_t lifetime, bool nonblocking);
/* The stream's lifetime `lifetime` ended (its destroy): its scope goes,
 * unless the handle names a stream created since. */
void ct_flight_forget_stream(ct_flight *f, uint64_t stream, uint64_t lifetime);
/* Event `event`, in its lifetime `lifetime`, recorded on s at epoch `at`
 * (a begin_proof value). */
void ct_flight_record_event(ct_flight *f, uint64_t event, uint64_t lifetime, const ct_flight_stream *s, uint64_t at);
/* Event found complete (its synchronise, a successful query): what it
 * was recorded after finished. */
void ct_flight_event_done(ct_flight *f, uint64_t event);
/* Stream s waits, from epoch at, for event's record: once s is proven
 * past at, so is the stream the event was recorded on, through its record. */
void ct_flight_wait_event(ct_flight *f, const ct_flight_stream *s, uint64_t event, uint64_t at);
/* The event's lifetime `lifetime` ended (its destroy, or its handle made
 * again): its record goes, unless it is a later lifetime's. */
void ct_flight_forget_event(ct_flight *f, uint64_t event, uint64_t lifetime);

/* ---- suspects -------------------------------------------------------------- */

typedef struct ct_suspect {
    ct_flight_work work;
    bool prime; /* the oldest unproven launch on its stream */
} ct_suspect;

/* The launches of context (0: any) not proven finished, at most cap into
 * out: streams in the order of their oldest suspect, oldest first within
 * each.  Returns how many there are (kept or not, counted ones included). */
size_t ct_flight_suspects(ct_flight *f, uint64_t context, ct_suspect *out, size_t cap);

#endif

/*
 * flight.c - the rings of work in flight and the proof table (flight.h).
 *
 * Owns: each thread's ring (written by its thread alone, read by others
 * through a sequence per slot), the epoch, and the table of what each
 * scope (a context, a stream, a context's blocking streams) and each
 * recorded event proved.  Which launch is a suspect is core's
 * ct_suspect_rule (rules.h), asked with what the table holds for it.
 *
 * Invariants (beside flight.h's):
 * - A slot's seq is 0 while it is written or empty, and written last: a
 *   reader that finds it non-zero, reads the fields, and finds the same
 *   seq again has read one whole launch.
 * - Proofs only grow (max); a wait propagates a proof to the stream it
 *   waited on, at most CT_FLIGHT_CHAIN hops deep, under the table's mutex.
 * - A created stream's scope and an event's record are forgotten only by
 *   the lifetime that made them (core/lifetimes.h): an end seen after the
 *   handle was made again leaves the new one's.
 * - The ring list and the spare list change under the mutex; a ring is in
 *   exactly one of "in use" (its thread alive) and spare.
 */
#include "flight.h"

#include <assert.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ct_hash.h"
#include "rules.h"

#define CT_FLIGHT_CHAIN 8

/* A context's proofs, kept apart from the streams' and lock-free: a
 * synchronous copy proves its context's blocking streams, and copies are
 * frequent.  Open addressing; a context past the table's room is not
 * recorded (more suspects, never fewer). */
#define CT_FLIGHT_CONTEXTS 64
typedef struct ct_flight_context_proofs {
    atomic_uint_fast64_t context, proven, blocking;
} context_proofs;

/* A stream's proofs are keyed by the stream as stream_key names it: a
 * created stream by its handle alone, a default one by its context and
 * (per-thread) thread. */
typedef ct_flight_stream scope_key;

typedef struct wait_link {
    uint64_t at;   /* the epoch the wait began */
    scope_key on;  /* the stream the event was recorded on */
    uint64_t upto; /* its record's epoch */
} wait_link;

typedef struct scope {
    scope_key key;
    uint64_t proven; /* 0: nothing */
    bool nonblocking;
    uint64_t lifetime; /* a created stream's, from its create; 0: not known */
    unsigned n_waits, next_wait;
    wait_link waits[CT_FLIGHT_WAITS];
    UT_hash_handle hh;
} scope;

typedef struct event_rec {
    uint64_t event;
    uint64_t lifetime; /* the event's when recorded */
    scope_key stream;
    uint64_t at;
    UT_hash_handle hh;
} event_rec;

struct ct_flight {
    ct_flight_streams streams;
    context_proofs contexts[CT_FLIGHT_CONTEXTS];
    pthread_mutex_t lock;
    scope *scopes;
    size_t n_scopes;
    event_rec *events;
    size_t n_events;
    ct_flight_ring *rings, *spare;
};

ct_flight_clock ct_flight_clock_now = {1, 0};

ct_flight *ct_flight_new(ct_flight_streams streams)
{
    ct_flight *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->streams = streams;
    pthread_mutex_init(&f->lock, NULL);
    return f;
}

void ct_flight_free(ct_flight *f)
{
    if (!f)
        return;
    scope *s, *ts;
    HASH_ITER(hh, f->scopes, s, ts)
    {
        HASH_DELETE(hh, f->scopes, s);
        free(s);
    }
    event_rec *e, *te;
    HASH_ITER(hh, f->events, e, te)
    {
        HASH_DELETE(hh, f->events, e);
        free(e);
    }
    for (ct_flight_ring *r = f->rings, *next; r; r = next) {
        next = r->next;
        free(r);
    }
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static void ring_clear(ct_flight_ring *r)
{
    for (unsigned i = 0; i < CT_FLIGHT_RECENT; i++)
        atomic_store_explicit(&r->recent[i].seq, 0, memory_order_relaxed);
    for (unsigned i = 0; i < CT_FLIGHT_PINNED; i++)
        atomic_store_explicit(&r->pinned[i].seq, 0, memory_order_relaxed);
    atomic_store_explicit(&r->n, 0, memory_order_relaxed);
    atomic_store_explicit(&r->n_pinned, 0, memory_order_relaxed);
}

void ct_flight_atfork_child(ct_flight *f)
{
    pthread_mutex_init(&f->lock, NULL);
    for (ct_flight_ring *r = f->rings; r; r = r->next)
        ring_clear(r);
}

ct_flight_ring *ct_flight_ring_take(ct_flight *f, uint64_t thread)
{
    pthread_mutex_lock(&f->lock);
    ct_flight_ring *r = f->spare;
    if (r) {
        f->spare = r->next_spare;
    } else if ((r = calloc(1, sizeof *r))) {
        r->next = f->rings;
        f->rings = r;
    }
    if (r) {
        r->owners[r->n_owners % CT_FLIGHT_OWNERS].thread = thread;
        r->owners[r->n_owners % CT_FLIGHT_OWNERS].from = atomic_load_explicit(&r->n, memory_order_relaxed);
        r->n_owners++;
        r->generation = atomic_load_explicit(&ct_flight_clock_now.generation, memory_order_relaxed);
    }
    pthread_mutex_unlock(&f->lock);
    return r;
}

void ct_flight_ring_release(ct_flight *f, ct_flight_ring *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&f->lock);
    r->next_spare = f->spare;
    f->spare = r;
    pthread_mutex_unlock(&f->lock);
}

/* ---- slots -------------------------------------------------------------- */

/* The thread that made launch `index` of r: its holder then. */
static uint64_t made_by(const ct_flight_ring *r, uint64_t index)
{
    unsigned known = r->n_owners < CT_FLIGHT_OWNERS ? r->n_owners : CT_FLIGHT_OWNERS;
    uint64_t thread = 0; /* a ring is read only once taken: it has a holder */
    for (unsigned k = 0; k < known; k++) {
        unsigned at = (r->n_owners - 1 - k) % CT_FLIGHT_OWNERS;
        thread = r->owners[at].thread;
        if (r->owners[at].from <= index)
            break;
    }
    return thread;
}

/* One whole launch out of s, of ring r; false when it is empty or being
 * written.  The fields are plain: their owner writes them
 * between two writes of seq, and a read they tore is thrown away here, so
 * this reader is not instrumented for races. */
__attribute__((no_sanitize("thread"))) static bool slot_read(const ct_flight *f, const ct_flight_ring *r,
                                                             const ct_flight_slot *s, ct_flight_work *w)
{
    ct_flight_slot *v = (ct_flight_slot *)s;
    uint64_t seq = atomic_load_explicit(&v->seq, memory_order_acquire);
    if (!seq)
        return false;
    *w = (ct_flight_work){
        .seq = seq,
        .epoch = v->epoch,
        .what = v->launch.what,
        .stream = {v->launch.stream, v->context, 0},
        .raw_stream = v->launch.stream,
        .api = v->api,
        .index = v->index,
        .kind = (uint8_t)v->kind,
    };
    memcpy(w->grid, v->launch.grid, sizeof w->grid);
    memcpy(w->block, v->launch.block, sizeof w->block);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&v->seq, memory_order_relaxed) != seq)
        return false;
    uint64_t thread = made_by(r, w->index);
    w->thread = thread;
    if (f->streams)
        w->stream = f->streams(v->launch.stream, w->api, v->context, thread);
    return true;
}

/* w's launch as a slot holds it, its stream as the caller named it. */
static ct_flight_launch launch_of(const ct_flight_work *w, uint64_t stream)
{
    ct_flight_launch l = {.what = w->what, .stream = stream};
    memcpy(l.grid, w->grid, sizeof w->grid);
    memcpy(l.block, w->block, sizeof w->block);
    return l;
}

/* w into s, by its own thread. */
static void put_work(ct_flight_slot *s, const ct_flight_work *w)
{
    atomic_store_explicit(&s->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    s->epoch = w->epoch;
    s->context = w->stream.context;
    s->api = w->api;
    s->kind = w->kind;
    s->index = w->index;
    s->launch = launch_of(w, w->raw_stream);
    atomic_store_explicit(&s->seq, w->seq, memory_order_release);
}

void ct_flight_record(ct_flight *f, ct_flight_ring *r, const ct_flight_work *w)
{
    ct_flight_slot *s = ct_flight_claim(f, r);
    s->launch = launch_of(w, w->stream.handle);
    ct_flight_commit(r, s, w->seq, w->stream.context, w->api, w->kind);
}

static bool same_stream_of(const ct_flight_stream *a, const ct_flight_stream *b)
{
    return a->handle == b->handle && (a->handle || (a->context == b->context && a->thread == b->thread));
}

/* ---- the proof table (under the lock) --------------------------------------- */

static scope_key stream_key(const ct_flight_stream *s)
{
    return (scope_key){s->handle, s->handle ? 0 : s->context, s->handle ? 0 : s->thread};
}

static scope *find_locked(const ct_flight *f, scope_key k)
{
    scope *s;
    HASH_FIND(hh, f->scopes, &k, sizeof k, s);
    return s;
}

/* The scope of key k, made when new; NULL past the bound or out of memory. */
static scope *scope_locked(ct_flight *f, scope_key k)
{
    scope *s = find_locked(f, k);
    if (s || f->n_scopes >= CT_FLIGHT_MAX_SCOPES || !(s = calloc(1, sizeof *s)))
        return s;
    s->key = k;
    HASH_ADD(hh, f->scopes, key, sizeof s->key, s);
    if (!ct_hash_added(&s->hh)) {
        free(s);
        return NULL;
    }
    f->n_scopes++;
    return s;
}

static void prove_locked(ct_flight *f, scope_key k, uint64_t upto, unsigned depth)
{
    assert(depth <= CT_FLIGHT_CHAIN && "a wait propagates a proof at most CT_FLIGHT_CHAIN hops");
    scope *s = scope_locked(f, k);
    if (!s || s->proven >= upto)
        return;
    assert(upto > s->proven && "proofs only grow");
    s->proven = upto;
    atomic_fetch_add_explicit(&ct_flight_clock_now.generation, 1, memory_order_relaxed);
    if (depth >= CT_FLIGHT_CHAIN)
        return;
    /* Copied: proving a waited-on stream may grow this table. */
    wait_link waits[CT_FLIGHT_WAITS];
    unsigned n = s->n_waits;
    memcpy(waits, s->waits, sizeof waits);
    for (unsigned i = 0; i < n; i++)
        if (waits[i].at <= upto)
            prove_locked(f, waits[i].on, waits[i].upto, depth + 1);
}

static void prove(ct_flight *f, scope_key k, uint64_t upto)
{
    if (!upto)
        return;
    pthread_mutex_lock(&f->lock);
    prove_locked(f, k, upto, 0);
    pthread_mutex_unlock(&f->lock);
}

/* The proofs of context, claimed when add; NULL when it has none (or no room). */
static context_proofs *context_of(ct_flight *f, uint64_t context, bool add)
{
    if (!context)
        return NULL;
    unsigned at = (unsigned)((context * 0x9E3779B97F4A7C15ull) >> 58) % CT_FLIGHT_CONTEXTS;
    for (unsigned i = 0; i < CT_FLIGHT_CONTEXTS; i++) {
        context_proofs *c = &f->contexts[(at + i) % CT_FLIGHT_CONTEXTS];
        uint64_t key = atomic_load_explicit(&c->context, memory_order_acquire);
        if (key == context)
            return c;
        if (key == 0) {
            if (!add)
                return NULL;
            if (atomic_compare_exchange_strong(&c->context, &key, context) || key == context)
                return c;
        }
    }
    return NULL;
}

/* proven = max(proven, upto); a new proof counts in the generation. */
static void raise_to(atomic_uint_fast64_t *proven, uint64_t upto)
{
    uint64_t now = atomic_load_explicit(proven, memory_order_relaxed);
    while (now < upto && !atomic_compare_exchange_weak(proven, &now, upto))
        ;
    assert(atomic_load_explicit(proven, memory_order_relaxed) >= upto && "proofs only grow: max, never less");
    if (now < upto)
        atomic_fetch_add_explicit(&ct_flight_clock_now.generation, 1, memory_order_relaxed);
}

static uint64_t context_proven(ct_flight *f, uint64_t context, bool blocking)
{
    context_proofs *c = context_of(f, context, false);
    return c ? atomic_load_explicit(blocking ? &c->blocking : &c->proven, memory_order_acquire) : 0;
}

void ct_flight_prove_context(ct_flight *f, uint64_t context, uint64_t upto)
{
    context_proofs *c = upto ? context_of(f, context, true) : NULL;
    if (c)
        raise_to(&c->proven, upto);
}

void ct_flight_prove_stream(ct_flight *f, const ct_flight_stream *s, uint64_t upto)
{
    prove(f, stream_key(s), upto);
}

ct_flight_context_proofs *ct_flight_context_proofs_of(ct_flight *f, uint64_t context)
{
    return context_of(f, context, true);
}

void ct_flight_prove_blocking_at(ct_flight_context_proofs *c, uint64_t upto)
{
    assert(c && atomic_load_explicit(&c->context, memory_order_relaxed) != 0 &&
           "a kept entry is a claimed one (ct_flight_context_proofs_of)");
    if (upto)
        raise_to(&c->blocking, upto);
}

/* Removes a created stream's scope when lifetime made it (any lifetime
 * when `any`). */
static void drop_stream_locked(ct_flight *f, uint64_t stream, uint64_t lifetime, bool any)
{
    scope *s = find_locked(f, (scope_key){stream, 0, 0});
    if (!s || (!any && s->lifetime != lifetime))
        return;
    HASH_DELETE(hh, f->scopes, s);
    f->n_scopes--;
    free(s);
}

void ct_flight_stream_created(ct_flight *f, uint64_t stream, uint64_t lifetime, bool nonblocking)
{
    pthread_mutex_lock(&f->lock);
    drop_stream_locked(f, stream, 0, true); /* the handle's earlier stream has ended */
    scope *s = scope_locked(f, (scope_key){stream, 0, 0});
    if (s) {
        s->nonblocking = nonblocking;
        s->lifetime = lifetime;
    }
    pthread_mutex_unlock(&f->lock);
}

void ct_flight_forget_stream(ct_flight *f, uint64_t stream, uint64_t lifetime)
{
    pthread_mutex_lock(&f->lock);
    drop_stream_locked(f, stream, lifetime, false);
    pthread_mutex_unlock(&f->lock);
}

void ct_flight_record_event(ct_flight *f, uint64_t event, uint64_t lifetime, const ct_flight_stream *s, uint64_t at)
{
    pthread_mutex_lock(&f->lock);
    event_rec *e;
    HASH_FIND(hh, f->events, &event, sizeof event, e);
    if (!e && f->n_events < CT_FLIGHT_MAX_EVENTS && (e = calloc(1, sizeof *e))) {
        e->event = event;
        HASH_ADD(hh, f->events, event, sizeof e->event, e);
        if (ct_hash_added(&e->hh)) {
            f->n_events++;
        } else {
            free(e);
            e = NULL;
        }
    }
    if (e) {
        e->lifetime = lifetime;
        e->stream = stream_key(s);
        e->at = at;
    }
    pthread_mutex_unlock(&f->lock);
}

void ct_flight_event_done(ct_flight *f, uint64_t event)
{
    pthread_mutex_lock(&f->lock);
    event_rec *e;
    HASH_FIND(hh, f->events, &event, sizeof event, e);
    if (e)
        prove_locked(f, e->stream, e->at, 0);
    pthread_mutex_unlock(&f->lock);
}

void ct_flight_wait_event(ct_flight *f, const ct_flight_stream *s, uint64_t event, uint64_t at)
{
    pthread_mutex_lock(&f->lock);
    event_rec *e;
    HASH_FIND(hh, f->events, &event, sizeof event, e);
    scope *w = e ? scope_locked(f, stream_key(s)) : NULL;
    if (w) {
        w->waits[w->next_wait] = (wait_link){at, e->stream, e->at};
        w->next_wait = (w->next_wait + 1) % CT_FLIGHT_WAITS;
        if (w->n_waits < CT_FLIGHT_WAITS)
            w->n_waits++;
    }
    pthread_mutex_unlock(&f->lock);
}

void ct_flight_forget_event(ct_flight *f, uint64_t event, uint64_t lifetime)
{
    pthread_mutex_lock(&f->lock);
    event_rec *e;
    HASH_FIND(hh, f->events, &event, sizeof event, e);
    if (e && e->lifetime != lifetime)
        e = NULL; /* a later lifetime's record */
    if (e) {
        HASH_DELETE(hh, f->events, e);
        f->n_events--;
    }
    pthread_mutex_unlock(&f->lock);
    free(e);
}

/* What the table holds for w, for core's rule. */
static bool unproven_locked(const ct_flight *f, const ct_flight_work *w)
{
    scope_key stream = stream_key(&w->stream);
    const scope *s = find_locked(f, stream);
    ct_proven p = {
        .context = context_proven((ct_flight *)f, w->stream.context, false),
        .stream = s ? s->proven : 0,
        .blocking = context_proven((ct_flight *)f, w->stream.context, true),
        .nonblocking = s && s->nonblocking,
    };
    return ct_suspect_rule(w->epoch, &p);
}

/* The launches of r between its pinned part and its recent one: gone,
 * counted.  All are older than the oldest recent launch, so a proof of
 * its context at or after that one's epoch covers them; their streams are
 * not known.  How many are still unproven. */
static uint64_t dropped_locked(const ct_flight *f, ct_flight_ring *r)
{
    uint64_t n = atomic_load_explicit(&r->n, memory_order_relaxed);
    if (n <= CT_FLIGHT_RECENT)
        return 0;
    unsigned pinned = atomic_load_explicit(&r->n_pinned, memory_order_acquire);
    ct_flight_work last, oldest;
    uint64_t after = pinned && slot_read(f, r, &r->pinned[pinned - 1], &last) ? last.index + 1 : 0;
    uint64_t first_recent = n - CT_FLIGHT_RECENT;
    if (first_recent <= after || !slot_read(f, r, &r->recent[first_recent % CT_FLIGHT_RECENT], &oldest))
        return 0;
    ct_proven p = {
        .context = context_proven((ct_flight *)f, oldest.stream.context, false),
        .nonblocking = true, /* as if: their streams are not known */
    };
    return ct_suspect_rule(oldest.epoch, &p) ? first_recent - after : 0;
}

/* ---- the ring --------------------------------------------------------------- */

/* A proof was made since r was last pruned: its pinned part becomes the
 * oldest launches still unproven, of the pinned part and then of the recent
 * one (those newer than the pinned), as many as fit. */
void ct_flight_prune(ct_flight *f, ct_flight_ring *r, uint64_t generation)
{
    ct_flight_work keep[CT_FLIGHT_PINNED], w;
    unsigned n = 0, pinned = atomic_load_explicit(&r->n_pinned, memory_order_relaxed);
    uint64_t total = atomic_load_explicit(&r->n, memory_order_relaxed), next = 0;
    pthread_mutex_lock(&f->lock);
    for (unsigned i = 0; i < pinned && n < CT_FLIGHT_PINNED; i++)
        if (slot_read(f, r, &r->pinned[i], &w) && (next = w.index + 1, unproven_locked(f, &w)))
            keep[n++] = w;
    for (uint64_t i = total > CT_FLIGHT_RECENT ? total - CT_FLIGHT_RECENT : 0; i < total && n < CT_FLIGHT_PINNED; i++)
        if (i >= next && slot_read(f, r, &r->recent[i % CT_FLIGHT_RECENT], &w) && w.index == i &&
            unproven_locked(f, &w))
            keep[n++] = w;
    pthread_mutex_unlock(&f->lock);
    for (unsigned i = 0; i < CT_FLIGHT_PINNED; i++) {
        if (i < n)
            put_work(&r->pinned[i], &keep[i]);
        else
            atomic_store_explicit(&r->pinned[i].seq, 0, memory_order_relaxed);
    }
    /* Full, it takes no more launches until the next proof: those after its
     * last are in the recent part. */
    atomic_store_explicit(&r->n_pinned, n, memory_order_release);
    r->generation = generation;
}

/* ---- suspects ----------------------------------------------------------------- */

/* A suspect and the launch number of the oldest suspect on its stream. */
typedef struct ranked {
    ct_suspect s;
    uint64_t first;
} ranked;

static int by_seq(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    return (a->s.work.seq > b->s.work.seq) - (a->s.work.seq < b->s.work.seq);
}

static int by_stream_then_seq(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->first != b->first)
        return (a->first > b->first) - (a->first < b->first);
    return by_seq(pa, pb);
}

/* Sorted by launch: each one's stream's oldest, and the prime ones marked. */
static void rank(ranked *all, size_t n)
{
    qsort(all, n, sizeof *all, by_seq);
    for (size_t i = 0; i < n; i++) {
        all[i].first = all[i].s.work.seq;
        all[i].s.prime = true;
        for (size_t j = 0; j < i; j++)
            if (same_stream_of(&all[j].s.work.stream, &all[i].s.work.stream)) {
                all[i].first = all[j].first;
                all[i].s.prime = false;
                break;
            }
    }
    qsort(all, n, sizeof *all, by_stream_then_seq);
}

/* The unproven launches of context in every ring, into all (room for every
 * slot); how many, and *dropped the launches the rings counted but did not
 * keep.  A launch both pinned and recent is taken once. */
static size_t gather_locked(ct_flight *f, uint64_t context, ranked *all, uint64_t *dropped)
{
    size_t n = 0;
    for (ct_flight_ring *r = f->rings; r; r = r->next) {
        *dropped += dropped_locked(f, r);
        unsigned pinned = atomic_load_explicit(&r->n_pinned, memory_order_acquire);
        uint64_t after = 0;
        ct_flight_work w;
        for (unsigned i = 0; i < pinned; i++)
            if (slot_read(f, r, &r->pinned[i], &w)) {
                after = w.index + 1;
                if ((!context || w.stream.context == context) && unproven_locked(f, &w))
                    all[n++].s = (ct_suspect){.work = w};
            }
        for (unsigned i = 0; i < CT_FLIGHT_RECENT; i++)
            if (slot_read(f, r, &r->recent[i], &w) && w.index >= after && (!context || w.stream.context == context) &&
                unproven_locked(f, &w))
                all[n++].s = (ct_suspect){.work = w};
    }
    return n;
}

size_t ct_flight_suspects(ct_flight *f, uint64_t context, ct_suspect *out, size_t cap)
{
    pthread_mutex_lock(&f->lock);
    size_t slots = 0;
    for (const ct_flight_ring *r = f->rings; r; r = r->next)
        slots += CT_FLIGHT_PINNED + CT_FLIGHT_RECENT;
    ranked *all = slots ? calloc(slots, sizeof *all) : NULL;
    uint64_t dropped = 0;
    size_t n = all ? gather_locked(f, context, all, &dropped) : 0;
    pthread_mutex_unlock(&f->lock);
    assert(n <= slots && "at most one suspect a slot");
    if (n) /* qsort wants a valid array even for none */
        rank(all, n);
    for (size_t i = 0; i < n && i < cap; i++)
        out[i] = all[i].s;
    free(all);
    return n + dropped;
}

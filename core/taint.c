/*
 * taint.c - the failure store (see taint.h and failures.h).
 *
 * Owns: the failure records, their ids, reference counts, fold index and
 * skip rings; the store's lock; the interned names; and the translation of
 * each operation into claim edits on the allocations it touches.
 *
 * Invariants:
 * - Every record in the id table outside a store call is live: some claim
 *   carries it, or a pending write scope pins it (below).  A record whose
 *   count reaches zero leaves the table at once and goes to a free list,
 *   so a warm happy path never calls malloc.
 * - A permanent anchor record (id 0, never looked up) keeps the id table's
 *   buckets allocated while no failure lives: uthash frees the table with
 *   its last element, and the happy path would otherwise pay malloc for it.
 * - Real ids count up from 1; provisional ids come from the top half of the
 *   id space, so the millions of scopes a busy program opens and closes do
 *   not use up real ids, and "lowest id" - the oldest, the root cause -
 *   always prefers a real failure to a provisional one.  A kind wraps only
 *   after 2^31 ids, skipping ids still live.
 * - Scope slots: a scope of at most CT_SCOPE_RANGES ranges lives in its
 *   thread's own slot (ct_scope_rule), not in the store, while it is OPEN;
 *   the summary's open count says how many are.  A slot is one thread's
 *   from its first scope until it exits (given back idle; one holding an
 *   unfinished scope stays taken), and only its owner moves it out of IDLE,
 *   BUSY and SHOWN, so entering a scope takes no compare-and-swap.  Every lock taken alone shows them all (places each as
 *   enter_write once did) before doing anything else, and a looker meeting
 *   one locks alone; the lock-free checks answer nothing while one is open.
 *   An owner settles an unshown scope itself and frees the slot only after
 *   w is settled, the open count falling last, so a check that sees no open
 *   scope sees the outcome.  An unshown scope that failed is placed before
 *   it is settled, so it folds exactly as a scope placed at entry would
 *   (the pin decides).
 * - Pin: while enter_write places a provisional failure, the real failure
 *   with the lowest id among those it displaces completely is kept alive by
 *   that provisional failure until its scope exits, so a loop failing the
 *   same way on the same buffer folds into one failure instead of minting
 *   one per turn.
 * - Out of memory never loses taint: when no record can be had, one
 *   stand-in record embedded in the store carries every such failure.
 * - Intact (taint.h, ct_taint_refused_launch): a record is intact only
 *   while every occurrence of it was a launch refused at once whose
 *   outputs carried nothing or only intact failures, and no skip has
 *   passed it on; any other occurrence or a skip ends it for good.  The
 *   out-of-memory stand-in is never intact.
 * - Every operation but an unshown scope's enter and successful exit runs
 *   under the store's lock (cutaint's own rwlock, rwlock.h, that
 *   prefers writers): held alone by whatever changes anything, shared by
 *   checks that only look, which write nothing shared (lookups from them
 *   use find_record, not lookup).  A check that finds work to do lets go
 *   and takes the lock to write.  Before any of that, a check asks the
 *   summary (summary.h), lock-free, whether its ranges can reach a claim
 *   at all: with taint elsewhere, most checks end there.
 * - The summary counts exactly the allocations whose claims are not empty:
 *   every claim edit (set_span, clear_span) notes the allocation's hull
 *   after it, and an allocation forgotten with claims leaves it (forget
 *   hook, called by the map).
 * - Regions live in a map of their own, without claims: each lies wholly
 *   inside one allocation (or run) of the main map, and none overlap.
 *   Whatever ends an allocation (a free, its owner forgotten, an
 *   allocation or mapping over it, an unmap) ends its regions first.
 */
#include "taint.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "allocmap.h"
#include "claims.h"
#include "ct_status.h"
#include "heap.h"
#include "hot_tls.h"
#include "rules.h"
#include "rwlock.h"
#include "scope.h"
#include "summary.h"

#define OOM_API "cutaint: out of memory, failure detail dropped"

typedef struct failure {
    ct_failure_id id;
    bool provisional;
    bool fold_indexed;
    uint64_t refs;    /* claims carrying it, plus one for a pin */
    uint64_t seen;    /* the last survey (epoch) that counted it */
    uint64_t seen_at; /* ... and the first carried address it found */
    uint64_t fold_key;
    ct_failure_desc desc;
    uint64_t occurrences;
    uint64_t last_launch; /* the latest occurrence's launch number */
    uint64_t skips_total;
    ct_skip_desc skips[CT_SKIPS_KEPT]; /* ring; the next goes to total % KEPT */
    bool intact;                       /* see the invariants */
    uint32_t n_attempts;
    ct_launch_key attempts[CT_ATTEMPTS_KEPT]; /* oldest first, distinct */
    struct failure *pinned;                   /* provisional only: the failure it keeps alive */
    struct failure *next_free;
    UT_hash_handle hh_id;
    UT_hash_handle hh_fold;
} failure;

typedef struct interned {
    UT_hash_handle hh;
    char name[];
} interned;

typedef struct id_space {
    uint64_t next, first, limit;
    bool wrapped;
} id_space;

struct ct_store {
    ct_summary summary; /* first: 64-aligned, read by every check */
    ct_rwlock lock;
    ct_allocmap *map;
    ct_allocmap *regions; /* the program's regions, made at the first; no claims */
    ct_claim_env *env;
    failure *by_id;
    failure *by_fold;
    failure *free_records;
    failure *hot;    /* last record looked up by id */
    failure *pinner; /* the provisional failure enter_write places */
    failure anchor;
    failure oom;
    bool oom_active;
    id_space real_ids, provisional_ids;
    size_t n_live;
    size_t n_records; /* malloc'd records, live or free */
    uint64_t epoch;
    interned *names;
    size_t names_bytes;
    int unknown_error;      /* ct_store_new's: see lost_root */
    ct_scope_gate gate;     /* its serial among the process's stores, its summary, itself (scope.h) */
    pthread_key_t slot_key; /* a thread's slot here, given back when it exits */
    bool slot_key_made;
    ct_scope_slot slots[CT_SCOPE_SLOTS];
};

CT_HOT_TLS struct ct_scope_own ct_scope_own;
static atomic_uint_fast64_t store_serials;

/* Checks that only look and that the summary could not answer (is any
 * byte of these ranges claimed?  which failure is oldest?) share the lock.
 * They write nothing shared - not even the record cache (`hot`) - only the
 * lookup cache, which is per thread. */
static void show_scopes(ct_store *s);
static unsigned open_scopes(const ct_store *s)
{
    return atomic_load_explicit(&s->summary.open_scopes, memory_order_acquire);
}
/* Whoever takes the lock first shows every open scope, so that what it
 * sees and changes is what it would be had each scope been placed when it
 * opened. */
static void lock_alone(ct_store *s)
{
    ct_rwlock_wrlock(&s->lock);
}
static void lock(ct_store *s)
{
    lock_alone(s);
    if (open_scopes(s))
        show_scopes(s);
}
static void unlock(ct_store *s)
{
    assert((!s->hot || s->hot->refs > 0 || s->hot == s->pinner) &&
           "a record in the id table outside a store call is live: a claim carries it or a scope pins it");
    ct_rwlock_wrunlock(&s->lock);
}
/* Showing a scope changes the store: a looker meeting one locks alone. */
static void lock_to_look(ct_store *s)
{
    if (open_scopes(s))
        lock(s);
    else
        ct_rwlock_rdlock(&s->lock);
}
/* A look that met an open scope holds the lock alone (the writer's bit is
 * then its own: no reader holds it beside a writer). */
static void unlock_look(ct_store *s)
{
    if (atomic_load_explicit(&s->lock.word, memory_order_relaxed) & CT_RWLOCK_WRITER)
        unlock(s);
    else
        ct_rwlock_rdunlock(&s->lock);
}

/* Writers first, so a stream of checks cannot starve a change (rwlock.h). */
static void lock_init(ct_store *s)
{
    ct_rwlock_init(&s->lock);
}

/* --- records and ids --------------------------------------------------- */

/* The id table's hash value.  Ids are handed out in sequence, and an odd
 * multiplier maps any run of them onto distinct low bits (uthash's bucket
 * index), at a tenth of the default hash's instructions. */
static unsigned id_hash(ct_failure_id id)
{
    return (unsigned)id * 0x9e3779b1u;
}

/* For a caller that only looks (holds the lock shared): no cache update. */
static failure *find_record(ct_store *s, ct_failure_id id)
{
    if (id == 0)
        return NULL;
    if (s->hot && s->hot->id == id)
        return s->hot;
    if (s->oom_active && s->oom.id == id)
        return &s->oom;
    failure *f;
    HASH_FIND_BYHASHVALUE(hh_id, s->by_id, &id, sizeof(id), id_hash(id), f);
    return f;
}

static failure *lookup(ct_store *s, ct_failure_id id)
{
    failure *f = find_record(s, id);
    if (f)
        s->hot = f;
    return f;
}

static ct_failure_id take_id(ct_store *s, id_space *space)
{
    for (;;) {
        ct_failure_id id = (ct_failure_id)space->next++;
        if (space->next == space->limit) {
            space->next = space->first;
            space->wrapped = true;
        }
        if (!space->wrapped || !lookup(s, id)) {
            assert(id != 0 && "id 0 is the anchor's, never handed out");
            assert((space == &s->provisional_ids) == (id >= CT_FIRST_PROVISIONAL_ID) &&
                   "real ids lie below the provisional half of the id space");
            return id;
        }
    }
}

static failure *record_get(ct_store *s)
{
    failure *f = s->free_records;
    if (f) {
        s->free_records = f->next_free;
        return f;
    }
    f = malloc(sizeof(*f));
    if (f)
        s->n_records++;
    return f;
}

static void record_put(ct_store *s, failure *f)
{
    f->next_free = s->free_records;
    s->free_records = f;
}

static void record_init(failure *f, ct_failure_id id, const ct_failure_desc *desc, bool provisional)
{
    f->id = id;
    f->provisional = provisional;
    f->fold_indexed = false;
    f->refs = 0;
    f->seen = 0;
    f->desc = *desc;
    f->occurrences = 1;
    f->last_launch = desc->launch_seq;
    f->skips_total = 0;
    f->intact = false;
    f->n_attempts = 0;
    f->pinned = NULL;
}

/* One more occurrence of f, desc's. */
static void fold_into(failure *f, const ct_failure_desc *desc)
{
    f->occurrences++;
    f->last_launch = desc->launch_seq;
}

/* The record a failure gets when malloc says no: one per store, carrying
 * every failure that could not have its own until no claim is left. */
static failure *oom_stand_in(ct_store *s, const ct_failure_desc *desc, bool *is_new)
{
    *is_new = !s->oom_active;
    if (s->oom_active) {
        fold_into(&s->oom, desc);
        return &s->oom;
    }
    record_init(&s->oom, take_id(s, &s->real_ids), desc, false);
    s->oom.desc.api = OOM_API;
    s->oom_active = true;
    s->n_live++;
    return &s->oom;
}

/* id: the one to give it, 0 for the next of its kind. */
static failure *mint(ct_store *s, const ct_failure_desc *desc, bool provisional, ct_failure_id id, bool *is_new)
{
    failure *f = record_get(s);
    if (f) {
        if (!id)
            id = take_id(s, provisional ? &s->provisional_ids : &s->real_ids);
        assert(!find_record(s, id) && "a slot's id is never live when its slot is reused");
        record_init(f, id, desc, provisional);
        HASH_ADD_BYHASHVALUE(hh_id, s->by_id, id, sizeof(f->id), id_hash(f->id), f);
        if (ct_hash_added(&f->hh_id)) {
            s->n_live++;
            s->hot = f; /* its claims are about to reference it */
            *is_new = true;
            return f;
        }
        record_put(s, f);
    }
    return oom_stand_in(s, desc, is_new);
}

static void unref_record(ct_store *s, failure *f);

/* A scope pins one displaced failure: the lowest id among those whose last
 * bytes it overwrote, whatever order the claim edits released them in, so
 * that which one stays foldable does not depend on how claims are laid out. */
static bool pin_to_scope(ct_store *s, failure *f)
{
    failure *p = s->pinner;
    if (!p || f->provisional || f == &s->oom || (p->pinned && p->pinned->id < f->id))
        return false;
    failure *unpinned = p->pinned;
    p->pinned = f;
    f->refs = 1;
    if (unpinned)
        unref_record(s, unpinned); /* its pin was its last reference */
    return true;
}

/* f's count just reached zero: it leaves memory, unless a scope pins it. */
static void release(ct_store *s, failure *f)
{
    if (pin_to_scope(s, f))
        return;
    failure *pinned = f->pinned;
    if (f->fold_indexed)
        HASH_DELETE(hh_fold, s->by_fold, f);
    if (s->hot == f)
        s->hot = NULL;
    assert(f->refs == 0 && "a record leaves the table only once its count is zero");
    if (f == &s->oom) {
        s->oom_active = false;
    } else {
        HASH_DELETE(hh_id, s->by_id, f);
        record_put(s, f);
    }
    s->n_live--;
    if (pinned)
        unref_record(s, pinned);
}

static void unref_record(ct_store *s, failure *f)
{
    assert(f->refs > 0 && "a live failure's count is positive: one unref too many");
    if (--f->refs == 0)
        release(s, f);
}

static void release_if_unclaimed(ct_store *s, failure *f)
{
    if (f->refs == 0)
        release(s, f);
}

static void claim_ref(void *owner, ct_failure_id id)
{
    failure *f = lookup(owner, id);
    if (f)
        f->refs++;
}

static void claim_unref(void *owner, ct_failure_id id)
{
    failure *f = lookup(owner, id);
    if (f)
        unref_record(owner, f);
}

/* --- folding identical repeats ----------------------------------------- */

/* A string with its NUL, so that "ab","c" and "a","bc" differ. */
static uint64_t hash_str(uint64_t h, const char *str)
{
    static const unsigned char null_mark = 0xff; /* NULL differs from "" */
    return str ? ct_fnv1a(h, str, strlen(str) + 1) : ct_fnv1a(h, &null_mark, 1);
}

static uint64_t fold_key(const ct_failure_desc *d)
{
    uint64_t h = hash_str(hash_str(CT_FNV_OFFSET, d->api), d->kernel);
    return (h ^ (uint32_t)d->error ^ ((uint64_t)(uint32_t)d->lib_status << 32)) * 0x100000001b3ULL;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_kind(const ct_failure_desc *a, const ct_failure_desc *b)
{
    return a->error == b->error && a->lib_status == b->lib_status && same_str(a->api, b->api) &&
           same_str(a->kernel, b->kernel);
}

/* Index f for folding; a hash collision only costs the fold, never taint. */
static void index_for_folding(ct_store *s, failure *f, uint64_t key)
{
    failure *holder;
    HASH_FIND(hh_fold, s->by_fold, &key, sizeof(key), holder);
    if (holder || f == &s->oom)
        return;
    f->fold_key = key;
    HASH_ADD(hh_fold, s->by_fold, fold_key, sizeof(f->fold_key), f);
    f->fold_indexed = ct_hash_added(&f->hh_fold);
}

static failure *mint_or_fold(ct_store *s, const ct_failure_desc *desc, bool *is_new)
{
    uint64_t key = fold_key(desc);
    failure *f;
    HASH_FIND(hh_fold, s->by_fold, &key, sizeof(key), f);
    if (f && same_kind(&f->desc, desc)) {
        assert(!f->provisional && f != &s->oom && "only real failures fold (failures.h)");
        fold_into(f, desc);
        *is_new = false;
        return f;
    }
    f = mint(s, desc, false, 0, is_new);
    index_for_folding(s, f, key);
    return f;
}

static void snapshot(const failure *f, ct_failure_info *out)
{
    out->path_len = 0;
    out->path_cut = false;
    out->id = f->id;
    out->provisional = f->provisional;
    out->desc = f->desc;
    out->occurrences = f->occurrences;
    out->last_launch_seq = f->last_launch;
    out->skips_total = f->skips_total;
    out->n_skips = f->skips_total < CT_SKIPS_KEPT ? (uint32_t)f->skips_total : CT_SKIPS_KEPT;
    size_t oldest = f->skips_total > CT_SKIPS_KEPT ? f->skips_total % CT_SKIPS_KEPT : 0;
    for (uint32_t i = 0; i < out->n_skips; i++)
        out->skips[i] = f->skips[(oldest + i) % CT_SKIPS_KEPT];
}

static bool skip_produced(const ct_skip_desc *skip, uint64_t addr)
{
    for (uint32_t i = 0; i < skip->n_spans; i++)
        if (addr >= skip->spans[i].lo && addr < skip->spans[i].hi)
            return true;
    return false;
}

/* The way back from `addr` to the root: the newest kept skip that produced
 * addr, then the newest older one that produced what that skip needed, and
 * so on.  The newest is the one whose taint the bytes still carry. */
static void trace_path(ct_failure_info *info, uint64_t addr)
{
    uint8_t reversed[CT_SKIPS_KEPT];
    uint32_t n = 0;
    uint32_t limit = info->n_skips;
    for (;;) {
        uint32_t j = limit;
        while (j > 0 && !skip_produced(&info->skips[j - 1], addr))
            j--;
        if (j == 0)
            break;
        reversed[n++] = (uint8_t)(j - 1);
        addr = info->skips[j - 1].needed;
        limit = j - 1;
    }
    info->path_len = n;
    for (uint32_t i = 0; i < n; i++)
        info->path[i] = reversed[n - 1 - i];
    /* Skips no longer kept may lie further back on the way. */
    info->path_cut = info->skips_total > info->n_skips;
}

/* --- walking ranges over allocations ----------------------------------- */

typedef void (*span_fn)(ct_store *s, ct_alloc *a, uint64_t off, uint64_t end, void *ctx);

/* The live region holding addr, or NULL: one test while there are none. */
static ct_alloc *region_at(const ct_store *s, uint64_t addr)
{
    return s->regions && ct_allocmap_count(s->regions) ? ct_allocmap_find(s->regions, addr) : NULL;
}

/* Where r, starting at offset off of a, ends (an offset of a): its own
 * end, clipped to a; a kernel pointer's (CT_TO_END) at the end of its
 * region, or of a when it lies in none. */
static uint64_t span_end(const ct_store *s, const ct_alloc *a, const ct_range *r, uint64_t off)
{
    uint64_t size = ct_alloc_size(a);
    if (r->len != CT_TO_END)
        return r->len > size - off ? size : off + r->len;
    const ct_alloc *g = region_at(s, r->addr);
    if (!g)
        return size;
    assert(ct_alloc_base(g) + ct_alloc_size(g) <= ct_alloc_base(a) + size);
    return ct_alloc_base(g) + ct_alloc_size(g) - ct_alloc_base(a);
}

/* Calls fn for the allocation holding r's first byte, r clipped to it.
 * One allocation only: the driver refuses a copy that runs past the end of
 * its allocation, so bytes beyond it were never part of the work, and a
 * neighbour's bytes must not take its failure (nor lose theirs to its
 * success).  Returns false when r starts outside every known allocation. */
static bool each_span(ct_store *s, const ct_range *r, span_fn fn, void *ctx)
{
    if (r->len == 0)
        return true;
    ct_alloc *a = ct_allocmap_find(s->map, r->addr);
    if (!a)
        return false;
    uint64_t off = r->addr - ct_alloc_base(a);
    fn(s, a, off, span_end(s, a, r, off), ctx);
    return true;
}

static void each_range(ct_store *s, const ct_range *r, size_t n, span_fn fn, void *ctx)
{
    for (size_t i = 0; r && i < n; i++)
        each_span(s, &r[i], fn, ctx);
}

/* After an edit of a's claims (had_end: their hull's end before, 0 with
 * none): the summary learns their hull. */
static void note_claims(ct_store *s, ct_alloc *a, uint64_t had_end)
{
    uint64_t lo, hi = ct_claims_end(ct_alloc_claims(a), &lo);
    assert((ct_alloc_claims(a)->n == 0) == (hi == 0) && "the summary learns a hull exactly when claims exist");
    ct_summary_note(&s->summary, ct_alloc_base(a), had_end, lo, hi);
}

static void set_span(ct_store *s, ct_alloc *a, uint64_t off, uint64_t end, void *ctx)
{
    const failure *f = ctx;
    ct_claims *c = ct_alloc_claims(a);
    uint64_t had_end = ct_claims_end(c, NULL);
    ct_claims_set(c, off, end, f->id, s->env);
    note_claims(s, a, had_end);
}

static void clear_span(ct_store *s, ct_alloc *a, uint64_t off, uint64_t end, void *ctx)
{
    (void)ctx;
    ct_claims *c = ct_alloc_claims(a);
    if (c->n == 0) /* most writes: nothing to clear */
        return;
    uint64_t had_end = ct_claims_end(c, NULL);
    ct_claims_clear(c, off, end, s->env);
    note_claims(s, a, had_end);
}

static void forget_claims(void *owner, uint64_t base, uint64_t end)
{
    ct_store *s = owner;
    ct_summary_forget(&s->summary, base, end);
}

static void note_span(ct_store *s, ct_alloc *a, uint64_t off, uint64_t end, void *ctx)
{
    (void)s;
    ct_skip_desc *skip = ctx;
    uint64_t base = ct_alloc_base(a);
    if (skip->n_spans < CT_SKIP_SPANS)
        skip->spans[skip->n_spans++] = (ct_span){base + off, base + end};
}

/* --- attempts: what a retry must repeat --------------------------------- */

/* r clipped as each_span clips it, in absolute addresses; false when it
 * starts outside every known allocation or is empty. */
static bool span_of(ct_store *s, const ct_range *r, uint64_t *lo, uint64_t *hi)
{
    ct_alloc *a = r->len ? ct_allocmap_find(s->map, r->addr) : NULL;
    if (!a)
        return false;
    uint64_t base = ct_alloc_base(a);
    *lo = r->addr;
    *hi = base + span_end(s, a, r, r->addr - base);
    return true;
}

/* Does the union of w's spans hold every byte of [lo, hi)?  Quadratic in
 * n, which the caller keeps small. */
static bool spans_cover(ct_store *s, const ct_range *w, size_t n, uint64_t lo, uint64_t hi)
{
    uint64_t at = lo;
    while (at < hi) {
        uint64_t reached = at;
        for (size_t i = 0; i < n; i++) {
            uint64_t a, b;
            if (span_of(s, &w[i], &a, &b) && a <= at && b > reached)
                reached = b;
        }
        if (reached == at)
            return false;
        at = reached;
    }
    return true;
}

/* Calls fn for each claim over [off, end) of a, clipped to it, in absolute
 * addresses, while fn says go on; false when it stopped. */
typedef bool (*claim_fn)(ct_store *s, ct_failure_id id, uint64_t lo, uint64_t hi, void *ctx);
static bool each_claim(ct_store *s, ct_alloc *a, uint64_t off, uint64_t end, claim_fn fn, void *ctx)
{
    const ct_claims *c = ct_alloc_claims(a);
    ct_claim one;
    const ct_claim *v = ct_claims_view(c, &one);
    uint64_t base = ct_alloc_base(a);
    for (size_t i = ct_claims_first_after(v, c->n, off); i < c->n && v[i].off < end; i++)
        if (!fn(s, v[i].id, base + (v[i].off > off ? v[i].off : off), base + (v[i].end < end ? v[i].end : end), ctx))
            return false;
    return true;
}

static bool claim_intact(ct_store *s, ct_failure_id id, uint64_t lo, uint64_t hi, void *ctx)
{
    (void)lo, (void)hi, (void)ctx;
    const failure *f = find_record(s, id);
    return f && f->intact;
}

static void note_intact(ct_store *s, ct_alloc *a, uint64_t off, uint64_t end, void *ctx)
{
    bool *intact = ctx;
    *intact = *intact && each_claim(s, a, off, end, claim_intact, NULL);
}

/* Does every byte of w carry nothing, or only intact failures? */
static bool footprint_intact(ct_store *s, const ct_range *w, size_t n)
{
    bool intact = true;
    each_range(s, w, n, note_intact, &intact);
    return intact;
}

static bool same_work(const ct_launch_key *a, const ct_launch_key *b)
{
    return a->function == b->function && a->params == b->params;
}

/* key becomes f's newest attempt: one of the same work keeps the fewest
 * threads any attempt had (a retry needs at least as many as one of
 * them); the oldest goes when they are all taken. */
static void keep_attempt(failure *f, const ct_launch_key *key)
{
    ct_launch_key kept = *key;
    uint32_t i = 0;
    while (i < f->n_attempts && !same_work(&f->attempts[i], key))
        i++;
    if (i < f->n_attempts) {
        if (f->attempts[i].threads < kept.threads)
            kept.threads = f->attempts[i].threads;
    } else if (f->n_attempts == CT_ATTEMPTS_KEPT) {
        i = 0;
    } else {
        f->n_attempts++;
    }
    assert(f->n_attempts <= CT_ATTEMPTS_KEPT && i < f->n_attempts && "at most CT_ATTEMPTS_KEPT keys kept");
    memmove(&f->attempts[i], &f->attempts[i + 1], (f->n_attempts - 1 - i) * sizeof *f->attempts);
    f->attempts[f->n_attempts - 1] = kept;
}

typedef struct within_look {
    const ct_range *out;
    size_t n_out;
    ct_attempts_accept accept;
    void *ctx;
    bool within;
    ct_failure_id oldest;
} within_look;

static bool claim_within(ct_store *s, ct_failure_id id, uint64_t lo, uint64_t hi, void *ctx)
{
    within_look *look = ctx;
    const failure *f = find_record(s, id);
    if (look->oldest == 0 || id < look->oldest)
        look->oldest = id;
    ct_attempts_view view = {id, f && f->intact, f ? f->n_attempts : 0, f ? f->attempts : NULL};
    return f && look->accept(&view, look->ctx) && spans_cover(s, look->out, look->n_out, lo, hi);
}

static void note_within(ct_store *s, ct_alloc *a, uint64_t off, uint64_t end, void *ctx)
{
    within_look *look = ctx;
    look->within = look->within && each_claim(s, a, off, end, claim_within, look);
}

bool ct_carried_within(ct_store *s, const ct_range *in, size_t n_in, const ct_range *out, size_t n_out,
                       ct_attempts_accept accept, void *ctx, ct_failure_id *oldest)
{
    within_look look = {out, n_out, accept, ctx, true, 0};
    if (s && in && accept && ct_store_tainted(s)) {
        lock_to_look(s);
        each_range(s, in, n_in, note_within, &look);
        unlock_look(s);
    }
    if (oldest)
        *oldest = look.oldest;
    return look.within;
}

/* Where a skip's outputs lie: the first CT_SKIP_SPANS ranges of w, clipped
 * as every operation clips them (each_span). */
static void record_skip(ct_store *s, failure *f, const ct_skip_desc *skip, const ct_range *w, size_t n)
{
    ct_skip_desc *kept = &f->skips[f->skips_total % CT_SKIPS_KEPT];
    *kept = *skip;
    kept->n_spans = 0;
    each_range(s, w, n, note_span, kept);
    f->skips_total++;
}

/* --- the store --------------------------------------------------------- */

/* The slot key's destructor: a thread exits.  Its slot is anyone's again
 * when idle; one holding a scope that never exited stays taken. */
static void give_back_slot(void *slot)
{
    ct_scope_slot *sl = slot;
    unsigned idle = CT_SLOT_IDLE;
    atomic_compare_exchange_strong_explicit(&sl->state, &idle, CT_SLOT_UNOWNED, memory_order_release,
                                            memory_order_relaxed);
}

ct_store *ct_store_new(int unknown_error)
{
    ct_store *s = aligned_alloc(_Alignof(ct_store), sizeof(*s)); /* see summary.h */
    if (!s)
        return NULL;
    memset(s, 0, sizeof(*s));
    s->map = ct_allocmap_new();
    if (s->map)
        HASH_ADD_BYHASHVALUE(hh_id, s->by_id, id, sizeof(s->anchor.id), id_hash(s->anchor.id), &s->anchor);
    if (!s->map || !ct_hash_added(&s->anchor.hh_id)) {
        ct_allocmap_free(s->map);
        free(s);
        return NULL;
    }
    lock_init(s);
    ct_summary_init(&s->summary);
    s->unknown_error = unknown_error;
    s->env = ct_allocmap_env(s->map);
    s->env->ref = claim_ref;
    s->env->unref = claim_unref;
    s->env->forget = forget_claims;
    s->env->owner = s;
    s->real_ids = (id_space){1, 1, CT_FIRST_PROVISIONAL_ID, false};
    s->provisional_ids =
        (id_space){CT_FIRST_LOCKED_SCOPE_ID, CT_FIRST_LOCKED_SCOPE_ID, (uint64_t)UINT32_MAX + 1, false};
    s->gate = (ct_scope_gate){atomic_fetch_add_explicit(&store_serials, 1, memory_order_relaxed) + 1, &s->summary, s};
    s->slot_key_made = pthread_key_create(&s->slot_key, give_back_slot) == 0;
    for (unsigned i = 0; i < CT_SCOPE_SLOTS; i++) {
        atomic_init(&s->slots[i].state, CT_SLOT_UNOWNED);
        s->slots[i].id = CT_FIRST_PROVISIONAL_ID + i;
    }
    return s;
}

void ct_store_free(ct_store *s)
{
    if (!s)
        return;
    ct_allocmap_free(s->map); /* releases every claim, so every record */
    ct_allocmap_free(s->regions);
    HASH_CLEAR(hh_id, s->by_id);
    HASH_CLEAR(hh_fold, s->by_fold);
    for (failure *f = s->free_records, *next; f; f = next) {
        next = f->next_free;
        free(f);
    }
    interned *name, *tmp;
    HASH_ITER(hh, s->names, name, tmp)
    {
        HASH_DELETE(hh, s->names, name);
        free(name);
    }
    if (s->slot_key_made)
        pthread_key_delete(s->slot_key);
    ct_summary_destroy(&s->summary);
    free(s);
}

void ct_store_atfork_child(ct_store *s)
{
    if (!s)
        return;
    lock_init(s);
    /* Only the forking thread lives on: the idle slots of the others are
     * anyone's again (their unfinished scopes stay open for ever). */
    ct_scope_slot *mine = ct_scope_own.serial == s->gate.serial ? ct_scope_own.slot : NULL;
    for (unsigned i = 0; i < CT_SCOPE_SLOTS; i++)
        if (&s->slots[i] != mine && atomic_load_explicit(&s->slots[i].state, memory_order_relaxed) == CT_SLOT_IDLE)
            atomic_store_explicit(&s->slots[i].state, CT_SLOT_UNOWNED, memory_order_relaxed);
}

/* Every region meeting [lo, hi) ends: the allocation holding it did. */
static void drop_regions(ct_store *s, uint64_t lo, uint64_t hi)
{
    if (!s->regions || lo >= hi)
        return;
    for (ct_alloc *g; (g = ct_allocmap_first_in(s->regions, lo, hi));)
        ct_allocmap_remove(s->regions, ct_alloc_base(g));
}

/* The regions of every allocation meeting [lo, hi): the driver handed
 * those bytes out anew, so the allocations there are gone (allocmap.h). */
__attribute__((noinline)) static void drop_regions_of_replaced(ct_store *s, uint64_t lo, uint64_t hi)
{
    if (!s->regions || !ct_allocmap_count(s->regions))
        return;
    for (ct_alloc *a; lo < hi && (a = ct_allocmap_first_in(s->map, lo, hi));) {
        uint64_t base = ct_alloc_base(a), end = base + ct_alloc_size(a);
        drop_regions(s, base, end);
        lo = end;
    }
}

/* The allocation based at base is freed: its regions go first.  Out of
 * line, as drop_regions_of_replaced: a program without regions pays one
 * test per allocation and per free. */
__attribute__((noinline)) static void drop_regions_of_freed(ct_store *s, uint64_t base)
{
    ct_alloc *a = ct_allocmap_find(s->map, base);
    if (a && ct_alloc_base(a) == base)
        drop_regions(s, base, base + ct_alloc_size(a));
}

/* [base, base+size), clipped to the address space. */
static uint64_t end_of(uint64_t base, uint64_t size)
{
    return size > UINT64_MAX - base ? UINT64_MAX : base + size;
}

int ct_store_alloc(ct_store *s, uint64_t base, uint64_t size, uint64_t owner)
{
    if (!s)
        return CT_EINVAL;
    lock(s);
    if (__builtin_expect(s->regions != NULL, 0)) /* never made: nothing to look up */
        drop_regions_of_replaced(s, base, end_of(base, size));
    int rc = ct_allocmap_insert(s->map, base, size, owner);
    unlock(s);
    return rc;
}

size_t ct_store_forget_owner(ct_store *s, uint64_t owner)
{
    if (!s)
        return 0;
    lock(s);
    size_t n = ct_allocmap_remove_owner(s->map, owner);
    if (s->regions)
        ct_allocmap_remove_owner(s->regions, owner);
    unlock(s);
    return n;
}

/* --- runs: virtual memory mapped side by side ----------------------------
 * Allocators map one reservation as several abutting mappings (PyTorch's
 * expandable segments, 2 MiB granules), and a tensor may start in one and
 * end in the next: to a kernel and to a copy the memory is one.  So the
 * mappings of one owner that abut are one allocation, a run: a kernel
 * pointer's extent is the rest of its run, and a read, copy or memset
 * inside it is checked as one.  An unmap carves out exactly its own bytes
 * and their claims; what remains on each side stays a run. */

/* The claims of from's [lo, hi) set on to, moved by shift (to's offset =
 * from's + shift, which may be negative).  References are taken before
 * from's are released by its caller. */
static void copy_claims(ct_store *s, ct_alloc *from, uint64_t lo, uint64_t hi, ct_alloc *to, int64_t shift)
{
    const ct_claims *c = ct_alloc_claims(from);
    ct_claim one;
    const ct_claim *v = ct_claims_view(c, &one);
    for (size_t i = ct_claims_first_after(v, c->n, lo); i < c->n && v[i].off < hi; i++) {
        uint64_t off = v[i].off > lo ? v[i].off : lo, end = v[i].end < hi ? v[i].end : hi;
        ct_claims_set(ct_alloc_claims(to), (uint64_t)((int64_t)off + shift), (uint64_t)((int64_t)end + shift), v[i].id,
                      s->env);
    }
}

/* A mapping of owner that ends exactly at base (below) or begins exactly
 * there (above), or NULL. */
static ct_alloc *abutting(ct_store *s, uint64_t base, uint64_t owner, bool below)
{
    if (below && base == 0)
        return NULL;
    ct_alloc *a = ct_allocmap_find(s->map, below ? base - 1 : base);
    if (!a || !ct_alloc_is_mapping(a) || ct_alloc_owner(a) != owner)
        return NULL;
    return below ? (ct_alloc_base(a) + ct_alloc_size(a) == base ? a : NULL) : (ct_alloc_base(a) == base ? a : NULL);
}

static int map_locked(ct_store *s, uint64_t base, uint64_t size, uint64_t owner)
{
    if (size == 0 || size > UINT64_MAX - base)
        return CT_EINVAL;
    /* Over a live allocation (an unmap cutaint missed): the driver is the
     * truth, and the map replaces what it overlaps. */
    if (ct_allocmap_first_in(s->map, base, base + size)) {
        drop_regions_of_replaced(s, base, base + size);
        return ct_allocmap_insert_mapping(s->map, base, size, owner);
    }
    ct_alloc *run = abutting(s, base, owner, true), *above = abutting(s, base + size, owner, false);
    if (run) {
        ct_allocmap_resize(s->map, run, ct_alloc_size(run) + size);
    } else {
        int rc = ct_allocmap_insert_mapping(s->map, base, size, owner);
        if (rc != CT_OK || !above)
            return rc;
        run = ct_allocmap_find(s->map, base);
    }
    if (above) {
        uint64_t had_end = ct_claims_end(ct_alloc_claims(run), NULL);
        uint64_t above_size = ct_alloc_size(above);
        copy_claims(s, above, 0, above_size, run, (int64_t)(ct_alloc_base(above) - ct_alloc_base(run)));
        ct_allocmap_remove(s->map, ct_alloc_base(above));
        ct_allocmap_resize(s->map, run, ct_alloc_size(run) + above_size);
        note_claims(s, run, had_end);
    }
    return CT_OK;
}

int ct_store_map(ct_store *s, uint64_t base, uint64_t size, uint64_t owner)
{
    if (!s)
        return CT_EINVAL;
    lock(s);
    int rc = map_locked(s, base, size, owner);
    unlock(s);
    return rc;
}

/* [a, b) (inside run r) unmapped: its bytes and claims leave r, and what
 * follows b becomes a run of its own.  Out of memory for that run: r is
 * kept whole (its unmapped bytes keep what they carried, harmlessly). */
static void carve(ct_store *s, ct_alloc *r, uint64_t a, uint64_t b)
{
    uint64_t base = ct_alloc_base(r), end = base + ct_alloc_size(r), owner = ct_alloc_owner(r);
    if (b < end) {
        ct_allocmap_resize(s->map, r, b - base); /* its claims past b stay until copied */
        if (ct_allocmap_insert_mapping(s->map, b, end - b, owner) != CT_OK) {
            ct_allocmap_resize(s->map, r, end - base);
            return;
        }
        ct_alloc *tail = ct_allocmap_find(s->map, b);
        copy_claims(s, r, b - base, end - base, tail, -(int64_t)(b - base));
        note_claims(s, tail, 0);
    }
    if (a == base) {
        ct_allocmap_remove(s->map, base);
        return;
    }
    ct_claims *c = ct_alloc_claims(r);
    uint64_t had_end = ct_claims_end(c, NULL);
    if (had_end)
        ct_claims_clear(c, a - base, end - base, s->env);
    ct_allocmap_resize(s->map, r, a - base);
    if (had_end)
        note_claims(s, r, had_end);
}

size_t ct_store_forget_range(ct_store *s, uint64_t addr, uint64_t len)
{
    if (!s || len == 0)
        return 0;
    uint64_t end = len > UINT64_MAX - addr ? UINT64_MAX : addr + len;
    size_t n = 0;
    lock(s);
    drop_regions(s, addr, end);
    for (ct_alloc *a; (a = ct_allocmap_first_in(s->map, addr, end));) {
        uint64_t base = ct_alloc_base(a), a_end = base + ct_alloc_size(a);
        if (base >= addr && a_end <= end) {
            ct_allocmap_remove(s->map, base);
            n++;
        } else if (ct_alloc_is_mapping(a)) {
            carve(s, a, base > addr ? base : addr, a_end < end ? a_end : end);
            n++;
        }
        if (a_end >= end)
            break;
        addr = a_end;
    }
    unlock(s);
    return n;
}

int ct_store_free_alloc(ct_store *s, uint64_t base)
{
    if (!s)
        return CT_EINVAL;
    lock(s);
    if (__builtin_expect(s->regions != NULL, 0))
        drop_regions_of_freed(s, base);
    int rc = ct_allocmap_remove(s->map, base);
    unlock(s);
    return rc;
}

/* --- regions ------------------------------------------------------------- */

/* Taken: a node in the regions' map, owned as its allocation is (so that
 * forgetting the owner forgets it), its bytes released. */
static ct_region_verdict take_region(ct_store *s, const ct_alloc *a, uint64_t base, uint64_t size)
{
    if (!s->regions && !(s->regions = ct_allocmap_new()))
        return CT_REGION_NO_MEMORY;
    if (ct_allocmap_insert(s->regions, base, size, ct_alloc_owner(a)) != CT_OK)
        return CT_REGION_NO_MEMORY;
    assert(base >= ct_alloc_base(a) && base + size <= ct_alloc_base(a) + ct_alloc_size(a) &&
           "a region lies wholly inside one allocation");
    each_span(s, &(ct_range){base, size}, clear_span, NULL);
    return CT_REGION_DONE;
}

ct_region_verdict ct_store_region_alloc(ct_store *s, uint64_t base, uint64_t size)
{
    if (!s)
        return CT_REGION_NO_MEMORY;
    lock(s);
    ct_region_facts f = {.bytes = size, .overflows = size > UINT64_MAX - base};
    ct_alloc *a = ct_allocmap_find(s->map, base);
    if (a && !f.overflows)
        f.within_allocation = base + size <= ct_alloc_base(a) + ct_alloc_size(a);
    if (s->regions && !f.overflows)
        f.overlaps_region = ct_allocmap_first_in(s->regions, base, base + size) != NULL;
    ct_region_verdict v = ct_region_rule(&f);
    if (v == CT_REGION_DONE)
        v = take_region(s, a, base, size);
    unlock(s);
    return v;
}

ct_region_verdict ct_store_region_free(ct_store *s, uint64_t base)
{
    if (!s)
        return CT_REGION_UNKNOWN;
    lock(s);
    const ct_alloc *g = region_at(s, base);
    ct_region_facts f = {.freeing = true, .is_region_base = g && ct_alloc_base(g) == base};
    ct_region_verdict v = ct_region_rule(&f);
    if (v == CT_REGION_DONE)
        ct_allocmap_remove(s->regions, base);
    unlock(s);
    return v;
}

size_t ct_store_region_count(ct_store *s)
{
    if (!s)
        return 0;
    lock_to_look(s);
    size_t n = s->regions ? ct_allocmap_count(s->regions) : 0;
    unlock_look(s);
    return n;
}

bool ct_store_extent(ct_store *s, uint64_t addr, ct_extent *out)
{
    if (!s)
        return false;
    lock_to_look(s);
    const ct_alloc *a = ct_allocmap_find(s->map, addr);
    if (a) {
        uint64_t base = ct_alloc_base(a);
        out->allocation = base;
        out->size = ct_alloc_size(a);
        out->end = base + span_end(s, a, &(ct_range){addr, CT_TO_END}, addr - base);
        out->in_region = region_at(s, addr) != NULL;
    }
    unlock_look(s);
    return a != NULL;
}

bool ct_store_resolve(ct_store *s, uint64_t addr, uint64_t *base, uint64_t *size)
{
    if (!s)
        return false;
    lock_to_look(s);
    ct_alloc *a = ct_allocmap_find(s->map, addr);
    if (a && base)
        *base = ct_alloc_base(a);
    if (a && size)
        *size = ct_alloc_size(a);
    unlock_look(s);
    return a != NULL;
}

size_t ct_store_alloc_count(ct_store *s)
{
    if (!s)
        return 0;
    lock(s);
    size_t n = ct_allocmap_count(s->map);
    unlock(s);
    return n;
}

size_t ct_store_bytes(ct_store *s)
{
    if (!s)
        return 0;
    lock(s);
    size_t bytes = ct_heap_cost(sizeof(*s)) + ct_allocmap_bytes(s->map) +
                   (s->regions ? ct_allocmap_bytes(s->regions) : 0) + s->n_records * ct_heap_cost(sizeof(failure)) +
                   ct_hash_cost(&s->by_id->hh_id) + ct_hash_cost(s->by_fold ? &s->by_fold->hh_fold : NULL) +
                   ct_hash_cost(s->names ? &s->names->hh : NULL) + s->names_bytes;
    unlock(s);
    return bytes;
}

const struct ct_summary *ct_store_summary(const ct_store *s)
{
    return s ? &s->summary : NULL;
}

ct_scope_gate ct_store_scope_gate(ct_store *s)
{
    return s ? s->gate : (ct_scope_gate){CT_SCOPE_NO_STORE, NULL, NULL};
}

bool ct_store_tainted(const ct_store *s)
{
    return s && ct_summary_tainted(&s->summary);
}

const char *ct_store_intern(ct_store *s, const char *name)
{
    if (!s || !name)
        return NULL;
    size_t len = strlen(name);
    lock(s);
    interned *e;
    HASH_FIND(hh, s->names, name, len, e);
    if (!e && (e = malloc(sizeof(*e) + len + 1))) {
        memcpy(e->name, name, len + 1);
        HASH_ADD_KEYPTR(hh, s->names, e->name, len, e);
        if (ct_hash_added(&e->hh)) {
            s->names_bytes += ct_heap_cost(sizeof(*e) + len + 1);
        } else {
            free(e);
            e = NULL;
        }
    }
    unlock(s);
    return e ? e->name : NULL;
}

/* --- the operations ---------------------------------------------------- */

typedef struct placing {
    const ct_failure_desc *desc;
    ct_failure_id id; /* the id to mint it with, 0: the next */
    failure *f;       /* minted on the first allocation touched */
} placing;

static void place_provisional(ct_store *s, ct_alloc *a, uint64_t off, uint64_t end, void *ctx)
{
    placing *p = ctx;
    if (!p->f) {
        bool fresh;
        p->f = mint(s, p->desc, true, p->id, &fresh);
        s->pinner = p->f->provisional ? p->f : NULL;
    }
    set_span(s, a, off, end, p->f);
}

/* Under the lock: w carries a fresh provisional failure (id, or the next),
 * described by its error and its call alone.  Returns its id, 0 when w
 * touches no known allocation. */
static ct_failure_id place_scope(ct_store *s, const ct_range *w, size_t n, ct_scope_desc scope, ct_failure_id id)
{
    ct_failure_desc desc = {.error = scope.error, .api = scope.api};
    placing p = {&desc, id, NULL};
    each_range(s, w, n, place_provisional, &p);
    s->pinner = NULL;
    return p.f ? p.f->id : 0;
}

/* --- scope slots ---------------------------------------------------------
 * Most scopes are opened and settled with nobody looking at their bytes
 * meanwhile, so a scope of a few ranges is not placed in the store: its
 * owner publishes it in its thread's slot (no lock; the open count tells
 * every check that it must ask the store), and whoever takes the store's
 * lock first places it there (show_scopes), as enter_write would have.  An
 * owner whose scope was not shown settles it alone: a success over bytes
 * carrying nothing only frees the slot; a failure is placed first, then
 * settled as a placed scope is, because what folds depends on it: the
 * placement displaces the failures w carried and pins the lowest-id one,
 * so a repeat folds only into that one, whether or not anyone looked. */

static ct_scope_slot *slot_of(ct_store *s, ct_failure_id id)
{
    if (!ct_scope_waits_in_slot(id))
        return NULL;
    ct_scope_slot *sl = &s->slots[(id - CT_FIRST_PROVISIONAL_ID) % CT_SCOPE_SLOTS];
    return sl->id == id ? sl : NULL;
}

/* Under the lock (alone): place every open scope in the store.  Out of
 * line: every lock asks, and most find none. */
__attribute__((noinline)) static void show_scopes(ct_store *s)
{
    for (unsigned i = 0; i < CT_SCOPE_SLOTS; i++) {
        ct_scope_slot *sl = &s->slots[i];
        unsigned expected = CT_SLOT_OPEN;
        if (atomic_load_explicit(&sl->state, memory_order_relaxed) != CT_SLOT_OPEN ||
            !atomic_compare_exchange_strong_explicit(&sl->state, &expected, CT_SLOT_SHOWN, memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        place_scope(s, sl->w, sl->n, sl->desc, sl->id);
        atomic_fetch_sub_explicit(&s->summary.open_scopes, 1, memory_order_release);
    }
}

/* The calling thread's slot in s: the one it took before, else an unowned
 * one made its own (IDLE) until it exits; NULL when every slot is another
 * thread's.  Out of line: once per thread. */
__attribute__((noinline)) static ct_scope_slot *claim_slot(ct_store *s)
{
    if (!s->slot_key_made)
        return NULL;
    ct_scope_slot *sl = pthread_getspecific(s->slot_key); /* it used another store since */
    for (unsigned i = 0; !sl && i < CT_SCOPE_SLOTS; i++) {
        unsigned unowned = CT_SLOT_UNOWNED;
        if (atomic_load_explicit(&s->slots[i].state, memory_order_relaxed) == CT_SLOT_UNOWNED &&
            atomic_compare_exchange_strong_explicit(&s->slots[i].state, &unowned, CT_SLOT_IDLE, memory_order_acquire,
                                                    memory_order_relaxed))
            sl = &s->slots[i];
    }
    if (!sl)
        return NULL;
    if (pthread_setspecific(s->slot_key, sl) != 0) { /* could not be given back at exit */
        atomic_store_explicit(&sl->state, CT_SLOT_UNOWNED, memory_order_release);
        return NULL;
    }
    ct_scope_own = (struct ct_scope_own){s->gate.serial, sl};
    return sl;
}

static bool slot_idle(const ct_scope_slot *sl)
{
    return sl && atomic_load_explicit(&sl->state, memory_order_relaxed) == CT_SLOT_IDLE;
}

/* A thread's first scope in s (its slot taken then), or one the rule
 * places at once, as every scope once was (its slot busy, no slot to be
 * had, too many ranges).  Out of line: the common enter pays no register
 * saves for it. */
__attribute__((noinline)) static ct_failure_id enter_unusual(ct_store *s, const ct_range *w, size_t n,
                                                             ct_scope_desc provisional)
{
    ct_scope_slot *sl = ct_scope_own.serial == s->gate.serial ? ct_scope_own.slot : claim_slot(s);
    if (ct_scope_rule(n, CT_SCOPE_RANGES, slot_idle(sl)) == CT_SCOPE_IN_OWN_SLOT)
        return ct_scope_publish(&s->summary, sl, w, n, provisional);
    lock(s);
    ct_failure_id id = place_scope(s, w, n, provisional, 0);
    unlock(s);
    return id;
}

ct_failure_id ct_enter_write(ct_store *s, const ct_range *w, size_t n, ct_scope_desc provisional)
{
    if (!s || !w || n == 0)
        return 0;
    assert((ct_scope_own.serial != s->gate.serial ||
            atomic_load_explicit(&ct_scope_own.slot->state, memory_order_relaxed) != CT_SLOT_UNOWNED) &&
           "a thread's slot stays its own until it exits");
    if (ct_scope_own_idle(&s->gate, n))
        return ct_scope_publish(&s->summary, ct_scope_own.slot, w, n, provisional);
    return enter_unusual(s, w, n, provisional);
}

/* Mint or fold the failure of work that did not write w, and taint w.
 * key: a launch refused at once, else NULL (which ends intact). */
static ct_failure_id taint_locked(ct_store *s, const ct_failure_desc *failed, const ct_launch_key *key,
                                  const ct_range *w, size_t n, ct_occurrence *occ)
{
    bool over_intact = key && footprint_intact(s, w, n);
    bool fresh;
    failure *f = mint_or_fold(s, failed, &fresh);
    ct_failure_id id = f->id;
    if (occ)
        *occ = (ct_occurrence){fresh, f->occurrences, f->desc.launch_seq};
    f->intact = over_intact && f != &s->oom && (fresh || f->intact);
    assert(!s->oom.intact && "the out-of-memory stand-in is never intact");
    if (key)
        keep_attempt(f, key);
    each_range(s, w, n, set_span, f);
    release_if_unclaimed(s, f);
    return id;
}

static void no_occurrence(ct_occurrence *occ)
{
    if (occ)
        *occ = (ct_occurrence){false, 0, 0};
}

/* Under the lock: settle a scope placed in the store. */
static ct_failure_id exit_placed(ct_store *s, ct_failure_id provisional, const ct_range *w, size_t n,
                                 const ct_failure_desc *failed, ct_occurrence *occ)
{
    /* Take over the pin's reference: the displaced failure stays foldable
     * until this scope's outcome is known. */
    failure *p = lookup(s, provisional);
    failure *displaced = p && p->provisional ? p->pinned : NULL;
    if (displaced)
        p->pinned = NULL;
    ct_failure_id id = 0;
    if (failed)
        id = taint_locked(s, failed, NULL, w, n, occ);
    else
        each_range(s, w, n, clear_span, NULL);
    if (displaced)
        unref_record(s, displaced);
    return id;
}

/* exit_placed under the lock; out of line, as exit_slot_locking is. */
__attribute__((noinline)) static ct_failure_id exit_placed_locking(ct_store *s, ct_failure_id provisional,
                                                                   const ct_range *w, size_t n,
                                                                   const ct_failure_desc *failed, ct_occurrence *occ)
{
    lock(s);
    ct_failure_id id = exit_placed(s, provisional, w, n, failed, occ);
    unlock(s);
    return id;
}

/* A slot's scope settled.  Not shown, written, and w carrying no older
 * claim: the owner frees its slot, and that is all.  Otherwise under the
 * lock, the slot freed only once w is settled, so that a check that no
 * longer sees the scope open sees its outcome (the open count falls
 * last): freeing first and releasing w after would let a check in between
 * see w's older failure on bytes the write has already replaced. */
/* Out of line: most scopes end with the slot freed alone, which then pays
 * no register saves for this. */
__attribute__((noinline)) static ct_failure_id exit_slot_locking(ct_store *s, ct_scope_slot *sl, const ct_range *w,
                                                                 size_t n, const ct_failure_desc *failed,
                                                                 ct_occurrence *occ)
{
    lock_alone(s);
    unsigned state = CT_SLOT_OPEN;
    bool unshown = atomic_compare_exchange_strong_explicit(&sl->state, &state, CT_SLOT_BUSY, memory_order_relaxed,
                                                           memory_order_relaxed);
    assert((unshown || state == CT_SLOT_SHOWN) && "a scope's slot is its owner's until it exits");
    if (open_scopes(s))
        show_scopes(s); /* the others' */
    ct_failure_id id = 0;
    if (unshown && failed)
        place_scope(s, sl->w, sl->n, sl->desc, sl->id);
    if (!unshown || failed)
        id = exit_placed(s, sl->id, w, n, failed, occ);
    else
        each_range(s, w, n, clear_span, NULL);
    atomic_store_explicit(&sl->state, CT_SLOT_IDLE, memory_order_release);
    if (unshown)
        atomic_fetch_sub_explicit(&s->summary.open_scopes, 1, memory_order_release);
    unlock(s);
    return id;
}

static ct_failure_id exit_slot(ct_store *s, ct_scope_slot *sl, const ct_range *w, size_t n,
                               const ct_failure_desc *failed, ct_occurrence *occ)
{
    assert((ct_scope_own.serial != s->gate.serial || sl == ct_scope_own.slot) &&
           "a scope exits on the thread that entered it");
    if (!failed && ct_scope_settle_alone(&s->summary, sl, w, n))
        return 0;
    return exit_slot_locking(s, sl, w, n, failed, occ);
}

bool ct_scope_waits_in_slot(ct_failure_id provisional)
{
    return provisional >= CT_FIRST_PROVISIONAL_ID && provisional < CT_FIRST_LOCKED_SCOPE_ID;
}

__attribute__((noinline)) ct_failure_id ct_enter_write_one(const ct_scope_gate *g, ct_range w, ct_scope_desc desc)
{
    return ct_enter_write(g->store, &w, 1, desc);
}

__attribute__((noinline)) void ct_exit_write_one(const ct_scope_gate *g, ct_failure_id id, ct_range w)
{
    ct_exit_write(g->store, id, &w, 1, NULL, NULL);
}

ct_failure_id ct_exit_write(ct_store *s, ct_failure_id provisional, const ct_range *w, size_t n,
                            const ct_failure_desc *failed, ct_occurrence *occ)
{
    no_occurrence(occ);
    if (!s || (provisional == 0 && !failed)) /* it touched nothing known: nothing to release */
        return 0;
    ct_scope_slot *sl = slot_of(s, provisional);
    if (sl)
        return exit_slot(s, sl, w, n, failed, occ);
    return exit_placed_locking(s, provisional, w, n, failed, occ);
}

ct_failure_id ct_taint(ct_store *s, const ct_failure_desc *failed, const ct_range *w, size_t n, ct_occurrence *occ)
{
    no_occurrence(occ);
    if (!s || !failed)
        return 0;
    lock(s);
    ct_failure_id id = taint_locked(s, failed, NULL, w, n, occ);
    unlock(s);
    return id;
}

ct_failure_id ct_taint_refused_launch(ct_store *s, const ct_failure_desc *failed, const ct_launch_key *key,
                                      const ct_range *w, size_t n, ct_occurrence *occ)
{
    no_occurrence(occ);
    if (!s || !failed || !key)
        return 0;
    lock(s);
    ct_failure_id id = taint_locked(s, failed, key, w, n, occ);
    unlock(s);
    return id;
}

static void find_oldest(ct_store *s, ct_alloc *a, uint64_t off, uint64_t end, void *ctx)
{
    (void)s;
    ct_failure_id *oldest = ctx;
    const ct_claims *c = ct_alloc_claims(a);
    if (c->n == 0) /* most allocations: nothing to look through */
        return;
    ct_claim one;
    const ct_claim *v = ct_claims_view(c, &one);
    for (size_t i = ct_claims_first_after(v, c->n, off); i < c->n && v[i].off < end; i++) {
        if (*oldest == 0 || v[i].id < *oldest)
            *oldest = v[i].id;
    }
}

/* Out of line: the summary answers most checks, which then pay no
 * register saves for the lookups below. */
__attribute__((noinline)) static ct_failure_id read_failure_looking(ct_store *s, const ct_range *r, size_t n,
                                                                    int *error)
{
    lock_to_look(s);
    ct_failure_id oldest = 0;
    each_range(s, r, n, find_oldest, &oldest);
    const failure *f = find_record(s, oldest);
    if (f && error)
        *error = f->desc.error;
    unlock_look(s);
    return oldest;
}

ct_failure_id ct_read_failure(ct_store *s, const ct_range *r, size_t n, int *error)
{
    if (!ct_store_tainted(s) || !r || ct_summary_clean(&s->summary, r, n))
        return 0;
    return read_failure_looking(s, r, n, error);
}

/* The failure a skip propagates when its root was released between the
 * caller's read_failure and now: the skipped work still did not run, so
 * its outputs must carry something. */
static ct_failure_desc lost_root(const ct_store *s, const ct_skip_desc *skip)
{
    ct_failure_desc d = {.error = s->unknown_error, .api = "cutaint: skipped on a released failure"};
    if (skip) {
        d.kernel = skip->kernel;
        d.launch_seq = skip->launch_seq;
        d.thread = skip->thread;
        d.time_ns = skip->time_ns;
    }
    return d;
}

void ct_propagate(ct_store *s, ct_failure_id root, const ct_skip_desc *skip, const ct_range *w, size_t n)
{
    if (!s)
        return;
    lock(s);
    failure *f = lookup(s, root);
    if (!f) {
        ct_failure_desc d = lost_root(s, skip);
        bool fresh;
        f = mint_or_fold(s, &d, &fresh);
    }
    if (skip)
        record_skip(s, f, skip, w, n);
    f->intact = false; /* its bytes now include work that never ran */
    each_range(s, w, n, set_span, f);
    release_if_unclaimed(s, f);
    unlock(s);
}

/* Most work writes memory that carries nothing, and then only looks.  A
 * failure that lands on w between the look and the release is not
 * released: it happened after this write, as far as anyone can tell. */
void ct_written(ct_store *s, const ct_range *w, size_t n)
{
    if (!ct_read_failure(s, w, n, NULL))
        return;
    lock(s);
    each_range(s, w, n, clear_span, NULL);
    unlock(s);
}

typedef struct survey {
    uint64_t epoch;
    uint64_t tainted_bytes;
    size_t n_failures;
    size_t n_kept;
    failure *kept[CT_REFUSAL_MAX_FAILURES]; /* the lowest ids, ascending */
} survey;

static void keep_if_low(survey *sv, failure *f)
{
    size_t i = sv->n_kept;
    if (i == CT_REFUSAL_MAX_FAILURES) {
        if (f->id > sv->kept[i - 1]->id)
            return;
        i--;
    } else {
        sv->n_kept++;
    }
    for (; i > 0 && sv->kept[i - 1]->id > f->id; i--)
        sv->kept[i] = sv->kept[i - 1];
    sv->kept[i] = f;
}

static void survey_span(ct_store *s, ct_alloc *a, uint64_t off, uint64_t end, void *ctx)
{
    survey *sv = ctx;
    const ct_claims *c = ct_alloc_claims(a);
    ct_claim one;
    const ct_claim *v = ct_claims_view(c, &one);
    for (size_t i = ct_claims_first_after(v, c->n, off); i < c->n && v[i].off < end; i++) {
        uint64_t lo = v[i].off > off ? v[i].off : off;
        uint64_t hi = v[i].end < end ? v[i].end : end;
        uint64_t addr = ct_alloc_base(a) + lo;
        sv->tainted_bytes += hi - lo;
        failure *f = lookup(s, v[i].id);
        if (f && f->seen != sv->epoch) {
            f->seen = sv->epoch;
            f->seen_at = addr;
            sv->n_failures++;
            keep_if_low(sv, f);
        }
    }
}

/* Under the lock: a survey of nothing yet, into out. */
static survey survey_begin(ct_store *s, ct_refusal *out)
{
    out->n_failures = out->n_kept = 0;
    out->tainted_bytes = 0;
    return (survey){.epoch = ++s->epoch};
}

static int survey_end(survey *sv, ct_refusal *out);

/* Out of line: a check without a report (every read while taint exists
 * elsewhere) then pays no survey's frame. */
__attribute__((noinline)) static int survey_ranges(ct_store *s, const ct_range *r, size_t n, ct_refusal *out)
{
    lock(s);
    survey sv = survey_begin(s, out);
    for (size_t i = 0; i < n; i++)
        each_span(s, &r[i], survey_span, &sv);
    int rc = survey_end(&sv, out);
    unlock(s);
    return rc;
}

int ct_check_written(ct_store *s, const ct_range *r, size_t n, ct_refusal *out)
{
    if (!s || (!r && n))
        return CT_EINVAL;
    if (!out)
        return ct_read_failure(s, r, n, NULL) ? CT_ETAINTED : CT_OK;
    return survey_ranges(s, r, n, out);
}

int ct_check_rows_written(ct_store *s, const ct_rows *r, ct_refusal *out)
{
    if (!s || !r || !out)
        return CT_EINVAL;
    lock(s);
    survey sv = survey_begin(s, out);
    for (uint64_t z = 0; z < r->depth; z++) {
        for (uint64_t y = 0; y < r->height; y++) {
            ct_range row = {r->addr + z * r->slice + y * r->pitch, r->width};
            each_span(s, &row, survey_span, &sv);
        }
    }
    int rc = survey_end(&sv, out);
    unlock(s);
    return rc;
}

/* What the survey found, snapshot into out. */
static int survey_end(survey *sv, ct_refusal *out)
{
    out->n_failures = sv->n_failures;
    out->n_kept = sv->n_kept;
    for (size_t i = 0; i < sv->n_kept; i++) {
        snapshot(sv->kept[i], &out->failures[i]);
        trace_path(&out->failures[i], sv->kept[i]->seen_at);
    }
    out->tainted_bytes = sv->tainted_bytes;
    return sv->tainted_bytes ? CT_ETAINTED : CT_OK;
}

bool ct_failure_get(ct_store *s, ct_failure_id id, ct_failure_info *out)
{
    if (!s)
        return false;
    lock(s);
    const failure *f = lookup(s, id);
    if (f && out)
        snapshot(f, out);
    unlock(s);
    return f != NULL;
}

size_t ct_store_live_failures(ct_store *s)
{
    if (!s)
        return 0;
    lock(s);
    size_t n = s->n_live;
    unlock(s);
    return n;
}

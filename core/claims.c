/*
 * claims.c - the byte-range claims of one allocation (see claims.h).
 *
 * Every edit is planned first as "replace claims [lo, hi) by at most three
 * pieces" (a trimmed left neighbour, the new or merged claim, a trimmed
 * right neighbour), so the storage it needs is known before anything
 * changes: memory is reserved, then references are taken, then released,
 * then the array is rewritten.  Nothing can fail half-way.
 */
#include "claims.h"
#include "heap.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define INLINE_WORK 4 /* an inline claim edited grows to 3 at most */
#define MIN_SPILL_CAP 4
#define MAX_CLAIMS (UINT32_MAX / 2)

typedef struct edit {
    size_t lo, hi; /* claims [lo, hi) are replaced ... */
    size_t n_pieces;
    ct_claim piece[3]; /* ... by these, in order */
} edit;

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}
static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static size_t block_cost(uint32_t cap)
{
    return ct_heap_cost(sizeof(ct_claimvec) + (size_t)cap * sizeof(ct_claim));
}

const ct_claim *ct_claims_view(const ct_claims *c, ct_claim *one)
{
    if (c->n >= 2)
        return c->u.many->v;
    *one = (ct_claim){c->u.one.off, c->u.one.end, c->one_id};
    return one;
}

size_t ct_claims_first_after(const ct_claim *v, size_t n, uint64_t off)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].end > off)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* First claim that overlaps or touches [off, ...). */
static size_t first_reaching(const ct_claim *v, size_t n, uint64_t off)
{
    return off == 0 ? 0 : ct_claims_first_after(v, n, off - 1);
}

static void add_piece(edit *e, uint64_t off, uint64_t end, ct_failure_id id)
{
    e->piece[e->n_pieces++] = (ct_claim){off, end, id};
}

/* Claims touching [off, end) are the window: those of the same id merge into
 * the new claim; the others keep only what lies outside [off, end). */
static void plan_set(const ct_claim *v, size_t n, uint64_t off, uint64_t end, ct_failure_id id, edit *e)
{
    e->lo = first_reaching(v, n, off);
    e->hi = e->lo;
    while (e->hi < n && v[e->hi].off <= end)
        e->hi++;
    e->n_pieces = 0;

    ct_claim merged = {off, end, id};
    for (size_t i = e->lo; i < e->hi; i++) {
        if (v[i].id == id) {
            merged.off = min_u64(merged.off, v[i].off);
            merged.end = max_u64(merged.end, v[i].end);
        }
    }
    if (e->lo < e->hi && v[e->lo].id != id && v[e->lo].off < off)
        add_piece(e, v[e->lo].off, off, v[e->lo].id);
    add_piece(e, merged.off, merged.end, id);
    if (e->lo < e->hi && v[e->hi - 1].id != id && v[e->hi - 1].end > end)
        add_piece(e, end, v[e->hi - 1].end, v[e->hi - 1].id);
}

static void plan_clear(const ct_claim *v, size_t n, uint64_t off, uint64_t end, edit *e)
{
    e->lo = ct_claims_first_after(v, n, off);
    e->hi = e->lo;
    while (e->hi < n && v[e->hi].off < end)
        e->hi++;
    e->n_pieces = 0;
    if (e->lo == e->hi)
        return;
    if (v[e->lo].off < off)
        add_piece(e, v[e->lo].off, off, v[e->lo].id);
    if (v[e->hi - 1].end > end)
        add_piece(e, end, v[e->hi - 1].end, v[e->hi - 1].id);
}

/* Make the spilled block hold at least `need` claims. */
static bool grow_block(ct_claims *c, size_t need, ct_claim_env *env)
{
    ct_claimvec *b = c->u.many;
    if (need <= b->cap)
        return true;
    size_t cap = (size_t)b->cap * 2 > need ? (size_t)b->cap * 2 : need;
    if (cap > MAX_CLAIMS)
        return false;
    ct_claimvec *nb = realloc(b, sizeof(*nb) + cap * sizeof(ct_claim));
    if (!nb)
        return false;
    env->spill_bytes += block_cost((uint32_t)cap) - block_cost(nb->cap);
    nb->cap = (uint32_t)cap;
    c->u.many = nb;
    return true;
}

static ct_claimvec *new_block(size_t need, ct_claim_env *env)
{
    size_t cap = need > MIN_SPILL_CAP ? need : MIN_SPILL_CAP;
    ct_claimvec *b = malloc(sizeof(*b) + cap * sizeof(ct_claim));
    if (!b)
        return NULL;
    b->cap = (uint32_t)cap;
    env->spill_bytes += block_cost(b->cap);
    return b;
}

static void free_block(ct_claimvec *b, ct_claim_env *env)
{
    env->spill_bytes -= block_cost(b->cap);
    free(b);
}

static void rewrite(ct_claim *arr, size_t n, const edit *e)
{
    memmove(arr + e->lo + e->n_pieces, arr + e->hi, (n - e->hi) * sizeof(ct_claim));
    memcpy(arr + e->lo, e->piece, e->n_pieces * sizeof(ct_claim));
}

static void settle_refs(const ct_claim *old, const edit *e, ct_claim_env *env)
{
    for (size_t i = 0; i < e->n_pieces; i++)
        env->ref(env->owner, e->piece[i].id);
    for (size_t i = e->lo; i < e->hi; i++)
        env->unref(env->owner, old[i].id);
}

static void store_inline(ct_claims *c, const ct_claim *arr, size_t n)
{
    if (n == 1) {
        c->u.one.off = arr[0].off;
        c->u.one.end = arr[0].end;
        c->one_id = arr[0].id;
    }
    c->n = (uint32_t)n;
}

/* Only edits change the count, and they run under the store's lock; the
 * count is read without it (taint.c's claims_clean), hence the atomic store. */
static void add_live(ct_claim_env *env, size_t was, size_t now)
{
    atomic_store_explicit(&env->live, atomic_load_explicit(&env->live, memory_order_relaxed) - was + now,
                          memory_order_release);
}

#ifndef NDEBUG
/* claims.h's ordering invariant where an edit just wrote n_written claims
 * at lo: they and their neighbours are non-empty, sorted and disjoint, and
 * two that touch carry different ids.  A few comparisons, debug builds only
 * (checking the whole array would cost a walk per edit). */
static void assert_ordered_around(const ct_claims *c, size_t lo, size_t n_written)
{
    ct_claim one;
    const ct_claim *v = ct_claims_view(c, &one);
    size_t from = lo ? lo - 1 : 0;
    size_t to = lo + n_written + 1 < c->n ? lo + n_written + 1 : c->n;
    for (size_t i = from; i < to; i++) {
        assert(v[i].off < v[i].end && v[i].id != 0);
        assert(i == from || v[i - 1].end < v[i].off || (v[i - 1].end == v[i].off && v[i - 1].id != v[i].id));
    }
}
#else
#define assert_ordered_around(c, lo, n_written) ((void)0)
#endif

/* Apply e, or return false having changed nothing when memory is short. */
static bool apply(ct_claims *c, const edit *e, ct_claim_env *env)
{
    size_t n = c->n;
    size_t new_n = n - (e->hi - e->lo) + e->n_pieces;
    if (new_n > MAX_CLAIMS)
        return false;

    if (n >= 2) {
        if (!grow_block(c, new_n, env))
            return false;
        ct_claimvec *b = c->u.many;
        settle_refs(b->v, e, env);
        rewrite(b->v, n, e);
        if (new_n >= 2) {
            c->n = (uint32_t)new_n;
        } else {
            ct_claim last = b->v[0];
            free_block(b, env);
            store_inline(c, &last, new_n);
        }
    } else {
        ct_claim work[INLINE_WORK];
        ct_claims_view(c, &work[0]);
        ct_claimvec *b = NULL;
        if (new_n >= 2 && !(b = new_block(new_n, env)))
            return false;
        settle_refs(work, e, env);
        rewrite(work, n, e);
        if (b) {
            memcpy(b->v, work, new_n * sizeof(ct_claim));
            c->u.many = b;
            c->n = (uint32_t)new_n;
        } else {
            store_inline(c, work, new_n);
        }
    }
    assert_ordered_around(c, e->lo, e->n_pieces);
    assert(c->n == new_n && "up to one claim inline; two or more in one block, freed below two");
    add_live(env, n, new_n);
    return true;
}

/* The two edits every host copy and memset makes on a clean allocation -
 * the provisional claim placed, then released - without planning an edit:
 * they are what apply() would do, at a sixth of the instructions. */
static bool set_first(ct_claims *c, uint64_t off, uint64_t end, ct_failure_id id, ct_claim_env *env)
{
    if (c->n != 0)
        return false;
    env->ref(env->owner, id);
    store_inline(c, &(ct_claim){off, end, id}, 1);
    add_live(env, 0, 1);
    return true;
}

static bool clear_only(ct_claims *c, uint64_t off, uint64_t end, ct_claim_env *env)
{
    if (c->n != 1 || off > c->u.one.off || end < c->u.one.end)
        return false;
    c->n = 0;
    env->unref(env->owner, c->one_id);
    add_live(env, 1, 0);
    return true;
}

void ct_claims_set(ct_claims *c, uint64_t off, uint64_t end, ct_failure_id id, ct_claim_env *env)
{
    if (off >= end || id == 0 || set_first(c, off, end, id, env))
        return;
    ct_claim one;
    const ct_claim *v = ct_claims_view(c, &one);
    edit e;
    plan_set(v, c->n, off, end, id, &e);
    if (apply(c, &e, env))
        return;
    /* Short of memory: one claim over everything keeps every tainted byte
     * tainted, at the price of naming only the newest failure. */
    edit hull = {.lo = 0, .hi = c->n, .n_pieces = 0};
    add_piece(&hull, min_u64(off, v[0].off), max_u64(end, v[c->n - 1].end), id);
    bool kept = apply(c, &hull, env);
    assert(kept && c->n == 1 && "out of memory never loses taint: the hull needs no memory");
    (void)kept;
}

void ct_claims_clear(ct_claims *c, uint64_t off, uint64_t end, ct_claim_env *env)
{
    if (off >= end || c->n == 0 || clear_only(c, off, end, env))
        return;
    ct_claim one;
    const ct_claim *v = ct_claims_view(c, &one);
    edit e;
    plan_clear(v, c->n, off, end, &e);
    if (e.lo < e.hi)
        apply(c, &e, env); /* short of memory: stays tainted, never less */
}

void ct_claims_drop(ct_claims *c, ct_claim_env *env)
{
    if (c->n == 0)
        return;
    edit all = {.lo = 0, .hi = c->n, .n_pieces = 0};
    apply(c, &all, env);
}

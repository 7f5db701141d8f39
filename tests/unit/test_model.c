/* Randomised model check: the store against a plain per-byte reference.
 *
 * The reference keeps, for every byte of a small arena, which allocation
 * owns it and which failure its last writer left on it (0: the last writer
 * succeeded, or nothing failed since it was allocated).  Random sequences of
 * alloc / free / forget an owner (its context destroyed) / unmap a range
 * (the mappings wholly inside it go) / remap what was unmapped / host write ok /
 * host write failed / launch (read inputs; skip and propagate when one is
 * carried; otherwise ok, failed, or a scope that never exits) / device read
 * run on both, and every read is checked:
 * refused if and only if some byte it reads was last written by work that
 * failed or was skipped, naming exactly the reference's failures.
 *
 * CT_MODEL_SEED=N replays a run; the seed is printed first and on any
 * mismatch, with the index of the operation that disagreed.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ct_hash.h"
#include "ct_status.h"
#include "scope.h"
#include "taint.h"

#ifndef CT_MODEL_OPS
#define CT_MODEL_OPS 10000
#endif

#define ARENA 4096
#define ARENA_BASE 0x100000ULL
#define MAX_ALLOCS 32
#define MAX_ALLOC_SIZE 256
#define N_KINDS 6
#define PROVISIONAL (-1)
#define PROVISIONAL_ERROR 999
#define LOST_ROOT_ERROR 1000 /* the model never propagates a released root */

#define N_OWNERS 3

typedef struct model_alloc {
    size_t base, size; /* arena offsets */
    uint64_t owner;    /* 1..N_OWNERS: the context it was made in */
    bool live;
} model_alloc;

typedef struct model_failure {
    ct_failure_id id;
    int kind;       /* 0..N_KINDS-1, or PROVISIONAL */
    uint64_t bytes; /* arena bytes carrying it */
    uint64_t occurrences;
    uint64_t skips;
    ct_failure_id pinned; /* provisional: the failure its scope keeps alive */
    bool pin_unknown;     /* ... when the reference cannot tell which */
    UT_hash_handle hh;
} model_failure;

typedef struct model {
    uint64_t seed, rng;
    size_t op;
    ct_store *s;
    model_alloc allocs[MAX_ALLOCS];
    int owner[ARENA];
    ct_failure_id carried[ARENA];
    model_failure *failures;
    size_t live; /* failures with bytes > 0 */
    ct_failure_id live_of_kind[N_KINDS];
    ct_failure_id abandoned[ARENA + 2]; /* scopes never exited, still carried */
    size_t n_abandoned;
    size_t reads, refused, skips; /* what a run exercised */
    bool recording;               /* noting deaths during a placement */
    ct_failure_id died[64];
    size_t n_died;
} model;

static model m;

#define expect(cond, ...) \
    cr_assert(cond, "seed %" PRIu64 ", operation %zu: %s", m.seed, m.op, (snprintf(why, sizeof(why), __VA_ARGS__), why))
static char why[512];

static uint64_t rnd(void)
{
    m.rng ^= m.rng >> 12;
    m.rng ^= m.rng << 25;
    m.rng ^= m.rng >> 27;
    return m.rng * 0x2545f4914f6cdd1dULL;
}

static uint64_t below(uint64_t n)
{
    return rnd() % n;
}

static const char *const kernels[3] = {NULL, "k1", "k2"};

static ct_failure_desc desc_of(int kind)
{
    return (ct_failure_desc){.error = kind < 3 ? 700 : 719, .api = "cuLaunchKernel", .kernel = kernels[kind % 3]};
}

static model_failure *mf(ct_failure_id id)
{
    model_failure *f;
    HASH_FIND(hh, m.failures, &id, sizeof(id), f);
    if (!f) {
        f = calloc(1, sizeof(*f));
        cr_assert(f != NULL, "model: out of memory");
        f->id = id;
        HASH_ADD(hh, m.failures, id, sizeof(f->id), f);
        cr_assert(ct_hash_added(&f->hh), "model: out of memory");
    }
    return f;
}

static bool seen(ct_failure_id id)
{
    model_failure *f;
    HASH_FIND(hh, m.failures, &id, sizeof(id), f);
    return f != NULL;
}

/* --- the per-byte reference -------------------------------------------- */

static void set_byte(size_t i, ct_failure_id id)
{
    ct_failure_id old = m.carried[i];
    if (old == id)
        return;
    if (old) {
        model_failure *f = mf(old);
        if (--f->bytes == 0) {
            m.live--;
            if (f->kind != PROVISIONAL)
                m.live_of_kind[f->kind] = 0;
            if (m.recording && m.n_died < 64)
                m.died[m.n_died++] = old;
        }
    }
    if (id) {
        model_failure *f = mf(id);
        if (f->bytes++ == 0) {
            m.live++;
            if (f->kind != PROVISIONAL) {
                expect(m.live_of_kind[f->kind] == 0, "two live failures of kind %d: %u and %u", f->kind,
                       m.live_of_kind[f->kind], id);
                m.live_of_kind[f->kind] = id;
            }
        }
    }
    m.carried[i] = id;
}

static size_t arena(uint64_t addr)
{
    return (size_t)(addr - ARENA_BASE);
}

/* The arena bytes r covers, [*lo, *hi): within the allocation holding its
 * first byte, nothing when that byte is in none (a copy the driver refuses
 * never reaches a neighbour). */
static void span_of(ct_range r, size_t *lo, size_t *hi)
{
    size_t a = arena(r.addr);
    *lo = *hi = a;
    if (m.owner[a] < 0)
        return;
    const model_alloc *al = &m.allocs[m.owner[a]];
    size_t end = al->base + al->size;
    *hi = r.len == CT_TO_END || r.len > end - a ? end : a + r.len;
}

static void apply(ct_range r, ct_failure_id id)
{
    size_t lo, hi;
    span_of(r, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        if (m.owner[i] >= 0)
            set_byte(i, id);
}

static ct_failure_id oldest_carried(const ct_range *r, size_t n)
{
    ct_failure_id oldest = 0;
    for (size_t k = 0; k < n; k++) {
        size_t lo, hi;
        span_of(r[k], &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            if (m.owner[i] >= 0 && m.carried[i] && (!oldest || m.carried[i] < oldest))
                oldest = m.carried[i];
    }
    return oldest;
}

/* --- pins: what the store keeps alive beyond the bytes ------------------ */

static bool alive(ct_failure_id id)
{
    return id && mf(id)->bytes > 0;
}

/* Failures the store holds by a pin alone; false when it cannot be told. */
static bool pinned_only(ct_failure_id *out, size_t *n, ct_failure_id scope)
{
    *n = 0;
    for (size_t i = 0; i <= m.n_abandoned; i++) {
        ct_failure_id p = i < m.n_abandoned ? m.abandoned[i] : scope;
        if (!p || (i < m.n_abandoned && !alive(p)))
            continue;
        const model_failure *f = mf(p);
        if (f->pin_unknown)
            return false;
        if (f->pinned && !alive(f->pinned))
            out[(*n)++] = f->pinned;
    }
    return true;
}

/* After placing provisional p: which failure did its scope pin? */
static void note_pin(ct_failure_id p)
{
    ct_failure_id candidates[128];
    size_t n = 0;
    for (size_t i = 0; i < m.n_died; i++) {
        const model_failure *f = mf(m.died[i]);
        if (f->kind != PROVISIONAL) {
            candidates[n++] = f->id;
        } else if (f->pin_unknown) {
            mf(p)->pin_unknown = true;
            return;
        } else if (f->pinned && !alive(f->pinned)) {
            candidates[n++] = f->pinned; /* released by the death, caught by p */
        }
    }
    mf(p)->pinned = n == 1 ? candidates[0] : 0;
    mf(p)->pin_unknown = n > 1;
}

/* A scope's provisional failure stops mattering once nothing carries it. */
static void forget_dead_scopes(void)
{
    size_t kept = 0;
    for (size_t i = 0; i < m.n_abandoned; i++)
        if (alive(m.abandoned[i]))
            m.abandoned[kept++] = m.abandoned[i];
    m.n_abandoned = kept;
}

static void check_live_count(void)
{
    ct_failure_id pins[ARENA + 2];
    size_t n_pins;
    if (!pinned_only(pins, &n_pins, 0))
        return;
    expect(ct_store_live_failures(m.s) == m.live + n_pins, "store holds %zu failures, model %zu + %zu pinned",
           ct_store_live_failures(m.s), m.live, n_pins);
    expect(ct_store_tainted(m.s) == (m.live > 0), "ct_store_tainted disagrees");
}

/* A failure minted or folded for `kind`: it must fold into the one the
 * store still holds of that kind, and be new otherwise. */
static void check_mint(ct_failure_id id, ct_occurrence occ, int kind, ct_failure_id scope)
{
    bool is_new = occ.is_new;
    expect(id != 0, "no id returned");
    ct_failure_id holder = m.live_of_kind[kind];
    ct_failure_id pins[ARENA + 2];
    size_t n_pins;
    bool known = pinned_only(pins, &n_pins, scope);
    for (size_t i = 0; !holder && i < n_pins; i++)
        if (mf(pins[i])->kind == kind)
            holder = pins[i];
    if (holder) {
        expect(id == holder && !is_new, "kind %d should fold into %u, got %u (new %d)", kind, holder, id, is_new);
    } else if (known || is_new) {
        expect(is_new && !seen(id), "kind %d should be a new failure, got %u (new %d)", kind, id, is_new);
    } else {
        expect(mf(id)->kind == kind, "folded %u into a failure of another kind", id);
    }
    model_failure *f = mf(id);
    f->kind = kind;
    f->occurrences = is_new ? 1 : f->occurrences + 1;
    expect(occ.count == f->occurrences, "failure %u: occurrence %" PRIu64 ", model %" PRIu64, id, occ.count,
           f->occurrences);
}

/* --- operations -------------------------------------------------------- */

static int pick_alloc(void)
{
    int live[MAX_ALLOCS], n = 0;
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (m.allocs[i].live)
            live[n++] = i;
    return n ? live[below((uint64_t)n)] : -1;
}

static void drop_alloc(int j)
{
    model_alloc *al = &m.allocs[j];
    for (size_t i = al->base; i < al->base + al->size; i++) {
        set_byte(i, 0);
        m.owner[i] = -1;
    }
    al->live = false;
}

static void op_alloc_at(size_t base, size_t size, uint64_t owner)
{
    int slot = -1;
    for (int i = 0; i < MAX_ALLOCS && slot < 0; i++)
        if (!m.allocs[i].live)
            slot = i;
    if (slot < 0)
        return;
    expect(ct_store_alloc(m.s, ARENA_BASE + base, size, owner) == CT_OK, "alloc failed");
    for (int j = 0; j < MAX_ALLOCS; j++) {
        const model_alloc *o = &m.allocs[j];
        if (o->live && o->base < base + size && base < o->base + o->size)
            drop_alloc(j);
    }
    m.allocs[slot] = (model_alloc){base, size, owner, true};
    for (size_t i = base; i < base + size; i++)
        m.owner[i] = slot;
}

static void op_alloc(void)
{
    size_t base = below(ARENA - 1);
    size_t room = ARENA - base < MAX_ALLOC_SIZE ? ARENA - base : MAX_ALLOC_SIZE;
    size_t size = 1 + below(room);
    op_alloc_at(base, size, 1 + below(N_OWNERS));
}

static void op_free(void)
{
    int j = pick_alloc();
    if (j < 0)
        return;
    const model_alloc *al = &m.allocs[j];
    if (al->size > 1 && below(4) == 0)
        expect(ct_store_free_alloc(m.s, ARENA_BASE + al->base + 1) == CT_ENOENT,
               "freeing an interior address succeeded");
    expect(ct_store_free_alloc(m.s, ARENA_BASE + al->base) == CT_OK, "free failed");
    drop_alloc(j);
}

/* A context destroyed: every allocation made in it goes, with its taint. */
static void op_forget_owner(void)
{
    uint64_t owner = 1 + below(N_OWNERS);
    size_t mine = 0;
    for (int j = 0; j < MAX_ALLOCS; j++) {
        if (m.allocs[j].live && m.allocs[j].owner == owner) {
            drop_alloc(j);
            mine++;
        }
    }
    size_t forgot = ct_store_forget_owner(m.s, owner);
    expect(forgot == mine, "forgot %zu allocations of owner %" PRIu64 ", model %zu", forgot, owner, mine);
}

/* A virtual memory unmap (or a reservation freed): the mappings wholly
 * inside the range go with their taint; the last one is kept for remap. */
static model_alloc unmapped;

static void op_unmap(void)
{
    size_t lo = below(ARENA), len = 1 + below(ARENA - lo);
    size_t mine = 0;
    for (int j = 0; j < MAX_ALLOCS; j++) {
        const model_alloc *al = &m.allocs[j];
        if (al->live && al->base >= lo && al->base + al->size <= lo + len) {
            unmapped = *al;
            drop_alloc(j);
            mine++;
        }
    }
    size_t forgot = ct_store_forget_range(m.s, ARENA_BASE + lo, len);
    expect(forgot == mine, "unmap [%zu, %zu) forgot %zu allocations, model %zu", lo, lo + len, forgot, mine);
}

/* Mapping the same addresses again: a new allocation, every byte clean. */
static void op_remap(void)
{
    if (unmapped.size == 0)
        return;
    op_alloc_at(unmapped.base, unmapped.size, unmapped.owner);
    unmapped.size = 0;
}

static ct_range random_range(void)
{
    int j = pick_alloc();
    uint64_t roll = below(10);
    if (j >= 0 && roll < 8) {
        const model_alloc *al = &m.allocs[j];
        size_t off = below(al->size);
        uint64_t len = roll < 6 ? 1 + below(al->size - off + 8) : CT_TO_END;
        return (ct_range){ARENA_BASE + al->base + off, len};
    }
    uint64_t addr = ARENA_BASE + below(ARENA);
    return (ct_range){addr, roll == 9 ? CT_TO_END : 1 + below(64)};
}

static void op_host_write_ok(void)
{
    ct_range r = random_range();
    ct_written(m.s, &r, 1);
    apply(r, 0);
}

static void op_host_write_failed(void)
{
    ct_range r = random_range();
    int kind = (int)below(N_KINDS);
    ct_failure_desc d = desc_of(kind);
    ct_occurrence occ = {0};
    ct_failure_id id = ct_taint(m.s, &d, &r, 1, &occ);
    check_mint(id, occ, kind, 0);
    apply(r, id);
}

static void place_provisional(ct_failure_id p, const ct_range *w, size_t n)
{
    model_failure *f = mf(p);
    f->kind = PROVISIONAL;
    f->occurrences = 1;
    m.recording = true;
    m.n_died = 0;
    for (size_t k = 0; k < n; k++)
        apply(w[k], p);
    m.recording = false;
    note_pin(p);
}

static bool touches_owned(const ct_range *w, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        size_t lo, hi;
        span_of(w[k], &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            if (m.owner[i] >= 0)
                return true;
    }
    return false;
}

/* A scope of one range is opened and settled, half the time, as the shim
 * opens a linear write's (scope.h, inline): the model cannot tell. */
static ct_failure_id enter_scope(const ct_range *w, size_t n, bool inline_scope)
{
    ct_scope_desc desc = {PROVISIONAL_ERROR, "cuMemcpyHtoD_v2"};
    if (inline_scope) {
        ct_scope_gate gate = ct_store_scope_gate(m.s);
        return ct_scope_enter_one(&gate, w[0], desc);
    }
    return ct_enter_write(m.s, w, n, desc);
}

static void exit_scope_written(ct_failure_id scope, const ct_range *w, size_t n, bool inline_scope)
{
    if (inline_scope) {
        ct_scope_gate gate = ct_store_scope_gate(m.s);
        ct_scope_exit_one(&gate, scope, w[0]);
        return;
    }
    expect(ct_exit_write(m.s, scope, w, n, NULL, NULL) == 0, "a success returned a failure");
}

static void run_scope(const ct_range *w, size_t n)
{
    bool inline_scope = n == 1 && below(2);
    ct_failure_id scope = enter_scope(w, n, inline_scope);
    /* A scope is given its id before anyone knows what it touches (it is
     * placed only when someone looks): one touching nothing never lives,
     * and the model, which places every scope at once, knows it as none. */
    ct_failure_id p = 0;
    if (touches_owned(w, n)) {
        p = scope;
        expect(p != 0 && !seen(p), "enter_write returned %u, not a fresh id", p);
        place_provisional(p, w, n);
    } else {
        expect(!scope || !seen(scope), "a write set touching nothing was given a used id %u", scope);
    }
    uint64_t roll = below(100);
    if (roll < 3) {
        if (p)
            m.abandoned[m.n_abandoned++] = p; /* the call never returns */
        return;
    }
    if (roll < 80) {
        exit_scope_written(scope, w, n, inline_scope);
        for (size_t k = 0; k < n; k++)
            apply(w[k], 0);
    } else {
        int kind = (int)below(N_KINDS);
        ct_failure_desc d = desc_of(kind);
        ct_occurrence occ = {0};
        ct_failure_id id = ct_exit_write(m.s, scope, w, n, &d, &occ);
        check_mint(id, occ, kind, p);
        for (size_t k = 0; k < n; k++)
            apply(w[k], id);
    }
    if (p)
        mf(p)->pinned = 0, mf(p)->pin_unknown = false; /* released at exit */
}

static void op_launch(void)
{
    ct_range r[3], w[2];
    size_t nr = below(4), nw = 1 + below(2);
    for (size_t k = 0; k < nr; k++)
        r[k] = random_range();
    for (size_t k = 0; k < nw; k++)
        w[k] = random_range();

    int error = 0;
    ct_failure_id root = ct_read_failure(m.s, r, nr, &error);
    ct_failure_id expected = oldest_carried(r, nr);
    expect(root == expected, "read_failure said %u, the model %u", root, expected);
    if (!root) {
        run_scope(w, nw);
        return;
    }
    int kind = mf(root)->kind;
    expect(error == (kind == PROVISIONAL ? PROVISIONAL_ERROR : desc_of(kind).error),
           "read_failure gave error %d for failure %u", error, root);
    ct_skip_desc skip = {.api = "cuLaunchKernel",
                         .kernel = "skipped",
                         .launch_seq = m.op,
                         .needed = r[0].addr,
                         .produced = (uint32_t)nw};
    ct_propagate(m.s, root, &skip, w, nw);
    mf(root)->skips++;
    m.skips++;
    for (size_t k = 0; k < nw; k++)
        apply(w[k], root);
}

static int cmp_id(const void *a, const void *b)
{
    ct_failure_id x = *(const ct_failure_id *)a, y = *(const ct_failure_id *)b;
    return (x > y) - (x < y);
}

static void op_device_read(void)
{
    static ct_refusal refusal;
    ct_range r[3];
    size_t n = 1 + below(3);
    for (size_t k = 0; k < n; k++)
        r[k] = random_range();

    ct_failure_id ids[3 * ARENA];
    size_t n_ids = 0;
    uint64_t tainted = 0;
    for (size_t k = 0; k < n; k++) {
        size_t lo, hi;
        span_of(r[k], &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            if (m.owner[i] < 0 || !m.carried[i])
                continue;
            tainted++;
            ids[n_ids++] = m.carried[i];
        }
    }
    qsort(ids, n_ids, sizeof(ids[0]), cmp_id);
    size_t distinct = 0;
    for (size_t i = 0; i < n_ids; i++)
        if (i == 0 || ids[i] != ids[i - 1])
            ids[distinct++] = ids[i];

    int rc = ct_check_written(m.s, r, n, &refusal);
    m.reads++;
    m.refused += rc == CT_ETAINTED;
    expect(rc == (tainted ? CT_ETAINTED : CT_OK), "read refused=%d, model says %" PRIu64 " tainted bytes",
           rc == CT_ETAINTED, tainted);
    expect(refusal.tainted_bytes == tainted, "tainted bytes %" PRIu64 ", model %" PRIu64, refusal.tainted_bytes,
           tainted);
    expect(refusal.n_failures == distinct, "refusal names %zu failures, model %zu", refusal.n_failures, distinct);
    expect(refusal.n_kept == (distinct < CT_REFUSAL_MAX_FAILURES ? distinct : CT_REFUSAL_MAX_FAILURES), "kept %zu",
           refusal.n_kept);
    for (size_t i = 0; i < refusal.n_kept; i++) {
        const ct_failure_info *got = &refusal.failures[i];
        const model_failure *want = mf(ids[i]);
        expect(got->id == want->id, "failure %zu is %u, model %u", i, got->id, want->id);
        expect(got->provisional == (want->kind == PROVISIONAL), "failure %u provisional flag", got->id);
        expect(got->occurrences == want->occurrences, "failure %u occurred %" PRIu64 " times, model %" PRIu64, got->id,
               got->occurrences, want->occurrences);
        expect(got->skips_total == want->skips, "failure %u has %" PRIu64 " skips, model %" PRIu64, got->id,
               got->skips_total, want->skips);
    }
}

static void step(void)
{
    uint64_t roll = below(100);
    if (roll < 8)
        op_alloc();
    else if (roll < 11)
        op_free();
    else if (roll < 12)
        op_forget_owner();
    else if (roll < 13)
        op_unmap();
    else if (roll < 14)
        op_remap();
    else if (roll < 37)
        op_host_write_ok();
    else if (roll < 42)
        op_host_write_failed();
    else if (roll < 78)
        op_launch();
    else
        op_device_read();
    forget_dead_scopes();
    check_live_count();
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void run_model(uint64_t seed, size_t ops)
{
    memset(&m, 0, sizeof(m));
    unmapped = (model_alloc){0};
    m.seed = seed;
    m.rng = seed ? seed : 1;
    m.s = ct_store_new(LOST_ROOT_ERROR);
    for (size_t i = 0; i < ARENA; i++)
        m.owner[i] = -1;
    fprintf(stderr, "model: seed %" PRIu64 " (set CT_MODEL_SEED to replay)\n", seed);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (m.op = 0; m.op < ops; m.op++)
        step();
    fprintf(stderr,
            "model: seed %" PRIu64 ", %zu operations, %.3f s: %zu device reads (%zu refused), "
            "%zu skipped launches\n",
            seed, ops, seconds_since(&t0), m.reads, m.refused, m.skips);
    ct_store_free(m.s);
    model_failure *f, *tmp;
    HASH_ITER(hh, m.failures, f, tmp)
    {
        HASH_DEL(m.failures, f);
        free(f);
    }
}

static uint64_t chosen_seed(void)
{
    const char *env = getenv("CT_MODEL_SEED");
    if (env && *env)
        return strtoull(env, NULL, 0);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000000007ULL ^ (uint64_t)now.tv_nsec;
}

Test(model, a_read_is_refused_iff_its_last_writer_failed, .timeout = 600)
{
    run_model(chosen_seed(), CT_MODEL_OPS);
}

Test(model, a_fixed_seed_agrees_too, .timeout = 600)
{
    run_model(20240601, CT_MODEL_OPS);
}

/*
 * regions.c - the entry points of include/cutaint.h: a program (or a
 * framework, through ctypes) says where the tensors of a pool lie; and
 * the pools noticed where it did not.
 *
 * Translates only: core's store keeps the regions and ct_region_rule
 * decides which calls are taken (core/taint.h, "regions").  A refused
 * call is said in one line at warn and changes nothing; the answer tells
 * the caller too.
 *
 * Invariants:
 * - Never called by the driver or by cutaint: the program's own calls,
 *   from any thread, before or after the driver is loaded.
 * - A pointer is a number: never dereferenced.
 * - Pools are watched only on paths that already decode (a failure, a
 *   skip, a refused read, a launch meeting taint): the happy path never
 *   reaches this file.  The watch keeps the last WATCHED allocations a
 *   failure covered from an interior pointer, each with the distinct
 *   pointers met in it (counted past POINTERS_KEPT, not kept); core's
 *   ct_pool_rule decides when one is said, once.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#include "shim.h"

/* What cutaint.h's CUTAINT_REGION_* answers are. */
enum { REGION_DONE = 0, REGION_REFUSED = 1 };

/* call: the call as the program made it, for the line. */
static int answer(const char *call, ct_region_verdict v)
{
    if (v == CT_REGION_DONE)
        return REGION_DONE;
    ct_log(CT_LOG_WARN, "%s ignored: %s", call, ct_region_verdict_text(v));
    return REGION_REFUSED;
}

CT_EXPORT int cutaint_shim_region_alloc(const void *base, size_t bytes)
{
    ct_ensure_ready();
    ct_region_verdict v = ct_store_region_alloc(ct_g.store, (uint64_t)(uintptr_t)base, bytes);
    char call[96];
    if (v != CT_REGION_DONE)
        snprintf(call, sizeof call, "CUTAINT_REGION_ALLOC(%p, %zu)", base, bytes);
    return answer(call, v);
}

CT_EXPORT int cutaint_shim_region_free(const void *base)
{
    ct_ensure_ready();
    ct_region_verdict v = ct_store_region_free(ct_g.store, (uint64_t)(uintptr_t)base);
    char call[64];
    if (v != CT_REGION_DONE)
        snprintf(call, sizeof call, "CUTAINT_REGION_FREE(%p)", base);
    return answer(call, v);
}

/* ---- pools noticed --------------------------------------------------------- */

#define WATCHED 8
#define POINTERS_KEPT 8

typedef struct watch {
    ct_pool_facts facts;
    ct_failure_id failure;
    uint64_t pointers[POINTERS_KEPT];
} watch;

static struct {
    pthread_mutex_t lock;
    atomic_uint n; /* watches ever made (written under lock): 0 ends every look at once */
    watch w[WATCHED];
} pools = {.lock = PTHREAD_MUTEX_INITIALIZER};

static watch *watch_of(uint64_t addr)
{
    unsigned n = atomic_load_explicit(&pools.n, memory_order_relaxed);
    for (unsigned i = 0; i < n && i < WATCHED; i++) {
        watch *w = &pools.w[i];
        if (addr >= w->facts.allocation && addr - w->facts.allocation < w->facts.size)
            return w;
    }
    return NULL;
}

/* addr met in w: one more distinct pointer, or none. */
static void met(watch *w, uint64_t addr)
{
    ct_pool_facts *f = &w->facts;
    for (unsigned i = 0; i < f->pointers && i < POINTERS_KEPT; i++)
        if (w->pointers[i] == addr)
            return;
    if (f->pointers < POINTERS_KEPT)
        w->pointers[f->pointers] = addr;
    f->pointers++;
    assert(f->pointers > 0 && "distinct pointers are counted past POINTERS_KEPT, never wrapped");
}

/* A failure id's kernel pointer r covers the rest of its allocation from
 * inside it, in no region: watched (a watch of that allocation already
 * kept stays, said or not). */
static void watch_cover(ct_failure_id id, const ct_range *r)
{
    ct_extent e;
    if (r->len != CT_TO_END || !ct_store_extent(ct_g.store, r->addr, &e) || e.in_region || r->addr == e.allocation ||
        watch_of(r->addr))
        return;
    unsigned n = atomic_load_explicit(&pools.n, memory_order_relaxed);
    assert(r->addr > e.allocation && r->addr - e.allocation < e.size &&
           "a watch is of an allocation covered from an interior pointer");
    pools.w[n % WATCHED] =
        (watch){/* past WATCHED, the oldest gives way */
                .failure = id,
                .facts = {.allocation = e.allocation, .size = e.size, .from = r->addr, .covered = e.end - r->addr}};
    atomic_store_explicit(&pools.n, n + 1, memory_order_relaxed);
}

/* Each of a and b met: true with *due filled when a watched allocation is
 * due to be said now (ct_pool_rule), *id its failure; the first only. */
static bool meet_locked(const ct_range *a, size_t n_a, const ct_range *b, size_t n_b, ct_pool_facts *due,
                        ct_failure_id *id)
{
    bool said = false;
    for (size_t k = 0; k < n_a + n_b; k++) {
        const ct_range *r = k < n_a ? &a[k] : &b[k - n_a];
        watch *w = watch_of(r->addr);
        if (!w)
            continue;
        met(w, r->addr);
        if (!said && ct_pool_rule(&w->facts)) {
            w->facts.said = true;
            *due = w->facts;
            *id = w->failure;
            said = true;
        }
    }
    return said;
}

bool ct_pool_failed(ct_failure_id id, const ct_range *out, size_t n_out, const ct_range *in, size_t n_in,
                    ct_pool_facts *due)
{
    pthread_mutex_lock(&pools.lock);
    for (size_t i = 0; i < n_out; i++)
        watch_cover(id, &out[i]);
    ct_failure_id whose = 0;
    bool now = meet_locked(out, n_out, in, n_in, due, &whose);
    pthread_mutex_unlock(&pools.lock);
    if (now && whose != id) /* another failure's allocation, met here */
        ct_event_pool(whose, due);
    return now && whose == id;
}

void ct_pool_met(const ct_range *a, size_t n_a, const ct_range *b, size_t n_b)
{
    if (atomic_load_explicit(&pools.n, memory_order_relaxed) == 0)
        return;
    ct_pool_facts due;
    ct_failure_id id = 0;
    pthread_mutex_lock(&pools.lock);
    bool now = meet_locked(a, n_a, b, n_b, &due, &id);
    pthread_mutex_unlock(&pools.lock);
    if (now)
        ct_event_pool(id, &due);
}

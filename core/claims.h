/*
 * claims.h - private to core: the taint claims one allocation holds.
 *
 * Owns: the sorted list of [off, end) byte ranges of one allocation that
 * carry a failure, and the edits the taint operations make to it.  The
 * failures themselves live in the store (taint.c); a claim names one by id
 * and tells the store through ct_claim_env whenever a claim naming it is
 * created or destroyed, which is what the store's reference counts count.
 *
 * Invariants:
 * - Claims are sorted by offset, never empty, never overlap, and two
 *   claims that touch never carry the same id (they would have merged).
 * - Storage: up to one claim lives inline in the allocation node (the only
 *   case a happy program reaches, so it never allocates); two or more spill
 *   to one heap block, released as soon as the count falls back to one.
 * - Every edit takes its references before it releases any, so a failure
 *   that keeps a claim through an edit is never freed in the middle of it.
 * - Out of memory never loses taint: a set that cannot grow the block
 *   widens into one claim over the hull (detail lost, taint kept), and a
 *   clear that would have to split leaves the claims as they were.
 */
#ifndef CT_CLAIMS_H
#define CT_CLAIMS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "failures.h"

typedef struct ct_claim {
    uint64_t off;
    uint64_t end;
    ct_failure_id id;
} ct_claim;

typedef struct ct_claimvec {
    uint32_t cap;
    ct_claim v[];
} ct_claimvec;

/* 24 bytes: the inline claim's range shares room with the spill pointer. */
typedef struct ct_claims {
    union {
        struct {
            uint64_t off, end;
        } one;             /* n == 1 */
        ct_claimvec *many; /* n >= 2 */
    } u;
    ct_failure_id one_id;
    uint32_t n;
} ct_claims;

/* The store's side of the bookkeeping, shared by every allocation of a map. */
typedef struct ct_claim_env {
    void (*ref)(void *owner, ct_failure_id id);
    void (*unref)(void *owner, ct_failure_id id);
    /* The allocation at base, which carries claims ending at offset end
     * (ct_claims_end), is about to go. */
    void (*forget)(void *owner, uint64_t base, uint64_t end);
    void *owner;
    size_t spill_bytes; /* heap bytes of spilled blocks, allocator included */
    atomic_size_t live; /* claims in all allocations; read without the lock */
} ct_claim_env;

/* Bytes [off, end) carry id from now on (set, never add). */
void ct_claims_set(ct_claims *c, uint64_t off, uint64_t end, ct_failure_id id, ct_claim_env *env);
/* Bytes [off, end) carry nothing from now on. */
void ct_claims_clear(ct_claims *c, uint64_t off, uint64_t end, ct_claim_env *env);
/* Release every claim (the allocation is going away). */
void ct_claims_drop(ct_claims *c, ct_claim_env *env);
/* The hull of the claims, offsets [*lo, end): end 0 when there are none. */
static inline uint64_t ct_claims_end(const ct_claims *c, uint64_t *lo)
{
    uint64_t start = 0, end = 0;
    if (c->n == 1) {
        start = c->u.one.off;
        end = c->u.one.end;
    } else if (c->n > 1) {
        start = c->u.many->v[0].off;
        end = c->u.many->v[c->n - 1].end;
    }
    if (lo)
        *lo = start;
    return end;
}

/* The claims as an array; the inline one is copied into *one. */
const ct_claim *ct_claims_view(const ct_claims *c, ct_claim *one);
/* Index of the first claim of v[0..n) ending after off. */
size_t ct_claims_first_after(const ct_claim *v, size_t n, uint64_t off);

/* --- the map's side (allocmap.c) -------------------------------------- */

typedef struct ct_allocmap ct_allocmap;
typedef struct ct_alloc ct_alloc;

ct_claims *ct_alloc_claims(ct_alloc *a);
/* The bookkeeping the map's claims report to; the store fills in the hooks. */
ct_claim_env *ct_allocmap_env(ct_allocmap *map);

#endif

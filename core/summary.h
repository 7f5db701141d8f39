/*
 * summary.h - which address granules the allocations carrying claims
 * cover, readable without the store's lock: core's checks read it, and so
 * does a launch while it binds its pointer words (ct_store_summary,
 * taint.h), through the inline looks below only.
 *
 * Owns: a filter - a counter per address granule (4 KiB, or 2 MiB for a
 * span of more than CT_FILTER_FINE_SPAN granules), counting the
 * allocations whose bytes from their base to their hull's end cover it
 * (several granules to one slot, modulo the filter's size) - made at the
 * first claim and kept until the store goes, so an untainted process pays
 * neither its memory nor its reads; the number of allocations carrying
 * claims; and a sequence number.  A look costs the same one or two byte
 * loads per pointer however many allocations carry claims.  The store
 * edits it under its lock whenever an allocation's claims change
 * (ct_summary_note) or an allocation carrying claims is forgotten; checks
 * read it lock-free (a seqlock: readers write nothing shared, so threads
 * checking at once do not take cache lines from each other).
 *
 * Invariants:
 * - n is the number of allocations carrying claims: 0 means none does.
 * - While n > 0, the filter exists or the look answers "ask the store":
 *   it is made when n leaves 0 (retried there when it could not be), so
 *   it counts every allocation carrying claims or none.
 * - A filter slot is never below the number of allocations covering a
 *   granule of it: a slot that reached 255 stays there (it only answers
 *   "ask the store" more often) until n is back to 0, when the filter is
 *   zeroed; with n at 0 every slot is 0 (debug builds count the sum).
 * - A reader's answer "clean" is exact: every range it was given starts
 *   in a granule no allocation carrying claims counts, so it starts
 *   outside every such allocation or past its hull's end (ranges are
 *   clipped to the allocation they start in).  Anything else, a writer
 *   caught at work, and a write scope open but not yet shown in the store
 *   (open_scopes), is "ask the store".
 */
#ifndef CT_SUMMARY_H
#define CT_SUMMARY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "taint.h"

#define CT_FILTER_FINE_SHIFT 12 /* 4 KiB granules */
#define CT_FILTER_FINE_SLOTS (1u << 22)
#define CT_FILTER_COARSE_SHIFT 21 /* 2 MiB granules */
#define CT_FILTER_COARSE_SLOTS (1u << 16)
#define CT_FILTER_FINE_SPAN 512 /* longer spans are counted in coarse granules */

/* Made at the first claim, kept until the store goes (calloc: pages of
 * zeros, touched only where counted): one byte read per level for a
 * pointer, two lines at most. */
typedef struct ct_summary_filter {
    _Atomic unsigned char fine[CT_FILTER_FINE_SLOTS];
    _Atomic unsigned char coarse[CT_FILTER_COARSE_SLOTS];
} ct_summary_filter;

/* The sequence number is the line every reader reads: it sits with n and
 * the filter, written only by writers, apart from the store's busy fields
 * (the struct is 64-aligned). */
typedef struct ct_summary {
    _Alignas(64) atomic_uint seq;        /* odd while a writer edits */
    atomic_size_t n;                     /* allocations carrying claims */
    _Atomic(ct_summary_filter *) filter; /* NULL until the first claim, or when it could not be made */
    bool saturated;                      /* a filter slot reached 255 (writers only) */
#ifndef NDEBUG
    uint64_t counted; /* the sum of the unsaturated slots (writers only) */
#endif
    /* Write scopes open and not yet shown in the store (taint.c): while any
     * is, no look answers "clean".  Its own line: every copy writes it. */
    _Alignas(64) atomic_uint open_scopes;
} ct_summary;

void ct_summary_init(ct_summary *sm);
/* The filter's memory, at the store's end. */
void ct_summary_destroy(ct_summary *sm);
/* Under the store's lock: the allocation at base carried claims whose hull
 * ended at offset had_end (0: none) and now carries claims over offsets
 * [lo, hi) (lo < hi), inside it, or none (lo == hi). */
void ct_summary_note(ct_summary *sm, uint64_t base, uint64_t had_end, uint64_t lo, uint64_t hi);
/* Under the store's lock: the allocation at base, which carried claims
 * ending at offset end, is gone. */
void ct_summary_forget(ct_summary *sm, uint64_t base, uint64_t end);

/* Lock-free looks: begin (false: a writer is at work, a write scope is
 * open but not shown in the store, or claims exist without a filter - ask
 * the store), ask about any number of ranges, end (false: a writer changed
 * it meanwhile - ask the store).  Inline: they are most of what a launch or
 * a read pays while taint exists elsewhere.  filter: NULL when no
 * allocation carried claims as the look began (everything is clean). */
typedef struct ct_summary_look {
    unsigned seq;
    const ct_summary_filter *filter;
} ct_summary_look;

/* Does any allocation carry a claim, or any write scope wait?  The one
 * answer: ct_store_tainted is this, and the shim asks it here, inline, as
 * the first test of every hot check. */
static inline bool ct_summary_tainted(const ct_summary *sm)
{
    return atomic_load_explicit(&sm->n, memory_order_acquire) != 0 ||
           atomic_load_explicit(&sm->open_scopes, memory_order_acquire) != 0;
}

/* The look at the claims alone, open scopes or not: for the owner of a
 * scope, whose own slot keeps open_scopes up (taint.c). */
static inline bool ct_summary_look_claims(const ct_summary *sm, ct_summary_look *look)
{
    look->seq = atomic_load_explicit(&sm->seq, memory_order_acquire);
    bool claims = atomic_load_explicit(&sm->n, memory_order_relaxed) != 0;
    look->filter = claims ? atomic_load_explicit(&sm->filter, memory_order_relaxed) : NULL;
    return !(look->seq & 1) && (!claims || look->filter);
}

/* Under a look whose filter is not NULL: may a range starting at addr
 * reach a claim?  Ranges are clipped to the allocation they start in, and
 * an allocation's granules from its base to its hull's end are counted, so
 * a range that can reach one starts in a counted granule. */
static inline bool ct_summary_filter_hit(const ct_summary_filter *f, uint64_t addr)
{
    return atomic_load_explicit(&f->fine[(addr >> CT_FILTER_FINE_SHIFT) & (CT_FILTER_FINE_SLOTS - 1)],
                                memory_order_relaxed) |
           atomic_load_explicit(&f->coarse[(addr >> CT_FILTER_COARSE_SHIFT) & (CT_FILTER_COARSE_SLOTS - 1)],
                                memory_order_relaxed);
}

static inline bool ct_summary_look_begin(const ct_summary *sm, ct_summary_look *look)
{
    return !atomic_load_explicit(&sm->open_scopes, memory_order_acquire) && ct_summary_look_claims(sm, look);
}

static inline bool ct_summary_look_end(const ct_summary *sm, const ct_summary_look *look)
{
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&sm->seq, memory_order_relaxed) == look->seq;
}

/* After a look began: true when no byte of r[0..n) can carry a claim;
 * false: ask the store. */
static inline bool ct_summary_clean_in(const ct_summary *sm, ct_summary_look look, const ct_range *r, size_t n)
{
    if (look.filter)
        for (size_t i = 0; i < n; i++)
            if (ct_summary_filter_hit(look.filter, r[i].addr))
                return false;
    return ct_summary_look_end(sm, &look);
}

/* ct_summary_clean_in of a fresh look (ct_summary_look_begin). */
static inline bool ct_summary_clean(const ct_summary *sm, const ct_range *r, size_t n)
{
    ct_summary_look look;
    return ct_summary_look_begin(sm, &look) && ct_summary_clean_in(sm, look, r, n);
}

#endif

/*
 * summary.h - which allocations carry any claim, readable without the
 * store's lock: core's checks read it, and so does a launch while it binds
 * its pointer words (ct_store_summary, taint.h), through the inline looks
 * below only.
 *
 * Owns: one entry per allocation whose claims are not empty - its range and
 * the hull of its claims (offsets from its base) - and a sequence number;
 * past CT_SUMMARY_MAX such allocations, a filter instead: a counter per
 * address granule (4 KiB, or 2 MiB for a span of more than
 * CT_FILTER_FINE_SPAN granules), counting the allocations whose bytes from
 * their base to their hull's end cover it (several granules to one slot,
 * modulo the filter's size).  The
 * store edits it under its lock whenever an allocation's claims change
 * (ct_summary_note) or an allocation carrying claims is forgotten; checks
 * read it lock-free (a seqlock: readers write nothing shared, so threads
 * checking at once do not take cache lines from each other).
 *
 * Invariants:
 * - Entries never overlap (allocations never do) and every hull lies inside
 *   its allocation.
 * - An allocation not listed carries no claim, unless the summary has
 *   overflowed (more than CT_SUMMARY_MAX allocations carried claims at
 *   once): the filter then answers until none carries any (or, where it
 *   could not be allocated, "ask the store").
 * - A filter slot is never below the number of allocations covering a
 *   granule of it: a slot that reached 255 stays there (it only answers
 *   "ask the store" more often) until the overflow ends.
 * - A reader's answer "clean" is exact: every range it was given starts
 *   outside every listed allocation, or ends in its allocation before that
 *   allocation's hull begins, or starts after it ends.  Anything else, a
 *   writer caught at work, and a write scope open but not yet shown in the
 *   store (open_scopes), is "ask the store".
 */
#ifndef CT_SUMMARY_H
#define CT_SUMMARY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "taint.h"

#define CT_SUMMARY_MAX 64

#define CT_FILTER_FINE_SHIFT 12 /* 4 KiB granules */
#define CT_FILTER_FINE_SLOTS (1u << 22)
#define CT_FILTER_COARSE_SHIFT 21 /* 2 MiB granules */
#define CT_FILTER_COARSE_SLOTS (1u << 16)
#define CT_FILTER_FINE_SPAN 512 /* longer spans are counted in coarse granules */

/* Made at the first overflow, kept until the store goes: one byte read per
 * level for a pointer, two lines at most. */
typedef struct ct_summary_filter {
    _Atomic unsigned char fine[CT_FILTER_FINE_SLOTS];
    _Atomic unsigned char coarse[CT_FILTER_COARSE_SLOTS];
} ct_summary_filter;

/* The allocation's end is not kept: its hull lies inside it, so a range
 * starting at most hi bytes past base starts in it. */
typedef struct ct_summary_entry {
    atomic_uint_fast64_t base;   /* the allocation */
    atomic_uint_fast64_t lo, hi; /* the hull of its claims, offsets from base */
} ct_summary_entry;

/* The sequence number is the line every reader reads: it sits with the
 * entries, written only by writers, apart from the store's busy fields (the
 * struct is 64-aligned). */
typedef struct ct_summary {
    _Alignas(64) atomic_uint seq;        /* odd while a writer edits */
    atomic_uint n;                       /* entries in use */
    _Atomic(ct_summary_filter *) filter; /* past CT_SUMMARY_MAX, when it could be made */
    size_t tainted;                      /* allocations carrying claims (writers only) */
    bool saturated;                      /* a filter slot reached 255 (writers only) */
    ct_summary_entry e[CT_SUMMARY_MAX];
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
 * open but not shown in the store, or the summary has overflowed - ask the
 * store), ask about any number of ranges, end (false:
 * a writer changed it meanwhile - ask the store).  Inline: they are most of
 * what a launch or a read pays while taint exists elsewhere. */
typedef struct ct_summary_look {
    unsigned seq, listed;
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
    look->listed = atomic_load_explicit(&sm->n, memory_order_relaxed);
    return !(look->seq & 1) &&
           (look->listed <= CT_SUMMARY_MAX || atomic_load_explicit(&sm->filter, memory_order_relaxed));
}

/* An overflowed look (listed > CT_SUMMARY_MAX): the filter answers. */
static inline bool ct_summary_filtered(const ct_summary_look *look)
{
    return look->listed > CT_SUMMARY_MAX;
}

/* Under a filtered look: may a range starting at addr reach a claim?
 * Ranges are clipped to the allocation they start in, and an allocation's
 * granules from its base to its hull's end are counted, so a range that
 * can reach one starts in a counted granule. */
static inline const ct_summary_filter *ct_summary_filter_of(const ct_summary *sm)
{
    return atomic_load_explicit(&sm->filter, memory_order_relaxed);
}

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

/* The one reach test: can [addr, addr+len), clipped to the allocation of
 * addr as the store clips it, reach the claims of an entry whose hull is
 * [base+lo, base+hi)?  Only if it starts in that allocation before the
 * hull's end, and at or past the hull's start or long enough to get there
 * (a kernel pointer, len CT_TO_END, always is). */
static inline bool ct_summary_entry_reaches(uint64_t base, uint64_t lo, uint64_t hi, uint64_t addr, uint64_t len)
{
    uint64_t off = addr - base;
    return off < hi && (off >= lo || len > lo - off);
}

static inline bool ct_summary_look_end(const ct_summary *sm, const ct_summary_look *look)
{
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&sm->seq, memory_order_relaxed) == look->seq;
}

/* After a look began: true when no byte of r[0..n) can carry a claim;
 * false: ask the store.  Entry by entry, each one's fields loaded once:
 * most looks meet one. */
static inline bool ct_summary_clean_in(const ct_summary *sm, ct_summary_look look, const ct_range *r, size_t n)
{
    if (ct_summary_filtered(&look)) {
        const ct_summary_filter *f = ct_summary_filter_of(sm);
        for (size_t i = 0; i < n; i++)
            if (ct_summary_filter_hit(f, r[i].addr))
                return false;
        return ct_summary_look_end(sm, &look);
    }
    for (unsigned k = 0; k < look.listed; k++) {
        const ct_summary_entry *e = &sm->e[k];
        uint64_t base = atomic_load_explicit(&e->base, memory_order_relaxed);
        uint64_t lo = atomic_load_explicit(&e->lo, memory_order_relaxed);
        uint64_t hi = atomic_load_explicit(&e->hi, memory_order_relaxed);
        for (size_t i = 0; i < n; i++)
            if (ct_summary_entry_reaches(base, lo, hi, r[i].addr, r[i].len))
                return false;
    }
    return ct_summary_look_end(sm, &look);
}

/* ct_summary_clean_in of a fresh look (ct_summary_look_begin). */
static inline bool ct_summary_clean(const ct_summary *sm, const ct_range *r, size_t n)
{
    ct_summary_look look;
    return ct_summary_look_begin(sm, &look) && ct_summary_clean_in(sm, look, r, n);
}

#endif

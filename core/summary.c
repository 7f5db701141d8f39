/*
 * summary.c - the lock-free summary of the allocations carrying claims
 * (see summary.h).
 *
 * A writer makes seq odd, edits, makes it even again; a reader that sees
 * the same even seq before and after its reads saw no edit.  Fields are
 * atomics read and written relaxed, ordered by the fences around them, so a
 * reader racing a writer reads values, never a torn word, and throws them
 * away.
 *
 * The filter is made (calloc: pages of zeros, touched only where counted)
 * when the first allocation comes to carry claims; then every edit counts
 * the change of an allocation's span [base, base + hull end) - a change of
 * the hull's start changes nothing it answers.  When the last claim goes
 * the filter is empty again (zeroed if a slot saturated).  There is no
 * exact list beside it: a list scanned by every look made each tainted
 * allocation cost every launch and copy more (docs/PERFORMANCE.md).
 */
#include "summary.h"

#include <assert.h>
#include <stdlib.h>

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

void ct_summary_init(ct_summary *sm)
{
    atomic_init(&sm->seq, 0);
    atomic_init(&sm->n, 0);
    atomic_init(&sm->open_scopes, 0);
    atomic_init(&sm->filter, NULL);
    sm->saturated = false;
#ifndef NDEBUG
    sm->counted = 0;
#endif
}

void ct_summary_destroy(ct_summary *sm)
{
    free(atomic_load_explicit(&sm->filter, memory_order_relaxed));
    atomic_store_explicit(&sm->filter, NULL, memory_order_relaxed);
}

/* A saturated slot stays: counting it down could undercount. */
static void bump(ct_summary *sm, _Atomic unsigned char *slot, int delta)
{
    unsigned v = LOAD(*slot);
    if (v == 255)
        return;
    assert((delta > 0 || v > 0) && "a slot is never counted below the allocations covering it");
    v += (unsigned)delta;
    sm->saturated |= v == 255;
#ifndef NDEBUG
    sm->counted = v == 255 ? sm->counted - 254 : sm->counted + (uint64_t)(int64_t)delta;
#endif
    STORE(*slot, (unsigned char)v);
}

/* The granules of [base, base + end), counted up or down; fine unless the
 * span is longer than CT_FILTER_FINE_SPAN of them.  Each slot once, even
 * where the span wraps the filter round. */
static void count_span(ct_summary *sm, ct_summary_filter *f, uint64_t base, uint64_t end, int delta)
{
    if (!f || end == 0)
        return;
    uint64_t last = base + end - 1;
    uint64_t first_fine = base >> CT_FILTER_FINE_SHIFT, last_fine = last >> CT_FILTER_FINE_SHIFT;
    if (last_fine - first_fine < CT_FILTER_FINE_SPAN) {
        for (uint64_t g = first_fine; g <= last_fine; g++)
            bump(sm, &f->fine[g & (CT_FILTER_FINE_SLOTS - 1)], delta);
        return;
    }
    uint64_t first = base >> CT_FILTER_COARSE_SHIFT, granules = (last >> CT_FILTER_COARSE_SHIFT) - first + 1;
    if (granules > CT_FILTER_COARSE_SLOTS)
        granules = CT_FILTER_COARSE_SLOTS;
    for (uint64_t g = first; g < first + granules; g++)
        bump(sm, &f->coarse[g & (CT_FILTER_COARSE_SLOTS - 1)], delta);
}

/* The first allocation comes to carry claims: the filter, made once (or
 * tried again, where it could not be); NULL when it cannot be made, and
 * readers then ask the store until no claim is left. */
static ct_summary_filter *first_claim_filter(ct_summary *sm)
{
    ct_summary_filter *f = LOAD(sm->filter);
    if (!f) {
        f = calloc(1, sizeof(*f));
        STORE(sm->filter, f);
    }
    return f;
}

/* The last claim has gone: every count is back to 0, unless one saturated. */
static void empty_filter(ct_summary *sm)
{
    ct_summary_filter *f = LOAD(sm->filter);
    if (f && sm->saturated) {
        for (size_t i = 0; i < CT_FILTER_FINE_SLOTS; i++)
            STORE(f->fine[i], 0);
        for (size_t i = 0; i < CT_FILTER_COARSE_SLOTS; i++)
            STORE(f->coarse[i], 0);
    }
    sm->saturated = false;
}

static void begin_edit(ct_summary *sm)
{
    STORE(sm->seq, LOAD(sm->seq) + 1);
    atomic_thread_fence(memory_order_release);
}

#ifndef NDEBUG
/* The invariants of summary.h, checked by the writer after each edit (debug
 * builds): with no allocation carrying claims, nothing is counted and no
 * slot is saturated; claims are counted in a filter, or readers ask the
 * store. */
static void assert_consistent(const ct_summary *sm)
{
    if (LOAD(sm->n) == 0) {
        assert(sm->counted == 0 && !sm->saturated && "no claim, nothing counted");
        return;
    }
    if (!LOAD(sm->filter))
        assert(sm->counted == 0 && "without a filter nothing is counted");
}
#else
#define assert_consistent(sm) ((void)0)
#endif

static void end_edit(ct_summary *sm)
{
    atomic_store_explicit(&sm->seq, LOAD(sm->seq) + 1, memory_order_release);
    assert_consistent(sm);
}

/* One allocation fewer carries claims (its hull ended at end). */
static void untaint(ct_summary *sm, uint64_t base, uint64_t end)
{
    begin_edit(sm);
    count_span(sm, LOAD(sm->filter), base, end, -1);
    size_t n = LOAD(sm->n) - 1;
    if (n == 0)
        empty_filter(sm);
    STORE(sm->n, n);
    end_edit(sm);
}

void ct_summary_note(ct_summary *sm, uint64_t base, uint64_t had_end, uint64_t lo, uint64_t hi)
{
    if (lo >= hi) {
        if (had_end)
            untaint(sm, base, had_end);
        return;
    }
    if (had_end == hi)
        return; /* the span's end is all the filter answers from */
    size_t n = LOAD(sm->n);
    ct_summary_filter *f = n == 0 ? first_claim_filter(sm) : LOAD(sm->filter);
    begin_edit(sm);
    count_span(sm, f, base, hi, +1);
    count_span(sm, f, base, had_end, -1);
    STORE(sm->n, n + !had_end);
    end_edit(sm);
}

void ct_summary_forget(ct_summary *sm, uint64_t base, uint64_t end)
{
    untaint(sm, base, end);
}

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
 * Past CT_SUMMARY_MAX allocations the entries give way to the filter: made
 * (calloc: pages of zeros, touched only where counted) at the first
 * overflow, the listed entries counted into it, then every edit counts the
 * change of an allocation's span [base, base + hull end) - a change of the
 * hull's start changes nothing it answers.  When the last claim goes the
 * overflow ends and the filter is empty again (zeroed if a slot saturated).
 */
#include "summary.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

void ct_summary_init(ct_summary *sm)
{
    atomic_init(&sm->seq, 0);
    atomic_init(&sm->n, 0);
    atomic_init(&sm->open_scopes, 0);
    atomic_init(&sm->filter, NULL);
    sm->tainted = 0;
    sm->saturated = false;
}

void ct_summary_destroy(ct_summary *sm)
{
    free(atomic_load_explicit(&sm->filter, memory_order_relaxed));
    atomic_store_explicit(&sm->filter, NULL, memory_order_relaxed);
}

/* ---- the filter ---------------------------------------------------------- */

/* A saturated slot stays: counting it down could undercount. */
static void bump(ct_summary *sm, _Atomic unsigned char *slot, int delta)
{
    unsigned v = LOAD(*slot);
    if (v == 255)
        return;
    assert((delta > 0 || v > 0) && "a slot is never counted below the allocations covering it");
    v += (unsigned)delta;
    sm->saturated |= v == 255;
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

/* At the first overflow: the filter (made once) takes the listed entries.
 * NULL when it cannot be made: readers then ask the store. */
static ct_summary_filter *start_filter(ct_summary *sm)
{
    ct_summary_filter *f = LOAD(sm->filter);
    if (!f) {
        f = calloc(1, sizeof(*f));
        if (!f)
            return NULL;
        STORE(sm->filter, f);
    }
    for (unsigned i = 0; i < LOAD(sm->n); i++)
        count_span(sm, f, LOAD(sm->e[i].base), LOAD(sm->e[i].hi), +1);
    return f;
}

/* The overflow has ended: every count is back to 0, unless one saturated. */
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
 * builds): one entry an allocation, every listed hull a proper range, never
 * more listed than tainted; an overflow lasts while any allocation carries
 * claims, and ends with the last. */
static void assert_consistent(const ct_summary *sm)
{
    unsigned n = LOAD(sm->n);
    if (n > CT_SUMMARY_MAX) {
        assert(sm->tainted > 0 && "an overflow ends with the last tainted allocation");
        return;
    }
    assert(n <= sm->tainted && "every listed allocation carries claims");
    for (unsigned i = 0; i < n; i++) {
        assert(LOAD(sm->e[i].lo) < LOAD(sm->e[i].hi) && "a listed hull is not empty");
        for (unsigned j = i + 1; j < n; j++)
            assert(LOAD(sm->e[i].base) != LOAD(sm->e[j].base) && "one entry an allocation");
    }
}
#else
#define assert_consistent(sm) ((void)0)
#endif

static void end_edit(ct_summary *sm)
{
    atomic_store_explicit(&sm->seq, LOAD(sm->seq) + 1, memory_order_release);
    assert_consistent(sm);
}

/* More allocations carry claims than entries fit: n says so to readers
 * (CT_SUMMARY_MAX + 1), and entries are no longer kept. */
static bool overflowed(const ct_summary *sm)
{
    return LOAD(sm->n) > CT_SUMMARY_MAX;
}

static unsigned find(const ct_summary *sm, uint64_t base)
{
    unsigned n = LOAD(sm->n), i = 0;
    while (i < n && LOAD(sm->e[i].base) != base)
        i++;
    return i;
}

static void set_entry(ct_summary_entry *e, uint64_t base, uint64_t lo, uint64_t hi)
{
    STORE(e->base, base);
    STORE(e->lo, lo);
    STORE(e->hi, hi);
}

/* Entry i leaves: the last takes its place. */
static void remove_at(ct_summary *sm, unsigned i)
{
    unsigned last = LOAD(sm->n) - 1;
    ct_summary_entry *e = &sm->e[last];
    if (i != last)
        set_entry(&sm->e[i], LOAD(e->base), LOAD(e->lo), LOAD(e->hi));
    STORE(sm->n, last);
}

/* One allocation fewer carries claims (its hull ended at end); an overflow
 * ends with the last. */
static void untaint(ct_summary *sm, uint64_t base, uint64_t end)
{
    begin_edit(sm);
    if (!overflowed(sm)) {
        unsigned i = find(sm, base);
        if (i < LOAD(sm->n))
            remove_at(sm, i);
    } else {
        count_span(sm, LOAD(sm->filter), base, end, -1);
    }
    if (--sm->tainted == 0) {
        if (overflowed(sm))
            empty_filter(sm);
        STORE(sm->n, 0);
    }
    end_edit(sm);
}

/* An edit while overflowed: only the span's end matters to the filter. */
static void note_overflowed(ct_summary *sm, uint64_t base, uint64_t had_end, uint64_t hi)
{
    sm->tainted += !had_end;
    if (had_end == hi)
        return;
    ct_summary_filter *f = LOAD(sm->filter);
    begin_edit(sm);
    count_span(sm, f, base, hi, +1);
    count_span(sm, f, base, had_end, -1);
    end_edit(sm);
}

void ct_summary_note(ct_summary *sm, uint64_t base, uint64_t had_end, uint64_t lo, uint64_t hi)
{
    bool has = lo < hi;
    if (had_end && !has) {
        untaint(sm, base, had_end);
        return;
    }
    if (!has)
        return;
    if (overflowed(sm)) {
        note_overflowed(sm, base, had_end, hi);
        return;
    }
    unsigned n = LOAD(sm->n);
    unsigned i = had_end ? find(sm, base) : n;
    if (i < n && LOAD(sm->e[i].lo) == lo && LOAD(sm->e[i].hi) == hi)
        return; /* an edit inside the hull: nothing a reader sees changes */
    begin_edit(sm);
    sm->tainted += !had_end;
    if (i < CT_SUMMARY_MAX) {
        set_entry(&sm->e[i], base, lo, hi);
        if (i == n)
            STORE(sm->n, n + 1);
    } else {
        count_span(sm, start_filter(sm), base, hi, +1);
        STORE(sm->n, CT_SUMMARY_MAX + 1);
    }
    end_edit(sm);
}

void ct_summary_forget(ct_summary *sm, uint64_t base, uint64_t end)
{
    untaint(sm, base, end);
}

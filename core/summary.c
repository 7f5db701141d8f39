/*
 * summary.c - the lock-free summary of the allocations carrying claims
 * (see summary.h).
 *
 * A writer makes seq odd, edits, makes it even again; a reader that sees
 * the same even seq before and after its reads saw no edit.  Fields are
 * atomics read and written relaxed, ordered by the fences around them, so a
 * reader racing a writer reads values, never a torn word, and throws them
 * away.
 */
#include "summary.h"

#include <assert.h>

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

void ct_summary_init(ct_summary *sm)
{
    atomic_init(&sm->seq, 0);
    atomic_init(&sm->n, 0);
    atomic_init(&sm->open_scopes, 0);
    sm->tainted = 0;
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

/* One allocation fewer carries claims; an overflow ends with the last. */
static void untaint(ct_summary *sm, uint64_t base)
{
    begin_edit(sm);
    if (!overflowed(sm)) {
        unsigned i = find(sm, base);
        if (i < LOAD(sm->n))
            remove_at(sm, i);
    }
    if (--sm->tainted == 0)
        STORE(sm->n, 0);
    end_edit(sm);
}

void ct_summary_note(ct_summary *sm, uint64_t base, bool had, uint64_t lo, uint64_t hi)
{
    bool has = lo < hi;
    if (had && !has) {
        untaint(sm, base);
        return;
    }
    if (!has)
        return;
    if (overflowed(sm)) { /* readers already ask the store */
        sm->tainted += !had;
        return;
    }
    unsigned n = LOAD(sm->n);
    unsigned i = had ? find(sm, base) : n;
    if (i < n && LOAD(sm->e[i].lo) == lo && LOAD(sm->e[i].hi) == hi)
        return; /* an edit inside the hull: nothing a reader sees changes */
    begin_edit(sm);
    sm->tainted += !had;
    if (i < CT_SUMMARY_MAX) {
        set_entry(&sm->e[i], base, lo, hi);
        if (i == n)
            STORE(sm->n, n + 1);
    } else {
        STORE(sm->n, CT_SUMMARY_MAX + 1);
    }
    end_edit(sm);
}

void ct_summary_forget(ct_summary *sm, uint64_t base)
{
    untaint(sm, base);
}

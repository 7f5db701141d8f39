/* The lock-free answer (core/summary.h) never hides a claim: every read the
 * summary answers "clean" is one the store, looking, finds nothing in -
 * ranges before, after and around a claim's hull, allocations freed,
 * replaced or forgotten with their owner, many tainted allocations, and a
 * reader on another thread that has seen a taint land; and its filter,
 * answering from the first claim, is made only then. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>

#include "ct_status.h"
#include "summary.h"
#include "taint.h"

#define A 0x100000u
#define B 0x200000u
#define SIZE 4096u
#define ERR 719
#define MANY 150 /* more than the list the summary once kept */

static ct_store *s;

static void setup(void)
{
    s = ct_store_new(999);
    cr_assert_not_null(s);
    cr_assert_eq(ct_store_alloc(s, A, SIZE, 1), CT_OK);
    cr_assert_eq(ct_store_alloc(s, B, SIZE, 2), CT_OK);
}

static void teardown(void)
{
    ct_store_free(s);
}

TestSuite(summary, .init = setup, .fini = teardown, .timeout = 60);

static ct_failure_id taint(uint64_t addr, uint64_t len)
{
    ct_failure_desc d = {.error = ERR, .api = "cuLaunchKernel"};
    ct_range w = {addr, len};
    return ct_taint(s, &d, &w, 1, NULL);
}

static ct_failure_id read_of(uint64_t addr, uint64_t len)
{
    ct_range r = {addr, len};
    return ct_read_failure(s, &r, 1, NULL);
}

Test(summary, ranges_around_a_hull)
{
    ct_failure_id id = taint(A + 64, 64);
    cr_assert_neq(id, 0);
    cr_expect_eq(read_of(A, 64), 0, "ends where the claim begins");
    cr_expect_eq(read_of(A, 65), id, "ends on its first byte");
    cr_expect_eq(read_of(A + 127, 1), id, "its last byte");
    cr_expect_eq(read_of(A + 128, CT_TO_END), 0, "starts where it ends");
    cr_expect_eq(read_of(A, CT_TO_END), id, "to the end, from before it");
    cr_expect_eq(read_of(A + 100, CT_TO_END), id, "to the end, from inside it");
    cr_expect_eq(read_of(B, CT_TO_END), 0, "another allocation");
    cr_expect_eq(read_of(A - 16, CT_TO_END), 0, "outside every allocation (clipped to none)");
    /* Gaps inside the hull are the store's to answer, exactly. */
    ct_failure_id second = taint(A + 1024, 16);
    cr_expect_eq(read_of(A + 512, 64), 0, "between two claims");
    cr_expect_eq(read_of(A + 1000, 100), second);
    ct_range r = {A + 64, 64};
    ct_written(s, &r, 1);
    cr_expect_eq(read_of(A, 1024), 0, "the hull shrank to the second claim");
    cr_expect_eq(read_of(A, CT_TO_END), second);
}

Test(summary, several_ranges_at_once)
{
    ct_failure_id id = taint(B + 8, 8);
    ct_range r[3] = {{A, CT_TO_END}, {B + 16, 100}, {B, 9}};
    cr_expect_eq(ct_read_failure(s, r, 2, NULL), 0);
    cr_expect_eq(ct_read_failure(s, r, 3, NULL), id, "only the third reaches the claim");
}

Test(summary, an_allocation_that_goes_takes_its_entry)
{
    taint(A, 16);
    cr_assert_eq(ct_store_free_alloc(s, A), CT_OK);
    cr_assert_eq(ct_store_alloc(s, A, SIZE, 1), CT_OK);
    cr_expect_eq(read_of(A, CT_TO_END), 0, "a new allocation at a freed one's address");
    cr_expect(!ct_store_tainted(s));

    ct_failure_id id = taint(B + 32, 16);
    cr_assert_eq(ct_store_alloc(s, B + 16, 64, 3), CT_OK); /* replaces B: a missed free */
    cr_expect_eq(read_of(B + 16, CT_TO_END), 0, "the replacement carries nothing");
    cr_expect(!ct_failure_get(s, id, NULL));

    id = taint(A + 8, 8);
    cr_assert_neq(id, 0);
    cr_expect_eq(ct_store_forget_owner(s, 1), 1);
    cr_assert_eq(ct_store_alloc(s, A, SIZE, 4), CT_OK);
    cr_expect_eq(read_of(A, CT_TO_END), 0, "its owner's end took it");
}

Test(summary, many_tainted_allocations)
{
    ct_failure_id id[MANY];
    for (unsigned i = 0; i < MANY; i++) {
        cr_assert_eq(ct_store_alloc(s, 0x10000000u + i * SIZE, SIZE, 5), CT_OK);
        id[i] = taint(0x10000000u + i * SIZE + i, 1);
    }
    for (unsigned i = 0; i < MANY; i++) {
        cr_expect_eq(read_of(0x10000000u + i * SIZE, CT_TO_END), id[i], "allocation %u", i);
        cr_expect_eq(read_of(0x10000000u + i * SIZE + i + 1, CT_TO_END), 0, "past %u's claim", i);
    }
    /* Down to one: the filter counts exactly what is left again. */
    for (unsigned i = 1; i < MANY; i++) {
        ct_range w = {0x10000000u + i * SIZE, SIZE};
        ct_written(s, &w, 1);
    }
    cr_expect_eq(read_of(0x10000000u, CT_TO_END), id[0]);
    cr_expect_eq(read_of(0x10000000u + SIZE, CT_TO_END), 0);
    cr_expect_eq(ct_store_forget_owner(s, 5), MANY);
    cr_expect(!ct_store_tainted(s));
    ct_failure_id again = taint(A, 1);
    cr_expect_eq(read_of(A, 1), again, "counted again after the last claim went");
    cr_expect_eq(read_of(B, 1), 0);
}

static bool summary_clean(uint64_t addr)
{
    ct_range r = {addr, CT_TO_END};
    return ct_summary_clean(ct_store_summary(s), &r, 1);
}

/* From the first claim the filter answers without the store for what it
 * does not count - a clean allocation - and never for what it does: a
 * tainted one from its base to its hull's end, in fine granules or, for a
 * long span, coarse ones. */
Test(summary, its_filter_answers_from_the_first_claim)
{
    const ct_summary *sm = ct_store_summary(s);
    cr_expect_null(atomic_load(&sm->filter), "an untainted store has no filter");
    cr_expect(summary_clean(A), "nothing tainted: clean without a filter");
    taint(A + 8, 8);
    cr_expect_not_null(atomic_load(&sm->filter), "made at the first claim");
    cr_expect(summary_clean(B), "one tainted allocation: another is the filter's");
    cr_expect(!summary_clean(A), "the tainted one is the store's");
    ct_range all = {A, SIZE};
    ct_written(s, &all, 1);
    cr_expect(summary_clean(A), "released: no longer counted");
}

Test(summary, past_a_few_claims_its_filter_answers)
{
    const uint64_t big = 0x400000000ull, big_size = 64u << 20;
    cr_assert_eq(ct_store_alloc(s, big, big_size, 5), CT_OK);
    ct_failure_id at_end = taint(big + big_size - 16, 16);
    for (unsigned i = 0; i < MANY; i++) {
        cr_assert_eq(ct_store_alloc(s, 0x10000000u + i * SIZE, SIZE, 5), CT_OK);
        taint(0x10000000u + i * SIZE + i, 1);
    }
    cr_expect(summary_clean(B), "a clean allocation, answered by the filter");
    cr_expect(!summary_clean(0x10000000u + 7 * SIZE), "a tainted one is the store's");
    cr_expect(!summary_clean(big), "a long span, counted in coarse granules");
    cr_expect_eq(read_of(big, CT_TO_END), at_end);
    ct_range all = {big, big_size};
    ct_written(s, &all, 1);
    cr_expect(summary_clean(big), "released: no longer counted");
    cr_expect_eq(read_of(big, CT_TO_END), 0);
}

/* Allocations 16 GiB apart share a fine slot: 300 of them saturate it.
 * It then answers "ask the store" (exact) for all of them, and once the
 * last claim goes the filter starts empty again. */
Test(summary, a_saturated_slot_stays_until_the_last_claim_goes)
{
    const uint64_t apart = (uint64_t)CT_FILTER_FINE_SLOTS << CT_FILTER_FINE_SHIFT, first = 0x1000000000ull;
    enum { ALIASED = 300 };
    for (unsigned i = 0; i < ALIASED; i++) {
        cr_assert_eq(ct_store_alloc(s, first + i * apart, SIZE, 6), CT_OK);
        taint(first + i * apart, 1);
    }
    for (unsigned i = 1; i < ALIASED; i++) {
        ct_range w = {first + i * apart, SIZE};
        ct_written(s, &w, 1);
    }
    cr_expect_neq(read_of(first, CT_TO_END), 0, "the one left is found");
    cr_expect_eq(read_of(first + apart, CT_TO_END), 0, "the released ones are clean");
    cr_expect(!summary_clean(first + apart), "a saturated slot still asks the store");
    cr_expect_eq(ct_store_forget_owner(s, 6), ALIASED);
    for (unsigned i = 0; i < MANY; i++) {
        cr_assert_eq(ct_store_alloc(s, 0x10000000u + i * SIZE, SIZE, 5), CT_OK);
        taint(0x10000000u + i * SIZE, 1);
    }
    cr_assert_eq(ct_store_alloc(s, first + apart, SIZE, 6), CT_OK);
    cr_expect(summary_clean(first + apart), "the next claims start with an empty filter");
}

/* A reader that has seen a taint land (through its own flag) sees it. */
static atomic_uint landed, looked;
static ct_failure_id seen[2000];

static void *reader(void *arg)
{
    (void)arg;
    for (unsigned turn = 1; turn <= 2000; turn++) {
        while (atomic_load_explicit(&landed, memory_order_acquire) < turn)
            ;
        seen[turn - 1] = read_of(A + turn % SIZE, 1);
        atomic_store_explicit(&looked, turn, memory_order_release);
    }
    return NULL;
}

Test(summary, a_taint_another_thread_saw_land_is_never_missed)
{
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, reader, NULL), 0);
    for (unsigned turn = 1; turn <= 2000; turn++) {
        ct_range all = {A, SIZE};
        ct_written(s, &all, 1);
        taint(B + turn % SIZE, 1); /* the summary moves elsewhere too */
        taint(A + turn % SIZE, 1);
        atomic_store_explicit(&landed, turn, memory_order_release);
        while (atomic_load_explicit(&looked, memory_order_acquire) < turn)
            ;
    }
    pthread_join(t, NULL);
    for (unsigned i = 0; i < 2000; i++)
        cr_expect_neq(seen[i], 0, "turn %u", i + 1);
}

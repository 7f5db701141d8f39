/*
 * test_lifetimes.c - driver handles' lifetimes (core/lifetimes.h): a birth
 * always starts a new id, an end forgets only the id taken before it and
 * only when the driver ended it, a handle born again while an end is in
 * flight keeps its new id, and ids are never given twice, across threads.
 */
#include <criterion/criterion.h>

#include <pthread.h>

#include "lifetimes.h"

#define X 0x1000u
#define Y 0x2000u

static ct_lifetimes *l;
static _Thread_local uint64_t replaced; /* what the last birth on this thread replaced */

static void setup(void)
{
    l = ct_lifetimes_new();
    cr_assert_not_null(l);
}

static void teardown(void)
{
    ct_lifetimes_free(l);
}

TestSuite(lifetimes, .init = setup, .fini = teardown);

Test(lifetimes, a_birth_starts_a_new_tagged_id)
{
    uint64_t a = ct_lifetime_born(l, X, &replaced), b = ct_lifetime_born(l, X, &replaced),
             c = ct_lifetime_born(l, Y, &replaced);
    cr_expect(a && b && c);
    cr_expect(a != b && b != c && a != c, "ids %llx %llx %llx", (unsigned long long)a, (unsigned long long)b,
              (unsigned long long)c);
    cr_expect(a & CT_LIFETIME_TAG);
    cr_expect_eq(a >> 63, 0, "bit 63 is the allocation map's");
    cr_expect_eq(ct_lifetime_of(l, X), b, "the latest birth is the current lifetime");
    cr_expect_eq(ct_lifetime_born(l, X, &replaced), ct_lifetime_find(l, X));
    cr_expect_eq(replaced, b, "a birth names the lifetime it ended");
    ct_lifetime_born(l, 0x3000, &replaced);
    cr_expect_eq(replaced, 0, "a new handle replaced nothing");
    cr_expect_eq(ct_lifetimes_count(l), 3);
    cr_expect_eq(ct_lifetime_born(l, 0, &replaced), 0, "handle 0 has no lifetime");
}

Test(lifetimes, first_sight_starts_one_and_find_never_does)
{
    cr_expect_eq(ct_lifetime_find(l, X), 0);
    cr_expect_eq(ct_lifetimes_count(l), 0, "find starts nothing");
    uint64_t a = ct_lifetime_of(l, X);
    cr_expect_neq(a, 0);
    cr_expect_eq(ct_lifetime_of(l, X), a);
    cr_expect_eq(ct_lifetime_find(l, X), a);
}

Test(lifetimes, an_end_the_driver_refused_keeps_the_lifetime)
{
    uint64_t a = ct_lifetime_born(l, X, &replaced);
    uint64_t ending = ct_lifetime_ending(l, X);
    cr_expect_eq(ending, a);
    ct_lifetime_ended(l, X, ending, false);
    cr_expect_eq(ct_lifetime_find(l, X), a, "a refused destroy ends nothing");
    cr_expect_eq(ct_lifetime_retained(l, X), a, "no end in flight: a retain names the same lifetime");
}

Test(lifetimes, an_end_removes_the_handle)
{
    uint64_t a = ct_lifetime_born(l, X, &replaced);
    ct_lifetime_ended(l, X, ct_lifetime_ending(l, X), true);
    cr_expect_eq(ct_lifetime_find(l, X), 0);
    uint64_t b = ct_lifetime_of(l, X);
    cr_expect(b && b != a, "the handle seen again is a new lifetime");
}

Test(lifetimes, an_unknown_handle_ends_nothing)
{
    uint64_t ending = ct_lifetime_ending(l, X);
    cr_expect_eq(ending, 0);
    ct_lifetime_ended(l, X, ending, true);
    cr_expect_eq(ct_lifetimes_count(l), 0, "a bogus destroy leaves no entry behind");
}

/* The race of issue 40: thread A destroys X, the driver hands X to thread B's
 * create, B files under its id, then A's forget runs. */
Test(lifetimes, a_birth_during_an_end_survives_it)
{
    uint64_t old = ct_lifetime_born(l, X, &replaced);
    uint64_t ending = ct_lifetime_ending(l, X);
    uint64_t fresh = ct_lifetime_born(l, X, &replaced);
    cr_expect_neq(fresh, old);
    cr_expect_eq(replaced, old, "B's create says A's lifetime ended: the driver handed the handle out again");
    ct_lifetime_ended(l, X, ending, true);
    cr_expect_eq(ending, old, "A forgets what it took before its call");
    cr_expect_eq(ct_lifetime_find(l, X), fresh, "B's lifetime outlives A's late end");
}

/* A primary context made again by a retain while another thread's release
 * of the same handle is in flight: a new lifetime, never the old id. */
Test(lifetimes, a_retain_during_an_end_starts_a_new_lifetime)
{
    uint64_t old = ct_lifetime_of(l, X);
    uint64_t ending = ct_lifetime_ending(l, X);
    uint64_t retained = ct_lifetime_retained(l, X);
    cr_expect(retained && retained != old);
    ct_lifetime_ended(l, X, ending, true);
    cr_expect_eq(ct_lifetime_find(l, X), retained);
    cr_expect_eq(ct_lifetime_retained(l, Y), ct_lifetime_find(l, Y), "an unknown handle retained starts one");
}

Test(lifetimes, two_ends_in_flight_of_one_lifetime)
{
    uint64_t a = ct_lifetime_born(l, X, &replaced);
    uint64_t first = ct_lifetime_ending(l, X), second = ct_lifetime_ending(l, X);
    ct_lifetime_ended(l, X, first, false);
    cr_expect_neq(ct_lifetime_retained(l, X), a, "one end still in flight: ambiguous");
    ct_lifetime_ended(l, X, second, true);
}

#define THREADS 8
#define ROUNDS 2000

static void *churn(void *arg)
{
    uint64_t *ids = arg, handle = 0x1000 + (uint64_t)(ids[0] % 4) * 0x1000;
    for (int i = 0; i < ROUNDS; i++) {
        ids[i] = ct_lifetime_born(l, handle, &replaced);
        ct_lifetime_ended(l, handle, ct_lifetime_ending(l, handle), true);
    }
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

Test(lifetimes, ids_are_never_given_twice_across_threads)
{
    static uint64_t ids[THREADS][ROUNDS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ids[i][0] = (uint64_t)i;
        pthread_create(&t[i], NULL, churn, ids[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    uint64_t *all = &ids[0][0];
    qsort(all, THREADS * ROUNDS, sizeof *all, by_value);
    size_t twice = 0, none = 0;
    for (size_t i = 0; i < THREADS * ROUNDS; i++) {
        none += all[i] == 0;
        twice += i > 0 && all[i] == all[i - 1];
    }
    cr_expect_eq(none, 0, "%zu births without an id", none);
    cr_expect_eq(twice, 0, "%zu ids given twice", twice);
    cr_expect_leq(ct_lifetimes_count(l), 4);
}

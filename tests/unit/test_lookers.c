/* The store's lock: a writer excludes everyone, lookers share it, and a
 * writer waiting for lookers to leave holds back lookers that come after. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "lookers.h"

#define THREADS 4
#define ROUNDS 20000
#define PATIENCE_NS 5000000000LL

static ct_lookers lock;

static void setup(void) { ct_lookers_init(&lock); }
static void teardown(void) { ct_lookers_destroy(&lock); }

TestSuite(lookers, .init = setup, .fini = teardown, .timeout = 60);

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Spins until *flag is set; false after PATIENCE_NS. */
static bool wait_for(atomic_int *flag)
{
    long long give_up = now_ns() + PATIENCE_NS;
    while (!atomic_load(flag))
        if (now_ns() > give_up)
            return false;
    return true;
}

/* ---- exclusion under load ---------------------------------------------- */

/* Written only under the write lock, in two steps a looker must never see
 * between; plain ints, so a sanitizer sees any unprotected access too. */
static long first, second;
static atomic_long torn_views, looks, writes;

static void *mixed_worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % 8 == 0) {
            ct_lock_to_write(&lock);
            first++;
            for (volatile int spin = 0; spin < 20; spin++)
                ;
            second++;
            ct_unlock_write(&lock);
            atomic_fetch_add(&writes, 1);
        } else {
            ct_lock_to_look(&lock);
            if (first != second)
                atomic_fetch_add(&torn_views, 1);
            ct_unlock_look(&lock);
            atomic_fetch_add(&looks, 1);
        }
    }
    return NULL;
}

Test(lookers, lookers_never_see_a_write_half_done)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, mixed_worker, (void *)(uintptr_t)(i + 1)), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    cr_assert_eq(atomic_load(&torn_views), 0);
    cr_assert_eq(first, atomic_load(&writes), "every write counted once: %ld of %ld", first,
                 atomic_load(&writes));
    cr_assert_eq(first, second);
    cr_assert_gt(atomic_load(&looks), 0);
}

/* ---- lookers share --------------------------------------------------- */

static atomic_int second_in;

static void *second_looker(void *arg)
{
    (void)arg;
    ct_lock_to_look(&lock);
    atomic_store(&second_in, 1);
    ct_unlock_look(&lock);
    return NULL;
}

Test(lookers, a_second_looker_gets_in_while_the_first_looks)
{
    ct_lock_to_look(&lock);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, second_looker, NULL), 0);
    bool shared = wait_for(&second_in);
    ct_unlock_look(&lock);
    pthread_join(t, NULL);
    cr_assert(shared, "the second looker waited for the first");
}

/* ---- writer preference ------------------------------------------------- */

static atomic_int order, writer_turn, late_looker_turn, late_started;

static void *writer(void *arg)
{
    (void)arg;
    ct_lock_to_write(&lock);
    atomic_store(&writer_turn, atomic_fetch_add(&order, 1) + 1);
    ct_unlock_write(&lock);
    return NULL;
}

static void *late_looker(void *arg)
{
    (void)arg;
    atomic_store(&late_started, 1);
    ct_lock_to_look(&lock);
    atomic_store(&late_looker_turn, atomic_fetch_add(&order, 1) + 1);
    ct_unlock_look(&lock);
    return NULL;
}

Test(lookers, a_waiting_writer_goes_before_lookers_that_come_after_it)
{
    ct_lock_to_look(&lock);
    pthread_t w, l;
    cr_assert_eq(pthread_create(&w, NULL, writer, NULL), 0);
    cr_assert(wait_for(&lock.writing), "the writer announced itself");
    cr_assert_eq(pthread_create(&l, NULL, late_looker, NULL), 0);
    cr_assert(wait_for(&late_started));
    struct timespec pause = {0, 20 * 1000 * 1000}; /* the late looker reaches the lock */
    nanosleep(&pause, NULL);
    cr_expect_eq(atomic_load(&writer_turn), 0, "the writer got in beside a looker");
    cr_expect_eq(atomic_load(&late_looker_turn), 0, "a late looker passed the waiting writer");
    ct_unlock_look(&lock);
    pthread_join(w, NULL);
    pthread_join(l, NULL);
    cr_assert_eq(atomic_load(&writer_turn), 1);
    cr_assert_eq(atomic_load(&late_looker_turn), 2);
}

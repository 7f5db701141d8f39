/* The store's lock (core/rwlock.h): a writer alone, readers together,
 * writers first, and every waiter woken (a lost wake-up hangs the test,
 * which its timeout turns red). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "rwlock.h"

static ct_rwlock lock;
/* Changed by writers only, both together: a reader seeing them differ saw
 * a writer at work. */
static volatile unsigned long left, right;
static atomic_bool torn;
static atomic_int readers_inside, most_readers_inside;

#define ROUNDS 20000

static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        ct_rwlock_wrlock(&lock);
        left = left + 1;
        sched_yield();
        right = right + 1;
        ct_rwlock_wrunlock(&lock);
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        ct_rwlock_rdlock(&lock);
        int inside = atomic_fetch_add(&readers_inside, 1) + 1;
        int most = atomic_load(&most_readers_inside);
        while (inside > most && !atomic_compare_exchange_weak(&most_readers_inside, &most, inside))
            ;
        if (left != right)
            atomic_store(&torn, true);
        if (i % 64 == 0)
            sched_yield();
        atomic_fetch_sub(&readers_inside, 1);
        ct_rwlock_rdunlock(&lock);
    }
    return NULL;
}

Test(rwlock, a_writer_holds_it_alone_and_every_waiter_is_woken, .timeout = 120)
{
    ct_rwlock_init(&lock);
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, i % 2 ? reader : writer, NULL), 0);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    cr_assert_eq(left, 4ul * ROUNDS, "every writer's change kept: %lu", left);
    cr_assert_eq(right, left);
    cr_assert_not(atomic_load(&torn), "a reader saw a writer at work");
    cr_assert_eq(atomic_load(&lock.word), 0, "released, nobody marked as waiting");
}

static atomic_int order; /* who got in, in turn */
static atomic_int writer_turn, late_reader_turn;

static void *waiting_writer(void *arg)
{
    (void)arg;
    ct_rwlock_wrlock(&lock);
    atomic_store(&writer_turn, atomic_fetch_add(&order, 1) + 1);
    ct_rwlock_wrunlock(&lock);
    return NULL;
}

static atomic_bool late_reader_asking;

static void *late_reader(void *arg)
{
    (void)arg;
    atomic_store(&late_reader_asking, true);
    ct_rwlock_rdlock(&lock);
    atomic_store(&late_reader_turn, atomic_fetch_add(&order, 1) + 1);
    ct_rwlock_rdunlock(&lock);
    return NULL;
}

/* A reader arriving while a writer waits for the readers inside waits
 * behind the writer: a stream of checks cannot starve a change. */
Test(rwlock, a_reader_arriving_while_a_writer_waits_goes_after_it)
{
    ct_rwlock_init(&lock);
    ct_rwlock_rdlock(&lock);
    pthread_t w, r;
    cr_assert_eq(pthread_create(&w, NULL, waiting_writer, NULL), 0);
    while (!(atomic_load(&lock.word) & CT_RWLOCK_WANTED))
        sched_yield();
    cr_assert_eq(pthread_create(&r, NULL, late_reader, NULL), 0);
    while (!atomic_load(&late_reader_asking))
        sched_yield();
    usleep(20000); /* every chance to get in ahead of the writer */
    ct_rwlock_rdunlock(&lock);
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    cr_assert_eq(atomic_load(&writer_turn), 1, "the waiting writer went first");
    cr_assert_eq(atomic_load(&late_reader_turn), 2, "the late reader after it");
    cr_assert_eq(atomic_load(&lock.word), 0);
}

Test(rwlock, readers_share_it)
{
    ct_rwlock_init(&lock);
    ct_rwlock_rdlock(&lock);
    ct_rwlock_rdlock(&lock);
    cr_assert_eq(atomic_load(&lock.word) & CT_RWLOCK_READERS, 2);
    ct_rwlock_rdunlock(&lock);
    ct_rwlock_rdunlock(&lock);
    ct_rwlock_wrlock(&lock);
    cr_assert_eq(atomic_load(&lock.word), CT_RWLOCK_WRITER);
    ct_rwlock_wrunlock(&lock);
    cr_assert_eq(atomic_load(&lock.word), 0);
}

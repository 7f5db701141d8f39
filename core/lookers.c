/*
 * lookers.c - the store's lock: shared to look, exclusive to change (see
 * lookers.h).
 *
 * A writer announces itself (`writing`), then waits for the lookers inside
 * to leave; a looker counts itself in (`looking`), then checks for a
 * writer, and if there is one counts itself out and waits on the writer's
 * mutex.  Each side writes its flag before reading the other's, all in
 * sequentially consistent order, so at least one of them sees the other:
 * a writer and a looker are never inside together.
 */
#include "lookers.h"

#include <sched.h>

/* Spins of a writer waiting for lookers before it yields the CPU: a looker
 * preempted inside would otherwise cost the writer its whole time slice. */
#define SPINS_BEFORE_YIELD 100

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

void ct_lookers_init(ct_lookers *l)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&l->writer, &a);
    pthread_mutexattr_destroy(&a);
    atomic_init(&l->writing, 0);
    atomic_init(&l->looking, 0);
}

void ct_lookers_destroy(ct_lookers *l)
{
    pthread_mutex_destroy(&l->writer);
}

void ct_lock_to_write(ct_lookers *l)
{
    pthread_mutex_lock(&l->writer);
    atomic_store(&l->writing, 1);
    for (unsigned spins = 0; atomic_load(&l->looking) != 0; spins++) {
        if (spins < SPINS_BEFORE_YIELD)
            cpu_relax();
        else
            sched_yield();
    }
}

void ct_unlock_write(ct_lookers *l)
{
    atomic_store_explicit(&l->writing, 0, memory_order_release);
    pthread_mutex_unlock(&l->writer);
}

void ct_lock_to_look(ct_lookers *l)
{
    for (;;) {
        atomic_fetch_add(&l->looking, 1);
        if (!atomic_load(&l->writing))
            return;
        atomic_fetch_sub_explicit(&l->looking, 1, memory_order_release);
        /* The writer holds its mutex until it is done: waiting for the
         * mutex is waiting for the writer, spinning first, then asleep. */
        pthread_mutex_lock(&l->writer);
        pthread_mutex_unlock(&l->writer);
    }
}

void ct_unlock_look(ct_lookers *l)
{
    atomic_fetch_sub_explicit(&l->looking, 1, memory_order_release);
}

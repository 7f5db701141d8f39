/*
 * rwlock.c - the store's lock when it is contended (see rwlock.h): waiting
 * on the word with a futex, and waking the waiters.
 *
 * Owns nothing but the protocol; its invariants are rwlock.h's.  A waiter
 * loops: take the lock if the word lets it, else mark the word (SLEEPERS,
 * and WANTED for a writer) and sleep while it stays as marked.
 */
#include "rwlock.h"

#include <assert.h>
#include <limits.h>
#include <stdbool.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void ct_rwlock_init(ct_rwlock *l)
{
    atomic_init(&l->word, 0);
    atomic_init(&l->writers_waiting, 0);
}

/* Sleep while the word is `seen` (at once back if it changed meanwhile). */
static void sleep_on(ct_rwlock *l, unsigned seen)
{
    syscall(SYS_futex, (unsigned *)&l->word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

void ct_rwlock_wake(ct_rwlock *l)
{
    atomic_fetch_and_explicit(&l->word, ~CT_RWLOCK_SLEEPERS, memory_order_relaxed);
    syscall(SYS_futex, (unsigned *)&l->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* The word marked as a waiter's (bits added), or false when it changed
 * first and the waiter must look again. */
static bool mark(ct_rwlock *l, unsigned *w, unsigned bits)
{
    unsigned marked = *w | bits;
    if (marked != *w &&
        !atomic_compare_exchange_strong_explicit(&l->word, w, marked, memory_order_relaxed, memory_order_relaxed))
        return false;
    *w = marked;
    return true;
}

void ct_rwlock_wrlock_slow(ct_rwlock *l)
{
    atomic_fetch_add_explicit(&l->writers_waiting, 1, memory_order_relaxed);
    for (;;) {
        unsigned w = atomic_load_explicit(&l->word, memory_order_relaxed);
        if (!(w & (CT_RWLOCK_WRITER | CT_RWLOCK_READERS))) {
            /* Free: take it, keeping readers out while other writers wait
             * (each waiting writer marks WANTED again when it looks). */
            bool others = atomic_load_explicit(&l->writers_waiting, memory_order_relaxed) > 1;
            unsigned taken = (w & CT_RWLOCK_SLEEPERS) | CT_RWLOCK_WRITER | (others ? CT_RWLOCK_WANTED : 0);
            if (atomic_compare_exchange_strong_explicit(&l->word, &w, taken, memory_order_acquire,
                                                        memory_order_relaxed))
                break;
            continue;
        }
        if (mark(l, &w, CT_RWLOCK_WANTED | CT_RWLOCK_SLEEPERS))
            sleep_on(l, w);
    }
    atomic_fetch_sub_explicit(&l->writers_waiting, 1, memory_order_relaxed);
}

void ct_rwlock_rdlock_slow(ct_rwlock *l)
{
    for (;;) {
        unsigned w = atomic_load_explicit(&l->word, memory_order_relaxed);
        if (!(w & (CT_RWLOCK_WRITER | CT_RWLOCK_WANTED))) {
            assert((w & CT_RWLOCK_READERS) != CT_RWLOCK_READERS && "the readers' count fits its bits");
            if (atomic_compare_exchange_strong_explicit(&l->word, &w, w + 1, memory_order_acquire,
                                                        memory_order_relaxed))
                return;
            continue;
        }
        if (mark(l, &w, CT_RWLOCK_SLEEPERS))
            sleep_on(l, w);
    }
}

/*
 * rwlock.h - the store's lock: shared by checks that only look, alone by
 * whatever changes the store, preferring writers.  cutaint's own, not a
 * pthread rwlock: an uncontended take and release is one atomic
 * instruction each, inline (glibc's pthread_rwlock_wrlock and _unlock
 * cost 81 instructions a pair, which every allocation and free paid).
 *
 * Invariants:
 * - One word holds it all: the readers' count, WRITER while a writer holds
 *   it (then no reader does), WANTED while a writer waits (readers arriving
 *   then wait too: writers first, so a stream of checks cannot starve a
 *   change), SLEEPERS while someone may sleep on the word.
 * - Every change of the word is an atomic operation on it (C11 atomics,
 *   which ThreadSanitizer follows): a take is an acquire, a release a
 *   release; nothing else is shared.
 * - No lost wake-up: a waiter sets SLEEPERS in the word it then sleeps on
 *   (futex: it sleeps only while the word is still what it saw), and
 *   whoever releases a word with SLEEPERS clears it and wakes every
 *   sleeper, which looks again.
 * - WANTED is set only by a writer about to wait, and is left set only
 *   while some writer is still waiting (ct_rwlock_wrlock_slow), so readers
 *   never wait on a writer that is not there.
 * - Not recursive: a thread holding it must not take it again.
 */
#ifndef CT_RWLOCK_H
#define CT_RWLOCK_H

#include <stdatomic.h>

typedef struct ct_rwlock {
    atomic_uint word;
    atomic_uint writers_waiting; /* writers in ct_rwlock_wrlock_slow */
} ct_rwlock;

#define CT_RWLOCK_WRITER 0x40000000u
#define CT_RWLOCK_WANTED 0x20000000u
#define CT_RWLOCK_SLEEPERS 0x80000000u
#define CT_RWLOCK_READERS 0x1fffffffu

/* Unheld, nobody waiting (also after fork, in the child: whoever held or
 * waited for it there is gone). */
void ct_rwlock_init(ct_rwlock *l);

void ct_rwlock_wrlock_slow(ct_rwlock *l);
void ct_rwlock_rdlock_slow(ct_rwlock *l);
void ct_rwlock_wake(ct_rwlock *l);

static inline void ct_rwlock_wrlock(ct_rwlock *l)
{
    unsigned free_word = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->word, &free_word, CT_RWLOCK_WRITER, memory_order_acquire,
                                                 memory_order_relaxed))
        ct_rwlock_wrlock_slow(l);
}

static inline void ct_rwlock_wrunlock(ct_rwlock *l)
{
    /* Nobody reads while a writer holds it: only WANTED and SLEEPERS may
     * have joined WRITER, and both end here (waiters look again). */
    if (atomic_exchange_explicit(&l->word, 0, memory_order_release) & CT_RWLOCK_SLEEPERS)
        ct_rwlock_wake(l);
}

static inline void ct_rwlock_rdlock(ct_rwlock *l)
{
    unsigned w = atomic_load_explicit(&l->word, memory_order_relaxed);
    if ((w & (CT_RWLOCK_WRITER | CT_RWLOCK_WANTED)) ||
        !atomic_compare_exchange_strong_explicit(&l->word, &w, w + 1, memory_order_acquire, memory_order_relaxed))
        ct_rwlock_rdlock_slow(l);
}

static inline void ct_rwlock_rdunlock(ct_rwlock *l)
{
    unsigned w = atomic_fetch_sub_explicit(&l->word, 1, memory_order_release);
    if ((w & CT_RWLOCK_READERS) == 1 && (w & CT_RWLOCK_SLEEPERS))
        ct_rwlock_wake(l);
}

#endif

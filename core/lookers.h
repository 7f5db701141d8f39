/*
 * lookers.h - private to core: the store's lock, which many threads may
 * hold at once to look and one thread holds alone to change.
 *
 * Owns: nothing but the lock.  Unlike pthread's rwlock, a writer that finds
 * the lock busy spins briefly before it sleeps (the store's critical
 * sections last about a hundred nanoseconds, far less than a futex sleep
 * and wake-up), and lookers cost two atomic operations.
 *
 * Invariants:
 * - A writer excludes every other holder; lookers exclude writers only.
 * - Writers are preferred: once a writer has announced itself, new lookers
 *   wait for it, so a stream of lookers cannot starve a writer.
 * - Not reentrant, and a looker may not become a writer while it looks.
 */
#ifndef CT_LOOKERS_H
#define CT_LOOKERS_H

#include <pthread.h>
#include <stdatomic.h>

/* The counters every holder writes have a cache line of their own (the
 * struct is 64-aligned, and so a multiple of 64 bytes long), so lookers do
 * not keep taking from each other the line the data they look at is on.
 * Its owner must come from aligned_alloc (or be static). */
typedef struct ct_lookers {
    pthread_mutex_t writer;          /* adaptive: held by the one writer */
    _Alignas(64) atomic_int writing; /* a writer holds `writer`, or waits for lookers to leave */
    atomic_int looking;              /* lookers inside, or about to find out they must wait */
} ct_lookers;

void ct_lookers_init(ct_lookers *l);
void ct_lookers_destroy(ct_lookers *l);
void ct_lock_to_write(ct_lookers *l);
void ct_unlock_write(ct_lookers *l);
void ct_lock_to_look(ct_lookers *l);
void ct_unlock_look(ct_lookers *l);

#endif

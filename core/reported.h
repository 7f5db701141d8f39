/*
 * reported.h - results a library reports on the device, waiting for the
 * program's next synchronous read: a cuSOLVER call's devInfo, recorded
 * with the outputs it vouches for (shim/libcalls.def, CT_INFO).  Reading
 * devInfo at the call would add a synchronisation; at a synchronous read of
 * one of its outputs (or of devInfo) the program has synchronised anyway,
 * and the shim reads it then (ct_reported_take) and asks core's
 * ct_lib_info_failed whether the outputs were computed.
 *
 * Invariants:
 * - At most CT_REPORTED_MAX results wait; one more displaces the oldest
 *   (its outputs are then not checked, as after an asynchronous read).  A result whose devInfo is the same address as a waiting one's
 *   replaces it: the later call's devInfo is the one that address holds
 *   (batches, with no devInfo, never replace one another).
 * - A result is handed out once (taken), or forgotten when an allocation it
 *   names is freed: its devInfo would then be read from memory no longer
 *   the call's.
 * - While none waits, ct_reported_waiting is one atomic load; all else is
 *   under one mutex, and no callback runs under it.
 */
#ifndef CT_REPORTED_H
#define CT_REPORTED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rules.h"
#include "taint.h"

#define CT_REPORTED_MAX 64
#define CT_REPORTED_RANGES 8

/* A *Batched call's device arrays of batch device pointers (A, B, C), and
 * the bytes of one matrix of each: resolved at the next synchronous read
 * (any: where its matrices lie is in the arrays), only when the call
 * failed (C's matrices take its failure) or something was tainted at the
 * call (C's matrices take what A's, B's or C's carry, else are released). */
typedef struct ct_reported_batch {
    uint64_t arrays[3];
    uint64_t bytes[3];
    int64_t count;
    bool c_read;    /* beta may be nonzero: C's matrices are inputs too */
    int status;     /* what the call returned */
    bool succeeded; /* status was the library's success */
} ct_reported_batch;

typedef struct ct_reported {
    const char *api;       /* the call that reported it (a string literal) */
    int library;           /* the caller's number for its library (core does not read it) */
    ct_lib_info_kind kind; /* what a nonzero devInfo says of the outputs */
    ct_range info;         /* devInfo: its device address and bytes; none (0 bytes) for a batch */
    unsigned n_out;        /* the outputs devInfo vouches for (devInfo not among them); a
                            * batch: one range over all memory (any read resolves it) */
    ct_range out[CT_REPORTED_RANGES];
    ct_reported_batch batch; /* a *Batched call's (info none) */
    /* The allocations it names (0: none known): a free of one drops it. */
    unsigned n_bases;
    uint64_t bases[CT_REPORTED_RANGES + 1];
} ct_reported;

typedef struct ct_reported_set ct_reported_set;
/* A set's first member: how many results wait, looked at inline by every
 * synchronous read (ct_reported_waiting). */
typedef struct ct_reported_head {
    atomic_uint waiting;
} ct_reported_head;

ct_reported_set *ct_reported_new(void);
void ct_reported_free(ct_reported_set *s);
/* In a fork child: the lock is usable again. */
void ct_reported_atfork_child(ct_reported_set *s);
/* How many results wait: while 0, a read has nothing to check. */
static inline unsigned ct_reported_waiting(const ct_reported_set *s)
{
    const ct_reported_head *head = (const ct_reported_head *)(const void *)s;
    return head ? atomic_load_explicit(&head->waiting, memory_order_acquire) : 0;
}
/* Record r (copied); replaces a waiting result with the same devInfo. */
void ct_reported_add(ct_reported_set *s, const ct_reported *r);
/* A waiting result whose devInfo or outputs overlap read: removed and
 * copied to *out; false when none does.  Called in a loop, it hands out
 * each such result once. */
bool ct_reported_take(ct_reported_set *s, const ct_range *read, ct_reported *out);
/* The allocation at base is freed: the results naming it are dropped. */
void ct_reported_forget(ct_reported_set *s, uint64_t base);

#endif

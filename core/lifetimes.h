/*
 * lifetimes.h - the lifetimes of driver handles: the id cutaint keys what it
 * knows of a context, a module or library, a graph exec, an event or a
 * created stream by, one per lifetime of its handle, never given twice
 * (one table per kind of handle: RELIABILITY.md lists them).
 *
 * The driver hands a handle out again as soon as it destroyed what the
 * handle named, and a destroy's forgetting can only follow the driver's
 * answer (a destroy the driver refuses takes nothing).  By then another
 * thread may hold the same handle for a new context or module.  So what
 * belongs to a handle is filed under its lifetime id, taken before the
 * destroy (ct_lifetime_ending) and forgotten after it (ct_lifetime_ended),
 * and a new context or module behind the same handle has a new id.
 *
 * Invariants:
 * - An id is never given twice in a process and carries CT_LIFETIME_TAG,
 *   which no device address has: an id is never an allocation's base.
 * - A birth (create, load) always starts a new lifetime, and names the one
 *   it replaced, which has ended.  A handle first seen without its birth,
 *   in a call the driver accepted, starts one then.
 * - A handle whose end is in flight is ambiguous to a birth cutaint did not
 *   see: ct_lifetime_retained starts a new lifetime then.  A new id where
 *   the old was right leaves the old id's entries unforgotten (precision);
 *   the old id where a new was right would forget a live one's (soundness).
 * - ct_lifetime_ended removes the handle only while it still names the id
 *   that ended: a later birth of the same handle is kept.
 * - All of it under one mutex; no callback runs under it.
 */
#ifndef CT_LIFETIMES_H
#define CT_LIFETIMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bit 62: no user-space address sets it, and bit 63 is the allocation
 * map's own mark in an owner word (allocmap.c). */
#define CT_LIFETIME_TAG (1ULL << 62)

typedef struct ct_lifetimes ct_lifetimes;

/* NULL when out of memory. */
ct_lifetimes *ct_lifetimes_new(void);
void ct_lifetimes_free(ct_lifetimes *l);
/* In a fork child: the lock is usable again. */
void ct_lifetimes_atfork_child(ct_lifetimes *l);

/* handle was just created: a new lifetime, its id.  0 for handle 0, or when
 * out of memory (then nothing is filed under it).  *replaced: the lifetime
 * the handle had until now, 0 if none: the driver handed the handle out
 * again, so that one has ended, whether cutaint saw its end or not. */
uint64_t ct_lifetime_born(ct_lifetimes *l, uint64_t handle, uint64_t *replaced);
/* The id of handle's current lifetime; one is started at first sight (so
 * only for a handle the driver accepted: a bogus one would stay). */
uint64_t ct_lifetime_of(ct_lifetimes *l, uint64_t handle);
/* The same, 0 for a handle with no lifetime known. */
uint64_t ct_lifetime_find(ct_lifetimes *l, uint64_t handle);
/* handle was named by a call that may have created what it names (a primary
 * context's retain): its current lifetime, unless an end of it is in flight
 * or none is known, then a new one. */
uint64_t ct_lifetime_retained(ct_lifetimes *l, uint64_t handle);
/* Before a call that may end handle's lifetime: its id, the end marked in
 * flight until ct_lifetime_ended.  0 for a handle with no lifetime known:
 * nothing was filed under one, as filing takes an id from here. */
uint64_t ct_lifetime_ending(ct_lifetimes *l, uint64_t handle);
/* After that call: gone says whether the driver ended the lifetime id (the
 * caller then forgets what it filed under id; otherwise nothing). */
void ct_lifetime_ended(ct_lifetimes *l, uint64_t handle, uint64_t id, bool gone);
/* How many handles have a lifetime now (for tests and the bench). */
size_t ct_lifetimes_count(ct_lifetimes *l);

#endif

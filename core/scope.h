/*
 * scope.h - the calling thread's scope slot, and a write scope of one
 * range opened and settled in it inline, calling nothing: what every
 * host-to-device copy and memset pays (taint.c, "Scope slots", says why a
 * scope waits in a slot; ct_enter_write and ct_exit_write do everything
 * else, and the inline forms below hand them whatever is not the common
 * case).
 *
 * Owns: a slot's layout and states, the thread's own slot (ct_scope_own),
 * and the two steps every scope kept in a slot takes: publishing it
 * (ct_scope_publish) and, when its owner settles it alone, freeing it
 * (ct_scope_settle_alone).  taint.c uses the same two, so a scope opened
 * inline and one opened through ct_enter_write are the same to everyone.
 *
 * Invariants:
 * - Only a slot's owner moves it out of IDLE, BUSY and SHOWN; OPEN -> SHOWN
 *   (anyone, under the store's lock) and OPEN -> IDLE / BUSY (the owner, at
 *   exit) are compare-and-swaps, so exactly one of them wins.
 * - While a slot is OPEN the summary's open count counts it: publishing
 *   raises the count after the release store of OPEN, freeing lowers it
 *   after the slot is IDLE again, so a check that sees no open scope sees
 *   the scope's outcome.
 * - A slot's id is its index modulo CT_SCOPE_SLOTS, moving one turn on at
 *   each scope; slot ids lie in [CT_FIRST_PROVISIONAL_ID,
 *   CT_FIRST_LOCKED_SCOPE_ID), apart from every id a placed scope or a real
 *   failure gets, so an id equal to the own slot's names its latest scope.
 * - ct_scope_own.serial is 0 or the serial of the store its slot is in;
 *   stores' serials start at 1 (CT_SCOPE_NO_STORE is none's).
 */
#ifndef CT_SCOPE_H
#define CT_SCOPE_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "failures.h"
#include "hot_tls.h"
#include "rules.h"
#include "summary.h"
#include "taint.h"

#define CT_FIRST_PROVISIONAL_ID 0x80000000u
/* Provisional ids: [CT_FIRST_PROVISIONAL_ID, CT_FIRST_LOCKED_SCOPE_ID) name
 * the scopes held in slots (the slot is the id's remainder by
 * CT_SCOPE_SLOTS), the rest the scopes placed at once (too wide for a
 * slot, or no slot free). */
#define CT_FIRST_LOCKED_SCOPE_ID 0xc0000000u
#define CT_SLOT_SCOPE_IDS (CT_FIRST_LOCKED_SCOPE_ID - CT_FIRST_PROVISIONAL_ID)
#define CT_SCOPE_SLOTS 64            /* threads with a slot of their own; the rest place their scopes */
#define CT_SCOPE_RANGES 4            /* a slot holds this many ranges; more are placed at once */
#define CT_SCOPE_NO_STORE UINT64_MAX /* the gate's serial without a store: no thread's */

/* A write scope kept out of the store until someone looks.  A slot moves
 * UNOWNED -> IDLE when a thread takes it as its own (compare-and-swap, once
 * per thread) and back when that thread exits with it idle.  Its owner's
 * scopes move it IDLE -> OPEN (the owner filled it while idle, then
 * published it) -> IDLE (the owner settled it alone) or -> SHOWN (placed in
 * the store by whoever took the lock; the owner settles it under the lock)
 * -> IDLE. */
enum { CT_SLOT_UNOWNED, CT_SLOT_IDLE, CT_SLOT_BUSY, CT_SLOT_OPEN, CT_SLOT_SHOWN };
typedef struct ct_scope_slot {
    _Alignas(64) atomic_uint state;
    unsigned n;       /* the owner's, published by OPEN: */
    ct_failure_id id; /* the provisional id of its latest scope */
    ct_scope_desc desc;
    ct_range w[CT_SCOPE_RANGES];
} ct_scope_slot;

/* The calling thread's slot, and which store it is in: by serial, not
 * address, since a store freed and another made at its address is
 * another store. */
struct ct_scope_own {
    uint64_t serial;
    ct_scope_slot *slot;
};
extern CT_HOT_TLS struct ct_scope_own ct_scope_own;

/* What the inline scope needs of a store, kept by its caller: the store's
 * serial and its summary, and the store itself for the uncommon cases. */
typedef struct ct_scope_gate {
    uint64_t serial;
    ct_summary *summary;
    ct_store *store;
} ct_scope_gate;
/* s's gate, the same for its whole life; s NULL: {CT_SCOPE_NO_STORE},
 * which no thread's slot passes (ct_enter_write then, which does nothing). */
ct_scope_gate ct_store_scope_gate(ct_store *s);

/* Is the calling thread's own slot in the gate's store idle, as the rule
 * wants for a scope of n ranges?  False: it has none there, it holds a
 * scope, or n is too many (ct_enter_write then).  Its own slot is
 * ct_scope_own.slot. */
static inline bool ct_scope_own_idle(const ct_scope_gate *g, size_t n)
{
    if (ct_scope_own.serial != g->serial)
        return false;
    bool idle = atomic_load_explicit(&ct_scope_own.slot->state, memory_order_relaxed) == CT_SLOT_IDLE;
    return ct_scope_rule(n, CT_SCOPE_RANGES, idle) == CT_SCOPE_IN_OWN_SLOT;
}

/* A slot's next id: the same remainder by CT_SCOPE_SLOTS, one turn on,
 * wrapping inside the slots' ids. */
static inline ct_failure_id ct_scope_next_id(ct_failure_id id)
{
    return CT_FIRST_PROVISIONAL_ID | ((id + CT_SCOPE_SLOTS) & (CT_SLOT_SCOPE_IDS - 1));
}

/* The owner publishes its scope in its idle slot: plain stores, the
 * release store of OPEN, the open count raised.  Returns the scope's id. */
static inline ct_failure_id ct_scope_publish(ct_summary *sm, ct_scope_slot *sl, const ct_range *w, size_t n,
                                             ct_scope_desc desc)
{
    assert(n >= 1 && n <= CT_SCOPE_RANGES && "a slot holds at most CT_SCOPE_RANGES ranges");
    assert(atomic_load_explicit(&sl->state, memory_order_relaxed) == CT_SLOT_IDLE &&
           "only its owner publishes a slot, and only an idle one");
    ct_failure_id id = ct_scope_next_id(sl->id);
    sl->id = id;
    sl->n = (unsigned)n;
    sl->desc = desc;
    /* Most scopes are one range: copied as such, not through memcpy's
     * size dispatch. */
    sl->w[0] = w[0];
    for (size_t i = 1; i < n; i++)
        sl->w[i] = w[i];
    atomic_store_explicit(&sl->state, CT_SLOT_OPEN, memory_order_release);
    atomic_fetch_add_explicit(&sm->open_scopes, 1, memory_order_seq_cst);
    return id;
}

/* A successful scope's owner frees its slot alone, when no byte of w
 * carries a claim of its own and nobody showed the slot: claims change
 * only under the store's lock, whose taker shows the slot first, so while
 * the slot is still OPEN the summary's answer holds.  False: settle it
 * under the lock (taint.c). */
static inline bool ct_scope_settle_alone(ct_summary *sm, ct_scope_slot *sl, const ct_range *w, size_t n)
{
    ct_summary_look look;
    if (!ct_summary_look_claims(sm, &look) || !ct_summary_clean_in(sm, look, w, n))
        return false;
    unsigned open = CT_SLOT_OPEN;
    /* Release: a looker's next show follows this owner's settling. */
    if (!atomic_compare_exchange_strong_explicit(&sl->state, &open, CT_SLOT_IDLE, memory_order_release,
                                                 memory_order_relaxed))
        return false;
    atomic_fetch_sub_explicit(&sm->open_scopes, 1, memory_order_release);
    return true;
}

/* ct_enter_write and ct_exit_write (with success) of one range in g's
 * store, for the inline forms below: out of line, with the range in
 * registers, so that the common case builds none of their arguments. */
ct_failure_id ct_enter_write_one(const ct_scope_gate *g, ct_range w, ct_scope_desc desc);
void ct_exit_write_one(const ct_scope_gate *g, ct_failure_id id, ct_range w);

/* ct_enter_write of the one range w, inline where the thread's own slot is
 * idle (as it is unless a signal handler writes inside a write), in the
 * store of gate g. */
static inline ct_failure_id ct_scope_enter_one(const ct_scope_gate *g, ct_range w, ct_scope_desc desc)
{
    if (__builtin_expect(ct_scope_own_idle(g, 1), 1))
        return ct_scope_publish(g->summary, ct_scope_own.slot, &w, 1, desc);
    return ct_enter_write_one(g, w, desc);
}

/* ct_exit_write of a successful scope of the one range w, inline where it
 * waited in the thread's own slot and nobody looked. */
static inline void ct_scope_exit_one(const ct_scope_gate *g, ct_failure_id id, ct_range w)
{
    ct_scope_slot *sl = ct_scope_own.slot;
    if (__builtin_expect(ct_scope_own.serial == g->serial && sl->id == id, 1) &&
        __builtin_expect(ct_scope_settle_alone(g->summary, sl, &w, 1), 1))
        return;
    ct_exit_write_one(g, id, w);
}

#endif

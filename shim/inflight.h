/*
 * inflight.h - private to the shim: the launch's part of inflight.c, inline
 * where every launch pays it (launch.c, graphs.c).  A launch is copied
 * into its thread's ring before the driver is called (the copy the after
 * hook reads anyway), and kept, with its epoch and context, once the
 * driver took it.
 */
#ifndef CT_INFLIGHT_H
#define CT_INFLIGHT_H

#include "flight.h"
#include "shim.h"

/* Where a thread with no ring (out of memory) copies its launches: never kept. */
extern CT_HOT_TLS ct_flight_slot ct_inflight_unkept;

/* The slot the calling thread's next launch is copied into. */
static inline ct_flight_slot *ct_inflight_claim(void)
{
    ct_flight_ring *r = ct_mine.ring;
    if (CT_UNLIKELY(!r) && !(r = ct_inflight_ring_first()))
        return &ct_inflight_unkept;
    return ct_flight_claim(ct_g.flight, r);
}

/* ct_inflight_claim for the common launch, calling nothing: NULL when the
 * thread has no ring yet or its ring must be pruned (ct_inflight_claim
 * then). */
static inline ct_flight_slot *ct_inflight_claim_fast(void)
{
    ct_flight_ring *r = ct_mine.ring;
    return CT_UNLIKELY(!r) ? NULL : ct_flight_claim_fast(r);
}

/* ct_inflight_commit for the common launch, calling nothing: false when
 * the thread has no ring or its context mirror is unknown
 * (ct_inflight_commit_slow then). */
static inline bool ct_inflight_commit_fast(ct_flight_slot *s, int id, uint64_t seq, uint8_t kind)
{
    ct_flight_ring *r = ct_mine.ring;
    if (CT_UNLIKELY(!r || !ct_mine.mirror.known))
        return false;
    ct_flight_commit(r, s, seq, ct_mine.mirror.lifetime, (uint32_t)id, kind);
    return true;
}

/* A commit whose thread has no ring or whose context mirror is unknown
 * (inflight.c): out of line, so that the common one calls nothing. */
void ct_inflight_commit_slow(ct_flight_slot *s, int id, uint64_t seq, uint8_t kind);

/* The launch in s, made through entry id, was taken by the driver: kept.
 * Its stream stays as the program named it: which default stream that is
 * (the entry tells) is worked out when the ring is read (inflight.c). */
static inline void ct_inflight_commit(ct_flight_slot *s, int id, uint64_t seq, uint8_t kind)
{
    if (!ct_inflight_commit_fast(s, id, seq, kind))
        ct_inflight_commit_slow(s, id, seq, kind);
}

/* ---- proofs ---------------------------------------------------------------- */
/* The before hook of a call that may prove work finished: takes the epoch.
 * Inline: every synchronous copy pays it. */
static inline bool ct_before_proof(ct_call *call)
{
    (void)call;
    ct_mine.proof_upto = ct_flight_begin_proof(ct_g.flight);
    return true;
}

/* ct_sync_copy_done's lookups: a per-thread entry point's stream, or a
 * context this thread has not kept. */
void ct_sync_copy_done_slow(ct_call *call);

/* A synchronous copy's after hook: done, it proves what it was ordered
 * after.  Inline, with the context's entry kept: a copy on the legacy
 * stream of the context its thread copied on last calls core once. */
static inline void ct_sync_copy_done(ct_call *call)
{
    if (call->result != CUDA_SUCCESS)
        return;
    if (!call->per_thread && ct_mine.kept_proofs.context != 0 && ct_mine.kept_proofs.context == ct_current_context())
        ct_flight_prove_blocking_at(ct_mine.kept_proofs.proofs, ct_mine.proof_upto);
    else
        ct_sync_copy_done_slow(call);
}

#endif

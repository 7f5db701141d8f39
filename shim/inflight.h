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
    ct_flight_ring *r = ct_inflight_mine;
    if (CT_UNLIKELY(!r) && !(r = ct_inflight_ring_first()))
        return &ct_inflight_unkept;
    return ct_flight_claim(ct_g.flight, r);
}

/* The launch in s, made through entry id (a _ptsz one makes stream 0 the
 * per-thread default stream), was taken by the driver: kept. */
static inline void ct_inflight_commit(ct_flight_slot *s, int id, uint64_t seq, uint8_t kind)
{
    ct_flight_ring *r = ct_inflight_mine;
    if (CT_UNLIKELY(s == &ct_inflight_unkept || !r))
        return;
    uint64_t stream = s->launch.stream;
    uint64_t flags = stream == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD || (stream == 0 && ct_entries[id].per_thread)
                         ? CT_FLIGHT_PER_THREAD
                     : stream == (uint64_t)(uintptr_t)CU_STREAM_LEGACY ? CT_FLIGHT_LEGACY
                                                                        : 0;
    ct_flight_commit(ct_g.flight, r, s, seq, ct_current_context(), (uint64_t)id << 8 | flags | kind);
}

#endif

/*
 * inflight.c - work in flight: each launch the driver took, into its
 * thread's ring, and what each synchronise, query, event and synchronous
 * copy proved finished (core/flight.h), so that a latched loss names its
 * suspects (fault.c).
 *
 * A stream is named as the driver orders work: a created stream by its
 * handle; the legacy default stream (0, CU_STREAM_LEGACY) per context; the
 * per-thread default stream (CU_STREAM_PER_THREAD, or 0 through a _ptsz or
 * _ptds entry point) per context and thread.
 *
 * Invariants:
 * - A launch pays a few stores into its own thread's ring: no lock, no
 *   allocation (but its thread's first launch takes a ring), no store to
 *   memory another thread writes.
 * - A proof's epoch is taken before the driver is called and used only
 *   when the driver answered success (a query's NOT_READY proves nothing).
 * - Nothing here ever decides: which launch is a suspect is core's
 *   ct_suspect_rule.
 */
#include <assert.h>
#include <pthread.h>
#include <string.h>

#include "inflight.h"

static pthread_key_t at_exit;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static bool key_made;
CT_HOT_TLS ct_flight_slot ct_inflight_unkept;
static CT_HOT_TLS bool no_ring; /* out of memory once: this thread's launches go unremembered */

static void release(void *ring)
{
    ct_flight_ring_release(ct_g.flight, ring);
    ct_mine.ring = NULL;
}

static void make_key(void)
{
    key_made = pthread_key_create(&at_exit, release) == 0;
}

ct_flight_ring *ct_inflight_ring_first(void)
{
    if (no_ring)
        return NULL;
    pthread_once(&key_once, make_key);
    ct_flight_ring *r = key_made ? ct_flight_ring_take(ct_g.flight, ct_thread_id()) : NULL;
    if (r && pthread_setspecific(at_exit, r) != 0) {
        ct_flight_ring_release(ct_g.flight, r);
        r = NULL;
    }
    if (!r) {
        static atomic_bool told;
        no_ring = true;
        if (!atomic_exchange(&told, true))
            ct_log(CT_LOG_WARN, "out of memory for a thread's record of its launches: a lost context cannot "
                                "name them as suspects");
    }
    return ct_mine.ring = r;
}

void ct_inflight_commit_slow(ct_flight_slot *s, int id, uint64_t seq, uint8_t kind)
{
    ct_flight_ring *r = ct_mine.ring;
    assert((r || s == &ct_inflight_unkept) && "a launch stores only into its own thread's ring or slot");
    if (r) /* else s is ct_inflight_unkept */
        ct_flight_commit(r, s, seq, ct_current_context(), (uint32_t)id, kind);
}

void ct_inflight_atfork_child(void)
{
    if (ct_g.flight)
        ct_flight_atfork_child(ct_g.flight);
}

/* ---- streams ----------------------------------------------------------------- */

/* What the stream a launch named is (core/flight.h's ct_flight_streams). */
ct_flight_stream ct_inflight_streams(uint64_t handle, uint32_t api, uint64_t context, uint64_t thread)
{
    bool per_thread = handle == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD ||
                      (handle == 0 && api < CT_N_ENTRIES && ct_entries[api].per_thread);
    if (per_thread)
        return (ct_flight_stream){0, context, thread};
    if (handle == (uint64_t)(uintptr_t)CU_STREAM_LEGACY)
        handle = 0;
    return (ct_flight_stream){handle, context, 0};
}

/* The stream `s` a call of entry `id` names, on the calling thread.  Out
 * of line: inlined, it widened a synchronous copy's common path. */
__attribute__((noinline)) static ct_flight_stream stream_of(int id, CUstream s)
{
    return ct_inflight_streams((uint64_t)(uintptr_t)s, (uint32_t)id, ct_current_context(), ct_thread_id());
}

/* ---- proofs --------------------------------------------------------------------- */

void ct_after_ctx_sync(ct_call *call, CUcontext ctx)
{
    if (call->result == CUDA_SUCCESS)
        ct_flight_prove_context(ct_g.flight, ctx ? ct_context_lifetime(ctx) : ct_current_context(), ct_mine.proof_upto);
}

void ct_after_stream_sync(ct_call *call, CUstream s)
{
    if (call->result == CUDA_SUCCESS) {
        ct_flight_stream k = stream_of(call->id, s);
        ct_flight_prove_stream(ct_g.flight, &k, ct_mine.proof_upto);
    }
}

void ct_after_event_record(ct_call *call, CUevent e, CUstream s)
{
    if (call->result == CUDA_SUCCESS) {
        ct_flight_stream k = stream_of(call->id, s);
        uint64_t event = (uint64_t)(uintptr_t)e;
        ct_flight_record_event(ct_g.flight, event, ct_lifetime_of(ct_g.events, event), &k, ct_mine.proof_upto);
    }
}

void ct_after_event_done(ct_call *call, CUevent e)
{
    if (call->result == CUDA_SUCCESS)
        ct_flight_event_done(ct_g.flight, (uint64_t)(uintptr_t)e);
}

void ct_after_stream_wait(ct_call *call, CUstream s, CUevent e)
{
    if (call->result == CUDA_SUCCESS) {
        ct_flight_stream k = stream_of(call->id, s);
        ct_flight_wait_event(ct_g.flight, &k, (uint64_t)(uintptr_t)e, ct_mine.proof_upto);
    }
}

/* ---- lifetimes: events and created streams ------------------------------------ */
/* The driver hands a destroyed event's or stream's handle out again at
 * once, maybe to another thread before this one's after hook: what the
 * flight recorder knows of each is filed under the handle's lifetime,
 * taken before the destroy and forgotten after the driver's success, and
 * a create starts a new one (the lifetime it replaced has ended). */

void ct_after_event_create(ct_call *call, uint64_t event)
{
    uint64_t replaced = 0;
    if (call->result == CUDA_SUCCESS && event) {
        ct_lifetime_born(ct_g.events, event, &replaced);
        if (replaced)
            ct_flight_forget_event(ct_g.flight, event, replaced);
    }
}

/* A destroy of an event or a stream: its lifetime is taken before the
 * driver call, and only that lifetime's record is forgotten, only once the
 * driver says the handle is gone. */
static void handle_ending(ct_call *call, struct ct_lifetimes *lifetimes, uint64_t handle)
{
    call->subject = handle;
    call->lifetime = ct_lifetime_ending(lifetimes, handle);
}

static void handle_ended(ct_call *call, struct ct_lifetimes *lifetimes,
                         void (*forget)(ct_flight *, uint64_t handle, uint64_t lifetime))
{
    bool gone = call->result == CUDA_SUCCESS;
    if (gone && call->subject)
        forget(ct_g.flight, call->subject, call->lifetime);
    ct_lifetime_ended(lifetimes, call->subject, call->lifetime, gone);
}

bool ct_before_event_destroy(ct_call *call, CUevent e)
{
    handle_ending(call, ct_g.events, (uint64_t)(uintptr_t)e);
    return true;
}

void ct_after_event_destroy(ct_call *call)
{
    handle_ended(call, ct_g.events, ct_flight_forget_event);
}

void ct_after_stream_create(ct_call *call, uint64_t stream, unsigned flags)
{
    uint64_t replaced;
    if (call->result == CUDA_SUCCESS && stream)
        ct_flight_stream_created(ct_g.flight, stream, ct_lifetime_born(ct_g.streams, stream, &replaced),
                                 (flags & CU_STREAM_NON_BLOCKING) != 0);
}

bool ct_before_stream_destroy(ct_call *call, CUstream s)
{
    handle_ending(call, ct_g.streams, (uint64_t)(uintptr_t)s);
    return true;
}

void ct_after_stream_destroy(ct_call *call)
{
    handle_ended(call, ct_g.streams, ct_flight_forget_stream);
}

void ct_sync_copy_done_slow(ct_call *call)
{
    if (call->per_thread) {
        ct_flight_stream k = stream_of(call->id, NULL);
        ct_flight_prove_stream(ct_g.flight, &k, ct_mine.proof_upto);
        return;
    }
    uint64_t context = ct_current_context();
    ct_flight_context_proofs *c = ct_flight_context_proofs_of(ct_g.flight, context);
    if (!c)
        return; /* no context, or no room: nothing recorded */
    ct_mine.kept_proofs = (ct_kept_proofs){context, c};
    ct_flight_prove_blocking_at(c, ct_mine.proof_upto);
}

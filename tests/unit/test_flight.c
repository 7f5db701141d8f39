/*
 * test_flight.c - work in flight and its proofs (core/flight.h): which
 * launches a lost context names as suspects, in which order, and what the
 * rings keep when the window is long.
 */
#include <criterion/criterion.h>

#include <pthread.h>

#include "flight.h"
#include "rules.h"

#define CTX 0xc0
#define OTHER_CTX 0xc1

static ct_flight *f;
static ct_flight_ring *ring;
static uint64_t next_seq;

/* As the shim's: handle 2 names the launching thread's per-thread default stream. */
static ct_flight_stream streams(uint64_t handle, uint32_t api, uint64_t context, uint64_t thread)
{
    (void)api;
    return handle == 2 ? (ct_flight_stream){0, context, thread} : (ct_flight_stream){handle, context, 0};
}

static void setup(void)
{
    f = ct_flight_new(streams);
    cr_assert(f);
    ring = ct_flight_ring_take(f, 7);
    cr_assert(ring);
    next_seq = 1;
}

static void teardown(void)
{
    ct_flight_free(f);
}

TestSuite(flight, .init = setup, .fini = teardown);

static const ct_flight_stream legacy = {0, CTX, 0};
static const ct_flight_stream s1 = {0x51, CTX, 0}, s2 = {0x52, CTX, 0};

/* A launch of kernel `what` on s, as the shim records it once the driver took it. */
static uint64_t launch_on(ct_flight_ring *r, const ct_flight_stream *s, uint64_t what)
{
    ct_flight_work w = {.seq = next_seq++,
                        .epoch = ct_flight_epoch(f),
                        .what = what,
                        .stream = *s,
                        .grid = {4, 1, 1},
                        .block = {256, 1, 1},
                        .kind = CT_FLIGHT_LAUNCH};
    ct_flight_record(f, r, &w);
    return w.seq;
}

static uint64_t launch(const ct_flight_stream *s, uint64_t what)
{
    return launch_on(ring, s, what);
}

static size_t suspects(ct_suspect *out, size_t cap)
{
    return ct_flight_suspects(f, CTX, out, cap);
}

Test(flight, a_launch_alone_since_the_last_proof_is_the_only_suspect)
{
    launch(&legacy, 0xa);
    ct_flight_prove_context(f, CTX, ct_flight_begin_proof(f));
    uint64_t crash = launch(&legacy, 0xc);
    ct_suspect s[4];
    cr_assert_eq(suspects(s, 4), 1);
    cr_assert_eq(s[0].work.seq, crash);
    cr_assert_eq(s[0].work.what, 0xc);
    cr_assert(s[0].prime);
    cr_assert_eq(s[0].work.grid[0], 4);
    cr_assert_eq(s[0].work.block[0], 256);
}

Test(flight, a_stream_synchronised_after_its_launch_clears_it_and_only_it)
{
    launch(&s1, 0xa);
    uint64_t other = launch(&s2, 0xb);
    ct_flight_prove_stream(f, &s1, ct_flight_begin_proof(f));
    ct_suspect s[4];
    cr_assert_eq(suspects(s, 4), 1);
    cr_assert_eq(s[0].work.seq, other, "s2 was not synchronised");
}

Test(flight, a_proof_begun_before_a_launch_does_not_cover_it)
{
    uint64_t upto = ct_flight_begin_proof(f);
    uint64_t late = launch(&s1, 0xa); /* launched while the synchronise ran */
    ct_flight_prove_stream(f, &s1, upto);
    ct_suspect s[2];
    cr_assert_eq(suspects(s, 2), 1);
    cr_assert_eq(s[0].work.seq, late);
}

Test(flight, work_queued_behind_the_oldest_is_listed_after_it_per_stream)
{
    uint64_t a1 = launch(&s1, 0xa), b1 = launch(&s2, 0xb), a2 = launch(&s1, 0xc), b2 = launch(&s2, 0xd);
    ct_suspect s[8];
    cr_assert_eq(suspects(s, 8), 4);
    cr_assert_eq(s[0].work.seq, a1);
    cr_assert(s[0].prime, "the oldest on s1");
    cr_assert_eq(s[1].work.seq, a2);
    cr_assert_not(s[1].prime);
    cr_assert_eq(s[2].work.seq, b1);
    cr_assert(s[2].prime, "the oldest on s2");
    cr_assert_eq(s[3].work.seq, b2);
    cr_assert_not(s[3].prime);
}

Test(flight, the_legacy_ordering_proves_blocking_streams_not_nonblocking_ones)
{
    const ct_flight_stream nb = {0x53, CTX, 0};
    ct_flight_stream_created(f, nb.handle, 1, true);
    launch(&s1, 0xa);
    uint64_t free_running = launch(&nb, 0xb);
    ct_flight_prove_blocking_at(ct_flight_context_proofs_of(f, CTX), ct_flight_begin_proof(f)); /* a synchronous copy */
    ct_suspect s[4];
    cr_assert_eq(suspects(s, 4), 1);
    cr_assert_eq(s[0].work.seq, free_running);
}

Test(flight, a_context_keeps_one_entry_for_its_proofs)
{
    ct_flight_context_proofs *c = ct_flight_context_proofs_of(f, CTX);
    cr_assert_not_null(c);
    cr_assert_eq(ct_flight_context_proofs_of(f, CTX), c, "the same context, the same entry: a caller may keep it");
    cr_assert_neq(ct_flight_context_proofs_of(f, CTX + 1), c);
    cr_assert_null(ct_flight_context_proofs_of(f, 0), "no context, no entry");
    launch(&s1, 0xa);
    ct_flight_prove_blocking_at(c, 0); /* no proof begun: proves nothing */
    ct_suspect s[4];
    cr_assert_eq(suspects(s, 4), 1);
    ct_flight_prove_blocking_at(c, ct_flight_begin_proof(f));
    cr_assert_eq(suspects(s, 4), 0, "proven through the kept entry");
}

Test(flight, a_completed_event_proves_what_was_recorded_before_it)
{
    launch(&s1, 0xa);
    ct_flight_record_event(f, 0xe1, 1, &s1, ct_flight_begin_proof(f));
    uint64_t after = launch(&s1, 0xb);
    ct_flight_event_done(f, 0xe1);
    ct_suspect s[4];
    cr_assert_eq(suspects(s, 4), 1);
    cr_assert_eq(s[0].work.seq, after, "launched after the record: the event says nothing of it");
    ct_flight_forget_event(f, 0xe1, 1);
    ct_flight_event_done(f, 0xe1); /* a destroyed event proves nothing more */
    cr_assert_eq(suspects(s, 4), 1);
}

/* Issue 40: a stream made again under a destroyed one's handle is a new
 * stream (created blocking, the legacy ordering proves it), and the old
 * one's end, seen late, leaves it. */
Test(flight, a_stream_made_again_under_a_handle_is_a_new_stream)
{
    const ct_flight_stream s = {0x53, CTX, 0};
    ct_flight_stream_created(f, s.handle, 1, true);
    ct_flight_stream_created(f, s.handle, 2, false); /* the handle handed out again */
    ct_flight_forget_stream(f, s.handle, 1);         /* the first one's destroy, seen late */
    launch(&s, 0xa);
    ct_flight_prove_blocking_at(ct_flight_context_proofs_of(f, CTX), ct_flight_begin_proof(f));
    ct_suspect out[4];
    cr_assert_eq(suspects(out, 4), 0, "a blocking stream: the synchronous copy proved its launch");
}

Test(flight, a_stream_end_seen_late_leaves_the_new_stream_of_its_handle)
{
    const ct_flight_stream s = {0x53, CTX, 0};
    ct_flight_stream_created(f, s.handle, 1, false);
    ct_flight_stream_created(f, s.handle, 2, true);
    ct_flight_forget_stream(f, s.handle, 1);
    uint64_t free_running = launch(&s, 0xa);
    ct_flight_prove_blocking_at(ct_flight_context_proofs_of(f, CTX), ct_flight_begin_proof(f));
    ct_suspect out[4];
    cr_assert_eq(suspects(out, 4), 1, "still non-blocking: the late end was of lifetime 1");
    cr_assert_eq(out[0].work.seq, free_running);
}

/* Issue 40: an event's record is forgotten only by the lifetime that made
 * it: a destroy seen after the handle was made again and recorded leaves
 * the new record, whose completion still proves what came before it. */
Test(flight, an_event_record_is_forgotten_only_by_its_own_lifetime)
{
    ct_flight_record_event(f, 0xe1, 1, &s1, ct_flight_begin_proof(f));
    launch(&s1, 0xa);
    ct_flight_record_event(f, 0xe1, 2, &s1, ct_flight_begin_proof(f)); /* made again, recorded */
    ct_flight_forget_event(f, 0xe1, 1);                                /* the first destroy, seen late */
    ct_flight_event_done(f, 0xe1);
    ct_suspect s[4];
    cr_assert_eq(suspects(s, 4), 0, "the second record proves the launch");
}

Test(flight, a_wait_on_an_event_carries_a_proof_across_streams)
{
    uint64_t producer = launch(&s1, 0xa);
    ct_flight_record_event(f, 0xe1, 1, &s1, ct_flight_begin_proof(f));
    ct_flight_wait_event(f, &s2, 0xe1, ct_flight_begin_proof(f));
    launch(&s2, 0xb);
    ct_suspect s[4];
    cr_assert_eq(suspects(s, 4), 2);
    ct_flight_prove_stream(f, &s2, ct_flight_begin_proof(f));
    cr_assert_eq(suspects(s, 4), 0, "s2 finished after waiting for the event, so did s1's launch #%llu",
                 (unsigned long long)producer);
}

Test(flight, default_streams_are_per_context_and_per_thread)
{
    /* A per-thread default stream is its launching thread's: ring 7's here, ring 8's there. */
    const ct_flight_stream per_thread = {2, CTX, 0}, mine = {0, CTX, 7}, elsewhere = {0, OTHER_CTX, 0};
    ct_flight_ring *other = ct_flight_ring_take(f, 8);
    launch(&per_thread, 0xa);
    uint64_t t = launch_on(other, &per_thread, 0xb);
    launch(&elsewhere, 0xc);
    ct_flight_prove_stream(f, &mine, ct_flight_begin_proof(f));
    ct_suspect s[4];
    cr_assert_eq(suspects(s, 4), 1, "the other context's launch is not this context's suspect");
    cr_assert_eq(s[0].work.seq, t);
    cr_assert_eq(s[0].work.thread, 8, "the launching thread is its ring's");
    cr_assert_eq(s[0].work.stream.thread, 8);
    cr_assert_eq(ct_flight_suspects(f, OTHER_CTX, s, 4), 1);
    cr_assert_eq(ct_flight_suspects(f, 0, s, 4), 2, "context 0: every context");
}

Test(flight, a_long_window_keeps_the_oldest_and_the_newest_and_counts_the_rest)
{
    const unsigned n = CT_FLIGHT_PINNED + CT_FLIGHT_RECENT + 40;
    for (unsigned i = 0; i < n; i++)
        launch(&s1, 0x100 + i);
    ct_suspect s[CT_FLIGHT_PINNED + CT_FLIGHT_RECENT];
    cr_assert_eq(suspects(s, CT_FLIGHT_PINNED + CT_FLIGHT_RECENT), n, "all counted");
    cr_assert_eq(s[0].work.seq, 1, "the oldest kept: the prime suspect");
    cr_assert(s[0].prime);
    cr_assert_eq(s[CT_FLIGHT_PINNED - 1].work.seq, CT_FLIGHT_PINNED);
    cr_assert_eq(s[CT_FLIGHT_PINNED].work.seq, n - CT_FLIGHT_RECENT + 1, "then the newest");
    cr_assert_eq(s[CT_FLIGHT_PINNED + CT_FLIGHT_RECENT - 1].work.seq, n);
}

Test(flight, a_full_window_is_pruned_of_what_a_proof_covered)
{
    for (unsigned i = 0; i < CT_FLIGHT_PINNED + 5; i++)
        launch(&s1, 0x100 + i);
    ct_flight_prove_stream(f, &s1, ct_flight_begin_proof(f));
    uint64_t first_after = launch(&s1, 0x200);
    for (unsigned i = 0; i < CT_FLIGHT_PINNED + 10; i++)
        launch(&s1, 0x300 + i);
    ct_suspect s[CT_FLIGHT_PINNED + CT_FLIGHT_RECENT];
    cr_assert_eq(suspects(s, CT_FLIGHT_PINNED + CT_FLIGHT_RECENT), CT_FLIGHT_PINNED + 11,
                 "the proven launches are gone, none dropped");
    cr_assert_eq(s[0].work.seq, first_after, "the oldest unproven is kept first");
}

Test(flight, a_ring_outlives_its_thread_and_is_taken_over)
{
    ct_flight_ring *other = ct_flight_ring_take(f, 8);
    cr_assert(other && other != ring);
    uint64_t left = launch_on(other, &s2, 0xb);
    ct_flight_ring_release(f, other);
    ct_suspect s[4];
    cr_assert_eq(suspects(s, 4), 1, "its launch may still run");
    cr_assert_eq(s[0].work.seq, left);
    cr_assert_eq(ct_flight_ring_take(f, 9), other, "taken over, not made anew");
    uint64_t next = launch_on(other, &s2, 0xc);
    cr_assert_eq(suspects(s, 4), 2);
    cr_assert_eq(s[0].work.seq, left);
    cr_assert_eq(s[0].work.thread, 8, "the ended thread's launch is still its own");
    cr_assert_eq(s[1].work.seq, next);
    cr_assert_eq(s[1].work.thread, 9);
}

Test(flight, nothing_launched_no_suspects)
{
    ct_suspect s[1];
    cr_assert_eq(suspects(s, 1), 0);
    cr_assert_eq(suspects(NULL, 0), 0);
}

static void *launcher(void *arg)
{
    ct_flight_ring *r = ct_flight_ring_take(f, 9);
    const ct_flight_stream *s = arg;
    for (int i = 0; i < 2000; i++) {
        ct_flight_work w = {.seq = 1000000 + (uint64_t)i, .epoch = ct_flight_epoch(f), .stream = *s};
        ct_flight_record(f, r, &w);
        if (i % 100 == 0) /* the context: the launches its ring dropped go too */
            ct_flight_prove_context(f, CTX, ct_flight_begin_proof(f));
    }
    ct_flight_ring_release(f, r);
    return NULL;
}

Test(flight, suspects_can_be_asked_while_others_launch)
{
    pthread_t t;
    static const ct_flight_stream busy = {0x99, CTX, 0};
    pthread_create(&t, NULL, launcher, (void *)&busy);
    ct_suspect s[CT_FLIGHT_PINNED + CT_FLIGHT_RECENT];
    for (int i = 0; i < 200; i++)
        (void)suspects(s, CT_FLIGHT_PINNED + CT_FLIGHT_RECENT);
    pthread_join(t, NULL);
    size_t n = suspects(s, CT_FLIGHT_PINNED + CT_FLIGHT_RECENT);
    cr_assert_leq(n, 99, "launches after the last proof only");
}

Test(flight, dropped_launches_are_counted_until_their_context_is_proven)
{
    const unsigned n = CT_FLIGHT_PINNED + CT_FLIGHT_RECENT + 10;
    for (unsigned i = 0; i < n; i++)
        launch(&s1, 0x100 + i);
    ct_flight_prove_stream(f, &s1, ct_flight_begin_proof(f));
    ct_suspect s[4];
    cr_assert_eq(suspects(s, 4), 10, "their streams are not kept: a stream's proof leaves them counted");
    ct_flight_prove_context(f, CTX, ct_flight_begin_proof(f));
    cr_assert_eq(suspects(s, 4), 0);
}

/*
 * settle.c - the end of a call, in taint, counters and report: a write
 * scope closed (released on success, tainted on failure), a launch the
 * driver refused at once, work skipped because an input carries a failure.
 * memory.c, launch.c and graphs.c decide what a call wrote or read; this
 * file is where each of them turns that outcome into the store's
 * operations (core/taint.h), the counters and the failure, repeat and skip
 * events.
 *
 * Invariants:
 * - A failure is counted and reported once, at its first occurrence (the
 *   store says which: ct_occurrence); each later one is a repeat event.
 * - A skip passes on a failure one of its inputs carries (its root is
 *   never 0), its outputs take it before the skip is reported, and it
 *   answers its call (call->answered) with core's ct_skip_result.
 */
#include <assert.h>

#include "shim.h"

ct_failure_desc ct_describe(const ct_call *call, CUresult error)
{
    return (ct_failure_desc){
        .error = (int)error,
        .api = ct_entries[call->id].name,
        .thread = ct_thread_id(),
        .time_ns = ct_now_ns(),
    };
}

/* What a failure's settling tells: the counters, and a failure or repeat
 * event. */
static void tell_failed(const ct_call *call, const ct_range *w, size_t n, const ct_failure_desc *failed,
                        ct_failure_id id, const ct_occurrence *occ, const struct ct_kernel *k,
                        const ct_pool_facts *pool)
{
    ct_tell_if_host_visible(w, n);
    atomic_fetch_add(&ct_g.occurrences, 1);
    if (occ->is_new && id) {
        atomic_fetch_add(&ct_g.failures, 1);
        ct_event_failure(id, failed, call->injected, k, pool);
    } else if (id) {
        ct_event_repeat(id, failed, occ, call->injected);
    }
}

ct_failure_id ct_settle_writes(ct_call *call, const ct_range *w, size_t n, const ct_failure_desc *failed)
{
    ct_occurrence occ;
    ct_failure_id id = ct_exit_write(ct_g.store, call->provisional, w, n, failed, &occ);
    if (failed)
        tell_failed(call, w, n, failed, id, &occ, NULL, NULL);
    return id;
}

ct_failure_id ct_settle_refused_launch(ct_call *call, const ct_range *w, size_t n, const ct_range *in, size_t n_in,
                                       const ct_failure_desc *failed, const ct_launch_key *key,
                                       const struct ct_kernel *k)
{
    ct_occurrence occ;
    ct_failure_id id = ct_taint_refused_launch(ct_g.store, failed, key, w, n, &occ);
    ct_pool_facts pool;
    bool is_pool = occ.is_new && id && ct_pool_failed(id, w, n, in, n_in, &pool);
    tell_failed(call, w, n, failed, id, &occ, k, is_pool ? &pool : NULL);
    return id;
}

void ct_settle_skip(ct_call *call, ct_failure_id root, int error, ct_skip_desc *skip, const ct_range *w, unsigned n)
{
    assert(root != 0 && "a skip passes on a failure an input carries");
    skip->api = ct_entries[call->id].name;
    skip->produced = n;
    skip->thread = ct_thread_id();
    skip->time_ns = ct_now_ns();
    ct_propagate(ct_g.store, root, skip, w, n);
    ct_tell_if_host_visible(w, n);
    atomic_fetch_add(&ct_g.skips, 1);
    ct_event_skip(root, skip);
    ct_pool_met(w, n, NULL, 0);
    call->result = (CUresult)ct_skip_result(ct_g.cfg.on_skip, error, CUDA_SUCCESS);
    call->answered = true;
}

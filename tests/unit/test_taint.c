/* The failure store, operation by operation, then the behaviours the issue
 * names: chains that share nothing stay apart, a read two hops downstream
 * names the root and both skips, a rewrite makes bytes readable again, a
 * loop failing a million times holds one failure, and a scope that never
 * exits leaves its write set unreadable. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ct_status.h"
#include "scope.h"
#include "taint.h"

#define A 0x10000u /* three allocations of 256 bytes */
#define B 0x20000u
#define C 0x30000u
#define NOWHERE 0x90000u
#define SIZE 256u
#define ERR_LAUNCH 719 /* CUDA_ERROR_LAUNCH_FAILED, as data */
#define ERR_OOM 2
#define ERR_UNKNOWN 999 /* what a skip on a released root carries */

static ct_store *s;
static ct_refusal refusal;

static void setup(void)
{
    s = ct_store_new(ERR_UNKNOWN);
    cr_assert_not_null(s);
    cr_assert_eq(ct_store_alloc(s, A, SIZE, 0), CT_OK);
    cr_assert_eq(ct_store_alloc(s, B, SIZE, 0), CT_OK);
    cr_assert_eq(ct_store_alloc(s, C, SIZE, 0), CT_OK);
}

static void teardown(void)
{
    ct_store_free(s);
}

TestSuite(taint, .init = setup, .fini = teardown);

static ct_failure_desc failure_of(const char *kernel, int error)
{
    return (ct_failure_desc){.error = error, .api = "cuLaunchKernel", .kernel = kernel};
}

/* A write scope's description: its error and the call writing (named). */
static ct_scope_desc scope_of(const char *api, int error)
{
    return (ct_scope_desc){error, api};
}

static ct_range whole(uint64_t addr)
{
    return (ct_range){addr, CT_TO_END};
}
static ct_range bytes(uint64_t addr, uint64_t len)
{
    return (ct_range){addr, len};
}

static ct_failure_id fail(const char *kernel, ct_range w)
{
    ct_failure_desc d = failure_of(kernel, ERR_LAUNCH);
    return ct_taint(s, &d, &w, 1, NULL);
}

static int check(ct_range r)
{
    return ct_check_written(s, &r, 1, &refusal);
}

static bool live(ct_failure_id id)
{
    return ct_failure_get(s, id, NULL);
}

static uint64_t occurrences(ct_failure_id id)
{
    ct_failure_info info;
    cr_assert(ct_failure_get(s, id, &info), "failure %u is not live", id);
    return info.occurrences;
}

/* What the shim does for a launch reading r and writing w: skip and
 * propagate when an input is carried, otherwise run (ok here). */
static ct_failure_id launch(const char *kernel, uint64_t seq, ct_range r, ct_range w)
{
    int error = 0;
    ct_failure_id root = ct_read_failure(s, &r, 1, &error);
    if (root) {
        ct_skip_desc skip = {.api = "cuLaunchKernel",
                             .kernel = kernel,
                             .launch_seq = seq,
                             .needed = r.addr,
                             .produced = 1};
        ct_propagate(s, root, &skip, &w, 1);
        return root;
    }
    ct_written(s, &w, 1);
    return 0;
}

/* --- the write scope --------------------------------------------------- */

Test(taint, enter_write_taints_until_exit_write_says_written)
{
    ct_scope_desc prov = scope_of("k", ERR_LAUNCH);
    ct_range w = whole(A);
    ct_failure_id p = ct_enter_write(s, &w, 1, prov);
    cr_assert_neq(p, 0);
    cr_assert(ct_store_tainted(s));
    ct_failure_info info;
    cr_assert(ct_failure_get(s, p, &info));
    cr_assert(info.provisional);
    cr_assert_eq(check(bytes(A, 4)), CT_ETAINTED);
    cr_assert_eq(refusal.failures[0].id, p);

    ct_occurrence occ = {.is_new = true};
    cr_assert_eq(ct_exit_write(s, p, &w, 1, NULL, &occ), 0);
    cr_assert_not(occ.is_new);
    cr_assert_eq(check(bytes(A, SIZE)), CT_OK);
    cr_assert_not(live(p));
    cr_assert_eq(ct_store_live_failures(s), 0);
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, enter_write_on_nothing_known_mints_nothing)
{
    ct_scope_desc prov = scope_of("k", ERR_LAUNCH);
    ct_range w = bytes(NOWHERE, 64);
    cr_assert_eq(ct_enter_write(s, &w, 0, prov), 0);
    /* A scope has its id before anyone knows what it touches: shown (the
     * count below looks), it places nothing. */
    ct_failure_id p = ct_enter_write(s, &w, 1, prov);
    cr_assert_eq(ct_store_live_failures(s), 0);
    cr_assert_not(live(p));
    cr_assert_eq(ct_exit_write(s, p, &w, 1, NULL, NULL), 0);
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, exit_write_error_replaces_the_provisional_failure)
{
    ct_scope_desc prov = scope_of("k", 0);
    ct_failure_desc real = failure_of("k", ERR_LAUNCH);
    ct_range w[2] = {whole(A), bytes(B, 16)};
    ct_failure_id p = ct_enter_write(s, w, 2, prov);
    ct_occurrence occ = {0};
    ct_failure_id f = ct_exit_write(s, p, w, 2, &real, &occ);
    cr_assert_neq(f, 0);
    cr_assert_neq(f, p);
    cr_assert(occ.is_new);
    cr_assert_not(live(p));
    ct_failure_info info;
    cr_assert(ct_failure_get(s, f, &info));
    cr_assert_not(info.provisional);
    cr_assert_eq(info.desc.error, ERR_LAUNCH);
    int error = 0;
    cr_assert_eq(ct_read_failure(s, &w[1], 1, &error), f);
    cr_assert_eq(error, ERR_LAUNCH);
    cr_assert_eq(check(bytes(B + 16, 16)), CT_OK);
}

Test(taint, real_ids_count_from_one_whatever_scopes_came_before)
{
    ct_scope_desc prov = scope_of("k", 0);
    ct_range w = whole(A);
    for (int i = 0; i < 10; i++)
        ct_exit_write(s, ct_enter_write(s, &w, 1, prov), &w, 1, NULL, NULL);
    cr_assert_eq(fail("k", whole(A)), 1);
    cr_assert_eq(fail("other", whole(B)), 2);
}

/* A write made from inside another scope of the same thread (a signal
 * handler's) finds the thread's slot holding the outer one: it is placed
 * in the store instead (ct_scope_rule), and each settles its own bytes. */
Test(taint, a_scope_inside_another_of_its_thread_is_placed_and_both_settle)
{
    ct_scope_desc prov = scope_of("cuMemcpyHtoD_v2", ERR_LAUNCH);
    ct_range outer = whole(A), inner = whole(B);
    ct_failure_id o = ct_enter_write(s, &outer, 1, prov);
    ct_failure_id i = ct_enter_write(s, &inner, 1, prov);
    cr_assert(ct_scope_waits_in_slot(o), "the outer scope waits in the thread's slot");
    cr_assert_not(ct_scope_waits_in_slot(i), "the inner one is placed");
    cr_assert_neq(o, i);
    cr_assert_eq(ct_exit_write(s, i, &inner, 1, NULL, NULL), 0);
    cr_assert_eq(check(bytes(B, SIZE)), CT_OK, "the inner write is settled");
    cr_assert_eq(check(bytes(A, 4)), CT_ETAINTED, "the outer write is still under way");
    cr_assert_eq(refusal.failures[0].id, o);
    cr_assert_eq(ct_exit_write(s, o, &outer, 1, NULL, NULL), 0);
    cr_assert_eq(check(bytes(A, SIZE)), CT_OK);
    cr_assert_not(ct_store_tainted(s));
}

static void *one_scope(void *arg)
{
    ct_range w = whole(A);
    ct_failure_id p = ct_enter_write(s, &w, 1, scope_of("cuMemcpyHtoD_v2", ERR_LAUNCH));
    *(bool *)arg = ct_scope_waits_in_slot(p);
    ct_exit_write(s, p, &w, 1, NULL, NULL);
    return NULL;
}

/* A thread takes a slot of its own at its first scope and gives it back
 * when it exits: threads coming and going (a pool replacing its workers)
 * never run out of slots, which are far fewer than the threads here. */
Test(taint, a_thread_gives_its_slot_back_when_it_exits)
{
    for (int t = 0; t < 300; t++) {
        pthread_t th;
        bool in_slot = false;
        cr_assert_eq(pthread_create(&th, NULL, one_scope, &in_slot), 0);
        pthread_join(th, NULL);
        cr_assert(in_slot, "thread %d's scope found no slot", t);
    }
    cr_assert_not(ct_store_tainted(s));
}

/* --- taint, read_failure, written -------------------------------------- */

Test(taint, read_failure_names_the_oldest_failure)
{
    ct_failure_id f1 = fail("first", whole(B));
    ct_failure_id f2 = fail("second", whole(A));
    cr_assert_lt(f1, f2);
    ct_range r[2] = {whole(A), whole(B)};
    int error = 0;
    cr_assert_eq(ct_read_failure(s, r, 2, &error), f1);
    cr_assert_eq(error, ERR_LAUNCH);
    ct_range clean = whole(C);
    cr_assert_eq(ct_read_failure(s, &clean, 1, NULL), 0);
}

Test(taint, written_releases_exactly_the_bytes_written)
{
    ct_failure_id f = fail("k", bytes(A, 32));
    ct_range first = bytes(A, 16), second = bytes(A + 16, 16);
    ct_written(s, &first, 1);
    cr_assert(live(f));
    cr_assert_eq(check(bytes(A, 16)), CT_OK);
    cr_assert_eq(check(bytes(A + 16, 1)), CT_ETAINTED);
    ct_written(s, &second, 1);
    cr_assert_not(live(f));
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, a_failure_lives_while_any_allocation_carries_it)
{
    ct_range w[2] = {whole(A), whole(B)};
    ct_failure_desc d = failure_of("k", ERR_LAUNCH);
    ct_failure_id f = ct_taint(s, &d, w, 2, NULL);
    ct_written(s, &w[0], 1);
    cr_assert(live(f));
    cr_assert_eq(ct_store_live_failures(s), 1);
    ct_written(s, &w[1], 1);
    cr_assert_not(live(f));
    cr_assert_eq(ct_store_live_failures(s), 0);
}

Test(taint, splitting_a_claim_keeps_both_halves_counted)
{
    ct_failure_id f = fail("outer", bytes(A, 100));
    ct_failure_id g = fail("inner", bytes(A + 40, 20));
    ct_range left = bytes(A, 40), right = bytes(A + 60, 40);
    cr_assert_eq(ct_read_failure(s, &left, 1, NULL), f);
    cr_assert_eq(check(bytes(A, 100)), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, 100);
    cr_assert_eq(refusal.n_failures, 2);
    ct_written(s, &left, 1);
    cr_assert(live(f), "the right half still carries the outer failure");
    cr_assert_eq(ct_read_failure(s, &right, 1, NULL), f);
    ct_written(s, &right, 1);
    cr_assert_not(live(f));
    cr_assert(live(g));
}

/* --- set, never add ---------------------------------------------------- */

Test(taint, retainting_with_the_same_failure_is_a_no_op)
{
    ct_failure_id f = fail("k", bytes(A, 64));
    cr_assert_eq(fail("k", bytes(A, 64)), f);
    cr_assert_eq(fail("k", bytes(A + 8, 8)), f);
    ct_range skipped = bytes(A, 64);
    ct_propagate(s, f, NULL, &skipped, 1);
    ct_range w = bytes(A, 64);
    ct_written(s, &w, 1); /* one release must undo it all */
    cr_assert_not(live(f), "re-tainting added a reference");
    cr_assert_eq(ct_store_live_failures(s), 0);
}

Test(taint, a_new_failure_releases_the_old_one)
{
    ct_failure_id f1 = fail("first", whole(A));
    ct_failure_id f2 = fail("second", whole(A));
    cr_assert_neq(f1, f2);
    cr_assert_not(live(f1));
    cr_assert(live(f2));
    cr_assert_eq(ct_store_live_failures(s), 1);
    cr_assert_eq(check(whole(A)), CT_ETAINTED);
    cr_assert_eq(refusal.n_failures, 1);
    cr_assert_eq(refusal.failures[0].id, f2);
}

Test(taint, adjacent_ranges_of_one_failure_merge)
{
    ct_failure_id f = fail("k", bytes(A, 16));
    cr_assert_eq(fail("k", bytes(A + 16, 16)), f);
    ct_range w = bytes(A, 32);
    ct_written(s, &w, 1);
    cr_assert_not(live(f));
}

/* --- folding ----------------------------------------------------------- */

Test(taint, identical_repeats_fold_into_the_live_failure)
{
    ct_occurrence occ = {0};
    ct_failure_desc d = failure_of("gemm", ERR_LAUNCH);
    ct_range a = whole(A), b = whole(B);
    ct_failure_id f = ct_taint(s, &d, &a, 1, &occ);
    cr_assert(occ.is_new);
    char copy[] = "gemm"; /* equal text, another pointer */
    ct_failure_desc again = failure_of(copy, ERR_LAUNCH);
    cr_assert_eq(ct_taint(s, &again, &b, 1, &occ), f);
    cr_assert_not(occ.is_new);
    cr_assert_eq(occ.count, 2);
    cr_assert_eq(occurrences(f), 2);
    cr_assert_eq(ct_store_live_failures(s), 1);
}

Test(taint, a_folded_failure_keeps_its_first_and_latest_launch)
{
    ct_occurrence occ = {0};
    ct_range a = whole(A), b = whole(B), c = whole(C);
    ct_failure_desc d = failure_of("gemm", ERR_LAUNCH);
    d.launch_seq = 3;
    ct_failure_id f = ct_taint(s, &d, &a, 1, &occ);
    cr_assert(occ.is_new && occ.count == 1 && occ.first_launch == 3);
    d.launch_seq = 9;
    ct_taint(s, &d, &b, 1, &occ);
    d.launch_seq = 14;
    cr_assert_eq(ct_taint(s, &d, &c, 1, &occ), f);
    cr_assert(!occ.is_new && occ.count == 3 && occ.first_launch == 3, "count %" PRIu64, occ.count);
    ct_failure_info info;
    cr_assert(ct_failure_get(s, f, &info));
    cr_assert_eq(info.desc.launch_seq, 3, "the first occurrence's description stays");
    cr_assert_eq(info.last_launch_seq, 14);
    cr_assert_eq(info.occurrences, 3);
    cr_assert_eq(ct_exit_write(s, 0, &a, 1, NULL, &occ), 0);
    cr_assert(!occ.is_new && occ.count == 0, "a success is no occurrence");
}

Test(taint, different_kernel_error_or_api_do_not_fold)
{
    ct_failure_id f = fail("gemm", whole(A));
    cr_assert_neq(fail("gemv", whole(B)), f);
    ct_failure_desc other_error = failure_of("gemm", ERR_OOM);
    ct_range c = whole(C);
    cr_assert_neq(ct_taint(s, &other_error, &c, 1, NULL), f);
    ct_failure_desc other_api = failure_of("gemm", ERR_LAUNCH);
    other_api.api = "cuLaunchKernelEx";
    cr_assert_neq(ct_taint(s, &other_api, &c, 1, NULL), f);
    ct_failure_desc no_kernel = failure_of(NULL, ERR_LAUNCH);
    ct_failure_desc empty_kernel = failure_of("", ERR_LAUNCH);
    ct_failure_id nk = ct_taint(s, &no_kernel, &c, 1, NULL);
    cr_assert_eq(ct_taint(s, &no_kernel, &c, 1, NULL), nk);
    cr_assert_neq(ct_taint(s, &empty_kernel, &c, 1, NULL), nk);
    cr_assert_eq(occurrences(f), 1);
}

Test(taint, a_repeat_after_the_failure_was_released_is_new)
{
    ct_failure_id f = fail("gemm", whole(A));
    ct_range a = whole(A);
    ct_written(s, &a, 1);
    ct_occurrence occ = {0};
    ct_failure_desc d = failure_of("gemm", ERR_LAUNCH);
    ct_failure_id g = ct_taint(s, &d, &a, 1, &occ);
    cr_assert(occ.is_new);
    cr_assert_gt(g, f, "ids are never reused");
}

Test(taint, provisional_failures_never_fold)
{
    ct_failure_desc d = failure_of("gemm", ERR_LAUNCH);
    ct_range a = whole(A), b = whole(B);
    ct_failure_id p = ct_enter_write(s, &a, 1, scope_of(d.api, d.error));
    ct_occurrence occ = {0};
    ct_failure_id f = ct_taint(s, &d, &b, 1, &occ);
    cr_assert(occ.is_new);
    cr_assert_neq(f, p);
    cr_assert_eq(ct_enter_write(s, &b, 0, scope_of(d.api, d.error)), 0);
    ct_failure_id q = ct_enter_write(s, &b, 1, scope_of(d.api, d.error));
    cr_assert_neq(q, p);
    cr_assert_neq(q, f);
}

/* --- propagate and the skip ring --------------------------------------- */

Test(taint, propagate_passes_the_same_failure_on)
{
    ct_failure_id f = fail("producer", whole(A));
    cr_assert_eq(launch("consumer", 7, whole(A), whole(B)), f);
    cr_assert_eq(ct_store_live_failures(s), 1);
    ct_failure_info info;
    ct_failure_get(s, f, &info);
    cr_assert_eq(info.skips_total, 1);
    cr_assert_eq(info.skips[0].launch_seq, 7);
    cr_assert_str_eq(info.skips[0].kernel, "consumer");
    cr_assert_eq(info.skips[0].needed, A);
    ct_range a = whole(A);
    ct_written(s, &a, 1);
    cr_assert(live(f), "B still carries it");
}

Test(taint, the_skip_ring_keeps_the_newest_sixteen_and_a_total)
{
    ct_failure_id f = fail("producer", whole(A));
    for (uint64_t seq = 1; seq <= 20; seq++)
        launch("consumer", seq, whole(A), whole(B));
    ct_failure_info info;
    ct_failure_get(s, f, &info);
    cr_assert_eq(info.skips_total, 20);
    cr_assert_eq(info.n_skips, CT_SKIPS_KEPT);
    for (uint32_t i = 0; i < CT_SKIPS_KEPT; i++)
        cr_assert_eq(info.skips[i].launch_seq, 5 + i, "oldest first");
}

Test(taint, a_skip_whose_root_was_released_still_taints)
{
    ct_failure_id f = fail("producer", whole(A));
    ct_range a = whole(A), b = whole(B);
    ct_written(s, &a, 1); /* another thread rewrote A after the read */
    ct_skip_desc skip = {.api = "cuLaunchKernel", .kernel = "consumer"};
    ct_propagate(s, f, &skip, &b, 1);
    cr_assert_eq(check(whole(B)), CT_ETAINTED);
    cr_assert_neq(refusal.failures[0].id, f);
    cr_assert_eq(refusal.failures[0].desc.error, ERR_UNKNOWN, "ct_store_new's unknown error");
    cr_assert_eq(refusal.failures[0].skips_total, 1);
}

/* --- check_written ----------------------------------------------------- */

Test(taint, exact_byte_ranges_are_refused_exactly)
{
    ct_failure_id f = fail("k", bytes(A + 16, 16));
    cr_assert_eq(check(bytes(A, 16)), CT_OK);
    cr_assert_eq(check(bytes(A + 32, 64)), CT_OK);
    cr_assert_eq(check(bytes(A + 8, 16)), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, 8);
    cr_assert_eq(refusal.n_failures, 1);
    cr_assert_eq(refusal.n_kept, 1);
    cr_assert_eq(refusal.failures[0].id, f);
    cr_assert_eq(refusal.failures[0].desc.error, ERR_LAUNCH);
}

Test(taint, to_end_covers_the_rest_of_the_allocation)
{
    fail("k", bytes(A + 100, CT_TO_END));
    cr_assert_eq(check(bytes(A + 99, 1)), CT_OK);
    cr_assert_eq(check(bytes(A + SIZE - 1, 1)), CT_ETAINTED);
    cr_assert_eq(check(whole(A)), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, SIZE - 100);
    cr_assert_eq(check(whole(A + 150)), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, SIZE - 150);
    cr_assert_eq(check(whole(B)), CT_OK);
}

Test(taint, ranges_are_clipped_to_allocations)
{
    fail("k", bytes(A + SIZE - 8, 64)); /* runs off the end */
    cr_assert_eq(check(bytes(A, SIZE)), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, 8);
    ct_failure_desc d = failure_of("k2", ERR_LAUNCH);
    ct_range before = bytes(B - 8, 16); /* starts outside: memory nobody tracks */
    ct_taint(s, &d, &before, 1, NULL);
    cr_assert_eq(check(bytes(B, SIZE)), CT_OK);
}

Test(taint, a_range_never_reaches_past_its_own_allocation)
{
    const uint64_t D = A + SIZE; /* right after A */
    ct_store_alloc(s, D, SIZE, 0);
    ct_failure_id f = fail("k", bytes(A + SIZE - 16, 32));
    cr_assert_eq(check(bytes(D, 16)), CT_OK, "the neighbour's bytes were never this work's");
    cr_assert_eq(check(bytes(A, SIZE + 16)), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, 16);
    ct_range w = bytes(A, 2 * SIZE);
    ct_written(s, &w, 1);
    cr_assert_not(live(f));
}

Test(taint, addresses_nobody_allocated_are_never_refused)
{
    cr_assert_eq(fail("k", bytes(NOWHERE, 64)), 1);
    cr_assert_eq(ct_store_live_failures(s), 0, "nothing carries it");
    cr_assert_not(ct_store_tainted(s));
    ct_range r[3] = {bytes(NOWHERE, 8), whole(A), bytes(NOWHERE + 8, 8)};
    cr_assert_eq(ct_check_written(s, r, 3, &refusal), CT_OK);
    fail("k", whole(A));
    cr_assert_eq(ct_check_written(s, r, 3, &refusal), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, SIZE, "only the known allocation's bytes count");
}

Test(taint, a_refusal_names_every_failure_once_root_first)
{
    const char *kernels[10] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"};
    ct_failure_id ids[10];
    for (int i = 9; i >= 0; i--)
        ids[i] = fail(kernels[i], bytes(A + 16 * (uint64_t)i, 16));
    fail("k9", bytes(B, 16)); /* k9 again, elsewhere: still one failure */
    ct_range r[2] = {whole(A), whole(B)};
    cr_assert_eq(ct_check_written(s, r, 2, &refusal), CT_ETAINTED);
    cr_assert_eq(refusal.n_failures, 10);
    cr_assert_eq(refusal.n_kept, CT_REFUSAL_MAX_FAILURES);
    cr_assert_eq(refusal.failures[0].id, ids[9], "the root cause is the oldest");
    for (size_t i = 1; i < refusal.n_kept; i++)
        cr_assert_lt(refusal.failures[i - 1].id, refusal.failures[i].id);
    cr_assert_eq(refusal.tainted_bytes, 176);
}

Test(taint, pitched_rows_are_surveyed_exactly_gaps_left_out)
{
    ct_failure_id f = fail("k", whole(A));
    ct_rows rows = {.addr = A, .width = 16, .pitch = 64, .height = 3, .slice = 0, .depth = 1};
    cr_assert_eq(ct_check_rows_written(s, &rows, &refusal), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, 48, "three rows of 16 bytes, not the 144-byte span");
    cr_assert_eq(refusal.failures[0].id, f);
    ct_rows slices = {.addr = A + 8, .width = 8, .pitch = 16, .height = 2, .slice = 128, .depth = 2};
    cr_assert_eq(ct_check_rows_written(s, &slices, &refusal), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, 32);
    /* Bytes between the rows rewritten, the rows themselves not: still refused;
     * the rows rewritten and only the gaps left tainted: served. */
    ct_range gaps[] = {bytes(A + 16, 48), bytes(A + 80, 48)};
    ct_written(s, gaps, 2);
    cr_assert_eq(ct_check_rows_written(s, &rows, &refusal), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, 48);
    ct_range row_bytes[] = {bytes(A, 16), bytes(A + 64, 16), bytes(A + 128, 16)};
    ct_written(s, row_bytes, 3);
    cr_assert_eq(ct_check_rows_written(s, &rows, &refusal), CT_OK);
    cr_assert_eq(refusal.tainted_bytes, 0);
    cr_assert_eq(check(bytes(A, 160)), CT_ETAINTED, "the span past the last row still carries it");
    cr_assert_eq(ct_check_rows_written(s, &rows, NULL), CT_EINVAL);
}

Test(taint, check_written_without_a_refusal_still_answers)
{
    ct_range a = whole(A);
    cr_assert_eq(ct_check_written(s, &a, 1, NULL), CT_OK);
    fail("k", whole(A));
    cr_assert_eq(ct_check_written(s, &a, 1, NULL), CT_ETAINTED);
}

/* --- allocations ------------------------------------------------------- */

Test(taint, freeing_an_allocation_releases_its_claims)
{
    ct_failure_id f = fail("k", whole(A));
    cr_assert_eq(ct_store_free_alloc(s, A), CT_OK);
    cr_assert_not(live(f));
    cr_assert_not(ct_store_tainted(s));
    cr_assert_eq(ct_store_free_alloc(s, A), CT_ENOENT);
    cr_assert_eq(ct_store_alloc_count(s), 2);
}

Test(taint, an_owner_gone_takes_its_allocations_and_their_claims)
{
    const uint64_t ctx = 0xc0, other = 0xc1;
    cr_assert_eq(ct_store_alloc(s, 0x40000, SIZE, ctx), CT_OK);
    cr_assert_eq(ct_store_alloc(s, 0x50000, SIZE, ctx), CT_OK);
    cr_assert_eq(ct_store_alloc(s, 0x60000, SIZE, other), CT_OK);
    ct_failure_id gone = fail("k", whole(0x40000));
    ct_range both[] = {whole(0x50000), whole(0x60000)};
    ct_failure_desc d = failure_of("k2", ERR_LAUNCH);
    ct_failure_id split = ct_taint(s, &d, both, 2, NULL);
    cr_assert_eq(ct_store_forget_owner(s, ctx), 2);
    cr_assert_not(live(gone), "no byte carries it any more");
    cr_assert(live(split), "the other owner's allocation still carries it");
    cr_assert_eq(check(whole(0x40000)), CT_OK, "an address nobody owns now is never refused");
    cr_assert_eq(check(whole(0x60000)), CT_ETAINTED);
    cr_assert_eq(ct_store_alloc_count(s), 4);
    cr_assert_eq(ct_store_forget_owner(s, 0), 0, "allocations of no known owner stay");
    cr_assert_eq(ct_store_forget_owner(s, other), 1);
    cr_assert_not(live(split));
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, an_allocation_replaced_by_overlap_releases_its_claims)
{
    ct_failure_id f = fail("k", whole(A));
    cr_assert_eq(ct_store_alloc(s, A + 128, SIZE, 0), CT_OK); /* we missed a free */
    cr_assert_not(live(f));
    cr_assert_eq(check(bytes(A + 128, SIZE)), CT_OK);
}

Test(taint, resolve_reports_the_allocation)
{
    uint64_t base = 0, size = 0;
    cr_assert(ct_store_resolve(s, B + 17, &base, &size));
    cr_assert_eq(base, B);
    cr_assert_eq(size, SIZE);
    cr_assert(ct_store_resolve(s, B, NULL, NULL));
    cr_assert_not(ct_store_resolve(s, NOWHERE, &base, &size));
}

Test(taint, many_claims_in_one_allocation_spill_and_come_back)
{
    size_t before = ct_store_bytes(s);
    ct_failure_id ids[16];
    for (uint64_t i = 0; i < 16; i++)
        ids[i] = fail(i % 2 ? "odd" : "even", bytes(A + 16 * i, 8));
    cr_assert_eq(ct_store_live_failures(s), 2);
    cr_assert_gt(ct_store_bytes(s), before);
    cr_assert_eq(check(whole(A)), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, 128);
    ct_range w = whole(A);
    ct_written(s, &w, 1);
    cr_assert_not(live(ids[0]));
    cr_assert_not(live(ids[1]));
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, intern_keeps_one_copy_of_each_name)
{
    char buf[] = "saxpy(int, float, float const*, float*)";
    const char *a = ct_store_intern(s, buf);
    cr_assert_str_eq(a, buf);
    cr_assert_neq(a, buf);
    buf[0] = 'S';
    cr_assert_str_eq(a, "saxpy(int, float, float const*, float*)");
    cr_assert_eq(ct_store_intern(s, "saxpy(int, float, float const*, float*)"), a);
    cr_assert_neq(ct_store_intern(s, "gemm"), a);
    cr_assert_null(ct_store_intern(s, NULL));
}

Test(taint, null_arguments_are_refused_not_crashed_on)
{
    ct_failure_desc d = failure_of("k", ERR_LAUNCH);
    ct_range w = whole(A);
    cr_assert_null(ct_store_intern(NULL, "x"));
    cr_assert_eq(ct_store_alloc(NULL, A, 1, 0), CT_EINVAL);
    cr_assert_eq(ct_store_free_alloc(NULL, A), CT_EINVAL);
    cr_assert_not(ct_store_resolve(NULL, A, NULL, NULL));
    cr_assert_eq(ct_store_alloc_count(NULL), 0);
    cr_assert_eq(ct_store_bytes(NULL), 0);
    cr_assert_not(ct_store_tainted(NULL));
    cr_assert_eq(ct_enter_write(NULL, &w, 1, scope_of(d.api, d.error)), 0);
    cr_assert_eq(ct_enter_write(s, NULL, 1, scope_of(d.api, d.error)), 0);
    cr_assert_eq(ct_exit_write(NULL, 1, &w, 1, &d, NULL), 0);
    cr_assert_eq(ct_taint(NULL, &d, &w, 1, NULL), 0);
    cr_assert_eq(ct_taint(s, NULL, &w, 1, NULL), 0);
    cr_assert_neq(ct_taint(s, &d, NULL, 1, NULL), 0);
    cr_assert_eq(ct_read_failure(NULL, &w, 1, NULL), 0);
    cr_assert_eq(ct_read_failure(s, NULL, 1, NULL), 0);
    ct_propagate(NULL, 1, NULL, &w, 1);
    ct_propagate(s, 0, NULL, NULL, 1);
    ct_written(NULL, &w, 1);
    ct_written(s, NULL, 1);
    cr_assert_eq(ct_check_written(NULL, &w, 1, &refusal), CT_EINVAL);
    cr_assert_eq(ct_check_written(s, NULL, 1, &refusal), CT_EINVAL);
    cr_assert_eq(ct_check_written(s, NULL, 0, &refusal), CT_OK);
    cr_assert_not(ct_failure_get(NULL, 1, NULL));
    cr_assert_not(ct_failure_get(s, 0, NULL));
    cr_assert_eq(ct_store_live_failures(NULL), 0);
    ct_store_atfork_child(NULL);
    ct_store_free(NULL);
}

/* --- the named behaviours of issue 2 ----------------------------------- */

Test(taint, two_chains_sharing_no_allocation_never_contaminate_each_other)
{
    /* chain 1: A -> B; chain 2: C -> D, clean. */
    const uint64_t D = 0x40000;
    ct_store_alloc(s, D, SIZE, 0);
    ct_failure_id f = fail("producer1", whole(A));
    cr_assert_eq(launch("consumer1", 1, whole(A), whole(B)), f);
    cr_assert_eq(launch("consumer2", 2, whole(C), whole(D)), 0);
    cr_assert_eq(check(whole(D)), CT_OK);
    cr_assert_eq(check(whole(C)), CT_OK);
    cr_assert_eq(check(whole(B)), CT_ETAINTED);
    cr_assert_eq(refusal.n_failures, 1);
    cr_assert_eq(refusal.failures[0].id, f);
}

Test(taint, a_read_two_hops_downstream_names_the_root_and_both_skips)
{
    ct_failure_id root = fail("producer", whole(A));
    cr_assert_eq(launch("hop1", 10, whole(A), whole(B)), root);
    cr_assert_eq(launch("hop2", 11, whole(B), whole(C)), root);
    cr_assert_eq(check(whole(C)), CT_ETAINTED);
    cr_assert_eq(refusal.n_failures, 1);
    const ct_failure_info *why = &refusal.failures[0];
    cr_assert_eq(why->id, root);
    cr_assert_str_eq(why->desc.kernel, "producer");
    cr_assert_eq(why->n_skips, 2);
    cr_assert_str_eq(why->skips[0].kernel, "hop1");
    cr_assert_eq(why->skips[0].needed, A);
    cr_assert_str_eq(why->skips[1].kernel, "hop2");
    cr_assert_eq(why->skips[1].needed, B);
    cr_assert_eq(why->path_len, 2, "the path to C passes both skips");
    cr_assert_eq(why->path[0], 0);
    cr_assert_eq(why->path[1], 1);
}

Test(taint, a_read_names_only_the_skips_on_its_own_way_back)
{
    ct_failure_id root = fail("producer", whole(A));
    cr_assert_eq(launch("to_b", 10, whole(A), whole(B)), root);
    cr_assert_eq(launch("to_c", 11, whole(A), whole(C)), root);
    cr_assert_eq(check(whole(A)), CT_ETAINTED);
    cr_assert_eq(refusal.failures[0].n_skips, 2, "the failure knows both skips");
    cr_assert_eq(refusal.failures[0].path_len, 0, "but A was written by the root itself");
    cr_assert_eq(check(whole(B)), CT_ETAINTED);
    cr_assert_eq(refusal.failures[0].path_len, 1);
    cr_assert_str_eq(refusal.failures[0].skips[refusal.failures[0].path[0]].kernel, "to_b");
    cr_assert_eq(check(whole(C)), CT_ETAINTED);
    cr_assert_eq(refusal.failures[0].path_len, 1);
    cr_assert_str_eq(refusal.failures[0].skips[refusal.failures[0].path[0]].kernel, "to_c");
    cr_assert_not(refusal.failures[0].path_cut);
}

Test(taint, a_rewrite_makes_a_tainted_range_readable_again)
{
    fail("k", bytes(A + 32, 64));
    cr_assert_eq(check(bytes(A + 32, 64)), CT_ETAINTED);
    ct_range rewrite = bytes(A + 32, 64);
    ct_written(s, &rewrite, 1);
    cr_assert_eq(check(bytes(A + 32, 64)), CT_OK);
    cr_assert_eq(check(whole(A)), CT_OK);
    cr_assert_eq(ct_store_live_failures(s), 0);
}

Test(taint, a_loop_failing_the_same_way_a_million_times_holds_one_failure)
{
    ct_scope_desc prov = scope_of("step", 0);
    ct_failure_desc failed = failure_of("step", ERR_LAUNCH);
    ct_range out = whole(A);
    ct_failure_id first = 0;
    size_t bytes_after_first = 0;
    for (int i = 0; i < 1000000; i++) {
        ct_failure_id p = ct_enter_write(s, &out, 1, prov);
        ct_occurrence occ = {0};
        ct_failure_id f = ct_exit_write(s, p, &out, 1, &failed, &occ);
        if (i == 0) {
            first = f;
            bytes_after_first = ct_store_bytes(s);
            cr_assert(occ.is_new);
        } else {
            cr_assert_eq(f, first, "turn %d minted a new failure", i);
            cr_assert_not(occ.is_new);
        }
    }
    cr_assert_eq(occurrences(first), 1000000);
    cr_assert_eq(ct_store_live_failures(s), 1);
    cr_assert_eq(ct_store_bytes(s), bytes_after_first, "the loop grew the store");
}

Test(taint, a_provisional_failure_left_by_a_scope_that_never_exits_fails_the_read)
{
    ct_scope_desc prov = scope_of("crashed_mid_call", ERR_LAUNCH);
    ct_range w = bytes(A, 64);
    ct_failure_id p = ct_enter_write(s, &w, 1, prov);
    /* ... the call never returns: no ct_exit_write ... */
    cr_assert_eq(check(bytes(A + 8, 8)), CT_ETAINTED);
    cr_assert_eq(refusal.failures[0].id, p);
    cr_assert(refusal.failures[0].provisional);
    cr_assert_eq(refusal.failures[0].desc.error, ERR_LAUNCH);
    cr_assert_eq(launch("next", 1, whole(A), whole(B)), p, "and downstream work is skipped");
}

/* --- the inline scope of one range (scope.h) ------------------------------
 * What a linear write opens and settles without calling core: the same
 * scope as ct_enter_write's, and every case it does not handle itself
 * handed to ct_enter_write / ct_exit_write. */

static ct_failure_id enter_one(ct_range w)
{
    ct_scope_gate g = ct_store_scope_gate(s);
    return ct_scope_enter_one(&g, w, scope_of("cuMemcpyHtoD_v2", ERR_OOM));
}

static void exit_one(ct_failure_id id, ct_range w)
{
    ct_scope_gate g = ct_store_scope_gate(s);
    ct_scope_exit_one(&g, id, w);
}

Test(taint, an_inline_scope_nobody_looked_at_leaves_nothing)
{
    ct_range w = bytes(A, 64);
    ct_failure_id p = enter_one(w);
    cr_assert(ct_scope_waits_in_slot(p), "it waits in the thread's slot");
    cr_assert(ct_store_tainted(s), "an open scope is taint the checks must look at");
    exit_one(p, w);
    cr_assert_not(ct_store_tainted(s), "the slot was freed and the open count lowered");
    cr_assert_eq(ct_store_live_failures(s), 0);
    ct_failure_id q = enter_one(w);
    cr_assert(ct_scope_waits_in_slot(q));
    cr_assert_neq(q, p, "each scope has an id of its own");
    cr_assert_eq(q % CT_SCOPE_SLOTS, p % CT_SCOPE_SLOTS, "in the same slot");
    exit_one(q, w);
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, a_read_of_an_open_inline_scope_is_refused_and_its_exit_settles_it)
{
    ct_range w = bytes(A, 64);
    ct_failure_id p = enter_one(w);
    int error = 0;
    cr_assert_eq(ct_read_failure(s, &(ct_range){A + 8, 8}, 1, &error), p, "the look showed the scope");
    cr_assert_eq(error, ERR_OOM);
    cr_assert_eq(check(bytes(A + 64, 8)), CT_OK, "bytes the scope does not write are readable");
    exit_one(p, w); /* shown: settled under the lock */
    cr_assert_eq(check(bytes(A, SIZE)), CT_OK);
    cr_assert_not(live(p));
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, an_inline_scope_over_an_older_failure_releases_it)
{
    ct_failure_id older = fail("k", bytes(A, 32));
    ct_range w = bytes(A, 64);
    ct_failure_id p = enter_one(w);
    exit_one(p, w);
    cr_assert_eq(check(bytes(A, SIZE)), CT_OK, "the write replaced the failed bytes");
    cr_assert_not(live(older));
    cr_assert_eq(ct_store_live_failures(s), 0);
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, an_inline_scope_inside_another_is_placed_and_both_settle)
{
    ct_range outer = bytes(A, 64), inner = bytes(B, 64);
    ct_failure_id o = enter_one(outer);
    ct_failure_id i = enter_one(inner);
    cr_assert(ct_scope_waits_in_slot(o));
    cr_assert_not(ct_scope_waits_in_slot(i), "the slot is busy: placed");
    exit_one(i, inner);
    cr_assert_eq(check(bytes(B, SIZE)), CT_OK);
    cr_assert_eq(check(bytes(A, 4)), CT_ETAINTED, "the outer write is still under way");
    cr_assert_eq(refusal.failures[0].id, o);
    exit_one(o, outer);
    cr_assert_eq(check(bytes(A, SIZE)), CT_OK);
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, an_inline_scope_and_one_through_enter_write_share_the_slot)
{
    ct_range w = bytes(C, 16);
    ct_failure_id p = enter_one(w);
    ct_failure_id q = ct_enter_write(s, &w, 1, scope_of("cuMemsetD8_v2", ERR_OOM));
    cr_assert_not(ct_scope_waits_in_slot(q), "the inline scope holds the slot");
    cr_assert_eq(ct_exit_write(s, q, &w, 1, NULL, NULL), 0);
    cr_assert_eq(ct_exit_write(s, p, &w, 1, NULL, NULL), 0, "ct_exit_write settles an inline scope");
    cr_assert_not(ct_store_tainted(s));
    ct_failure_id r = ct_enter_write(s, &w, 1, scope_of("cuMemsetD8_v2", ERR_OOM));
    cr_assert(ct_scope_waits_in_slot(r), "the slot is idle again");
    exit_one(r, w); /* and the inline exit settles one of ct_enter_write */
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, a_gate_without_a_store_opens_nothing)
{
    ct_scope_gate g = ct_store_scope_gate(NULL);
    cr_assert_eq(g.serial, CT_SCOPE_NO_STORE);
    cr_assert_eq(ct_scope_enter_one(&g, bytes(A, 8), scope_of("cuMemcpyHtoD_v2", ERR_OOM)), 0);
    ct_scope_exit_one(&g, 0, bytes(A, 8));
    ct_scope_exit_one(&g, CT_FIRST_PROVISIONAL_ID, bytes(A, 8)); /* a bogus id */
    cr_assert_not(ct_store_tainted(s), "the store it is not is untouched");
}

/* A thread's slot is in one store: a gate of another store does not pass
 * it, whatever its address. */
Test(taint, an_inline_scope_in_a_second_store_is_its_own)
{
    ct_store *other = ct_store_new(ERR_UNKNOWN);
    cr_assert_not_null(other);
    cr_assert_eq(ct_store_alloc(other, A, SIZE, 0), CT_OK);
    ct_range w = bytes(A, 64);
    ct_failure_id p = enter_one(w);
    ct_scope_gate og = ct_store_scope_gate(other);
    ct_failure_id q = ct_scope_enter_one(&og, w, scope_of("cuMemcpyHtoD_v2", ERR_LAUNCH));
    cr_assert(ct_store_tainted(other));
    int error = 0;
    cr_assert_eq(ct_read_failure(other, &w, 1, &error), q);
    cr_assert_eq(error, ERR_LAUNCH, "the other store's scope, not this one's");
    ct_scope_exit_one(&og, q, w);
    cr_assert_not(ct_store_tainted(other));
    cr_assert(ct_store_tainted(s), "this store's scope is still open");
    exit_one(p, w);
    cr_assert_not(ct_store_tainted(s));
    ct_store_free(other);
}

/* --- scopes another thread meets ----------------------------------------
 * A scope of a few ranges stays out of the store until someone looks; these
 * are the looks from another thread, while the scope is open, after a
 * failure, and after a thread that never exits its scope. */

typedef struct scope_thread {
    ct_range w;
    ct_scope_desc prov;
    ct_failure_id id;
    atomic_int step; /* 1: entered; 2: the looker is done; 3: exited */
    bool exits;
    const ct_failure_desc *failed;
} scope_thread;

static void wait_step(atomic_int *step, int want)
{
    while (atomic_load(step) < want)
        sched_yield();
}

static void *open_scope(void *arg)
{
    scope_thread *t = arg;
    t->id = ct_enter_write(s, &t->w, 1, t->prov);
    atomic_store(&t->step, 1);
    if (!t->exits)
        return NULL; /* the call never returns: the scope stays open */
    wait_step(&t->step, 2);
    ct_exit_write(s, t->id, &t->w, 1, t->failed, NULL);
    atomic_store(&t->step, 3);
    return NULL;
}

static pthread_t start_scope(scope_thread *t)
{
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, open_scope, t), 0);
    wait_step(&t->step, 1);
    return th;
}

Test(taint, a_read_meeting_another_threads_open_scope_is_refused_with_its_provisional_error)
{
    scope_thread t = {.w = bytes(A, 64), .prov = scope_of("copy", ERR_OOM), .exits = true};
    pthread_t th = start_scope(&t);
    cr_assert(ct_store_tainted(s), "an open scope is taint a launch must look at");
    int error = 0;
    cr_assert_eq(ct_read_failure(s, &(ct_range){A + 8, 8}, 1, &error), t.id, "the lock-free check looked past it");
    cr_assert_eq(error, ERR_OOM);
    cr_assert_eq(check(bytes(A + 60, 8)), CT_ETAINTED);
    cr_assert_eq(refusal.n_failures, 1);
    cr_assert(refusal.failures[0].provisional);
    cr_assert_eq(refusal.failures[0].desc.error, ERR_OOM);
    cr_assert_eq(check(bytes(A + 64, 8)), CT_OK, "bytes the scope does not write are readable");
    atomic_store(&t.step, 2);
    pthread_join(th, NULL);
    cr_assert_eq(check(bytes(A, SIZE)), CT_OK, "the write succeeded");
    cr_assert_eq(ct_store_live_failures(s), 0);
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, a_failed_write_folds_whether_or_not_another_thread_looked_meanwhile)
{
    ct_failure_desc failed = failure_of("copy", ERR_LAUNCH);
    ct_failure_id first = 0;
    for (int turn = 0; turn < 4; turn++) {
        scope_thread t = {.w = bytes(B, 32), .prov = scope_of("copy", ERR_OOM), .exits = true, .failed = &failed};
        pthread_t th = start_scope(&t);
        if (turn % 2) /* a look shows the scope: it displaces, and pins, the first failure */
            cr_assert_eq(check(bytes(B, 8)), CT_ETAINTED);
        atomic_store(&t.step, 2);
        pthread_join(th, NULL);
        cr_assert_eq(check(bytes(B, 8)), CT_ETAINTED);
        cr_assert_not(refusal.failures[0].provisional, "turn %d", turn);
        if (turn == 0)
            first = refusal.failures[0].id;
        cr_assert_eq(refusal.failures[0].id, first, "turn %d minted a new failure", turn);
    }
    cr_assert_eq(occurrences(first), 4);
    cr_assert_eq(ct_store_live_failures(s), 1);
}

/* B's first bytes carry an older failure of another kind, the next ones
 * one of the kind about to fail.  Placed at entry, the scope would displace
 * both and pin the older, so the failure is a new one, not a fold into the
 * second: the same when nobody looked and the scope waited in its slot. */
Test(taint, a_failed_scope_folds_only_into_the_failure_its_placement_pins)
{
    ct_range both = bytes(B, 32);
    ct_failure_id older = fail("fill", bytes(B, 16));
    ct_failure_id same = fail("copy", bytes(B + 16, 16));
    ct_scope_desc prov = scope_of("copy", ERR_OOM);
    ct_failure_desc failed = failure_of("copy", ERR_LAUNCH);
    ct_failure_id p = ct_enter_write(s, &both, 1, prov);
    ct_occurrence occ;
    ct_failure_id id = ct_exit_write(s, p, &both, 1, &failed, &occ);
    cr_assert(occ.is_new, "folded into failure %u", id);
    cr_assert(id != same && id != older);
    cr_assert_not(live(same), "displaced and not pinned");
    cr_assert_not(live(older), "pinned until the scope exited");
    cr_assert_eq(check(both), CT_ETAINTED);
    cr_assert_eq(refusal.failures[0].id, id);
}

Test(taint, a_thread_that_never_exits_its_scope_leaves_its_bytes_refused)
{
    scope_thread t = {.w = bytes(C, 16), .prov = scope_of("copy", ERR_OOM)};
    pthread_t th = start_scope(&t);
    pthread_join(th, NULL);
    ct_range in = bytes(C, 4);
    int error = 0;
    cr_assert_eq(ct_read_failure(s, &in, 1, &error), t.id);
    cr_assert_eq(error, ERR_OOM);
    cr_assert_eq(check(in), CT_ETAINTED);
    cr_assert(refusal.failures[0].provisional);
    cr_assert_eq(launch("next", 1, in, whole(A)), t.id, "and downstream work is skipped");
    cr_assert_eq(check(bytes(A, 4)), CT_ETAINTED);
    cr_assert_eq(check(bytes(C + 16, 4)), CT_OK);
}

/* --- the happy path's cost --------------------------------------------- */

/* A sanitizer owns malloc; it cannot be wrapped too. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_OWNS_THE_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SANITIZER_OWNS_THE_HEAP 1
#endif
#endif

#ifndef SANITIZER_OWNS_THE_HEAP
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static atomic_long heap_calls;
static atomic_bool counting_heap_calls, heap_says_no;

/* Counts calls while asked to, and refuses them while asked to. */
static bool heap_call(void)
{
    if (atomic_load(&counting_heap_calls))
        atomic_fetch_add(&heap_calls, 1);
    return !atomic_load(&heap_says_no);
}

void *malloc(size_t n)
{
    return heap_call() ? __libc_malloc(n) : NULL;
}
void *calloc(size_t n, size_t size)
{
    return heap_call() ? __libc_calloc(n, size) : NULL;
}
void *realloc(void *p, size_t n)
{
    return heap_call() ? __libc_realloc(p, n) : NULL;
}

/* Valgrind replaces even these wrappers; the tests below then skip. */
static void require_wrapped_heap(void)
{
    void *(*volatile heap)(size_t) = malloc; /* as core calls it: not inlined */
    atomic_store(&heap_says_no, true);
    void *probe = heap(1);
    atomic_store(&heap_says_no, false);
    if (probe) {
        free(probe);
        cr_skip_test("malloc is not wrapped here (valgrind?)");
    }
}

static void happy_turn(void)
{
    ct_scope_desc prov = scope_of("k", ERR_LAUNCH);
    ct_range in = whole(A), out = bytes(B + 8, 64);
    ct_failure_id p = ct_enter_write(s, &out, 1, prov);
    ct_exit_write(s, p, &out, 1, NULL, NULL);
    ct_read_failure(s, &in, 1, NULL);
    ct_written(s, &out, 1);
    ct_check_written(s, &out, 1, &refusal);
}

Test(taint, a_warm_happy_path_never_calls_malloc)
{
    require_wrapped_heap();
    fail("elsewhere", whole(C)); /* taint present, on memory not touched */
    happy_turn();
    atomic_store(&counting_heap_calls, true);
    for (int i = 0; i < 1000; i++)
        happy_turn();
    atomic_store(&counting_heap_calls, false);
    cr_assert_eq(atomic_load(&heap_calls), 0, "%ld heap calls", atomic_load(&heap_calls));
}

Test(taint, out_of_memory_widens_a_claim_instead_of_dropping_one)
{
    require_wrapped_heap();
    ct_failure_id f1 = fail("first", bytes(A, 8));
    atomic_store(&heap_says_no, true);
    ct_failure_id f2 = fail("second", bytes(A + 16, 8)); /* a second claim must spill */
    atomic_store(&heap_says_no, false);
    cr_assert_eq(check(bytes(A, 24)), CT_ETAINTED);
    cr_assert_eq(refusal.tainted_bytes, 24, "the hull, gap included");
    cr_assert_not(live(f1), "detail is what is lost");
    ct_range w = bytes(A, 24);
    ct_written(s, &w, 1);
    cr_assert_not(live(f2));
    cr_assert_not(ct_store_tainted(s));
}

Test(taint, out_of_memory_leaves_a_split_claim_tainted)
{
    require_wrapped_heap();
    ct_failure_id f[4];
    for (uint64_t i = 0; i < 4; i++) /* fills the spilled block */
        f[i] = fail(i % 2 ? "odd" : "even", bytes(A + 32 * i, 16));
    atomic_store(&heap_says_no, true);
    ct_range middle = bytes(A + 4, 8); /* would split claim 0 into two */
    ct_written(s, &middle, 1);
    atomic_store(&heap_says_no, false);
    cr_assert_eq(check(bytes(A + 4, 8)), CT_ETAINTED, "still tainted, never less");
    ct_range w = whole(A);
    ct_written(s, &w, 1);
    cr_assert_not(live(f[0]));
    cr_assert_not(live(f[1]));
    cr_assert_eq(ct_store_live_failures(s), 0);
}

Test(taint, out_of_memory_for_a_record_still_taints)
{
    require_wrapped_heap();
    ct_store_free(s);
    s = ct_store_new(ERR_UNKNOWN);
    ct_store_alloc(s, A, SIZE, 0);
    ct_store_alloc(s, B, SIZE, 0);
    atomic_store(&heap_says_no, true);
    ct_occurrence occ = {0};
    ct_failure_desc d1 = failure_of("one", ERR_LAUNCH), d2 = failure_of("two", ERR_OOM);
    ct_range a = whole(A), b = whole(B);
    ct_failure_id f = ct_taint(s, &d1, &a, 1, &occ);
    cr_assert(occ.is_new);
    cr_assert_eq(ct_taint(s, &d2, &b, 1, &occ), f, "everything lands on the stand-in");
    cr_assert_not(occ.is_new);
    cr_assert_null(ct_store_intern(s, "a name"));
    atomic_store(&heap_says_no, false);
    cr_assert_eq(check(whole(B)), CT_ETAINTED);
    cr_assert_eq(refusal.failures[0].id, f);
    cr_assert_eq(refusal.failures[0].desc.error, ERR_LAUNCH);
    cr_assert_eq(refusal.failures[0].occurrences, 2);
    ct_written(s, &a, 1);
    ct_written(s, &b, 1);
    cr_assert_eq(ct_store_live_failures(s), 0);
    cr_assert_gt(fail("one", whole(A)), f, "the stand-in's id is not reused");
}

Test(taint, out_of_memory_refuses_an_allocation_and_changes_nothing)
{
    require_wrapped_heap();
    size_t ok = 3;
    atomic_store(&heap_says_no, true);
    for (uint64_t i = 0; i < 1000; i++) {
        int rc = ct_store_alloc(s, 0x1000000 + 0x1000 * i, 0x800, 0);
        cr_assert(rc == CT_OK || rc == CT_ENOMEM);
        ok += rc == CT_OK;
    }
    atomic_store(&heap_says_no, false);
    cr_assert_lt(ok, 1003, "the pool must run dry within 1000");
    cr_assert_eq(ct_store_alloc_count(s), ok);
    cr_assert(ct_store_resolve(s, B + 1, NULL, NULL));
}
#endif

/* --- threads ----------------------------------------------------------- */

#define THREADS 8
#define TURNS 2000

static atomic_int wrong_answers; /* counted, since asserting off the test thread is unsafe */

static void *worker(void *arg)
{
    uint64_t own = 0x100000u * (1 + (uintptr_t)arg);
    ct_failure_desc d = failure_of("worker", ERR_LAUNCH);
    for (int i = 0; i < TURNS; i++) {
        ct_store_alloc(s, own, SIZE, 0);
        ct_range w = bytes(own + (uint64_t)(i % 64), 32);
        ct_failure_id p = ct_enter_write(s, &w, 1, scope_of(d.api, d.error));
        if (i % 3 == 0) {
            ct_exit_write(s, p, &w, 1, &d, NULL);
            wrong_answers += ct_check_written(s, &w, 1, NULL) != CT_ETAINTED;
        } else {
            ct_exit_write(s, p, &w, 1, NULL, NULL);
            wrong_answers += ct_check_written(s, &w, 1, NULL) != CT_OK;
        }
        if (i % 5 == 0)
            ct_store_free_alloc(s, own);
    }
    ct_store_free_alloc(s, own);
    return NULL;
}

Test(taint, threads_working_on_their_own_memory_agree)
{
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    cr_assert_eq(atomic_load(&wrong_answers), 0);
    cr_assert_eq(ct_store_live_failures(s), 0);
    cr_assert_not(ct_store_tainted(s));
    cr_assert_eq(ct_store_alloc_count(s), 3);
}

/* ---- runs: virtual memory mappings side by side ----------------------------- */

#define M 0x100000u /* a reservation of mappings of 256 bytes each */
#define OWNER 0x7000u

Test(taint, mappings_side_by_side_of_one_owner_are_one_run)
{
    cr_assert_eq(ct_store_map(s, M + SIZE, SIZE, OWNER), CT_OK);
    cr_assert_eq(ct_store_map(s, M, SIZE, OWNER), CT_OK);            /* joins below the first */
    cr_assert_eq(ct_store_map(s, M + 3 * SIZE, SIZE, OWNER), CT_OK); /* a gap: a run of its own */
    cr_assert_eq(ct_store_map(s, M + 2 * SIZE, SIZE, OWNER), CT_OK); /* fills it: all four join */
    uint64_t base = 0, size = 0;
    cr_assert(ct_store_resolve(s, M + 3 * SIZE + 5, &base, &size));
    cr_assert_eq(base, M);
    cr_assert_eq(size, 4 * SIZE);
    /* A kernel pointer in the first mapping reaches the last. */
    fail("k", whole(M + 10));
    cr_assert_eq(check(bytes(M + 4 * SIZE - 1, 1)), CT_ETAINTED);
    cr_assert_eq(check(bytes(M, 10)), CT_OK);
}

Test(taint, mappings_of_another_owner_or_plain_allocations_never_join)
{
    cr_assert_eq(ct_store_map(s, M, SIZE, OWNER), CT_OK);
    cr_assert_eq(ct_store_map(s, M + SIZE, SIZE, OWNER + 1), CT_OK); /* another context's */
    cr_assert_eq(ct_store_alloc(s, A + SIZE, SIZE, OWNER), CT_OK);   /* cuMemAlloc beside A */
    cr_assert_eq(ct_store_map(s, A + 2 * SIZE, SIZE, OWNER), CT_OK); /* a mapping beside that */
    fail("k", whole(M));
    cr_assert_eq(check(bytes(M + SIZE, 1)), CT_OK, "another owner's mapping joined");
    fail("k2", whole(A + SIZE));
    cr_assert_eq(check(bytes(A + 2 * SIZE, 1)), CT_OK, "a mapping joined a plain allocation");
}

Test(taint, a_mapping_joining_a_run_keeps_the_claims_of_both)
{
    cr_assert_eq(ct_store_map(s, M + SIZE, SIZE, OWNER), CT_OK);
    ct_failure_id above = fail("above", bytes(M + SIZE + 8, 8));
    cr_assert_eq(ct_store_map(s, M, SIZE, OWNER), CT_OK);
    ct_failure_id below = fail("below", bytes(M + 8, 8));
    cr_assert_eq(check(bytes(M + SIZE + 8, 8)), CT_ETAINTED);
    cr_assert_eq(refusal.failures[0].id, above);
    cr_assert_eq(check(bytes(M + 8, 8)), CT_ETAINTED);
    cr_assert_eq(refusal.failures[0].id, below);
    cr_assert_eq(check(bytes(M + SIZE, 8)), CT_OK);
}

Test(taint, an_unmap_carves_only_its_own_bytes_out_of_a_run)
{
    for (unsigned i = 0; i < 4; i++)
        cr_assert_eq(ct_store_map(s, M + i * SIZE, SIZE, OWNER), CT_OK);
    ct_failure_id id = fail("k", whole(M));
    /* The second mapping goes: the first and the last two stay, tainted. */
    cr_assert_eq(ct_store_forget_range(s, M + SIZE, SIZE), 1);
    cr_assert(!ct_store_resolve(s, M + SIZE, NULL, NULL));
    uint64_t base = 0, size = 0;
    cr_assert(ct_store_resolve(s, M, &base, &size));
    cr_assert_eq(base, M);
    cr_assert_eq(size, SIZE);
    cr_assert(ct_store_resolve(s, M + 3 * SIZE, &base, &size));
    cr_assert_eq(base, M + 2 * SIZE);
    cr_assert_eq(size, 2 * SIZE);
    cr_assert_eq(check(bytes(M, SIZE)), CT_ETAINTED);
    cr_assert_eq(check(bytes(M + 2 * SIZE, 2 * SIZE)), CT_ETAINTED);
    cr_assert_eq(refusal.failures[0].id, id);
    /* The front and the back of what is left go too: the failure lives on
     * while a byte carries it, and goes with the last. */
    cr_assert_eq(ct_store_forget_range(s, M, SIZE), 1);
    cr_assert_eq(ct_store_forget_range(s, M + 3 * SIZE, SIZE), 1);
    cr_assert(live(id));
    cr_assert_eq(check(bytes(M + 2 * SIZE, SIZE)), CT_ETAINTED);
    cr_assert_eq(ct_store_forget_range(s, M + 2 * SIZE, SIZE), 1);
    cr_assert(!live(id), "no byte carries it any more");
    /* A plain allocation straddling a range is not the range's to end. */
    cr_assert_eq(ct_store_forget_range(s, A + 8, 16), 0);
    cr_assert(ct_store_resolve(s, A, NULL, NULL));
}

/* ---- regions: the program's own allocations inside one ---------------------- */

#define POOL 0x100000u
#define TENSOR 0x100u /* 16 tensors of one pool */

static void pool_of_16_regions(void)
{
    cr_assert_eq(ct_store_alloc(s, POOL, 16 * TENSOR, 0), CT_OK);
    for (unsigned i = 0; i < 16; i++)
        cr_assert_eq(ct_store_region_alloc(s, POOL + i * TENSOR, TENSOR), CT_REGION_DONE);
    cr_assert_eq(ct_store_region_count(s), 16);
}

Test(taint, a_kernel_pointer_into_a_region_runs_to_the_regions_end)
{
    pool_of_16_regions();
    fail("k", whole(POOL + 3 * TENSOR + 16));
    cr_assert_eq(check(bytes(POOL + 3 * TENSOR + 16, TENSOR - 16)), CT_ETAINTED);
    cr_assert_eq(check(bytes(POOL + 3 * TENSOR, 16)), CT_OK, "before the pointer");
    for (unsigned i = 4; i < 16; i++)
        cr_assert_eq(check(bytes(POOL + i * TENSOR, TENSOR)), CT_OK, "tensor %u is its own", i);
    cr_assert_eq(check(bytes(POOL, 16 * TENSOR)), CT_ETAINTED, "a read across regions is checked whole");
    ct_extent e;
    cr_assert(ct_store_extent(s, POOL + 5 * TENSOR, &e));
    cr_assert_eq(e.allocation, POOL);
    cr_assert_eq(e.end, POOL + 6 * TENSOR);
    cr_assert(e.in_region);
}

Test(taint, a_pointer_outside_every_region_runs_to_the_allocations_end)
{
    cr_assert_eq(ct_store_alloc(s, POOL, 16 * TENSOR, 0), CT_OK);
    cr_assert_eq(ct_store_region_alloc(s, POOL + 8 * TENSOR, TENSOR), CT_REGION_DONE);
    fail("k", whole(POOL + TENSOR));
    cr_assert_eq(check(bytes(POOL + 15 * TENSOR, TENSOR)), CT_ETAINTED, "nothing says where it stops");
    cr_assert_eq(check(bytes(POOL + 8 * TENSOR, TENSOR)), CT_ETAINTED, "a region after it is reached too");
}

Test(taint, a_region_taken_anew_starts_clean_and_a_freed_one_keeps_its_bytes)
{
    cr_assert_eq(ct_store_alloc(s, POOL, 16 * TENSOR, 0), CT_OK);
    cr_assert_eq(ct_store_region_alloc(s, POOL + 2 * TENSOR, TENSOR), CT_REGION_DONE);
    ct_failure_id id = fail("k", whole(POOL + 2 * TENSOR));
    cr_assert_eq(ct_store_region_free(s, POOL + 2 * TENSOR), CT_REGION_DONE);
    cr_assert_eq(check(bytes(POOL + 2 * TENSOR, TENSOR)), CT_ETAINTED, "given back, its bytes carry what they did");
    cr_assert_eq(check(bytes(POOL + 3 * TENSOR, TENSOR)), CT_OK);
    cr_assert_eq(ct_store_region_alloc(s, POOL + 2 * TENSOR, TENSOR), CT_REGION_DONE);
    cr_assert_eq(check(bytes(POOL + 2 * TENSOR, TENSOR)), CT_OK, "a new tensor holds nothing of the old");
    cr_assert_not(live(id), "no byte carries it any more");
}

Test(taint, region_misuse_changes_nothing)
{
    pool_of_16_regions();
    fail("k", whole(POOL + 3 * TENSOR));
    cr_assert_eq(ct_store_region_alloc(s, POOL + 3 * TENSOR + 8, 8), CT_REGION_OVERLAPS);
    cr_assert_eq(ct_store_region_alloc(s, POOL + 15 * TENSOR, 2 * TENSOR), CT_REGION_OUTSIDE, "past the end");
    cr_assert_eq(ct_store_region_alloc(s, NOWHERE, 8), CT_REGION_OUTSIDE);
    cr_assert_eq(ct_store_region_alloc(s, POOL, 0), CT_REGION_EMPTY);
    cr_assert_eq(ct_store_region_alloc(s, UINT64_MAX - 4, 8), CT_REGION_EMPTY);
    cr_assert_eq(ct_store_region_free(s, POOL + 3 * TENSOR + 8), CT_REGION_UNKNOWN, "not a region's base");
    cr_assert_eq(ct_store_region_free(s, NOWHERE), CT_REGION_UNKNOWN);
    cr_assert_eq(ct_store_region_count(s), 16);
    cr_assert_eq(check(bytes(POOL + 3 * TENSOR, TENSOR)), CT_ETAINTED, "the overlapping call cleaned nothing");
}

Test(taint, regions_go_with_the_allocation_that_holds_them)
{
    pool_of_16_regions();
    cr_assert_eq(ct_store_free_alloc(s, POOL), CT_OK);
    cr_assert_eq(ct_store_region_count(s), 0);
    cr_assert_eq(ct_store_alloc(s, POOL, 16 * TENSOR, 7), CT_OK);
    fail("k", whole(POOL + TENSOR));
    cr_assert_eq(check(bytes(POOL + 15 * TENSOR, TENSOR)), CT_ETAINTED, "no region of the freed pool survives");
    cr_assert_eq(ct_store_region_alloc(s, POOL + 8 * TENSOR, TENSOR), CT_REGION_DONE);
    ct_store_forget_owner(s, 7);
    cr_assert_eq(ct_store_region_count(s), 0, "its context destroyed");
    pool_of_16_regions();
    cr_assert_eq(ct_store_alloc(s, POOL + 4 * TENSOR, TENSOR, 0), CT_OK); /* a free cutaint missed */
    cr_assert_eq(ct_store_region_count(s), 0, "an allocation over the pool replaced it");
}

Test(taint, a_region_may_span_the_mappings_of_one_run)
{
    cr_assert_eq(ct_store_map(s, POOL, 4 * TENSOR, OWNER), CT_OK);
    cr_assert_eq(ct_store_map(s, POOL + 4 * TENSOR, 4 * TENSOR, OWNER), CT_OK);
    cr_assert_eq(ct_store_region_alloc(s, POOL + 3 * TENSOR, 2 * TENSOR), CT_REGION_DONE, "across the seam");
    fail("k", whole(POOL + 3 * TENSOR));
    cr_assert_eq(check(bytes(POOL + 4 * TENSOR, TENSOR)), CT_ETAINTED);
    cr_assert_eq(check(bytes(POOL + 5 * TENSOR, TENSOR)), CT_OK);
    ct_store_forget_range(s, POOL + 4 * TENSOR, 4 * TENSOR);
    cr_assert_eq(ct_store_region_count(s), 0, "half of it unmapped: the region is gone");
}

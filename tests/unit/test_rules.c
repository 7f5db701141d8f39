/*
 * test_rules.c - the decisions of core/rules.h on a real store: which reads
 * are refused (not those past the end of their allocation, not those whose
 * rows miss the carried bytes), exactly which host bytes a refusal poisons
 * (pitched 2D and 3D included), and when a copy, a launch or a graph
 * launch is skipped (not into untracked memory, not with no context
 * current) and which of a graph's reads names the skip.
 */
#include <criterion/criterion.h>

#include <string.h>

#include "ct_hash.h"
#include "ct_status.h"
#include "fftplans.h"
#include "rules.h"

#define A 0x10000u /* two allocations of 4 KiB */
#define B 0x20000u
#define NOWHERE 0x90000u
#define SIZE 4096u
#define ERR_LAUNCH 719
#define ERR_UNKNOWN 999

static ct_store *s;
static int context_asked;
static bool context_current;

static bool has_context(void)
{
    context_asked++;
    return context_current;
}

static void setup(void)
{
    s = ct_store_new(ERR_UNKNOWN);
    cr_assert_not_null(s);
    cr_assert_eq(ct_store_alloc(s, A, SIZE, 0), CT_OK);
    cr_assert_eq(ct_store_alloc(s, B, SIZE, 0), CT_OK);
    context_asked = 0;
    context_current = true;
}

static void teardown(void)
{
    ct_store_free(s);
}

TestSuite(rules, .init = setup, .fini = teardown);

static ct_failure_id taint(uint64_t addr, uint64_t len)
{
    ct_failure_desc d = {.error = ERR_LAUNCH, .api = "cuLaunchKernel", .kernel = "k"};
    ct_range w = {addr, len};
    return ct_taint(s, &d, &w, 1, NULL);
}

static ct_rows linear(uint64_t addr, uint64_t len)
{
    return (ct_rows){addr, len, len, 1, len, 1};
}

static ct_read_verdict read_rule(ct_rows src)
{
    ct_rows host = src;
    host.addr = 0x7000000; /* a host pointer: never looked up */
    return ct_read_rule(s, &src, &host, NULL);
}

/* --- which check answers a call ---------------------------------------- */

Test(rules, an_injected_failure_wins_over_every_check_of_the_inputs)
{
    cr_assert(ct_inputs_checked(true, false), "taint somewhere, nothing injected: the inputs are checked");
    cr_assert(!ct_inputs_checked(true, true), "an injected failure wins over a refusal or a skip");
    cr_assert(!ct_inputs_checked(false, false), "nothing tainted anywhere: nothing to check");
    cr_assert(!ct_inputs_checked(false, true));
}

Test(rules, a_scope_waits_in_its_threads_slot_only_when_the_slot_is_idle_and_holds_it)
{
    cr_assert_eq(ct_scope_rule(1, 4, true), CT_SCOPE_IN_OWN_SLOT, "one range, the thread's slot idle");
    cr_assert_eq(ct_scope_rule(4, 4, true), CT_SCOPE_IN_OWN_SLOT, "as many ranges as a slot holds");
    cr_assert_eq(ct_scope_rule(5, 4, true), CT_SCOPE_PLACED, "more ranges than a slot holds");
    cr_assert_eq(ct_scope_rule(1, 4, false), CT_SCOPE_PLACED,
                 "the slot holds another scope of the thread's, or the thread has none");
    cr_assert_eq(ct_scope_rule(5, 4, false), CT_SCOPE_PLACED);
}

/* --- reads ------------------------------------------------------------- */

Test(rules, a_read_of_carried_bytes_is_refused_and_of_others_not)
{
    cr_assert_eq(read_rule(linear(A, 64)), CT_READ_CLEAN, "nothing tainted anywhere");
    taint(A + 32, 16);
    cr_assert_eq(read_rule(linear(A, 64)), CT_READ_REFUSE);
    cr_assert_eq(read_rule(linear(A + 47, 1)), CT_READ_REFUSE, "its last carried byte");
    cr_assert_eq(read_rule(linear(A, 32)), CT_READ_CLEAN, "ends just before");
    cr_assert_eq(read_rule(linear(A + 48, 64)), CT_READ_CLEAN, "starts just after");
    cr_assert_eq(read_rule(linear(B, 64)), CT_READ_CLEAN);
    cr_assert_eq(read_rule(linear(NOWHERE, 64)), CT_READ_CLEAN, "memory cutaint never saw");
    cr_assert_eq(read_rule(linear(A, 0)), CT_READ_CLEAN, "an empty read reads nothing");
}

Test(rules, a_read_past_the_end_of_its_allocation_is_the_drivers)
{
    taint(A, SIZE);
    cr_assert_eq(read_rule(linear(A + SIZE - 64, 64)), CT_READ_REFUSE, "ends at the end: inside");
    cr_assert_eq(read_rule(linear(A + SIZE - 64, 65)), CT_READ_PAST_END);
    cr_assert_eq(read_rule(linear(A, UINT64_MAX - A)), CT_READ_PAST_END, "a garbage size");
    /* 2 rows of 64 at pitch SIZE: the second row lies past the end. */
    cr_assert_eq(read_rule((ct_rows){A, 64, SIZE, 2, 2 * SIZE, 1}), CT_READ_PAST_END);
}

Test(rules, shapes_the_driver_must_reject_are_its_to_answer)
{
    taint(A, SIZE);
    cr_assert_eq(read_rule((ct_rows){A, 64, 32, 2, 64, 1}), CT_READ_MALFORMED, "rows overlap");
    cr_assert_eq(read_rule((ct_rows){A, 64, 64, 2, 64, 2}), CT_READ_MALFORMED, "slices overlap");
    cr_assert_eq(read_rule((ct_rows){A, 1, UINT64_MAX / 2, 4, 0, 1}), CT_READ_MALFORMED, "span past 2^64");
    ct_rows src = {A, 64, 128, 2, 256, 1}, host = {0x7000000, 64, 32, 2, 64, 1};
    cr_assert_eq(ct_read_rule(s, &src, &host, NULL), CT_READ_MALFORMED, "host rows overlap");
    host.pitch = 64;
    cr_assert_eq(ct_read_rule(s, &src, &host, NULL), CT_READ_REFUSE);
}

static ct_read_verdict skipped_read(ct_rows src, const ct_range *skipped, ct_refusal *why)
{
    ct_rows host = src;
    host.addr = 0x7000000;
    return ct_skipped_read_rule(s, &src, &host, skipped, why);
}

/* A read a skip kept from running: the read rule first, then what the
 * skip's input carries. */
Test(rules, a_skipped_read_is_judged_by_the_read_rule_then_by_the_skip)
{
    taint(A, 64);
    ct_range skipped = {A, 64}, clean = {B + 64, 64};
    static ct_refusal why;
    cr_assert_eq(skipped_read(linear(B, 64), &skipped, &why), CT_READ_REFUSE, "never delivered: refused");
    cr_assert_eq(why.failures[0].desc.error, ERR_LAUNCH, "described by what the skip's input carries");
    cr_assert_eq(skipped_read(linear(A, 32), &clean, NULL), CT_READ_REFUSE, "its own rows carry");
    cr_assert_eq(skipped_read(linear(B, 64), &clean, NULL), CT_READ_CLEAN, "nothing carried anywhere it looks");
    cr_assert_eq(skipped_read(linear(B, 64), NULL, NULL), CT_READ_CLEAN, "no skip input: the read rule alone");
    cr_assert_eq(skipped_read((ct_rows){B, 64, 16, 1, 64, 1}, &skipped, NULL), CT_READ_MALFORMED,
                 "a pitch narrower than its row: the driver's");
    cr_assert_eq(skipped_read(linear(A, SIZE + 1), &skipped, NULL), CT_READ_PAST_END, "past the end: the driver's");
    cr_assert_eq(skipped_read(linear(B, 0), &skipped, NULL), CT_READ_CLEAN, "an empty read reads nothing");
}

Test(rules, a_pitched_read_is_refused_by_its_rows_not_its_gaps)
{
    taint(A + 64, 64); /* the gap after row 0 of a 64-wide, 128-pitch shape */
    cr_assert_eq(read_rule((ct_rows){A, 64, 128, 4, 512, 1}), CT_READ_CLEAN);
    cr_assert_eq(read_rule((ct_rows){A, 65, 128, 4, 512, 1}), CT_READ_REFUSE, "one byte into it");
    /* 3D: the gap between slices carries, the rows do not */
    cr_assert_eq(read_rule((ct_rows){A, 32, 32, 2, 128, 3}), CT_READ_CLEAN);
    taint(A + 256 + 32, 1); /* slice 2, row 1, byte 0 */
    cr_assert_eq(read_rule((ct_rows){A, 32, 32, 2, 128, 3}), CT_READ_REFUSE);
}

/* --- the poison extent ------------------------------------------------- */

/* Poison host as a refused read would, into buf (host->addr: its offset). */
static void poison_into(unsigned char *buf, size_t cap, ct_rows host)
{
    host.addr += (uintptr_t)buf;
    ct_range row;
    for (uint64_t i = 0; ct_poison_row(&host, i, &row); i++) {
        cr_assert_leq(row.addr + row.len, (uintptr_t)buf + cap, "row %lu leaves the buffer", (unsigned long)i);
        memset((void *)(uintptr_t)row.addr, 0xff, row.len);
    }
}

static size_t count_poisoned(const unsigned char *buf, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += buf[i] == 0xff;
    return k;
}

Test(rules, a_linear_read_poisons_exactly_its_bytes)
{
    unsigned char buf[256];
    memset(buf, 0x3c, sizeof buf);
    poison_into(buf, sizeof buf, linear(16, 100));
    cr_assert_eq(count_poisoned(buf, sizeof buf), 100);
    cr_assert_eq(buf[15], 0x3c);
    cr_assert_eq(buf[16], 0xff);
    cr_assert_eq(buf[115], 0xff);
    cr_assert_eq(buf[116], 0x3c);
}

Test(rules, a_pitched_read_poisons_its_rows_never_the_gaps)
{
    /* 3 slices of 4 rows, 10 bytes each, pitch 16, slice 80 (a 16-byte
     * gap after each slice's rows) */
    unsigned char buf[240];
    memset(buf, 0x3c, sizeof buf);
    poison_into(buf, sizeof buf, (ct_rows){0, 10, 16, 4, 80, 3});
    cr_assert_eq(count_poisoned(buf, sizeof buf), 3 * 4 * 10);
    for (size_t i = 0; i < sizeof buf; i++) {
        size_t in_slice = i % 80, in_row = in_slice % 16;
        bool in_rows = in_slice < 4 * 16 && in_row < 10;
        cr_assert_eq(buf[i] == 0xff, in_rows, "byte %zu", i);
    }
}

Test(rules, the_poison_extent_ends_with_the_last_row)
{
    ct_rows host = {0x1000, 8, 8, 2, 16, 1};
    ct_range row;
    cr_assert(ct_poison_row(&host, 1, &row));
    cr_assert_eq(row.addr, 0x1008);
    cr_assert_eq(row.len, 8);
    cr_assert_not(ct_poison_row(&host, 2, &row));
    cr_assert_eq(ct_poison_rows(&host), 2);
    host.pitch = 4;
    cr_assert_eq(ct_poison_rows(&host), 0, "rows overlapping: a shape the driver rejects");
    cr_assert_not(ct_poison_row(&host, 0, &row));
    host = (ct_rows){0x1000, 8, 8, 2, 8, 2};
    cr_assert_eq(ct_poison_rows(&host), 0, "slices overlapping");
    host.height = 0;
    cr_assert_not(ct_poison_row(&host, 0, &row), "no rows, no poison");
}

/* --- skips ------------------------------------------------------------- */

Test(rules, a_copy_from_carried_bytes_into_tracked_memory_is_skipped)
{
    ct_failure_id f = taint(A, 64);
    ct_range in = {A, 64};
    ct_failure_id root = 0;
    int error = 0;
    cr_assert_eq(ct_copy_rule(s, &in, 1, B, has_context, &root, &error), CT_SKIP);
    cr_assert_eq(root, f);
    cr_assert_eq(error, ERR_LAUNCH);
    cr_assert_eq(context_asked, 1);
    ct_range clean = {A + 64, 64};
    cr_assert_eq(ct_copy_rule(s, &clean, 1, B, has_context, &root, &error), CT_RUN);
    cr_assert_eq(root, 0);
    cr_assert_eq(context_asked, 1, "no root: the context is not asked");
    cr_assert_eq(ct_copy_rule(s, &in, 0, B, has_context, &root, &error), CT_RUN, "no inputs");
}

Test(rules, a_copy_into_untracked_memory_is_not_skipped)
{
    taint(A, 64);
    ct_range in = {A, 64};
    ct_failure_id root = 0;
    cr_assert_eq(ct_copy_rule(s, &in, 1, NOWHERE, has_context, &root, NULL), CT_RUN_UNTRACKED);
    cr_assert_eq(ct_copy_rule(s, &in, 1, 0, has_context, &root, NULL), CT_RUN_UNTRACKED, "NULL");
    cr_assert_eq(context_asked, 0);
}

Test(rules, with_no_context_current_nothing_is_skipped)
{
    taint(A, 64);
    ct_range in = {A, 64};
    context_current = false;
    cr_assert_eq(ct_copy_rule(s, &in, 1, B, has_context, NULL, NULL), CT_RUN_NO_CONTEXT);
    cr_assert_eq(ct_launch_rule(s, &in, 1, has_context, NULL, NULL), CT_RUN_NO_CONTEXT);
    cr_assert_eq(ct_launch_rule(s, &in, 1, NULL, NULL, NULL), CT_RUN_NO_CONTEXT, "no way to ask");
    context_current = true;
    cr_assert_eq(ct_launch_rule(s, &in, 1, has_context, NULL, NULL), CT_SKIP);
    cr_assert_eq(context_asked, 3);
    cr_assert_eq(ct_skip_rule(0, has_context), CT_RUN);
    cr_assert_eq(ct_skip_rule(7, has_context), CT_SKIP);
    context_current = false;
    cr_assert_eq(ct_skip_rule(7, has_context), CT_RUN_NO_CONTEXT);
    cr_assert_eq(context_asked, 5);
}

/* A graph launch's read set: the rule is handed the context's answer, and
 * names the skip by the first read carrying the root. */
static ct_failure_id taint_by(const char *kernel, uint64_t addr, uint64_t len)
{
    ct_failure_desc d = {.error = ERR_LAUNCH, .api = "cuLaunchKernel", .kernel = kernel};
    ct_range w = {addr, len};
    return ct_taint(s, &d, &w, 1, NULL);
}

Test(rules, a_graph_launch_reading_clean_bytes_runs)
{
    taint(A + 1024, 64); /* taint elsewhere: the store is looked at */
    ct_range reads[] = {{A, 64}, {B, 64}};
    ct_failure_id root = 7;
    int error = 7;
    size_t at = 7;
    cr_assert_eq(ct_exec_rule(s, reads, 2, true, &root, &error, &at), CT_RUN);
    cr_assert_eq(root, 0);
    cr_assert_eq(error, 0);
    cr_assert_eq(at, 0);
    cr_assert_eq(ct_exec_rule(s, reads, 0, true, &root, &error, &at), CT_RUN, "no reads");
}

Test(rules, a_graph_launch_is_skipped_and_named_by_its_carried_read)
{
    ct_failure_id f = taint(B + 32, 16);
    ct_range reads[] = {{A, 64}, {B, 64}, {B + 1024, 64}};
    ct_failure_id root = 0;
    int error = 0;
    size_t at = 0;
    cr_assert_eq(ct_exec_rule(s, reads, 3, true, &root, &error, &at), CT_SKIP);
    cr_assert_eq(root, f);
    cr_assert_eq(error, ERR_LAUNCH);
    cr_assert_eq(at, 1, "the second read carries it");
    cr_assert_eq(ct_exec_rule(s, reads, 3, true, NULL, NULL, NULL), CT_SKIP, "every output may be NULL");
}

Test(rules, a_graph_launch_with_no_context_current_is_the_drivers)
{
    ct_failure_id f = taint(A, 64);
    ct_range reads[] = {{A, 64}};
    ct_failure_id root = 0;
    size_t at = 7;
    cr_assert_eq(ct_exec_rule(s, reads, 1, false, &root, NULL, &at), CT_RUN_NO_CONTEXT);
    cr_assert_eq(root, f, "the root is still found");
    cr_assert_eq(at, 0);
}

Test(rules, a_graph_launch_is_named_by_the_read_carrying_the_oldest_failure)
{
    ct_failure_id older = taint_by("first", B, 64);
    ct_failure_id newer = taint_by("second", A, 64);
    cr_assert_neq(older, newer, "two failures, not one folded");
    ct_range reads[] = {{A, 64}, {B, 64}};
    ct_failure_id root = 0;
    size_t at = 7;
    cr_assert_eq(ct_exec_rule(s, reads, 2, true, &root, NULL, &at), CT_SKIP);
    cr_assert_eq(root, ct_read_failure(s, reads, 2, NULL), "the root over all reads");
    cr_assert_eq(root, older);
    cr_assert_eq(at, 1, "not the first carried read: the one carrying the root");
}

/* A conditional node's body may or may not run: its reads are checked and
 * its writes tainted like the exec's own, but they never release nor
 * satisfy a later read. */
Test(rules, a_conditional_bodys_writes_are_tainted_but_never_release)
{
    const ct_graph_use_facts top_copy = {.exact_node = true, .extent_known = true};
    ct_graph_use_verdict v = ct_graph_use_rule(&top_copy);
    cr_assert(v.checked && v.tainted && v.released && v.satisfies, "a top-level copy: all four");
    ct_graph_use_facts f = top_copy;
    f.exact_node = false;
    v = ct_graph_use_rule(&f);
    cr_assert(v.released && !v.satisfies, "a kernel's exact output is released, never satisfies a read");
    f = top_copy;
    f.extent_known = false;
    v = ct_graph_use_rule(&f);
    cr_assert(v.tainted && !v.released && !v.satisfies, "a write of unknown extent: tainted only");
    f = top_copy;
    f.in_body = true;
    v = ct_graph_use_rule(&f);
    cr_assert(v.checked, "a body's read counts: the body may run");
    cr_assert(v.tainted, "a body's write takes the launch's failure: it may have run");
    cr_assert_not(v.released, "a body that may not have run releases nothing");
    cr_assert_not(v.satisfies, "nor satisfies a later read");
}

/* A failed read poisons its host rows only where the copy could have
 * written them: a host pointer, shapes the driver accepts, and a source
 * wholly inside one known allocation. */
Test(rules, a_failed_read_poisons_only_what_it_could_have_written)
{
    ct_rows src = {A + 16, 64, 64, 1, 64, 1}, host = {0x7000, 64, 64, 1, 64, 1};
    cr_assert(ct_failed_read_poisons(s, &src, &host), "inside A, clean or not, a copy could have started");
    ct_rows null_host = host;
    null_host.addr = 0;
    cr_assert(!ct_failed_read_poisons(s, &src, &null_host), "a NULL destination");
    ct_rows past = {A + SIZE - 8, 64, 64, 1, 64, 1};
    cr_assert(!ct_failed_read_poisons(s, &past, &host), "a size past the end the driver refused");
    ct_rows untracked = {NOWHERE, 64, 64, 1, 64, 1};
    cr_assert(!ct_failed_read_poisons(s, &untracked, &host), "memory cutaint never saw allocated");
    ct_rows overlapping = {A, 64, 32, 4, 128, 1}; /* pitch < width: the driver rejects it */
    cr_assert(!ct_failed_read_poisons(s, &overlapping, &host));
    ct_rows narrow_host = {0x7000, 64, 16, 4, 64, 1};
    ct_rows rows4 = {A, 64, 128, 4, 512, 1};
    cr_assert(!ct_failed_read_poisons(s, &rows4, &narrow_host), "host rows narrower than a row");
    cr_assert(!ct_failed_read_poisons(s, NULL, &host));
}

/* What a probe's answer says, from the kinds of codes the shim hands core:
 * plain numbers here, as core sees them. */
static const int no_ctx[] = {3, 201, 709};
static const int capture_codes[] = {900, 901};
static const ct_answer_kinds kinds = {.success = 0,
                                      .not_ready = 600,
                                      .deinitialized = 4,
                                      .no_context = no_ctx,
                                      .n_no_context = 3,
                                      .capture = capture_codes,
                                      .n_capture = 2};

Test(rules, a_probe_answer_is_a_loss_only_when_it_says_so)
{
    cr_assert_eq(ct_answer_rule(&kinds, 0), CT_ANSWER_ALIVE);
    cr_assert_eq(ct_answer_rule(&kinds, 600), CT_ANSWER_ALIVE, "work still running is alive");
    cr_assert_eq(ct_answer_rule(&kinds, 4), CT_ANSWER_NO_CONTEXT, "a driver tearing down judges nothing");
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(ct_answer_rule(&kinds, no_ctx[i]), CT_ANSWER_NO_CONTEXT, "%d", no_ctx[i]);
    cr_assert_eq(ct_answer_rule(&kinds, 901), CT_ANSWER_CAPTURE);
    cr_assert_eq(ct_answer_rule(&kinds, 700), CT_ANSWER_LOST, "an illegal address");
    cr_assert_eq(ct_answer_rule(&kinds, 999), CT_ANSWER_LOST);
}

Test(rules, an_error_is_probed_unless_it_says_nothing_of_the_context)
{
    cr_assert(ct_probe_rule(&kinds, 700));
    cr_assert(ct_probe_rule(&kinds, 1), "an invalid value may hide a loss");
    cr_assert(ct_probe_rule(&kinds, 201), "no context: the probe finds out (it skips a thread without one)");
    cr_assert(!ct_probe_rule(&kinds, 600), "not ready");
    cr_assert(!ct_probe_rule(&kinds, 4), "deinitialised: teardown");
    cr_assert(!ct_probe_rule(&kinds, 900), "a capture's own rules");
    cr_assert(!ct_probe_rule(&kinds, 0));
}

/* After a simulated loss only the ways out still reach the driver. */
Test(rules, only_the_ways_out_survive_a_simulated_loss)
{
    static const char *const ways_out[] = {"cuCtxDestroy", "cuCtxSetCurrent"};
    cr_assert(ct_survives_simulated_loss("cuCtxDestroy", ways_out, 2));
    cr_assert(ct_survives_simulated_loss("cuCtxSetCurrent", ways_out, 2));
    cr_assert(!ct_survives_simulated_loss("cuLaunchKernel", ways_out, 2));
    cr_assert(!ct_survives_simulated_loss("cuCtxDestroyX", ways_out, 2), "whole names only");
    cr_assert(!ct_survives_simulated_loss(NULL, ways_out, 2));
    cr_assert(!ct_survives_simulated_loss("cuCtxDestroy", NULL, 0));
}

/* A parameter's role: the CUTAINT_ARGS rule, else the signature, else the
 * size. */
Test(rules, a_parameter_role_comes_from_the_rule_then_the_signature_then_the_size)
{
    ct_signature sig = {.n_params = 4, .kind = {CT_PARAM_CONST_PTR, CT_PARAM_PTR, CT_PARAM_AGGREGATE, CT_PARAM_VALUE}};
    static const struct {
        unsigned i;
        uint32_t size;
        uint8_t role;
        bool scan;
    } from_sig[] = {
        {0, 8, CT_ROLE_READ, false},
        {1, 8, CT_ROLE_READWRITE, false},
        {2, 24, CT_ROLE_READWRITE, true},
        {3, 8, CT_ROLE_IGNORE, false},
    };
    for (size_t k = 0; k < sizeof from_sig / sizeof *from_sig; k++) {
        ct_param_role r = ct_param_role_rule(&(ct_param_facts){.sig = &sig}, from_sig[k].i, from_sig[k].size);
        cr_expect_eq(r.role, from_sig[k].role, "parameter %u", from_sig[k].i);
        cr_expect_eq(r.scan, from_sig[k].scan, "parameter %u", from_sig[k].i);
    }
    /* No signature (or past its end): the size says. */
    cr_expect_eq(ct_param_role_rule(&(ct_param_facts){0}, 0, 8).role, CT_ROLE_READWRITE);
    cr_expect(!ct_param_role_rule(&(ct_param_facts){0}, 0, 8).scan);
    cr_expect(ct_param_role_rule(&(ct_param_facts){0}, 0, 16).scan);
    cr_expect_eq(ct_param_role_rule(&(ct_param_facts){0}, 0, 4).role, CT_ROLE_IGNORE);
    cr_expect_eq(ct_param_role_rule(&(ct_param_facts){.sig = &sig}, 7, 8).role, CT_ROLE_READWRITE);
    /* CUTAINT_ARGS overrides the role, never the scan; "default" keeps it. */
    ct_arg_rule rule = {.n_roles = 3, .role = {CT_ROLE_WRITE, CT_ROLE_DEFAULT, CT_ROLE_IGNORE}};
    const ct_param_facts ruled = {.sig = &sig, .rule = &rule};
    cr_expect_eq(ct_param_role_rule(&ruled, 0, 8).role, CT_ROLE_WRITE);
    cr_expect_eq(ct_param_role_rule(&ruled, 1, 8).role, CT_ROLE_READWRITE);
    ct_param_role r = ct_param_role_rule(&ruled, 2, 24);
    cr_expect(r.role == CT_ROLE_IGNORE && r.scan);
}

Test(rules, the_ptx_direction_wins_over_the_signature_and_loses_to_the_rule)
{
    ct_signature sig = {.n_params = 5,
                        .kind = {CT_PARAM_PTR, CT_PARAM_CONST_PTR, CT_PARAM_PTR, CT_PARAM_AGGREGATE, CT_PARAM_VALUE}};
    const uint8_t dirs[] = {CT_PTX_LOADS, CT_PTX_STORES, CT_PTX_UNUSED, CT_PTX_BOTH, CT_PTX_LOADS};
    const ct_param_facts f = {.sig = &sig, .dirs = dirs, .n_dirs = 5};
    cr_expect_eq(ct_param_role_rule(&f, 0, 8).role, CT_ROLE_READ, "float *in, only loaded through");
    cr_expect_eq(ct_param_role_rule(&f, 1, 8).role, CT_ROLE_STORE, "a const pointer the code stores through");
    cr_expect_eq(ct_param_role_rule(&f, 2, 8).role, CT_ROLE_IGNORE, "never used as an address");
    ct_param_role agg = ct_param_role_rule(&f, 3, 16);
    cr_expect(agg.role == CT_ROLE_READWRITE && agg.scan, "a struct: both, its words still scanned");
    cr_expect_eq(ct_param_role_rule(&f, 4, 8).role, CT_ROLE_READ, "a uint64_t the code loads through");
    cr_expect_eq(ct_param_role_rule(&f, 4, 4).role, CT_ROLE_IGNORE, "4 bytes hold no pointer");
    ct_arg_rule rule = {.n_roles = 1, .role = {CT_ROLE_READWRITE}};
    const ct_param_facts ruled = {.sig = &sig, .dirs = dirs, .n_dirs = 5, .rule = &rule};
    cr_expect_eq(ct_param_role_rule(&ruled, 0, 8).role, CT_ROLE_READWRITE, "CUTAINT_ARGS overrides");
    const ct_param_facts short_dirs = {.sig = &sig, .dirs = dirs, .n_dirs = 1};
    cr_expect_eq(ct_param_role_rule(&short_dirs, 1, 8).role, CT_ROLE_READ, "past the directions: the signature");
}

/* A batch answered whole returns a refusal's code, else its skip's answer,
 * else its root's error. */
Test(rules, a_batch_answered_whole_returns_the_refusal_then_the_skip_then_the_root)
{
    cr_expect_eq(ct_batch_result(true, 719, true, 0, 1), 719, "a refused read wins");
    cr_expect_eq(ct_batch_result(false, 0, true, 0, 1), 0, "skipped device writes answer as CUTAINT_ON_SKIP says");
    cr_expect_eq(ct_batch_result(false, 0, true, 1, 1), 1);
    cr_expect_eq(ct_batch_result(false, 0, false, 0, 2), 2, "nothing ran: the root's error");
}

Test(rules, a_skip_answers_the_roots_error_only_when_asked_to)
{
    cr_expect_eq(ct_skip_result(CT_SKIP_ERROR, ERR_LAUNCH, 0), ERR_LAUNCH, "CUTAINT_ON_SKIP=error: the root's error");
    cr_expect_eq(ct_skip_result(CT_SKIP_PROPAGATE, ERR_LAUNCH, 0), 0, "propagate: success, as if it had run");
    cr_expect_eq(ct_skip_result(CT_SKIP_PROPAGATE, ERR_LAUNCH, 7), 7, "success is the caller's code for it");
}

/* Handed room, the rule decides and describes in one pass: the verdict and
 * the description agree, the gaps of a pitched read not counted. */
Test(rules, a_refusal_is_described_by_the_pass_that_decides_it)
{
    static ct_refusal why;
    ct_failure_id id = taint(A + 128, 512); /* row 1 (bytes 128..191) and the gaps around it */
    ct_rows src = {A, 64, 128, 4, 512, 1}, host = {0x7000000, 64, 64, 4, 256, 1};
    memset(&why, 0, sizeof why);
    cr_assert_eq(ct_read_rule(s, &src, &host, &why), CT_READ_REFUSE);
    cr_assert_eq(why.n_kept, 1);
    cr_assert_eq(why.failures[0].id, id);
    cr_assert_eq(why.tainted_bytes, 3 * 64, "rows 1..3 lie in the taint; their gaps are not read");
    ct_rows clean = {A, 64, 128, 1, 128, 1};
    cr_assert_eq(ct_read_rule(s, &clean, &host, &why), CT_READ_CLEAN, "row 0 alone");
}

/* A batch of copies as core sees it: each copy's source ranges. */
typedef struct fake_batch {
    ct_range src[4][2];
    unsigned n_src[4];
} fake_batch;

static unsigned fake_sources(const void *batch, size_t i, ct_range *room)
{
    const fake_batch *b = batch;
    memcpy(room, b->src[i], b->n_src[i] * sizeof *room);
    return b->n_src[i];
}

Test(rules, a_batch_is_skipped_and_named_by_its_first_copy_reading_a_failure)
{
    ct_failure_id newer_first = taint_by("second", B, 64);
    ct_failure_id older_later = taint_by("first", A, 64);
    (void)older_later;
    /* copy 0 reads clean bytes; copy 1 a row of B; copy 2 A (an older id) */
    fake_batch b = {.src = {{{B + 4096, 64}}, {{B + 2048, 8}, {B + 32, 8}}, {{A, 64}}}, .n_src = {1, 2, 1}};
    ct_range room[2];
    ct_failure_id root = 0;
    int error = 0;
    size_t first = 9;
    cr_assert_eq(ct_batch_rule(s, 3, fake_sources, &b, room, has_context, &root, &error, &first), CT_SKIP);
    cr_assert_eq(first, 1, "the first copy in the batch's order that reads a failure");
    cr_assert_eq(root, newer_first, "its failure, not the oldest of the batch's");
    cr_assert_eq(error, ERR_LAUNCH);
    cr_assert_eq(context_asked, 1);
    cr_assert_eq(ct_batch_rule(s, 1, fake_sources, &b, room, has_context, &root, NULL, &first), CT_RUN);
    cr_assert_eq(root, 0);
    cr_assert_eq(first, 1, "none carries: first is n");
    cr_assert_eq(context_asked, 1, "a clean batch never asks the driver");
    context_current = false;
    cr_assert_eq(ct_batch_rule(s, 3, fake_sources, &b, room, has_context, NULL, NULL, NULL), CT_RUN_NO_CONTEXT);
}

Test(rules, a_stand_in_answers_its_deferred_error_but_in_a_graph_kernel_node)
{
    ct_stand_in_call_facts f = {.kernel = true};
    cr_assert_eq(ct_stand_in_call_rule(&f), CT_STAND_IN_DEFERRED, "a launch fails here, with the load's error");
    f.gets_function = true;
    cr_assert_eq(ct_stand_in_call_rule(&f), CT_STAND_IN_ITSELF,
                 "asked on every path: the call after it answers, which tells the paths apart");
    f = (ct_stand_in_call_facts){.kernel = true, .sets_node = true};
    cr_assert_eq(ct_stand_in_call_rule(&f), CT_STAND_IN_REPLACED,
                 "the runtime's node path stops at the driver's answer for the handle it held, as without cutaint");
    f.unloaded = true;
    cr_assert_eq(ct_stand_in_call_rule(&f), CT_STAND_IN_UNLOADED, "an unloaded handle is invalid whatever is asked");
    f.sets_node = false;
    f.gets_function = true;
    cr_assert_eq(ct_stand_in_call_rule(&f), CT_STAND_IN_UNLOADED);
    f = (ct_stand_in_call_facts){.gets_function = true, .sets_node = true};
    cr_assert_eq(ct_stand_in_call_rule(&f), CT_STAND_IN_DEFERRED, "a library has no function, and is in no node");
}

Test(rules, only_the_runtimes_refused_image_or_kernel_is_stood_in_for)
{
    const ct_stand_in_facts runtime_load = {.refused = CT_REFUSED_IMAGE, .runtime_image = true};
    cr_assert_eq(ct_stand_in_rule(&runtime_load), CT_STAND_IN);
    ct_stand_in_facts f = runtime_load;
    f.lookup = true;
    cr_assert_eq(ct_stand_in_rule(&f), CT_STAND_IN, "a lazy load failing at the lookup");
    f.refused = CT_REFUSED_KERNEL;
    cr_assert_eq(ct_stand_in_rule(&f), CT_STAND_IN, "a kernel missing from the runtime's image");
    f.lookup = false;
    cr_assert_eq(ct_stand_in_rule(&f), CT_DRIVER_ANSWERS, "a load cannot miss a kernel: not the image's fault");
    f = runtime_load;
    f.refused = CT_REFUSED_OTHER;
    cr_assert_eq(ct_stand_in_rule(&f), CT_DRIVER_ANSWERS, "out of memory, a bad context: the runtime's to see");
    f = runtime_load;
    f.runtime_image = false;
    cr_assert_eq(ct_stand_in_rule(&f), CT_DRIVER_ANSWERS, "a driver-API program's own load sees the real error");
    f.lookup = true;
    cr_assert_eq(ct_stand_in_rule(&f), CT_DRIVER_ANSWERS);
    f = runtime_load;
    f.eager = true;
    cr_assert_eq(ct_stand_in_rule(&f), CT_DRIVER_ANSWERS,
                 "eager loading fails the runtime's first call with the load's error: the program's to see");
    f.lookup = true;
    cr_assert_eq(ct_stand_in_rule(&f), CT_DRIVER_ANSWERS);
    f = runtime_load;
    f.library_ahead = true;
    cr_assert_eq(ct_stand_in_rule(&f), CT_DRIVER_ANSWERS_AHEAD, "a library ahead could pass a stand-in on");
    f.runtime_image = false;
    cr_assert_eq(ct_stand_in_rule(&f), CT_DRIVER_ANSWERS, "which is said only where a stand-in was due");
}

Test(rules, a_launch_is_a_suspect_until_a_proof_covers_its_epoch)
{
    ct_proven none = {0};
    cr_assert(ct_suspect_rule(5, &none));
    cr_assert_not(ct_suspect_rule(5, &(ct_proven){.context = 5}), "its context synchronised at or after it");
    cr_assert(ct_suspect_rule(5, &(ct_proven){.context = 4}), "a proof begun before it says nothing of it");
    cr_assert_not(ct_suspect_rule(5, &(ct_proven){.stream = 9}));
    cr_assert_not(ct_suspect_rule(5, &(ct_proven){.blocking = 5}), "the legacy ordering reaches a blocking stream");
    cr_assert(ct_suspect_rule(5, &(ct_proven){.blocking = 5, .nonblocking = true}), "not a non-blocking one");
    cr_assert_not(ct_suspect_rule(5, &(ct_proven){.stream = 5, .nonblocking = true}));
}

/* ---- retries ------------------------------------------------------------ */

#define FN 0x4000u
static const ct_range to_end_a = {A, CT_TO_END};

static ct_launch_key key(uint64_t params, uint64_t threads)
{
    return (ct_launch_key){FN, params, threads};
}

/* A launch of FN over A (read and written) the driver refused at once. */
static ct_failure_id refused_launch(const char *kernel, int error, ct_launch_key k, ct_range w)
{
    ct_failure_desc d = {.error = error, .api = "cuLaunchKernel", .kernel = kernel};
    return ct_taint_refused_launch(s, &d, &k, &w, 1, NULL);
}

static bool retries(ct_launch_key k, const ct_range *in, size_t n_in, const ct_range *out, size_t n_out,
                    ct_failure_id *retried)
{
    ct_retry_facts f = {.key = k, .in = in, .n_in = n_in, .out = out, .n_out = n_out};
    return ct_retry_rule(s, &f, retried);
}

Test(rules, the_same_work_with_as_many_threads_retries_a_refused_launch)
{
    ct_failure_id f = refused_launch("k", ERR_LAUNCH, key(7, 4096), to_end_a);
    ct_failure_id retried = 0;
    cr_assert(retries(key(7, 4096), &to_end_a, 1, &to_end_a, 1, &retried), "the same launch again");
    cr_assert_eq(retried, f);
    cr_assert(retries(key(7, 8192), &to_end_a, 1, &to_end_a, 1, NULL), "more threads in all");
    cr_assert_not(retries(key(7, 2048), &to_end_a, 1, &to_end_a, 1, &retried), "fewer threads: part unwritten");
    cr_assert_eq(retried, 0);
    cr_assert_not(retries(key(8, 4096), &to_end_a, 1, &to_end_a, 1, NULL), "other parameter bytes");
    ct_launch_key other_fn = {FN + 1, 7, 4096};
    cr_assert_not(retries(other_fn, &to_end_a, 1, &to_end_a, 1, NULL), "another function");
    ct_retry_facts lost =
        {.key = key(7, 4096), .in = &to_end_a, .n_in = 1, .out = &to_end_a, .n_out = 1, .context_lost = true};
    cr_assert_not(ct_retry_rule(s, &lost, NULL), "a lost context: the failure may have run in part");
}

static void facts_of(const void *launch, ct_retry_facts *f)
{
    *f = *(const ct_retry_facts *)launch;
}

/* The launch rule and the retry rule composed: a launch that would be
 * skipped runs when it retries; one that would run is never asked. */
Test(rules, a_launch_is_skipped_unless_it_is_a_retry)
{
    ct_failure_id f = refused_launch("k", ERR_LAUNCH, key(7, 4096), to_end_a);
    ct_retry_facts same = {.key = key(7, 4096), .in = &to_end_a, .n_in = 1, .out = &to_end_a, .n_out = 1};
    ct_retry_facts other = same;
    other.key = key(8, 4096);
    ct_failure_id root = 0, retried = 99;
    cr_assert_eq(ct_launch_skip_rule(s, &to_end_a, 1, has_context, facts_of, &same, &root, NULL, &retried),
                 CT_RUN_RETRY, "the refused launch again: the driver runs it");
    cr_assert_eq(retried, f);
    cr_assert_eq(root, f);
    cr_assert_eq(ct_launch_skip_rule(s, &to_end_a, 1, has_context, facts_of, &other, NULL, NULL, &retried), CT_SKIP,
                 "other parameters: skipped");
    cr_assert_eq(retried, 0);
    cr_assert_eq(ct_launch_skip_rule(s, &to_end_a, 1, has_context, NULL, NULL, NULL, NULL, NULL), CT_SKIP,
                 "no facts to ask: skipped");
    ct_range clean = {B, 16};
    cr_assert_eq(ct_launch_skip_rule(s, &clean, 1, has_context, facts_of, NULL, NULL, NULL, &retried), CT_RUN,
                 "clean inputs: run, and the facts are never asked (NULL here)");
    context_current = false;
    cr_assert_eq(ct_launch_skip_rule(s, &to_end_a, 1, has_context, facts_of, &same, NULL, NULL, NULL),
                 CT_RUN_NO_CONTEXT);
}

Test(rules, a_retry_must_write_every_carried_byte_it_reads)
{
    refused_launch("k", ERR_LAUNCH, key(7, 4096), to_end_a);
    ct_range upper = {A + 1024, CT_TO_END};
    cr_assert_not(retries(key(7, 4096), &to_end_a, 1, &upper, 1, NULL),
                  "bytes below its outputs carry the failure: a const input the failure reached");
    ct_range pieces[2] = {{A, 1024}, {A + 1024, CT_TO_END}};
    cr_assert(retries(key(7, 4096), &to_end_a, 1, pieces, 2, NULL), "outputs that together cover it");
}

Test(rules, any_other_failure_carried_keeps_a_retry_skipped)
{
    refused_launch("k", ERR_LAUNCH, key(7, 4096), to_end_a);
    ct_failure_id other = taint(B, 16);
    ct_range both[2] = {to_end_a, {B, CT_TO_END}};
    ct_failure_id retried = 0;
    cr_assert_not(retries(key(7, 4096), both, 2, both, 2, &retried), "B carries failure #%u", other);
    cr_assert_not(retries(key(7, 4096), &(ct_range){B, CT_TO_END}, 1, &(ct_range){B, CT_TO_END}, 1, NULL),
                  "a failure that was not a refused launch");
}

Test(rules, a_failure_a_skip_passed_on_is_retried_no_more)
{
    ct_failure_id f = refused_launch("k", ERR_LAUNCH, key(7, 4096), to_end_a);
    ct_skip_desc skip = {.api = "cuLaunchKernel", .kernel = "next", .launch_seq = 2, .needed = A};
    ct_range b = {B, CT_TO_END};
    ct_propagate(s, f, &skip, &b, 1);
    cr_assert_not(retries(key(7, 4096), &to_end_a, 1, &to_end_a, 1, NULL),
                  "its bytes may now hold work that never ran");
}

Test(rules, a_launch_refused_over_stale_bytes_leaves_no_retry)
{
    ct_failure_id stale = taint(A, 16);                       /* not a refused launch: its bytes are stale */
    refused_launch("k2", ERR_LAUNCH, key(7, 4096), to_end_a); /* another failure, over them */
    cr_assert_not(retries(key(7, 4096), &to_end_a, 1, &to_end_a, 1, NULL), "A held failure #%u's stale bytes", stale);
}

Test(rules, a_refused_retry_keeps_its_failure_retryable_with_the_fewest_threads)
{
    ct_failure_id f = refused_launch("k", ERR_LAUNCH, key(7, 4096), to_end_a);
    cr_assert_eq(refused_launch("k", ERR_LAUNCH, key(7, 2048), to_end_a), f, "folded");
    cr_assert(retries(key(7, 2048), &to_end_a, 1, &to_end_a, 1, NULL), "as many threads as one attempt");
    ct_failure_id g = refused_launch("k", ERR_LAUNCH + 1, key(7, 1024), to_end_a);
    cr_assert_neq(g, f, "another error: another failure over the same bytes");
    ct_failure_id retried = 0;
    cr_assert(retries(key(7, 1024), &to_end_a, 1, &to_end_a, 1, &retried), "a retry of a retry");
    cr_assert_eq(retried, g);
}

Test(rules, only_the_newest_attempts_are_kept)
{
    ct_failure_id f = 0;
    for (uint64_t p = 1; p <= CT_ATTEMPTS_KEPT + 1; p++)
        f = refused_launch("k", ERR_LAUNCH, key(p, 64), to_end_a);
    cr_assert(f);
    cr_assert_not(retries(key(1, 64), &to_end_a, 1, &to_end_a, 1, NULL), "the oldest attempt was dropped");
    cr_assert(retries(key(2, 64), &to_end_a, 1, &to_end_a, 1, NULL), "the others are kept");
    cr_assert(retries(key(CT_ATTEMPTS_KEPT + 1, 64), &to_end_a, 1, &to_end_a, 1, NULL));
}

Test(rules, the_launch_key_tells_parameter_bytes_and_threads_apart)
{
    uint32_t grid[3] = {2, 1, 1}, block[3] = {2048, 1, 1}, wide[3] = {1u << 31, 65535, 65535};
    cr_assert_eq(ct_launch_threads(grid, block), 4096);
    cr_assert_eq(ct_launch_threads(wide, block), UINT64_MAX, "saturates");
    float one = 1.0f, two = 2.0f;
    uint64_t h1 = ct_launch_key_end(ct_fnv1a(CT_FNV_OFFSET, &one, sizeof one), 4);
    uint64_t h2 = ct_launch_key_end(ct_fnv1a(CT_FNV_OFFSET, &two, sizeof two), 4);
    uint64_t again = ct_launch_key_end(ct_fnv1a(CT_FNV_OFFSET, &one, sizeof one), 4);
    cr_assert_eq(h1, again);
    cr_assert_neq(h1, h2);
    cr_assert_neq(h1, ct_launch_key_end(ct_fnv1a(CT_FNV_OFFSET, &one, sizeof one), 8), "the byte count is mixed in");
}

/* ---- regions and pools ------------------------------------------------------ */

Test(rules, a_region_is_taken_only_wholly_inside_one_allocation_and_no_region)
{
    const ct_region_facts fits = {.bytes = 64, .within_allocation = true};
    cr_assert_eq(ct_region_rule(&fits), CT_REGION_DONE);
    ct_region_facts f = fits;
    f.bytes = 0;
    cr_assert_eq(ct_region_rule(&f), CT_REGION_EMPTY);
    f = fits;
    f.overflows = true;
    cr_assert_eq(ct_region_rule(&f), CT_REGION_EMPTY, "a range past 2^64 names no memory");
    f = fits;
    f.within_allocation = false;
    cr_assert_eq(ct_region_rule(&f), CT_REGION_OUTSIDE);
    f.overlaps_region = true;
    cr_assert_eq(ct_region_rule(&f), CT_REGION_OUTSIDE, "outside is said first: it is the bigger mistake");
    f = fits;
    f.overlaps_region = true;
    cr_assert_eq(ct_region_rule(&f), CT_REGION_OVERLAPS);
    cr_assert_str_neq(ct_region_verdict_text(CT_REGION_OVERLAPS), ct_region_verdict_text(CT_REGION_OUTSIDE));
}

Test(rules, a_region_free_needs_a_live_regions_base)
{
    cr_assert_eq(ct_region_rule(&(ct_region_facts){.freeing = true, .is_region_base = true}), CT_REGION_DONE);
    cr_assert_eq(ct_region_rule(&(ct_region_facts){.freeing = true}), CT_REGION_UNKNOWN);
    cr_assert_eq(ct_region_rule(&(ct_region_facts){.freeing = true, .bytes = 0}), CT_REGION_UNKNOWN,
                 "a free is never judged by size");
}

Test(rules, an_allocation_reached_by_several_pointers_looks_like_a_pool_once)
{
    const ct_pool_facts pool = {.allocation = 0x1000,
                                .size = 0x1000,
                                .from = 0x1400,
                                .covered = 0xc00,
                                .pointers = CT_POOL_POINTERS};
    cr_assert(ct_pool_rule(&pool));
    ct_pool_facts f = pool;
    f.said = true;
    cr_assert_not(ct_pool_rule(&f), "said once per allocation");
    f = pool;
    f.pointers = CT_POOL_POINTERS - 1;
    cr_assert_not(ct_pool_rule(&f), "one pointer is one tensor: nothing shows a pool");
    f = pool;
    f.from = f.allocation;
    cr_assert_not(ct_pool_rule(&f), "from the base the failure covers what the pointer was given");
    f = pool;
    f.in_region = true;
    cr_assert_not(ct_pool_rule(&f), "a region already gives the tensor's extent");
}

Test(rules, a_driver_initialised_behind_cutaints_back_is_a_bypass)
{
    const ct_bypass_facts used = {.driver_loaded = true, .at_unload = CT_DRIVER_INITIALISED};
    cr_assert(ct_bypass_rule(&used));
    ct_bypass_facts f = used;
    f.at_unload = CT_DRIVER_NOT_INITIALISED;
    cr_assert_not(ct_bypass_rule(&f), "loaded but never used: silent");
    f.at_unload = CT_DRIVER_OTHER;
    cr_assert_not(ct_bypass_rule(&f), "an answer that proves nothing (a driver shut down) says nothing");
    f.at_unload = CT_DRIVER_NOT_ASKED;
    cr_assert_not(ct_bypass_rule(&f), "never asked: nothing to say");
    f = used;
    f.forked = true;
    cr_assert_not(ct_bypass_rule(&f), "a fork child's driver may be its parent's");
    f = used;
    f.reached = true;
    cr_assert_not(ct_bypass_rule(&f), "cutaint saw the calls: protected");
    f = used;
    f.driver_loaded = false;
    cr_assert_not(ct_bypass_rule(&f), "no driver in the process: nothing to say");
}

/* A driver that registered its teardown with atexit at cuInit is gone by
 * the destructor: what it said as exit began decides; an exit from another
 * thread asks only at unload. */
Test(rules, a_bypass_is_proven_by_either_moment_of_asking)
{
    const ct_bypass_facts torn_down = {.driver_loaded = true,
                                       .as_exit_began = CT_DRIVER_INITIALISED,
                                       .at_unload = CT_DRIVER_OTHER};
    cr_assert(ct_bypass_rule(&torn_down), "initialised as exit began, torn down by unload");
    ct_bypass_facts f = torn_down;
    f.as_exit_began = CT_DRIVER_NOT_INITIALISED;
    f.at_unload = CT_DRIVER_INITIALISED;
    cr_assert(ct_bypass_rule(&f), "initialised later, in an exit handler that went around cutaint");
    f.as_exit_began = CT_DRIVER_NOT_ASKED;
    cr_assert(ct_bypass_rule(&f), "exit from another thread: unload's answer decides");
    f.at_unload = CT_DRIVER_NOT_INITIALISED;
    cr_assert_not(ct_bypass_rule(&f), "never initialised at either moment");
    f = torn_down;
    f.reached = true;
    cr_assert_not(ct_bypass_rule(&f), "a call reached cutaint after exit began (an exit handler): protected");
    f = torn_down;
    f.forked = true;
    cr_assert_not(ct_bypass_rule(&f), "a fork child stays silent whatever the moment");
}

/* ---- library calls: extents from their arguments, skip, nesting ---------- */

Test(rules, a_library_matrix_spans_its_columns_ld_apart)
{
    cr_assert_eq(ct_lib_matrix_bytes(3, 2, 5, 4), (5 + 3) * 4u, "column 0 at 0, column 1 at ld");
    cr_assert_eq(ct_lib_matrix_bytes(3, 1, 3, 8), 3 * 8u);
    cr_assert_eq(ct_lib_op_matrix_bytes(true, 3, 2, 5, 4), (2 * 5 + 2) * 4u, "transposed: stored 2 x 3");
    cr_assert_eq(ct_lib_op_matrix_bytes(false, 3, 2, 5, 4), (5 + 3) * 4u);
    cr_assert_eq(ct_lib_matrix_bytes(0, 7, 0, 4), 0u, "no rows: nothing touched");
    cr_assert_eq(ct_lib_matrix_bytes(7, 0, 7, 4), 0u, "no columns: nothing touched");
}

Test(rules, a_library_extent_from_invalid_arguments_runs_to_the_allocations_end)
{
    cr_assert_eq(ct_lib_matrix_bytes(4, 4, 3, 4), CT_TO_END, "ld under the rows");
    cr_assert_eq(ct_lib_matrix_bytes(-1, 4, 4, 4), CT_TO_END, "negative rows");
    cr_assert_eq(ct_lib_matrix_bytes(4, -2, 4, 4), CT_TO_END, "negative columns");
    cr_assert_eq(ct_lib_matrix_bytes(INT64_MAX, 3, INT64_MAX, 8), CT_TO_END, "past 2^64");
    cr_assert_eq(ct_lib_count_bytes(-5, 4), CT_TO_END);
    cr_assert_eq(ct_lib_strided_bytes(64, -1, 3, 4), CT_TO_END, "negative stride");
    cr_assert_eq(ct_lib_strided_bytes(64, 16, -3, 4), CT_TO_END, "negative batch");
    /* The store clips CT_TO_END to the allocation the pointer lies in: a
     * failure through it taints A's rest, never B. */
    ct_failure_desc d = {.error = ERR_UNKNOWN,
                         .api = "cublasSgemm_v2",
                         .status = "CUBLAS_STATUS_INVALID_VALUE",
                         .lib_status = 7};
    ct_range w = {A + 64, ct_lib_matrix_bytes(4, 4, 3, 4)};
    cr_assert_neq(ct_taint(s, &d, &w, 1, NULL), 0u);
    ct_range rest = {A + 64, SIZE - 64}, before = {A, 64}, other = {B, SIZE};
    cr_assert_eq(ct_check_written(s, &rest, 1, NULL), CT_ETAINTED);
    cr_assert_eq(ct_check_written(s, &before, 1, NULL), CT_OK);
    cr_assert_eq(ct_check_written(s, &other, 1, NULL), CT_OK);
}

Test(rules, a_library_vector_and_batch_span_their_strides)
{
    cr_assert_eq(ct_lib_vector_bytes(4, 3, 4), (1 + 3 * 3) * 4u);
    cr_assert_eq(ct_lib_vector_bytes(4, -3, 4), (1 + 3 * 3) * 4u, "a negative increment walks back: same extent");
    cr_assert_eq(ct_lib_vector_bytes(0, 1, 4), 0u);
    cr_assert_eq(ct_lib_vector_bytes(-3, 1, 4), 0u, "n <= 0: the library does nothing");
    cr_assert_eq(ct_lib_count_bytes(10, 8), 80u);
    cr_assert_eq(ct_lib_strided_bytes(48, 100, 3, 4), 2 * 100 * 4u + 48);
    cr_assert_eq(ct_lib_strided_bytes(48, 0, 3, 4), 48u, "stride 0: one operand shared");
    cr_assert_eq(ct_lib_strided_bytes(48, 100, 0, 4), 0u);
}

/* cuBLASLt: a layout the getter described is its batch of matrices; one it
 * could not, or one of a kind not followed, runs to the allocation's end. */
Test(rules, a_cublaslt_layout_it_cannot_describe_runs_to_the_allocations_end)
{
    const ct_lib_layout col =
        {.described = true, .plain_order = true, .rows = 3, .cols = 2, .ld = 5, .batch = 1, .esize = 4};
    cr_assert_eq(ct_lib_layout_bytes(&col), (5 + 3) * 4u);
    ct_lib_layout l = col;
    l.row_major = true;
    l.ld = 4;
    cr_assert_eq(ct_lib_layout_bytes(&l), (2 * 4 + 2) * 4u, "row-major: rows ld apart");
    l = col;
    l.batch = 3;
    l.stride = 100;
    cr_assert_eq(ct_lib_layout_bytes(&l), 2 * 100 * 4u + (5 + 3) * 4u);
    l = col;
    l.described = false;
    cr_assert_eq(ct_lib_layout_bytes(&l), CT_TO_END, "no getter, or it refused");
    l = col;
    l.plain_order = false;
    cr_assert_eq(ct_lib_layout_bytes(&l), CT_TO_END, "an interleaved order (COL32, ...)");
    l = col;
    l.planar = true;
    cr_assert_eq(ct_lib_layout_bytes(&l), CT_TO_END, "planar complex");
    l = col;
    l.pointer_array = true;
    cr_assert_eq(ct_lib_layout_bytes(&l), CT_TO_END, "batches through a pointer array");
    l = col;
    l.rows = (uint64_t)INT64_MAX + 1;
    cr_assert_eq(ct_lib_layout_bytes(&l), CT_TO_END, "rows past 2^63");
    l = col;
    l.esize = CT_TO_END;
    cr_assert_eq(ct_lib_layout_bytes(&l), CT_TO_END, "a type the shim cannot size");
    l = col;
    l.batch = -1;
    cr_assert_eq(ct_lib_layout_bytes(&l), CT_TO_END, "a negative batch count");
}

/* out = alpha * op(...) + beta * out: out is read unless beta is zero -
 * fixed so, or a host scalar all of whose bytes are zero. */
Test(rules, an_output_scaled_by_a_zero_host_beta_is_not_read)
{
    const float zero = 0.0f, one = 1.0f, negative_zero = -0.0f;
    const double zero2[2] = {0, 0}; /* a double complex */
    cr_assert_not(ct_lib_reads_output((ct_lib_scalar){.host = &zero, .size = sizeof zero}));
    cr_assert_not(ct_lib_reads_output((ct_lib_scalar){.host = zero2, .size = sizeof zero2}));
    cr_assert(ct_lib_reads_output((ct_lib_scalar){.host = &one, .size = sizeof one}));
    cr_assert(ct_lib_reads_output((ct_lib_scalar){.host = &negative_zero, .size = sizeof negative_zero}),
              "-0: its type is not known here, so read");
    cr_assert(ct_lib_reads_output((ct_lib_scalar){.host = NULL, .size = 4}), "on the device: counted as read");
    cr_assert(ct_lib_reads_output((ct_lib_scalar){.host = &zero, .size = CT_TO_END}), "a type not sized");
    cr_assert(ct_lib_reads_output((ct_lib_scalar){.host = &zero, .size = 0}));
    cr_assert_not(ct_lib_reads_output((ct_lib_scalar){.host = NULL, .size = CT_TO_END, .zero = true}),
                  "cuBLASLt's BETA_ZERO mode");
}

/* A 2 x (3 x 4) plan: basic layout side by side; advanced layout by its
 * embeds, strides and distances; a real transform's complex side n / 2 + 1
 * along its last dimension; padded in place. */
Test(rules, a_cufft_execution_covers_its_plans_batch_in_its_layout)
{
    ct_fft_plan p = {.kind = CT_FFT_C2C, .rank = 2, .batch = 2, .n = {3, 4}};
    uint64_t in, out;
    ct_lib_fft_bytes(&p, false, &in, &out);
    cr_assert_eq(in, 2 * 12 * 8u);
    cr_assert_eq(out, 2 * 12 * 8u);
    p.kind = CT_FFT_R2C;
    ct_lib_fft_bytes(&p, false, &in, &out);
    cr_assert_eq(in, 2 * 12 * 4u, "reals in");
    cr_assert_eq(out, 2 * 3 * 3 * 8u, "3 x (4 / 2 + 1) complex out");
    ct_lib_fft_bytes(&p, true, &in, &out);
    cr_assert_eq(in, 2 * 3 * 3 * 8u, "in place: the reals padded to the complex side");
    cr_assert_eq(out, 2 * 3 * 3 * 8u);
    p.kind = CT_FFT_Z2D;
    ct_lib_fft_bytes(&p, false, &in, &out);
    cr_assert_eq(in, 2 * 3 * 3 * 16u);
    cr_assert_eq(out, 2 * 12 * 8u);
    p = (ct_fft_plan){.kind = CT_FFT_C2C,
                      .rank = 2,
                      .batch = 2,
                      .n = {3, 4},
                      .advanced = 1,
                      .in = {.embed = {0, 5}, .stride = 2, .dist = 37},
                      .out = {.embed = {0, 6}, .stride = 1, .dist = 41}};
    ct_lib_fft_bytes(&p, false, &in, &out);
    cr_assert_eq(in, (37 + (2 * 5 + 3) * 2 + 1) * 8u, "last element: batch 1, row 2, column 3");
    cr_assert_eq(out, (41 + 2 * 6 + 3 + 1) * 8u);
    p.kind = CT_FFT_D2Z;
    ct_lib_fft_bytes(&p, true, &in, &out);
    cr_assert_eq(in, (37 + (2 * 5 + 3) * 2 + 1) * 8u, "advanced in place: each side its own layout");
    cr_assert_eq(out, (41 + 2 * 6 + 2 + 1) * 16u);
}

Test(rules, a_cufft_plan_no_execution_could_run_covers_the_whole_buffers)
{
    const ct_fft_plan good = {.kind = CT_FFT_C2C, .rank = 1, .batch = 1, .n = {8}};
    static const char *const why[] = {"kind", "rank 0", "rank 4", "size 0", "batch 0", "stride 0", "embed 0"};
    for (unsigned i = 0; i < sizeof why / sizeof why[0]; i++) {
        ct_fft_plan p = good;
        switch (i) {
        case 0: p.kind = CT_FFT_N_KINDS; break;
        case 1: p.rank = 0; break;
        case 2: p.rank = 4; break;
        case 3: p.n[0] = 0; break;
        case 4: p.batch = 0; break;
        case 5: p.advanced = 1, p.out.stride = 1, p.in.stride = 0; break;
        case 6:
            p.rank = 2, p.n[1] = 2, p.advanced = 1, p.in.stride = p.out.stride = 1;
            p.out.embed[1] = 2;
            break;
        }
        uint64_t in, out;
        ct_lib_fft_bytes(&p, false, &in, &out);
        cr_assert_eq(in, CT_TO_END, "%s", why[i]);
        if (i < 5)
            cr_assert_eq(out, CT_TO_END, "%s", why[i]);
    }
    ct_fft_plan huge = {.kind = CT_FFT_Z2Z, .rank = 3, .batch = INT64_MAX, .n = {INT64_MAX, 2, 2}};
    uint64_t in, out;
    ct_lib_fft_bytes(&huge, false, &in, &out);
    cr_assert_eq(in, CT_TO_END, "past 2^64");
}

/* The plan table: what was recorded is found, a remake replaces it, a
 * forget removes it, other handles are untouched; a full neighbourhood
 * records nothing. */
Test(rules, the_cufft_plan_table_keeps_each_handles_last_plan)
{
    static ct_fft_plans t;
    memset(&t, 0, sizeof t);
    ct_fft_plan p = {.kind = CT_FFT_R2C, .rank = 1, .batch = 3, .n = {10}}, got;
    cr_assert_not(ct_fft_plans_find(&t, 7, &got));
    cr_assert(ct_fft_plans_record(&t, 7, &p));
    cr_assert(ct_fft_plans_find(&t, 7, &got));
    cr_assert_eq(memcmp(&got, &p, sizeof p), 0);
    ct_fft_plan q = p;
    q.batch = 5;
    cr_assert(ct_fft_plans_record(&t, 8, &q));
    p.n[0] = 12;
    cr_assert(ct_fft_plans_record(&t, 7, &p), "a remake");
    cr_assert(ct_fft_plans_find(&t, 7, &got));
    cr_assert_eq(got.n[0], 12);
    ct_fft_plans_forget(&t, 7);
    cr_assert_not(ct_fft_plans_find(&t, 7, &got), "destroyed");
    cr_assert(ct_fft_plans_find(&t, 8, &got));
    cr_assert_eq(got.batch, 5, "another plan untouched");
    cr_assert_not(ct_fft_plans_find(&t, -1, &got), "a handle never made");
    unsigned recorded = 0;
    for (int h = 0; h < 4 * CT_FFT_SLOTS; h++)
        recorded += ct_fft_plans_record(&t, 1000 + h, &p);
    cr_assert_leq(recorded, CT_FFT_SLOTS - 1u, "a full table records no more");
    cr_assert(ct_fft_plans_find(&t, 8, &got), "and keeps what it had");
}

Test(rules, a_library_call_reading_a_failure_is_skipped_only_at_the_outermost)
{
    ct_range in[2] = {{A, 64}, {B, 64}};
    ct_failure_id root = 99;
    int error = -1;
    cr_assert_eq(ct_lib_call_rule(s, 0, in, 2, &root, &error), CT_LIB_RUN);
    cr_assert_eq(root, 0u);
    ct_failure_id f = taint(B + 32, 8);
    cr_assert_eq(ct_lib_call_rule(s, 0, in, 2, &root, &error), CT_LIB_SKIP);
    cr_assert_eq(root, f);
    cr_assert_eq(error, ERR_LAUNCH);
    cr_assert_eq(ct_lib_call_rule(s, 1, in, 2, &root, &error), CT_LIB_PASS, "nested: the outer call accounts");
    cr_assert_eq(root, 0u);
    cr_assert_eq(ct_lib_call_rule(s, 0, in, 1, &root, NULL), CT_LIB_RUN, "A carries nothing");
}

Test(rules, a_library_call_wrote_only_on_its_success_status)
{
    cr_assert(ct_lib_wrote(0, 0));
    cr_assert_not(ct_lib_wrote(7, 0), "CUBLAS_STATUS_INVALID_VALUE");
    cr_assert_not(ct_lib_wrote(201, 0), "CURAND_STATUS_LAUNCH_FAILURE");
    cr_assert_eq(ct_skip_result(CT_SKIP_ERROR, 13, 0), 13, "a skip under error: the library's execution failure");
    cr_assert_eq(ct_skip_result(CT_SKIP_PROPAGATE, 13, 0), 0);
}

Test(rules, a_nonzero_dev_info_refuses_outputs_only_where_the_library_says_they_were_not_computed)
{
    cr_assert_not(ct_lib_info_failed(CT_INFO_NONZERO_FAILED, 0));
    cr_assert(ct_lib_info_failed(CT_INFO_NONZERO_FAILED, 3), "potrf: minor 3 not positive definite");
    cr_assert(ct_lib_info_failed(CT_INFO_NONZERO_FAILED, -4), "a wrong parameter");
    cr_assert_not(ct_lib_info_failed(CT_INFO_POSITIVE_COMPUTED, 0));
    cr_assert_not(ct_lib_info_failed(CT_INFO_POSITIVE_COMPUTED, 2), "getrf: U(2,2) is zero, the factors computed");
    cr_assert(ct_lib_info_failed(CT_INFO_POSITIVE_COMPUTED, -1), "a wrong parameter");
}

Test(rules, library_failures_of_one_call_fold_only_with_the_same_status)
{
    ct_failure_desc bad = {.error = ERR_UNKNOWN,
                           .api = "cublasSgemm_v2",
                           .status = "CUBLAS_STATUS_INVALID_VALUE",
                           .lib_status = 7};
    ct_failure_desc failed = bad;
    failed.status = "CUBLAS_STATUS_EXECUTION_FAILED";
    failed.lib_status = 13;
    ct_range w1 = {A, 8}, w2 = {A + 8, 8}, w3 = {A + 16, 8};
    ct_failure_id first = ct_taint(s, &bad, &w1, 1, NULL);
    cr_assert_eq(ct_taint(s, &bad, &w2, 1, NULL), first, "the same call and status folds");
    cr_assert_neq(ct_taint(s, &failed, &w3, 1, NULL), first, "another status is another failure");
}

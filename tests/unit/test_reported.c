/*
 * test_reported.c - device-reported results waiting for a read
 * (core/reported.h): a read of an output or of devInfo takes its result
 * once, other reads take none, a later devInfo at the same address replaces
 * the earlier, a full set displaces the oldest, and a free drops what names
 * the allocation.
 */
#include <criterion/criterion.h>

#include "reported.h"

#define INFO 0x1000u
#define A 0x2000u

static ct_reported_set *s;

static void setup(void)
{
    s = ct_reported_new();
    cr_assert_not_null(s);
}

static void teardown(void)
{
    ct_reported_free(s);
}

static ct_reported result(const char *api, uint64_t info, uint64_t a)
{
    ct_reported r = {.api = api, .kind = CT_INFO_NONZERO_FAILED, .info = {info, 4}, .n_out = 1, .out = {{a, 64}}};
    r.bases[0] = a;
    r.bases[1] = info;
    r.n_bases = 2;
    return r;
}

static void add(ct_reported r)
{
    ct_reported_add(s, &r);
}

TestSuite(reported, .init = setup, .fini = teardown);

Test(reported, a_read_of_an_output_or_of_dev_info_takes_it_once)
{
    ct_reported got;
    add(result("potrf", INFO, A));
    cr_assert_eq(ct_reported_waiting(s), 1u);
    cr_assert_not(ct_reported_take(s, &(ct_range){A + 64, 8}, &got), "past the output");
    cr_assert(ct_reported_take(s, &(ct_range){A + 60, 8}, &got));
    cr_assert_str_eq(got.api, "potrf");
    cr_assert_not(ct_reported_take(s, &(ct_range){A, 8}, &got), "taken once");
    add(result("potrf", INFO, A));
    cr_assert(ct_reported_take(s, &(ct_range){INFO, 4}, &got), "devInfo's own read");
}

Test(reported, a_later_dev_info_at_the_same_address_replaces_the_earlier)
{
    ct_reported got;
    add(result("first", INFO, A));
    add(result("second", INFO, A + 0x1000));
    cr_assert_eq(ct_reported_waiting(s), 1u);
    cr_assert_not(ct_reported_take(s, &(ct_range){A, 8}, &got));
    cr_assert(ct_reported_take(s, &(ct_range){A + 0x1000, 8}, &got));
    cr_assert_str_eq(got.api, "second");
}

Test(reported, a_full_set_displaces_the_oldest)
{
    ct_reported got;
    for (unsigned i = 0; i <= CT_REPORTED_MAX; i++)
        add(result("one", INFO + 16 * i, A + 0x100 * i));
    cr_assert_eq(ct_reported_waiting(s), CT_REPORTED_MAX);
    cr_assert_not(ct_reported_take(s, &(ct_range){A, 8}, &got), "the oldest is gone");
    cr_assert(ct_reported_take(s, &(ct_range){A + 0x100, 8}, &got));
}

Test(reported, a_batch_is_taken_by_any_read_and_never_replaced)
{
    ct_reported got, batch = {.api = "batched", .n_out = 1, .out = {{0, CT_TO_END}}, .n_bases = 1, .bases = {A}};
    add(batch);
    add(batch);
    add(result("potrf", INFO, A));
    cr_assert_eq(ct_reported_waiting(s), 3u, "two batches and a devInfo");
    cr_assert(ct_reported_take(s, &(ct_range){0x9000, 1}, &got));
    cr_assert_str_eq(got.api, "batched");
    ct_reported_forget(s, A);
    cr_assert_eq(ct_reported_waiting(s), 0u, "a free of the arrays' allocation drops the batch");
}

Test(reported, a_free_drops_the_results_naming_the_allocation)
{
    ct_reported got;
    add(result("one", INFO, A));
    add(result("two", INFO + 16, A + 0x1000));
    ct_reported_forget(s, INFO);
    cr_assert_eq(ct_reported_waiting(s), 1u, "the first names INFO's allocation");
    ct_reported_forget(s, A + 0x1000);
    cr_assert_eq(ct_reported_waiting(s), 0u);
    cr_assert_not(ct_reported_take(s, &(ct_range){A, 8}, &got));
}

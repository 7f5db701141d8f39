/*
 * test_happy.c - the happy path: a program with no failure behaves
 * byte-for-byte as without the shim (stdout, stderr, exit status, its own
 * non-zero status included), and CUTAINT_DISABLE=1 is pure pass-through even
 * when something fails.
 */
#include <criterion/criterion.h>

#include "harness.h"

/* Runs args under the shim and alone; both must end the same way. */
static void expect_same_as_baseline(const h_run *run)
{
    h_result with, alone;
    h_exec(run, &with);
    h_exec_baseline(run, &alone);
    h_expect_ended(&alone);
    h_expect_ended(&with);
    cr_expect_str_eq(with.out, alone.out, "stdout differs under the shim\n--- with\n%s--- without\n%s", with.out,
                     alone.out);
    cr_expect_str_eq(with.err, alone.err, "stderr differs under the shim\n--- with\n%s--- without\n%s", with.err,
                     alone.err);
    cr_expect_eq(with.status, alone.status, "exit status %d under the shim, %d without", with.status, alone.status);
    h_free(&with);
    h_free(&alone);
}

Test(happy, identical_output_and_status)
{
    expect_same_as_baseline(&(h_run){.client = CT_CLIENT_LINKED, .args = {"happy"}});
}

Test(happy, programs_own_nonzero_status_kept)
{
    h_run run = {.client = CT_CLIENT_LINKED, .args = {"happy", "3"}};
    expect_same_as_baseline(&run);
    h_result r;
    h_exec(&run, &r);
    cr_expect_eq(r.status, 3, "the program returned 3; the process exited %d", r.status);
    h_free(&r);
}

Test(happy, values_are_the_programs)
{
    /* Pins what the happy scenario computes, so "identical" above is not
     * two identical failures. */
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"happy"}}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill x: CUDA_SUCCESS",
        "launch saxpy x y: CUDA_SUCCESS",
        "read x: CUDA_SUCCESS first=9 last=9",
        "read y: CUDA_SUCCESS first=5 last=5",
        "read z: CUDA_SUCCESS first=1 last=1",
        "read g: CUDA_SUCCESS first=10 last=10",
        "read r[0]: CUDA_SUCCESS first=5120 last=5120",
        "read e: CUDA_SUCCESS first=10 last=10",
        "read y[100..200): CUDA_SUCCESS first=5 last=5",
        "release: CUDA_SUCCESS",
        NULL,
    };
    h_expect_lines(&r, lines);
    cr_expect_eq(r.status, 0);
    cr_expect_eq(h_count_containing(r.out, "CUDA_ERROR"), 0, "an error on the happy path:\n%s", r.out);
    h_free(&r);
}

Test(happy, disable_is_pass_through_even_on_failure)
{
    static const char *const scenarios[] = {"failed_launch", "two_hops", "crash"};
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        expect_same_as_baseline(
            &(h_run){.client = CT_CLIENT_LINKED, .args = {scenarios[i]}, .env = {"CUTAINT_DISABLE=1"}});
}

/*
 * test_hostile.c - hostile programs (hostile_client.c) under the shim and
 * without it: the shim forwards the driver's own answer to every call (the
 * printed codes are identical), never crashes, never latches a context loss
 * falsely (no context_lost event, no health file), and never changes the
 * exit status of a program that had no real failure.
 * Reuses tests/integration/harness.c to run the client.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* must_have: a line the client prints under the shim, or NULL. */
static void compare(const char *scenario, const char *arg, const char *must_have)
{
    h_run run = {.client = REL_HOSTILE,
                 .args = {scenario, arg, NULL},
                 .env = {"CUTAINT_HEALTH_FILE=@DIR@/health", "CUTAINT_LOG=off", NULL}};
    h_result base, shim;
    h_exec_baseline(&run, &base);
    h_exec(&run, &shim);
    h_expect_ended(&base);
    h_expect_ended(&shim);
    cr_expect_eq(shim.status, base.status, "%s: exit status %d under the shim, %d without", scenario, shim.status,
                 base.status);
    cr_expect_eq(shim.status, 0, "%s: exit status %d", scenario, shim.status);
    cr_expect_str_eq(shim.out, base.out, "%s: the shim changed an answer:\n--- without\n%s\n--- with\n%s", scenario,
                     base.out, shim.out);
    h_report rep;
    h_report_load(shim.report, &rep);
    cr_expect(!rep.missing, "%s: no report", scenario);
    cr_expect_eq(rep.invalid, 0, "%s: %d report lines are not JSON", scenario, rep.invalid);
    cr_expect_eq(h_count(&rep, "context_lost"), 0, "%s: a context loss was latched: %s", scenario, h_events(&rep));
    cr_expect(access(h_path(&shim, "health"), F_OK) != 0, "%s: a health file was written", scenario);
    if (must_have)
        cr_expect(h_has_line(shim.out, must_have), "%s: no line \"%s\" in:\n%s", scenario, must_have, shim.out);
    h_report_free(&rep);
    h_free(&base);
    h_free(&shim);
}

Test(hostile, garbage_handles_pointers_sizes)
{
    compare("garbage", NULL, NULL);
}
Test(hostile, tainted_read_with_a_size_the_driver_refuses)
{
    compare("tainted_huge_read", NULL, NULL);
}
Test(hostile, calls_before_cuInit)
{
    compare("before_init", NULL, NULL);
}
Test(hostile, threads_without_a_current_context)
{
    compare("no_context", NULL, NULL);
}

/* "late_free 4": the late calls really ran after the driver shut down (they
 * saw CUDA_ERROR_DEINITIALIZED). */
Test(hostile, calls_during_teardown)
{
    compare("teardown", REL_HOSTILE_LATE, "late_free 4");
}

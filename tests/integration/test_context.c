/*
 * test_context.c - context loss: a kernel that faults at execution makes the
 * next sync fail; the probe fails; the latch is set with an operator-facing
 * reason; the program's "return 0" becomes 70 (CUTAINT_EXIT_STATUS), or what
 * CUTAINT_ON_CONTEXT_LOSS says; the health file; an isolated failure latches
 * nothing; simulated loss (CUTAINT_INJECT=...=context_lost); a loss seen
 * first by a query, or by nothing cutaint checks, before exit(1); a healthy
 * process whose last answer was CUDA_ERROR_NOT_READY keeps its status.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define ILLEGAL "CUDA_ERROR_ILLEGAL_ADDRESS"

/* The report of a latched run: a failing probe, one context_lost, and an exit
 * event carrying the status. */
static void expect_latched_report(const h_result *r, int status, bool simulated)
{
    h_report rep;
    h_expect_report(r, &rep);
    cr_expect_eq(h_count(&rep, "context_lost"), 1, "events: %s", h_events(&rep));
    int c = h_find(&rep, "context_lost", 0);
    if (c >= 0) {
        const char *reason = h_str(rep.line[c], "reason");
        cr_expect(strlen(reason) > 20, "the reason should speak to an operator: \"%s\"", reason);
        cr_expect_str_eq(h_str(rep.line[c], "simulated"), simulated ? "true" : "false");
    }
    if (!simulated) {
        int p = h_find(&rep, "probe", 0);
        cr_expect(p >= 0 && p < c, "a probe must precede the latch: %s", h_events(&rep));
        if (p >= 0) {
            cr_expect_str_eq(h_str(rep.line[p], "verdict"), "context_lost");
            cr_expect_str_eq(h_str(rep.line[p], "result"), ILLEGAL);
        }
    }
    int e = h_find(&rep, "exit", 0);
    cr_expect(e >= 0, "no exit event: %s", h_events(&rep));
    if (e >= 0) {
        long long v = -1;
        cr_expect(h_int(rep.line[e], "status", &v) && v == status, "exit event status %lld, want %d", v, status);
        cr_expect(h_int(rep.line[e], "program_status", &v) && v == 0, "program_status %lld", v);
        cr_expect_str_eq(h_str(rep.line[e], "context_lost"), "true");
    }
    h_report_free(&rep);
}

Test(context, crash_latches_and_exits_70)
{
    h_run run = {.client = CT_CLIENT_LINKED, .args = {"crash"}};
    h_result alone, r;
    h_exec_baseline(&run, &alone);
    h_expect_ended(&alone);
    cr_expect_eq(alone.status, 0, "the program returns 0 on its own");
    cr_expect(h_has_line(alone.out, "sync: " ILLEGAL), "baseline:\n%s", alone.out);
    h_free(&alone);

    h_exec(&run, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {"launch crash x: CUDA_SUCCESS", "sync: " ILLEGAL, "sync again: " ILLEGAL, NULL};
    h_expect_lines(&r, lines);
    cr_expect_eq(r.status, 70, "exit status %d, want 70\n--- stderr\n%s", r.status, r.err);
    cr_expect(h_count_containing(r.err, "context") >= 1, "no log line about the lost context:\n%s", r.err);
    expect_latched_report(&r, 70, false);
    h_free(&r);
}

Test(context, exit_status_0_keeps_the_programs)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"crash"}, .env = {"CUTAINT_EXIT_STATUS=0"}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0, "CUTAINT_EXIT_STATUS=0: exit status %d", r.status);
    expect_latched_report(&r, 0, false);
    h_free(&r);
}

Test(context, driver_injected_execution_fault)
{
    /* The happy program, with fakecuda making its first fill fault at execution. */
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"happy"},
                    .env = {"FAKECUDA_FAULTS=launch:_Z4fillPfif#1=fault"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 70, "exit status %d\n--- stdout\n%s--- stderr\n%s", r.status, r.out, r.err);
    expect_latched_report(&r, 70, false);
    h_free(&r);
}

/* CUTAINT_ON_CONTEXT_LOSS: continue runs on, exit leaves at once with the
 * fault status, abort raises SIGABRT. */
static const struct loss_case {
    const char *env;
    int status;
    bool runs_on; /* does the program get to its second sync? */
} loss_cases[] = {
    {"CUTAINT_ON_CONTEXT_LOSS=continue", 70, true},
    {"CUTAINT_ON_CONTEXT_LOSS=exit", 70, false},
    {"CUTAINT_ON_CONTEXT_LOSS=abort", 128 + 6, false},
};

Test(context, on_context_loss)
{
    for (size_t i = 0; i < sizeof loss_cases / sizeof loss_cases[0]; i++) {
        const struct loss_case *c = &loss_cases[i];
        h_result r;
        h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"crash"}, .env = {c->env}}, &r);
        cr_expect(!r.timed_out, "%s: hung", c->env);
        cr_expect_eq(r.status, c->status, "%s: exit status %d, want %d\n--- stderr\n%s", c->env, r.status, c->status,
                     r.err);
        cr_expect_eq(h_has_line(r.out, "sync again: " ILLEGAL), c->runs_on, "%s:\n%s", c->env, r.out);
        h_report rep;
        h_report_load(r.report, &rep);
        cr_expect_eq(h_count(&rep, "context_lost"), 1, "%s: the latch is in the report before leaving: %s", c->env,
                     h_events(&rep));
        h_report_free(&rep);
        h_free(&r);
    }
}

Test(context, isolated_failure_latches_nothing)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"failed_launch"}, .env = {"CUTAINT_HEALTH_FILE=@DIR@/health"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect(access(h_path(&r, "health"), F_OK) != 0, "a health file was written for an isolated failure");
    h_report rep;
    h_expect_report(&r, &rep);
    int p = h_find(&rep, "probe", 0);
    cr_expect(p >= 0, "no probe after the failed launch: %s", h_events(&rep));
    if (p >= 0)
        cr_expect_str_eq(h_str(rep.line[p], "verdict"), "isolated");
    cr_expect_eq(h_count(&rep, "context_lost"), 0, "%s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

Test(context, crash_writes_health_file)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"crash"}, .env = {"CUTAINT_HEALTH_FILE=@DIR@/health"}}, &r);
    h_expect_ended(&r);
    char *health = h_slurp(h_path(&r, "health"));
    cr_assert(health != NULL, "no health file after a lost context\n--- stderr\n%s", r.err);
    cr_expect(strstr(health, ILLEGAL) != NULL, "the health file should give the reason:\n%s", health);
    free(health);
    h_free(&r);
}

Test(context, simulated_loss_exit_70_and_health_file)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"happy"},
                    .env = {"CUTAINT_INJECT=launch:_Z4fillPfif#1=context_lost", "CUTAINT_HEALTH_FILE=@DIR@/health"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 70, "exit status %d\n--- stderr\n%s", r.status, r.err);
    char *health = h_slurp(h_path(&r, "health"));
    cr_expect(health != NULL && health[0] != '\0', "no health file (or an empty one) after simulated loss");
    free(health);
    expect_latched_report(&r, 70, true);
    h_free(&r);
}

/* After a simulated loss only the ways out of a lost context reach the
 * driver (core's ct_survives_simulated_loss, on intercept.def's lost
 * column): an allocation fails as on a destroyed context, making a
 * context current does not. */
Test(context, after_a_simulated_loss_only_the_ways_out_reach_the_driver)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"after_loss"},
                    .env = {"CUTAINT_INJECT=launch:_Z4fillPfif#1=context_lost"}},
           &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill x: " ILLEGAL,
        "alloc y: " ILLEGAL,
        "set current: CUDA_SUCCESS",
        NULL,
    };
    h_expect_lines(&r, lines);
    h_free(&r);
}

Test(context, stale_health_file_removed_at_start)
{
    h_stale stale;
    h_stale_health_file(&stale, H_HEALTH_MARKER "\nleft by an earlier process\n");
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"happy"}, .env = {stale.env}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect(access(stale.path, F_OK) != 0, "the predecessor's health file condemns a healthy process");
    cr_expect(h_count_containing(r.err, "health") >= 1, "its removal should be logged:\n%s", r.err);
    h_stale_free(&stale);
    h_free(&r);
}

/* A context lost and seen first by a query (or by nothing cutaint checks),
 * in a process that then calls exit(1) at once: still latched, 70, with the
 * health file and the context_lost event.  `after` names the probe's cause:
 * the query, or the check made at exit.  On fakecuda's deterministic
 * schedule (H_SYNC): asynchronously the fault may surface at a call before
 * the query. */
static const struct query_case {
    const char *how, *after;
    const char *const lines[3];
} query_cases[] = {
    {"stream", "cuStreamQuery", {"launch crash x: CUDA_SUCCESS", "cuStreamQuery: " ILLEGAL}},
    {"event", "cuEventQuery", {"cuEventRecord: CUDA_SUCCESS", "cuEventQuery: " ILLEGAL}},
    {"unwrapped", "exit", {"launch crash x: CUDA_SUCCESS", "cuMemGetInfo: CUDA_SUCCESS"}},
};

ParameterizedTestParameters(context, a_loss_first_seen_by_a_query_then_exit_1)
{
    return H_ROWS(query_cases);
}

ParameterizedTest(int *row, context, a_loss_first_seen_by_a_query_then_exit_1)
{
    const struct query_case *c = &query_cases[*row];
    h_run run = {.client = CT_CLIENT_LIFECYCLE,
                 .args = {"loss_then_exit", c->how},
                 .env = {H_SYNC, "CUTAINT_HEALTH_FILE=@DIR@/health"}};
    h_result alone, r;
    h_exec_baseline(&run, &alone);
    cr_expect_eq(alone.status, 1, "%s: the program's own status is 1, got %d", c->how, alone.status);
    h_free(&alone);

    h_exec(&run, &r);
    h_expect_ended(&r);
    h_expect_lines(&r, c->lines);
    cr_expect_eq(r.status, 70, "%s: exit status %d, want 70\n--- stderr\n%s", c->how, r.status, r.err);
    char *health = h_slurp(h_path(&r, "health"));
    cr_expect(health != NULL && strstr(health, ILLEGAL) != NULL, "%s: health file: %s", c->how,
              health ? health : "none");
    free(health);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "context_lost"), 1, "%s: %s", c->how, h_events(&rep));
    int p = h_find(&rep, "probe", 0);
    cr_assert(p >= 0, "%s: no probe: %s", c->how, h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[p], "after"), c->after, "%s", c->how);
    cr_expect_str_eq(h_str(rep.line[p], "verdict"), "context_lost");
    int e = h_find(&rep, "exit", 0);
    long long v = -1;
    cr_expect(e >= 0 && h_int(rep.line[e], "program_status", &v) && v == 1, "%s: program_status %lld", c->how, v);
    h_report_free(&rep);
    h_free(&r);
}

/* Issue 40: the check made at exit comes while the driver still answers,
 * whichever way it tears itself down (fakecuda's FAKECUDA_TEARDOWN), on
 * both loading paths: a loss seen only by calls cutaint does not wrap is
 * latched, reported, and the exit status is 70.  (Registered with atexit
 * when cutaint loaded the driver - on the runtime's path before the
 * program's cuInit - it ran after an atexit teardown and the loss went
 * unsaid, status 1.) */
static const struct exit_check_case {
    const char *client, *teardown, *from;
} exit_check_cases[] = {
    {CT_CLIENT_LINKED, "FAKECUDA_TEARDOWN=destructor", "main"},
    {CT_CLIENT_LINKED, "FAKECUDA_TEARDOWN=atexit", "main"},
    {CT_CLIENT_RUNTIME, "FAKECUDA_TEARDOWN=destructor", "main"},
    {CT_CLIENT_RUNTIME, "FAKECUDA_TEARDOWN=atexit", "main"},
    /* exit() from another thread runs no thread-exit destructor of the main
     * thread: cutaint's destructor looks, before the driver's.  (A driver
     * torn down by atexit is gone by then: docs/LAYERS.md.) */
    {CT_CLIENT_RUNTIME, "FAKECUDA_TEARDOWN=destructor", "thread"},
};

ParameterizedTestParameters(context, a_loss_seen_only_at_exit_is_latched_on_both_teardowns)
{
    return H_ROWS(exit_check_cases);
}

ParameterizedTest(int *row, context, a_loss_seen_only_at_exit_is_latched_on_both_teardowns)
{
    const struct exit_check_case *c = &exit_check_cases[*row];
    h_result r;
    h_exec(&(h_run){.client = c->client, .args = {"loss_at_exit", c->from}, .env = {H_SYNC, c->teardown}}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {"launch crash: CUDA_SUCCESS", "cuMemGetInfo: CUDA_SUCCESS", NULL};
    h_expect_lines(&r, lines);
    cr_expect_eq(r.status, 70, "%s %s %s: exit status %d, want 70\n--- stderr\n%s", c->client, c->teardown, c->from,
                 r.status, r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_str_eq(h_events(&rep), "start,probe,context_lost,exit", "%s %s", c->client, c->teardown);
    int p = h_find(&rep, "probe", 0);
    cr_expect(p >= 0 && strcmp(h_str(rep.line[p], "after"), "exit") == 0, "%s %s: %s", c->client, c->teardown,
              h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

Test(context, the_check_at_exit_does_not_exit_twice)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIFECYCLE,
                    .args = {"loss_then_exit", "unwrapped"},
                    .env = {H_SYNC, "CUTAINT_ON_CONTEXT_LOSS=exit"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 70, "status %d\n%s", r.status, r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_str_eq(h_events(&rep), "start,probe,context_lost,exit");
    h_report_free(&rep);
    h_free(&r);
}

/* Healthy, the last call a query that said CUDA_ERROR_NOT_READY - and so
 * does the check made at exit: the program's own status, nothing latched. */
Test(context, not_ready_at_exit_is_healthy)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIFECYCLE,
                    .args = {"loss_then_exit", "not_ready"},
                    .env = {"FAKECUDA_FAULTS=api:cuStreamQuery#1+=CUDA_ERROR_NOT_READY",
                            "CUTAINT_HEALTH_FILE=@DIR@/health"}},
           &r);
    h_expect_ended(&r);
    static const char *const lines[] = {"cuStreamQuery: CUDA_ERROR_NOT_READY", NULL};
    h_expect_lines(&r, lines);
    cr_expect_eq(r.status, 3, "the program's own status is 3, got %d\n%s", r.status, r.err);
    cr_expect(access(h_path(&r, "health"), F_OK) != 0, "a health file for a healthy process");
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_str_eq(h_events(&rep), "start,exit");
    h_report_free(&rep);
    h_free(&r);
}

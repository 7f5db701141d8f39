/*
 * test_lifecycle.c - what a context and a module take with them when they
 * go: after cuCtxDestroy, cuDevicePrimaryCtxReset or the last
 * cuDevicePrimaryCtxRelease, memory the driver places at a freed address (a
 * module's global) is neither refused nor skipped for the old failure, which
 * stays in the report.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static const char *const ends[] = {"destroy", "reset", "release"};

ParameterizedTestParameters(lifecycle, a_gone_context_leaves_nothing_behind)
{
    return H_ROWS(ends);
}

ParameterizedTest(int *row, lifecycle, a_gone_context_leaves_nothing_behind)
{
    const char *how = ends[*row];
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIFECYCLE, .args = {"context_gone", how}, .env = {"CUTAINT_LOG=info"}}, &r);
    h_expect_ended(&r);
    char ended[64];
    snprintf(ended, sizeof ended, "%s: CUDA_SUCCESS", how);
    const char *const lines[] = {
        "launch fill x: CUDA_ERROR_INVALID_VALUE",
        "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        ended,
        "global at the freed address: yes",
        "read global: CUDA_SUCCESS bytes=0x5a",
        "launch fill global: CUDA_SUCCESS",
        "read global after fill: CUDA_SUCCESS first=2 last=2",
        NULL,
    };
    h_expect_lines(&r, lines);
    cr_expect_eq(r.status, 0, "%s: status %d", how, r.status);
    cr_expect_eq(h_count_containing(r.err, "1 allocation and 1 kernel forgotten"), 1, "%s: no line says what went\n%s",
                 how, r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_str_eq(h_events(&rep), "start,failure,probe,refused_read,exit", "%s", how);
    h_report_free(&rep);
    h_free(&r);
}

/* Issue 40, item 1: an end the driver refuses ends nothing.  Each row: the
 * end, the fault that makes the driver refuse it (none: the driver refuses
 * a primary context's cuCtxDestroy itself), and the reads that must be
 * refused after it. */
static const struct refused_end {
    const char *how, *faults, *answer;
} refused_ends[] = {
    {"destroy_primary", "", "CUDA_ERROR_INVALID_CONTEXT"},
    {"destroy", "api:cuCtxDestroy#1=CUDA_ERROR_NOT_PERMITTED", "CUDA_ERROR_NOT_PERMITTED"},
    /* Every release: cutaint's own look at the primary context (a retain and
     * a release) comes first. */
    {"release", "api:cuDevicePrimaryCtxRelease#1+=CUDA_ERROR_NOT_PERMITTED", "CUDA_ERROR_NOT_PERMITTED"},
    {"reset", "api:cuDevicePrimaryCtxReset#1=CUDA_ERROR_NOT_PERMITTED", "CUDA_ERROR_NOT_PERMITTED"},
    {"module", "api:cuModuleUnload#1=CUDA_ERROR_NOT_PERMITTED", "CUDA_ERROR_NOT_PERMITTED"},
    {"library", "api:cuLibraryUnload#1=CUDA_ERROR_NOT_PERMITTED", "CUDA_ERROR_NOT_PERMITTED"},
};

ParameterizedTestParameters(lifecycle, an_end_the_driver_refuses_forgets_nothing)
{
    return H_ROWS(refused_ends);
}

ParameterizedTest(int *i, lifecycle, an_end_the_driver_refuses_forgets_nothing)
{
    const struct refused_end *row = &refused_ends[*i];
    char faults[128], ended[96];
    snprintf(faults, sizeof faults, "FAKECUDA_FAULTS=%s", row->faults);
    bool image = strcmp(row->how, "module") == 0 || strcmp(row->how, "library") == 0;
    snprintf(ended, sizeof ended, "%s: %s", image ? "unload" : row->how, row->answer);
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIFECYCLE, .args = {"refused_end", row->how}, .env = {faults}}, &r);
    h_expect_ended(&r);
    static const char *const context_lines[] = {"launch fill x: CUDA_ERROR_INVALID_VALUE",
                                                "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff", NULL,
                                                "read x after: CUDA_ERROR_INVALID_VALUE bytes=0xff", NULL};
    static const char *const image_lines[] = {NULL, "launch reduce: CUDA_ERROR_INVALID_VALUE",
                                              "read in: CUDA_ERROR_INVALID_VALUE bytes=0xff",
                                              "read out: CUDA_ERROR_INVALID_VALUE bytes=0xff", NULL};
    const char *lines[5];
    memcpy(lines, image ? image_lines : context_lines, sizeof lines);
    lines[image ? 0 : 2] = ended;
    h_expect_lines(&r, lines);
    cr_expect_eq(r.status, 0, "%s: status %d", row->how, r.status);
    h_free(&r);
}

/* A function handle the driver reuses for another kernel after an unload:
 * decoded with the new kernel's one-parameter layout (kernelParams ends at a
 * guard page, so reading a second entry is a SIGSEGV), its failure named
 * after it, its output refused. */
static const struct reuse_case {
    const char *from, *thread;
} reuse_cases[] = {
    {"module", "same"},
    {"module", "other"},
    {"library", "same"},
    {"library", "other"},
};

ParameterizedTestParameters(lifecycle, a_reused_function_handle_is_the_new_kernel)
{
    return H_ROWS(reuse_cases);
}

ParameterizedTest(int *row, lifecycle, a_reused_function_handle_is_the_new_kernel)
{
    const struct reuse_case *c = &reuse_cases[*row];
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIFECYCLE,
                    .args = {"handle_reuse", c->from, c->thread},
                    .env = {"CUTAINT_LOG=info"}},
           &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch saxpy x y: CUDA_SUCCESS",
        "read y: CUDA_SUCCESS first=3 last=3",
        "unload: CUDA_SUCCESS",
        "launch unknown handle: CUDA_ERROR_INVALID_HANDLE",
        "handle reused: yes",
        "launch copy_pair in ok_out: CUDA_SUCCESS",
        "launch copy_pair in bad_out: CUDA_ERROR_INVALID_VALUE",
        "read ok_out: CUDA_SUCCESS first=5 last=5",
        "read bad_out: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        NULL,
    };
    h_expect_lines(&r, lines);
    cr_expect_eq(r.status, 0, "%s/%s: status %d\n%s", c->from, c->thread, r.status, r.err);
    cr_expect_eq(h_count_containing(r.err, "Unload(0x"), 1, "%s: the unload's log line:\n%s", c->from, r.err);
    cr_expect_eq(h_count_containing(r.err, "1 kernel forgotten"), 1, "%s:\n%s", c->from, r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    int failures = 0;
    for (int f = h_find(&rep, "failure", 0); f >= 0; f = h_find(&rep, "failure", f + 1))
        failures += strcmp(h_str(rep.line[f], "kernel"), "copy_pair(Pair)") == 0;
    cr_expect_eq(failures, 1, "no failure of copy_pair(Pair): %s", h_events(&rep));
    int rr = h_find(&rep, "refused_read", 0);
    cr_assert(rr >= 0, "%s", h_events(&rep));
    cr_expect_str_eq(h_arr_str(rep.line[rr], "path", 0), "copy_pair(Pair)");
    h_report_free(&rep);
    h_free(&r);
}

/* Issue 40: a graph exec whose destroy the driver refuses is still alive,
 * and keeps its exec sets: its launch reading a stale x is skipped and its
 * output refused.  (Forgotten before the driver's call, its launch went
 * unchecked and y was served.) */
Test(lifecycle, a_refused_exec_destroy_keeps_the_exec_checked)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"exec_destroy"},
                    .env = {"FAKECUDA_FAULTS=api:cuGraphExecDestroy#1=CUDA_ERROR_NOT_PERMITTED"}},
           &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill x: CUDA_ERROR_INVALID_VALUE",     "instantiate: CUDA_SUCCESS",
        "exec destroy: CUDA_ERROR_NOT_PERMITTED",      "graph: CUDA_SUCCESS",
        "read y: CUDA_ERROR_INVALID_VALUE bytes=0xff", NULL,
    };
    h_expect_lines(&r, lines);
    cr_expect_eq(r.status, 0, "status %d", r.status);
    h_free(&r);
}

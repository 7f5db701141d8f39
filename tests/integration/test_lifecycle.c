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
    cr_expect_eq(h_count_containing(r.err, "1 allocation forgotten"), 1, "%s: no line says what went\n%s", how, r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_str_eq(h_events(&rep), "start,failure,probe,refused_read,exit", "%s", how);
    h_report_free(&rep);
    h_free(&r);
}

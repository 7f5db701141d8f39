/*
 * test_badinput.c - what the shim does with bad input: no driver at all (a
 * clear one-line message, error codes, no crash); malformed CUTAINT_
 * variables (one line naming the variable and the value, the program runs
 * on with that variable's default); unknown CUTAINT_ names; NULL arguments
 * to wrapped calls (the driver's own answers, no crash, also where the shim
 * has work to do).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

Test(badinput, missing_driver_plugin_style)
{
    h_run run = {.client = CT_CLIENT_NODRIVER, .no_driver = true};
    h_result alone, r;
    h_exec_baseline(&run, &alone);
    h_expect_ended(&alone);
    cr_expect(h_has_line(alone.out, "cuInit: missing"), "without the shim nothing defines cuInit:\n%s", alone.out);
    h_free(&alone);

    h_exec(&run, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    /* The wrapped entry points (cuInit is not one: the program may find it
     * missing, or get an error). */
    static const char *const calls[] = {"cuMemAlloc_v2", "cuMemcpyDtoH_v2", "cuLaunchKernel", "cuStreamSynchronize"};
    cr_expect(!h_has_line(r.out, "cuInit: 0"), "cuInit succeeded with no driver:\n%s", r.out);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%s: ", calls[i]);
        const char *line = h_line_containing(r.out, prefix);
        cr_expect(line[0] != '\0', "no line for %s:\n%s", calls[i], r.out);
        long code = line[0] ? strtol(line + strlen(prefix), NULL, 10) : 0;
        cr_expect(code != 0, "%s succeeded with no driver: %s", calls[i], line);
    }
    cr_expect_eq(h_count_containing(r.err, "libcuda"), 1, "one clear line naming libcuda:\n%s", r.err);
    cr_expect_eq(h_count_lines(r.err), 1, "one line, not one per call:\n%s", r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    int s = h_find(&rep, "start", 0);
    cr_expect(s >= 0, "%s", h_events(&rep));
    if (s >= 0)
        cr_expect_str_eq(h_str(rep.line[s], "driver_version"), "null");
    h_report_free(&rep);
    h_free(&r);
}

Test(badinput, missing_driver_runtime_style)
{
    /* dlopen("libcuda.so.1") fails: the program's own message and status. */
    h_run run = {.client = CT_CLIENT_RUNTIME, .args = {"happy"}, .no_driver = true};
    h_result alone, r;
    h_exec_baseline(&run, &alone);
    h_exec(&run, &r);
    h_expect_ended(&r);
    cr_expect_eq(alone.status, 3);
    cr_expect_eq(r.status, alone.status, "exit %d under the shim, %d without", r.status, alone.status);
    cr_expect_str_eq(r.out, alone.out);
    cr_expect(h_count_containing(r.err, "dlopen(libcuda.so.1) failed") == 1, "%s", r.err);
    h_free(&alone);
    h_free(&r);
}

/* A malformed variable: one line naming it and its value; the default
 * applies (the line the scenario must still print shows it). */
typedef struct bad_var {
    const char *env;
    const char *name;  /* what the diagnostic must name */
    const char *shown; /* ... and the value it must show */
    const char *scenario;
    const char *line; /* stdout must hold this (the default's effect) */
    int status;
} bad_var;

static const bad_var bad_vars[] = {
    {"CUTAINT_POISON=banana", "CUTAINT_POISON", "banana", "failed_launch",
     "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff", 0},
    {"CUTAINT_POISON=256", "CUTAINT_POISON", "256", "failed_launch", "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff", 0},
    {"CUTAINT_ON_SKIP=maybe", "CUTAINT_ON_SKIP", "maybe", "two_hops", "launch saxpy x y: CUDA_SUCCESS", 0},
    {"CUTAINT_EXIT_STATUS=seventy", "CUTAINT_EXIT_STATUS", "seventy", "crash", "sync: CUDA_ERROR_ILLEGAL_ADDRESS", 70},
    {"CUTAINT_ON_CONTEXT_LOSS=explode", "CUTAINT_ON_CONTEXT_LOSS", "explode", "crash",
     "sync again: CUDA_ERROR_ILLEGAL_ADDRESS", 70},
    {"CUTAINT_LOG=loud", "CUTAINT_LOG", "loud", "failed_launch", "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff", 0},
    {"CUTAINT_DISABLE=perhaps", "CUTAINT_DISABLE", "perhaps", "failed_launch",
     "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff", 0},
    {"CUTAINT_INJECT=launch:", "CUTAINT_INJECT", "launch:", "failed_launch", "launch fill x: CUDA_ERROR_INVALID_VALUE",
     0},
    {"CUTAINT_INJECT=launch:_Z4fillPfif#0=CUDA_ERROR_UNKNOWN", "CUTAINT_INJECT", "#0", "inject_seq",
     "launch fill 1: CUDA_SUCCESS", 0},
    {"CUTAINT_INJECT=launch:_Z4fillPfif=NOT_AN_ERROR", "CUTAINT_INJECT", "NOT_AN_ERROR", "inject_seq",
     "launch fill 1: CUDA_SUCCESS", 0},
    {"CUTAINT_ARGS=fill=banana", "CUTAINT_ARGS", "banana", "failed_launch",
     "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff", 0},
    {"CUTAINT_POSION=0", "CUTAINT_POSION", "CUTAINT_POSION", "failed_launch",
     "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff", 0},
};

ParameterizedTestParameters(badinput, malformed_variable)
{
    return H_ROWS(bad_vars);
}

ParameterizedTest(int *row, badinput, malformed_variable)
{
    const bad_var *v = &bad_vars[*row];
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {v->scenario}, .env = {v->env}}, &r);
    h_expect_ended(&r);
    cr_log_info("%s", v->env);
    cr_expect_eq(h_count_containing(r.err, v->name), 1, "%s: want one line naming %s\n--- stderr\n%s", v->env, v->name,
                 r.err);
    const char *line = h_line_containing(r.err, v->name);
    cr_expect(strstr(line, v->shown) != NULL, "%s: the line should show the value:\n  %s", v->env, line);
    cr_expect(h_has_line(r.out, v->line), "%s: the default should apply; want\n  %s\n--- stdout\n%s", v->env, v->line,
              r.out);
    cr_expect_eq(r.status, v->status, "%s: exit status %d, want %d", v->env, r.status, v->status);
    h_free(&r);
}

Test(badinput, unwritable_report_path)
{
    h_run run = {.client = CT_CLIENT_LINKED,
                 .args = {"happy"},
                 .no_report = true,
                 .env = {"CUTAINT_REPORT=/nonexistent-dir/cutaint/report.jsonl"}};
    h_result alone, r;
    h_exec_baseline(&run, &alone);
    h_exec(&run, &r);
    h_expect_ended(&r);
    cr_expect_str_eq(r.out, alone.out, "the program must run on unchanged");
    cr_expect_eq(r.status, 0);
    cr_expect_eq(h_count_containing(r.err, "/nonexistent-dir/cutaint/report.jsonl"), 1,
                 "one line saying the report cannot be written:\n%s", r.err);
    h_free(&alone);
    h_free(&r);
}

Test(badinput, null_arguments_get_the_drivers_answers)
{
    h_run run = {.client = CT_CLIENT_LINKED, .args = {"null_args"}};
    h_result alone, r;
    h_exec_baseline(&run, &alone);
    h_expect_ended(&alone);
    h_exec(&run, &r);
    h_expect_ended(&r);
    cr_expect_str_eq(r.out, alone.out, "NULL arguments: the driver's own answers\n--- with\n%s--- without\n%s", r.out,
                     alone.out);
    cr_expect_eq(r.status, alone.status);
    cr_expect(h_has_line(r.out, "read x: CUDA_SUCCESS first=1 last=1"), "%s", r.out);
    h_free(&alone);
    h_free(&r);
}

Test(badinput, null_arguments_where_taint_exists)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"null_tainted"}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    const char *line = h_line_containing(r.out, "cuMemcpyDtoH(NULL, x): ");
    cr_expect(line[0] != '\0' && strstr(line, "CUDA_SUCCESS") == NULL, "a read into NULL cannot succeed: %s\n%s", line,
              r.out);
    cr_expect(h_count_containing(r.out, "cuLaunchKernel(saxpy, no params): ") == 1, "%s", r.out);
    /* A copy from tainted bytes to NULL: still the driver's own answer for
     * the NULL destination, not a skip reported as success. */
    cr_expect(h_has_line(r.out, "cuMemcpyDtoD(0, x): CUDA_ERROR_INVALID_VALUE"), "%s", r.out);
    cr_expect(h_count_containing(r.out, "cuLaunchKernel(saxpy, extra without buffer): ") == 1, "%s", r.out);
    h_free(&r);
}

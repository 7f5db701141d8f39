/*
 * test_exitcode.c - CUTAINT_ERROR_EXITCODE (and cutaint run --error-exitcode):
 * a process that refused at least one read and would have exited 0 exits N
 * instead, so a CI job or a scheduler sees what cutaint saw; a lost
 * context's status wins over N; the program's own non-zero status is kept;
 * a malformed value is one line and the default (off).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define REFUSED "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff"

typedef struct exit_case {
    const char *what;
    const char *args[3];
    const char *env[3];
    int status;
    int program_status; /* in the exit event */
} exit_case;

static const exit_case cases[] = {
    {"a refused read turns 0 into N", {"failed_launch"}, {"CUTAINT_ERROR_EXITCODE=9"}, 9, 0},
    {"nothing refused: the program's 0", {"happy"}, {"CUTAINT_ERROR_EXITCODE=9"}, 0, 0},
    {"unset: the program's 0", {"failed_launch"}, {NULL}, 0, 0},
    {"0 is off", {"failed_launch"}, {"CUTAINT_ERROR_EXITCODE=0"}, 0, 0},
    {"the program's own failure is kept",
     {"happy", "5"},
     {"CUTAINT_ERROR_EXITCODE=9", "CUTAINT_INJECT=launch:_Z4fillPfif#1"},
     5,
     5},
    {"a lost context wins",
     {"failed_launch"},
     {"CUTAINT_ERROR_EXITCODE=9", "CUTAINT_INJECT=api:cuMemFree*=context_lost"},
     70,
     0},
    {"malformed: the default", {"failed_launch"}, {"CUTAINT_ERROR_EXITCODE=nine"}, 0, 0},
};

ParameterizedTestParameters(exitcode, status)
{
    return H_ROWS(cases);
}

ParameterizedTest(int *row, exitcode, status)
{
    const exit_case *c = &cases[*row];
    h_run run = {.client = CT_CLIENT_LINKED};
    memcpy(run.args, c->args, sizeof c->args);
    memcpy(run.env, c->env, sizeof c->env);
    h_result r;
    h_exec(&run, &r);
    h_expect_ended(&r);
    cr_log_info("%s", c->what);
    cr_expect_eq(r.status, c->status, "%s: exit status %d, want %d\n--- stderr\n%s", c->what, r.status, c->status,
                 r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    int e = h_find(&rep, "exit", 0);
    long long v = -1;
    cr_expect(e >= 0 && h_int(rep.line[e], "status", &v) && v == c->status, "%s: exit event status %lld", c->what, v);
    cr_expect(e >= 0 && h_int(rep.line[e], "program_status", &v) && v == c->program_status, "%s: program_status %lld",
              c->what, v);
    h_report_free(&rep);
    h_free(&r);
}

Test(exitcode, malformed_value_is_one_line_naming_the_variable)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"failed_launch"}, .env = {"CUTAINT_ERROR_EXITCODE=256"}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(h_count_containing(r.err, "CUTAINT_ERROR_EXITCODE"), 1, "%s", r.err);
    const char *line = h_line_containing(r.err, "CUTAINT_ERROR_EXITCODE");
    cr_expect(strstr(line, "'256'") && strstr(line, "1..255") && strstr(line, "using the default"), "%s", line);
    cr_expect(h_has_line(r.out, REFUSED), "%s", r.out);
    cr_expect_eq(r.status, 0);
    h_free(&r);
}

#ifdef CT_CUTAINT_TOOL
/* Through a shell that drops the client's status: cutaint run still exits
 * N, from the reports, with and without a summary. */
Test(exitcode, run_option_covers_the_whole_run)
{
    char script[512];
    snprintf(script, sizeof script, "%s failed_launch; true", CT_CLIENT_LINKED);
    static const char *const quiet[] = {"--log=off", "-q"};
    for (int i = 0; i < 2; i++) {
        h_result r;
        h_exec(&(h_run){.client = CT_CUTAINT_TOOL,
                        .args = {"run", "--error-exitcode", "9", quiet[i], "--", "/bin/sh", "-c", script},
                        .no_shim = true,
                        .no_report = true,
                        .env = {"TMPDIR=@DIR@"}},
               &r);
        h_expect_ended(&r);
        cr_expect_eq(r.status, 9, "%s: exit status %d\n--- stderr\n%s", quiet[i], r.status, r.err);
        if (i == 0)
            cr_expect(strstr(r.err, "exited with status 0 -> 9") != NULL, "the summary says why:\n%s", r.err);
        h_free(&r);
    }
}

/* A read to the host that failed counts as a refused one does. */
Test(exitcode, run_option_covers_a_failed_read)
{
    char script[512];
    snprintf(script, sizeof script, "%s failed_launch 256; true", CT_CLIENT_LINKED);
    h_result r;
    h_exec(&(h_run){.client = CT_CUTAINT_TOOL,
                    .args = {"run", "--error-exitcode=9", "--inject=api:cuMemcpyDtoH*", "--", "/bin/sh", "-c", script},
                    .no_shim = true,
                    .no_report = true,
                    .env = {"TMPDIR=@DIR@"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 9, "exit status %d\n--- stderr\n%s", r.status, r.err);
    cr_expect(strstr(r.err, "-> 9 (--error-exitcode: a read was refused or failed)") != NULL, "%s", r.err);
    h_free(&r);
}

Test(exitcode, run_option_refuses_a_bad_value)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CUTAINT_TOOL,
                    .args = {"run", "--error-exitcode", "300", "--", "/bin/true"},
                    .no_shim = true,
                    .no_report = true},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "--error-exitcode '300' is not valid") != NULL, "%s", r.err);
    h_free(&r);
}
#endif

/*
 * test_refused.c - reads of bytes no successful work wrote: a failed launch
 * whose error is ignored, read back (refused with the root failure's code,
 * the host buffer poisoned, one log line naming the kernel and the error);
 * the two-hop path fill(x) -> saxpy(x -> y) -> read y; a path through one
 * kernel's skips again and again, folded, and its reads after the first
 * one line each; CUTAINT_POISON and
 * CUTAINT_ON_SKIP change exactly what they say; a pitched 2D/3D read is
 * poisoned and counted row by row; a long run of skips looks nothing up;
 * a read past the end, and work with no context current, are the driver's.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define FILL "fill(float*, int, float)"

/* The log must say, on one line per refused read, "refused" with the kernel
 * name(s) and the error: `count` lines holding all of them. */
static void expect_refusal_logged(const h_result *r, int count, const char *const *names)
{
    const char *needles[8] = {"refused"};
    char wanted[256] = "\"refused\"";
    size_t n = 1;
    for (; *names != NULL && n < 7; names++) {
        needles[n++] = *names;
        strncat(wanted, ", ", sizeof wanted - strlen(wanted) - 1);
        strncat(wanted, *names, sizeof wanted - strlen(wanted) - 1);
    }
    needles[n] = NULL;
    int lines = h_count_lines_with(r->err, needles);
    cr_expect_eq(lines, count, "want %d stderr line(s) holding each of %s; %d do\n--- stderr\n%s", count, wanted, lines,
                 r->err);
}

Test(refused, failed_launch_read_back)
{
    h_run run = {.client = CT_CLIENT_LINKED, .args = {"failed_launch"}};
    h_result alone, r;
    h_exec_baseline(&run, &alone);
    h_expect_ended(&alone);
    /* Without the shim the stale bytes are served as the answer. */
    cr_expect(h_has_line(alone.out, "read x: CUDA_SUCCESS first=1 last=1"), "baseline:\n%s", alone.out);
    h_free(&alone);

    h_exec(&run, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "write x: CUDA_SUCCESS",
        "launch fill x: CUDA_ERROR_INVALID_VALUE",
        "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        NULL,
    };
    h_expect_lines(&r, lines);
    expect_refusal_logged(&r, 1, (const char *const[]){FILL, "CUDA_ERROR_INVALID_VALUE", NULL});
    cr_expect_eq(r.status, 0, "an isolated failure must not change the exit status (got %d)", r.status);
    h_free(&r);
}

Test(refused, driver_injected_failure_code_is_the_roots)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"failed_launch", "256"},
                    .env = {"FAKECUDA_FAULTS=launch:_Z4fillPfif#1=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}},
           &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill x: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        "read x: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES bytes=0xff",
        NULL,
    };
    h_expect_lines(&r, lines);
    expect_refusal_logged(&r, 1, (const char *const[]){FILL, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", NULL});
    cr_expect_eq(r.status, 0);
    h_free(&r);
}

Test(refused, two_hops_names_root_and_skip)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"two_hops"}}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill u: CUDA_SUCCESS",
        "launch fill x: CUDA_ERROR_INVALID_VALUE",
        "launch saxpy x y: CUDA_SUCCESS",      /* skipped, propagate */
        "read u: CUDA_SUCCESS first=4 last=4", /* untouched: served */
        "read y: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        NULL,
    };
    h_expect_lines(&r, lines);
    /* y's line names the path through saxpy; both name the root and its error */
    expect_refusal_logged(&r, 1, (const char *const[]){FILL, "saxpy(", "CUDA_ERROR_INVALID_VALUE", NULL});
    expect_refusal_logged(&r, 2, (const char *const[]){FILL, "CUDA_ERROR_INVALID_VALUE", NULL});
    h_free(&r);
}

Test(refused, on_skip_error_returns_roots_code_at_once)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"two_hops"}, .env = {"CUTAINT_ON_SKIP=error"}}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch saxpy x y: CUDA_ERROR_INVALID_VALUE",
        "read u: CUDA_SUCCESS first=4 last=4",
        "read y: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        NULL,
    };
    h_expect_lines(&r, lines);
    h_free(&r);
}

/* fill(x) fails and 12 more fills of x are skipped: the log's path names
 * that kernel's run of skips once, with its count and launches (the root
 * stays its own step), never each skip after the other. */
#define FILL_RUN FILL " [failed, launch #1] -> " FILL " [skipped 12 times, launches #2..#13]"

Test(refused, a_path_through_one_kernel_again_and_again_is_folded)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"cascade"}}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill x: CUDA_ERROR_INVALID_VALUE",
        "fill x again: 12 launches, failed: 0",
        "read y: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "read x slice: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        NULL,
    };
    h_expect_lines(&r, lines);
    cr_expect_eq(h_count_containing(r.err, "path: " FILL_RUN " -> saxpy(int, float, float const*, float*) [skipped, "
                                           "launch #14] -> this read"),
                 1, "y's path:\n%s", r.err);
    cr_expect_geq(h_count_containing(r.err, "path: " FILL_RUN " -> this read"), 1, "x's path:\n%s", r.err);
    cr_expect_eq(h_count_containing(r.err, "[skipped, launch #2]"), 0, "a skip of the run on its own:\n%s", r.err);
    h_free(&r);
}

/* The 13 reads of x tell one story (root, path, API, answer, poison): the
 * first is explained in full, each later one takes one line with how many
 * such reads there were and their bytes; y's read, by another path, has
 * its own full block.  Shown or not, every read counts, and the report
 * keeps each. */
static const char *const again[] = {"refused read: cuMemcpyDtoH_v2 of 512 bytes at 0x",
                                    ": " FILL " CUDA_ERROR_INVALID_VALUE, again failure #1 by the same path (", NULL};

Test(refused, a_read_telling_a_story_told_before_takes_one_line)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"cascade"}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(h_count_containing(r.err, "of these bytes were never written"), 2, "y's and x's first:\n%s", r.err);
    cr_expect_eq(h_count_containing(r.err, "path: " FILL_RUN " -> this read"), 1, "x's first:\n%s", r.err);
    cr_expect_eq(h_count_lines_with(r.err, again), 8, "10 refusals shown, 2 in full:\n%s", r.err);
    cr_expect_eq(h_count_containing(r.err, "(9 such reads so far, 4608 bytes)"), 1, "%s", r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "refused_read"), 14, "%s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);

    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"cascade"}, .env = {"CUTAINT_LOG=info"}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(h_count_lines_with(r.err, again), 12, "every refusal shown:\n%s", r.err);
    cr_expect_eq(h_count_containing(r.err, "(13 such reads so far, 6656 bytes)"), 1, "%s", r.err);
    h_free(&r);
}

/* CUTAINT_POISON: what the host destination of a refused read holds. */
static const struct poison_case {
    const char *env;
    const char *line;
} poison_cases[] = {
    {"CUTAINT_POISON=0xff", "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff"},
    {"CUTAINT_POISON=0", "read x: CUDA_ERROR_INVALID_VALUE bytes=0x00"},
    {"CUTAINT_POISON=0x7e", "read x: CUDA_ERROR_INVALID_VALUE bytes=0x7e"},
    {"CUTAINT_POISON=off", "read x: CUDA_ERROR_INVALID_VALUE bytes=0x3c"}, /* left as the program had it */
};

Test(refused, poison_byte)
{
    for (size_t i = 0; i < sizeof poison_cases / sizeof poison_cases[0]; i++) {
        h_result r;
        h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"failed_launch"}, .env = {poison_cases[i].env}}, &r);
        h_expect_ended(&r);
        cr_expect(h_has_line(r.out, poison_cases[i].line), "%s: expected\n  %s\n--- stdout\n%s--- stderr\n%s",
                  poison_cases[i].env, poison_cases[i].line, r.out, r.err);
        cr_expect_eq(h_count_containing(r.err, "CUTAINT_POISON"), 0, "%s is valid:\n%s", poison_cases[i].env, r.err);
        h_free(&r);
    }
}

/* Driver lookups (dlsym) the dynamic linker made, as LD_DEBUG=symbols shows
 * them: one line per object searched for a cu* name. */
static int driver_lookups(int skipped_launches)
{
    char arg[16];
    snprintf(arg, sizeof arg, "%d", skipped_launches);
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIFECYCLE, .args = {"skip_loop", arg}, .env = {"LD_DEBUG=symbols"}}, &r);
    h_expect_ended(&r);
    char want[64];
    snprintf(want, sizeof want, "saxpy launches: %d, failed: 0", skipped_launches);
    cr_expect(h_has_line(r.out, want), "%s", r.out);
    cr_expect(h_has_line(r.out, "read y: CUDA_ERROR_INVALID_VALUE bytes=0xff"), "%s", r.out);
    int lookups = h_count_containing(r.err, "symbol=cu");
    h_free(&r);
    return lookups;
}

/* Helpers cutaint calls on the skip path (cuCtxGetCurrent, cuFuncGetName,
 * ...) are looked up once: 200 more skipped launches make no more lookups. */
Test(refused, skipped_launches_look_nothing_up)
{
    int few = driver_lookups(10), many = driver_lookups(210);
    cr_expect(few > 0, "LD_DEBUG=symbols showed no lookup at all: is it honoured here?");
    cr_expect_eq(many, few, "%d driver lookups for 10 skipped launches, %d for 210", few, many);
}

/* A refused 2D/3D read into host rows wider than the copy's: the rows are
 * poisoned, the gaps between them (and between slices) left as they were,
 * and the log and report count the bytes read, not the pitched span. */
static const struct pitched_case {
    const char *rows, *dims;
    long long bytes;
} pitched_cases[] = {
    {"240", "2d", 240 * 320}, /* taller than the 64 rows copies are tainted by */
    {"8", "2d", 8 * 320},
    {"240", "3d", 240 * 320},
};

ParameterizedTestParameters(refused, a_pitched_read_poisons_its_rows_only)
{
    return H_ROWS(pitched_cases);
}

ParameterizedTest(int *row, refused, a_pitched_read_poisons_its_rows_only)
{
    const struct pitched_case *c = &pitched_cases[*row];
    h_run run = {.client = CT_CLIENT_LIFECYCLE, .args = {"read_pitched", c->rows, c->dims}};
    h_result alone, r;
    h_exec_baseline(&run, &alone);
    cr_expect(h_has_line(alone.out, "read frame: CUDA_SUCCESS rows=0x5a gaps=0x3c"), "baseline:\n%s", alone.out);
    h_free(&alone);

    h_exec(&run, &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "read frame: CUDA_ERROR_INVALID_VALUE rows=0xff gaps=0x3c"), "%s %s:\n%s", c->rows,
              c->dims, r.out);
    char never[96];
    snprintf(never, sizeof never, " %lld of these bytes were never written", c->bytes);
    cr_expect_eq(h_count_containing(r.err, never), 1, "%s %s: want \"%s\"\n%s", c->rows, c->dims, never, r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    int rr = h_find(&rep, "refused_read", 0);
    cr_assert(rr >= 0, "%s", h_events(&rep));
    long long bytes = -1;
    cr_expect(h_int(rep.line[rr], "bytes", &bytes) && bytes == c->bytes, "%s %s: bytes %lld", c->rows, c->dims, bytes);
    cr_expect_str_eq(h_str(rep.line[rr], "poisoned"), "true");
    h_report_free(&rep);
    h_free(&r);
}

/* Taint exists, yet the driver answers (core/rules.h): a read running past
 * the end of the tainted allocation is not refused (nothing poisoned,
 * nothing reported); a launch and a device copy from it with no context
 * current are not skipped: the driver's refusal is their answer, and their
 * own failure is what their outputs carry. */
Test(refused, the_driver_answers_past_the_end_and_without_a_context)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"driver_answers"}}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill x: CUDA_ERROR_INVALID_VALUE",
        "read x past its end: CUDA_ERROR_INVALID_VALUE bytes=0x3c",
        "launch saxpy x y without a context: CUDA_ERROR_INVALID_CONTEXT",
        "cuMemcpyDtoD(z, x) without a context: CUDA_ERROR_INVALID_CONTEXT",
        "read y: CUDA_ERROR_INVALID_CONTEXT bytes=0xff",
        "read z: CUDA_ERROR_INVALID_CONTEXT bytes=0xff",
        NULL,
    };
    h_expect_lines(&r, lines);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "skip"), 0, "%s", h_events(&rep));
    cr_expect_eq(h_count(&rep, "refused_read"), 2, "y and z, not x: %s", h_events(&rep));
    /* The read past the end failed in the driver: a failure too, its host
     * buffer left as it was (bytes=0x3c): no copy could have written it. */
    cr_expect_eq(h_count(&rep, "failure"), 4, "fill, the read past the end, saxpy, the copy: %s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

/* A thread's scratch (shim/scratch.c) is allocated the first time it needs
 * it: when malloc fails then, the launch that needed it goes to the driver
 * unchecked, one log line says so, and nothing crashes. */
Test(refused, a_thread_without_scratch_launches_unchecked)
{
#ifndef CT_FAILMALLOC
    cr_skip_test("built under a sanitizer: no failing malloc");
#else
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIFECYCLE, .args = {"oom_scratch"}, .preload_first = CT_FAILMALLOC}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "launch fill x: CUDA_ERROR_INVALID_VALUE",
        "launch saxpy z z: CUDA_SUCCESS",
        "malloc fails: yes",
        "launch saxpy x y on a new thread: CUDA_SUCCESS",
        NULL,
    };
    h_expect_lines(&r, lines);
    cr_expect_eq(r.status, 0, "status %d\n--- stderr\n%s", r.status, r.err);
    cr_expect(strstr(r.err, "out of memory for a thread's scratch") != NULL, "stderr:\n%s", r.err);
    h_free(&r);
#endif
}

/* Memory pressure (failmalloc.so fails every allocation from the moment the
 * program arms it): a refused read is still poisoned, counted and reported,
 * and a kernel the registry cannot take (its table must grow) stays unknown
 * instead of uthash's exit(-1) inside the program. */
Test(refused, under_memory_pressure_a_refusal_is_whole)
{
#ifndef CT_FAILMALLOC
    cr_skip_test("built under a sanitizer: no failing malloc");
#else
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIFECYCLE, .args = {"oom"}, .preload_first = CT_FAILMALLOC}, &r);
    h_expect_ended(&r);
    static const char *const lines[] = {
        "malloc fails: yes",
        "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff",
        "cuModuleGetFunction saxpy: CUDA_SUCCESS",
        "launch saxpy x y: CUDA_SUCCESS",
        NULL,
    };
    h_expect_lines(&r, lines);
    cr_expect_eq(r.status, 0, "status %d\n--- stderr\n%s", r.status, r.err);
    expect_refusal_logged(&r, 1, (const char *const[]){FILL, "CUDA_ERROR_INVALID_VALUE", NULL});
    h_report rep;
    h_expect_report(&r, &rep);
    int rr = h_find(&rep, "refused_read", 0);
    cr_assert(rr >= 0, "%s", h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[rr], "poisoned"), "true");
    int e = h_find(&rep, "exit", 0);
    long long refused = -1;
    cr_expect(e >= 0 && h_int(rep.line[e], "refused_reads", &refused) && refused == 1, "refused_reads %lld", refused);
    h_report_free(&rep);
    h_free(&r);
#endif
}

/* A read to the host that the driver fails (here CUTAINT_INJECT's) is a
 * root failure like any other: a log line, a failure event, the host buffer
 * poisoned (it held stale bytes the program might use), and
 * CUTAINT_ERROR_EXITCODE turns the clean exit into its status. */
Test(refused, a_failed_read_to_the_host_is_a_failure_and_poisons_its_buffer)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"failed_launch", "256"},
                    .env = {"CUTAINT_INJECT=api:cuMemcpyDtoH*", "CUTAINT_ERROR_EXITCODE=9"}},
           &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "launch fill x: CUDA_SUCCESS"), "%s", r.out);
    cr_expect(h_has_line(r.out, "read x: CUDA_ERROR_UNKNOWN bytes=0xff"), "the host buffer kept stale bytes:\n%s",
              r.out);
    cr_expect_eq(r.status, 9, "CUTAINT_ERROR_EXITCODE did not cover the failed read");
    cr_expect_eq(h_count_lines_with(r.err, (const char *const[]){"failure #1", "cuMemcpyDtoH_v2", NULL}), 1, "%s",
                 r.err);
    h_report rep;
    h_expect_report(&r, &rep);
    int f = h_find(&rep, "failure", 0);
    cr_assert_geq(f, 0, "no failure event: %s", h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[f], "api"), "cuMemcpyDtoH_v2");
    cr_expect_str_eq(h_str(rep.line[f], "error"), "CUDA_ERROR_UNKNOWN");
    int e = h_find(&rep, "exit", 0);
    cr_assert_geq(e, 0);
    cr_expect_str_eq(h_str(rep.line[e], "failed_reads"), "1", "%s", rep.line[e]);
    h_report_free(&rep);
    h_free(&r);
}

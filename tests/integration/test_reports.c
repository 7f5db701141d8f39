/*
 * test_reports.c - the JSON Lines report (docs/REPORT.md) of each kind of run:
 * the happy path writes start and exit only; a failed launch, a two-hop skip
 * path, fault injection (CUTAINT_INJECT hits exactly the Nth matching call),
 * "%p" in the path; a process SIGKILLed mid-run leaves a log whose every line
 * parses and that `cutaint report` renders (text, and DOT that dot accepts).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define FILL "fill(float*, int, float)"

static long long int_of(const char *line, const char *key)
{
    long long v = -999;
    cr_expect(h_int(line, key, &v), "no integer \"%s\" in\n  %s", key, line);
    return v;
}

/* Every line carries event, time, pid. */
static void expect_common_fields(const h_report *rep)
{
    for (int i = 0; i < rep->n; i++) {
        cr_expect_str_neq(h_str(rep->line[i], "event"), "<missing>", "line %d: %s", i + 1, rep->line[i]);
        cr_expect_str_neq(h_str(rep->line[i], "time"), "<missing>", "line %d: %s", i + 1, rep->line[i]);
        cr_expect(int_of(rep->line[i], "pid") > 0, "line %d", i + 1);
    }
}

Test(reports, happy_path_start_and_exit_only)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"happy", "4"}}, &r);
    h_expect_ended(&r);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_assert_str_eq(h_events(&rep), "start,exit");
    expect_common_fields(&rep);
    const char *start = rep.line[0], *ex = rep.line[1];
    cr_expect_eq(h_arr_len(start, "argv"), 3, "argv: %s", start);
    cr_expect_str_eq(h_arr_str(start, "argv", 1), "happy");
    cr_expect(int_of(start, "driver_version") > 0);
    cr_expect_str_neq(h_str(start, "cutaint_version"), "<missing>");
    cr_expect_eq(int_of(start, "format_version"), 3, "the report format docs/REPORT.md describes: %s", start);
    cr_expect_eq(int_of(ex, "status"), 4);
    cr_expect_eq(int_of(ex, "failed_reads"), 0);
    cr_expect_eq(int_of(ex, "unusable_images"), 0);
    cr_expect_eq(int_of(ex, "program_status"), 4);
    cr_expect_eq(int_of(ex, "failures"), 0);
    cr_expect_eq(int_of(ex, "skips"), 0);
    cr_expect_eq(int_of(ex, "refused_reads"), 0);
    cr_expect_str_eq(h_str(ex, "context_lost"), "false");
    cr_expect_str_eq(h_str(start, "pid"), h_str(ex, "pid"));
    h_report_free(&rep);
    h_free(&r);
}

Test(reports, failed_launch)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"failed_launch"}}, &r);
    h_expect_ended(&r);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_assert_str_eq(h_events(&rep), "start,failure,probe,refused_read,exit");
    expect_common_fields(&rep);
    const char *f = rep.line[1], *p = rep.line[2], *rr = rep.line[3], *ex = rep.line[4];
    long long id = int_of(f, "id");
    cr_expect(id != 0);
    cr_expect_str_eq(h_str(f, "api"), "cuLaunchKernel");
    cr_expect_str_eq(h_str(f, "kernel"), FILL);
    cr_expect_str_eq(h_str(f, "error"), "CUDA_ERROR_INVALID_VALUE");
    cr_expect_eq(int_of(f, "code"), 1);
    cr_expect_eq(int_of(f, "launch"), 1);
    cr_expect_eq(h_arr_len(f, "block"), 3);
    cr_expect_str_eq(h_arr_str(f, "block", 0), "2048");
    cr_expect_str_eq(h_arr_str(f, "grid", 0), "1");
    cr_expect_str_eq(h_str(f, "stream"), "0x0");
    cr_expect(int_of(f, "thread") > 0);
    cr_expect_str_eq(h_str(f, "injected"), "false");
    cr_expect(h_arr_len(f, "backtrace") >= 1, "a backtrace: %s", f);
    cr_expect(strstr(h_str(f, "repro"), "compute-sanitizer") != NULL, "repro: %s", h_str(f, "repro"));
    cr_expect(strstr(h_str(f, "repro"), "--launch-skip 0") != NULL, "the first launch: %s", h_str(f, "repro"));

    cr_expect_str_eq(h_str(p, "after"), "cuLaunchKernel");
    cr_expect_str_eq(h_str(p, "error"), "CUDA_ERROR_INVALID_VALUE");
    cr_expect_str_eq(h_str(p, "result"), "CUDA_SUCCESS");
    cr_expect_str_eq(h_str(p, "verdict"), "isolated");

    cr_expect_str_eq(h_str(rr, "api"), "cuMemcpyDtoH_v2");
    cr_expect_eq(int_of(rr, "bytes"), 4096);
    cr_expect_eq(strncmp(h_str(rr, "address"), "0x", 2), 0);
    cr_expect_eq(h_arr_len(rr, "failures"), 1);
    cr_expect_eq(atoll(h_arr_str(rr, "failures", 0)), id);
    cr_expect_eq(int_of(rr, "root"), id);
    cr_expect_str_eq(h_str(rr, "error"), "CUDA_ERROR_INVALID_VALUE");
    cr_expect_eq(int_of(rr, "code"), 1);
    cr_expect_eq(h_arr_len(rr, "path"), 1, "path: %s", rr);
    cr_expect(strstr(h_arr_str(rr, "path", 0), "fill") != NULL, "path: %s", rr);
    cr_expect_str_eq(h_str(rr, "poisoned"), "true");

    cr_expect_eq(int_of(ex, "status"), 0);
    cr_expect_eq(int_of(ex, "failures"), 1);
    cr_expect_eq(int_of(ex, "occurrences"), 1);
    cr_expect_eq(int_of(ex, "skips"), 0);
    cr_expect_eq(int_of(ex, "refused_reads"), 1);
    cr_expect_str_eq(h_str(ex, "context_lost"), "false");
    h_report_free(&rep);
    h_free(&r);
}

/* Threads that take turns launching (as a program's main and worker threads
 * do) keep exact process-wide launch numbers, so the repro line is exact. */
Test(reports, launches_from_threads_taking_turns_are_numbered_exactly)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"turns"}}, &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "turns: errors=0"), "stdout:\n%s", r.out);
    h_report rep;
    h_expect_report(&r, &rep);
    int at = h_find(&rep, "failure", 0);
    cr_assert(at >= 0, "a failure event: %s", h_events(&rep));
    const char *f = rep.line[at];
    cr_expect_eq(int_of(f, "launch"), 201, "failure: %s", f);
    cr_expect(strstr(h_str(f, "repro"), "--launch-skip 200 ") != NULL, "repro: %s", h_str(f, "repro"));
    h_report_free(&rep);
    h_free(&r);
}

Test(reports, two_hops_path)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"two_hops"}}, &r);
    h_expect_ended(&r);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_assert_str_eq(h_events(&rep), "start,failure,probe,skip,refused_read,refused_read,exit");
    const char *f = rep.line[1], *s = rep.line[3], *ry = rep.line[4], *rx = rep.line[5], *ex = rep.line[6];
    long long id = int_of(f, "id");
    cr_expect_eq(int_of(f, "launch"), 3);
    cr_expect_eq(int_of(s, "failure"), id, "the skip propagates the root's id");
    cr_expect(strncmp(h_str(s, "kernel"), "saxpy(", 6) == 0, "skip kernel %s", h_str(s, "kernel"));
    cr_expect_eq(int_of(s, "launch"), 4);
    cr_expect_eq(strncmp(h_str(s, "needed"), "0x", 2), 0);
    cr_expect_eq(int_of(s, "produced"), 1);
    /* read of y: root fill, then the saxpy skip */
    cr_expect_eq(int_of(ry, "root"), id);
    cr_expect_eq(h_arr_len(ry, "failures"), 1, "each failure once: %s", ry);
    cr_expect_eq(h_arr_len(ry, "path"), 2, "path: %s", ry);
    cr_expect(strstr(h_arr_str(ry, "path", 0), "fill") != NULL, "path[0]: %s", h_arr_str(ry, "path", 0));
    cr_expect(strstr(h_arr_str(ry, "path", 1), "saxpy") != NULL, "path[1]: %s", h_arr_str(ry, "path", 1));
    /* read of x: the root alone */
    cr_expect_eq(h_arr_len(rx, "path"), 1, "path: %s", rx);
    cr_expect_str_neq(h_str(ry, "address"), h_str(rx, "address"));
    cr_expect_eq(int_of(ex, "failures"), 1);
    cr_expect_eq(int_of(ex, "skips"), 1);
    cr_expect_eq(int_of(ex, "refused_reads"), 2);
    h_report_free(&rep);
    h_free(&r);
}

Test(reports, struct_skip_is_a_skip)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"struct"}}, &r);
    h_expect_ended(&r);
    h_report rep;
    h_expect_report(&r, &rep);
    int s = h_find(&rep, "skip", 0);
    cr_assert(s >= 0, "%s", h_events(&rep));
    cr_expect(strncmp(h_str(rep.line[s], "kernel"), "copy_pair(", 10) == 0, "%s", rep.line[s]);
    cr_expect_eq(h_count(&rep, "failure"), 2, "copy_pair(a->b) and fill(c): %s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

Test(reports, pid_in_report_path)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"happy"},
                    .no_report = true,
                    .env = {"CUTAINT_REPORT=@DIR@/r-%p.jsonl"}},
           &r);
    h_expect_ended(&r);
    /* The harness does not know the pid: find the one report written. */
    char path[600] = "";
    DIR *d = opendir(r.dir);
    cr_assert(d != NULL);
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        if (strncmp(de->d_name, "r-", 2) == 0)
            snprintf(path, sizeof path, "%s/%s", r.dir, de->d_name);
    closedir(d);
    cr_assert(path[0] != '\0', "no r-PID.jsonl in %s", r.dir);
    h_report rep;
    h_report_load(path, &rep);
    cr_assert(rep.n > 0, "%s is empty", path);
    char want[64];
    snprintf(want, sizeof want, "/r-%s.jsonl", h_str(rep.line[0], "pid"));
    cr_expect(strstr(path, want) != NULL, "%s holds pid %s", path, h_str(rep.line[0], "pid"));
    h_report_free(&rep);
    h_free(&r);
}

/* CUTAINT_INJECT hits exactly the Nth matching call (inject_seq: fills 1..5,
 * reads, host writes 1..5, reads). */
typedef struct inject_case {
    const char *spec;
    const char *lines[12];
    int calls_failing; /* launches and writes that must fail */
    int failures;      /* failure events expected */
} inject_case;

static const inject_case injects[] = {
    {"CUTAINT_INJECT=launch:_Z4fillPfif#3=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     {"launch fill 2: CUDA_SUCCESS", "launch fill 3: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "launch fill 4: CUDA_SUCCESS",
      "read buf 2: CUDA_SUCCESS first=2 last=2", "read buf 3: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES bytes=0xff",
      "read buf 4: CUDA_SUCCESS first=4 last=4", "read buf 3 after write: CUDA_SUCCESS first=103 last=103"},
     1,
     1},
    {"CUTAINT_INJECT=launch:fill#2+=CUDA_ERROR_INVALID_VALUE",
     {"launch fill 1: CUDA_SUCCESS", "launch fill 2: CUDA_ERROR_INVALID_VALUE",
      "launch fill 5: CUDA_ERROR_INVALID_VALUE", "read buf 1: CUDA_SUCCESS first=1 last=1",
      "read buf 5: CUDA_ERROR_INVALID_VALUE bytes=0xff"},
     4,
     1 /* identical failures fold into one */},
    {"CUTAINT_INJECT=api:cuMemcpyHtoD#2=CUDA_ERROR_OUT_OF_MEMORY",
     {"launch fill 1: CUDA_SUCCESS", "write 1: CUDA_SUCCESS", "write 2: CUDA_ERROR_OUT_OF_MEMORY",
      "write 3: CUDA_SUCCESS", "read buf 1 after write: CUDA_SUCCESS first=101 last=101",
      "read buf 2 after write: CUDA_ERROR_OUT_OF_MEMORY bytes=0xff",
      "read buf 3 after write: CUDA_SUCCESS first=103 last=103"},
     1,
     1},
    {"CUTAINT_INJECT=launch:_Z4fillPfif#9=CUDA_ERROR_LAUNCH_FAILED",
     {"launch fill 5: CUDA_SUCCESS", "read buf 5: CUDA_SUCCESS first=5 last=5"},
     0,
     0},
};

ParameterizedTestParameters(reports, inject_nth)
{
    return H_ROWS(injects);
}

ParameterizedTest(int *row, reports, inject_nth)
{
    const inject_case *c = &injects[*row];
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"inject_seq"}, .env = {c->spec}}, &r);
    h_expect_ended(&r);
    cr_log_info("%s", c->spec);
    h_expect_lines(&r, c->lines);
    /* Exactly the Nth: count the failing calls on stdout. */
    int failing = 0;
    for (const char *l = r.out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        size_t len = strcspn(l, "\n");
        if (strncmp(l, "read ", 5) != 0 && memmem(l, len, "CUDA_ERROR", 10) != NULL)
            failing++;
    }
    cr_expect_eq(failing, c->calls_failing, "%s: %d calls failed, want %d\n%s", c->spec, failing, c->calls_failing,
                 r.out);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "failure"), c->failures, "%s: %s", c->spec, h_events(&rep));
    int f = h_find(&rep, "failure", 0);
    if (f >= 0)
        cr_expect_str_eq(h_str(rep.line[f], "injected"), "true", "%s", rep.line[f]);
    cr_expect_eq(r.status, 0);
    h_report_free(&rep);
    h_free(&r);
}

#ifdef CT_CUTAINT_TOOL
/* Runs the cutaint command (no shim) and returns its result. */
static void tool(h_result *out, const char *a1, const char *a2, const char *a3, const char *a4)
{
    h_exec(&(h_run){.client = CT_CUTAINT_TOOL, .args = {a1, a2, a3, a4}, .no_shim = true}, out);
    h_expect_ended(out);
}
#endif

/* fill fails the same way at launches 1, 2 and 3: one failure folded
 * twice, whose count and first and latest launch the log, the report and
 * `cutaint report` keep; the summaries count occurrences. */
Test(reports, a_failure_folded_twice)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LIFECYCLE, .args = {"fold"}, .env = {"CUTAINT_METRICS_FILE=@DIR@/m.prom"}}, &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "read z: CUDA_ERROR_INVALID_VALUE bytes=0xff"), "%s", r.out);
    char *metrics = h_slurp(h_path(&r, "m.prom"));
    cr_expect(metrics && h_count_containing(metrics, "cutaint_failures_total{") == 1 &&
                  h_count_containing(metrics, "error=\"CUDA_ERROR_INVALID_VALUE\"} 3") == 1,
              "every occurrence is counted:\n%s", metrics ? metrics : "(no metrics file)");
    free(metrics);
    static const char *const repeat2[] = {"failure #1 repeated: " FILL,
                                          "launch #2; 2 occurrences, the first at launch #1", NULL};
    static const char *const repeat3[] = {"failure #1 repeated: " FILL,
                                          "launch #3; 3 occurrences, the first at launch #1", NULL};
    static const char *const root[] = {"root cause: failure #1",
                                       "3 occurrences: the first at launch #1, the latest at launch #3", NULL};
    cr_expect_eq(h_count_lines_with(r.err, repeat2), 1, "%s", r.err);
    cr_expect_eq(h_count_lines_with(r.err, repeat3), 1, "%s", r.err);
    cr_expect_eq(h_count_lines_with(r.err, root), 1, "%s", r.err);
    cr_expect_eq(h_count_containing(r.err, "summary: 1 failure (3 occurrences), 0 skipped, 1 refused read"), 1, "%s",
                 r.err);

    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_str_eq(h_events(&rep), "start,failure,probe,repeat,probe,repeat,probe,refused_read,exit");
    long long want_occ = 2;
    for (int i = h_find(&rep, "repeat", 0); i >= 0; i = h_find(&rep, "repeat", i + 1), want_occ++) {
        cr_expect_eq(int_of(rep.line[i], "failure"), 1);
        cr_expect_eq(int_of(rep.line[i], "occurrences"), want_occ);
        cr_expect_eq(int_of(rep.line[i], "first_launch"), 1);
        cr_expect_eq(int_of(rep.line[i], "launch"), want_occ);
        cr_expect_str_eq(h_str(rep.line[i], "kernel"), FILL);
        cr_expect_str_eq(h_str(rep.line[i], "error"), "CUDA_ERROR_INVALID_VALUE");
    }
    int e = h_find(&rep, "exit", 0);
    cr_assert(e >= 0);
    cr_expect_eq(int_of(rep.line[e], "failures"), 1);
    cr_expect_eq(int_of(rep.line[e], "occurrences"), 3);
    h_report_free(&rep);
#ifdef CT_CUTAINT_TOOL
    h_result text;
    tool(&text, "report", r.report, NULL, NULL);
    cr_expect(strstr(text.out, "failure #1: " FILL " -> CUDA_ERROR_INVALID_VALUE (1), 3 occurrences") != NULL, "%s",
              text.out);
    cr_expect(strstr(text.out, "at cuLaunchKernel, launch #1, latest launch #3,") != NULL, "%s", text.out);
    cr_expect(strstr(text.out, "1 root failure (3 occurrences)") != NULL, "%s", text.out);
    h_free(&text);
    char report[400];
    snprintf(report, sizeof report, "%s/run.jsonl", r.dir);
    h_result run;
    h_exec(&(h_run){.client = CT_CUTAINT_TOOL,
                    .args = {"run", "--report", report, "--", CT_CLIENT_LIFECYCLE, "fold"},
                    .no_shim = true},
           &run);
    h_expect_ended(&run);
    cr_expect(strstr(run.err, "| 1 root failure (3 occurrences), 0 skipped launches, 1 refused read |") != NULL,
              "cutaint run's summary:\n%s", run.err);
    cr_expect(strstr(run.err, "launch #1, 3 occurrences, latest launch #3)") != NULL, "%s", run.err);
    h_free(&run);
#endif
    h_free(&r);
}

Test(reports, sigkill_leaves_whole_lines, .timeout = 120)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"spin"},
                    .kill_on = "ready",
                    .kill_delay_ms = 100,
                    .timeout_s = 60},
           &r);
    cr_assert(!r.timed_out, "spin never printed ready:\n%s\n%s", r.out, r.err);
    cr_expect_eq(r.signal, 9, "killed by SIGKILL, got status %d", r.status);
    h_report rep;
    h_report_load(r.report, &rep);
    cr_assert(!rep.missing);
    cr_expect_eq(rep.invalid, 0, "line %d does not parse:\n  %s", rep.first_invalid + 1,
                 rep.first_invalid >= 0 ? rep.line[rep.first_invalid] : "");
    if (rep.truncated)
        cr_log_warn("the report ends in a partial line (allowed for the last line only)");
    cr_expect(rep.n >= 4, "events before the kill: %d", rep.n);
    cr_expect_eq(h_find(&rep, "start", 0), 0);
    cr_expect(h_count(&rep, "failure") >= 1 && h_count(&rep, "skip") >= 1 && h_count(&rep, "refused_read") >= 1, "%s",
              h_events(&rep));
    cr_expect_eq(h_count(&rep, "exit"), 0, "no exit event from a killed process");
    expect_common_fields(&rep);
#ifdef CT_CUTAINT_TOOL
    h_result text, dot;
    tool(&text, "report", r.report, NULL, NULL);
    cr_expect_eq(text.status, 0, "cutaint report: %d\n%s", text.status, text.err);
    cr_expect(strstr(text.out, "fill") != NULL, "the tree names the root:\n%s", text.out);
    tool(&dot, "report", "--format", "dot", r.report);
    cr_expect_eq(dot.status, 0, "cutaint report --format dot: %d\n%s", dot.status, dot.err);
#ifdef CT_DOT
    char dotfile[400];
    snprintf(dotfile, sizeof dotfile, "%s/report.dot", r.dir);
    FILE *fp = fopen(dotfile, "w");
    cr_assert(fp != NULL);
    fputs(dot.out, fp);
    fclose(fp);
    h_result svg;
    h_exec(&(h_run){.client = CT_DOT, .args = {"-Tsvg", dotfile}, .no_shim = true}, &svg);
    h_expect_ended(&svg);
    cr_expect_eq(svg.status, 0, "dot rejects the DOT output:\n%s\n%s", svg.err, dot.out);
    cr_expect(strstr(svg.out, "<svg") != NULL);
    h_free(&svg);
#endif
    h_free(&text);
    h_free(&dot);
#endif
    h_report_free(&rep);
    h_free(&r);
}

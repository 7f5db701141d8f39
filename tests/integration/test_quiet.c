/*
 * test_quiet.c - processes that never call the driver leave no trace: under
 * a cluster-wide preload or `cutaint run` every process of a job loads the
 * shim (the shell, ls, a compiler), and none of them may write a report, a
 * log file or a metrics file, nor remove a health file.  The start event is
 * written when a process first reaches the driver, so the processes that do
 * are all accounted for: by their own report files with %p, and in
 * `cutaint run`'s summary.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Every per-process file the shim can be asked for, all with %p. */
#define EVERY_FILE                                                                           \
    "CUTAINT_REPORT=@DIR@/r-%p.jsonl", "CUTAINT_LOG_FILE=@DIR@/log-%p", "CUTAINT_LOG=debug", \
        "CUTAINT_HEALTH_FILE=@DIR@/health-%p", "CUTAINT_METRICS_FILE=@DIR@/m-%p.prom"

/* The names in the run's directory other than the harness's "empty", sorted,
 * joined by spaces (static storage). */
static const char *files_left(const h_result *r)
{
    static char list[2048];
    struct dirent **names;
    int n = scandir(r->dir, &names, NULL, alphasort);
    size_t used = 0;
    list[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (strcmp(name, ".") && strcmp(name, "..") && strcmp(name, "empty") && used < sizeof list - 1)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? " " : "", name);
        free(names[i]);
    }
    free(names);
    return list;
}

/* The one report file r-PID.jsonl in the run's directory; "" if not exactly one. */
static const char *only_report(const h_result *r)
{
    static char path[600];
    int found = 0;
    DIR *d = opendir(r->dir);
    cr_assert(d != NULL);
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        if (strncmp(de->d_name, "r-", 2) == 0 && found++ == 0)
            snprintf(path, sizeof path, "%s/%s", r->dir, de->d_name);
    closedir(d);
    return found == 1 ? path : "";
}

Test(quiet, processes_without_cuda_leave_nothing)
{
    h_result r;
    h_exec(&(h_run){.client = "/bin/sh",
                    .args = {"-c", "ls / >/dev/null; echo x | cat >/dev/null; true"},
                    .no_report = true,
                    .env = {EVERY_FILE}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect_str_eq(files_left(&r), "", "processes that never called the driver left files");
    cr_expect_str_eq(r.err, "", "and said something:\n%s", r.err);
    h_free(&r);
}

Test(quiet, only_the_process_that_calls_the_driver_reports)
{
    char script[512];
    snprintf(script, sizeof script, "ls / >/dev/null; %s failed_launch; true", CT_CLIENT_LINKED);
    h_result r;
    h_exec(&(h_run){.client = "/bin/sh", .args = {"-c", script}, .no_report = true, .env = {EVERY_FILE}}, &r);
    h_expect_ended(&r);
    const char *path = only_report(&r);
    cr_assert(path[0] != '\0', "want one report, the client's; the directory holds: %s", files_left(&r));
    h_report rep;
    h_report_load(path, &rep);
    cr_expect_str_eq(h_events(&rep), "start,failure,probe,refused_read,exit");
    char metrics[64];
    snprintf(metrics, sizeof metrics, "m-%s.prom", rep.n > 0 ? h_str(rep.line[0], "pid") : "?");
    cr_expect(access(h_path(&r, metrics), F_OK) == 0, "the client's metrics file %s; have: %s", metrics,
              files_left(&r));
    if (rep.n > 0) {
        cr_expect_str_eq(h_arr_str(rep.line[0], "argv", 0), CT_CLIENT_LINKED, "the start is the client's");
        cr_expect_neq(strcmp(h_str(rep.line[0], "driver_version"), "null"), 0, "its driver version is known");
    }
    h_report_free(&rep);
    h_free(&r);
}

Test(quiet, forked_child_without_driver_calls_writes_nothing)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"fork_quiet"}, .no_report = true, .env = {EVERY_FILE}}, &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "child status: 0"), "%s", r.out);
    const char *path = only_report(&r);
    cr_assert(path[0] != '\0', "want the parent's report only; the directory holds: %s", files_left(&r));
    h_report rep;
    h_report_load(path, &rep);
    cr_expect_str_eq(h_events(&rep), "start,exit", "the child must add nothing");
    h_report_free(&rep);
    h_free(&r);
}

Test(quiet, forked_child_sharing_the_report_writes_nothing)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"fork_quiet"}}, &r);
    h_expect_ended(&r);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_str_eq(h_events(&rep), "start,exit", "one process reached the driver");
    h_report_free(&rep);
    h_free(&r);
}

Test(quiet, health_file_of_another_process_is_kept)
{
    h_stale stale;
    h_stale_health_file(&stale, H_HEALTH_MARKER "\na sibling lost its context\n");
    h_result r;
    h_exec(&(h_run){.client = "/bin/sh", .args = {"-c", "true"}, .env = {stale.env}}, &r);
    h_expect_ended(&r);
    cr_expect(access(stale.path, F_OK) == 0, "a process that never called the driver removed the health file");
    h_stale_free(&stale);
    h_free(&r);
}

#ifdef CT_CUTAINT_TOOL
Test(quiet, run_summary_counts_every_process_that_reached_the_driver)
{
    char script[512];
    snprintf(script, sizeof script, "ls / >/dev/null; %s failed_launch; %s two_hops; true", CT_CLIENT_LINKED,
             CT_CLIENT_LINKED);
    h_result r;
    h_exec(&(h_run){.client = CT_CUTAINT_TOOL,
                    .args = {"run", "--report", "@DIR@/r-%p.jsonl", "--", "/bin/sh", "-c", script},
                    .no_shim = true,
                    .no_report = true},
           &r);
    h_expect_ended(&r);
    const char *line = h_line_containing(r.err, "==cutaint== /bin/sh exited");
    cr_expect(strstr(line, "| 2 processes |") != NULL, "the summary must count both clients:\n%s", r.err);
    cr_expect(strstr(line, "2 root failures") != NULL && strstr(line, "3 refused reads") != NULL, "%s", line);
    cr_expect(strstr(line, "reports: ") != NULL, "it names both files: %s", line);
    h_free(&r);
}

Test(quiet, run_without_cuda_keeps_no_temporary_report)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CUTAINT_TOOL,
                    .args = {"run", "--", "/bin/sh", "-c", "true"},
                    .no_shim = true,
                    .no_report = true,
                    .env = {"TMPDIR=@DIR@"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.err, "no process reached the CUDA driver") != NULL, "%s", r.err);
    cr_expect_str_eq(files_left(&r), "", "the empty temporary report was left behind");
    h_free(&r);
}
#endif

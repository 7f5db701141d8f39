/*
 * test_metrics.c - CUTAINT_METRICS_FILE: Prometheus text that real parsers
 * accept (metrics_check.sh: promtool check metrics, and
 * python3-prometheus-client's parser), counting what the report counts: a
 * refused read and its bytes, the failure by kernel and error, skips, a
 * lost context; %p expanded; written atomically (no temp file left, 0644)
 * behind its marker line, and never over anything cutaint did not write.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* Runs metrics_check.sh on path with the expectations; skips the test when
 * no parser is installed. */
static void expect_metrics(const char *path, const char *const *expects)
{
    char cmd[4096];
    size_t n = (size_t)snprintf(cmd, sizeof cmd, "'%s' '%s'", CT_METRICS_CHECK, path);
    for (; *expects && n < sizeof cmd; expects++)
        n += (size_t)snprintf(cmd + n, sizeof cmd - n, " '%s'", *expects);
    int st = system(cmd);
    cr_assert(WIFEXITED(st), "%s did not run", CT_METRICS_CHECK);
    if (WEXITSTATUS(st) == 77)
        cr_skip_test("no Prometheus parser installed (packages prometheus, python3-prometheus-client)");
    char *text = h_slurp(path);
    cr_expect_eq(WEXITSTATUS(st), 0, "the metrics file fails its check (stderr above):\n%s", text ? text : "(none)");
    free(text);
}

/* env: CUTAINT_METRICS_FILE=..., or NULL for @DIR@/job.prom */
static h_result run_with_metrics(const char *scenario, const char *env)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {scenario},
                    .env = {env ? env : "CUTAINT_METRICS_FILE=@DIR@/job.prom"}},
           &r);
    h_expect_ended(&r);
    return r;
}

Test(metrics, refused_read_counted_and_parsed)
{
    h_result r = run_with_metrics("failed_launch", NULL);
    static const char *const want[] = {
        "cutaint_refused_reads_total 1",
        "cutaint_refused_bytes_total 4096",
        "cutaint_failures_total{api=cuLaunchKernel;kernel=fill(float*, int, float);error=CUDA_ERROR_INVALID_VALUE} 1",
        "cutaint_skips_total 0",
        "cutaint_context_lost 0",
        "cutaint_info{version=" CT_VERSION_STRING ";driver_version=13000} 1",
        NULL,
    };
    expect_metrics(h_path(&r, "job.prom"), want);
    h_free(&r);
}

Test(metrics, skips_and_two_refusals)
{
    h_result r = run_with_metrics("two_hops", NULL);
    static const char *const want[] = {"cutaint_skips_total 1", "cutaint_refused_reads_total 2",
                                       "cutaint_refused_bytes_total 8192", NULL};
    expect_metrics(h_path(&r, "job.prom"), want);
    h_free(&r);
}

Test(metrics, context_lost_is_1)
{
    h_result r = run_with_metrics("crash", NULL);
    cr_expect_eq(r.status, 70);
    static const char *const want[] = {"cutaint_context_lost 1", NULL};
    expect_metrics(h_path(&r, "job.prom"), want);
    h_free(&r);
}

Test(metrics, happy_path_has_zeros_and_every_family)
{
    h_result r = run_with_metrics("happy", NULL);
    static const char *const want[] = {"cutaint_refused_reads_total 0", "cutaint_skips_total 0",
                                       "cutaint_context_lost 0", "cutaint_info 1", NULL};
    expect_metrics(h_path(&r, "job.prom"), want);
    char *text = h_slurp(h_path(&r, "job.prom"));
    cr_assert(text != NULL);
    static const char *const families[] = {"cutaint_failures_total",      "cutaint_skips_total",
                                           "cutaint_refused_reads_total", "cutaint_refused_bytes_total",
                                           "cutaint_context_lost",        "cutaint_info"};
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        char help[96], type[96];
        snprintf(help, sizeof help, "# HELP %s ", families[i]);
        snprintf(type, sizeof type, "# TYPE %s ", families[i]);
        cr_expect(strstr(text, help) && strstr(text, type), "%s lacks HELP or TYPE:\n%s", families[i], text);
    }
    free(text);
    h_free(&r);
}

/* The pid in the name and in the labels agree; nothing but the file is left. */
Test(metrics, pid_in_path_and_atomic_replacement)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"two_hops"}, .env = {"CUTAINT_METRICS_FILE=@DIR@/m-%p.prom"}},
           &r);
    h_expect_ended(&r);
    char name[256] = "";
    int files = 0;
    DIR *d = opendir(r.dir);
    cr_assert(d != NULL);
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        if (strncmp(de->d_name, "m-", 2) == 0 && files++ == 0)
            snprintf(name, sizeof name, "%s", de->d_name);
    closedir(d);
    cr_assert_eq(files, 1, "want one m-PID.prom and no temporary file beside it");
    h_report rep;
    h_expect_report(&r, &rep);
    char want_name[64], want_pid[96];
    snprintf(want_name, sizeof want_name, "m-%s.prom", h_str(rep.line[0], "pid"));
    snprintf(want_pid, sizeof want_pid, "cutaint_skips_total{pid=%s} 1", h_str(rep.line[0], "pid"));
    cr_expect_str_eq(name, want_name);
    struct stat st;
    cr_assert(stat(h_path(&r, name), &st) == 0);
    cr_expect_eq(st.st_mode & 0777, 0644, "mode %o", st.st_mode & 0777);
    expect_metrics(h_path(&r, name), (const char *const[]){want_pid, NULL});
    h_report_free(&rep);
    h_free(&r);
}

/* What is at the metrics path when the run starts, and that it is kept. */
typedef struct foreign_case {
    const char *what;
    bool symlink; /* a symlink to a user's file, else the user's file itself */
} foreign_case;

static const foreign_case foreign_cases[] = {
    {"a user's file", false},
    {"a symlink to a user's file", true},
};

ParameterizedTestParameters(metrics, anything_cutaint_did_not_write_is_left_untouched)
{
    return H_ROWS(foreign_cases);
}

ParameterizedTest(const int *row, metrics, anything_cutaint_did_not_write_is_left_untouched)
{
    const foreign_case *c = &foreign_cases[*row];
    char dir[] = "/tmp/cutaint-metrics-XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    char path[64], target[64], env[96];
    snprintf(path, sizeof path, "%s/job.prom", dir);
    snprintf(target, sizeof target, "%s/precious", dir);
    snprintf(env, sizeof env, "CUTAINT_METRICS_FILE=%s", path);
    FILE *f = fopen(c->symlink ? target : path, "w");
    cr_assert(f != NULL);
    fputs("not yours\n", f);
    fclose(f);
    if (c->symlink)
        cr_assert(symlink(target, path) == 0);
    h_result r = run_with_metrics("failed_launch", env);
    cr_expect_eq(r.status, 0, "%s: the program's status changed", c->what);
    char *kept = h_slurp(c->symlink ? target : path);
    cr_expect(kept && strcmp(kept, "not yours\n") == 0, "%s was written: %s", c->what, kept);
    free(kept);
    struct stat st;
    cr_expect(lstat(path, &st) == 0 && (c->symlink ? S_ISLNK(st.st_mode) : S_ISREG(st.st_mode)), "%s was replaced",
              c->what);
    cr_expect_eq(h_count_containing(r.err, "left untouched"), 1, "%s: one line should say so:\n%s", c->what, r.err);
    unlink(path);
    unlink(target);
    rmdir(dir);
    h_free(&r);
}

Test(metrics, the_file_starts_with_the_marker)
{
    h_result r = run_with_metrics("failed_launch", NULL);
    char *text = h_slurp(h_path(&r, "job.prom"));
    cr_assert(text != NULL, "no metrics file");
    cr_expect(strncmp(text, H_METRICS_MARKER "\n", strlen(H_METRICS_MARKER) + 1) == 0, "first line: %.60s", text);
    free(text);
    h_free(&r);
}

Test(metrics, unwritable_path_is_one_line_and_the_program_runs_on)
{
    h_result r = run_with_metrics("failed_launch", "CUTAINT_METRICS_FILE=/nonexistent-dir/job.prom");
    cr_expect_eq(r.status, 0);
    cr_expect(h_has_line(r.out, "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff"), "%s", r.out);
    cr_expect_eq(h_count_containing(r.err, "/nonexistent-dir/job.prom"), 1, "%s", r.err);
    h_free(&r);
}

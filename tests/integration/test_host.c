/*
 * test_host.c - cutaint never harms the process or the machine it is loaded
 * into (RELIABILITY.md, "What cutaint promises its host"): a file it did
 * not write is never removed or replaced; a fifo with no reader, a device
 * or a directory is refused without blocking; it never writes into a
 * descriptor the program closed and reused; its paths do not follow the
 * program's chdir(); a full disk is said once; an exit() from a signal
 * handler that interrupted cutaint never hangs; a setuid program ignores
 * every CUTAINT_ variable; a kill leaves no temporary behind; a forked
 * child's %p log is its own, and tells its parent's stories anew; small
 * things (exit(-1), unreachable injection rules, the cutaint command's own
 * variables).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define REFUSED_READ "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff"

/* A fresh directory outside any run's own, for what must outlive runs. */
static void shared_dir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/cutaint-host-XXXXXX");
    cr_assert(mkdtemp(dir) != NULL);
    chmod(dir, 0755);
}

static void remove_tree(const char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* ---- 1. the health file: only cutaint's own is ever removed or replaced ---- */

typedef enum { USER_FILE, SYMLINK, FIFO, DIRECTORY, DEVICE, NEAR_MARKER } foreign_kind;
typedef struct foreign_case {
    const char *what;
    foreign_kind kind;
} foreign_case;

static const foreign_case foreign_cases[] = {
    {"a user's data file", USER_FILE},
    {"a symlink to a user's file", SYMLINK},
    {"a fifo", FIFO},
    {"a directory", DIRECTORY},
    {"a device node", DEVICE},
    {"a file whose first line only starts like the marker", NEAR_MARKER},
};

/* Makes the foreign thing at path (target: a user's file a symlink points
 * to); false when this machine cannot (a device node needs root). */
static bool make_foreign(const foreign_case *c, const char *path, const char *target)
{
    FILE *f;
    switch (c->kind) {
    case USER_FILE:
    case NEAR_MARKER:
        f = fopen(path, "w");
        cr_assert(f != NULL);
        fputs(c->kind == USER_FILE ? "a user's data\n" : H_HEALTH_MARKER " of mine\n", f);
        fclose(f);
        return true;
    case SYMLINK:
        f = fopen(target, "w");
        cr_assert(f != NULL);
        fputs("a user's data\n", f);
        fclose(f);
        return symlink(target, path) == 0;
    case FIFO: return mkfifo(path, 0644) == 0;
    case DIRECTORY: return mkdir(path, 0755) == 0;
    case DEVICE: return mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0; /* what /dev/null is */
    }
    return false;
}

ParameterizedTestParameters(host, health_path_holding_something_else_is_left_untouched)
{
    return H_ROWS(foreign_cases);
}

/* At start (a healthy process) and at a loss (a crashed one), whatever is at
 * CUTAINT_HEALTH_FILE that cutaint did not write stays as it was. */
ParameterizedTest(const int *row, host, health_path_holding_something_else_is_left_untouched, .timeout = 60)
{
    const foreign_case *c = &foreign_cases[*row];
    char dir[64], path[96], target[96], env[128];
    shared_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/health", dir);
    snprintf(target, sizeof target, "%s/precious", dir);
    snprintf(env, sizeof env, "CUTAINT_HEALTH_FILE=%s", path);
    if (!make_foreign(c, path, target)) {
        remove_tree(dir);
        cr_skip_test("cannot make %s here: %s", c->what, strerror(errno));
    }
    struct stat before, after;
    cr_assert_eq(lstat(path, &before), 0);
    static const char *const scenarios[] = {"happy", "crash"};
    for (int i = 0; i < 2; i++) {
        h_result r;
        h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {scenarios[i]}, .env = {env}}, &r);
        h_expect_ended(&r);
        cr_expect_eq(r.status, i == 0 ? 0 : 70, "%s: %s exited %d", c->what, scenarios[i], r.status);
        cr_expect_geq(h_count_containing(r.err, "left untouched"), 1, "%s, %s: no line says so:\n%s", c->what,
                      scenarios[i], r.err);
        cr_assert_eq(lstat(path, &after), 0, "%s was removed by the %s run", c->what, scenarios[i]);
        cr_expect(after.st_ino == before.st_ino && after.st_mode == before.st_mode && after.st_size == before.st_size,
                  "%s was replaced by the %s run", c->what, scenarios[i]);
        h_free(&r);
    }
    if (c->kind == SYMLINK || c->kind == USER_FILE) {
        char *kept = h_slurp(c->kind == SYMLINK ? target : path);
        cr_expect(kept && strcmp(kept, "a user's data\n") == 0, "the user's data changed: %s", kept);
        free(kept);
    }
    remove_tree(dir);
}

/* The health file starts with the marker; the next process removes it,
 * whoever owns it (a restarted service may run under another uid). */
Test(host, health_file_is_marked_and_removed_by_the_next_process_whoever_owns_it)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"crash"}, .env = {"CUTAINT_HEALTH_FILE=@DIR@/health"}}, &r);
    h_expect_ended(&r);
    char *text = h_slurp(h_path(&r, "health"));
    cr_assert(text != NULL, "no health file after a lost context");
    cr_expect(strncmp(text, H_HEALTH_MARKER "\n", strlen(H_HEALTH_MARKER) + 1) == 0, "first line: %.60s", text);
    cr_expect(strstr(text, "CUDA_ERROR_ILLEGAL_ADDRESS") != NULL, "no reason after the marker: %s", text);
    free(text);
    if (geteuid() == 0)
        cr_assert_eq(chown(h_path(&r, "health"), 4321, 4321), 0);
    h_result next;
    char env[400];
    snprintf(env, sizeof env, "CUTAINT_HEALTH_FILE=%s", h_path(&r, "health"));
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"happy"}, .env = {env}}, &next);
    cr_expect_eq(next.status, 0);
    cr_expect(access(h_path(&r, "health"), F_OK) != 0, "an earlier process's health file was kept");
    h_free(&next);
    h_free(&r);
}

/* ---- 2. outputs that would block, or are no files ---------------------------- */

typedef struct refused_case {
    const char *variable, *what, *why;
} refused_case;

static const refused_case refused_cases[] = {
    {"CUTAINT_REPORT", "fifo", "fifo with no reader"},
    {"CUTAINT_LOG_FILE", "fifo", "fifo with no reader"},
    {"CUTAINT_REPORT", "dir", "directory"},
    {"CUTAINT_LOG_FILE", "dir", "directory"},
    {"CUTAINT_REPORT", "/dev/null", "device"},
};

ParameterizedTestParameters(host, output_that_would_block_or_is_no_file_is_refused_with_one_line)
{
    return H_ROWS(refused_cases);
}

ParameterizedTest(const int *row, host, output_that_would_block_or_is_no_file_is_refused_with_one_line, .timeout = 60)
{
    const refused_case *c = &refused_cases[*row];
    char dir[64], path[96], env[160];
    shared_dir(dir, sizeof dir);
    if (c->what[0] == '/') {
        snprintf(path, sizeof path, "%s", c->what);
    } else {
        snprintf(path, sizeof path, "%s/%s", dir, c->what);
        cr_assert_eq(strcmp(c->what, "fifo") == 0 ? mkfifo(path, 0644) : mkdir(path, 0755), 0);
    }
    snprintf(env, sizeof env, "%s=%s", c->variable, path);
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"failed_launch"},
                    .env = {env},
                    .timeout_s = 20,
                    .no_report = strcmp(c->variable, "CUTAINT_REPORT") == 0},
           &r);
    h_expect_ended(&r); /* on today's code the fifo blocks open(2) forever */
    cr_expect_eq(r.status, 0);
    cr_expect(h_has_line(r.out, REFUSED_READ), "%s", r.out);
    cr_expect_eq(h_count_lines_with(r.err, (const char *const[]){c->variable, c->why, NULL}), 1,
                 "%s=%s: one line should say it %s:\n%s", c->variable, path, c->why, r.err);
    h_free(&r);
    remove_tree(dir);
}

/* A fifo with a reader is a live stream to a log shipper: kept. */
Test(host, report_fifo_with_a_reader_is_a_live_stream, .timeout = 60)
{
    char dir[64], path[96], env[160];
    shared_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/stream", dir);
    cr_assert_eq(mkfifo(path, 0644), 0);
    int reader = open(path, O_RDONLY | O_NONBLOCK);
    cr_assert_geq(reader, 0);
    snprintf(env, sizeof env, "CUTAINT_REPORT=%s", path);
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"failed_launch"}, .env = {env}, .no_report = true}, &r);
    h_expect_ended(&r);
    char text[65536];
    ssize_t n = read(reader, text, sizeof text - 1);
    text[n > 0 ? n : 0] = '\0';
    cr_expect(strstr(text, "\"event\":\"start\"") && strstr(text, "\"event\":\"refused_read\""),
              "the stream lacks the events:\n%s", text);
    close(reader);
    h_free(&r);
    remove_tree(dir);
}

/* ---- 2b. outputs that are not cutaint's to append to ------------------------- */

typedef struct pseudo_case {
    const char *variable;
} pseudo_case;

static const pseudo_case pseudo_cases[] = {{"CUTAINT_REPORT"}, {"CUTAINT_LOG_FILE"}};

ParameterizedTestParameters(host, an_output_on_procfs_is_refused_with_one_line)
{
    return H_ROWS(pseudo_cases);
}

/* /proc/self/comm is the program's name: a report or a log there would
 * rename the program after the start of a JSON line. */
ParameterizedTest(const int *row, host, an_output_on_procfs_is_refused_with_one_line, .timeout = 60)
{
    const char *variable = pseudo_cases[*row].variable;
    char env[64];
    snprintf(env, sizeof env, "%s=/proc/self/comm", variable);
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"failed_launch"},
                    .env = {env},
                    .no_report = strcmp(variable, "CUTAINT_REPORT") == 0},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect(h_has_line(r.out, REFUSED_READ), "%s", r.out);
    cr_expect_eq(h_count_lines_with(r.err, (const char *const[]){variable, "procfs, a pseudo file system", NULL}), 1,
                 "one line should say %s is refused:\n%s", variable, r.err);
    h_free(&r);
}

/* The report in the log's file, or in the program's own stdout, would mix
 * cutaint's JSON into another stream: the log yields (to stderr), the
 * report is refused. */
Test(host, a_log_in_the_reports_file_is_refused_with_one_line_and_goes_to_stderr)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"failed_launch"},
                    .env = {"CUTAINT_LOG_FILE=@DIR@/report.jsonl"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect_eq(h_count_lines_with(r.err,
                                    (const char *const[]){"CUTAINT_LOG_FILE", "same file as CUTAINT_REPORT", NULL}),
                 1, "one line should say so:\n%s", r.err);
    cr_expect_geq(h_count_containing(r.err, "refused read"), 1, "the log's lines go to stderr:\n%s", r.err);
    h_report rep;
    h_report_load(r.report, &rep);
    cr_expect_eq(rep.invalid, 0, "%d lines of the report are no JSON (the first: %s)", rep.invalid,
                 rep.first_invalid >= 0 ? rep.line[rep.first_invalid] : "");
    cr_expect_geq(h_count(&rep, "refused_read"), 1, "the report lost its events: %s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

Test(host, a_report_that_is_the_programs_stdout_is_refused_with_one_line)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "exec '%s' failed_launch >>\"$0\"", CT_CLIENT_LINKED);
    h_result r;
    h_exec(&(h_run){.client = "/bin/sh",
                    .args = {"-c", cmd, "@DIR@/out"},
                    .env = {"CUTAINT_REPORT=@DIR@/out"},
                    .no_report = true},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect_eq(h_count_lines_with(r.err, (const char *const[]){"CUTAINT_REPORT", "program's own stdout", NULL}), 1,
                 "one line should say so:\n%s", r.err);
    char *out = h_slurp(h_path(&r, "out"));
    cr_expect(out && h_has_line(out, REFUSED_READ), "the program's output: %s", out);
    cr_expect(out && !strstr(out, "\"event\""), "cutaint's JSON went into the program's stdout:\n%s", out);
    free(out);
    h_free(&r);
}

/* A hard link at the report's or the log's path, to a file of another user
 * or to one with other names, is never appended to. */
Test(host, a_report_or_log_that_is_a_hard_link_or_another_users_file_is_refused)
{
    char dir[64], precious[96], report[96], log[96], env_report[128], env_log[128];
    shared_dir(dir, sizeof dir);
    snprintf(precious, sizeof precious, "%s/precious", dir);
    snprintf(report, sizeof report, "%s/report.jsonl", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    FILE *f = fopen(precious, "w");
    cr_assert(f != NULL);
    fputs("a user's data\n", f);
    fclose(f);
    cr_assert_eq(link(precious, report), 0);
    f = fopen(log, "w");
    cr_assert(f != NULL);
    fclose(f);
    bool root = geteuid() == 0;
    if (root)
        cr_assert_eq(chown(log, 4321, 4321), 0);
    snprintf(env_report, sizeof env_report, "CUTAINT_REPORT=%s", report);
    snprintf(env_log, sizeof env_log, "CUTAINT_LOG_FILE=%s", log);
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"failed_launch"},
                    .env = {env_report, env_log},
                    .no_report = true},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect(h_has_line(r.out, REFUSED_READ), "%s", r.out);
    cr_expect_eq(h_count_lines_with(r.err, (const char *const[]){"CUTAINT_REPORT", "2 hard links", NULL}), 1,
                 "one line should say so:\n%s", r.err);
    char *kept = h_slurp(precious);
    cr_expect(kept && strcmp(kept, "a user's data\n") == 0, "the linked file was appended to: %s", kept);
    free(kept);
    if (root) {
        cr_expect_eq(h_count_lines_with(r.err, (const char *const[]){"CUTAINT_LOG_FILE", "belongs to uid 4321", NULL}),
                     1, "one line should say so:\n%s", r.err);
        struct stat st;
        cr_expect(stat(log, &st) == 0 && st.st_size == 0, "another user's file was appended to");
    }
    h_free(&r);
    remove_tree(dir);
}

/* A process whose metrics path has %p never writes the same path twice; the
 * next process that writes into the directory sweeps a dead writer's
 * temporary whatever its name, and nothing without a marker. */
Test(host, a_dead_writers_temporary_is_swept_whatever_percent_p_made_its_name)
{
    char dir[64], env[128], left[160], other[160];
    shared_dir(dir, sizeof dir);
    /* a pid certainly gone: a child that has exited and been reaped */
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    cr_assert_eq(waitpid(child, NULL, 0), child);
    long gone = child;
    snprintf(left, sizeof left, "%s/job.%ld.prom.cutaint-tmp-%ld-q2w3e4", dir, gone, gone);
    snprintf(other, sizeof other, "%s/notes.cutaint-tmp-%ld-q2w3e4", dir, gone);
    FILE *f = fopen(left, "w");
    cr_assert(f != NULL);
    fputs(H_METRICS_MARKER "\ncutaint_up 1\n", f);
    fclose(f);
    f = fopen(other, "w");
    cr_assert(f != NULL);
    fputs("a user's notes\n", f);
    fclose(f);
    snprintf(env, sizeof env, "CUTAINT_METRICS_FILE=%s/job.%%p.prom", dir);
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"happy"}, .env = {env}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect_neq(access(left, F_OK), 0, "a dead writer's temporary outlived the next process");
    cr_expect_eq(access(other, F_OK), 0, "a file without cutaint's marker was removed");
    h_free(&r);
    remove_tree(dir);
}

/* ---- 5. never into the program's own descriptors -------------------------------- */

/* The value of family{..., file="FILE"} in a metrics file; -1 if absent. */
static long long sample(const char *path, const char *family, const char *file)
{
    char *text = h_slurp(path);
    char label[64];
    snprintf(label, sizeof label, "file=\"%s\"} ", file);
    long long value = -1;
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        char *at = strstr(line, label);
        if (strncmp(line, family, strlen(family)) == 0 && line[strlen(family)] == '{' && at)
            value = atoll(at + strlen(label));
    }
    free(text);
    return value;
}

Test(host, log_lines_never_go_into_a_file_the_program_put_on_fd_2)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_HOST,
                    .args = {"close_stderr", "@DIR@/data"},
                    .env = {"CUTAINT_METRICS_FILE=@DIR@/m.prom"}},
           &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "data file fd 2"), "%s", r.out);
    cr_expect(h_has_line(r.out, REFUSED_READ), "%s", r.out);
    char *data = h_slurp(h_path(&r, "data"));
    cr_expect(data && data[0] == '\0', "cutaint wrote into the program's file:\n%s", data);
    free(data);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "refused_read"), 1, "the report keeps the facts");
    cr_expect_gt(sample(h_path(&r, "m.prom"), "cutaint_output_dropped_lines_total", "stderr"), 0,
                 "the dropped log lines were not counted");
    h_report_free(&rep);
    h_free(&r);
}

Test(host, report_lines_never_go_into_a_file_that_took_a_closed_descriptor)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_HOST,
                    .args = {"close_fds", "@DIR@/data"},
                    .env = {"CUTAINT_METRICS_FILE=@DIR@/m.prom"}},
           &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "data file fd 3"), "%s", r.out);
    char *data = h_slurp(h_path(&r, "data"));
    cr_expect(data && data[0] == '\0', "cutaint wrote into the program's file:\n%s", data);
    free(data);
    h_report rep;
    h_expect_report(&r, &rep);
    cr_expect_eq(h_count(&rep, "refused_read"), 1, "reopened, the report goes on: %s", h_events(&rep));
    cr_expect_eq(h_count(&rep, "exit"), 1, "%s", h_events(&rep));
    cr_expect_eq(sample(h_path(&r, "m.prom"), "cutaint_output_reopened_total", "report"), 1,
                 "the reopen was not counted");
    h_report_free(&rep);
    h_free(&r);
}

/* ---- 6. paths resolved once, at start -------------------------------------------- */

Test(host, relative_paths_do_not_follow_the_programs_chdir)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_HOST,
                    .args = {"chdir_crash", "@DIR@/elsewhere"},
                    .cwd = "@DIR@",
                    .no_report = true,
                    .env = {"CUTAINT_HEALTH_FILE=health", "CUTAINT_METRICS_FILE=m.prom", "CUTAINT_REPORT=r.jsonl",
                            "CUTAINT_LOG_FILE=log"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 70);
    static const char *const files[] = {"health", "m.prom", "r.jsonl", "log"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        cr_expect(access(h_path(&r, files[i]), F_OK) == 0, "%s is not where the program started", files[i]);
        char elsewhere[64];
        snprintf(elsewhere, sizeof elsewhere, "elsewhere/%s", files[i]);
        cr_expect(access(h_path(&r, elsewhere), F_OK) != 0, "%s followed the program's chdir()", files[i]);
    }
    h_free(&r);
}

/* ---- 7. a full disk is said once ------------------------------------------------ */

Test(host, a_report_that_cannot_be_written_is_said_once_and_the_program_runs_on)
{
    /* RLIMIT_FSIZE (SIGXFSZ ignored) fails writes past 1 KiB with EFBIG, as
     * a full disk fails them with ENOSPC. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 1; exec '%s' failed_launch", CT_CLIENT_LINKED);
    h_result r;
    h_exec(&(h_run){.client = "/bin/sh", .args = {"-c", cmd}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect(h_has_line(r.out, REFUSED_READ), "%s", r.out);
    cr_expect_eq(h_count_containing(r.err, "cannot write CUTAINT_REPORT"), 1, "said once:\n%s", r.err);
    h_free(&r);
}

/* A full disk cuts a report line in the middle (RLIMIT_FSIZE: the same short
 * write, through a real file); once space comes back, the next line is
 * whole on a line of its own, not glued onto the fragment.  The cut counts
 * once as a write error, no line as dropped, and is said once. */
Test(host, a_report_line_a_full_disk_cut_is_ended_before_the_next_one, .timeout = 60)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_HOST,
                    .args = {"disk_full_midline", "40"},
                    .env = {"CUTAINT_METRICS_FILE=@DIR@/m.prom"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0);
    cr_expect(h_has_line(r.out, "read y: CUDA_ERROR_INVALID_VALUE bytes=0xff"), "%s", r.out);
    cr_expect_eq(h_count_containing(r.err, "cannot write CUTAINT_REPORT"), 1, "said once:\n%s", r.err);
    cr_expect_eq(h_count_lines_with(r.err,
                                    (const char *const[]){"cannot write CUTAINT_REPORT", "cut after 40 of", NULL}),
                 1, "the line says how far the write got:\n%s", r.err);
    h_report rep;
    h_report_load(r.report, &rep);
    cr_assert(!rep.missing);
    cr_expect_eq(rep.invalid, 1, "one damaged line, on its own: %d invalid lines (the first: %s)", rep.invalid,
                 rep.first_invalid >= 0 ? rep.line[rep.first_invalid] : "");
    cr_expect(!rep.truncated);
    cr_expect_eq(h_find(&rep, "start", 0), 0, "%s", h_events(&rep));
    int cut = rep.first_invalid;
    cr_assert(cut > 0 && cut + 1 < rep.n, "%s", h_events(&rep));
    cr_expect(h_json_valid(rep.line[cut + 1]) && strcmp(h_str(rep.line[cut + 1], "event"), "failure") == 0,
              "the line after the cut one is the second launch's failure, whole: %s", rep.line[cut + 1]);
    cr_expect_eq(h_count(&rep, "refused_read"), 1, "the second read, after the disk had room: %s", h_events(&rep));
    cr_expect_eq(h_count(&rep, "exit"), 1, "%s", h_events(&rep));
    h_report_free(&rep);
    cr_expect_eq(sample(h_path(&r, "m.prom"), "cutaint_output_dropped_lines_total", "report"), 0,
                 "a cut line is no dropped line");
    long long errors = sample(h_path(&r, "m.prom"), "cutaint_output_write_errors_total", "report");
    cr_expect_geq(errors, 1, "the cut line is a write error: %lld", errors);
#ifdef CT_CUTAINT_TOOL
    h_result text;
    h_exec(&(h_run){.client = CT_CUTAINT_TOOL, .args = {"report", r.report}, .no_shim = true}, &text);
    h_expect_ended(&text);
    cr_expect_eq(h_count_containing(text.out, "no start event"), 0, "the process kept its start:\n%s", text.out);
    h_free(&text);
#endif
    h_free(&r);
}

/* ---- 10. outside text in diagnostics ----------------------------------------------- */

/* Every line on stderr is one of the program's or one "==PID==" line of
 * cutaint's, with no control byte: how many are not. */
static int forged_or_raw_lines(const char *err, int pid)
{
    char prefix[32];
    int n = snprintf(prefix, sizeof prefix, "==%d== ", pid);
    int bad = 0;
    for (const char *line = err; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        bool raw = false;
        for (size_t i = 0; i < len; i++)
            raw |= (unsigned char)line[i] < 0x20 || line[i] == 0x7f;
        bad += raw || strncmp(line, prefix, (size_t)n) != 0;
        line += len + (end != NULL);
    }
    return bad;
}

/* A path holding a newline and an ESC byte reaches stderr escaped, through
 * the lines that name an output (ct_stderr_line) and the log (ct_log):
 * no forged "==PID== cutaint:" line, no terminal escape. */
Test(host, a_newline_or_escape_in_a_path_is_escaped_in_every_diagnostic)
{
    static const char *const hostile = "/no\n==1== cutaint: forged\x1b[31m";
    char report[128], health[128];
    snprintf(report, sizeof report, "CUTAINT_REPORT=%s/report", hostile);
    snprintf(health, sizeof health, "CUTAINT_HEALTH_FILE=%s/health", hostile);
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"crash"}, .no_report = true, .env = {report, health}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 70);
    long long pid = 0;
    sscanf(h_line_containing(r.err, "=="), "==%lld==", &pid);
    cr_expect_eq(forged_or_raw_lines(r.err, (int)pid), 0, "raw bytes or forged lines on stderr:\n%s", r.err);
    cr_expect_eq(h_count_lines_with(r.err,
                                    (const char *const[]){"CUTAINT_REPORT /no\\n==1== cutaint: forged\\x1b[31m/report",
                                                          "it cannot be opened: No such file or directory", NULL}),
                 1, "%s", r.err);
    cr_expect_eq(h_count_lines_with(r.err,
                                    (const char *const[]){"health file /no\\n==1== cutaint: forged\\x1b[31m/health",
                                                          NULL}),
                 1, "%s", r.err);
    h_free(&r);
}

/* ---- 3. an exit() from a signal handler never hangs ------------------------------ */

static void expect_interrupted_exit(const h_result *r, const char *skipped)
{
    h_expect_ended(r);
    cr_expect_eq(r->status, 3, "the handler's exit(3) became %d", r->status);
    h_report rep;
    h_expect_report(r, &rep);
    int e = h_find(&rep, "exit", 0);
    cr_assert_geq(e, 0, "no exit event: %s", h_events(&rep));
    cr_expect_str_eq(h_str(rep.line[e], "interrupted"), "true", "%s", rep.line[e]);
    bool found = false;
    for (int i = 0; i < h_arr_len(rep.line[e], "skipped"); i++)
        found |= strcmp(h_arr_str(rep.line[e], "skipped", i), skipped) == 0;
    cr_expect(found, "the exit event should say %s was skipped: %s", skipped, rep.line[e]);
    h_report_free(&rep);
}

Test(host, exit_from_a_handler_that_interrupted_the_metrics_write_does_not_hang, .timeout = 60)
{
#ifndef CT_SIGRENAME
    cr_skip_test("the rename hook is not built under a sanitizer (it must come before the sanitizer's runtime)");
#else
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_HOST,
                    .args = {"sigterm_in_event"},
                    .preload_first = CT_SIGRENAME,
                    .timeout_s = 20,
                    .env = {"CUTAINT_METRICS_FILE=@DIR@/m.prom", "SIGRENAME_SUFFIX=m.prom", "SIGRENAME_NTH=2"}},
           &r);
    expect_interrupted_exit(&r, "metrics_file");
    h_free(&r);
#endif
}

/* On fakecuda's deterministic schedule (H_SYNC) the host function runs on
 * the thread inside cuStreamSynchronize, the interruption under test;
 * asynchronously it runs on the driver's worker thread, outside any call. */
Test(host, exit_from_a_handler_that_interrupted_the_driver_makes_no_driver_call, .timeout = 60)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_HOST, .args = {"sigterm_in_hostfn"}, .timeout_s = 20, .env = {H_SYNC}}, &r);
    expect_interrupted_exit(&r, "exit_check");
    h_free(&r);
}

/* ---- 4. secure execution ----------------------------------------------------------- */

#ifdef CT_CLIENT_HOST_SUID
/* A copy of the setuid client, setuid root, where any user can run it;
 * the reason it cannot be made, else NULL. */
static const char *make_setuid_copy(const char *dir, char *out, size_t cap)
{
    if (geteuid() != 0)
        return "needs root (to make a setuid-root program)";
    struct statvfs fs;
    if (statvfs(dir, &fs) != 0 || (fs.f_flag & ST_NOSUID))
        return "the temporary file system is mounted nosuid";
    snprintf(out, cap, "%s/client_host_suid", dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chown 0:0 '%s' && chmod 4755 '%s'", CT_CLIENT_HOST_SUID, out, out, out);
    return system(cmd) == 0 ? NULL : "the setuid copy could not be made";
}
#endif

Test(host, a_setuid_program_ignores_every_cutaint_variable, .timeout = 60)
{
#ifndef CT_CLIENT_HOST_SUID
    cr_skip_test("the setuid client is not built under a sanitizer");
#else
    char dir[64], client[128], victim[96], env_health[160];
    shared_dir(dir, sizeof dir);
    const char *why = make_setuid_copy(dir, client, sizeof client);
    if (why) {
        remove_tree(dir);
        cr_skip_test("%s", why);
    }
    /* A root-owned file the unprivileged user wants replaced. */
    snprintf(victim, sizeof victim, "%s/root-owned", dir);
    FILE *f = fopen(victim, "w");
    cr_assert(f != NULL);
    fputs(H_HEALTH_MARKER "\nroot's\n", f);
    fclose(f);
    snprintf(env_health, sizeof env_health, "CUTAINT_HEALTH_FILE=%s", victim);
    h_result r;
    h_exec(&(h_run){.client = client,
                    .args = {"secure"},
                    .no_shim = true,
                    .run_as = 65534,
                    .env = {"CUTAINT_REPORT=@DIR@/report", "CUTAINT_LOG_FILE=@DIR@/log",
                            "CUTAINT_METRICS_FILE=@DIR@/m.prom", env_health, "CUTAINT_INJECT=api:cuMemAlloc*#1",
                            "CUTAINT_POISON=off"}},
           &r);
    h_expect_ended(&r);
    if (r.status == 127 || r.status == 126) {
        h_free(&r);
        remove_tree(dir);
        cr_skip_test("the setuid client cannot run as nobody here (its libraries unreadable, or no setuid())");
    }
    if (!h_has_line(r.out, "secure 1 euid 0")) {
        h_free(&r);
        remove_tree(dir);
        cr_skip_test("setuid bits have no effect here (no_new_privs, or a nosuid mount)");
    }
    cr_expect(h_has_line(r.out, "read x: CUDA_ERROR_INVALID_VALUE bytes=0xff"),
              "cutaint ran with its defaults (refused, poisoned 0xff), no injection:\n%s", r.out);
    static const char *const files[] = {"report", "log", "m.prom"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        cr_expect(access(h_path(&r, files[i]), F_OK) != 0, "the setuid program created %s where the user chose",
                  files[i]);
    cr_expect(access(victim, F_OK) == 0, "the setuid program removed a root-owned file through the health path");
    cr_expect_eq(h_count_containing(r.err, "secure execution"), 1, "one line should say so:\n%s", r.err);
    h_free(&r);
    remove_tree(dir);
#endif
}

/* ---- 8. leftovers -------------------------------------------------------------------- */

static int temporaries_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, "job.prom.", 9) == 0;
    if (d)
        closedir(d);
    return n;
}

Test(host, killed_processes_leave_no_metrics_temporary, .timeout = 240)
{
    char dir[64], env[128];
    shared_dir(dir, sizeof dir);
    snprintf(env, sizeof env, "CUTAINT_METRICS_FILE=%s/job.prom", dir);
    int killed_left = 0;
    for (int i = 0; i < 40; i++) {
        h_result r;
        h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                        .args = {"spin"},
                        .kill_on = "ready",
                        .kill_delay_ms = 5 + i % 7,
                        .env = {env, "CUTAINT_LOG=off"}},
               &r);
        h_free(&r);
    }
    killed_left = temporaries_in(dir);
    /* The next process removes what killed ones may have left. */
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"happy"}, .env = {env}}, &r);
    h_free(&r);
    cr_expect_eq(temporaries_in(dir), 0, "%d temporaries after 40 kills and a clean run (%d before it)",
                 temporaries_in(dir), killed_left);
    remove_tree(dir);
}

Test(host, forked_children_log_into_their_own_percent_p_file)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_HOST, .args = {"fork_fail", "3"}, .env = {"CUTAINT_LOG_FILE=@DIR@/log-%p"}},
           &r);
    h_expect_ended(&r);
    DIR *d = opendir(r.dir);
    int logs = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "log-", 4) != 0)
            continue;
        logs++;
        char *text = h_slurp(h_path(&r, e->d_name));
        char pid[32];
        snprintf(pid, sizeof pid, "==%s==", e->d_name + 4);
        cr_expect_eq(h_count_containing(text, "refused read:"), 1, "%s holds another process's lines:\n%s", e->d_name,
                     text);
        cr_expect_eq(h_count_containing(text, pid), h_count_lines(text), "%s: lines of another pid:\n%s", e->d_name,
                     text);
        free(text);
    }
    closedir(d);
    cr_expect_eq(logs, 4, "a parent and 3 children: %d log files", logs);
    h_free(&r);
}

/* The parent reached the driver before it forked; the child loses its
 * context.  With %p the health file names the process that lost it: the
 * child's file exists, the parent (whose context is intact) has none. */
Test(host, a_forked_child_that_loses_its_context_writes_its_own_percent_p_health_file)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_HOST, .args = {"fork_crash"}, .env = {"CUTAINT_HEALTH_FILE=@DIR@/health-%p"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0, "the parent's context is intact:\n%s%s", r.out, r.err);
    int child = 0, child_status = -1;
    const char *said = h_line_containing(r.out, " exited ");
    cr_assert_eq(sscanf(said, "child %d exited %d", &child, &child_status), 2, "%s", r.out);
    cr_expect_eq(child_status, 70, "the child lost its context:\n%s", r.err);
    char own[64];
    snprintf(own, sizeof own, "health-%d", child);
    char *text = h_slurp(h_path(&r, own));
    cr_expect(text && strncmp(text, H_HEALTH_MARKER "\n", strlen(H_HEALTH_MARKER) + 1) == 0,
              "no health file of the child's own (%s): %s", own, text ? text : "absent");
    free(text);
    DIR *d = opendir(r.dir);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));)
        files += strncmp(e->d_name, "health-", 7) == 0;
    closedir(d);
    cr_expect_eq(files, 1, "%d health files: the parent's context was never lost", files);
    h_free(&r);
}

/* ---- 9. small ones --------------------------------------------------------------------- */

/* A child reading the bytes its parent was refused tells the parent's
 * story: one line in the log they share, in full in a %p log of its own,
 * which holds no earlier block to refer to. */
Test(host, a_forked_child_tells_its_parents_story_in_full_in_its_own_log)
{
    static const char *const again = "again failure #1 by the same path (2 such reads so far, 8192 bytes)";
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_HOST, .args = {"fork_reread"}}, &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "read child: CUDA_ERROR_INVALID_VALUE bytes=0xff"), "%s", r.out);
    cr_expect_eq(h_count_containing(r.err, "of these bytes were never written"), 1, "%s", r.err);
    cr_expect_eq(h_count_containing(r.err, again), 1, "%s", r.err);
    h_free(&r);

    h_exec(&(h_run){.client = CT_CLIENT_HOST, .args = {"fork_reread"}, .env = {"CUTAINT_LOG_FILE=@DIR@/log-%p"}}, &r);
    h_expect_ended(&r);
    DIR *d = opendir(r.dir);
    int logs = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "log-", 4) != 0)
            continue;
        logs++;
        char *text = h_slurp(h_path(&r, e->d_name));
        cr_expect_eq(h_count_containing(text, "of these bytes were never written"), 1, "%s:\n%s", e->d_name, text);
        cr_expect_eq(h_count_containing(text, "again failure"), 0, "%s:\n%s", e->d_name, text);
        free(text);
    }
    closedir(d);
    cr_expect_eq(logs, 2, "a parent and its child: %d log files", logs);
    h_free(&r);
}

Test(host, exit_minus_one_is_reported_as_255)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED, .args = {"happy", "-1"}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 255);
    h_report rep;
    h_expect_report(&r, &rep);
    int e = h_find(&rep, "exit", 0);
    cr_assert_geq(e, 0);
    cr_expect_str_eq(h_str(rep.line[e], "status"), "255", "%s", rep.line[e]);
    cr_expect_str_eq(h_str(rep.line[e], "program_status"), "255", "%s", rep.line[e]);
    h_report_free(&rep);
    h_free(&r);
}

Test(host, injection_rules_that_can_never_fire_are_said_once)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"happy"},
                    .env = {"CUTAINT_INJECT=api:cuInit;api:cuNoSuchThing;api:cuMemcpyDtoH*#999"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(h_count_containing(r.err, "can never fire"), 2, "%s", r.err);
    cr_expect_eq(h_count_lines_with(r.err, (const char *const[]){"can never fire", "api:cuInit", NULL}), 1, "%s",
                 r.err);
    cr_expect_eq(h_count_lines_with(r.err, (const char *const[]){"can never fire", "api:cuNoSuchThing", NULL}), 1, "%s",
                 r.err);
    h_free(&r);
}

Test(host, the_cutaint_commands_own_variables_are_known)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"happy"},
                    .env = {"CUTAINT_LIB=/opt/cutaint/libcutaint.so", "CUTAINT_FAKECUDA_DIR=/opt/fakecuda"}},
           &r);
    h_expect_ended(&r);
    cr_expect_eq(h_count_containing(r.err, "not a cutaint variable"), 0, "%s", r.err);
    h_free(&r);
}

/* Injection comes before cutaint's checks, for api: rules as for launch:
 * ones: an injected call fails as its rule says whatever its memory
 * carries, and every call is counted. */
Test(host, an_injected_call_fails_as_its_rule_says_whatever_its_memory_carries)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_LINKED,
                    .args = {"two_hops"},
                    .env = {"CUTAINT_INJECT=api:cuLaunchKernel#4=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;"
                            "api:cuMemcpyDtoH*#3=CUDA_ERROR_OUT_OF_MEMORY"}},
           &r);
    h_expect_ended(&r);
    cr_expect(h_has_line(r.out, "launch saxpy x y: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
              "the launch reading tainted x was skipped, not injected:\n%s", r.out);
    cr_expect(h_has_line(r.out, "read x: CUDA_ERROR_OUT_OF_MEMORY bytes=0xff") ||
                  h_count_lines_with(r.out, (const char *const[]){"read x: CUDA_ERROR_OUT_OF_MEMORY", NULL}) == 1,
              "the third read (tainted x) was refused, not injected:\n%s", r.out);
    h_report rep;
    h_expect_report(&r, &rep);
    int injected = 0;
    for (int i = h_find(&rep, "failure", 0); i >= 0; i = h_find(&rep, "failure", i + 1))
        injected += strcmp(h_str(rep.line[i], "injected"), "true") == 0;
    cr_expect_eq(injected, 2, "the launch's and the read's injected failures: %s", h_events(&rep));
    h_report_free(&rep);
    h_free(&r);
}

/* A refused read poisons the host destination the program gave; a program
 * that gave memory it cannot write gets the refusal, never a SIGSEGV from
 * cutaint (the driver would have answered with an error, not a fault). */
Test(host, poisoning_memory_the_program_cannot_write_never_faults)
{
    h_result r;
    h_exec(&(h_run){.client = CT_CLIENT_HOST, .args = {"read_unwritable"}}, &r);
    h_expect_ended(&r);
    cr_expect_eq(r.status, 0, "status %d:\n%s%s", r.status, r.out, r.err);
    cr_expect(h_has_line(r.out, "read x into a read-only page: CUDA_ERROR_INVALID_VALUE"), "%s", r.out);
    cr_expect(h_has_line(r.out, "copy x to a PROT_NONE page: CUDA_ERROR_INVALID_VALUE"), "%s", r.out);
    cr_expect(h_has_line(r.out, "still here"), "%s", r.out);
    cr_expect_eq(h_count_containing(r.err, "could not be written"), 1, "said once:\n%s", r.err);
    h_free(&r);
}

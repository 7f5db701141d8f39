/*
 * test_files.c - paths, sinks (the log, the report, stderr) and marked files
 * (the health and metrics files): core/files.h.  Each test works in its own
 * fresh directory; Criterion runs each in its own process, so a test may
 * change its limits and signals.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ct_status.h"
#include "files.h"

static char dir[64];

static void make_dir(void)
{
    strcpy(dir, "/tmp/cutaint-files-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    cr_assert_eq(system(command), 0);
}

TestSuite(files, .init = make_dir, .fini = remove_dir);

/* Threads of one test call it at once: the slot counter is atomic. */
static const char *in_dir(const char *name)
{
    static char path[16][256];
    static atomic_uint next;
    char *p = path[atomic_fetch_add(&next, 1) % 16];
    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    return p;
}

static size_t read_file(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
    return n;
}

static int entries_in_dir(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

#define MARK "# test marker"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* ---- ct_path_expand ----------------------------------------------------- */

Test(files, path_expand)
{
    static const struct {
        const char *tmpl, *out;
    } cases[] = {
        {"/tmp/r.%p.jsonl", "/tmp/r.4242.jsonl"},
        {"%p%p", "42424242"},
        {"100%%", "100%"},
        {"%%p", "%p"},
        {"%x and %", "%x and %"},
        {"", ""},
        {"plain", "plain"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        cr_assert_eq(ct_path_expand(cases[i].tmpl, 4242, out, sizeof out), CT_OK);
        cr_assert_str_eq(out, cases[i].out);
    }
}

Test(files, path_expand_refuses_what_does_not_fit)
{
    char out[8];
    cr_assert_eq(ct_path_expand("1234567", 1, out, sizeof out), CT_OK);
    cr_assert_str_eq(out, "1234567");
    cr_assert_eq(ct_path_expand("12345678", 1, out, sizeof out), CT_EINVAL);
    cr_assert_str_empty(out);
    cr_assert_eq(ct_path_expand("abc%p", 123456, out, sizeof out), CT_EINVAL);
    cr_assert_eq(ct_path_expand(NULL, 1, out, sizeof out), CT_EINVAL);
    cr_assert_eq(ct_path_expand("a", 1, NULL, 8), CT_EINVAL);
    cr_assert_eq(ct_path_expand("a", 1, out, 0), CT_EINVAL);
}

Test(files, path_absolute)
{
    char out[64];
    cr_assert_eq(ct_path_absolute("r.jsonl", "/work/job", out, sizeof out), CT_OK);
    cr_assert_str_eq(out, "/work/job/r.jsonl");
    cr_assert_eq(ct_path_absolute("logs/%p.log", "/", out, sizeof out), CT_OK);
    cr_assert_str_eq(out, "/logs/%p.log");
    cr_assert_eq(ct_path_absolute("/var/h", "/elsewhere", out, sizeof out), CT_OK);
    cr_assert_str_eq(out, "/var/h");
    cr_assert_eq(ct_path_absolute("/var/h", NULL, out, sizeof out), CT_OK, "an absolute path needs no cwd");
    cr_assert_eq(ct_path_absolute("r", NULL, out, sizeof out), CT_EINVAL, "relative with no cwd");
    cr_assert_eq(ct_path_absolute("r", "relative", out, sizeof out), CT_EINVAL);
    char small[8];
    cr_assert_eq(ct_path_absolute("abcd", "/xyz", small, sizeof small), CT_EINVAL);
    cr_assert_str_empty(small);
}

/* ---- sinks ---------------------------------------------------------------- */

static void write_ok(ct_sink *s, const char *line)
{
    cr_assert_eq(ct_sink_write(s, line, strlen(line), true), CT_SINK_WRITTEN, "%s: %s", s->path, s->why);
}

Test(files, sink_creates_0644_on_a_high_cloexec_fd_and_appends)
{
    umask(022);
    const char *path = in_dir("report.jsonl");
    ct_sink s;
    ct_sink_init(&s, path);
    cr_assert_neq(access(path, F_OK), 0, "created before its first line");
    write_ok(&s, "{\"a\":1}\n");
    cr_assert_geq(s.fd, 64, "fd %d is in the program's range", s.fd);
    cr_assert(fcntl(s.fd, F_GETFD) & FD_CLOEXEC);
    ct_sink_close(&s);
    /* A second opener (a later process) appends after the first. */
    ct_sink_init(&s, path);
    write_ok(&s, "{\"b\":2}\n");
    ct_sink_close(&s);
    char text[64];
    read_file(path, text, sizeof text);
    cr_assert_str_eq(text, "{\"a\":1}\n{\"b\":2}\n");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0644);
}

/* The first write of a sink for path is refused, saying `why`, and nothing
 * at the path changes. */
static void expect_refused(const char *path, const char *why)
{
    struct stat before, after;
    bool existed = lstat(path, &before) == 0;
    ct_sink s;
    ct_sink_init(&s, path);
    cr_assert_eq(ct_sink_write(&s, "x\n", 2, true), CT_SINK_REFUSED, "%s was not refused", path);
    cr_assert(strstr(s.why, why), "%s: why is \"%s\", not \"%s\"", path, s.why, why);
    cr_assert_eq(ct_sink_write(&s, "x\n", 2, true), CT_SINK_DROPPED, "refused once, then dropped");
    cr_assert_eq(atomic_load(&s.dropped), 1);
    cr_assert(!ct_sink_live(&s));
    cr_assert_eq(lstat(path, &after) == 0, existed);
    if (existed)
        cr_assert(after.st_ino == before.st_ino && after.st_mode == before.st_mode);
}

Test(files, sink_refuses_a_fifo_with_no_reader_at_once, .timeout = 10)
{
    const char *fifo = in_dir("fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    expect_refused(fifo, "fifo with no reader");
}

Test(files, sink_refuses_devices_directories_symlinks)
{
    expect_refused("/dev/null", "device");
    expect_refused(dir, "directory");
    const char *target = in_dir("victim");
    const char *link = in_dir("report.jsonl");
    cr_assert_eq(symlink(target, link), 0);
    expect_refused(link, "symlink");
    cr_assert_neq(access(target, F_OK), 0, "the symlink's target was created");
    expect_refused(in_dir("no/such/dir"), "No such file");
    ct_sink s;
    ct_sink_init(&s, "relative/path");
    cr_assert(!ct_sink_live(&s));
    ct_sink_init(&s, NULL);
    cr_assert_eq(ct_sink_write(&s, "x\n", 2, true), CT_SINK_DROPPED);
}

Test(files, sink_keeps_a_fifo_with_a_reader_and_drops_what_a_full_pipe_cannot_take, .timeout = 20)
{
    const char *fifo = in_dir("fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    int reader = open(fifo, O_RDONLY | O_NONBLOCK);
    cr_assert_geq(reader, 0);
    ct_sink s;
    ct_sink_init(&s, fifo);
    write_ok(&s, "first\n");
    char got[16] = "";
    cr_assert_eq(read(reader, got, sizeof got - 1), 6);
    cr_assert_str_eq(got, "first\n");
    /* Nobody reads now: the pipe fills, and lines are dropped, not waited for. */
    char line[512];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\n';
    int written = 0, dropped = 0;
    for (int i = 0; i < 1000; i++) {
        ct_sink_result r = ct_sink_write(&s, line, sizeof line, true);
        cr_assert(r == CT_SINK_WRITTEN || r == CT_SINK_DROPPED, "result %d", r);
        written += r == CT_SINK_WRITTEN;
        dropped += r == CT_SINK_DROPPED;
    }
    cr_assert_gt(written, 0);
    cr_assert_gt(dropped, 0, "a full pipe took every line: it was waited for");
    cr_assert_eq(atomic_load(&s.dropped), (uint_fast64_t)dropped);
    close(reader);
    ct_sink_close(&s);
}

Test(files, sink_never_writes_into_a_descriptor_the_program_took_over)
{
    const char *path = in_dir("report.jsonl");
    ct_sink s;
    ct_sink_init(&s, path);
    write_ok(&s, "one\n");
    /* The program closes every descriptor, then opens its own data file,
     * which the kernel may give the number cutaint had. */
    int mine = s.fd;
    close(mine);
    const char *data = in_dir("data");
    int fd = open(data, O_WRONLY | O_CREAT, 0644);
    cr_assert_geq(dup2(fd, mine), 0);
    write_ok(&s, "two\n");
    cr_assert_eq(atomic_load(&s.reopens), 1);
    cr_assert_neq(s.fd, mine);
    char text[64];
    read_file(data, text, sizeof text);
    cr_assert_str_empty(text, "the report line went into the program's file");
    read_file(path, text, sizeof text);
    cr_assert_str_eq(text, "one\ntwo\n", "reopened by its path, appended");
    /* Lost a second time: it stops. */
    close(s.fd);
    cr_assert_eq(ct_sink_write(&s, "three\n", 6, true), CT_SINK_DROPPED);
    cr_assert(!ct_sink_live(&s));
    cr_assert_eq(atomic_load(&s.reopens), 1);
    close(fd);
}

Test(files, stderr_sink_writes_only_while_fd_2_is_the_stderr_it_was)
{
    const char *first = in_dir("stderr-at-start");
    int fd = open(first, O_WRONLY | O_CREAT, 0644);
    cr_assert_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    ct_sink s;
    cr_assert_eq(ct_sink_stderr(&s), CT_OK);
    write_ok(&s, "said\n");
    /* The program closes fd 2 and opens a file, which becomes fd 2. */
    close(STDERR_FILENO);
    const char *data = in_dir("data");
    cr_assert_eq(open(data, O_WRONLY | O_CREAT, 0644), STDERR_FILENO);
    cr_assert_eq(ct_sink_write(&s, "lost\n", 5, true), CT_SINK_DROPPED);
    char text[64];
    read_file(data, text, sizeof text);
    cr_assert_str_empty(text, "a log line went into the program's file");
    /* Its own stderr back on fd 2: written again. */
    cr_assert_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    write_ok(&s, "again\n");
    read_file(first, text, sizeof text);
    cr_assert_str_eq(text, "said\nagain\n");
    cr_assert_eq(atomic_load(&s.dropped), 1);
    close(STDERR_FILENO);
    cr_assert_eq(ct_sink_stderr(&s), CT_EIO, "fd 2 closed at load");
    cr_assert_eq(ct_sink_write(&s, "x\n", 2, true), CT_SINK_DROPPED);
    close(fd);
}

Test(files, sink_write_failures_are_said_once_and_counted)
{
    /* RLIMIT_FSIZE makes a write past 8 bytes fail with EFBIG, as a full
     * disk fails it with ENOSPC. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {8, 8};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    ct_sink s;
    ct_sink_init(&s, in_dir("full.log"));
    write_ok(&s, "1234567\n");
    cr_assert_eq(ct_sink_write(&s, "more\n", 5, true), CT_SINK_FIRST_FAILURE);
    cr_assert(strstr(s.why, "large"), "why: %s", s.why);
    cr_assert_eq(ct_sink_write(&s, "more\n", 5, true), CT_SINK_FAILED, "said once");
    cr_assert_eq(atomic_load(&s.write_errors), 2);
    cr_assert(ct_sink_live(&s), "a failing file is tried again: space may come back");
}

/* A full disk cuts a line short; several processes may append to the file,
 * so nothing is truncated: the damaged line is ended before the sink's next
 * line, which is whole on a line of its own.  The cut counts once, as a
 * write error, and is said once. */
Test(files, a_line_cut_short_is_ended_before_the_next_and_counted_once_as_a_write_error)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &lim), 0);
    const rlim_t room = 12;
    struct rlimit small = {room, lim.rlim_max};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    const char *path = in_dir("cut.jsonl");
    ct_sink s;
    ct_sink_init(&s, path);
    write_ok(&s, "{\"a\":1}\n"); /* 8 bytes: 4 left */
    cr_assert_eq(ct_sink_write(&s, "{\"b\":22}\n", 9, true), CT_SINK_FIRST_FAILURE, "why: %s", s.why);
    cr_assert(strstr(s.why, "4 of 9 bytes"), "why: %s", s.why);
    cr_assert_eq(atomic_load(&s.write_errors), 1, "a cut line is one write error");
    cr_assert_eq(atomic_load(&s.dropped), 0, "a cut line is no dropped line");
    cr_assert_eq(ct_sink_write(&s, "{\"c\":3}\n", 8, true), CT_SINK_FAILED, "the disk is still full");
    cr_assert_eq(atomic_load(&s.write_errors), 2);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0); /* space comes back */
    write_ok(&s, "{\"d\":4}\n");
    write_ok(&s, "{\"e\":5}\n");
    char text[256];
    read_file(path, text, sizeof text);
    cr_assert_str_eq(text, "{\"a\":1}\n{\"b\"\n{\"d\":4}\n{\"e\":5}\n");
    cr_assert_eq(atomic_load(&s.write_errors), 2, "nothing more counted");
}

Test(files, sink_drops_a_line_rather_than_wait_when_told_not_to)
{
    ct_sink s;
    ct_sink_init(&s, in_dir("r.jsonl"));
    pthread_mutex_lock(&s.lock); /* the code an exit interrupted holds it */
    cr_assert_eq(ct_sink_write(&s, "x\n", 2, false), CT_SINK_DROPPED);
    pthread_mutex_unlock(&s.lock);
    write_ok(&s, "y\n");
    cr_assert_eq(atomic_load(&s.dropped), 1);
}

#define WRITERS 8
#define LINES 500

static void *write_lines(void *arg)
{
    int id = *(int *)arg;
    ct_sink s; /* separate opens, as separate processes */
    ct_sink_init(&s, in_dir("report.jsonl"));
    char line[128];
    for (int i = 0; i < LINES; i++) {
        int n = snprintf(line, sizeof line, "{\"writer\":%d,\"line\":%d,\"pad\":\"%060d\"}\n", id, i, 0);
        cr_assert_eq(ct_sink_write(&s, line, (size_t)n, true), CT_SINK_WRITTEN);
    }
    ct_sink_close(&s);
    return NULL;
}

Test(files, concurrent_writers_never_interleave_lines)
{
    const char *path = in_dir("report.jsonl");
    pthread_t tid[WRITERS];
    int ids[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        ids[i] = i;
        pthread_create(&tid[i], NULL, write_lines, &ids[i]);
    }
    for (int i = 0; i < WRITERS; i++)
        pthread_join(tid[i], NULL);
    FILE *f = fopen(path, "r");
    char line[256];
    int count = 0, next[WRITERS] = {0};
    while (fgets(line, sizeof line, f)) {
        int id, n;
        cr_assert_eq(sscanf(line, "{\"writer\":%d,\"line\":%d,", &id, &n), 2, "%s", line);
        cr_assert(id >= 0 && id < WRITERS, "%s", line);
        char whole[128];
        snprintf(whole, sizeof whole, "{\"writer\":%d,\"line\":%d,\"pad\":\"%060d\"}\n", id, n, 0);
        cr_assert_str_eq(line, whole, "torn line");
        cr_assert_eq(n, next[id]++, "writer %d out of order", id);
        count++;
    }
    fclose(f);
    cr_assert_eq(count, WRITERS * LINES);
}

/* ---- outputs cutaint may not append to ------------------------------------------ */

/* The program's name, as /proc/self/comm gives it. */
static void program_name(char *name, size_t cap)
{
    FILE *f = fopen("/proc/self/comm", "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(name, (int)cap, f));
    fclose(f);
}

/* Writing there changes the kernel, not a file: /proc/self/comm would be
 * the program's new name. */
Test(files, sink_refuses_pseudo_file_systems)
{
    char before[64], after[64];
    program_name(before, sizeof before);
    expect_refused("/proc/self/comm", "procfs");
    expect_refused("/proc/self/cutaint.log", "procfs");
    program_name(after, sizeof after);
    cr_assert_str_eq(after, before, "the program was renamed");
    struct stat st;
    if (stat("/sys/kernel", &st) == 0)
        expect_refused("/sys/kernel/cutaint.log", "sysfs");
    char why[CT_WHY_MAX] = "";
    cr_assert_eq(ct_marked_replace("/proc/self/comm", MARK, "x\n", 2, false, why, sizeof why), CT_EEXIST);
    cr_assert(strstr(why, "procfs"), "%s", why);
    cr_assert_eq(ct_marked_clear("/proc/self/comm", MARK, why, sizeof why), CT_EEXIST);
}

/* A file cutaint did not create is appended to only when it has one link
 * and belongs to this process's user: a hard link placed at the path would
 * otherwise make a root service append into another user's file. */
Test(files, sink_appends_only_to_a_file_of_its_own_user_with_one_link)
{
    const char *precious = in_dir("precious");
    const char *linked = in_dir("report.jsonl");
    write_text(precious, "a user's data\n");
    cr_assert_eq(link(precious, linked), 0);
    expect_refused(linked, "2 hard links");
    char text[64];
    read_file(precious, text, sizeof text);
    cr_assert_str_eq(text, "a user's data\n");
    cr_assert_eq(unlink(precious), 0);
    /* one link now, and this process's: appended to */
    ct_sink s;
    ct_sink_init(&s, linked);
    write_ok(&s, "{}\n");
    ct_sink_close(&s);
    read_file(linked, text, sizeof text);
    cr_assert_str_eq(text, "a user's data\n{}\n");
    if (geteuid() != 0)
        cr_skip_test("another user's file needs root to make here");
    const char *theirs = in_dir("theirs.jsonl");
    write_text(theirs, "another user's lines\n");
    cr_assert_eq(chown(theirs, 4321, 4321), 0);
    expect_refused(theirs, "belongs to uid 4321");
    read_file(theirs, text, sizeof text);
    cr_assert_str_eq(text, "another user's lines\n");
}

/* The report and the log never share a file, and neither with the
 * program's stdout (nor the report with its stderr).  The log yields:
 * refused whenever its file is the report's; the report only when the log
 * has already opened that file. */
Test(files, sinks_kept_apart_refuse_the_same_file)
{
    const char *path = in_dir("out");
    ct_sink log, report;
    ct_sink_init(&log, path);
    ct_sink_init(&report, path);
    ct_sink_apart(&log, &report, "CUTAINT_REPORT", true, false);
    ct_sink_apart(&report, &log, "CUTAINT_LOG_FILE", false, true);
    write_ok(&report, "{}\n");
    cr_assert_eq(ct_sink_write(&log, "log\n", 4, true), CT_SINK_REFUSED);
    cr_assert(strstr(log.why, "same file as CUTAINT_REPORT"), "%s", log.why);
    ct_sink_close(&report);
    ct_sink_close(&log);
    /* The log yields even when it opens first; one not kept apart that has
     * opened the file first refuses the report. */
    const char *other = in_dir("other");
    ct_sink_init(&log, other);
    ct_sink_init(&report, other);
    ct_sink_apart(&log, &report, "CUTAINT_REPORT", true, false);
    ct_sink_apart(&report, &log, "CUTAINT_LOG_FILE", false, true);
    cr_assert_eq(ct_sink_write(&log, "log\n", 4, true), CT_SINK_REFUSED, "the report's path is the log's: %s", log.why);
    ct_sink_init(&log, other);
    ct_sink_apart(&report, &log, "CUTAINT_LOG_FILE", false, true);
    write_ok(&log, "log\n");
    cr_assert_eq(ct_sink_write(&report, "{}\n", 3, true), CT_SINK_REFUSED);
    cr_assert(strstr(report.why, "same file as CUTAINT_LOG_FILE"), "%s", report.why);
    ct_sink_close(&log);
    /* The same file under another name (a symlinked directory) is caught too. */
    const char *alias = in_dir("alias");
    char via[300];
    cr_assert_eq(symlink(dir, alias), 0);
    snprintf(via, sizeof via, "%s/out", alias);
    ct_sink_init(&log, via);
    ct_sink_init(&report, path);
    ct_sink_apart(&log, &report, "CUTAINT_REPORT", true, false);
    cr_assert_eq(ct_sink_write(&log, "log\n", 4, true), CT_SINK_REFUSED);
    char text[64];
    read_file(path, text, sizeof text);
    cr_assert_str_eq(text, "{}\n", "a line went into the other's file");
}

Test(files, sinks_kept_apart_refuse_the_programs_stdout_and_the_report_its_stderr)
{
    const char *out = in_dir("stdout"), *err = in_dir("stderr");
    write_text(out, "");
    write_text(err, "");
    int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
    int fo = open(out, O_WRONLY | O_APPEND), fe = open(err, O_WRONLY | O_APPEND);
    cr_assert(fo >= 0 && fe >= 0 && saved_out >= 0 && saved_err >= 0);
    dup2(fo, STDOUT_FILENO);
    dup2(fe, STDERR_FILENO);
    ct_sink log, report, log_on_err;
    ct_sink_init(&log, out);
    ct_sink_init(&report, err);
    ct_sink_init(&log_on_err, err);
    ct_sink_apart(&log, NULL, NULL, true, false);
    ct_sink_apart(&report, NULL, NULL, false, true);
    ct_sink_apart(&log_on_err, NULL, NULL, true, false);
    ct_sink_result log_r = ct_sink_write(&log, "log\n", 4, true);
    ct_sink_result report_r = ct_sink_write(&report, "{}\n", 3, true);
    ct_sink_result err_r = ct_sink_write(&log_on_err, "log\n", 4, true);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    cr_assert_eq(log_r, CT_SINK_REFUSED);
    cr_assert(strstr(log.why, "program's own stdout"), "%s", log.why);
    cr_assert_eq(report_r, CT_SINK_REFUSED);
    cr_assert(strstr(report.why, "program's own stderr"), "%s", report.why);
    cr_assert_eq(err_r, CT_SINK_WRITTEN, "a log file that is stderr gets what stderr would: %s", log_on_err.why);
}

/* ---- marked files ------------------------------------------------------------ */

Test(files, marked_replace_is_whole_0644_marked_and_leaves_no_temp)
{
    umask(077); /* fchmod sets 0644 whatever the umask */
    const char *path = in_dir("health");
    cr_assert_eq(ct_marked_replace(path, MARK, "context lost\n", 13, true, NULL, 0), CT_OK);
    char text[64];
    read_file(path, text, sizeof text);
    cr_assert_str_eq(text, MARK "\ncontext lost\n");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0644);
    /* Replaced, not appended: it is cutaint's own. */
    cr_assert_eq(ct_marked_replace(path, MARK, "a 1\nb", 4, false, NULL, 0), CT_OK, "exactly len bytes");
    read_file(path, text, sizeof text);
    cr_assert_str_eq(text, MARK "\na 1\n");
    cr_assert_eq(entries_in_dir(), 1, "a temp file was left behind");
}

/* Something foreign at path is left as it was by replace and clear. */
static void expect_untouched(const char *path, const char *why)
{
    struct stat before, after;
    cr_assert_eq(lstat(path, &before), 0);
    char reason[CT_WHY_MAX] = "";
    cr_assert_eq(ct_marked_replace(path, MARK, "x\n", 2, true, reason, sizeof reason), CT_EEXIST, "%s", path);
    cr_assert(strstr(reason, why), "%s: \"%s\" does not say \"%s\"", path, reason, why);
    cr_assert_eq(ct_marked_clear(path, MARK, reason, sizeof reason), CT_EEXIST, "%s", path);
    cr_assert_eq(lstat(path, &after), 0, "%s was removed", path);
    cr_assert(after.st_ino == before.st_ino && after.st_mode == before.st_mode && after.st_size == before.st_size);
}

Test(files, marked_files_never_replace_or_remove_what_cutaint_did_not_write, .timeout = 10)
{
    const char *data = in_dir("data");
    write_text(data, "a user's data\n");
    expect_untouched(data, "cutaint did not write");
    /* The marker must be the whole first line, not a prefix of it. */
    const char *near = in_dir("near");
    write_text(near, MARK "ish\n");
    expect_untouched(near, "cutaint did not write");
    const char *empty = in_dir("empty");
    write_text(empty, "");
    expect_untouched(empty, "cutaint did not write");
    const char *fifo = in_dir("fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    expect_untouched(fifo, "fifo");
    const char *link = in_dir("link");
    cr_assert_eq(symlink(data, link), 0);
    expect_untouched(link, "symlink");
    const char *sub = in_dir("sub");
    cr_assert_eq(mkdir(sub, 0755), 0);
    expect_untouched(sub, "directory");
    expect_untouched("/dev/null", "device");
    char text[64];
    read_file(data, text, sizeof text);
    cr_assert_str_eq(text, "a user's data\n");
    cr_assert_eq(entries_in_dir(), 6, "a temp file was left behind");
}

Test(files, marked_clear_removes_only_its_own_whoever_owns_it)
{
    const char *path = in_dir("health");
    cr_assert_eq(ct_marked_clear(path, MARK, NULL, 0), 0);
    write_text(path, MARK "\nold reason\n");
    if (geteuid() == 0)
        cr_assert_eq(chown(path, 12345, 12345), 0, "another uid's file");
    cr_assert_eq(ct_marked_clear(path, MARK, NULL, 0), 1);
    cr_assert_neq(access(path, F_OK), 0);
    cr_assert_eq(ct_marked_clear(path, MARK, NULL, 0), 0);
}

Test(files, marked_replace_failures_leave_nothing)
{
    cr_assert_eq(ct_marked_replace(in_dir("no/such/dir/health"), MARK, "x", 1, true, NULL, 0), CT_EIO);
    cr_assert_eq(ct_marked_replace(NULL, MARK, "x", 1, true, NULL, 0), CT_EINVAL);
    cr_assert_eq(ct_marked_replace("", MARK, "x", 1, true, NULL, 0), CT_EINVAL);
    cr_assert_eq(ct_marked_replace(in_dir("h"), MARK, NULL, 1, true, NULL, 0), CT_EINVAL);
    cr_assert_eq(ct_marked_replace(in_dir("h"), NULL, "x", 1, true, NULL, 0), CT_EINVAL);
    char long_path[CT_PATH_MAX + 2];
    memset(long_path, 'a', sizeof long_path - 1);
    long_path[0] = '/';
    long_path[sizeof long_path - 1] = '\0';
    cr_assert_neq(ct_marked_replace(long_path, MARK, "x", 1, true, NULL, 0), CT_OK);
    cr_assert_eq(entries_in_dir(), 0);
}

/* A pid that is certainly gone: a child that has exited and been reaped. */
static pid_t gone_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    cr_assert_eq(waitpid(pid, NULL, 0), pid);
    return pid;
}

/* Whatever %p made the name it was for: a process with "job.%p.prom" never
 * writes the same path twice. */
Test(files, marked_sweep_removes_temporaries_of_writers_that_are_gone)
{
    const char *path = in_dir("job.prom");
    char dead[256], alive[256], foreign[256], other[256], health[256], test_marked[256];
    pid_t gone = gone_pid();
    snprintf(dead, sizeof dead, "%s.cutaint-tmp-%d-abc123", path, (int)gone);
    snprintf(alive, sizeof alive, "%s.cutaint-tmp-%d-abc123", path, (int)getppid());
    snprintf(foreign, sizeof foreign, "%s.cutaint-tmp-%d-xyz789", path, (int)gone);
    snprintf(other, sizeof other, "%s/job.%d.prom.cutaint-tmp-%d-abc123", dir, (int)gone, (int)gone);
    snprintf(health, sizeof health, "%s/health.cutaint-tmp-%d-abc123", dir, (int)gone);
    snprintf(test_marked, sizeof test_marked, "%s/x.cutaint-tmp-%d-abc123", dir, (int)gone);
    write_text(dead, CT_METRICS_MARKER "\nhalf");
    write_text(alive, CT_METRICS_MARKER "\nbeing written");
    write_text(foreign, "not ours\n");
    write_text(other, CT_METRICS_MARKER "\nanother pid's path");
    write_text(health, CT_HEALTH_MARKER "\na health file's");
    write_text(test_marked, MARK "\nsome other marker");
    cr_assert_eq(ct_marked_sweep(path), 3);
    cr_assert_neq(access(dead, F_OK), 0, "a dead writer's temporary was kept");
    cr_assert_neq(access(other, F_OK), 0, "another %%p path's temporary was kept");
    cr_assert_neq(access(health, F_OK), 0, "a health file's temporary was kept");
    cr_assert_eq(access(alive, F_OK), 0, "a live writer's temporary was removed");
    cr_assert_eq(access(foreign, F_OK), 0, "a file without the marker was removed");
    cr_assert_eq(access(test_marked, F_OK), 0, "a file without cutaint's markers was removed");
    cr_assert_eq(entries_in_dir(), 3, "the sweep left a name of its own");
}

/* ---- the race on a parent directory ------------------------------------------- */

/* A symlink L in the path's parent points at cutaint's directory A (its own
 * marked file, or none) when an operation on L/f begins; another thread
 * turns it to a user's directory B (a user's file f) at a random moment
 * within the time such an operation takes.  Whatever the check saw, the
 * change must land where it looked: the user's file in B is never removed
 * or replaced. */
#define RACE_TRIES 2000
#define IN_PLACE_TRIES 1000
#define USER_DATA "a user's data\n"

typedef struct race {
    char top[64];                              /* holds L, A and B */
    char link[256], swap[256], a[128], b[128]; /* L, L's replacement, A, B */
    char path[272], ours[256], users[256];     /* L/f, A/f, B/f */
    atomic_uint begun, turned;                 /* operations begun, L turned to B */
    atomic_llong began_ns, op_ns, rename_ns;   /* when the last one began, how long it and a rename took */
    atomic_bool stop;
    bool in_place;      /* the user's file is renamed over cutaint's own f in A, not L turned */
    atomic_ulong moved; /* then: that file's inode */
} race;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins until *v is not was; false when stopped first.  The swapper never
 * sleeps (the moment matters); the operation's thread, waiting for it,
 * yields now and then (two cores, shared). */
static bool spin_past(atomic_uint *v, unsigned was, atomic_bool *stop)
{
    for (unsigned spins = 1; atomic_load(v) == was; spins++) {
        if (stop && atomic_load(stop))
            return false;
        if (!stop && spins % 1024 == 0)
            sched_yield();
    }
    return true;
}

static void *swap_parent(void *arg)
{
    race *r = arg;
    unsigned seed = 41;
    for (unsigned tries = 0;; tries++) {
        unlink(r->swap);
        struct stat st = {0};
        if (r->in_place) {
            write_text(r->swap, USER_DATA);
            cr_assert_eq(stat(r->swap, &st), 0);
        } else {
            cr_assert_eq(symlink(r->b, r->swap), 0);
        }
        if (!spin_past(&r->begun, tries, &r->stop))
            return NULL;
        /* the rename lands between the operation's start and its end */
        long long took = atomic_load(&r->rename_ns), span = atomic_load(&r->op_ns) + took;
        long long until = atomic_load(&r->began_ns) - took + rand_r(&seed) % (span + 1);
        while (now_ns() < until)
            ;
        long long at = now_ns();
        rename(r->swap, r->link);
        atomic_store(&r->rename_ns, now_ns() - at);
        atomic_store(&r->moved, st.st_ino);
        atomic_store(&r->turned, tries + 1);
    }
}

/* In memory where there is a tmpfs (fsync and a rename over a file cost
 * nothing there: 2,000 tries take seconds, not minutes), else in dir. */
static void race_start(race *r, pthread_t *t, bool in_place)
{
    r->in_place = in_place;
    snprintf(r->top, sizeof r->top, "/dev/shm/cutaint-race-XXXXXX");
    if (!mkdtemp(r->top))
        snprintf(r->top, sizeof r->top, "%s", dir);
    snprintf(r->a, sizeof r->a, "%s/A", r->top);
    snprintf(r->b, sizeof r->b, "%s/B", r->top);
    snprintf(r->link, sizeof r->link, "%s/L", r->top);
    snprintf(r->swap, sizeof r->swap, "%s/L.next", r->top);
    snprintf(r->path, sizeof r->path, "%s/f", r->link);
    snprintf(r->ours, sizeof r->ours, "%s/f", r->a);
    snprintf(r->users, sizeof r->users, "%s/f", r->b);
    if (in_place) {
        snprintf(r->path, sizeof r->path, "%s", r->ours);
        snprintf(r->link, sizeof r->link, "%s", r->ours);
        snprintf(r->swap, sizeof r->swap, "%s/f.users", r->a);
    }
    cr_assert_eq(mkdir(r->a, 0755), 0);
    cr_assert_eq(mkdir(r->b, 0755), 0);
    write_text(r->users, USER_DATA);
    atomic_init(&r->begun, 0);
    atomic_init(&r->turned, 0);
    atomic_init(&r->began_ns, 0);
    atomic_init(&r->op_ns, 10000);
    atomic_init(&r->rename_ns, 0);
    atomic_init(&r->stop, false);
    atomic_init(&r->moved, 0);
    cr_assert_eq(pthread_create(t, NULL, swap_parent, r), 0);
}

/* In place: is the user's file, renamed over f, still there? */
static bool moved_file_lost(race *r)
{
    struct stat st;
    char text[64] = "";
    int fd = open(r->ours, O_RDONLY | O_NOFOLLOW);
    bool kept = fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == atomic_load(&r->moved) &&
                read(fd, text, sizeof text - 1) >= 0 && strcmp(text, USER_DATA) == 0;
    if (fd >= 0)
        close(fd);
    return !kept;
}

/* Was the user's file removed or replaced?  It is put back for the next try. */
static bool users_file_lost(const race *r, ino_t *ino)
{
    struct stat st;
    char text[64] = "";
    int fd = open(r->users, O_RDONLY | O_NOFOLLOW);
    bool kept = fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == *ino && read(fd, text, sizeof text - 1) >= 0 &&
                strcmp(text, USER_DATA) == 0;
    if (fd >= 0)
        close(fd);
    if (!kept) {
        unlink(r->users);
        write_text(r->users, USER_DATA);
        cr_assert_eq(stat(r->users, &st), 0);
        *ino = st.st_ino;
    }
    return !kept;
}

typedef enum { RACE_CLEAR, RACE_HEALTH, RACE_METRICS } race_op;

/* Tries of op on f while L turns (or f is replaced); how many lost the user's
 * file.  done: how many did their work (in A, or in B after it turned). */
static int race_losses(race_op op, bool in_place, int *done, unsigned *tries_out)
{
    race r;
    pthread_t t;
    race_start(&r, &t, in_place);
    struct stat st;
    cr_assert_eq(stat(r.users, &st), 0);
    ino_t ino = st.st_ino;
    const char *marker = op == RACE_METRICS ? CT_METRICS_MARKER : CT_HEALTH_MARKER;
    int losses = 0;
    *done = 0;
    unsigned tries = in_place ? IN_PLACE_TRIES : RACE_TRIES;
    for (unsigned i = 0; i < tries; i++) {
        /* cutaint's own file in A: at start a health file; at a loss one
         * an earlier process left, or none; for metrics the last written */
        unlink(r.ours); /* a file of its own, never the user's rewritten */
        if (op == RACE_CLEAR || i % 2 == 0)
            write_text(r.ours, op == RACE_METRICS ? CT_METRICS_MARKER "\nold\n" : CT_HEALTH_MARKER "\nold\n");
        if (!in_place) {
            unlink(r.link);
            cr_assert_eq(symlink(r.a, r.link), 0);
        }
        long long began = now_ns();
        atomic_store(&r.began_ns, began);
        atomic_store(&r.begun, i + 1);
        int rc = op == RACE_CLEAR ? ct_marked_clear(r.path, marker, NULL, 0)
                                  : ct_marked_replace(r.path, marker, "new\n", 4, op == RACE_HEALTH, NULL, 0);
        atomic_store(&r.op_ns, now_ns() - began);
        spin_past(&r.turned, i, NULL);
        *done += op == RACE_CLEAR ? rc == 1 : rc == CT_OK;
        losses += in_place ? moved_file_lost(&r) : users_file_lost(&r, &ino);
    }
    *tries_out = tries;
    atomic_store(&r.stop, true);
    pthread_join(t, NULL);
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", r.top);
    cr_assert_eq(system(command), 0);
    return losses;
}

static void expect_no_losses(race_op op, bool in_place, const char *what)
{
    int done;
    unsigned tries;
    int losses = race_losses(op, in_place, &done, &tries);
    cr_log_info("%s: %d of %u tries lost the user's file (%d did their work)", what, losses, tries, done);
    cr_expect_gt(done, 0, "%s: no try did its work: the race was not run", what);
    cr_expect_eq(losses, 0, "%s: %d of %u tries removed or replaced a user's file", what, losses, tries);
}

Test(files, a_swapped_parent_never_turns_the_removal_at_start_on_a_users_file, .timeout = 120)
{
    expect_no_losses(RACE_CLEAR, false, "removal at start");
}

Test(files, a_swapped_parent_never_turns_the_health_file_onto_a_users_file, .timeout = 120)
{
    expect_no_losses(RACE_HEALTH, false, "health file");
}

Test(files, a_swapped_parent_never_turns_the_metrics_file_onto_a_users_file, .timeout = 120)
{
    expect_no_losses(RACE_METRICS, false, "metrics file");
}

/* The same race in the directory itself: a user's file renamed over
 * cutaint's own between its check and its change.  What is about to be
 * removed or replaced is looked at again where it can no longer change. */
Test(files, a_users_file_put_in_place_of_cutaints_is_never_removed, .timeout = 120)
{
    expect_no_losses(RACE_CLEAR, true, "removal at start, in place");
}

Test(files, a_users_file_put_in_place_of_cutaints_is_never_replaced, .timeout = 120)
{
    expect_no_losses(RACE_METRICS, true, "metrics file, in place");
}

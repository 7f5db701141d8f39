/*
 * test_files.c - paths, the append-only report, the atomic health file
 * (core/files.h).  Each test works in its own fresh directory.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static const char *in_dir(const char *name)
{
    static char path[2][256];
    static int next;
    char *p = path[next++ % 2];
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

/* ---- ct_path_expand ----------------------------------------------------- */

Test(files, path_expand)
{
    static const struct {
        const char *tmpl, *out;
    } cases[] = {
        { "/tmp/r.%p.jsonl", "/tmp/r.4242.jsonl" },
        { "%p%p", "42424242" },
        { "100%%", "100%" },
        { "%%p", "%p" },
        { "%x and %", "%x and %" },
        { "", "" },
        { "plain", "plain" },
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

/* ---- the report ------------------------------------------------------------ */

Test(files, append_creates_0644_and_appends_whole_lines)
{
    umask(022);
    const char *path = in_dir("report.jsonl");
    int fd = ct_append_open(path);
    cr_assert_geq(fd, 0);
    cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    cr_assert_eq(ct_append_line(fd, "{\"a\":1}\n", 8), CT_OK);
    cr_assert_eq(ct_append_line(fd, "", 0), CT_OK);
    close(fd);
    /* A second opener (a later process) appends after the first. */
    fd = ct_append_open(path);
    cr_assert_eq(ct_append_line(fd, "{\"b\":2}\n", 8), CT_OK);
    close(fd);
    char text[64];
    read_file(path, text, sizeof text);
    cr_assert_str_eq(text, "{\"a\":1}\n{\"b\":2}\n");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0644);
}

Test(files, append_refuses_a_symlink_and_bad_arguments)
{
    const char *target = in_dir("victim");
    const char *link = in_dir("report.jsonl");
    cr_assert_eq(symlink(target, link), 0);
    cr_assert_lt(ct_append_open(link), 0);
    cr_assert_neq(access(target, F_OK), 0, "the symlink's target was created");
    cr_assert_eq(ct_append_open(NULL), CT_EINVAL);
    cr_assert_eq(ct_append_open(""), CT_EINVAL);
    cr_assert_eq(ct_append_open(in_dir("no/such/dir")), CT_EIO);
    cr_assert_eq(ct_append_line(-1, "x", 1), CT_EIO);
    int fd = open(in_dir("ro"), O_RDONLY | O_CREAT, 0644);
    cr_assert_eq(ct_append_line(fd, "x", 1), CT_EIO);
    close(fd);
}

#define WRITERS 8
#define LINES 500

typedef struct writer {
    int fd, id;
} writer;

static void *write_lines(void *arg)
{
    writer *w = arg;
    char line[128];
    for (int i = 0; i < LINES; i++) {
        int n = snprintf(line, sizeof line, "{\"writer\":%d,\"line\":%d,\"pad\":\"%060d\"}\n",
                         w->id, i, 0);
        cr_assert_eq(ct_append_line(w->fd, line, (size_t)n), CT_OK);
    }
    return NULL;
}

Test(files, concurrent_writers_never_interleave_lines)
{
    const char *path = in_dir("report.jsonl");
    pthread_t tid[WRITERS];
    writer w[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        w[i] = (writer){ ct_append_open(path), i }; /* separate opens, as separate processes */
        pthread_create(&tid[i], NULL, write_lines, &w[i]);
    }
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(tid[i], NULL);
        close(w[i].fd);
    }
    FILE *f = fopen(path, "r");
    char line[256];
    int count = 0, next[WRITERS] = { 0 };
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

/* ---- the health file ---------------------------------------------------------- */

Test(files, health_write_is_whole_0644_and_leaves_no_temp)
{
    umask(077); /* fchmod sets 0644 whatever the umask */
    const char *path = in_dir("health");
    cr_assert_eq(ct_health_write(path, "context lost"), CT_OK);
    char text[64];
    read_file(path, text, sizeof text);
    cr_assert_str_eq(text, "context lost\n");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0644);
    /* Replaced, not appended. */
    cr_assert_eq(ct_health_write(path, "second"), CT_OK);
    read_file(path, text, sizeof text);
    cr_assert_str_eq(text, "second\n");
    cr_assert_eq(entries_in_dir(), 1, "a temp file was left behind");
}

/* A symlink named `name` to a file "victim" that holds "precious": where a
 * writer is pointed by someone who wants it to write elsewhere.  Its path. */
static const char *symlink_to_victim(const char *name)
{
    const char *target = in_dir("victim");
    FILE *f = fopen(target, "w");
    cr_assert_not_null(f);
    fputs("precious", f);
    fclose(f);
    const char *path = in_dir(name);
    cr_assert_eq(symlink(target, path), 0);
    return path;
}

/* The writer replaced the link with a regular file, the victim untouched. */
static void expect_link_replaced(const char *path)
{
    char text[64];
    read_file(in_dir("victim"), text, sizeof text);
    cr_assert_str_eq(text, "precious");
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0);
    cr_assert(S_ISREG(st.st_mode));
}

Test(files, health_write_replaces_a_symlink_instead_of_following_it)
{
    const char *path = symlink_to_victim("health");
    cr_assert_eq(ct_health_write(path, "lost"), CT_OK);
    expect_link_replaced(path);
}

Test(files, health_write_failures_leave_nothing)
{
    cr_assert_eq(ct_health_write(in_dir("no/such/dir/health"), "x"), CT_EIO);
    /* rename onto a non-empty directory fails after the temp was written. */
    const char *sub = in_dir("sub");
    cr_assert_eq(mkdir(sub, 0755), 0);
    char inner[300];
    snprintf(inner, sizeof inner, "%s/f", sub);
    fclose(fopen(inner, "w"));
    cr_assert_eq(ct_health_write(sub, "x"), CT_EIO);
    cr_assert_eq(entries_in_dir(), 1, "the temp file was not removed");
    cr_assert_eq(ct_health_write(NULL, "x"), CT_EINVAL);
    cr_assert_eq(ct_health_write("", "x"), CT_EINVAL);
    cr_assert_eq(ct_health_write(in_dir("h"), NULL), CT_EINVAL);
    char long_path[CT_PATH_MAX + 2];
    memset(long_path, 'a', sizeof long_path - 1);
    long_path[sizeof long_path - 1] = '\0';
    cr_assert_eq(ct_health_write(long_path, "x"), CT_EINVAL);
}

Test(files, health_clear)
{
    const char *path = in_dir("health");
    cr_assert_eq(ct_health_clear(path), 0);
    cr_assert_eq(ct_health_write(path, "old"), CT_OK);
    cr_assert_eq(ct_health_clear(path), 1);
    cr_assert_neq(access(path, F_OK), 0);
    cr_assert_eq(ct_health_clear(path), 0);
    /* A symlink is removed itself; its target stays. */
    const char *target = in_dir("victim");
    fclose(fopen(target, "w"));
    cr_assert_eq(symlink(target, path), 0);
    cr_assert_eq(ct_health_clear(path), 1);
    cr_assert_eq(access(target, F_OK), 0);
    /* A directory cannot be unlinked: an error, not "removed". */
    const char *sub = in_dir("sub");
    cr_assert_eq(mkdir(sub, 0755), 0);
    cr_assert_lt(ct_health_clear(sub), 0);
    cr_assert_eq(ct_health_clear(NULL), CT_EINVAL);
}

/* ---- ct_file_replace (the metrics file) ------------------------------------ */
Test(files, file_replace_is_exact_0644_atomic_and_refuses_nothing_it_should_not)
{
    umask(077);
    const char *path = in_dir("job.prom");
    cr_assert_eq(ct_file_replace(path, "a 1\nb", 4), CT_OK, "exactly len bytes, no newline added");
    char text[64];
    cr_assert_eq(read_file(path, text, sizeof text), 4);
    cr_assert_str_eq(text, "a 1\n");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0644);
    cr_assert_eq(ct_file_replace(path, "c 2\n", 4), CT_OK);
    read_file(path, text, sizeof text);
    cr_assert_str_eq(text, "c 2\n");
    cr_assert_eq(entries_in_dir(), 1, "a temp file was left behind");
    cr_assert_eq(ct_file_replace(in_dir("no/such/dir/job.prom"), "x", 1), CT_EIO);
    cr_assert_eq(ct_file_replace("", "x", 1), CT_EINVAL);
    cr_assert_eq(ct_file_replace(path, NULL, 0), CT_EINVAL);
    cr_assert_eq(entries_in_dir(), 1);
    /* Only a file or a symlink is replaced: never a device, fifo or directory. */
    const char *fifo = in_dir("fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(ct_file_replace(fifo, "x", 1), CT_EIO);
    cr_assert_eq(ct_health_write(fifo, "x"), CT_EIO);
    cr_assert_eq(lstat(fifo, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode));
    cr_assert_eq(entries_in_dir(), 2);
}

Test(files, file_replace_replaces_a_symlink_instead_of_following_it)
{
    const char *path = symlink_to_victim("job.prom");
    cr_assert_eq(ct_file_replace(path, "x 1\n", 4), CT_OK);
    expect_link_replaced(path);
}

/*
 * files.c - opening and writing the log, the report, stderr, the health file
 * and the metrics file (files.h says what is promised).
 *
 * Owns: every open(2), write(2), rename(2) and unlink(2) cutaint makes.
 *
 * Invariants:
 * - Paths come from the user's configuration only, resolved once at start.
 * - A sink's fd, dev and ino change only under its lock; a write checks the
 *   descriptor's identity under the same lock, so it never writes into a
 *   file it did not open (short of the program swapping the descriptor
 *   between that fstat and the write, on another thread).
 * - Every look at a path and every change to it is made relative to its
 *   directory, opened once (open_dir): a symlink swapped above it between
 *   two steps cannot send the second to another directory.
 * - A marked file's path is replaced or unlinked only after it was seen to
 *   be absent or cutaint's own (CT_MARKED_OURS), and what is about to go
 *   is looked at again where a swap of the path no longer reaches it (moved
 *   aside, or exchanged out, under a temp name of this process): anything
 *   but the file that was seen goes back.  The temporary is removed on
 *   every failure, and the target is then left as it was.
 * - Nothing on a pseudo file system (procfs, sysfs, ...) is written.
 * - No heap allocation.
 */
#include "files.h"

#include "ct_status.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define OPEN_FLAGS (O_CLOEXEC | O_NOFOLLOW | O_NOCTTY)
/* cutaint's descriptors sit this far below min(RLIMIT_NOFILE, 1024): out of
 * the way of a program's own low numbers, and still below FD_SETSIZE. */
#define HIGH_FD_ROOM 64
#define TMP_TAG ".cutaint-tmp-"
/* A temp name keeps this much of its target's name, so that the whole
 * "NAME.cutaint-tmp-PID-XXXXXX" fits a directory entry (NAME_MAX, 255). */
#define TEMP_BASE_MAX 200
#define TEMP_NAME_MAX (TEMP_BASE_MAX + sizeof TMP_TAG + 20 + 1 + 6)

/* ---- paths ------------------------------------------------------------------ */

static bool put(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    if (n >= cap - *len)
        return false; /* keep room for the NUL */
    memcpy(out + *len, s, n);
    *len += n;
    return true;
}

int ct_path_expand(const char *tmpl, pid_t pid, char *out, size_t cap)
{
    if (!tmpl || !out || cap == 0)
        return CT_EINVAL;
    char digits[24];
    int ndigits = snprintf(digits, sizeof digits, "%ld", (long)pid);
    size_t len = 0;
    bool ok = true;
    for (const char *p = tmpl; *p && ok; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            ok = put(out, cap, &len, digits, (size_t)ndigits);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            ok = put(out, cap, &len, "%", 1);
            p++;
        } else {
            ok = put(out, cap, &len, p, 1);
        }
    }
    assert(len < cap && "put() keeps room for the NUL");
    out[ok ? len : 0] = '\0';
    return ok ? CT_OK : CT_EINVAL;
}

int ct_path_absolute(const char *path, const char *cwd, char *out, size_t cap)
{
    if (!path || !out || cap == 0)
        return CT_EINVAL;
    size_t len = 0;
    bool ok = true;
    if (path[0] != '/') {
        if (!cwd || cwd[0] != '/')
            return CT_EINVAL;
        size_t n = strlen(cwd);
        ok = put(out, cap, &len, cwd, n) && (n > 0 && cwd[n - 1] == '/' ? true : put(out, cap, &len, "/", 1));
    }
    ok = ok && put(out, cap, &len, path, strlen(path));
    assert(len < cap && "put() keeps room for the NUL");
    out[ok ? len : 0] = '\0';
    return ok ? CT_OK : CT_EINVAL;
}

/* ---- descriptors -------------------------------------------------------------- */

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return CT_EIO;
        data += n;
        len -= (size_t)n;
    }
    return CT_OK;
}

/* fd moved up out of the program's way (kept where it is if that fails). */
static int move_high(int fd)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return fd;
    rlim_t top = lim.rlim_cur < 1024 ? lim.rlim_cur : 1024;
    if (top <= 2 * HIGH_FD_ROOM)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - HIGH_FD_ROOM));
    if (high < 0)
        return fd;
    close(fd);
    return high;
}

static const char *kind_of(mode_t mode)
{
    if (S_ISDIR(mode))
        return "is a directory";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "is a device";
    if (S_ISSOCK(mode))
        return "is a socket";
    if (S_ISLNK(mode))
        return "is a symlink (never followed)";
    if (S_ISFIFO(mode))
        return "is a fifo";
    return "is not a regular file";
}

static void say(char *why, size_t cap, const char *text)
{
    if (why && cap)
        snprintf(why, cap, "%s", text);
}

/* "cannot be opened: No such file or directory": a reason reads after
 * "it", as kind_of's do. */
static void say_errno(char *why, size_t cap, const char *failed, int err)
{
    if (why && cap)
        snprintf(why, cap, "%s: %s", failed, strerror(err));
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* File systems whose "files" are the kernel's knobs and views: writing one
 * changes the system (/proc/self/comm renames the program), never a file.
 * f_type values from <linux/magic.h>. */
static const struct {
    uint32_t magic;
    const char *name;
} pseudo_fs[] = {
    {0x9fa0, "procfs"},      {0x62656572, "sysfs"},    {0x27e0eb, "cgroup"},       {0x63677270, "cgroup2"},
    {0x64626720, "debugfs"}, {0x74726163, "tracefs"},  {0x73636673, "securityfs"}, {0x62656570, "configfs"},
    {0xcafe4a11, "bpf"},     {0xde5e81e4, "efivarfs"},
};

/* Is fd on a pseudo file system?  why says which. */
static bool on_pseudo_fs(int fd, char *why, size_t whycap)
{
    struct statfs sfs;
    if (fstatfs(fd, &sfs) != 0)
        return false;
    for (size_t i = 0; i < sizeof pseudo_fs / sizeof pseudo_fs[0]; i++)
        if ((uint32_t)sfs.f_type == pseudo_fs[i].magic) {
            if (why && whycap)
                snprintf(why, whycap, "is on %s, a pseudo file system, where writing changes the kernel, not a file",
                         pseudo_fs[i].name);
            return true;
        }
    return false;
}

/* The directory of path into dir (cap bytes). */
static int dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (n + 2 > cap)
        return CT_EINVAL;
    if (!slash) {
        memcpy(dir, ".", 2);
    } else if (n == 0) {
        memcpy(dir, "/", 2);
    } else {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    return CT_OK;
}

/* The directory path names a file in, opened once: every look and every
 * change after is made relative to it, so a symlink swapped above it in
 * the meantime cannot send one of them to another directory.  base: the
 * name in it.  -1 with why filled and errno set when it cannot be opened. */
static int open_dir(const char *path, const char **base, char *why, size_t whycap)
{
    char dir[CT_PATH_MAX];
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!**base || strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0) {
        say(why, whycap, "is a directory");
        errno = EISDIR;
        return -1;
    }
    if (dir_of(path, dir, sizeof dir) != CT_OK) {
        say(why, whycap, "is too long");
        errno = ENAMETOOLONG;
        return -1;
    }
    int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int saved = errno;
    if (dfd < 0)
        say_errno(why, whycap, "cannot be opened", saved);
    errno = saved; /* callers tell "no such directory" from the rest */
    return dfd;
}

/* ---- sinks ---------------------------------------------------------------------- */

void ct_sink_init(ct_sink *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    pthread_mutex_init(&s->lock, NULL);
    size_t n = path ? strlen(path) : 0;
    if (n == 0 || n >= sizeof s->path || path[0] != '/') {
        s->stopped = true;
        say(s->why, sizeof s->why, n ? "is not an absolute path that fits" : "is not set");
        return;
    }
    memcpy(s->path, path, n + 1);
}

void ct_sink_apart(ct_sink *s, const ct_sink *other, const char *other_name, bool yields, bool off_stderr)
{
    s->apart = other;
    s->apart_name = other_name;
    s->apart_yields = yields;
    s->apart_stderr = off_stderr;
}

/* May the sink append to st, which it opened (created: made by that open)?
 * A regular file cutaint did not create must have one link and belong to
 * this process's user: a hard link placed at the path must not make a
 * root service append into another user's file.  A fifo is a stream to
 * its reader, whoever made it. */
static bool may_append(const struct stat *st, bool created, char *why, size_t whycap)
{
    if (S_ISFIFO(st->st_mode) || (S_ISREG(st->st_mode) && created))
        return true;
    if (!S_ISREG(st->st_mode))
        say(why, whycap, "changed while it was opened");
    else if (st->st_nlink != 1 && why && whycap)
        snprintf(why, whycap, "has %lu hard links; cutaint appends only to a file with one",
                 (unsigned long)st->st_nlink);
    else if (st->st_uid != geteuid() && why && whycap)
        snprintf(why, whycap, "belongs to uid %lu, not to this process's user (uid %lu)", (unsigned long)st->st_uid,
                 (unsigned long)geteuid());
    return S_ISREG(st->st_mode) && st->st_nlink == 1 && st->st_uid == geteuid();
}

/* Is st a file the sink must stay off: the program's own stdout (or
 * stderr), or the file of the sink it is kept apart from?  That one's path
 * is looked at, as its descriptor is its own (under its own lock). */
static bool collides(const ct_sink *s, const struct stat *st, char *why, size_t whycap)
{
    struct stat other;
    static const char *const streams[] = {"stdout", "stderr"};
    for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
        if ((fd == STDOUT_FILENO || s->apart_stderr) && fstat(fd, &other) == 0 && same_file(st, &other)) {
            if (why && whycap)
                snprintf(why, whycap, "is the program's own %s", streams[fd - STDOUT_FILENO]);
            return true;
        }
    const ct_sink *o = s->apart;
    if (o && o->path[0] && (s->apart_yields || atomic_load(&o->holding)) && stat(o->path, &other) == 0 &&
        same_file(st, &other)) {
        if (why && whycap)
            snprintf(why, whycap, "is the same file as %s", s->apart_name);
        return true;
    }
    return false;
}

/* Opens name in dfd for appending; created: this open made it. */
static int open_append(int dfd, const char *name, bool *created)
{
    /* O_NONBLOCK: opening a fifo with no reader fails at once (ENXIO)
     * instead of waiting for one, and a full pipe refuses a line. */
    int flags = O_WRONLY | O_APPEND | O_NONBLOCK | OPEN_FLAGS;
    for (int attempt = 0; attempt < 4; attempt++) {
        int fd = openat(dfd, name, flags | O_CREAT | O_EXCL, 0644);
        *created = fd >= 0;
        if (fd >= 0 || errno != EEXIST)
            return fd;
        fd = openat(dfd, name, flags);
        if (fd >= 0 || errno != ENOENT)
            return fd;
    }
    return -1; /* it kept coming and going */
}

/* Opens s->path into s->fd; with the lock held.  Everything after the
 * directory is opened is relative to it. */
static int open_path(ct_sink *s, char *why, size_t whycap)
{
    const char *base;
    int dfd = open_dir(s->path, &base, why, whycap);
    if (dfd < 0)
        return CT_EIO;
    struct stat st;
    bool created = false;
    int fd = -1;
    if (on_pseudo_fs(dfd, why, whycap)) {
        /* refused before anything there is opened */
    } else if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        say(why, whycap, kind_of(st.st_mode));
    } else if ((fd = open_append(dfd, base, &created)) < 0) {
        if (errno == ENXIO)
            say(why, whycap, "is a fifo with no reader");
        else
            say_errno(why, whycap, "cannot be opened", errno);
    } else if (fstat(fd, &st) != 0 || !may_append(&st, created, why, whycap) || on_pseudo_fs(fd, why, whycap) ||
               collides(s, &st, why, whycap)) {
        close(fd); /* one it created stays, empty: only marked files are ever removed */
        fd = -1;
    }
    close(dfd);
    if (fd < 0)
        return CT_EIO;
    assert(s->fd < 0 && "a sink opens only when it holds no descriptor");
    s->fd = move_high(fd);
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    atomic_store(&s->holding, true);
    return CT_OK;
}

int ct_sink_stderr(ct_sink *s)
{
    struct stat st;
    ct_sink_init(s, NULL);
    s->opened = true;
    if (fstat(STDERR_FILENO, &st) != 0)
        return CT_EIO; /* stopped: fd 2 was closed before cutaint loaded */
    s->stopped = false;
    s->fd = STDERR_FILENO;
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    return CT_OK;
}

bool ct_sink_live(const ct_sink *s)
{
    return !s->stopped;
}

/* Is s->fd still the file it opened?  If not, reopen once; false when the
 * sink has stopped.  With the lock held. */
static bool still_ours(ct_sink *s)
{
    struct stat st;
    if (s->fd >= 0 && fstat(s->fd, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
        return true;
    /* stderr is the program's: written again if it ever is what it was. */
    if (!s->path[0])
        return false;
    /* The program closed or reused the descriptor: it is no longer ours to
     * close or write. */
    s->fd = -1;
    if (s->reopened) {
        s->stopped = true;
        return false;
    }
    s->reopened = true;
    atomic_fetch_add(&s->reopens, 1);
    if (open_path(s, NULL, 0) != CT_OK) {
        s->stopped = true;
        return false;
    }
    return true;
}

/* One writev(2): the '\n' that ends a line an earlier write cut (when
 * end_cut), then the line. */
static ssize_t write_once(int fd, const char *line, size_t len, bool end_cut)
{
    struct iovec iov[2] = {{(void *)"\n", 1}, {(void *)line, len}};
    ssize_t n;
    do
        n = writev(fd, iov + (end_cut ? 0 : 1), end_cut ? 2 : 1);
    while (n < 0 && errno == EINTR);
    return n;
}

static bool is_pipe(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* Ends the fragment a cut write left, at once if it can be, else before
 * the sink's next line: 0, or the errno that kept it from being ended. */
static int end_fragment(ct_sink *s)
{
    ssize_t n = write_once(s->fd, "", 0, true);
    s->cut = n != 1;
    return n == 1 ? 0 : n < 0 ? errno : EIO;
}

/* Why a write failed: errno's words, or how far the cut line got and why. */
static void say_write_failure(char *why, size_t cap, ssize_t n, size_t written, size_t len, int err)
{
    if (n < 0)
        say(why, cap, strerror(err));
    else
        snprintf(why, cap, "a line was cut after %zu of %zu bytes%s%s", written, len, err ? ": " : "",
                 err ? strerror(err) : "");
}

/* One line into the sink's open descriptor, after the '\n' that ends a
 * line an earlier write cut: a whole line is never glued onto a fragment,
 * and nothing is truncated (other processes may append to the file). */
static ct_sink_result write_line(ct_sink *s, const char *line, size_t len)
{
    assert(s->fd >= 0 && "a sink that is still ours has its descriptor");
    size_t ending = s->cut ? 1 : 0;
    ssize_t n = write_once(s->fd, line, len, s->cut);
    if (n == (ssize_t)(ending + len)) {
        s->cut = false;
        return CT_SINK_WRITTEN;
    }
    int err = n < 0 ? errno : 0;
    if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK))
        return CT_SINK_DROPPED; /* a full pipe took nothing: never waited for */
    size_t written = 0;
    if (n >= (ssize_t)ending) {
        s->cut = false; /* the ending went first */
        written = (size_t)n - ending;
    }
    if (written)
        err = end_fragment(s);
    if (n >= 0 && is_pipe(s->fd))
        return CT_SINK_DROPPED; /* a full pipe cut a long line */
    if (atomic_fetch_add(&s->write_errors, 1) != 0)
        return CT_SINK_FAILED;
    say_write_failure(s->why, sizeof s->why, n, written, len, err);
    return CT_SINK_FIRST_FAILURE;
}

ct_sink_result ct_sink_write(ct_sink *s, const char *line, size_t len, bool may_wait)
{
    if (may_wait ? pthread_mutex_lock(&s->lock) != 0 : pthread_mutex_trylock(&s->lock) != 0) {
        atomic_fetch_add(&s->dropped, 1);
        return CT_SINK_DROPPED;
    }
    ct_sink_result result = CT_SINK_DROPPED;
    if (!s->opened && !s->stopped) {
        s->opened = true;
        if (open_path(s, s->why, sizeof s->why) != CT_OK) {
            s->stopped = true;
            result = CT_SINK_REFUSED;
        }
    }
    if (result != CT_SINK_REFUSED && !s->stopped && still_ours(s))
        result = write_line(s, line, len);
    if (result == CT_SINK_DROPPED)
        atomic_fetch_add(&s->dropped, 1);
    pthread_mutex_unlock(&s->lock);
    return result;
}

void ct_sink_atfork_child(ct_sink *s)
{
    pthread_mutex_init(&s->lock, NULL);
}

void ct_sink_close(ct_sink *s)
{
    pthread_mutex_lock(&s->lock);
    struct stat st;
    if (s->fd > STDERR_FILENO && fstat(s->fd, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
        close(s->fd);
    s->fd = -1;
    s->stopped = true;
    atomic_store(&s->holding, false);
    pthread_mutex_unlock(&s->lock);
}

/* ---- marked files ------------------------------------------------------------------ */

/* Does the regular file open as fd begin with marker + "\n"? */
static bool starts_with_marker(int fd, const char *marker)
{
    char head[128];
    size_t want = strlen(marker) + 1;
    assert(want <= sizeof head);
    ssize_t n = pread(fd, head, want, 0);
    return n == (ssize_t)want && memcmp(head, marker, want - 1) == 0 && head[want - 1] == '\n';
}

/* What is at name in the directory dfd, looked at without following a
 * symlink or opening anything but a regular file; seen: what it was. */
static ct_marked_state state_at(int dfd, const char *name, const char *marker, struct stat *seen, char *why,
                                size_t whycap)
{
    if (fstatat(dfd, name, seen, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return CT_MARKED_ABSENT;
        say_errno(why, whycap, "cannot be looked at", errno);
        return CT_MARKED_UNKNOWN;
    }
    if (!S_ISREG(seen->st_mode)) {
        say(why, whycap, kind_of(seen->st_mode));
        return CT_MARKED_FOREIGN;
    }
    int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | OPEN_FLAGS);
    if (fd < 0) {
        say_errno(why, whycap, "cannot be opened", errno);
        return CT_MARKED_UNKNOWN;
    }
    struct stat st;
    bool same = fstat(fd, &st) == 0 && same_file(&st, seen);
    bool ours = same && starts_with_marker(fd, marker);
    close(fd);
    if (!same) {
        say(why, whycap, "changed while it was looked at");
        return CT_MARKED_UNKNOWN;
    }
    if (!ours && why && whycap)
        snprintf(why, whycap, "is a file cutaint did not write (its first line is not \"%s\")", marker);
    return ours ? CT_MARKED_OURS : CT_MARKED_FOREIGN;
}

/* The six X of a temp name, from a counter and the clock: a candidate only
 * (an exclusive create, a link or a rename that must not replace refuses a
 * name that exists, and the caller tries another). */
static void fill_suffix(char *tmp)
{
    static atomic_uint next;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long v = (unsigned long)ts.tv_nsec * 2654435761u + atomic_fetch_add(&next, 1);
    size_t n = strlen(tmp);
    assert(n >= 6 && strcmp(tmp + n - 6, "XXXXXX") == 0 && "temp_name() ends the name in six X");
    for (size_t i = n - 6; i < n; i++, v /= 36)
        tmp[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[v % 36];
}

/* A fresh candidate "NAME.cutaint-tmp-PID-XXXXXX" for name, in tmp (NAME
 * cut short so that the whole fits a directory entry). */
static void temp_name(const char *name, char *tmp, size_t cap)
{
    assert(cap > TEMP_NAME_MAX && "every temp name fits");
    snprintf(tmp, cap, "%.*s" TMP_TAG "%ld-XXXXXX", TEMP_BASE_MAX, name, (long)getpid());
    fill_suffix(tmp);
}

/* Renames from to to in dfd, never replacing what is at to.  A file system
 * without RENAME_NOREPLACE renames plainly when to is a fresh name of this
 * process's (to_private), and otherwise links and unlinks, from being
 * this process's own. */
static int rename_noreplace(int dfd, const char *from, const char *to, bool to_private)
{
    if (renameat2(dfd, from, dfd, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    if (to_private)
        return renameat(dfd, from, dfd, to);
    if (linkat(dfd, from, dfd, to, 0) != 0)
        return -1;
    unlinkat(dfd, from, 0);
    return 0;
}

/* Removes name from dfd, seen cutaint's file (seen) a moment ago.  It is
 * first moved to a fresh name of this process's, where a swap of name can
 * no longer change it, and looked at again there: unless it is that same
 * file, still marked, it goes back.  1 removed, 0 gone meanwhile,
 * CT_EEXIST (why), CT_EIO. */
static int remove_at(int dfd, const char *name, const char *marker, const struct stat *seen, char *why, size_t whycap)
{
    char aside[TEMP_NAME_MAX + 1];
    int moved = -1;
    for (int attempt = 0; moved != 0 && attempt < 8; attempt++) {
        temp_name(name, aside, sizeof aside);
        moved = rename_noreplace(dfd, name, aside, true);
        if (moved != 0 && errno != EEXIST) {
            if (errno == ENOENT)
                return 0;
            say_errno(why, whycap, "cannot be removed", errno);
            return CT_EIO;
        }
    }
    if (moved != 0) {
        say(why, whycap, "no name was free to set it aside");
        return CT_EIO;
    }
    struct stat now;
    if (state_at(dfd, aside, marker, &now, why, whycap) == CT_MARKED_OURS && same_file(&now, seen) &&
        unlinkat(dfd, aside, 0) == 0)
        return 1;
    if (rename_noreplace(dfd, aside, name, false) == 0)
        say(why, whycap, "changed while it was being removed");
    else if (why && whycap)
        snprintf(why, whycap, "changed while it was being removed, and is left as %s", aside);
    return CT_EEXIST;
}

ct_marked_state ct_marked_state_of(const char *path, const char *marker, char *why, size_t whycap)
{
    const char *base;
    int dfd = open_dir(path, &base, why, whycap);
    if (dfd < 0)
        return errno == ENOENT ? CT_MARKED_ABSENT : CT_MARKED_UNKNOWN;
    struct stat seen;
    ct_marked_state state =
        on_pseudo_fs(dfd, why, whycap) ? CT_MARKED_FOREIGN : state_at(dfd, base, marker, &seen, why, whycap);
    close(dfd);
    return state;
}

/* Writes the content into fd: marker, newline, data; synced if durable. */
static int fill(int fd, const char *marker, const char *data, size_t len, bool durable)
{
    if (fchmod(fd, 0644) != 0 || write_all(fd, marker, strlen(marker)) != CT_OK || write_all(fd, "\n", 1) != CT_OK ||
        write_all(fd, data, len) != CT_OK || (durable && fsync(fd) != 0))
        return CT_EIO;
    return CT_OK;
}

/* An unnamed file in dfd, written whole, then given a temp name for base:
 * a kill while it is written leaves nothing behind.  CT_OK with tmp named;
 * CT_EINVAL when the file system has no O_TMPFILE (the caller falls back);
 * CT_EIO. */
static int write_unnamed(int dfd, const char *base, const char *marker, const char *data, size_t len, bool durable,
                         char *tmp, size_t cap)
{
#ifdef O_TMPFILE
    char proc[64];
    int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
        return CT_EINVAL;
    int rc = fill(fd, marker, data, len, durable);
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    for (int attempt = 0; rc == CT_OK && attempt < 8; attempt++) {
        temp_name(base, tmp, cap);
        if (linkat(AT_FDCWD, proc, dfd, tmp, AT_SYMLINK_FOLLOW) == 0) {
            close(fd);
            return CT_OK;
        }
        if (errno != EEXIST)
            rc = CT_EINVAL; /* no /proc, or linking refused: the named way */
    }
    close(fd);
    return rc == CT_OK ? CT_EINVAL : rc;
#else
    (void)dfd, (void)base, (void)marker, (void)data, (void)len, (void)durable, (void)tmp, (void)cap;
    return CT_EINVAL;
#endif
}

/* A named temporary file for base in dfd, written whole. */
static int write_named(int dfd, const char *base, const char *marker, const char *data, size_t len, bool durable,
                       char *tmp, size_t cap)
{
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 8; attempt++) {
        temp_name(base, tmp, cap);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | OPEN_FLAGS, 0644);
        if (fd < 0 && errno != EEXIST)
            return CT_EIO;
    }
    if (fd < 0)
        return CT_EIO;
    int rc = fill(fd, marker, data, len, durable);
    if (close(fd) != 0)
        rc = CT_EIO;
    if (rc != CT_OK)
        unlinkat(dfd, tmp, 0);
    return rc;
}

/* Puts the written temporary tmp in base's place, where a moment ago was
 * what state and seen say (nothing, or cutaint's own file).  An own file is
 * exchanged with tmp, atomically, and looked at again: unless it is that
 * same file, still marked, it is exchanged back.  CT_OK (tmp is gone),
 * CT_EEXIST (why), CT_EIO, or 1: base changed under it, look again. */
static int put_in_place(int dfd, const char *tmp, const char *base, const char *marker, ct_marked_state state,
                        const struct stat *seen, char *why, size_t whycap)
{
    if (state == CT_MARKED_ABSENT) {
        if (rename_noreplace(dfd, tmp, base, false) == 0)
            return CT_OK;
        if (errno == EEXIST)
            return 1;
        say_errno(why, whycap, "cannot be replaced", errno);
        return CT_EIO;
    }
    assert(state == CT_MARKED_OURS && "only an absent or own file is replaced");
    if (renameat2(dfd, tmp, dfd, base, RENAME_EXCHANGE) != 0) {
        if (errno == ENOENT)
            return 1;
        /* A file system that cannot exchange: replaced as it was seen, in
         * the same directory. */
        if ((errno == EINVAL || errno == ENOSYS) && renameat(dfd, tmp, dfd, base) == 0)
            return CT_OK;
        say_errno(why, whycap, "cannot be replaced", errno);
        return CT_EIO;
    }
    struct stat old;
    if (state_at(dfd, tmp, marker, &old, why, whycap) == CT_MARKED_OURS && same_file(&old, seen)) {
        unlinkat(dfd, tmp, 0);
        return CT_OK;
    }
    if (renameat2(dfd, tmp, dfd, base, RENAME_EXCHANGE) != 0) {
        say_errno(why, whycap, "cannot be put back", errno); /* it was just exchanged the other way */
        return CT_EIO;
    }
    say(why, whycap, "changed while it was being replaced");
    return CT_EEXIST;
}

/* ct_marked_replace in the opened directory dfd. */
static int replace_at(int dfd, const char *base, const char *marker, const char *data, size_t len, bool durable,
                      char *why, size_t whycap)
{
    char tmp[TEMP_NAME_MAX + 1];
    int rc = 1;
    for (int attempt = 0; rc == 1 && attempt < 4; attempt++) {
        struct stat seen;
        ct_marked_state state = state_at(dfd, base, marker, &seen, why, whycap);
        if (state == CT_MARKED_FOREIGN)
            return CT_EEXIST;
        if (state == CT_MARKED_UNKNOWN)
            return CT_EIO;
        rc = write_unnamed(dfd, base, marker, data, len, durable, tmp, sizeof tmp);
        if (rc == CT_EINVAL)
            rc = write_named(dfd, base, marker, data, len, durable, tmp, sizeof tmp);
        if (rc != CT_OK) {
            say(why, whycap, "its temporary file could not be written");
            return rc;
        }
        rc = put_in_place(dfd, tmp, base, marker, state, &seen, why, whycap);
        if (rc != CT_OK)
            unlinkat(dfd, tmp, 0);
    }
    if (rc != 1)
        return rc;
    say(why, whycap, "kept changing while it was being replaced");
    return CT_EIO;
}

int ct_marked_replace(const char *path, const char *marker, const char *data, size_t len, bool durable, char *why,
                      size_t whycap)
{
    if (!path || !*path || !marker || (!data && len))
        return CT_EINVAL;
    const char *base;
    int dfd = open_dir(path, &base, why, whycap);
    if (dfd < 0)
        return CT_EIO;
    int rc = on_pseudo_fs(dfd, why, whycap)
                 ? CT_EEXIST
                 : replace_at(dfd, base, marker, data ? data : "", len, durable, why, whycap);
    close(dfd);
    return rc;
}

int ct_marked_clear(const char *path, const char *marker, char *why, size_t whycap)
{
    if (!path || !*path || !marker)
        return CT_EINVAL;
    const char *base;
    int dfd = open_dir(path, &base, why, whycap);
    if (dfd < 0)
        return errno == ENOENT ? 0 : CT_EIO;
    struct stat seen;
    int rc = CT_EEXIST;
    if (!on_pseudo_fs(dfd, why, whycap)) {
        switch (state_at(dfd, base, marker, &seen, why, whycap)) {
        case CT_MARKED_ABSENT: rc = 0; break;
        case CT_MARKED_FOREIGN: rc = CT_EEXIST; break;
        case CT_MARKED_UNKNOWN: rc = CT_EIO; break;
        case CT_MARKED_OURS: rc = remove_at(dfd, base, marker, &seen, why, whycap); break;
        }
    }
    close(dfd);
    return rc;
}

/* "NAME.cutaint-tmp-PID-XXXXXX", whatever NAME: PID, or 0 if it is not one. */
static long temp_writer(const char *entry)
{
    const char *tag = NULL;
    for (const char *at = strstr(entry, TMP_TAG); at; at = strstr(at + 1, TMP_TAG))
        tag = at;
    if (!tag)
        return 0;
    char *end;
    long pid = strtol(tag + sizeof TMP_TAG - 1, &end, 10);
    return pid > 0 && end[0] == '-' && strlen(end + 1) == 6 ? pid : 0;
}

int ct_marked_sweep(const char *path)
{
    static const char *const markers[] = {CT_HEALTH_MARKER, CT_METRICS_MARKER};
    const char *base;
    if (!path || !*path)
        return 0;
    int dfd = open_dir(path, &base, NULL, 0);
    if (dfd < 0)
        return 0;
    int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (!d) {
        if (lfd >= 0)
            close(lfd);
        close(dfd);
        return 0;
    }
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        long pid = temp_writer(e->d_name);
        /* Only a writer that is gone: a live one renames its file soon. */
        if (!pid || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
            struct stat seen;
            if (state_at(dfd, e->d_name, markers[i], &seen, NULL, 0) == CT_MARKED_OURS) {
                removed += remove_at(dfd, e->d_name, markers[i], &seen, NULL, 0) == 1;
                break;
            }
        }
    }
    closedir(d);
    close(dfd);
    return removed;
}

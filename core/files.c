/*
 * files.c - opening and writing the log, the report and the health file.
 *
 * Owns: every open(2), write(2) and rename(2) cutaint makes.
 *
 * Invariants:
 * - Paths come from the user's configuration only; files are opened
 *   O_CLOEXEC|O_NOFOLLOW (a symlink planted at the path is refused, never
 *   followed) and created 0644 at most.
 * - ct_append_line hands the kernel the whole line in one write(2); the
 *   loop only finishes a short write or restarts after EINTR.
 * - The health file and the metrics file are never seen half-written: each
 *   is written to a mkstemp file beside the target, then renamed over it (a
 *   symlink at the target is replaced, never followed); on any failure the
 *   temp file is removed and the target is left as it was.  The health file
 *   is synced first (it outlives the process for a probe); the metrics file,
 *   rewritten at every event, is not (a scraper reads the page cache, and a
 *   crash of the machine ends the job it describes).
 * - No heap allocation.
 */
#include "files.h"

#include <stdbool.h>

#include "config.h"
#include "ct_status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    out[ok ? len : 0] = '\0';
    return ok ? CT_OK : CT_EINVAL;
}

int ct_append_open(const char *path)
{
    if (!path || !*path)
        return CT_EINVAL;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
    return fd >= 0 ? fd : CT_EIO;
}

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

int ct_append_line(int fd, const char *line, size_t len)
{
    if (fd < 0 || (!line && len))
        return CT_EIO;
    return write_all(fd, line, len);
}

/* What replace() puts in a file: data, then tail; synced if durable. */
typedef struct content {
    const char *data;
    size_t len;
    const char *tail;
    bool durable;
} content;

/* Writes c into a fresh temp file beside path and renames it over path.
 * tmp holds the temp name for the caller's cleanup. */
static int write_and_rename(const char *path, const content *c, char *tmp)
{
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return CT_EIO;
    int rc = CT_OK;
    if (fchmod(fd, 0644) != 0 || write_all(fd, c->data, c->len) != CT_OK ||
        write_all(fd, c->tail, strlen(c->tail)) != CT_OK || (c->durable && fsync(fd) != 0))
        rc = CT_EIO;
    if (close(fd) != 0)
        rc = CT_EIO;
    if (rc == CT_OK && rename(tmp, path) != 0)
        rc = CT_EIO;
    if (rc != CT_OK)
        unlink(tmp);
    return rc;
}

/* The temp file is PATH.XXXXXX: beside the target (rename stays on one
 * file system), and not ending in .prom, so a textfile collector never
 * reads one half-written. */
static int replace(const char *path, const content *c)
{
    static const char suffix[] = ".XXXXXX";
    char tmp[CT_PATH_MAX + sizeof suffix];
    struct stat st;
    if (!path || !*path || !c->data)
        return CT_EINVAL;
    /* A file or a symlink is replaced; a device (CUTAINT_HEALTH_FILE=/dev/null
     * run as root), a directory or a fifo never is. */
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        return CT_EIO;
    size_t len = strlen(path);
    if (len >= CT_PATH_MAX)
        return CT_EINVAL;
    memcpy(tmp, path, len);
    memcpy(tmp + len, suffix, sizeof suffix);
    return write_and_rename(path, c, tmp);
}

int ct_health_write(const char *path, const char *text)
{
    return replace(path, &(content){ text, text ? strlen(text) : 0, "\n", true });
}

int ct_file_replace(const char *path, const char *data, size_t len)
{
    return replace(path, &(content){ data, len, "", false });
}

int ct_health_clear(const char *path)
{
    if (!path || !*path)
        return CT_EINVAL;
    /* unlink(2) removes a symlink itself, never its target. */
    if (unlink(path) == 0)
        return 1;
    return errno == ENOENT ? 0 : CT_EIO;
}

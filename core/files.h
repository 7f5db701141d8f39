/*
 * files.h - the only files cutaint ever writes: the log, the report, the
 * health file and the metrics file, at paths the user configured.
 *
 * Invariants:
 * - Opened O_CLOEXEC|O_NOFOLLOW, created mode 0644 (less under umask); an
 *   existing symlink at the path is refused, not followed.
 * - The report is O_APPEND and each event is one write(2): a process killed
 *   at any moment leaves whole lines only (short writes are retried for the
 *   rest, and only a kill between two of them can cut a line).
 * - The health and metrics files appear atomically: mkstemp beside the
 *   target, write, (fsync for the health file), rename.
 * - "%p" in a path becomes the pid; "%%" a percent sign; any other % is kept.
 */
#ifndef CT_FILES_H
#define CT_FILES_H

#include <stddef.h>
#include <sys/types.h>

/* CT_OK, CT_EINVAL (result does not fit). */
int ct_path_expand(const char *tmpl, pid_t pid, char *out, size_t cap);
/* An fd for appending events, or a negative ct_status code. */
int ct_append_open(const char *path);
/* One write(2) of the whole line when the kernel allows it. CT_OK / CT_EIO. */
int ct_append_line(int fd, const char *line, size_t len);
/* Atomically (re)place path with text + "\n".  CT_OK / CT_EIO / CT_EINVAL. */
int ct_health_write(const char *path, const char *text);
/* Atomically (re)place path with exactly len bytes of data, not synced
 * (the metrics file).  CT_OK / CT_EIO / CT_EINVAL. */
int ct_file_replace(const char *path, const char *data, size_t len);
/* Remove a health file left by an earlier process: 1 removed, 0 none, <0 error. */
int ct_health_clear(const char *path);

#endif

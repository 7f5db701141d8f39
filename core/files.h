/*
 * files.h - the only files cutaint ever writes: the log, the report, the
 * health file and the metrics file, at paths the user configured, and the
 * process's stderr.  cutaint is a guest in every process it is loaded into:
 * nothing here may destroy a file it did not write, block the program, or
 * write into a descriptor the program now uses for its own data.
 *
 * Two kinds of output:
 * - A sink (the log, the report, stderr) is appended to, one line per
 *   write(2).  It is opened non-blocking on a high descriptor, O_CLOEXEC;
 *   a fifo with no reader, a device, a directory, a socket or a symlink is
 *   refused; so is anything on a pseudo file system (procfs, sysfs,
 *   cgroup, ...), a regular file cutaint did not create unless it has one
 *   link and belongs to the process's user, and the program's own stdout,
 *   or the file of the sink it is kept apart from (ct_sink_apart).  Before
 *   each write the descriptor is checked to be still the
 *   file it opened (st_dev/st_ino): one the program closed or reused is
 *   reopened once by its resolved path, after that the sink stops.  A line
 *   a full pipe cannot take is dropped and counted, never waited for.
 * - A marked file (the health file, the metrics file) is replaced whole,
 *   atomically, and its first line is a fixed marker.  Something already at
 *   the path is replaced or removed only when it is a regular file whose
 *   first line is that marker: cutaint's own, whoever owns it.  Every look
 *   and change is made relative to the directory, opened once (a symlink
 *   swapped above it cannot move a change elsewhere), and what is about to
 *   be replaced or removed is first moved out of the way to a name of
 *   cutaint's own and looked at again there; anything else goes back.
 *
 * Invariants:
 * - Every open is O_CLOEXEC|O_NOFOLLOW|O_NOCTTY and creates mode 0644 at
 *   most; no open(2) here can block (O_NONBLOCK; a fifo is never opened for
 *   a marked file).
 * - A sink's line is one write(2) (writev): a process killed at any moment
 *   leaves whole lines (a line longer than PIPE_BUF into a full pipe may be
 *   cut, and is counted as dropped).
 * - A line a write cut short (a full disk) is never followed by a whole
 *   line glued onto it: the sink ends the fragment with '\n' at once, or,
 *   when that fails too, in the same writev as its next line.  The file is
 *   never truncated: other processes may append to it.  The cut counts once
 *   in write_errors (never in dropped), and is said once, as any write
 *   error.
 * - A marked file appears atomically: written beside the target (an
 *   unnamed O_TMPFILE where the file system has it, so a kill leaves
 *   nothing), then renamed over it.  A named temporary a kill left is
 *   NAME.cutaint-tmp-PID-XXXXXX, removed once PID is gone by the next
 *   process that sweeps the directory, whatever NAME.
 * - "%p" in a path becomes the pid; "%%" a percent sign; any other % is kept.
 * - No heap allocation.
 */
#ifndef CT_FILES_H
#define CT_FILES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"

/* The first line of every health file and metrics file cutaint writes. */
#define CT_HEALTH_MARKER "# cutaint health file"
#define CT_METRICS_MARKER "# cutaint metrics file"
/* Room for a reason given by these functions ("is a fifo with no reader"). */
#define CT_WHY_MAX 128

/* CT_OK, CT_EINVAL (result does not fit). */
int ct_path_expand(const char *tmpl, pid_t pid, char *out, size_t cap);
/* path made absolute against cwd (cwd ignored for an absolute path): CT_OK,
 * CT_EINVAL (does not fit, or relative with no cwd). */
int ct_path_absolute(const char *path, const char *cwd, char *out, size_t cap);

/* ---- sinks: the log, the report, stderr ------------------------------------ */
typedef struct ct_sink {
    char path[CT_PATH_MAX]; /* resolved, absolute; "" for stderr */
    int fd;                 /* -1: not open */
    dev_t dev;              /* what fd was when cutaint opened it */
    ino_t ino;
    const struct ct_sink *apart;       /* a sink whose file this one must not share */
    const char *apart_name;            /* what to call it in why */
    bool apart_yields;                 /* refused on apart's path even before apart opens */
    bool apart_stderr;                 /* nor the program's stderr (its stdout, never) */
    atomic_bool holding;               /* it opened a file (read by the sink kept apart) */
    bool opened;                       /* the first write has opened it */
    bool stopped;                      /* no longer written (refused, or lost twice) */
    bool reopened;                     /* the one reopen is spent */
    bool cut;                          /* a write cut a line: '\n' ends it first */
    char why[CT_WHY_MAX];              /* why it was refused or first failed */
    pthread_mutex_t lock;              /* orders reopening and writing */
    atomic_uint_fast64_t dropped;      /* lines not written: full pipe, lost, busy */
    atomic_uint_fast64_t write_errors; /* write(2) failures (ENOSPC, EIO, ...) */
    atomic_uint_fast64_t reopens;      /* the descriptor was lost and reopened */
} ct_sink;

/* What one ct_sink_write did. */
typedef enum {
    CT_SINK_WRITTEN,
    CT_SINK_DROPPED,       /* counted in dropped */
    CT_SINK_FAILED,        /* counted in write_errors */
    CT_SINK_FIRST_FAILURE, /* ... the first of them: why says what (say it once) */
    CT_SINK_REFUSED,       /* the first write could not open the path: why says why */
} ct_sink_result;

/* A sink for path (absolute; "" or NULL: one that never writes), opened by
 * its first write, so that a process that never writes creates nothing. */
void ct_sink_init(ct_sink *s, const char *path);
/* Keep s off other's file (named other_name when refused) and the
 * program's stdout, and off its stderr too when off_stderr.  s is refused
 * when other has opened the same file; when s yields, also when the file at
 * other's path is s's, opened or not (so other, opening later, finds it
 * free).  After ct_sink_init. */
void ct_sink_apart(ct_sink *s, const ct_sink *other, const char *other_name, bool yields, bool off_stderr);
/* The process's fd 2 as it is now (at load): written only while fd 2 is
 * still that file.  CT_OK, CT_EIO when fd 2 is closed (nothing written). */
int ct_sink_stderr(ct_sink *s);
/* Append one line.  may_wait false: a lock held elsewhere drops the line
 * (the exit path of a signal that interrupted cutaint). */
ct_sink_result ct_sink_write(ct_sink *s, const char *line, size_t len, bool may_wait);
/* Is it written, or may it be (configured, not refused or lost)? */
bool ct_sink_live(const ct_sink *s);
/* In a forked child: the lock usable, the counters kept. */
void ct_sink_atfork_child(ct_sink *s);
/* Close it (a forked child that writes its own file). */
void ct_sink_close(ct_sink *s);

/* ---- marked files: the health file, the metrics file -------------------------- */
/* What is at a marked file's path. */
typedef enum {
    CT_MARKED_ABSENT,  /* nothing */
    CT_MARKED_OURS,    /* a regular file whose first line is the marker */
    CT_MARKED_FOREIGN, /* anything else: never replaced or removed */
    CT_MARKED_UNKNOWN, /* it could not be looked at (permissions, I/O) */
} ct_marked_state;

/* Looks without following a symlink or opening a fifo; why says what a
 * foreign or unknown thing is ("a directory", "a regular file cutaint did
 * not write").  Anything on a pseudo file system is foreign. */
ct_marked_state ct_marked_state_of(const char *path, const char *marker, char *why, size_t whycap);
/* Atomically (re)place path with marker + "\n" + data (len bytes), synced
 * when durable.  CT_OK; CT_EEXIST when something foreign is there (why
 * filled), CT_EIO, CT_EINVAL. */
int ct_marked_replace(const char *path, const char *marker, const char *data, size_t len, bool durable, char *why,
                      size_t whycap);
/* Remove cutaint's file at path: 1 removed, 0 nothing there, CT_EEXIST
 * foreign (left untouched, why filled), CT_EIO. */
int ct_marked_clear(const char *path, const char *marker, char *why, size_t whycap);
/* Remove temporaries killed processes left in path's directory, whatever
 * file they were for (NAME.cutaint-tmp-PID-XXXXXX: PID gone, first line
 * the health or the metrics marker); how many. */
int ct_marked_sweep(const char *path);

#endif

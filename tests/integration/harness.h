/*
 * harness.h - what the integration tests share: run a client program under a
 * controlled environment (with or without libcutaint.so preloaded, with or
 * without fakecuda reachable) and capture what it did; and a small reader
 * for the JSON Lines report (docs/REPORT.md).  For tests only: small, strict,
 * and never the thing under test.
 *
 * Paths come from meson as -D defines: CT_SHIM (libcutaint.so), CT_FAKECUDA_DIR
 * (the directory holding fakecuda's libcuda.so.1), CT_CLIENT_* (the clients).
 */
#ifndef IT_HARNESS_H
#define IT_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#define H_MAX_ARGS 8
#define H_MAX_ENV 16

/* fakecuda's deterministic schedule (queued work runs only at sync points),
 * for a run whose test predicts which call first reports an asynchronous
 * fault or what a query answers; every other run gets the default,
 * asynchronous one, where work completes between calls as on a GPU. */
#define H_SYNC "FAKECUDA_SCHEDULE=sync"

/* One run of a client.  In args and env values "@DIR@" becomes the run's
 * private temporary directory (report, health file, ...). */
typedef struct h_run {
    const char *client;           /* path of the program */
    const char *args[H_MAX_ARGS]; /* argv[1..], NULL-terminated */
    const char *env[H_MAX_ENV];   /* extra KEY=VALUE, NULL-terminated */
    bool no_shim;                 /* do not preload libcutaint.so */
    const char *preload_first;    /* a library preloaded before it (NULL: none) */
    bool no_driver;               /* LD_LIBRARY_PATH without fakecuda */
    bool no_report;               /* do not set CUTAINT_REPORT */
    int timeout_s;                /* default 60; the run is SIGKILLed past it */
    const char *kill_on;          /* SIGKILL the client once stdout holds this */
    int kill_delay_ms;            /* ... this long after */
    const char *cwd;              /* the directory it starts in (NULL: the test's) */
    unsigned run_as;              /* uid (and gid) it runs as; 0: the test's own */
} h_run;

typedef struct h_result {
    int status;       /* exit status; 128 + signal when killed */
    int signal;       /* the signal that ended it, 0 if it exited */
    bool timed_out;   /* killed for running past timeout_s (a hang) */
    char *out, *err;  /* everything written to stdout, stderr */
    char dir[256];    /* the run's temporary directory */
    char report[300]; /* @DIR@/report.jsonl, what CUTAINT_REPORT named */
} h_result;

/* Runs the client to completion.  Aborts the test process only when the
 * run could not be started at all. */
void h_exec(const h_run *run, h_result *res);
/* The same run without the shim: what the program does on its own. */
void h_exec_baseline(const h_run *run, h_result *res);
/* Frees the captured text and removes the temporary directory (kept when
 * CUTAINT_IT_KEEP is set; directories a failed test left are removed when
 * its process exits). */
void h_free(h_result *res);
/* "@DIR@/name" for a result. */
const char *h_path(const h_result *res, const char *name);

/* ---- captured text -------------------------------------------------------- */
/* Does text hold exactly this line? */
bool h_has_line(const char *text, const char *line);
/* How many lines, how many contain needle. */
int h_count_lines(const char *text);
int h_count_containing(const char *text, const char *needle);
/* How many lines contain every needle of a NULL-terminated list. */
int h_count_lines_with(const char *text, const char *const *needles);
/* The first line containing needle (static storage), or "" */
const char *h_line_containing(const char *text, const char *needle);
/* A whole file's contents (malloc'd), or NULL. */
char *h_slurp(const char *path);
/* The first line of cutaint's health and metrics files (docs/REPORT.md),
 * written out here as a user reads it there. */
#define H_HEALTH_MARKER "# cutaint health file"
#define H_METRICS_MARKER "# cutaint metrics file"
/* A health file holding text, left in a fresh directory as an earlier or
 * another process would leave it (outside any run's own directory): its
 * path, and the CUTAINT_HEALTH_FILE=path a run's env takes.  h_stale_free
 * removes both. */
typedef struct h_stale {
    char dir[32], path[64], env[96];
} h_stale;
void h_stale_health_file(h_stale *st, const char *text);
void h_stale_free(const h_stale *st);

/* ---- the report ------------------------------------------------------------ */
typedef struct h_report {
    char *text;
    char **line;       /* each complete line, NUL-terminated */
    int n;             /* complete lines */
    int invalid;       /* complete lines that are not one JSON object */
    int first_invalid; /* index of the first of them, -1 */
    bool truncated;    /* text after the last newline */
    bool missing;      /* no file */
} h_report;

void h_report_load(const char *path, h_report *rep);
void h_report_free(h_report *rep);
/* Index of the first line at or after `from` whose "event" is ev, or -1. */
int h_find(const h_report *rep, const char *ev, int from);
int h_count(const h_report *rep, const char *ev);
/* "start,failure,probe,..." : every event name in order (static storage). */
const char *h_events(const h_report *rep);

/* ---- JSON values (one object per line) ------------------------------------- */
/* Is s exactly one JSON object (and whitespace)? */
bool h_json_valid(const char *s);
/* A key's value: the string unescaped, any other value as written; "<missing>"
 * when absent.  Rotating static buffers: valid for the next few calls. */
const char *h_str(const char *obj, const char *key);
/* A key's integer value; false when absent or not an integer. */
bool h_int(const char *obj, const char *key, long long *out);
/* Elements of an array value: count (-1 if not an array), the i-th as h_str. */
int h_arr_len(const char *obj, const char *key);
const char *h_arr_str(const char *obj, const char *key, int i);

/* ---- table-driven tests ------------------------------------------------------ */
/* Criterion may run a parameterized test in a fresh process whose address
 * layout differs (PIE, ASLR): a parameter must hold no pointer.  Tests pass
 * row indexes into their static tables instead: 0..H_MAX_ROWS-1. */
#define H_MAX_ROWS 32
extern const int h_rows[H_MAX_ROWS];
#define H_ROWS(table) cr_make_param_array(int, (void *)h_rows, sizeof(table) / sizeof((table)[0]))

/* ---- Criterion assertions over a run (these end the test on failure) -------- */
/* The run ended on its own: no hang, no signal. */
void h_expect_ended(const h_result *res);
/* stdout holds each line (a NULL-terminated list). */
void h_expect_lines(const h_result *res, const char *const *lines);
/* The run's report exists and every complete line is one JSON object. */
void h_expect_report(const h_result *res, h_report *rep);

#endif

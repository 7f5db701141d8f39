/*
 * run.h - running a program under the shim: the request (what `cutaint run`
 * parsed, or what `cutaint demo` sets), its execution, and the summary.
 *
 * Invariants:
 * - Every value in a request has been validated (run.c) before
 *   ct_run_execute sees it; the demo builds requests from constants.
 * - ct_run_execute is the one code path that sets LD_PRELOAD and the
 *   CUTAINT_* variables and starts the program, for run and demo alike.
 */
#ifndef CT_TOOL_RUN_H
#define CT_TOOL_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "report.h"

/* The options of `cutaint run`, indexing ct_run_request. */
typedef enum {
    CT_OPT_REPORT,
    CT_OPT_INJECT,
    CT_OPT_ARGS,
    CT_OPT_EXIT_STATUS,
    CT_OPT_ERROR_EXITCODE,
    CT_OPT_HEALTH_FILE,
    CT_OPT_METRICS_FILE,
    CT_OPT_LOG,
    CT_OPT_LOG_FILE,
    CT_OPT_POISON,
    CT_OPT_ON_SKIP,
    CT_OPT_ON_CONTEXT_LOSS,
    CT_OPT_FAKECUDA,
    CT_OPT_QUIET,
    CT_OPT_HELP,
    CT_RUN_OPTS
} ct_run_opt;

typedef struct ct_run_request {
    bool set[CT_RUN_OPTS];
    const char *value[CT_RUN_OPTS]; /* valued options only */
    char **program;                 /* NULL-terminated: PROGRAM ARGS... */
} ct_run_request;

typedef struct ct_run_outcome {
    bool ran; /* the program was started */
    long pid;
    int status;                     /* what cutaint exits with: program_status, or --error-exitcode's N */
    int program_status;             /* the program's exit status, or 128 + signal */
    int signal;                     /* the signal that killed it, or 0 */
    char report[PATH_MAX];          /* the program's own report ("" = none asked for) */
    char report_template[PATH_MAX]; /* the path the processes were given, before %p */
    struct timespec began;          /* CLOCK_REALTIME_COARSE just before the program started */
    bool report_removed;            /* the temporary report stayed empty and was removed */
    bool report_temporary;          /* report is cutaint's own temporary file */
} ct_run_outcome;

/* The environment variable each valued option sets (NULL for flags). */
const char *ct_run_option_env(ct_run_opt opt);

/* Starts the program with the shim and waits for it, forwarding SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT that were sent to cutaint itself.  Returns
 * 0 when the program ran (see *out), else the status cutaint should exit
 * with (2: setup missing, 126/127: cannot execute) after a message. */
int ct_run_execute(const ct_run_request *req, ct_run_outcome *out);

/* Reads every report file the run wrote into r (run_reports.c): the one
 * file, or with %p each process's; returns how many were read. */
size_t ct_run_reports_read(const ct_run_outcome *o, ct_report *r);

/* The closing summary: status, counts, context, report path; more lines
 * name the root cause when there is one. */
void ct_run_summary(FILE *out, const ct_run_request *req, const ct_run_outcome *o);

/* Did the report record a refused read? (The demo's success test.) */
bool ct_run_report_refused(const ct_run_outcome *o);

#endif

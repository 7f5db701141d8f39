/*
 * metrics.c - CUTAINT_METRICS_FILE: the process's counters in Prometheus
 * text format (core/metrics.c), for node_exporter's textfile collector or
 * any scraper of per-job files.
 *
 * The file is rewritten whole, atomically (core/files.h's marked files: its
 * first line is CT_METRICS_MARKER, a comment to Prometheus; mode 0644), at
 * the start event, after every failure, skip, refused read and context
 * loss, and at exit.  A process that never reaches the driver writes none.
 * Anything at the path cutaint did not write is left untouched (said once).
 *
 * Invariants:
 * - Nothing here runs on the happy path: only events call in, and the
 *   happy path has none but start and exit.
 * - One lock orders the updates and the writes, so the file always holds
 *   one moment's counts; it is never held across a driver call.
 * - A forked child starts from zero, for its own file when the path has %p
 *   (init.c expands it anew; with one path, parent and child each replace
 *   it with their own view).
 * - A file that cannot be written is said once in the log; the program runs
 *   on unchanged.
 * - While an exit interrupted cutaint on its thread (ct_g.exit_interrupted),
 *   the lock is only tried: the interrupted code may hold it.
 */
#include <assert.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "ct_status.h"
#include "files.h"
#include "metrics.h"
#include "shim.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool started; /* this process has written its first file */
static bool failed_logged;
static atomic_uint_fast64_t write_errors[CT_OUTPUTS]; /* the marked files' (health, metrics) */
static ct_metrics m;
static char text[CT_METRICS_TEXT_MAX];
/* Debug builds remember whether this thread holds the lock, for write_file's
 * assert; release builds keep nothing. */
#ifndef NDEBUG
static _Thread_local bool holding;
#define HOLDING(held) (holding = (held))
#else
#define HOLDING(held) ((void)0)
#endif

void ct_metrics_atfork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    HOLDING(false);
    started = false;
    failed_logged = false;
}

void ct_metrics_output_failed(int output)
{
    atomic_fetch_add(&write_errors[output], 1);
}

/* With the lock held. */
static void write_file(void)
{
    assert(holding && "one lock orders the updates and the writes");
    ct_events_output_counts(&m);
    m.outputs[CT_OUTPUT_HEALTH].write_errors = atomic_load(&write_errors[CT_OUTPUT_HEALTH]);
    m.outputs[CT_OUTPUT_METRICS].write_errors = atomic_load(&write_errors[CT_OUTPUT_METRICS]);
    size_t len = ct_metrics_format(&m, text, sizeof text);
    char why[CT_WHY_MAX] = "";
    int rc = len ? ct_marked_replace(ct_g.cfg.metrics_file, CT_METRICS_MARKER, text, len, false, why, sizeof why)
                 : CT_EINVAL;
    if (rc == CT_OK)
        return;
    ct_metrics_output_failed(CT_OUTPUT_METRICS);
    if (failed_logged)
        return;
    failed_logged = true;
    if (rc == CT_EEXIST)
        ct_log(CT_LOG_ERROR, "CUTAINT_METRICS_FILE %s %s: it is left untouched, and no metrics file is written",
               ct_g.cfg.metrics_file, why);
    else
        ct_log(CT_LOG_ERROR, "cannot write CUTAINT_METRICS_FILE %s (%s)", ct_g.cfg.metrics_file,
               why[0] ? why : "too long");
}

/* The lock, unless an interrupted exit finds it taken. */
static bool take_lock(void)
{
    if (atomic_load_explicit(&ct_g.exit_interrupted, memory_order_relaxed)) {
        if (pthread_mutex_trylock(&lock) != 0)
            return false;
    } else {
        pthread_mutex_lock(&lock);
    }
    HOLDING(true);
    return true;
}

/* Each event: lock, update (if the process has started), write, unlock.
 * false: the lock could not be had (an interrupted exit). */
#define CT_METRICS_EVENT(update)       \
    do {                               \
        if (!ct_g.cfg.metrics_file[0]) \
            return true;               \
        if (!take_lock())              \
            return false;              \
        if (started) {                 \
            update;                    \
            write_file();              \
        }                              \
        HOLDING(false);                \
        pthread_mutex_unlock(&lock);   \
        return true;                   \
    } while (0)

void ct_metrics_start(int driver_version)
{
    if (!ct_g.cfg.metrics_file[0])
        return;
    char host[CT_METRICS_HOST_MAX] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    pthread_mutex_lock(&lock);
    HOLDING(true);
    ct_metrics_init(&m, CT_VERSION, driver_version, (long)getpid(), host);
    started = true;
    write_file();
    HOLDING(false);
    pthread_mutex_unlock(&lock);
}

bool ct_metrics_failure_event(const ct_failure_desc *d)
{
    /* A library call's failure is labelled with its own status. */
    CT_METRICS_EVENT(
        ct_metrics_failure(&m, d->api, d->kernel, d->status ? d->status : ct_cu_error_name((CUresult)d->error)));
}

bool ct_metrics_library_failure_event(const char *library)
{
    CT_METRICS_EVENT(ct_metrics_library_failure(&m, library));
}

bool ct_metrics_skip_event(void)
{
    CT_METRICS_EVENT(m.skips++);
}

bool ct_metrics_refused_event(uint64_t bytes)
{
    CT_METRICS_EVENT((m.refused_reads++, m.refused_bytes += bytes));
}

bool ct_metrics_context_lost_event(void)
{
    CT_METRICS_EVENT(m.context_lost = true);
}

bool ct_metrics_exit_event(void)
{
    CT_METRICS_EVENT(m.unprotected = atomic_load(&ct_g.unprotected));
}

/*
 * log.c - the log: lines for people, beside the report's events for tools
 * (events.c, which says each event here as it writes it).
 *
 * Log lines look like valgrind's ("==PID== cutaint: ..."), go to stderr or
 * CUTAINT_LOG_FILE, and are filtered by CUTAINT_LOG.  The first
 * CT_REFUSALS_SHOWN refused reads are logged (like a sanitizer's print
 * limit), then one line says the rest go to the report; so are repeats of
 * a folded failure (ct_log_nth_level).  A refused read is explained in
 * full, unless it tells the same story as one before it: then in one line.
 *
 * Owns: the stderr and log sinks, the print limits, the stories of refused
 * reads, and what every sink of the shim shares (the report's too): saying
 * a sink's trouble on stderr, its counters, following a path a fork
 * changed; and the log kept apart from the report (never one file).
 *
 * Invariants:
 * - Formats are literals of this file or of the one calling ct_log;
 *   outside text (kernel names, paths, argv) travels only as %s arguments.
 * - Every log and stderr line is "==PID== " then its text escaped
 *   (core/diag.h): a newline or an ESC byte in a path shows as \n, \x1b.
 * - Nothing here runs on the happy path.
 * - No file is opened before it has something to hold: the log file at the
 *   first line logged.
 * - Every line goes through a sink (core/files.h): never into a descriptor
 *   the program took over, never waiting on a full pipe, and only to fd 2
 *   while it is the stderr the process started with.  A sink that cannot be
 *   opened or written is said once, on stderr, and counted in the metrics.
 * - While an exit interrupted cutaint on its thread (ct_g.exit_interrupted)
 *   no line waits for a sink's lock: it is dropped and counted.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "ct_hash.h"
#include "ct_status.h"
#include "diag.h"
#include "shim.h"

#define CT_REFUSALS_SHOWN 10

static ct_sink stderr_sink, log_sink;
static atomic_uint refusals_logged;

/* ---- the sinks ------------------------------------------------------------ */

void ct_log_stderr_at_load(void)
{
    ct_sink_stderr(&stderr_sink);
}

void ct_log_configure(void)
{
    ct_sink_init(&log_sink, ct_g.cfg.log_file);
}

void ct_log_apart_from(ct_sink *report)
{
    ct_sink_apart(&log_sink, report, "CUTAINT_REPORT", true, false);
    ct_sink_apart(report, &log_sink, "CUTAINT_LOG_FILE", false, true);
}

bool ct_output_may_wait(void)
{
    return !atomic_load_explicit(&ct_g.exit_interrupted, memory_order_relaxed);
}

/* "==PID== " prefix, then text escaped (diag.h): outside text in it can
 * neither forge a line nor drive a terminal.  The length, '\n' included. */
static size_t diag_line(char *line, size_t cap, const char *prefix, const char *text)
{
    int n = snprintf(line, cap, "==%d== %s", (int)getpid(), prefix);
    assert(n > 0 && (size_t)n < cap - 2 && "the prefix leaves room for the text");
    size_t len = (size_t)n + ct_diag_escape(text, line + n, cap - (size_t)n - 1);
    line[len++] = '\n';
    assert(len < cap && "a line ends with its newline inside the buffer");
    return len;
}

void ct_stderr_line(const char *text)
{
    char line[1024];
    ct_sink_write(&stderr_sink, line, diag_line(line, sizeof line, "", text), ct_output_may_wait());
}

/* Says, on stderr, what went wrong with the sink of a variable. */
void ct_tell_sink_trouble(ct_sink *s, ct_sink_result r, const char *variable, const char *consequence)
{
    char text[CT_PATH_MAX + 256];
    if (r == CT_SINK_REFUSED)
        snprintf(text, sizeof text, "cutaint: cannot open %s %s: it %s; %s", variable, s->path, s->why, consequence);
    else if (r == CT_SINK_FIRST_FAILURE)
        snprintf(text, sizeof text,
                 "cutaint: cannot write %s %s (%s); lines that fail are lost and counted "
                 "(cutaint_output_write_errors_total), and writing goes on",
                 variable, s->path, s->why);
    else
        return;
    ct_stderr_line(text);
}

/* ---- the log ---------------------------------------------------------------- */

/* A log file that could not be opened sends its lines to stderr; one
 * lost later (twice) or failing keeps them, counted. */
static atomic_bool log_refused;

static void log_line(const char *line, size_t len)
{
    if (log_sink.path[0] && !atomic_load_explicit(&log_refused, memory_order_relaxed)) {
        ct_sink_result r = ct_sink_write(&log_sink, line, len, ct_output_may_wait());
        ct_tell_sink_trouble(&log_sink, r, "CUTAINT_LOG_FILE", "logging to stderr");
        if (r != CT_SINK_REFUSED)
            return;
        atomic_store(&log_refused, true);
    }
    ct_sink_write(&stderr_sink, line, len, ct_output_may_wait());
}

void ct_log(ct_log_level level, const char *fmt, ...)
{
    if (level > ct_g.cfg.log || ct_g.cfg.log == CT_LOG_OFF)
        return;
    char text[2048], line[2048];
    va_list ap;
    va_start(ap, fmt);
    if (vsnprintf(text, sizeof text, fmt, ap) < 0)
        text[0] = '\0';
    va_end(ap);
    log_line(line, diag_line(line, sizeof line, "cutaint: ", text));
}

void ct_output_counts(ct_metrics_output *out, const ct_sink *s)
{
    out->dropped = atomic_load(&s->dropped);
    out->write_errors = atomic_load(&s->write_errors);
    out->reopened = atomic_load(&s->reopens);
}

void ct_log_output_counts(ct_metrics *m)
{
    ct_output_counts(&m->outputs[CT_OUTPUT_STDERR], &stderr_sink);
    ct_output_counts(&m->outputs[CT_OUTPUT_LOG], &log_sink);
}

void ct_log_after_fork(void)
{
    ct_sink_atfork_child(&stderr_sink);
    ct_sink_atfork_child(&log_sink);
}

/* A sink whose path the fork changed (%p) now writes the child's own
 * file, opened when it first has a line; true if it did. */
bool ct_output_follows(ct_sink *s, const char *path)
{
    if (strcmp(s->path, path) == 0)
        return false;
    ct_sink_close(s);
    ct_sink_init(s, path);
    return true;
}

static void forget_stories(void);

void ct_log_follow_path(void)
{
    if (ct_output_follows(&log_sink, ct_g.cfg.log_file)) {
        atomic_store(&log_refused, false);
        forget_stories(); /* a log of its own holds no earlier story */
    }
}

/* The log level of the n-th of a kind of line shown CT_..._SHOWN times at
 * warn: after them, one line says where the rest are, and they go to info. */
ct_log_level ct_log_nth_level(atomic_uint *count, unsigned shown, const char *what)
{
    unsigned n = atomic_fetch_add(count, 1);
    if (n < shown)
        return CT_LOG_WARN;
    if (n == shown)
        ct_log(CT_LOG_WARN, "more %s are not shown (CUTAINT_LOG=info shows all; the report has every one)", what);
    return CT_LOG_INFO;
}

/* ---- refused reads --------------------------------------------------------- */

static const char *subject(const ct_failure_info *f)
{
    return f->desc.kernel ? f->desc.kernel : f->desc.api;
}

static const char *skip_subject(const ct_skip_desc *s)
{
    return s->kernel ? s->kernel : s->api;
}

/* The i-th skip on a refusal's path. */
static const ct_skip_desc *path_skip(const ct_failure_info *root, uint32_t i)
{
    assert(i < root->path_len && root->path_len <= CT_SKIPS_KEPT && root->path[i] < root->n_skips &&
           "a path indexes the skips kept");
    return &root->skips[root->path[i]];
}

const char *ct_refusal_step(const ct_failure_info *root, size_t i)
{
    return i == 0 ? subject(root) : skip_subject(path_skip(root, (uint32_t)i - 1));
}

/* How many skips from the i-th on the path on are of its subject. */
static uint32_t path_run(const ct_failure_info *root, uint32_t i)
{
    const char *what = skip_subject(path_skip(root, i));
    uint32_t n = 1;
    while (i + n < root->path_len && strcmp(skip_subject(path_skip(root, i + n)), what) == 0)
        n++;
    return n;
}

/* "fill(...) [failed, launch #1] -> fill(...) [skipped 12 times, launches
 * #2..#13] -> saxpy(...) [skipped, launch #14] -> this read": a run of skips
 * of one kernel (or copy API) is one element, so a failure that spreads
 * through one kernel again and again reads as one step, not as a wall. */
static void format_path(const ct_failure_info *root, char *out, size_t cap)
{
    size_t n = 0;
#define CT_APPEND(...)                                                 \
    do {                                                               \
        int m = n < cap ? snprintf(out + n, cap - n, __VA_ARGS__) : 0; \
        n += m > 0 ? (size_t)m : 0;                                    \
    } while (0)
    CT_APPEND("%s [%s", subject(root), root->provisional ? "unfinished" : "failed");
    if (root->desc.launch_seq)
        CT_APPEND(", launch #%llu", (unsigned long long)root->desc.launch_seq);
    CT_APPEND("]");
    if (root->path_cut)
        CT_APPEND(" -> ... (older skips not kept)");
    for (uint32_t i = 0, run; i < root->path_len; i += run) {
        run = path_run(root, i);
        const ct_skip_desc *first = path_skip(root, i), *last = path_skip(root, i + run - 1);
        CT_APPEND(" -> %s [skipped", skip_subject(first));
        if (run > 1)
            CT_APPEND(" %u times", run);
        if (run == 1 && first->launch_seq)
            CT_APPEND(", launch #%llu", (unsigned long long)first->launch_seq);
        else if (run > 1 && first->launch_seq && last->launch_seq)
            CT_APPEND(", launches #%llu..#%llu", (unsigned long long)first->launch_seq,
                      (unsigned long long)last->launch_seq);
        CT_APPEND("]");
    }
    CT_APPEND(" -> this read");
#undef CT_APPEND
}

/* ", 3 occurrences: the first at launch #1, the latest at launch #5" for a
 * folded failure, "" for one that happened once. */
static const char *occurrences_text(const ct_failure_info *f, char *out, size_t cap)
{
    out[0] = '\0';
    if (f->occurrences > 1 && f->desc.launch_seq && f->last_launch_seq)
        snprintf(out, cap, ", %llu occurrences: the first at launch #%llu, the latest at launch #%llu",
                 (unsigned long long)f->occurrences, (unsigned long long)f->desc.launch_seq,
                 (unsigned long long)f->last_launch_seq);
    else if (f->occurrences > 1)
        snprintf(out, cap, ", %llu occurrences", (unsigned long long)f->occurrences);
    return out;
}

/* ---- refused reads that tell the same story ---------------------------------- */

/* Reads refused for the same root, by the same path (its subjects, as the
 * event's path names them), through the same API, with the same answer
 * and poisoning and the same other failures carried, differ only in where
 * and how much they read (docs/DESIGN.md): after the first such read's
 * full block, each takes one line.  A slot is claimed once, by CAS, and
 * kept for the process: stories are few, and a read whose story finds the
 * table full is told in full.  Concurrent readers of one story may each
 * count the other's read in their line's numbers; no lock, no allocation. */
#define CT_STORIES 16

typedef struct story {
    atomic_uint_least64_t key; /* 0: free */
    atomic_uint_least64_t reads, bytes;
} story;

static story stories[CT_STORIES];

/* A string with its NUL, so that "ab","c" and "a","bc" differ. */
static uint64_t hash_text(uint64_t h, const char *s)
{
    return ct_fnv1a(h, s, strlen(s) + 1);
}

static uint64_t hash_word(uint64_t h, uint64_t w)
{
    return ct_fnv1a(h, &w, sizeof w);
}

static uint64_t story_key(const char *api, const ct_refusal *r, int returned, bool poisoned)
{
    const ct_failure_info *root = &r->failures[0];
    uint64_t h = hash_text(CT_FNV_OFFSET, api);
    h = hash_word(h, (uint64_t)(uint32_t)returned);
    h = hash_word(h, poisoned);
    for (size_t i = 0; i < r->n_kept; i++)
        h = hash_word(h, r->failures[i].id);
    h = hash_text(h, subject(root));
    for (uint32_t i = 0; i < root->path_len; i++)
        h = hash_text(h, skip_subject(path_skip(root, i)));
    return h ? h : 1;
}

/* How many reads of this story so far, this one included, and their bytes
 * (*bytes_so_far); 0 when the table has no room for it. */
static uint64_t story_told(uint64_t key, uint64_t bytes, uint64_t *bytes_so_far)
{
    for (size_t i = 0; i < CT_STORIES; i++) {
        story *st = &stories[i];
        uint64_t seen = 0;
        if (!atomic_compare_exchange_strong(&st->key, &seen, key) && seen != key)
            continue;
        *bytes_so_far = atomic_fetch_add(&st->bytes, bytes) + bytes;
        return atomic_fetch_add(&st->reads, 1) + 1;
    }
    return 0;
}

/* A child logging into a file of its own (%p) tells each story anew there. */
static void forget_stories(void)
{
    for (size_t i = 0; i < CT_STORIES; i++) {
        atomic_store(&stories[i].key, 0);
        atomic_store(&stories[i].reads, 0);
        atomic_store(&stories[i].bytes, 0);
    }
}

/* What the root did to the bytes, as a refusal's first line says it. */
/* A library call's failure is told by its own status (a reported value
 * with the value: "devInfo=3"), into out. */
static const char *root_outcome(const ct_failure_info *root, char *out, size_t cap)
{
    if (root->provisional)
        return "had not finished writing them";
    if (ct_lib_status_reported(&root->desc))
        return ct_lib_status_text(&root->desc, out, cap);
    return root->desc.status ? root->desc.status : ct_cu_error_name((CUresult)root->desc.error);
}

void ct_log_refusal(const char *api, uint64_t addr, uint64_t bytes, const ct_refusal *r, int returned, bool poisoned)
{
    char occurrences[160], status[128], outcome[128];
    uint64_t so_far = 0;
    uint64_t told = story_told(story_key(api, r, returned, poisoned), bytes, &so_far);
    if (ct_log_nth_level(&refusals_logged, CT_REFUSALS_SHOWN, "refused reads") > ct_g.cfg.log)
        return;
    const ct_failure_info *root = &r->failures[0];
    if (told > 1) {
        ct_log(CT_LOG_WARN,
               "refused read: %s of %llu bytes at 0x%llx: %s %s, again failure #%u by the same path "
               "(%llu such reads so far, %llu bytes)",
               api, (unsigned long long)bytes, (unsigned long long)addr, subject(root),
               root_outcome(root, outcome, sizeof outcome), root->id, (unsigned long long)told,
               (unsigned long long)so_far);
        return;
    }
    char path[2048];
    format_path(root, path, sizeof path);
    /* The first line alone names the read, the root cause and the path, so a
     * grep for "refused" finds the whole story. */
    ct_log(CT_LOG_WARN, "refused read: %s of %llu bytes at 0x%llx: %s %s; path: %s", api, (unsigned long long)bytes,
           (unsigned long long)addr, subject(root), root_outcome(root, outcome, sizeof outcome), path);
    ct_log(CT_LOG_WARN, "   %llu of these bytes were never written: the work that was to write them did not run",
           (unsigned long long)r->tainted_bytes);
    if (root->provisional)
        ct_log(CT_LOG_WARN, "   root cause: failure #%u: %s had not finished writing them (it never returned)",
               root->id, subject(root));
    else if (root->desc.status)
        ct_log(CT_LOG_WARN, "   root cause: failure #%u: %s %s %s%s", root->id, subject(root),
               ct_lib_status_reported(&root->desc) ? "reported" : "returned",
               ct_lib_status_text(&root->desc, status, sizeof status),
               occurrences_text(root, occurrences, sizeof occurrences));
    else
        ct_log(CT_LOG_WARN, "   root cause: failure #%u: %s failed with %s (%s%s)", root->id, subject(root),
               ct_cu_error_name((CUresult)root->desc.error), root->desc.api,
               occurrences_text(root, occurrences, sizeof occurrences));
    for (size_t i = 1; i < r->n_kept; i++)
        ct_log(CT_LOG_WARN, "   also carried: failure #%u: %s failed with %s", r->failures[i].id,
               subject(&r->failures[i]), ct_cu_error_name((CUresult)r->failures[i].desc.error));
    if (poisoned)
        ct_log(CT_LOG_WARN, "   returned %s; the host buffer was filled with 0x%02x",
               ct_cu_error_name((CUresult)returned), ct_g.cfg.poison);
    else
        ct_log(CT_LOG_WARN, "   returned %s; the host buffer was left as it was", ct_cu_error_name((CUresult)returned));
}

/* ---- the closing line ------------------------------------------------------ */

void ct_log_summary(void)
{
    uint64_t failures = atomic_load(&ct_g.failures), skips = atomic_load(&ct_g.skips);
    uint64_t occurrences = atomic_load(&ct_g.occurrences), refused = atomic_load(&ct_g.refused_reads);
    uint64_t images = atomic_load(&ct_g.unusable_images);
    bool lost = ct_latch_is_set(ct_g.latch);
    if ((!failures && !skips && !refused && !lost && !images) || !ct_events_started())
        return;
    uint64_t retries = atomic_load(&ct_g.retries);
    char folded[64] = "", retried[64] = "", unusable[64] = "";
    if (occurrences > failures)
        snprintf(folded, sizeof folded, " (%llu occurrences)", (unsigned long long)occurrences);
    if (retries)
        snprintf(retried, sizeof retried, ", %llu retried", (unsigned long long)retries);
    if (images)
        snprintf(unusable, sizeof unusable, ", %llu unusable image%s", (unsigned long long)images,
                 images == 1 ? "" : "s");
    ct_log(CT_LOG_WARN, "summary: %llu failure%s%s, %llu skipped%s, %llu refused read%s%s; %s",
           (unsigned long long)failures, failures == 1 ? "" : "s", folded, (unsigned long long)skips, retried,
           (unsigned long long)refused, refused == 1 ? "" : "s", unusable,
           lost ? "the CUDA context was LOST" : "the CUDA context is intact");
}

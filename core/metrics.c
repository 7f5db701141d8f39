/*
 * metrics.c - a process's counters and their Prometheus text exposition
 * (see metrics.h for the invariants).
 *
 * Owns: the metric names, their HELP and TYPE lines, the label sets, label
 * escaping.  The families: cutaint_info, cutaint_failures_total{api,kernel,
 * error}, cutaint_library_failures_total{library}, cutaint_skips_total,
 * cutaint_refused_reads_total,
 * cutaint_refused_bytes_total, cutaint_context_lost, cutaint_unprotected;
 * docs/METRICS.md
 * describes them for operators.
 */
#include "metrics.h"

#include <assert.h>
#include <stddef.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define OTHER "(other)"

/* Outside text (kernel names, the host name) as a bounded field. */
static void copy_field(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

void ct_metrics_init(ct_metrics *m, const char *version, int driver_version, long pid, const char *host)
{
    memset(m, 0, sizeof *m);
    copy_field(m->version, sizeof m->version, version);
    copy_field(m->host, sizeof m->host, host);
    m->driver_version = driver_version;
    m->pid = pid;
}

static bool same_set(const ct_metrics_set *s, const char *api, const char *kernel, const char *error)
{
    return strncmp(s->api, api, sizeof s->api - 1) == 0 && strncmp(s->kernel, kernel, sizeof s->kernel - 1) == 0 &&
           strncmp(s->error, error, sizeof s->error - 1) == 0;
}

void ct_metrics_failure(ct_metrics *m, const char *api, const char *kernel, const char *error)
{
    api = api ? api : "";
    kernel = kernel ? kernel : "";
    error = error ? error : "";
    for (unsigned i = 0; i < m->n_sets; i++)
        if (same_set(&m->sets[i], api, kernel, error)) {
            m->sets[i].count++;
            return;
        }
    assert(m->n_sets <= CT_METRICS_SETS && "a fixed table: past it, (other)");
    ct_metrics_set *s = &m->sets[m->n_sets < CT_METRICS_SETS ? m->n_sets : CT_METRICS_SETS];
    if (m->n_sets < CT_METRICS_SETS) {
        m->n_sets++;
        copy_field(s->api, sizeof s->api, api);
        copy_field(s->kernel, sizeof s->kernel, kernel);
        copy_field(s->error, sizeof s->error, error);
    } else {
        copy_field(s->api, sizeof s->api, OTHER);
        copy_field(s->kernel, sizeof s->kernel, OTHER);
        copy_field(s->error, sizeof s->error, OTHER);
    }
    s->count++;
}

/* ---- the text ------------------------------------------------------------ */

typedef struct text {
    char *out;
    size_t cap, len;
    bool full;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    if (t->full)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->out + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= t->cap - t->len)
        t->full = true;
    else
        t->len += (size_t)n;
}

/* name="value", the value escaped. */
static void label(text *t, const char *name, const char *value)
{
    put(t, "%s%s=\"", t->len && t->out[t->len - 1] != '{' ? "," : "", name);
    for (const unsigned char *p = (const unsigned char *)value; *p && !t->full; p++) {
        if (*p == '\\' || *p == '"')
            put(t, "\\%c", *p);
        else if (*p == '\n')
            put(t, "\\n");
        else
            put(t, "%c", *p >= 0x20 && *p < 0x7f ? *p : '?');
        assert((t->full || (unsigned char)t->out[t->len - 1] < 0x80) && "a label value is ASCII once escaped");
    }
    put(t, "\"");
}

static void family(text *t, const char *name, const char *type, const char *help)
{
    put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{host,pid ... and what extra adds} */
static void sample_start(text *t, const ct_metrics *m, const char *name)
{
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", m->pid);
    size_t start = t->len;
    put(t, "%s{", name);
    label(t, "host", m->host);
    label(t, "pid", pid);
    assert((t->full || (strstr(t->out + start, "{host=\"") && strstr(t->out + start, ",pid=\""))) &&
           "every sample carries host and pid labels");
    (void)start;
}

static void plain(text *t, const ct_metrics *m, const char *name, const char *type, const char *help, uint64_t value)
{
    family(t, name, type, help);
    sample_start(t, m, name);
    put(t, "} %" PRIu64 "\n", value);
}

static void info(text *t, const ct_metrics *m)
{
    char driver[24] = "none";
    if (m->driver_version)
        snprintf(driver, sizeof driver, "%d", m->driver_version);
    family(t, "cutaint_info", "gauge",
           "cutaint's version and the CUDA driver's (cuDriverGetVersion, \"none\" when no driver could be loaded); "
           "always 1.");
    sample_start(t, m, "cutaint_info");
    label(t, "version", m->version);
    label(t, "driver_version", driver);
    put(t, "} 1\n");
}

static void failures(text *t, const ct_metrics *m)
{
    family(t, "cutaint_failures_total", "counter",
           "GPU work that failed, each occurrence (a kernel launch, copy or memset; the report's failure and "
           "repeat events), by entry point, kernel (empty for copies) and CUresult.");
    unsigned n = m->n_sets + (m->sets[CT_METRICS_SETS].count ? 1 : 0);
    for (unsigned i = 0; i < n; i++) {
        const ct_metrics_set *s = &m->sets[i < m->n_sets ? i : CT_METRICS_SETS];
        sample_start(t, m, "cutaint_failures_total");
        label(t, "api", s->api);
        label(t, "kernel", s->kernel);
        label(t, "error", s->error);
        put(t, "} %" PRIu64 "\n", s->count);
    }
}

void ct_metrics_library_failure(ct_metrics *m, const char *library)
{
    unsigned i = 0;
    while (i < m->n_libraries && strcmp(m->libraries[i].library, library) != 0)
        i++;
    if (i == m->n_libraries) {
        if (i == CT_METRICS_LIBRARIES)
            return;
        copy_field(m->libraries[i].library, sizeof m->libraries[i].library, library);
        m->n_libraries++;
    }
    m->libraries[i].count++;
}

static void library_failures(text *t, const ct_metrics *m)
{
    family(t, "cutaint_library_failures_total", "counter",
           "Calls into a CUDA library (cuBLAS, cuRAND, cuFFT, cuSOLVER) that returned an error status, each "
           "occurrence, by library.");
    for (unsigned i = 0; i < m->n_libraries; i++) {
        sample_start(t, m, "cutaint_library_failures_total");
        label(t, "library", m->libraries[i].library);
        put(t, "} %" PRIu64 "\n", m->libraries[i].count);
    }
}

/* One family over cutaint's output files; field picks the counter. */
static void outputs(text *t, const ct_metrics *m, const char *name, const char *help, size_t field)
{
    static const char *const files[CT_OUTPUTS] = {
        [CT_OUTPUT_STDERR] = "stderr", [CT_OUTPUT_LOG] = "log",         [CT_OUTPUT_REPORT] = "report",
        [CT_OUTPUT_HEALTH] = "health", [CT_OUTPUT_METRICS] = "metrics",
    };
    family(t, name, "counter", help);
    for (int i = 0; i < CT_OUTPUTS; i++) {
        sample_start(t, m, name);
        label(t, "file", files[i]);
        put(t, "} %" PRIu64 "\n", *(const uint64_t *)((const char *)&m->outputs[i] + field));
    }
}

size_t ct_metrics_format(const ct_metrics *m, char *out, size_t cap)
{
    if (!m || !out || cap == 0)
        return 0;
    text t = {out, cap, 0, false};
    info(&t, m);
    failures(&t, m);
    library_failures(&t, m);
    plain(&t, m, "cutaint_skips_total", "counter",
          "Launches and device copies not given to the driver because an input carries a failure.", m->skips);
    plain(&t, m, "cutaint_refused_reads_total", "counter",
          "Device-to-host reads refused because bytes they read were never written by successful work.",
          m->refused_reads);
    plain(&t, m, "cutaint_refused_bytes_total", "counter", "Bytes requested by the refused reads.", m->refused_bytes);
    plain(&t, m, "cutaint_context_lost", "gauge",
          "1 once the process's CUDA context was found destroyed (it exits with status 70), else 0.",
          m->context_lost ? 1 : 0);
    plain(&t, m, "cutaint_unprotected", "gauge",
          "1 when the process used the CUDA driver and none of its calls reached cutaint (a library loaded "
          "before it went around every hook): nothing was checked. Set at exit.",
          m->unprotected ? 1 : 0);
    outputs(&t, m, "cutaint_output_dropped_lines_total",
            "Lines of cutaint's own output not written: a full pipe, a descriptor the program closed or reused, "
            "stderr no longer the process's own, a lock busy at an interrupted exit.",
            offsetof(ct_metrics_output, dropped));
    outputs(&t, m, "cutaint_output_write_errors_total",
            "Writes of cutaint's own output that failed (a full disk, an I/O error), a line cut short included; said "
            "once "
            "on stderr.",
            offsetof(ct_metrics_output, write_errors));
    outputs(&t, m, "cutaint_output_reopened_total",
            "Times a descriptor of cutaint's own output was found closed or reused by the program and its file "
            "reopened.",
            offsetof(ct_metrics_output, reopened));
    if (t.full) {
        out[0] = '\0';
        return 0;
    }
    assert(t.len < cap && out[t.len] == '\0' && "all or nothing: a whole text, NUL-terminated");
    return t.len;
}

/*
 * metrics.h - what one process has seen, as Prometheus counters and gauges,
 * and their text exposition (format 0.0.4, what node_exporter's textfile
 * collector reads).  Pure: the shim (shim/metrics.c) feeds events in and
 * writes the text to CUTAINT_METRICS_FILE.
 *
 * Invariants:
 * - No heap: a fixed table of failure label sets; once it is full, further
 *   distinct sets are counted under api, kernel and error "(other)".
 * - Every sample carries host and pid labels, so the files of many
 *   processes (and of pods on one node, whose pids repeat) never hold the
 *   same series twice.
 * - Label values are escaped as the format requires (\\ \" \n), and any
 *   other control or non-ASCII byte becomes '?', so the text is always
 *   valid UTF-8 and parses.
 * - ct_metrics_format writes all or nothing: 0 when cap is too small.
 */
#ifndef CT_METRICS_H
#define CT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_METRICS_SETS 64
#define CT_METRICS_API_MAX 64
#define CT_METRICS_KERNEL_MAX 256
#define CT_METRICS_ERROR_MAX 64
#define CT_METRICS_HOST_MAX 128
/* Enough for every family with a full table of the longest labels. */
#define CT_METRICS_TEXT_MAX 81920
#define CT_METRICS_LIBRARIES 8
#define CT_METRICS_LIBRARY_MAX 16

typedef struct ct_metrics_set {
    char api[CT_METRICS_API_MAX];
    char kernel[CT_METRICS_KERNEL_MAX]; /* "" for copies and memsets */
    char error[CT_METRICS_ERROR_MAX];
    uint64_t count;
} ct_metrics_set;

/* What became of cutaint's own output, per file (files.h's sinks and marked
 * files): lines dropped (a full pipe, a descriptor the program took over, a
 * busy lock at an interrupted exit, stderr no longer the process's own),
 * writes that failed (a full disk), descriptors lost and reopened. */
enum { CT_OUTPUT_STDERR, CT_OUTPUT_LOG, CT_OUTPUT_REPORT, CT_OUTPUT_HEALTH, CT_OUTPUT_METRICS, CT_OUTPUTS };
typedef struct ct_metrics_output {
    uint64_t dropped, write_errors, reopened;
} ct_metrics_output;

typedef struct ct_metrics {
    char version[32];
    int driver_version; /* 0: no driver could be loaded */
    long pid;
    char host[CT_METRICS_HOST_MAX];
    unsigned n_sets;
    ct_metrics_set sets[CT_METRICS_SETS + 1]; /* the last one: "(other)" */
    uint64_t skips, refused_reads, refused_bytes;
    /* Library calls (cuBLAS, cuRAND, ...) that returned an error status, by
     * library, in the order first met. */
    unsigned n_libraries;
    struct {
        char library[CT_METRICS_LIBRARY_MAX];
        uint64_t count;
    } libraries[CT_METRICS_LIBRARIES];
    bool context_lost;
    bool unprotected; /* the driver was used and no call reached cutaint */
    ct_metrics_output outputs[CT_OUTPUTS];
} ct_metrics;

/* Everything zero, for this process. */
void ct_metrics_init(ct_metrics *m, const char *version, int driver_version, long pid, const char *host);
/* One distinct failure (a report "failure" event); kernel NULL for a copy. */
void ct_metrics_failure(ct_metrics *m, const char *api, const char *kernel, const char *error);
/* The text exposition; its length, or 0 when it does not fit in cap. */
/* A library call failed; past CT_METRICS_LIBRARIES libraries, not counted
 * (there are five). */
void ct_metrics_library_failure(ct_metrics *m, const char *library);
size_t ct_metrics_format(const ct_metrics *m, char *out, size_t cap);

#endif

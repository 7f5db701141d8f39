/*
 * report.h - the post-mortem model built from cutaint JSON Lines reports
 * (docs/REPORT.md): processes, their failures, the skips and refused reads
 * each failure caused, probes, context loss and the exit event.
 *
 * Owns: reading report files line by line into that model, and the notes on
 * what could not be read (corrupt, over-long, truncated lines).
 *
 * Invariants:
 * - Reading never fails on content: a line that is not a whole JSON object
 *   with "event" and "pid" is counted and skipped; unknown events and keys
 *   are ignored (later versions add them).  Only an unreadable file fails.
 * - A line longer than CT_REPORT_LINE_MAX is skipped without being held in
 *   memory, so a hostile file cannot make the reader allocate without bound
 *   per line.
 * - Processes are keyed by pid; a second "start" for a pid that has already
 *   started begins a new process (pid reuse, or two runs in one file).
 *   Failure ids are only unique within a process.
 * - Every string in the model is NUL-terminated and owned by the model;
 *   it is untrusted text: renderers must sanitise it before output.
 * - A skip or refused read naming a failure the log never described gets a
 *   placeholder failure (described == false), so nothing is dropped.
 */
#ifndef CT_TOOL_REPORT_H
#define CT_TOOL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CT_REPORT_LINE_MAX (1u << 20)

typedef struct ct_strv {
    char **v;
    size_t n, cap;
} ct_strv;

/* Skips of one kernel (or one copy API) on behalf of one failure, folded. */
typedef struct ct_skip_group {
    char *api;
    char *kernel; /* NULL: a skipped device copy */
    uint64_t count;
    int64_t first_launch, last_launch;
    char *needed;     /* the tainted input of the first skip */
    int64_t produced; /* outputs tainted by the first skip */
} ct_skip_group;

typedef struct ct_read {
    char *api;
    char *address;
    int64_t bytes;
    char *error; /* the root failure's CUresult */
    int64_t code;
    char *returned; /* what the program's call returned (older reports: error) */
    bool poisoned;
    int64_t *failures; /* every failure the bytes carried */
    size_t n_failures;
    ct_strv path; /* root, then each skip, oldest first */
} ct_read;

/* Refused reads of one failure that tell the same story: the same api,
 * path, returned, poisoned and failures carried; they differ only in where
 * and how much they read (docs/DESIGN.md). */
typedef struct ct_read_group {
    size_t first; /* its first read, an index into the failure's reads */
    uint64_t count;
    int64_t bytes; /* of them all */
} ct_read_group;

typedef struct ct_failure {
    int64_t id;
    bool described; /* a "failure" event was seen */
    char *api;
    char *kernel;
    char *error;
    char *status; /* a library call's status and value ("CUBLAS_STATUS_INVALID_VALUE (7)"), else NULL */
    int64_t code;
    int64_t launch;
    bool has_dims;
    int64_t grid[3], block[3];
    char *stream;
    int64_t thread;
    bool injected;
    char *repro;
    ct_strv backtrace;
    bool has_image; /* a launch of a kernel whose image was refused: */
    int64_t image;  /* that image's number (ct_image_note.number) */
    uint64_t occurrences;
    int64_t last_launch;  /* the latest occurrence's launch (repeat events); 0 unknown */
    uint64_t retries;     /* retry events naming it */
    int64_t retry_launch; /* the first retry's launch number; 0 none */
    bool pool;            /* its allocation looks like a pool (a pool event, or its own) */
    int64_t pool_size, pool_covered, pool_pointers;
    size_t seq; /* line order within the process */
    ct_skip_group *skips;
    size_t n_skips, cap_skips;
    ct_read *reads; /* each, in the report's order */
    size_t n_reads, cap_reads;
    ct_read_group *read_groups; /* in the order of their first reads */
    size_t n_read_groups, cap_read_groups;
} ct_failure;

typedef struct ct_probe {
    char *after;
    char *error;
    char *result;
    char *verdict;
} ct_probe;

typedef struct ct_exit {
    int64_t status, program_status;
    int64_t failures, occurrences, skips, retries, refused_reads, failed_reads, unusable_images;
    bool context_lost;
} ct_exit;

/* An image the driver could not use, or a kernel lookup it failed (an
 * `image` event): not a failure, said beside them. */
typedef struct ct_image_note {
    char *api;
    char *error;
    char *address; /* hex; NULL for a file */
    char *path;
    char *kernel; /* a failed lookup's name */
    char *form, *status, *fit;
    ct_strv holds;
    ct_strv kernels;
    int64_t kernels_total;
    char *device, *device_cc;
    char *why;      /* the diagnosis, as the log said it */
    int64_t number; /* its number in the process (older reports: its order, from 1) */
    bool stand_in;  /* cutaint answered the runtime with a stand-in handle */
} ct_image_note;

/* A launch not proven finished when the context was lost (a `suspect` of
 * the context_lost event): cutaint orders them, it cannot know which one
 * faulted. */
#define CT_SUSPECTS_MAX 16 /* kept per loss: the event holds at most as many */
typedef struct ct_suspect {
    char *api;
    char *kernel;   /* NULL: a graph launch */
    char *graph;    /* hex; "0x0" for a kernel launch */
    int64_t launch; /* 0 unknown */
    char *stream;
    bool has_dims;
    int64_t grid[3], block[3];
    int64_t thread;
    bool prime; /* the oldest on its stream: where to look first */
    char *repro;
} ct_suspect;

typedef struct ct_process {
    long pid;
    const char *file; /* the report file it was first seen in */
    bool has_start;
    ct_strv argv;
    bool has_driver;
    int64_t driver_version;
    char *cutaint_version;
    int64_t format_version; /* the start event's (1 when it has none) */
    ct_failure *failures;
    size_t n_failures, cap_failures;
    ct_probe *probes;
    size_t n_probes, cap_probes;
    ct_image_note *images;
    size_t n_images, cap_images;
    uint64_t skip_events, read_events, retry_events;
    bool context_lost;
    bool lost_simulated;
    char *lost_reason;
    size_t lost_seq;
    bool has_suspects;    /* the event had suspects (older reports: none) */
    ct_suspect *suspects; /* in the event's order, at most CT_SUSPECTS_MAX */
    size_t n_suspects;
    uint64_t suspects_dropped; /* listed in the event past those kept */
    uint64_t suspects_total;   /* its suspects_total, never below those listed */
    bool has_exit;
    ct_exit exit;
    size_t seq; /* events read so far */
} ct_process;

/* Lines of one kind that were skipped. */
typedef struct ct_skipped {
    uint64_t count;
    uint64_t first; /* 1-based line number of the first, 0 if none */
} ct_skipped;

/* What reading one file left aside. */
typedef struct ct_file_note {
    char *path;
    uint64_t lines;       /* non-empty lines */
    ct_skipped corrupt;   /* not one whole JSON value */
    ct_skipped malformed; /* JSON, but not an event: no "event"/"pid" */
    ct_skipped too_long;
    uint64_t unknown;     /* events this reader does not know */
    bool truncated;       /* the last line was cut short */
    int64_t newer_format; /* the newest format_version above this reader's, 0 if none */
} ct_file_note;

typedef struct ct_report {
    ct_process *procs;
    size_t n_procs, cap_procs;
    ct_file_note *files;
    size_t n_files, cap_files;
} ct_report;

/* Reads one report from f (named path in notes).  0 on success, or an errno
 * value when the file could not be read. */
int ct_report_read(ct_report *r, FILE *f, const char *path);
void ct_report_free(ct_report *r);

/* The counts a verdict uses: the exit event's when the process got that far
 * (the shim may keep less detail than it counts), else what the log shows. */
typedef struct ct_counts {
    uint64_t failures, occurrences, skips, retries, refused_reads, unusable_images;
    uint64_t skipped_copies; /* of skips: device copies rather than launches */
    uint64_t skipped_calls;  /* of skips: library calls (ct_is_library_call) */
} ct_counts;
/* A CUDA library's entry point (cublas..., curand..., shim/libcalls.def),
 * not the driver's: the report names both by their api alone. */
bool ct_is_library_call(const char *api);
ct_counts ct_process_counts(const ct_process *p);
/* The failure with that id, or NULL. */
const ct_failure *ct_process_failure(const ct_process *p, int64_t id);
/* The first image numbered `number`, or NULL. */
const ct_image_note *ct_process_image(const ct_process *p, int64_t number);
/* The failure most likely to have destroyed the context: the latest one
 * logged before the context_lost event, or NULL. */
const ct_failure *ct_process_loss_cause(const ct_process *p);
/* Has the file anything to warn about? */
bool ct_file_note_any(const ct_file_note *n);

#endif

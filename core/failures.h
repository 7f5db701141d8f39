/*
 * failures.h - what one failed piece of work was, as the report will name it.
 *
 * A failure is minted when work that was to write device memory did not run
 * (or has not yet said whether it ran: a provisional failure).  It lives as
 * long as some byte range carries it; see taint.h for the carrying.
 *
 * Invariants:
 * - Ids are never 0 and never reused within a store.
 * - Strings in a ct_failure_desc or ct_skip_desc (api, kernel) are borrowed
 *   for ever: pass string literals or names returned by ct_store_intern().
 *   Core copies pointers, never text, so recording a failure allocates at
 *   most one record.
 * - Identical repeats (same api, same kernel, same error and library status,
 *   both real) fold
 *   into the live failure with an occurrence count instead of a new id; it
 *   keeps its first occurrence's description and its latest launch number.
 * - A failure keeps its newest CT_SKIPS_KEPT skip records and a total count.
 * - A failure keeps the keys of its newest CT_ATTEMPTS_KEPT distinct
 *   attempts (launches the driver refused at once), for recognising a
 *   retry; a cap drops a key, which only makes a retry of it skipped.
 * Asserted in: taint.c.
 */
#ifndef CT_FAILURES_H
#define CT_FAILURES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint32_t ct_failure_id; /* 0 means "no failure" */

#define CT_SKIPS_KEPT 16
#define CT_SKIP_SPANS 4
#define CT_ATTEMPTS_KEPT 4

/* [lo, hi): absolute device addresses. */
typedef struct ct_span {
    uint64_t lo, hi;
} ct_span;

typedef struct ct_failure_desc {
    int error;           /* the CUresult the work returned */
    uint32_t image;      /* a stand-in's launch: the number of the image event it came from; 0 none
                              * (beside error, in what was padding: a write scope's description stays
                              * as cheap to make) */
    const char *api;     /* "cuLaunchKernel", "cuMemcpyHtoD_v2" */
    const char *kernel;  /* demangled kernel name, or NULL */
    uint64_t launch_seq; /* process-wide launch number, 0 if no launch */
    uint32_t grid[3];
    uint32_t block[3];
    uint64_t stream; /* the CUstream handle as a number */
    uint64_t thread; /* OS thread id of the caller */
    int64_t time_ns; /* CLOCK_REALTIME */
    /* A library call's failure (shim/libcalls.def): the status it returned
     * and that status's name ("CUBLAS_STATUS_INVALID_VALUE"); NULL and 0 for
     * driver work.  error is then what a read of its outputs is refused with. */
    const char *status;
    int lib_status;
} ct_failure_desc;

/* What a write scope's provisional failure says (taint.h, ct_enter_write):
 * the error a read of its bytes is refused with and the call that was
 * writing them, nothing else.  Two words, passed in registers: every host
 * write makes one, and a read racing the write is refused as "had not
 * finished writing", which needs no more. */
typedef struct ct_scope_desc {
    int error;
    const char *api;
} ct_scope_desc;

/* Whether a library failure's status is a value the library reported on
 * the device (its name ends in '=': "devInfo="), not a status it returned. */
static inline bool ct_lib_status_reported(const ct_failure_desc *d)
{
    size_t len = d->status ? strlen(d->status) : 0;
    return len && d->status[len - 1] == '=';
}

/* A library failure's status as reports show it: its name and value,
 * "CUBLAS_STATUS_INVALID_VALUE (7)"; a reported value as "devInfo=3". */
static inline const char *ct_lib_status_text(const ct_failure_desc *d, char *out, size_t cap)
{
    snprintf(out, cap, ct_lib_status_reported(d) ? "%s%d" : "%s (%d)", d->status, d->lib_status);
    return out;
}

/* What makes a launch the same work again: the function launched, its
 * parameter bytes (pointers and scalars, in order; ct_launch_key_params),
 * and its threads in all (grid times block). */
typedef struct ct_launch_key {
    uint64_t function;
    uint64_t params; /* 64-bit hash of the bytes, their count mixed in */
    uint64_t threads;
} ct_launch_key;

typedef struct ct_skip_desc {
    const char *api;
    const char *kernel;     /* NULL for a skipped device copy */
    const char *roles;      /* a skipped launch's parameter roles ("rw,r,-"), or NULL */
    const char *roles_from; /* what decided them ("ptx", "signature", "size") */
    uint64_t launch_seq;
    uint64_t needed;      /* the tainted input address that stopped it */
    uint64_t graph, node; /* a skipped graph launch: its exec and the node reading needed; else 0 */
    uint32_t produced;    /* how many outputs took the failure */
    uint64_t thread;
    int64_t time_ns;
    /* Filled by core, not the caller: where the first outputs lie, so a read
     * can find the way back from its bytes to the root. */
    uint32_t n_spans;
    ct_span spans[CT_SKIP_SPANS];
} ct_skip_desc;

/* A snapshot of one failure, safe to use after the store moves on. */
typedef struct ct_failure_info {
    ct_failure_id id;
    bool provisional;
    ct_failure_desc desc;
    uint64_t occurrences;     /* >= 1 */
    uint64_t last_launch_seq; /* the latest occurrence's launch (desc.launch_seq: the first) */
    uint64_t skips_total;
    uint32_t n_skips;                  /* min(skips_total, CT_SKIPS_KEPT) */
    ct_skip_desc skips[CT_SKIPS_KEPT]; /* oldest first */
    /* In a refusal only: the skips on the way from the root to the bytes
     * read, as indexes into skips[], oldest first.  path_cut: skips were
     * dropped (skips_total > n_skips), so the way may lead back further. */
    uint32_t path_len;
    uint8_t path[CT_SKIPS_KEPT];
    bool path_cut;
} ct_failure_info;

#endif

/*
 * latch.h - the verdict on a failed call (isolated or context lost), the
 * process-wide latch that remembers a lost context, and the exit status it
 * maps to (docs/DESIGN.md, "Probe and latch").
 *
 * Invariants:
 * - Only the probe decides: ct_classify looks at the probe result alone; the
 *   failing call's name and error appear only in the reason text.
 * - A latch is set at most once and keeps the first reason; concurrent
 *   setters agree on one winner, and a reader sees either no reason or the
 *   whole first one.
 * - ct_latch_init'ed latches are independent, so tests never touch the
 *   process-wide one (which cannot be reset).
 */
#ifndef CT_LATCH_H
#define CT_LATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_EXIT_GPU_FAULT 70
#define CT_REASON_MAX 512

typedef enum { CT_ISOLATED = 0, CT_CONTEXT_LOST = 1 } ct_fatality;

/* probe_error == NULL: the probe succeeded.  On CT_CONTEXT_LOST the
 * operator-facing reason is written to reason[cap] (always terminated). */
ct_fatality ct_classify(const char *op, const char *error, const char *probe_error, char *reason, size_t cap);
/* The check made at exit when nothing was latched: query_error == NULL, the
 * query found nothing wrong; otherwise its error, and the reason as above. */
ct_fatality ct_classify_at_exit(const char *query_error, char *reason, size_t cap);

typedef struct ct_latch {
    atomic_int state; /* 0 open, 1 being set, 2 set */
    char reason[CT_REASON_MAX];
} ct_latch;

void ct_latch_init(ct_latch *l);
/* True only for the call that set the latch. */
bool ct_latch_set(ct_latch *l, const char *reason);
/* The first reason, or NULL while the latch is open. */
const char *ct_latch_reason(const ct_latch *l);
bool ct_latch_is_set(const ct_latch *l);
ct_latch *ct_latch_global(void);

/* The reference mapping: a fault gives 70 whatever the run's result,
 * otherwise 0 for success and 1 for failure. */
int ct_exit_code(bool run_succeeded, const char *fault);
/* What the process should exit with: the program's own status unless a fault
 * is latched and fault_status (CUTAINT_EXIT_STATUS) is non-zero. */
int ct_final_status(int program_status, const char *fault, int fault_status);
/* ct_final_status, and then CUTAINT_ERROR_EXITCODE: a process that refused
 * at least one read and would still exit 0 exits error_status instead (0:
 * off).  So a lost context's status wins, and a non-zero status of the
 * program's own is kept. */
int ct_exit_status(int program_status, const char *fault, int fault_status, uint64_t refused_reads, int error_status);

#endif

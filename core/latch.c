/*
 * latch.c - the probe verdict, the first-writer-wins context-loss latch and
 * the exit status it maps to (docs/DESIGN.md, "Probe and latch").
 *
 * Invariants:
 * - ct_classify decides from probe_error alone; op and error only colour
 *   the reason text.
 * - state goes 0 -> 1 -> 2 and never back.  Exactly one setter wins the
 *   0 -> 1 compare-and-swap; it copies its reason and then publishes state 2
 *   with release order, so a reader that acquires state 2 sees the whole
 *   reason and a reader that sees 0 or 1 gets NULL.
 * - Reasons are cut at a UTF-8 character boundary, never mid-character.
 */
#include "latch.h"

#include "text.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define CT_STICKY                                                              \
    " \u2014 the CUDA context is destroyed; errors of this class are sticky: " \
    "every later driver call in this process returns the same status."

/* snprintf wrote n bytes (or would have): cut at a character boundary. */
static void end_reason(char *reason, size_t cap, int n)
{
    if (n > 0 && (size_t)n >= cap)
        reason[ct_utf8_boundary(reason, cap - 1)] = '\0';
}

/* Both classifiers: the verdict, and the reason (format...) when lost; an
 * isolated verdict leaves reason empty. */
__attribute__((format(printf, 4, 5))) static ct_fatality verdict(bool lost, char *reason, size_t cap,
                                                                 const char *format, ...)
{
    if (reason && cap)
        reason[0] = '\0';
    if (!lost)
        return CT_ISOLATED;
    if (reason && cap) {
        va_list args;
        va_start(args, format);
        end_reason(reason, cap, vsnprintf(reason, cap, format, args));
        va_end(args);
    }
    return CT_CONTEXT_LOST;
}

ct_fatality ct_classify(const char *op, const char *error, const char *probe_error, char *reason, size_t cap)
{
    return verdict(probe_error != NULL, reason, cap,
                   "%s failed (%s), and a synchronize issued afterwards also failed (%s)" CT_STICKY,
                   op ? op : "a driver call", error ? error : "unknown error", probe_error);
}

ct_fatality ct_classify_at_exit(const char *query_error, char *reason, size_t cap)
{
    return verdict(query_error != NULL, reason, cap,
                   "at exit, a query of the default stream returned %s: the context was lost "
                   "earlier, seen only by calls cutaint does not check" CT_STICKY,
                   query_error);
}

void ct_latch_init(ct_latch *l)
{
    atomic_init(&l->state, 0);
    l->reason[0] = '\0';
}

bool ct_latch_set(ct_latch *l, const char *reason)
{
    int open = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->state, &open, 1, memory_order_acq_rel, memory_order_acquire))
        return false;
    const char *text = reason ? reason : "the CUDA context is destroyed";
    ct_text_copy_cut(l->reason, sizeof l->reason, (ct_text){text, strnlen(text, sizeof l->reason)});
    assert(memchr(l->reason, '\0', sizeof l->reason) && "the reason is whole before state 2 publishes it");
    int was = atomic_exchange_explicit(&l->state, 2, memory_order_release);
    assert(was == 1 && "only the setter that won the latch publishes it");
    (void)was;
    return true;
}

const char *ct_latch_reason(const ct_latch *l)
{
    return ct_latch_is_set(l) ? l->reason : NULL;
}

bool ct_latch_is_set(const ct_latch *l)
{
    int state = atomic_load_explicit(&l->state, memory_order_acquire);
    assert((unsigned)state <= 2 && "state goes 0 -> 1 -> 2 only");
    return state == 2;
}

ct_latch *ct_latch_global(void)
{
    /* Zero-initialised static storage is an open latch: usable before any
     * constructor runs, which the shim needs (calls can arrive that early). */
    static ct_latch global;
    return &global;
}

int ct_exit_code(bool run_succeeded, const char *fault)
{
    if (fault)
        return CT_EXIT_GPU_FAULT;
    return run_succeeded ? 0 : 1;
}

int ct_final_status(int program_status, const char *fault, int fault_status)
{
    return fault && fault_status != 0 ? fault_status : program_status;
}

int ct_exit_status(int program_status, const char *fault, int fault_status, uint64_t refused_reads, int error_status)
{
    int status = ct_final_status(program_status, fault, fault_status);
    return status == 0 && refused_reads > 0 && error_status != 0 ? error_status : status;
}

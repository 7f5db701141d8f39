/*
 * fault.c - probe and latch: after an error, is the context still alive?
 *
 * docs/DESIGN.md "Probe and latch": after any error an intercepted call returned
 * (not NOT_READY, not cutaint's own answers), synchronise the legacy default
 * stream with the real driver.  Success: the failure was isolated.  Failure:
 * the context is destroyed; latch it (process-wide, first reason wins), log
 * once, report it at once, write the health file, apply
 * CUTAINT_ON_CONTEXT_LOSS, and at exit turn the status into the fault status
 * (or, with no loss, a refused read's 0 into CUTAINT_ERROR_EXITCODE).
 *
 * A loss can show itself first through a call cutaint does not wrap, in a
 * process that then exits at once (a Python exception).  So at exit, when
 * nothing was latched, one non-blocking query of the default stream looks
 * once more.
 *
 * Invariants:
 * - Only the probe (or the check at exit) decides, by core's rules
 *   (ct_answer_rule, ct_probe_rule, over shim/errnames.c's codes by kind);
 *   error codes appear only in the reason text.  An answer that says there is no usable context to
 *   judge (not initialised, deinitialised, no or a destroyed context) is not
 *   a loss: a false latch turns a clean exit into 70, as bad as a missed one.
 * - No probe without a current context on the calling thread, none during
 *   teardown (exit has begun, or the driver says DEINITIALIZED), none after
 *   an error of stream capture (the capture's rules, not the context), none
 *   while a capture may be live (the probe would break it); a capture
 *   error is never an answer that says loss.
 * - The check at exit never blocks (a query, not a synchronize), runs only in
 *   the process that loaded the driver, on a thread with a current context,
 *   and reads CUDA_ERROR_NOT_READY as alive.
 * - Once latched, no further probes.
 * - An exit that interrupted a wrapper on its thread (ct_mine.wrapper_depth > 0:
 *   a signal handler or a driver callback calling exit()) makes no driver
 *   call and takes no lock that the interrupted code may hold; the exit
 *   event says what was skipped.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errnames.h"
#include "ct_status.h"
#include "files.h"
#include "flight.h"
#include "kernels.h"
#include "shim.h"

int ct_fault_status(void)
{
    return ct_g.cfg.exit_status ? ct_g.cfg.exit_status : CT_EXIT_GPU_FAULT;
}

bool ct_has_current_context(void)
{
    __typeof__(&cuCtxGetCurrent) get_current = CT_HELPER(cuCtxGetCurrent);
    CUcontext ctx = NULL;
    return get_current && get_current(&ctx) == CUDA_SUCCESS && ctx != NULL;
}

/* Does a probe's answer say the context is destroyed?  (core/rules.h) */
static bool answer_is_loss(CUresult r)
{
    return ct_answer_rule(&ct_cuda_answers, (int)r) == CT_ANSWER_LOST;
}

/* ---- suspects: the work not proven finished (inflight.c, core/flight.h) --- */

#define CT_SUSPECTS_KEPT 16

typedef struct suspects {
    ct_suspect_desc d[CT_SUSPECTS_KEPT];
    size_t n, total;
} suspects;

static ct_suspect_desc describe_suspect(const ct_suspect *s)
{
    const ct_flight_work *w = &s->work;
    ct_suspect_desc d = {
        .api = w->api < CT_N_ENTRIES ? ct_entries[w->api].name : "?",
        .launch = w->seq,
        .stream = w->stream.handle,
        .thread = w->thread,
        .prime = s->prime,
    };
    if (w->kind == CT_FLIGHT_GRAPH) {
        d.graph = w->what;
        return d;
    }
    const ct_kernel *k = ct_kernel_for((CUfunction)(uintptr_t)w->what);
    d.kernel = k ? k->pretty : NULL;
    memcpy(d.grid, w->grid, sizeof d.grid);
    memcpy(d.block, w->block, sizeof d.block);
    return d;
}

/* The launches on the calling thread's context not proven finished. */
static void gather_suspects(suspects *out)
{
    ct_suspect found[CT_SUSPECTS_KEPT];
    out->total = ct_flight_suspects(ct_g.flight, ct_current_context(), found, CT_SUSPECTS_KEPT);
    out->n = out->total < CT_SUSPECTS_KEPT ? out->total : CT_SUSPECTS_KEPT;
    for (size_t i = 0; i < out->n; i++)
        out->d[i] = describe_suspect(&found[i]);
}

/* "crash(float*) (cuLaunchKernel, launch #3 on stream 0x0, grid 1x1x1, block
 * 256x1x1, thread 812)": a suspect for people. */
static void suspect_text(const ct_suspect_desc *d, char *out, size_t cap)
{
    if (d->graph)
        snprintf(out, cap, "graph 0x%llx (%s after launch #%llu on stream 0x%llx, thread %llu)",
                 (unsigned long long)d->graph, d->api, (unsigned long long)d->launch, (unsigned long long)d->stream,
                 (unsigned long long)d->thread);
    else
        snprintf(out, cap, "%s (%s, launch #%llu on stream 0x%llx, grid %ux%ux%u, block %ux%ux%u, thread %llu)",
                 d->kernel ? d->kernel : "<unnamed kernel>", d->api, (unsigned long long)d->launch,
                 (unsigned long long)d->stream, d->grid[0], d->grid[1], d->grid[2], d->block[0], d->block[1],
                 d->block[2], (unsigned long long)d->thread);
}

static void log_suspects(const suspects *s, bool simulated)
{
    if (s->total == 0) {
        ct_log(CT_LOG_ERROR, "   no suspect: every launch cutaint saw on this context was proven finished");
        return;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (!s->d[i].prime)
            continue;
        char what[1024], repro[4096] = "";
        suspect_text(&s->d[i], what, sizeof what);
        if (s->d[i].kernel && s->d[i].launch)
            ct_repro_line(s->d[i].launch, repro, sizeof repro);
        ct_log(CT_LOG_ERROR, "   prime suspect: %s, %s%s%s", what,
               simulated ? "the call CUTAINT_INJECT made lose the context"
                         : "the oldest launch not proven finished on its stream",
               repro[0] ? "; replay it: " : "", repro);
    }
    ct_log(CT_LOG_ERROR,
           "   %zu suspect%s in all (the report lists %zu): cutaint orders them, it cannot know "
           "which one faulted",
           s->total, s->total == 1 ? "" : "s", s->n);
}

/* The health file: the marker, then the reason, then the prime suspects.
 * Something at its path that cutaint did not write is never replaced. */
static void write_health_file(const char *reason, const suspects *s)
{
    if (!ct_g.cfg.health_file[0])
        return;
    char text[CT_REASON_MAX + 2 + 2 * 1100], why[CT_WHY_MAX] = "";
    int n = snprintf(text, sizeof text, "%s\n", reason);
    size_t primes = 0, shown = 0;
    for (size_t i = 0; i < s->n; i++)
        primes += s->d[i].prime;
    for (size_t i = 0; i < s->n && shown < 2 && n > 0 && (size_t)n < sizeof text; i++) {
        if (!s->d[i].prime)
            continue;
        char what[1024];
        suspect_text(&s->d[i], what, sizeof what);
        n += snprintf(text + n, sizeof text - (size_t)n, "prime suspect: %s\n", what);
        shown++;
    }
    if (primes > shown && n > 0 && (size_t)n < sizeof text)
        n += snprintf(text + n, sizeof text - (size_t)n, "%zu more prime suspects: see the report\n", primes - shown);
    if (n < 0 || (size_t)n >= sizeof text)
        n = (int)strlen(text);
    int rc =
        ct_marked_replace(ct_g.cfg.health_file, CT_HEALTH_MARKER, text, n > 0 ? (size_t)n : 0, true, why, sizeof why);
    if (rc == CT_OK)
        return;
    ct_metrics_output_failed(CT_OUTPUT_HEALTH);
    if (rc == CT_EEXIST)
        ct_log(CT_LOG_ERROR, "CUTAINT_HEALTH_FILE %s %s: it is left untouched, and no health file is written",
               ct_g.cfg.health_file, why);
    else
        ct_log(CT_LOG_ERROR, "could not write the health file %s (%s)", ct_g.cfg.health_file, why);
}

/* at_exit: the process is already leaving, with the fault status.
 * injected: a simulated loss's only suspect, the injected call. */
static void latch(const char *reason, bool simulated, bool at_exit, const ct_suspect_desc *injected)
{
    if (!ct_latch_set(ct_g.latch, reason))
        return;
    assert(ct_latch_is_set(ct_g.latch) && "the setter that won sees the latch set: no further probes");
    suspects s = {.n = 0};
    if (injected)
        s = (suspects){.d = {*injected}, .n = 1, .total = 1};
    else
        gather_suspects(&s);
    ct_log(CT_LOG_ERROR, "%s", reason);
    log_suspects(&s, simulated);
    ct_event_context_lost(reason, simulated, s.d, s.n, s.total);
    write_health_file(reason, &s);
    switch (ct_g.cfg.on_context_loss) {
    case CT_LOSS_EXIT:
        if (at_exit)
            break;
        ct_log(CT_LOG_ERROR, "exiting now with status %d (CUTAINT_ON_CONTEXT_LOSS=exit)", ct_fault_status());
        exit(ct_fault_status());
    case CT_LOSS_ABORT: ct_log(CT_LOG_ERROR, "aborting (CUTAINT_ON_CONTEXT_LOSS=abort)"); abort();
    case CT_LOSS_CONTINUE: break;
    }
}

static void operation_name(const char *api, const char *kernel, char *out, size_t cap)
{
    if (kernel)
        snprintf(out, cap, "%s(%s)", api, kernel);
    else
        snprintf(out, cap, "%s", api);
}

void ct_probe_after_error(const char *api, const char *kernel, CUresult error)
{
    if (!ct_probe_rule(&ct_cuda_answers, (int)error))
        return;
    /* Synchronising the legacy stream while a capture may be live would
     * break it (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT): the next error after
     * the capture ends probes. */
    if (atomic_load_explicit(&ct_captures_live, memory_order_relaxed) != 0) {
        ct_log(CT_LOG_DEBUG, "%s returned %s while a stream captures: no probe", api, ct_cu_error_name(error));
        return;
    }
    if (ct_latch_is_set(ct_g.latch) || atomic_load(&ct_g.exiting))
        return;
    CUresult (*sync)(CUstream) = (CUresult(*)(CUstream))ct_real(CT_ID_cuStreamSynchronize);
    if (!sync || !ct_has_current_context()) {
        ct_log(CT_LOG_DEBUG, "%s returned %s with no current context: no probe", api, ct_cu_error_name(error));
        return;
    }
    CUresult probe = sync(NULL);
    bool lost = answer_is_loss(probe) && !atomic_load(&ct_g.exiting);
    ct_event_probe(api, error, probe, lost);
    if (!lost)
        return;
    char op[512], reason[CT_REASON_MAX];
    operation_name(api, kernel, op, sizeof op);
    ct_fatality verdict = ct_classify(op, ct_cu_error_name(error), ct_cu_error_name(probe), reason, sizeof reason);
    assert(verdict == CT_CONTEXT_LOST && "the probe failed, and only the probe decides");
    (void)verdict;
    latch(reason, false, false, NULL);
}

void ct_simulate_context_loss(const char *api, const char *kernel)
{
    if (ct_latch_is_set(ct_g.latch))
        return;
    atomic_store(&ct_g.simulated_loss, true);
    ct_event_probe(api, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS, true);
    char op[512], reason[CT_REASON_MAX];
    operation_name(api, kernel, op, sizeof op);
    ct_fatality verdict = ct_classify(op, "CUDA_ERROR_ILLEGAL_ADDRESS, injected by CUTAINT_INJECT",
                                      "CUDA_ERROR_ILLEGAL_ADDRESS, simulated", reason, sizeof reason);
    assert(verdict == CT_CONTEXT_LOST && "a simulated probe failure is a loss");
    (void)verdict;
    ct_suspect_desc injected = {.api = api, .kernel = kernel, .prime = true, .thread = ct_thread_id()};
    if (kernel)
        ct_launch_in_flight(&injected.launch, &injected.stream, injected.grid, injected.block);
    latch(reason, true, false, &injected);
}

/* Nothing latched, the process leaving: one non-blocking look, for a loss
 * the program saw only through calls cutaint does not wrap.  It must come
 * while the driver still answers, and a driver tears itself down either in
 * its destructor or in an atexit handler it registers at cuInit, during
 * main (docs/LAYERS.md has the order, measured): an atexit handler of
 * cutaint's, registered when it loaded the driver (before the program's
 * cuInit), ran after the second kind of teardown and saw nothing.  So the
 * look is made from a thread-exit destructor of the thread that loaded
 * cutaint (the main thread: exit() there, or a return from main, runs it
 * before every exit handler), and again from cutaint's destructor, for an
 * exit from another thread (it comes before the driver's destructor; a
 * driver torn down by atexit is gone then, and answers no loss).  The
 * on_exit handler that decides the status runs after both. */
static void check_at_exit(void)
{
    if (ct_g.cfg.disable || ct_latch_is_set(ct_g.latch) || !ct_driver_used_here())
        return;
    if (ct_mine.wrapper_depth > 0) {
        /* The exit interrupted a driver call on this thread: the driver may
         * hold a lock the query would wait for, forever. */
        atomic_store(&ct_g.exit_interrupted, true);
        atomic_store(&ct_g.exit_check_skipped, true);
        return;
    }
    __typeof__(&cuStreamQuery) query = (__typeof__(&cuStreamQuery))ct_real(CT_ID_cuStreamQuery);
    if (!query || !ct_has_current_context())
        return;
    CUresult r = query(NULL);
    if (!answer_is_loss(r))
        return;
    ct_event_probe("exit", r, r, true);
    char reason[CT_REASON_MAX];
    ct_fatality verdict = ct_classify_at_exit(ct_cu_error_name(r), reason, sizeof reason);
    assert(verdict == CT_CONTEXT_LOST && "the check at exit found a loss, and says why");
    (void)verdict;
    latch(reason, false, true, NULL);
}

static void check_as_exit_begins(void *unused)
{
    (void)unused;
    check_at_exit();
}

/* glibc's registration of thread_local destructors (the C++ ABI's). */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *arg, void *dso);
extern void *__dso_handle;

void ct_arm_exit_check(void)
{
    if (__cxa_thread_atexit_impl(check_as_exit_begins, NULL, &__dso_handle) != 0)
        ct_log(CT_LOG_DEBUG, "cannot look for a loss as exit begins: it is looked for at unload only, after "
                             "a driver that tears itself down at exit");
}

__attribute__((destructor)) static void check_at_unload(void)
{
    if (atomic_load(&ct_g.ready) == 2)
        check_at_exit();
}

void ct_on_exit(int status, void *unused)
{
    (void)unused;
    status &= 0xff; /* what the parent sees: exit(-1) is 255 */
    if (ct_mine.wrapper_depth > 0)
        atomic_store(&ct_g.exit_interrupted, true);
    atomic_store(&ct_g.exiting, true);
    int final =
        ct_exit_status(status, ct_latch_reason(ct_g.latch), ct_g.cfg.exit_status,
                       atomic_load(&ct_g.refused_reads) + atomic_load(&ct_g.failed_reads), ct_g.cfg.error_exitcode);
    assert(final >= 0 && final <= 255 && "every status it may pick is a byte (the variables parse 0..255)");
    ct_log_summary();
    ct_event_exit(final, status);
    if (final != status) {
        /* The program's own handlers registered after us have run; flush
         * what it printed and leave with the fault status. */
        fflush(NULL);
        _exit(final);
    }
}

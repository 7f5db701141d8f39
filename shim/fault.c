/*
 * fault.c - probe and latch: after an error, is the context still alive?
 *
 * DESIGN.md "Probe and latch": after any error an intercepted call returned
 * (not NOT_READY, not cutaint's own answers), synchronise the legacy default
 * stream with the real driver.  Success: the failure was isolated.  Failure:
 * the context is destroyed; latch it (process-wide, first reason wins), log
 * once, report it at once, write the health file, apply
 * CUTAINT_ON_CONTEXT_LOSS, and at exit turn the status into the fault status
 * (or, with no loss, a refused read's 0 into CUTAINT_ERROR_EXITCODE).
 *
 * Invariants:
 * - Only the probe decides; error codes appear only in the reason text.
 * - No probe without a current context on the calling thread, none during
 *   teardown (exit has begun, or the driver says DEINITIALIZED): a false
 *   latch turns a clean exit into 70, as bad as a missed one.
 * - Once latched, no further probes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "errnames.h"
#include "files.h"
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

static void latch(const char *reason, bool simulated)
{
    if (!ct_latch_set(ct_g.latch, reason))
        return;
    ct_log(CT_LOG_ERROR, "%s", reason);
    ct_event_context_lost(reason, simulated);
    if (ct_g.cfg.health_file[0] && ct_health_write(ct_g.cfg.health_file, reason) != 0)
        ct_log(CT_LOG_ERROR, "could not write the health file %s", ct_g.cfg.health_file);
    switch (ct_g.cfg.on_context_loss) {
    case CT_LOSS_EXIT:
        ct_log(CT_LOG_ERROR, "exiting now with status %d (CUTAINT_ON_CONTEXT_LOSS=exit)", ct_fault_status());
        exit(ct_fault_status());
    case CT_LOSS_ABORT:
        ct_log(CT_LOG_ERROR, "aborting (CUTAINT_ON_CONTEXT_LOSS=abort)");
        abort();
    case CT_LOSS_CONTINUE:
        break;
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
    if (error == CUDA_ERROR_NOT_READY || error == CUDA_ERROR_DEINITIALIZED)
        return;
    if (ct_latch_is_set(ct_g.latch) || atomic_load(&ct_g.exiting))
        return;
    CUresult (*sync)(CUstream) = (CUresult(*)(CUstream))ct_real(CT_ID_cuStreamSynchronize);
    if (!sync || !ct_has_current_context()) {
        ct_log(CT_LOG_DEBUG, "%s returned %s with no current context: no probe", api, ct_cu_error_name(error));
        return;
    }
    CUresult probe = sync(NULL);
    bool lost = probe != CUDA_SUCCESS && probe != CUDA_ERROR_DEINITIALIZED && !atomic_load(&ct_g.exiting);
    ct_event_probe(api, error, probe, lost);
    if (!lost)
        return;
    char op[512], reason[CT_REASON_MAX];
    operation_name(api, kernel, op, sizeof op);
    ct_classify(op, ct_cu_error_name(error), ct_cu_error_name(probe), reason, sizeof reason);
    latch(reason, false);
}

void ct_simulate_context_loss(const char *api, const char *kernel)
{
    if (ct_latch_is_set(ct_g.latch))
        return;
    atomic_store(&ct_g.simulated_loss, true);
    ct_event_probe(api, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS, true);
    char op[512], reason[CT_REASON_MAX];
    operation_name(api, kernel, op, sizeof op);
    ct_classify(op, "CUDA_ERROR_ILLEGAL_ADDRESS, injected by CUTAINT_INJECT",
                "CUDA_ERROR_ILLEGAL_ADDRESS, simulated", reason, sizeof reason);
    latch(reason, true);
}

void ct_on_exit(int status, void *unused)
{
    (void)unused;
    atomic_store(&ct_g.exiting, true);
    int final = ct_exit_status(status, ct_latch_reason(ct_g.latch), ct_g.cfg.exit_status,
                               atomic_load(&ct_g.refused_reads), ct_g.cfg.error_exitcode);
    ct_event_summary();
    ct_event_exit(final, status);
    if (final != status) {
        /* The program's own handlers registered after us have run; flush
         * what it printed and leave with the fault status. */
        fflush(NULL);
        _exit(final);
    }
}

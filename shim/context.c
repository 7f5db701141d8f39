/*
 * context.c - contexts: which one is current on each thread, and what a
 * context takes with it when it goes.
 *
 * Each allocation belongs to the context current on the thread that made it
 * (core's owner).  Asking the driver for it on every allocation would put a
 * driver call on the allocation path, so each thread mirrors its own current
 * context from the calls that set it (cuCtxSetCurrent, cuCtxPushCurrent,
 * cuCtxCreate).  After a call that leaves a context this thread did not name
 * current (cuCtxPopCurrent, cuCtxDestroy, cuCtxSetCurrent(NULL)) the mirror
 * says it does not know, and the next allocation asks the driver once.
 *
 * A context goes with cuCtxDestroy, cuDevicePrimaryCtxReset, and the
 * cuDevicePrimaryCtxRelease that drops the primary context's last reference.
 * Then every allocation made in it is forgotten with its claims, and the
 * kernels of its modules: the driver will place other memory at those
 * addresses and other kernels behind those handles.  Failures already
 * reported stay in the report.
 *
 * Invariants:
 * - The mirror holds what the driver's own stack holds for this thread (a
 *   handle, valid or not), or says it does not know: never a guess.
 * - Forgetting happens only after the driver said the context is gone.
 * - Stream-ordered allocations (cuMemAllocAsync, cuMemAllocFromPoolAsync)
 *   belong to no context: the driver does not free them with one.
 * - A context made current by a path cutaint does not wrap is seen at the
 *   next wrapped context call (docs/PRECISION.md, "Precision and known gaps").
 */
#include <assert.h>

#include "shim.h"

CT_HOT_TLS ct_context_mirror ct_mirror;

static uint64_t handle_of(CUcontext ctx)
{
    return (uint64_t)(uintptr_t)ctx;
}

static void mirror_set(uint64_t ctx)
{
    ct_mirror.ctx = ctx;
    ct_mirror.known = true;
}

static void mirror_forget(void)
{
    ct_mirror.known = false;
}

uint64_t ct_current_context_slow(void)
{
    {
        __typeof__(&cuCtxGetCurrent) get_current = CT_HELPER(cuCtxGetCurrent);
        CUcontext ctx = NULL;
        if (!get_current || get_current(&ctx) != CUDA_SUCCESS)
            return 0; /* not cached: the next allocation asks again */
        mirror_set(handle_of(ctx));
    }
    return ct_mirror.ctx;
}

/* ---- the calls that change this thread's current context --------------- */

void ct_after_ctx_set(ct_call *call, CUcontext ctx)
{
    if (call->result != CUDA_SUCCESS)
        return;
    if (ctx)
        mirror_set(handle_of(ctx));
    else
        mirror_forget(); /* NULL unbinds: what is current now is the driver's to say */
}

void ct_after_ctx_push(ct_call *call, CUcontext ctx)
{
    if (call->result == CUDA_SUCCESS)
        mirror_set(handle_of(ctx));
}

void ct_after_ctx_pop(ct_call *call)
{
    if (call->result == CUDA_SUCCESS)
        mirror_forget();
}

void ct_after_ctx_create(ct_call *call, uint64_t created)
{
    if (call->result == CUDA_SUCCESS && created)
        mirror_set(created); /* a created context is pushed on the creating thread */
}

/* ---- the calls that take a context away ---------------------------------- */

/* ctx is gone, as the driver's answer to call says: forget what it held. */
static void context_gone(const ct_call *call, uint64_t ctx)
{
    assert(call->result == CUDA_SUCCESS && "forgetting follows the driver saying the context is gone");
    const char *how = ct_entries[call->id].name;
    if (!ctx)
        return;
    size_t allocations = ct_store_forget_owner(ct_g.store, ctx);
    size_t kernels = ct_kernels_forget_context(ctx);
    ct_graphs_forget_context(ctx);
    ct_log(CT_LOG_INFO, "context 0x%llx is gone (%s): %zu allocation%s and %zu kernel%s forgotten",
           (unsigned long long)ctx, how, allocations, allocations == 1 ? "" : "s", kernels, kernels == 1 ? "" : "s");
}

void ct_after_ctx_destroy(ct_call *call, CUcontext ctx)
{
    if (call->result != CUDA_SUCCESS)
        return;
    mirror_forget(); /* popped if it was current here */
    context_gone(call, handle_of(ctx));
}

static bool primary_active(CUdevice dev)
{
    __typeof__(&cuDevicePrimaryCtxGetState) get_state = CT_HELPER(cuDevicePrimaryCtxGetState);
    unsigned flags = 0;
    int active = 0;
    return get_state && get_state(dev, &flags, &active) == CUDA_SUCCESS && active;
}

/* The primary context of dev, 0 when it is not active.  The driver names it
 * only to a retain, so it is retained and released again (a no-op on an
 * active context); whoever retained it before - the program, or the CUDA
 * runtime through its private tables - may not have told cutaint. */
static uint64_t primary_of(CUdevice dev)
{
    __typeof__(&cuDevicePrimaryCtxRetain) retain = CT_HELPER(cuDevicePrimaryCtxRetain);
    void *release_fn = ct_real(CT_ID_cuDevicePrimaryCtxRelease_v2);
    if (!release_fn)
        release_fn = ct_real(CT_ID_cuDevicePrimaryCtxRelease);
    __typeof__(&cuDevicePrimaryCtxRelease_v2) release = (__typeof__(&cuDevicePrimaryCtxRelease_v2))release_fn;
    CUcontext ctx = NULL;
    if (!retain || !release || !primary_active(dev) || retain(&ctx, dev) != CUDA_SUCCESS)
        return 0;
    release(dev);
    return handle_of(ctx);
}

bool ct_before_primary_drop(ct_call *call, CUdevice dev)
{
    call->subject = primary_of(dev);
    return true;
}

void ct_after_primary_reset(ct_call *call)
{
    if (call->result == CUDA_SUCCESS)
        context_gone(call, call->subject);
}

void ct_after_primary_release(ct_call *call, CUdevice dev)
{
    /* Only the last reference takes the context with it. */
    if (call->result == CUDA_SUCCESS && !primary_active(dev))
        context_gone(call, call->subject);
}

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
 * The driver hands a destroyed context's handle to the next context made,
 * on any thread, at once.  So what cutaint knows of a context is filed under
 * its handle's lifetime id (core/lifetimes.h, ct_g.contexts), which the
 * mirror carries: cuCtxCreate starts a new lifetime, so does a primary
 * retain while another thread's drop of the same handle is in flight, and a
 * handle first seen otherwise.
 *
 * A context goes with cuCtxDestroy, cuDevicePrimaryCtxReset, and the
 * cuDevicePrimaryCtxRelease that drops the primary context's last reference.
 * Then every allocation made in it is forgotten with its claims, and the
 * kernels of its modules and its graph execs: the driver will place other
 * memory at those addresses and other kernels behind those handles.
 * Failures already reported stay in the report.
 *
 * Invariants:
 * - The mirror holds the lifetime of what the driver's own stack holds for
 *   this thread (a handle, valid or not), or says it does not know: never a
 *   guess.
 * - The lifetime a destroy or drop may end is taken before the driver's
 *   call; what is filed under it is forgotten only after the driver said
 *   the context is gone, and only that: a new context that received the
 *   handle in between has another lifetime, and a destroy the driver
 *   refuses (a primary context's, a bogus handle) forgets nothing.
 * - Stream-ordered allocations (cuMemAllocAsync, cuMemAllocFromPoolAsync)
 *   belong to no context: the driver does not free them with one.
 * - A context made current by a path cutaint does not wrap is seen at the
 *   next wrapped context call (docs/PRECISION.md, "Precision and known gaps").
 */
#include <assert.h>

#include "shim.h"

static uint64_t handle_of(CUcontext ctx)
{
    return (uint64_t)(uintptr_t)ctx;
}

uint64_t ct_context_lifetime(CUcontext ctx)
{
    return ct_lifetime_of(ct_g.contexts, handle_of(ctx));
}

static void mirror_set(uint64_t lifetime)
{
    ct_mine.mirror.lifetime = lifetime;
    ct_mine.mirror.known = true;
}

static void mirror_forget(void)
{
    ct_mine.mirror.known = false;
}

uint64_t ct_current_context_slow(void)
{
    {
        __typeof__(&cuCtxGetCurrent) get_current = CT_HELPER(cuCtxGetCurrent);
        CUcontext ctx = NULL;
        if (!get_current || get_current(&ctx) != CUDA_SUCCESS)
            return 0; /* not cached: the next allocation asks again */
        mirror_set(ct_context_lifetime(ctx));
    }
    return ct_mine.mirror.lifetime;
}

static void forget_context(uint64_t lifetime, uint64_t handle, const char *how);

/* ---- the calls that change this thread's current context --------------- */

void ct_after_ctx_set(ct_call *call, CUcontext ctx)
{
    if (call->result != CUDA_SUCCESS)
        return;
    if (ctx)
        mirror_set(ct_context_lifetime(ctx));
    else
        mirror_forget(); /* NULL unbinds: what is current now is the driver's to say */
}

void ct_after_ctx_push(ct_call *call, CUcontext ctx)
{
    if (call->result == CUDA_SUCCESS)
        mirror_set(ct_context_lifetime(ctx));
}

void ct_after_ctx_pop(ct_call *call)
{
    if (call->result == CUDA_SUCCESS)
        mirror_forget();
}

/* The driver handed out the handle again: the context it named before is
 * gone, whether cutaint saw it go or another thread's forget is to come. */
void ct_after_ctx_create(ct_call *call, uint64_t created)
{
    if (call->result != CUDA_SUCCESS || !created)
        return;
    uint64_t replaced;
    mirror_set(ct_lifetime_born(ct_g.contexts, created, &replaced)); /* pushed on the creating thread */
    forget_context(replaced, created, ct_entries[call->id].name);
}

/* The retain that makes a primary context may hand out a handle whose old
 * lifetime another thread is still ending. */
void ct_after_primary_retain(ct_call *call, uint64_t retained)
{
    if (call->result == CUDA_SUCCESS && retained)
        ct_lifetime_retained(ct_g.contexts, retained);
}

/* ---- the calls that take a context away ---------------------------------- */

/* The context of handle (its lifetime, `how` it went) is gone: forget
 * what was filed under its lifetime. */
static void forget_context(uint64_t lifetime, uint64_t handle, const char *how)
{
    if (!lifetime)
        return;
    size_t allocations = ct_store_forget_owner(ct_g.store, lifetime);
    size_t kernels = ct_kernels_forget_context(lifetime);
    ct_graphs_forget_context(lifetime);
    ct_log(CT_LOG_INFO, "context 0x%llx is gone (%s): %zu allocation%s and %zu kernel%s forgotten",
           (unsigned long long)handle, how, allocations, allocations == 1 ? "" : "s", kernels, kernels == 1 ? "" : "s");
}

/* The lifetime call took before the driver's call ended iff gone, as the
 * driver's answer says. */
static void context_ended(const ct_call *call, bool gone)
{
    ct_lifetime_ended(ct_g.contexts, call->subject, call->lifetime, gone);
    assert((!gone || call->result == CUDA_SUCCESS) && "forgetting follows the driver saying the context is gone");
    if (gone)
        forget_context(call->lifetime, call->subject, ct_entries[call->id].name);
}

bool ct_before_ctx_destroy(ct_call *call, CUcontext ctx)
{
    call->subject = handle_of(ctx);
    call->lifetime = ct_lifetime_ending(ct_g.contexts, call->subject);
    return true;
}

void ct_after_ctx_destroy(ct_call *call)
{
    if (call->result == CUDA_SUCCESS)
        mirror_forget(); /* popped if it was current here */
    context_ended(call, call->result == CUDA_SUCCESS);
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
    call->lifetime = ct_lifetime_ending(ct_g.contexts, call->subject);
    return true;
}

void ct_after_primary_reset(ct_call *call)
{
    context_ended(call, call->result == CUDA_SUCCESS);
}

void ct_after_primary_release(ct_call *call, CUdevice dev)
{
    /* Only the last reference takes the context with it. */
    context_ended(call, call->result == CUDA_SUCCESS && !primary_active(dev));
}

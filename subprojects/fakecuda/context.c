/*
 * context.c: contexts (the device's primary context and created ones) and
 * each thread's stack of current contexts.
 *
 * Invariants:
 * - The current context is the top of the calling thread's stack; the stack
 *   may hold handles of destroyed contexts, which every use rejects with
 *   CUDA_ERROR_INVALID_CONTEXT (as the real driver does).
 * - primary is non-NULL exactly while primary_refs > 0; both change only
 *   under primary_lock.
 * - Releasing a context runs its context-local storage destructors
 *   (private.c) while it is still whole, then its pending work, then frees
 *   everything it owns: streams, events, modules and their functions,
 *   device memory, and last its queue, whose worker (async mode) is joined.
 */
#include "fakecuda.h"

#include <assert.h>

#define FC_CTX_STACK 64

static _Thread_local CUcontext tls_stack[FC_CTX_STACK];
static _Thread_local int tls_depth;

static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary;
static int primary_refs;
static unsigned primary_flags; /* kept across resets, as the real driver keeps them */

/* Under primary_lock. */
static void primary_check_locked(void)
{
    assert((primary != NULL) == (primary_refs > 0) && "primary lives exactly while it is retained");
}

static CUresult fc_ctx_check(CUcontext c)
{
    return fc_obj_valid(c, FC_K_CTX) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult fc_current(CUcontext *ctx)
{
    assert(tls_depth >= 0 && tls_depth <= FC_CTX_STACK && "the stack never passes its ends");
    *ctx = tls_depth > 0 ? tls_stack[tls_depth - 1] : NULL;
    return fc_ctx_check(*ctx);
}

CUresult fc_ctx_or_current(CUcontext *ctx)
{
    return *ctx ? fc_ctx_check(*ctx) : fc_current(ctx);
}

/* cuCtxGetId: NULL is the current context. */
CUresult fc_ctx_get_id(CUcontext ctx, unsigned long long *id)
{
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_ctx_or_current(&ctx);
    if (r == CUDA_SUCCESS)
        *id = ctx->id;
    return r;
}

static CUresult fc_ctx_new(CUcontext *out, unsigned flags, bool is_primary)
{
    CUcontext c = fc_obj_new(FC_P_CTX, FC_K_CTX, NULL);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    static _Atomic uint64_t last_id;
    c->id = atomic_fetch_add(&last_id, 1) + 1; /* never 0, never reused */
    c->flags = flags;
    c->primary = is_primary;
    fc_ctx_settings_init(&c->settings);
    if (fc_queue_init(&c->q) != CUDA_SUCCESS) {
        fc_obj_free(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = c;
    return CUDA_SUCCESS;
}

static void fc_ctx_release(CUcontext c)
{
    fc_ctx_storage_drop(c);
    fc_drain_all(c);
    fc_obj_free_owned(FC_P_STREAM, c, fc_capture_stream_gone);
    fc_obj_free_owned(FC_P_EVENT, c, fc_capture_event_gone);
    fc_obj_free_owned(FC_P_FUNC, c, NULL);
    fc_obj_free_owned(FC_P_MODULE, c, fc_module_release);
    fc_obj_free_owned(FC_P_TEXOBJ, c, NULL); /* their memory is the context's */
    fc_obj_free_owned(FC_P_ARRAY, c, NULL);
    fc_mem_release_ctx(c);
    fc_queue_fini(c);
    fc_obj_free(c);
}

CUresult fc_ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    if (!pctx || (flags & ~(unsigned)CU_CTX_FLAGS_MASK))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_device_check(dev);
    if (r == CUDA_SUCCESS)
        r = fc_ctx_new(pctx, flags, false);
    return r == CUDA_SUCCESS ? fc_ctx_push(*pctx) : r;
}

/* Execution affinity is not emulated: the parameters are checked, then ignored. */
CUresult fc_ctx_create_v3(CUcontext *pctx, CUexecAffinityParam *ap, int nap, unsigned flags, CUdevice dev)
{
    if (nap < 0 || (nap > 0 && !ap))
        return CUDA_ERROR_INVALID_VALUE;
    return fc_ctx_create(pctx, flags, dev);
}

CUresult fc_ctx_create_v4(CUcontext *pctx, CUctxCreateParams *cp, unsigned flags, CUdevice dev)
{
    (void)cp;
    return fc_ctx_create(pctx, flags, dev);
}

static void fc_stack_remove(CUcontext c)
{
    int out = 0;
    for (int i = 0; i < tls_depth; i++)
        if (tls_stack[i] != c)
            tls_stack[out++] = tls_stack[i];
    tls_depth = out;
}

CUresult fc_ctx_destroy(CUcontext c)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_ctx_check(c) != CUDA_SUCCESS || c->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_stack_remove(c);
    fc_ctx_release(c);
    return CUDA_SUCCESS;
}

CUresult fc_ctx_get_current(CUcontext *pctx)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = tls_depth > 0 ? tls_stack[tls_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

CUresult fc_ctx_set_current(CUcontext c)
{
    if (!c) {
        tls_depth -= tls_depth > 0;
        return CUDA_SUCCESS;
    }
    if (fc_ctx_check(c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth == 0)
        tls_depth = 1;
    tls_stack[tls_depth - 1] = c;
    return CUDA_SUCCESS;
}

CUresult fc_ctx_push(CUcontext c)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_ctx_check(c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth == FC_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    tls_stack[tls_depth++] = c;
    return CUDA_SUCCESS;
}

CUresult fc_ctx_pop(CUcontext *pctx)
{
    if (tls_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext c = tls_stack[--tls_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

CUresult fc_ctx_get_device(CUdevice *dev, CUcontext c)
{
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_ctx_or_current(&c);
    if (r == CUDA_SUCCESS)
        *dev = c->dev;
    return r;
}

CUresult fc_ctx_synchronize(CUcontext c)
{
    CUresult r = fc_ctx_or_current(&c);
    if (r == CUDA_SUCCESS)
        r = fc_capture_sync_ctx(c);
    return r == CUDA_SUCCESS ? fc_drain_all(c) : r;
}

CUresult fc_primary_retain(CUcontext *pctx, CUdevice dev)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&primary_lock);
    if (!primary)
        r = fc_ctx_new(&primary, primary_flags, true);
    if (r == CUDA_SUCCESS) {
        primary_refs++;
        *pctx = primary;
    }
    primary_check_locked();
    pthread_mutex_unlock(&primary_lock);
    return r;
}

static void fc_primary_drop_locked(void)
{
    if (primary)
        fc_ctx_release(primary);
    primary = NULL;
    primary_refs = 0;
}

CUresult fc_primary_release(CUdevice dev)
{
    CUresult r = fc_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&primary_lock);
    if (primary_refs == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else if (--primary_refs == 0)
        fc_primary_drop_locked();
    primary_check_locked();
    pthread_mutex_unlock(&primary_lock);
    return r;
}

CUresult fc_primary_reset(CUdevice dev)
{
    CUresult r = fc_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&primary_lock);
    fc_primary_drop_locked();
    primary_check_locked();
    pthread_mutex_unlock(&primary_lock);
    return CUDA_SUCCESS;
}

CUresult fc_primary_state(CUdevice dev, unsigned *flags, int *active)
{
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&primary_lock);
    primary_check_locked();
    *flags = primary_flags;
    *active = primary != NULL;
    pthread_mutex_unlock(&primary_lock);
    return CUDA_SUCCESS;
}

/* The flags apply to the primary context made next, and to the live one. */
CUresult fc_primary_set_flags(CUdevice dev, unsigned flags)
{
    if (flags & ~(unsigned)CU_CTX_FLAGS_MASK)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_device_check(dev);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&primary_lock);
    primary_flags = flags;
    if (primary)
        primary->flags = flags;
    pthread_mutex_unlock(&primary_lock);
    return CUDA_SUCCESS;
}

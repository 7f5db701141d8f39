/*
 * kernels.c - the kernel registry: which kernel is behind a function handle,
 * and its description (name, parameter layout, roles).
 *
 * A kernel's description is built once, the first time a launch needs it:
 * from cuFuncGetParamInfo when the driver has it, else from the mangled
 * signature; roles from the demangled signature (const T* is read only),
 * CUTAINT_ARGS overriding.  Kernels are never forgotten, so a pointer to one
 * stays valid for the life of the process.
 *
 * Invariants:
 * - The registry is changed under kernels_lock only; a description, once
 *   published (described), never changes.
 * - Names are interned in the store: they outlive every entry.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "signature.h"

#define CT_KERNEL_CACHE 8

static ct_kernel *kernels;
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;

static CT_HOT_TLS struct {
    uint64_t handle;
    ct_kernel *kernel;
} kernel_cache[CT_KERNEL_CACHE];

void ct_kernels_atfork_child(void)
{
    pthread_mutex_init(&kernels_lock, NULL);
}

/* ---- the kernel registry ------------------------------------------------- */

static const char *intern(const char *name)
{
    return name ? ct_store_intern(ct_g.store, name) : NULL;
}

static void name_kernel(ct_kernel *k, const char *mangled)
{
    ct_signature *sig = malloc(sizeof *sig);
    k->mangled = intern(mangled);
    if (sig && ct_signature_from_mangled(mangled, sig) == 0) {
        k->pretty = intern(sig->demangled);
        k->base = intern(sig->base);
    } else {
        k->pretty = k->base = k->mangled;
    }
    free(sig);
}

/* The registry entry of a handle, created on first sight. */
static ct_kernel *kernel_entry(uint64_t handle)
{
    ct_kernel *k;
    pthread_mutex_lock(&kernels_lock);
    HASH_FIND(hh, kernels, &handle, sizeof handle, k);
    if (!k && (k = calloc(1, sizeof *k))) {
        k->handle = handle;
        HASH_ADD(hh, kernels, handle, sizeof handle, k);
        if (!ct_hash_added(&k->hh)) { /* out of memory: the kernel stays unknown */
            free(k);
            k = NULL;
        }
    }
    pthread_mutex_unlock(&kernels_lock);
    return k;
}

static void remember_name(uint64_t handle, const char *mangled)
{
    ct_kernel *k = kernel_entry(handle);
    if (!k || !mangled)
        return;
    pthread_mutex_lock(&kernels_lock);
    if (!k->mangled)
        name_kernel(k, mangled);
    pthread_mutex_unlock(&kernels_lock);
}

static const char *name_of(uint64_t handle)
{
    ct_kernel *k = kernel_entry(handle);
    pthread_mutex_lock(&kernels_lock);
    const char *name = k ? k->mangled : NULL;
    pthread_mutex_unlock(&kernels_lock);
    return name;
}

void ct_after_name(ct_call *call, uint64_t handle, const char *name, uint64_t named_like)
{
    if (call->result != CUDA_SUCCESS || handle == 0)
        return;
    remember_name(handle, name ? name : name_of(named_like));
}

/* Ask the driver for a name nobody told us (functions from other paths). */
static void name_from_driver(ct_kernel *k, CUfunction f)
{
    __typeof__(&cuFuncGetName) get_name = CT_HELPER(cuFuncGetName);
    const char *name = NULL;
    if (get_name && get_name(&name, f) == CUDA_SUCCESS && name)
        remember_name(k->handle, name);
    if (!k->mangled)
        remember_name(k->handle, "<unnamed kernel>");
}

/* ---- parameter layout and roles ----------------------------------------- */

/* Layout from the driver: offsets and sizes of every parameter. */
static unsigned layout_from_driver(CUfunction f, ct_param *out, unsigned cap)
{
    __typeof__(&cuFuncGetParamInfo) info = CT_HELPER(cuFuncGetParamInfo);
    if (!info)
        return 0;
    unsigned n = 0;
    size_t offset, size;
    while (n < cap && info(f, n, &offset, &size) == CUDA_SUCCESS) {
        out[n] = (ct_param){.offset = (uint32_t)offset, .size = (uint32_t)size};
        n++;
    }
    return n;
}

static uint8_t role_from_signature(uint8_t kind)
{
    switch (kind) {
    case CT_PARAM_CONST_PTR: return CT_ROLE_READ;
    case CT_PARAM_PTR:
    case CT_PARAM_AGGREGATE: return CT_ROLE_READWRITE;
    default: return CT_ROLE_IGNORE;
    }
}

/* Roles: CUTAINT_ARGS first, then the signature, then the size (a kernel
 * without a signature: every 8-byte parameter may be a pointer, larger ones
 * are scanned, smaller ones cannot hold one). */
static void assign_roles(ct_kernel *k, const ct_signature *sig, bool have_sig)
{
    const ct_arg_rule *rule = ct_args_match(&ct_g.cfg.args, k->mangled, k->base);
    for (unsigned i = 0; i < k->n_params; i++) {
        ct_param *p = &k->params[i];
        if (have_sig && i < sig->n_params) {
            p->role = role_from_signature(sig->kind[i]);
            p->scan = sig->kind[i] == CT_PARAM_AGGREGATE;
        } else {
            p->role = p->size >= 8 ? CT_ROLE_READWRITE : CT_ROLE_IGNORE;
            p->scan = p->size > 8;
        }
        if (rule && i < rule->n_roles && rule->role[i] != CT_ROLE_DEFAULT)
            p->role = rule->role[i];
    }
}

/* Without a driver layout, a signature made only of pointers and values still
 * says where the pointers are: each is a separate kernelParams entry.  Values
 * and aggregates of unknown size are left alone. */
static unsigned layout_from_signature(const ct_signature *sig, ct_param *out)
{
    for (unsigned i = 0; i < sig->n_params; i++) {
        bool pointer = sig->kind[i] == CT_PARAM_PTR || sig->kind[i] == CT_PARAM_CONST_PTR;
        out[i] = (ct_param){.offset = 0, .size = pointer ? 8 : 0};
    }
    return sig->n_params;
}

static void describe(ct_kernel *k, CUfunction f)
{
    ct_param scratch[CT_SIG_MAX_PARAMS * 2];
    ct_signature *sig = malloc(sizeof *sig);
    bool have_sig = sig && k->mangled && ct_signature_from_mangled(k->mangled, sig) == 0;
    unsigned n = layout_from_driver(f, scratch, sizeof scratch / sizeof *scratch);
    bool layout_known = n > 0;
    if (!layout_known && have_sig)
        n = layout_from_signature(sig, scratch);
    ct_param *params = n ? calloc(n, sizeof *params) : NULL;
    if (n && !params)
        n = 0;
    if (n)
        memcpy(params, scratch, n * sizeof *params);
    if (n == 0 && !have_sig)
        ct_log(CT_LOG_INFO, "no parameter layout for kernel %s: its launches are treated as touching "
               "no tracked memory", k->pretty);

    pthread_mutex_lock(&kernels_lock);
    if (!atomic_load(&k->described)) {
        k->params = params;
        k->n_params = n;
        k->layout_known = layout_known;
        assign_roles(k, sig, have_sig);
        atomic_store(&k->described, true);
        params = NULL;
    }
    pthread_mutex_unlock(&kernels_lock);
    free(params);
    free(sig);
}

static bool named(ct_kernel *k)
{
    pthread_mutex_lock(&kernels_lock);
    bool known = k->mangled != NULL;
    pthread_mutex_unlock(&kernels_lock);
    return known;
}

ct_kernel *ct_kernel_for(CUfunction f)
{
    uint64_t handle = (uint64_t)(uintptr_t)f;
    unsigned slot = (unsigned)(handle >> 4) % CT_KERNEL_CACHE;
    if (kernel_cache[slot].handle == handle && kernel_cache[slot].kernel)
        return kernel_cache[slot].kernel;
    ct_kernel *k = kernel_entry(handle);
    if (!k)
        return NULL;
    if (!atomic_load(&k->described)) {
        if (!named(k))
            name_from_driver(k, f);
        describe(k, f);
    }
    kernel_cache[slot].handle = handle;
    kernel_cache[slot].kernel = k;
    return k;
}


/*
 * sass.c: kernels fakecuda has no code for (FAKECUDA_SASS). A kernel that
 * no built-in, plugin or PTX of its image computes is, by default (fail),
 * CUDA_ERROR_NOT_FOUND at its lookup, as before this setting. With
 * FAKECUDA_SASS=nowrite the lookup succeeds for every name the module's
 * image holds (every name, where fakecuda could not list them), and each
 * launch of it succeeds and writes nothing: NVIDIA's libraries, whose
 * kernels ship as SASS only, then run to completion with correct statuses,
 * their outputs left as they were.
 * Invariants:
 * - Under nowrite, a variable of the module's cubin (an STT_OBJECT symbol,
 *   its st_size) is placed zeroed in device memory at its first request
 *   (cuLibraryGetGlobal; the cubin's initial values are not read).
 * - A module's no-op kernels, their handles and variables live exactly as long as
 *   the module (fc_nowrite_detach from fc_module_release); a name gets one
 *   no-op kernel per module, made at its first lookup.
 * - A no-op kernel has no parameters to check (nothing says how many the
 *   SASS takes) and never touches device memory.
 */
#include "fakecuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fc_nowrite { /* a kernel run as a no-op, or a variable (var != 0) */
    struct fc_nowrite *next;
    fc_kernel k;
    struct CUfunc_st *entry[2]; /* function, kernel handle */
    CUdeviceptr var;
    size_t var_size;
    char name[];
};

static pthread_mutex_t nowrite_lock = PTHREAD_MUTEX_INITIALIZER;

bool fc_sass_nowrite(void)
{
    static _Atomic int mode; /* 0 unknown, 1 fail, 2 nowrite */
    int v = atomic_load_explicit(&mode, memory_order_relaxed);
    if (v)
        return v == 2;
    const char *env = getenv("FAKECUDA_SASS");
    v = env && strcmp(env, "nowrite") == 0 ? 2 : 1;
    if (env && *env && v == 1 && strcmp(env, "fail") != 0)
        fprintf(stderr, "fakecuda: FAKECUDA_SASS=\"%s\" ignored: expected fail or nowrite; using fail\n", env);
    int unknown = 0;
    atomic_compare_exchange_strong(&mode, &unknown, v);
    return atomic_load(&mode) == 2;
}

static int fc_nowrite_run(const struct fakecuda_launch *launch)
{
    (void)launch;
    return FAKECUDA_KERNEL_OK;
}

/* Whether the module's image names the kernel (every name, where its
   names are not all known). */
static bool fc_image_names(const struct CUmod_st *mod, const char *name)
{
    if (!mod->names_complete)
        return true;
    for (size_t at = 0; at < mod->names.len; at += strlen(mod->names.text + at) + 1)
        if (strcmp(mod->names.text + at, name) == 0)
            return true;
    return false;
}

/* The size of the module's cubin variable name; false when it has none. */
static bool fc_image_var(const struct CUmod_st *mod, const char *name, size_t *size)
{
    for (size_t at = 0; at < mod->vars.len;) {
        size_t len = strlen(mod->vars.text + at);
        uint64_t v;
        memcpy(&v, mod->vars.text + at + len + 1, sizeof v);
        if (strcmp(mod->vars.text + at, name) == 0) {
            *size = (size_t)v;
            return true;
        }
        at += len + 1 + sizeof v;
    }
    return false;
}

/* The module's entry for name (kernel or variable), made on first use; under nowrite_lock. */
static struct fc_nowrite *fc_nowrite_entry(struct CUmod_st *mod, const char *name, bool var)
{
    struct fc_nowrite *n = mod->nowrite;
    while (n && (strcmp(n->name, name) != 0 || (n->var_size != 0) != var))
        n = n->next;
    size_t len = strlen(name);
    if (!n && (n = calloc(1, sizeof *n + len + 1))) {
        memcpy(n->name, name, len + 1);
        n->k = (fc_kernel){.name = n->name, .host = fc_nowrite_run, .origin = "FAKECUDA_SASS=nowrite"};
        n->next = mod->nowrite;
        mod->nowrite = n;
    }
    return n;
}

CUresult fc_nowrite_global(struct CUmod_st *mod, const char *name, CUdeviceptr *at, size_t *size)
{
    size_t bytes;
    if (!fc_sass_nowrite() || !fc_image_var(mod, name, &bytes) || bytes == 0)
        return CUDA_ERROR_NOT_FOUND;
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&nowrite_lock);
    struct fc_nowrite *n = fc_nowrite_entry(mod, name, true);
    if (n && !n->var && (r = fc_mem_alloc_global(&n->var, bytes, mod->hdr.ctx)) == CUDA_SUCCESS) {
        fc_mem_rdlock();
        unsigned char *host = fc_mem_view_locked(n->var, bytes);
        if (host)
            memset(host, 0, bytes);
        fc_mem_unlock();
        n->var_size = bytes;
        fc_debug("variable %s (%zu bytes) placed zeroed (FAKECUDA_SASS=nowrite)", name, bytes);
    }
    if (n && n->var) {
        *at = n->var;
        *size = n->var_size;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&nowrite_lock);
    return r;
}

struct CUfunc_st **fc_nowrite_slot(struct CUmod_st *mod, const char *name, bool kernel_handle, const fc_kernel **k)
{
    if (!fc_sass_nowrite() || !fc_image_names(mod, name))
        return NULL;
    pthread_mutex_lock(&nowrite_lock);
    struct fc_nowrite *n = fc_nowrite_entry(mod, name, false);
    if (n && !n->entry[0] && !n->entry[1])
        fc_debug("%s has no code: its launches write nothing (FAKECUDA_SASS=nowrite)", name);
    pthread_mutex_unlock(&nowrite_lock);
    if (!n)
        return NULL;
    *k = &n->k;
    return &n->entry[kernel_handle ? 1 : 0];
}

void fc_nowrite_detach(struct CUmod_st *mod)
{
    pthread_mutex_lock(&nowrite_lock);
    struct fc_nowrite *n = mod->nowrite;
    mod->nowrite = NULL;
    pthread_mutex_unlock(&nowrite_lock);
    while (n) {
        struct fc_nowrite *next = n->next;
        for (int i = 0; i < 2; i++)
            if (n->entry[i])
                fc_obj_free(n->entry[i]);
        if (n->var)
            fc_mem_free_now(n->var);
        free(n);
        n = next;
    }
}

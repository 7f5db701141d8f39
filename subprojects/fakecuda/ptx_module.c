/*
 * ptx_module.c: the PTX kernels of a module or library (the executor in
 * ptx/, hooked into modules.c).
 *
 * When FAKECUDA_PTX is on (the default), the PTX text an image carries
 * (image.c picks it: the newest PTX entry the device can compile) is
 * decoded once, at the module's load; each of its kernels becomes a known
 * kernel of that module only, run by the executor through the plugin ABI
 * (fc_kernel.host = fc_ptx_launch). A kernel the registry knows (a
 * built-in or a plugin's) wins over the PTX one of the same name. The
 * module's .global and .const variables are placed in device memory of
 * the module's context at its load, initialised, and found by
 * cuModuleGetGlobal.
 * Invariants:
 * - A module's fc_ptx_image and its kernels live exactly as long as the
 *   module (freed by fc_ptx_detach from fc_module_release); their handles
 *   are freed once, as the built-in entries' are: by fc_image_unload
 *   (fc_ptx_free_handles), or with their context, which frees every
 *   function handle it owns before it releases its modules.
 * - PTX that does not parse leaves the module as it was without PTX (its
 *   kernels unknown, so lookups answer NOT_FOUND), with one stderr line.
 */
#include "fakecuda.h"
#include "ptx/ptx.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fc_ptx_image {
    fc_ptx_module *module;
    unsigned n;                /* kernels */
    fc_kernel *kernel;         /* n registry-like descriptions */
    fc_ptx_kernel *launchable; /* n: what each one's user pointer names */
    fc_param *params;          /* every kernel's layout, back to back */
    struct CUfunc_st **entry;  /* 2n: [i] function, [n + i] kernel handle */
    CUdeviceptr *globals;      /* per module variable: its device address, or 0 */
};

bool fc_ptx_on(void)
{
    static _Atomic int on; /* 0 unknown, 1 off, 2 on */
    int v = atomic_load_explicit(&on, memory_order_relaxed);
    if (v)
        return v == 2;
    const char *env = getenv("FAKECUDA_PTX");
    v = 2;
    if (env && strcmp(env, "off") == 0)
        v = 1;
    else if (env && strcmp(env, "on") != 0)
        fprintf(stderr, "fakecuda: FAKECUDA_PTX=\"%s\" ignored: expected on or off; using on\n", env);
    atomic_store(&on, v);
    return v == 2;
}

/* Places variable i in device memory of ctx with its initial bytes. */
static CUdeviceptr fc_ptx_place(CUcontext ctx, uint64_t size, const unsigned char *init)
{
    CUdeviceptr p = 0;
    if (fc_mem_alloc_global(&p, size ? size : 1, ctx) != CUDA_SUCCESS)
        return 0;
    fc_mem_rdlock();
    unsigned char *host = fc_mem_view_locked(p, size);
    if (host && init)
        memcpy(host, init, size);
    else if (host)
        memset(host, 0, size);
    fc_mem_unlock();
    return p;
}

static bool fc_ptx_build(struct fc_ptx_image *pi, CUcontext ctx)
{
    fc_ptx_module *m = pi->module;
    unsigned nv = fc_ptx_var_count(m), n = pi->n = fc_ptx_kernel_count(m), np = 0;
    for (unsigned i = 0; i < n; i++)
        np += fc_ptx_kernel_params(m, i, NULL, 0);
    pi->kernel = calloc(n ? n : 1, sizeof *pi->kernel);
    pi->launchable = calloc(n ? n : 1, sizeof *pi->launchable);
    pi->params = calloc(np ? np : 1, sizeof *pi->params);
    pi->entry = calloc(2 * (size_t)n + 1, sizeof *pi->entry);
    pi->globals = calloc(nv ? nv : 1, sizeof *pi->globals);
    if (!pi->kernel || !pi->launchable || !pi->params || !pi->entry || !pi->globals)
        return false;
    for (unsigned i = 0; i < nv; i++) {
        const char *name;
        uint64_t size;
        const unsigned char *init;
        if (!fc_ptx_var(m, i, &name, &size, &init))
            continue;
        if (!(pi->globals[i] = fc_ptx_place(ctx, size, init)))
            return false;
        fc_ptx_var_place(m, i, pi->globals[i]);
    }
    fc_param *at = pi->params;
    for (unsigned i = 0; i < n; i++) {
        struct fakecuda_param tmp[512];
        unsigned k = fc_ptx_kernel_params(m, i, tmp, 512);
        if (k > 512)
            return false;
        for (unsigned j = 0; j < k; j++)
            at[j] = (fc_param){(uint32_t)tmp[j].offset, (uint32_t)tmp[j].size};
        fc_ptx_kernel_at(m, i, &pi->launchable[i]);
        pi->kernel[i] = (fc_kernel){.name = fc_ptx_kernel_name(m, i),
                                    .nparams = k,
                                    .param = at,
                                    .host = fc_ptx_launch,
                                    .user = &pi->launchable[i],
                                    .origin = "PTX"};
        at += k;
    }
    return true;
}

void fc_ptx_free_handles(struct CUmod_st *mod)
{
    struct fc_ptx_image *pi = mod->ptx;
    for (size_t i = 0; pi && pi->entry && i < 2 * (size_t)pi->n; i++)
        if (pi->entry[i]) {
            fc_obj_free(pi->entry[i]);
            pi->entry[i] = NULL;
        }
}

/* Its handles are freed already (ptx_module.c's invariants): freeing one
   again would put it on the free list twice, and two later handles would
   be one. */
void fc_ptx_detach(struct CUmod_st *mod)
{
    struct fc_ptx_image *pi = mod->ptx;
    if (!pi)
        return;
    for (unsigned i = 0; pi->globals && i < fc_ptx_var_count(pi->module); i++)
        if (pi->globals[i])
            fc_mem_free_now(pi->globals[i]);
    fc_ptx_free(pi->module);
    free(pi->kernel);
    free(pi->launchable);
    free(pi->params);
    free(pi->entry);
    free(pi->globals);
    free(pi);
    mod->ptx = NULL;
}

void fc_ptx_attach(struct CUmod_st *mod, const fc_image *img)
{
    assert(!mod->ptx && "a module's PTX is attached once, at its load");
    if (!img->ptx || !fc_ptx_on())
        return;
    char err[300];
    fc_ptx_module *m = fc_ptx_parse(img->ptx, img->ptx_len, err, sizeof err);
    if (!m) {
        fprintf(stderr, "fakecuda: the image's PTX is not read (%s): its kernels are unknown\n", err);
        return;
    }
    struct fc_ptx_image *pi = calloc(1, sizeof *pi);
    if (!pi) {
        fc_ptx_free(m);
        return;
    }
    pi->module = m;
    mod->ptx = pi;
    if (!fc_ptx_build(pi, mod->hdr.ctx)) {
        fprintf(stderr, "fakecuda: the image's PTX kernels are not made (out of memory)\n");
        fc_ptx_detach(mod);
    }
}

struct CUfunc_st **fc_ptx_slot(struct CUmod_st *mod, const char *name, bool kernel_handle, const fc_kernel **k)
{
    struct fc_ptx_image *pi = mod->ptx;
    for (unsigned i = 0; pi && i < pi->n; i++)
        if (strcmp(pi->kernel[i].name, name) == 0) {
            *k = &pi->kernel[i];
            struct CUfunc_st **slot = &pi->entry[(kernel_handle ? pi->n : 0) + i];
            assert((!*slot || (*slot)->owner == mod) && "a module's PTX handles are its own");
            return slot;
        }
    return NULL;
}

bool fc_ptx_global(struct CUmod_st *mod, const char *name, CUdeviceptr *p, size_t *size)
{
    struct fc_ptx_image *pi = mod->ptx;
    for (unsigned i = 0; pi && i < fc_ptx_var_count(pi->module); i++) {
        const char *vn;
        uint64_t vs;
        const unsigned char *init;
        if (pi->globals[i] && fc_ptx_var(pi->module, i, &vn, &vs, &init) && strcmp(vn, name) == 0) {
            *p = pi->globals[i];
            *size = (size_t)vs;
            return true;
        }
    }
    return false;
}

/*
 * modules.c: modules, libraries, and the function and kernel handles taken
 * from them.
 *
 * A module or library holds the known kernels (the registry, plugins.c:
 * the built-in library and the plugins' kernels) its image holds, looked
 * up by exact (mangled) name; an image fakecuda does not read (image.c)
 * holds every known kernel. An image the device cannot run (no SASS for
 * it, no PTX it can compile) is CUDA_ERROR_NO_BINARY_FOR_GPU: at its load
 * when CUDA_MODULE_LOADING=EAGER; lazily (the default), where
 * FAKECUDA_LAZY_IMAGE_ERRORS says: at its load (the default, until a GPU
 * measures it), at every lookup in it, or at every launch (and cuFuncLoad,
 * cuFuncGetParamInfo and cuFuncGetAttribute: a driver cannot describe a
 * function it could not load; to be confirmed on a GPU) of its functions
 * and kernels. A lazily loaded function is not loaded
 * (cuFuncIsLoaded) until cuFuncLoad or a launch needs its code.
 * Invariants:
 * - With n = fc_kernel_count() (fixed before any module exists),
 *   entry[i] / entry[n + i] of a module is the one function / kernel handle
 *   for kernel i, made on first request and freed with the module (or, for
 *   a module, with its context, which calls fc_module_release).
 * - A module belongs to the context current when it was loaded; a library
 *   to no context (CUlibrary is context-independent).
 * - A module's global lives in the module's context, from its first request
 *   until the module is unloaded or its context released.
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t entry_lock = PTHREAD_MUTEX_INITIALIZER;

/* Where a lazily loaded image the device cannot run is reported. */
typedef enum fc_image_at { FC_AT_LOAD = 1, FC_AT_LOOKUP, FC_AT_LAUNCH } fc_image_at;

static fc_image_at fc_lazy_errors_at(void)
{
    static _Atomic int at;
    int v = atomic_load_explicit(&at, memory_order_relaxed);
    if (v)
        return (fc_image_at)v;
    const char *env = getenv("FAKECUDA_LAZY_IMAGE_ERRORS");
    v = FC_AT_LOAD;
    if (env && strcmp(env, "lookup") == 0)
        v = FC_AT_LOOKUP;
    else if (env && strcmp(env, "launch") == 0)
        v = FC_AT_LAUNCH;
    else if (env && strcmp(env, "load") != 0)
        fprintf(stderr,
                "fakecuda: FAKECUDA_LAZY_IMAGE_ERRORS=\"%s\" ignored: expected load, lookup or launch; "
                "using load\n",
                env);
    int none = 0;
    atomic_compare_exchange_strong(&at, &none, v);
    return (fc_image_at)atomic_load(&at);
}

/* A module or library of the image img, which it takes (dropped on failure). */
static CUresult fc_image_load(struct CUmod_st **out, fc_kind kind, bool needs_ctx, fc_image *img)
{
    assert(needs_ctx == (kind == FC_K_MODULE) && "a module belongs to its loading context, a library to none");
    CUcontext ctx = NULL;
    CUresult r = fc_current(&ctx);
    if (needs_ctx && r != CUDA_SUCCESS) {
        fc_image_drop(img);
        return r;
    }
    bool eager = fc_loading_eager(), runs = !img->read || img->runs;
    fc_image_at at = eager ? FC_AT_LOAD : fc_lazy_errors_at();
    if (!runs && at == FC_AT_LOAD) {
        fc_image_drop(img);
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    struct CUmod_st *m = fc_obj_new(FC_P_MODULE, kind, needs_ctx ? ctx : NULL);
    if (!m || !(m->entry = calloc(2 * (size_t)fc_kernel_count(), sizeof *m->entry))) {
        if (m)
            fc_obj_free(m);
        fc_image_drop(img);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->holds = img->holds;
    m->names = img->names;
    m->vars = img->vars;
    m->names_complete = img->read && img->names_complete;
    m->eager = eager;
    m->lookup_error = !runs && at == FC_AT_LOOKUP ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_SUCCESS;
    m->launch_error = !runs && at == FC_AT_LAUNCH ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_SUCCESS;
    if (runs)
        fc_ptx_attach(m, img);
    free(img->ptx);
    *out = m;
    return CUDA_SUCCESS;
}

CUresult fc_module_load_file(CUmodule *m, const char *path)
{
    fc_image img;
    if (!m || !path)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_image_read_file(&img, path);
    return r == CUDA_SUCCESS ? fc_image_load(m, FC_K_MODULE, true, &img) : r;
}

CUresult fc_module_load_image(CUmodule *m, const void *image)
{
    fc_image img;
    if (!m || !image)
        return CUDA_ERROR_INVALID_VALUE;
    fc_image_read_memory(&img, image);
    return fc_image_load(m, FC_K_MODULE, true, &img);
}

CUresult fc_library_load_file(CUlibrary *l, const char *path)
{
    fc_image img;
    if (!l || !path)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_image_read_file(&img, path);
    return r == CUDA_SUCCESS ? fc_image_load((struct CUmod_st **)l, FC_K_LIBRARY, false, &img) : r;
}

CUresult fc_library_load(CUlibrary *l, const void *code)
{
    fc_image img;
    if (!l || !code)
        return CUDA_ERROR_INVALID_VALUE;
    fc_image_read_memory(&img, code);
    return fc_image_load((struct CUmod_st **)l, FC_K_LIBRARY, false, &img);
}

static CUresult fc_image_unload(struct CUmod_st *m, fc_kind kind)
{
    if (!fc_obj_valid(m, kind))
        return CUDA_ERROR_INVALID_HANDLE;
    /* Launches of its PTX kernels still queued run first: they use the
       code this frees (a built-in's code outlives every module). A fault
       they raise stays sticky for the next call, as any kernel's. */
    if (kind == FC_K_MODULE && m->ptx)
        (void)fc_drain_all(m->hdr.ctx);
    pthread_mutex_lock(&entry_lock);
    for (size_t i = 0; i < 2 * (size_t)fc_kernel_count(); i++)
        if (m->entry[i])
            fc_obj_free(m->entry[i]);
    fc_ptx_free_handles(m);
    fc_module_release(m);
    fc_obj_free(m);
    pthread_mutex_unlock(&entry_lock);
    return CUDA_SUCCESS;
}

/* A module's own memory (its handle table, its global); its handles are already
 * freed (or freed by the caller). */
void fc_module_release(void *m)
{
    struct CUmod_st *mod = m;
    free(mod->entry);
    mod->entry = NULL;
    free(mod->holds);
    mod->holds = NULL;
    if (mod->scratch)
        fc_mem_free_now(mod->scratch);
    mod->scratch = 0;
    fc_ptx_detach(mod);
    fc_nowrite_detach(mod);
    free(mod->names.text);
    free(mod->vars.text);
    mod->names = mod->vars = (fc_names){0};
}

CUresult fc_module_unload(CUmodule m)
{
    return fc_image_unload(m, FC_K_MODULE);
}

CUresult fc_library_unload(CUlibrary l)
{
    return fc_image_unload((struct CUmod_st *)l, FC_K_LIBRARY);
}

/* The handle of kind `kind` for kernel `name` of module m, made on first use. */
static CUresult fc_entry(struct CUfunc_st **out, struct CUmod_st *m, fc_kind mkind, fc_kind kind, const char *name)
{
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_obj_valid(m, mkind))
        return CUDA_ERROR_INVALID_HANDLE;
    if (m->lookup_error != CUDA_SUCCESS)
        return m->lookup_error;
    unsigned index;
    const fc_kernel *k = fc_kernel_find(name, &index);
    struct CUfunc_st **slot;
    if (k && (!m->holds || m->holds[index]))
        slot = &m->entry[(kind == FC_K_KERNEL ? fc_kernel_count() : 0) + (size_t)index];
    else if (!(slot = fc_ptx_slot(m, name, kind == FC_K_KERNEL, &k)) &&   /* plugins and built-ins win */
             !(slot = fc_nowrite_slot(m, name, kind == FC_K_KERNEL, &k))) /* then PTX */
        return CUDA_ERROR_NOT_FOUND;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&entry_lock);
    if (!*slot && (*slot = fc_obj_new(FC_P_FUNC, kind, m->hdr.ctx))) {
        (*slot)->k = k;
        (*slot)->owner = m;
        (*slot)->max_dyn_smem = (int)FC_DEFAULT_SMEM;
    }
    assert((!*slot || ((*slot)->owner == m && (*slot)->k == k)) && "a slot holds the one handle of its kernel");
    if (*slot)
        *out = *slot;
    else
        r = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&entry_lock);
    return r;
}

CUresult fc_module_get_function(CUfunction *f, CUmodule m, const char *name)
{
    return fc_entry(f, m, FC_K_MODULE, FC_K_FUNC, name);
}

/*
 * Calls each(arg, f) for the function of every kernel module m's image
 * lists, in the image's order, and says how many it called it for: 0 where
 * m is not a module, its image's list is incomplete (an image fakecuda
 * does not read), or a lookup in it fails (a kernel without code under
 * FAKECUDA_SASS=fail, a lazily reported image the device cannot run).
 * The private table cuFFT asks for (private.c) needs it.
 */
size_t fc_module_each_function(CUmodule m, void (*each)(void *arg, CUfunction f), void *arg)
{
    if (!fc_obj_valid(m, FC_K_MODULE) || !m->names_complete)
        return 0;
    size_t count = 0;
    for (size_t at = 0; at < m->names.len; at += strlen(m->names.text + at) + 1) {
        CUfunction f;
        if (fc_module_get_function(&f, m, m->names.text + at) != CUDA_SUCCESS)
            return 0;
        each(arg, f);
        count++;
    }
    return count;
}

CUresult fc_library_get_kernel(CUkernel *k, CUlibrary l, const char *name)
{
    return fc_entry((struct CUfunc_st **)k, (struct CUmod_st *)l, FC_K_LIBRARY, FC_K_KERNEL, name);
}

/* A CUfunction handle, or a CUkernel passed where a CUfunction is expected. */
struct CUfunc_st *fc_func_resolve(CUfunction f)
{
    return fc_obj_valid(f, FC_K_FUNC) || fc_obj_valid(f, FC_K_KERNEL) ? f : NULL;
}

static struct CUfunc_st *fc_kernel_resolve(CUkernel k)
{
    struct CUfunc_st *f = (struct CUfunc_st *)(void *)k;
    return fc_obj_valid(f, FC_K_KERNEL) ? f : NULL;
}

/* The library's function for this kernel (fakecuda has one device). */
CUresult fc_kernel_get_function(CUfunction *f, CUkernel k)
{
    struct CUfunc_st *kf = fc_kernel_resolve(k);
    if (!kf)
        return f ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
    return fc_entry(f, kf->owner, FC_K_LIBRARY, FC_K_FUNC, kf->k->name);
}

CUresult fc_kernel_get_name(const char **name, CUkernel k)
{
    struct CUfunc_st *kf = fc_kernel_resolve(k);
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!kf)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = kf->k->name;
    return CUDA_SUCCESS;
}

CUresult fc_func_get_name(const char **name, CUfunction f)
{
    struct CUfunc_st *fn = fc_func_resolve(f);
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fn)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = fn->k->name;
    return CUDA_SUCCESS;
}

/* Describing a function needs its code: one that cannot be loaded
   (launch_error) is not described (as cuFuncLoad; to be confirmed on a GPU). */
CUresult fc_func_param_info(CUfunction f, size_t i, size_t *off, size_t *size)
{
    struct CUfunc_st *fn = fc_func_resolve(f);
    if (!fn)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fn->owner->launch_error != CUDA_SUCCESS)
        return fn->owner->launch_error;
    if (i >= fn->k->nparams || (!off && !size))
        return CUDA_ERROR_INVALID_VALUE;
    if (off)
        *off = fn->k->param[i].offset;
    if (size)
        *size = fn->k->param[i].size;
    return CUDA_SUCCESS;
}

CUresult fc_func_get_attribute(int *v, CUfunction_attribute a, CUfunction f)
{
    struct CUfunc_st *fn = fc_func_resolve(f);
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fn)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fn->owner->launch_error != CUDA_SUCCESS)
        return fn->owner->launch_error;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = fn->max_dyn_smem; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 16; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *v = fn->non_portable_cluster; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *v = 90; break;
    default:
        if (a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX)
            return CUDA_ERROR_INVALID_VALUE;
        *v = 0;
    }
    return CUDA_SUCCESS;
}

/* Loading a function fails as its launch would. */
CUresult fc_func_load(CUfunction f)
{
    struct CUfunc_st *fn = fc_func_resolve(f);
    if (!fn)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fn->owner->launch_error != CUDA_SUCCESS)
        return fn->owner->launch_error;
    atomic_store(&fn->loaded, true);
    return CUDA_SUCCESS;
}

CUresult fc_func_is_loaded(CUfunctionLoadingState *state, CUfunction f)
{
    struct CUfunc_st *fn = fc_func_resolve(f);
    if (!state)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fn)
        return CUDA_ERROR_INVALID_HANDLE;
    bool loaded = fn->owner->eager || atomic_load(&fn->loaded);
    *state = loaded ? CU_FUNCTION_LOADING_STATE_LOADED : CU_FUNCTION_LOADING_STATE_UNLOADED;
    return CUDA_SUCCESS;
}

/* Only the dynamic shared-memory limit changes what fakecuda does. */
CUresult fc_func_set_attribute(CUfunction f, CUfunction_attribute a, int v)
{
    struct CUfunc_st *fn = fc_func_resolve(f);
    if (!fn)
        return CUDA_ERROR_INVALID_HANDLE;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (v < 0 || v > (int)FC_OPTIN_SMEM)
            return CUDA_ERROR_INVALID_VALUE;
        fn->max_dyn_smem = v;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: return v < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    /* cuBLAS sets it at cublasCreate; fakecuda runs no clusters, so it is only kept. */
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        if (v != 0 && v != 1)
            return CUDA_ERROR_INVALID_VALUE;
        fn->non_portable_cluster = v;
        return CUDA_SUCCESS;
    default: return a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
    }
}

/* cuKernelSetAttribute: the kernel's, and its function's (one device), as
   cuBLAS sets a size on the CUkernel and then asks occupancy of the
   CUfunction. */
CUresult fc_kernel_set_attribute(CUfunction_attribute a, int v, CUkernel k)
{
    CUfunction f;
    CUresult r = fc_func_set_attribute((CUfunction)(void *)k, a, v);
    if (r == CUDA_SUCCESS && fc_kernel_get_function(&f, k) == CUDA_SUCCESS)
        r = fc_func_set_attribute(f, a, v);
    return r;
}

/* Globals are not read from images, so every module has the same ones, one so far:
 * "scratch" (float scratch[1024]), placed in device memory like any
 * allocation the first time it is asked for.  Every other name is
 * NOT_FOUND; so is every name asked for through the legacy (32-bit) entry
 * point, which could not return the address. */
CUresult fc_module_get_global(CUdeviceptr *dptr, size_t *bytes, CUmodule m, const char *name, bool legacy)
{
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_obj_valid(m, FC_K_MODULE))
        return CUDA_ERROR_INVALID_HANDLE;
    CUdeviceptr ptx_at;
    size_t ptx_size;
    if (!legacy && fc_ptx_global(m, name, &ptx_at, &ptx_size)) { /* a variable of the module's PTX */
        if (dptr)
            *dptr = ptx_at;
        if (bytes)
            *bytes = ptx_size;
        return CUDA_SUCCESS;
    }
    if (legacy || strcmp(name, "scratch") != 0)
        return CUDA_ERROR_NOT_FOUND;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&entry_lock);
    if (!m->scratch)
        r = fc_mem_alloc_global(&m->scratch, FC_SCRATCH_BYTES, m->hdr.ctx);
    CUdeviceptr at = m->scratch;
    pthread_mutex_unlock(&entry_lock);
    if (r == CUDA_SUCCESS && dptr)
        *dptr = at;
    if (r == CUDA_SUCCESS && bytes)
        *bytes = FC_SCRATCH_BYTES;
    return r;
}

/* A library's globals are its PTX's variables (no "scratch": that is a module's). */
CUresult fc_library_get_global(CUdeviceptr *dptr, size_t *bytes, CUlibrary l, const char *name)
{
    struct CUmod_st *m = (struct CUmod_st *)l;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_obj_valid(m, FC_K_LIBRARY))
        return CUDA_ERROR_INVALID_HANDLE;
    CUdeviceptr at;
    size_t size;
    if (!fc_ptx_global(m, name, &at, &size)) {
        CUresult r = fc_nowrite_global(m, name, &at, &size);
        if (r != CUDA_SUCCESS)
            return r;
    }
    if (dptr)
        *dptr = at;
    if (bytes)
        *bytes = size;
    return CUDA_SUCCESS;
}

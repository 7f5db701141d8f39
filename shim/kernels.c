/*
 * kernels.c - the kernel registry: which kernel is behind a function handle,
 * what it belongs to, and its description (name, parameter layout, roles).
 *
 * A kernel's description is built once, the first time a launch needs it:
 * from cuFuncGetParamInfo when the driver has it, else from the mangled
 * signature; roles from what the image's PTX of the code that runs loads
 * and stores through each parameter (images.c read it at load), else from
 * the demangled signature (const T* is read only), CUTAINT_ARGS overriding
 * (core's ct_param_role_rule).
 *
 * Handles are reused: once a module or library is unloaded, or the context
 * of a module destroyed, the driver hands out the same handles for other
 * kernels, with other parameters, and the same module, library and context
 * handles for others.  So every entry knows its owner (the lifetime of the
 * module's or library's handle, core/lifetimes.h) and its context's
 * lifetime, and goes when they end; and a handle
 * the driver names again (cuModuleGetFunction, ...) for another kernel or
 * another owner gets a new entry.  A stale description would decode a
 * launch with the old kernel's layout, reading past the caller's
 * kernelParams.
 *
 * Invariants:
 * - The registry changes under kernels_lock only, and no driver call is
 *   made while it is held.
 * - Every change that takes an entry out advances `generation`; a thread's
 *   cached lookup made in another generation is not used.
 * - Entries taken out are kept for the next ones, never freed: memory stays
 *   bounded by the kernels known at once, a new kernel takes no allocation
 *   once the process is warm, and a pointer to an entry never dangles
 *   (though a launch racing with the unload of its own module - the
 *   program's race - may see it describe another kernel).
 * - Names are interned in the store: they outlive every entry.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "kernels.h"
#include "signature.h"

#define CT_KERNEL_CACHE 8

static ct_kernel *kernels; /* by handle */
static ct_kernel *spare;   /* entries taken out, for the next ones */
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t generation;

static CT_HOT_TLS struct {
    uint64_t handle;
    uint64_t generation;
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

static ct_kernel *find_locked(uint64_t handle)
{
    ct_kernel *k;
    HASH_FIND(hh, kernels, &handle, sizeof handle, k);
    return k;
}

/* A new entry, a spare one when there is one; NULL when out of memory. */
static ct_kernel *add_locked(uint64_t handle, uint64_t owner, uint64_t context)
{
    assert(!find_locked(handle) && "one entry a handle: a stale one is taken out first");
    ct_kernel *k = spare;
    if (k)
        spare = k->next_spare;
    else if (!(k = malloc(sizeof *k)))
        return NULL;
    memset(k, 0, sizeof *k);
    atomic_init(&k->described, false);
    k->handle = handle;
    k->owner = owner;
    k->context = context;
    HASH_ADD(hh, kernels, handle, sizeof handle, k);
    if (!ct_hash_added(&k->hh)) { /* out of memory: the kernel stays unknown */
        k->next_spare = spare;
        spare = k;
        return NULL;
    }
    return k;
}

static void take_out_locked(ct_kernel *k)
{
    assert(find_locked(k->handle) == k);
    HASH_DELETE(hh, kernels, k);
    free(k->params);
    k->params = NULL;
    k->n_params = 0;
    k->next_spare = spare;
    spare = k;
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
}

/* The entry of a handle first seen in a launch, made then: a function of a
 * module in the launching thread's context, from a path that never named it. */
static ct_kernel *kernel_entry(uint64_t handle)
{
    uint64_t context = ct_current_context(); /* may ask the driver: not under the lock */
    pthread_mutex_lock(&kernels_lock);
    ct_kernel *k = find_locked(handle);
    if (!k)
        k = add_locked(handle, 0, context);
    pthread_mutex_unlock(&kernels_lock);
    return k;
}

static void name_if_unnamed(ct_kernel *k, const char *mangled)
{
    pthread_mutex_lock(&kernels_lock);
    if (!k->mangled)
        name_kernel(k, mangled);
    pthread_mutex_unlock(&kernels_lock);
}

/* Is k the kernel the driver just named (mangled may be NULL: unknown)? */
static bool same_kernel(const ct_kernel *k, const char *mangled, uint64_t owner)
{
    return k->owner == owner && (!mangled || (k->mangled && strcmp(k->mangled, mangled) == 0));
}

/* The driver says handle is kernel `mangled` of owner, in context: an entry
 * that says otherwise is stale (the handle was reused) and is replaced. */
static void learn(uint64_t handle, const char *mangled, uint64_t owner, uint64_t context)
{
    pthread_mutex_lock(&kernels_lock);
    ct_kernel *k = find_locked(handle);
    if (k && !same_kernel(k, mangled, owner)) {
        take_out_locked(k);
        k = NULL;
    }
    if (!k)
        k = add_locked(handle, owner, context);
    if (k && mangled && !k->mangled)
        name_kernel(k, mangled);
    pthread_mutex_unlock(&kernels_lock);
}

/* The lifetime of a module or library a lookup named: started at first
 * sight only when the driver accepted the handle (a bogus one would stay). */
static uint64_t owner_of(const ct_call *call, uint64_t handle)
{
    return call->result == CUDA_SUCCESS ? ct_lifetime_of(ct_g.images, handle) : ct_lifetime_find(ct_g.images, handle);
}

/* A lookup the driver failed is images.c's to say (what the image holds). */
void ct_after_get_function(ct_call *call, uint64_t handle, const char *name, uint64_t module)
{
    uint64_t owner = owner_of(call, module);
    if (call->result != CUDA_SUCCESS)
        ct_image_lookup_failed(call, owner, name, NULL);
    else if (handle)
        learn(handle, name, owner, ct_current_context());
}

/* A library's kernel belongs to no context: only the library's unload takes
 * it.  A failed lookup may be answered with a stand-in kernel (images.c),
 * which is then known already. */
void ct_after_get_kernel(ct_call *call, CUkernel *out, const char *name, uint64_t library)
{
    uint64_t owner = owner_of(call, library);
    if (call->result != CUDA_SUCCESS)
        ct_image_lookup_failed(call, owner, name, out);
    else if (out && *out)
        learn((uint64_t)(uintptr_t)*out, name, owner, 0);
}

/* The name and owner of a known handle (the name is interned: it outlives
 * the entry); false when cutaint never learnt it. */
static bool name_of(uint64_t handle, const char **name, uint64_t *owner)
{
    pthread_mutex_lock(&kernels_lock);
    const ct_kernel *k = find_locked(handle);
    *name = k ? k->mangled : NULL;
    *owner = k ? k->owner : 0;
    pthread_mutex_unlock(&kernels_lock);
    return k != NULL;
}

/* The function of a library kernel in the current context: named like it,
 * and gone with its library.  Under lazy loading this is where the driver
 * may first load the kernel's image, and fail. */
void ct_after_kernel_function(ct_call *call, uint64_t handle, uint64_t kernel)
{
    const char *name;
    uint64_t library;
    bool known = name_of(kernel, &name, &library);
    if (call->result != CUDA_SUCCESS) {
        if (known)
            ct_image_lookup_failed(call, library, name, NULL);
        return;
    }
    if (handle)
        learn(handle, name, library, ct_current_context());
}

void ct_after_func_load(ct_call *call, CUfunction f)
{
    const char *name;
    uint64_t owner;
    if (call->result != CUDA_SUCCESS && name_of((uint64_t)(uintptr_t)f, &name, &owner))
        ct_image_lookup_failed(call, owner, name, NULL);
}

/* Take out every entry `gone` says went; how many. */
static size_t forget_where(bool (*gone)(const ct_kernel *, uint64_t), uint64_t what)
{
    size_t n = 0;
    ct_kernel *k, *next;
    pthread_mutex_lock(&kernels_lock);
    HASH_ITER(hh, kernels, k, next)
    {
        if (gone(k, what)) {
            take_out_locked(k);
            n++;
        }
    }
    pthread_mutex_unlock(&kernels_lock);
    return n;
}

static bool owned_by(const ct_kernel *k, uint64_t owner)
{
    return k->owner == owner;
}

static bool in_context(const ct_kernel *k, uint64_t context)
{
    return k->context == context;
}

size_t ct_kernels_forget_context(uint64_t context)
{
    return context ? forget_where(in_context, context) : 0;
}

size_t ct_kernels_forget_owner(uint64_t owner)
{
    return owner ? forget_where(owned_by, owner) : 0;
}

/* The lifetime ct_before_image_unload took ended iff the driver unloaded:
 * only then is what was filed under it forgotten. */
void ct_after_unload(ct_call *call)
{
    bool gone = call->result == CUDA_SUCCESS;
    ct_lifetime_ended(ct_g.images, call->subject, call->lifetime, gone);
    if (!gone || !call->lifetime)
        return;
    ct_images_forget(call->lifetime);
    ct_stand_ins_unloaded(call->lifetime);
    size_t n = ct_kernels_forget_owner(call->lifetime);
    ct_log(CT_LOG_INFO, "%s(0x%llx): %zu kernel%s forgotten", ct_entries[call->id].name,
           (unsigned long long)call->subject, n, n == 1 ? "" : "s");
}

/* Ask the driver for a name nobody told us (functions from other paths). */
static void name_from_driver(ct_kernel *k, CUfunction f)
{
    __typeof__(&cuFuncGetName) get_name = CT_HELPER(cuFuncGetName);
    const char *name = NULL;
    if (get_name && get_name(&name, f) == CUDA_SUCCESS && name)
        name_if_unnamed(k, name);
    if (!k->mangled)
        name_if_unnamed(k, "<unnamed kernel>");
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

/* "r,s,-": each parameter's role as a letter (r read, w written whole,
 * s stored through, rw both, - not memory), for the log and the report. */
static void roles_text(const ct_kernel *k, char *out, size_t cap)
{
    static const char *const letter[] = {
        [CT_ROLE_DEFAULT] = "?", [CT_ROLE_IGNORE] = "-",     [CT_ROLE_READ] = "r",
        [CT_ROLE_WRITE] = "w",   [CT_ROLE_READWRITE] = "rw", [CT_ROLE_STORE] = "s",
    };
    size_t n = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < k->n_params && n < cap; i++) {
        int m = snprintf(out + n, cap - n, "%s%s", i ? "," : "", letter[k->params[i].role]);
        n += m > 0 ? (size_t)m : 0;
    }
}

/* Each parameter's role, as core's ct_param_role_rule decides it, from
 * the directions the kernel's PTX states where it was read at load. */
static void assign_roles(ct_kernel *k, const ct_signature *sig, bool have_sig)
{
    uint8_t *dirs = k->n_params ? malloc(k->n_params) : NULL;
    int n_dirs = dirs && k->mangled ? ct_image_directions(k->owner, k->mangled, dirs, k->n_params) : -1;
    const ct_param_facts facts = {
        .sig = have_sig ? sig : NULL,
        .dirs = n_dirs >= 0 ? dirs : NULL,
        .n_dirs = n_dirs >= 0 ? (unsigned)n_dirs : 0,
        .rule = ct_args_match(&ct_g.cfg.args, k->mangled, k->base),
    };
    for (unsigned i = 0; i < k->n_params; i++) {
        ct_param_role r = ct_param_role_rule(&facts, i, k->params[i].size);
        k->params[i].role = r.role;
        k->params[i].scan = r.scan;
    }
    free(dirs);
    k->roles_from = facts.dirs ? "ptx" : have_sig ? "signature" : "size";
    char roles[256];
    roles_text(k, roles, sizeof roles);
    k->roles = ct_store_intern(ct_g.store, roles);
    ct_log(CT_LOG_DEBUG, "%s: parameter roles %s (from the %s%s)", k->pretty, roles, k->roles_from,
           facts.rule ? ", CUTAINT_ARGS over it" : "");
}

/* Without a driver layout, a signature made only of pointers and values still
 * says where the pointers are: each is a separate kernelParams entry.  Values
 * and aggregates of unknown size are left alone. */
static unsigned layout_from_signature(const ct_signature *sig, ct_param *out)
{
    assert(sig->n_params <= CT_SIG_MAX_PARAMS && "a signature fills at most its table");
    for (unsigned i = 0; i < sig->n_params; i++) {
        bool pointer = sig->kind[i] == CT_PARAM_PTR || sig->kind[i] == CT_PARAM_CONST_PTR;
        out[i] = (ct_param){.offset = 0, .size = pointer ? 8 : 0};
    }
    return sig->n_params;
}

/* Where a kernel's parameters lie, on the heap; known: from the driver or
 * the image (exact), else from the signature (pointers only). */
typedef struct layout {
    ct_param *params;
    unsigned n;
    bool known;
} layout;

static layout heap_layout(const ct_param *from, unsigned n, bool known)
{
    layout l = {n ? calloc(n, sizeof *l.params) : NULL, 0, false};
    if (l.params) {
        memcpy(l.params, from, n * sizeof *l.params);
        l.n = n;
        l.known = known;
    }
    return l;
}

/* Layout from the kernel's image: every parameter; empty when the image
 * does not say. */
static layout layout_from_image(const ct_image *img, const char *mangled)
{
    layout l = {0};
    int n = img && mangled ? ct_image_kernel_params(img, mangled, NULL, 0) : -1;
    ct_image_param *laid = n > 0 ? calloc((size_t)n, sizeof *laid) : NULL;
    l.params = laid ? calloc((size_t)n, sizeof *l.params) : NULL;
    if (!l.params || ct_image_kernel_params(img, mangled, laid, (unsigned)n) != n) {
        free(laid);
        free(l.params);
        return (layout){0};
    }
    for (int i = 0; i < n; i++)
        l.params[i] = (ct_param){.offset = laid[i].offset, .size = laid[i].size};
    free(laid);
    l.n = (unsigned)n;
    l.known = true;
    return l;
}

static layout layout_of_signature(const ct_signature *sig)
{
    ct_param scratch[CT_SIG_MAX_PARAMS];
    return sig ? heap_layout(scratch, layout_from_signature(sig, scratch), false) : (layout){0};
}

/* A kernel the driver never loaded (a stand-in's): its image's table, else
 * its signature; the driver is not asked. */
static layout layout_offline(const ct_image *img, const char *mangled, const ct_signature *sig)
{
    layout l = layout_from_image(img, mangled);
    return l.n ? l : layout_of_signature(sig);
}

/* A kernel the driver handed out: the driver's layout; else, as the driver
 * cannot describe a kernel it could not load (lazy loading failing at the
 * launch), the runtime's image's; else the signature's. */
static layout layout_online(CUfunction f, const ct_kernel *k, const ct_signature *sig)
{
    ct_param scratch[CT_SIG_MAX_PARAMS * 2];
    unsigned n = layout_from_driver(f, scratch, sizeof scratch / sizeof *scratch);
    assert(n <= sizeof scratch / sizeof *scratch && "the driver's layout stops at the scratch's end");
    if (n)
        return heap_layout(scratch, n, true);
    ct_image *own = k->owner ? ct_image_of(k->owner) : NULL;
    layout l = layout_from_image(own, k->mangled);
    ct_image_release(own);
    return l.n ? l : layout_of_signature(sig);
}

/* Describes k from img when given one (a kernel the driver never loaded),
 * else from what the driver says. */
static void describe(ct_kernel *k, CUfunction f, const ct_image *img)
{
    ct_signature *sig = malloc(sizeof *sig);
    bool have_sig = sig && k->mangled && ct_signature_from_mangled(k->mangled, sig) == 0;
    layout l =
        img ? layout_offline(img, k->mangled, have_sig ? sig : NULL) : layout_online(f, k, have_sig ? sig : NULL);
    ct_param *params = l.params;
    unsigned n = l.n;
    bool layout_known = l.known;
    if (n == 0 && !have_sig)
        ct_log(CT_LOG_INFO,
               "no parameter layout for kernel %s: its launches are treated as touching "
               "no tracked memory",
               k->pretty);

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

ct_kernel *ct_kernel_described(uint64_t handle)
{
    pthread_mutex_lock(&kernels_lock);
    ct_kernel *k = find_locked(handle);
    pthread_mutex_unlock(&kernels_lock);
    return k && atomic_load(&k->described) ? k : NULL;
}

void ct_kernel_offline(uint64_t handle, const char *mangled, uint64_t owner, const ct_image *img)
{
    learn(handle, mangled, owner, 0);
    pthread_mutex_lock(&kernels_lock);
    ct_kernel *k = find_locked(handle);
    pthread_mutex_unlock(&kernels_lock);
    if (k && !atomic_load(&k->described))
        describe(k, NULL, img ? img : &(ct_image){0});
}

ct_kernel *ct_kernel_for(CUfunction f)
{
    uint64_t handle = (uint64_t)(uintptr_t)f;
    unsigned slot = (unsigned)(handle >> 4) % CT_KERNEL_CACHE;
    /* Read before the lookup: an entry taken out after it makes the cached
     * copy stale at once. */
    uint64_t now = atomic_load_explicit(&generation, memory_order_acquire);
    if (kernel_cache[slot].handle == handle && kernel_cache[slot].kernel && kernel_cache[slot].generation == now)
        return kernel_cache[slot].kernel;
    ct_kernel *k = kernel_entry(handle);
    if (!k)
        return NULL;
    if (!atomic_load(&k->described)) {
        if (!named(k))
            name_from_driver(k, f);
        describe(k, f, NULL);
    }
    kernel_cache[slot].handle = handle;
    kernel_cache[slot].generation = now;
    kernel_cache[slot].kernel = k;
    return k;
}

/*
 * launch.c - kernel launches: which kernel, which of its parameters are
 * device pointers, in which direction, and what to do when one carries a
 * failure.
 *
 * A kernel's description (name, parameter layout, roles) is built once, the
 * first time a launch needs it: from cuFuncGetParamInfo when the driver has
 * it, else from the mangled signature; roles from the demangled signature
 * (const T* is read only), CUTAINT_ARGS overriding.  Kernels are never
 * forgotten, so a pointer to one stays valid for the life of the process.
 *
 * Invariants:
 * - Nothing is decoded on the happy path: while no byte carries a failure a
 *   launch has no input to check, and a launch that succeeded has nothing to
 *   release.  Parameters are decoded only when taint exists somewhere or the
 *   launch failed (the caller's kernelParams are still valid then).
 * - Never read beyond what is known of kernelParams: no layout and no
 *   signature means the launch touches no tracked memory (logged once).
 * - A skipped launch is not handed to the driver; its outputs take the root
 *   failure's id, never a new one.
 * - A launch opens no provisional write scope, whether or not taint exists
 *   elsewhere: its outputs are tainted when the driver reports the failure,
 *   by the same rule whatever unrelated memory carries.  A successful launch
 *   decoded while taint existed releases its outputs: it is their last
 *   writer.  (Copies and memsets, whose extent is exact, do open one.)
 * - Launch numbers are unique and increase along each thread.  They are
 *   handed out one at a time, so they are exactly the order cutaint saw
 *   launches in, while threads do not launch at the same time (one
 *   launching thread, or threads taking turns, as PyTorch's main and
 *   autograd threads do).  Threads launching at once would fight over the
 *   counter's cache line on every launch, and their order is not
 *   reproducible anyway: a thread that finds another's numbers between
 *   INTERLEAVED_TO_BLOCK of its launches in a row takes its next
 *   NUMBER_BLOCK numbers at once, then probes one at a time again.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ct_hash.h"
#include "shim.h"
#include "signature.h"

#define CT_MAX_BINDINGS 256
#define CT_MAX_EXTRA_PAIRS 16
#define CT_KERNEL_CACHE 8
#define INTERLEAVED_TO_BLOCK 8
#define NUMBER_BLOCK 256

typedef struct ct_param {
    uint32_t offset, size;
    uint8_t role;   /* ct_role, never CT_ROLE_DEFAULT once described */
    bool scan;      /* aggregate or unknown type: every aligned word may be a pointer */
} ct_param;

typedef struct ct_kernel {
    uint64_t handle;
    const char *mangled;   /* interned; NULL until known */
    const char *pretty;    /* demangled signature, or the name as is */
    const char *base;      /* qualified name without parameters */
    atomic_bool described;
    bool layout_known;
    unsigned n_params;
    ct_param *params;
    UT_hash_handle hh;
} ct_kernel;

static ct_kernel *kernels;
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;

static CT_HOT_TLS struct {
    uint64_t handle;
    ct_kernel *kernel;
} kernel_cache[CT_KERNEL_CACHE];

/* Alone on its cache line (a 64-aligned struct is 64 bytes long), as
 * every launch may write it. */
static struct {
    _Alignas(64) atomic_uint_fast64_t next;
} launches_numbered;
static CT_HOT_TLS struct {
    uint64_t last, block_end;
    unsigned interleaved;  /* launches in a row that found a gap before them */
} numbering;

/* What the launch in flight on this thread needs between before and after. */
static CT_HOT_TLS struct {
    ct_launch launch;
    ct_kernel *kernel;
    uint64_t seq;
    bool decoded;
    unsigned n_in, n_out;
    ct_range in[CT_MAX_BINDINGS];
    ct_range out[CT_MAX_BINDINGS];
} current;

void ct_launch_atfork_child(void)
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

static ct_kernel *kernel_for(CUfunction f)
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

/* ---- bindings ----------------------------------------------------------- */

static void bind(uint64_t value, uint8_t role)
{
    if (value == 0)
        return;
    ct_range r = {value, CT_TO_END};
    if ((role == CT_ROLE_READ || role == CT_ROLE_READWRITE) && current.n_in < CT_MAX_BINDINGS)
        current.in[current.n_in++] = r;
    if ((role == CT_ROLE_WRITE || role == CT_ROLE_READWRITE) && current.n_out < CT_MAX_BINDINGS)
        current.out[current.n_out++] = r;
}

/* Every 8-byte-aligned word of bytes [0, size) placed at buffer offset `at`. */
static void bind_words(const unsigned char *bytes, uint64_t at, uint64_t size, uint8_t role)
{
    uint64_t first = (8 - at % 8) % 8;
    for (uint64_t i = first; i + 8 <= size; i += 8) {
        uint64_t word;
        memcpy(&word, bytes + i, sizeof word);
        bind(word, role);
    }
}

static void bind_param(const ct_param *p, const unsigned char *value)
{
    if (!value || p->role == CT_ROLE_IGNORE || p->size < 8)
        return;
    if (p->scan) {
        bind_words(value, p->offset, p->size, p->role);
    } else {
        uint64_t word;
        memcpy(&word, value, sizeof word);
        bind(word, p->role);
    }
}

/* The packed buffer of `extra`: CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE pairs. */
static void bind_extra(const ct_kernel *k, void **extra)
{
    const unsigned char *buffer = NULL;
    size_t size = 0;
    for (unsigned i = 0; i < 2 * CT_MAX_EXTRA_PAIRS && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buffer = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
            size = *(const size_t *)extra[i + 1];
    }
    if (!buffer || size == 0)
        return;
    if (!k->layout_known) {
        bind_words(buffer, 0, size, CT_ROLE_READWRITE);
        return;
    }
    for (unsigned i = 0; i < k->n_params; i++)
        if (k->params[i].offset + (uint64_t)k->params[i].size <= size)
            bind_param(&k->params[i], buffer + k->params[i].offset);
}

static void decode(void)
{
    current.decoded = true;
    current.n_in = current.n_out = 0;
    const ct_kernel *k = current.kernel;
    if (!k)
        return;
    if (current.launch.params) {
        for (unsigned i = 0; i < k->n_params; i++)
            bind_param(&k->params[i], current.launch.params[i]);
    } else if (current.launch.extra) {
        bind_extra(k, current.launch.extra);
    }
}

/* ---- the launch ------------------------------------------------------------ */

static ct_failure_desc describe_launch(const ct_call *call, CUresult error)
{
    ct_failure_desc d = ct_describe(call, error);
    d.kernel = current.kernel ? current.kernel->pretty : NULL;
    d.launch_seq = current.seq;
    memcpy(d.grid, current.launch.grid, sizeof d.grid);
    memcpy(d.block, current.launch.block, sizeof d.block);
    d.stream = (uint64_t)(uintptr_t)current.launch.stream;
    return d;
}

static bool skip(ct_call *call, ct_failure_id root, int error)
{
    ct_skip_desc s = {
        .kernel = current.kernel ? current.kernel->pretty : NULL,
        .launch_seq = current.seq,
        .needed = current.in[0].addr,
    };
    for (unsigned i = 0; i < current.n_in; i++) {
        if (ct_read_failure(ct_g.store, &current.in[i], 1, NULL) == root) {
            s.needed = current.in[i].addr;
            break;
        }
    }
    ct_settle_skip(call, root, error, &s, current.out, current.n_out);
    return false;
}

static uint64_t next_launch_number(void)
{
    if (numbering.last < numbering.block_end)
        return ++numbering.last;
    uint64_t take = numbering.interleaved >= INTERLEAVED_TO_BLOCK ? NUMBER_BLOCK : 1;
    uint64_t n = atomic_fetch_add_explicit(&launches_numbered.next, take, memory_order_relaxed) + 1;
    numbering.interleaved = take > 1 || n == numbering.last + 1 ? 0 : numbering.interleaved + 1;
    numbering.last = n;
    numbering.block_end = n + take - 1;
    return n;
}

bool ct_before_launch(ct_call *call, const ct_launch *launch)
{
    current.launch = *launch;
    current.seq = next_launch_number();
    current.decoded = false;
    current.kernel = NULL;
    bool tainted = ct_store_tainted(ct_g.store);
    if (ct_g.cfg.inject.n == 0 && !tainted)
        return true;
    current.kernel = kernel_for(launch->f);
    call->kernel = current.kernel ? current.kernel->pretty : NULL;
    if (current.kernel &&
        ct_call_inject(call, CT_INJECT_LAUNCH, current.kernel->mangled, current.kernel->base))
        return true; /* settled as a failure by ct_after_launch */
    if (!tainted)
        return true;
    decode();
    int error = 0;
    ct_failure_id root = ct_read_failure(ct_g.store, current.in, current.n_in, &error);
    /* With no current context the driver refuses the launch itself and runs
     * nothing: that answer is the program's, not a skip. */
    if (root && ct_has_current_context())
        return skip(call, root, error);
    return true;
}

void ct_after_launch(ct_call *call)
{
    if (call->result == CUDA_SUCCESS) {
        if (current.decoded)
            ct_written(ct_g.store, current.out, current.n_out);
        return;
    }
    if (!current.kernel)
        current.kernel = kernel_for(current.launch.f);
    if (!current.decoded)
        decode();
    ct_failure_desc failed = describe_launch(call, call->result);
    ct_settle_writes(call, current.out, current.n_out, &failed);
    call->kernel = failed.kernel;
}

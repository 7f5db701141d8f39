/*
 * plugins.c: the kernel registry (every kernel a module or library
 * contains: the built-in library, then the kernels of the plugins named in
 * FAKECUDA_KERNELS), loading those plugins (ABI in fakecuda_kernel.h), and
 * running a queued launch of any known kernel.
 *
 * Invariants:
 * - Index i < FC_NKERNELS is built-in kernel i; plugin kernels follow in
 *   registration order. by_name holds every committed index, sorted by name.
 * - Names are unique: the first registration of a name wins (built-ins
 *   first, then plugins in list order); a later one is refused.
 * - The registry is built once, in fc_plugins_load()'s pthread_once, and is
 *   read-only afterwards; every entry point loads it (fc_enter) before it
 *   can reach a kernel.
 * - A plugin is committed whole or not at all: a skipped one leaves no
 *   kernel or memory behind, is closed again, and gets one stderr line.
 * - A plugin kernel's name and layout are fakecuda's copies; its origin
 *   points into the kept copy of FAKECUDA_KERNELS.
 */
#include "fakecuda.h"
#include "ptx/ptx.h"

#include <assert.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FC_MAX_NAME_BYTES 65535u

_Static_assert(FAKECUDA_KERNEL_ILLEGAL_ADDRESS == CUDA_ERROR_ILLEGAL_ADDRESS, "the ABI's codes are CUresults");
_Static_assert(FAKECUDA_KERNEL_MISALIGNED_ADDRESS == CUDA_ERROR_MISALIGNED_ADDRESS, "the ABI's codes are CUresults");
_Static_assert(FAKECUDA_KERNEL_LAUNCH_FAILED == CUDA_ERROR_LAUNCH_FAILED, "the ABI's codes are CUresults");

static struct {
    fc_kernel *plugin; /* committed plugin kernels, then the staged ones */
    unsigned committed, n, cap;
    unsigned *by_name; /* builtin_order until the first plugin commits */
    unsigned builtin_order[FC_NKERNELS];
} reg;

/* The plugin being loaded: its host structure, and the first reason to skip it. */
typedef struct fc_loading {
    struct fakecuda_host host;
    char reason[512];
} fc_loading;

static pthread_once_t plugins_once = PTHREAD_ONCE_INIT;
static _Thread_local bool in_load;        /* this thread is inside the once */
static _Thread_local fc_loading *loading; /* whose entry function is running */
static char *spec;                        /* FAKECUDA_KERNELS, split in place; kept */

/* Any index, staged ones included. */
static const fc_kernel *fc_any(unsigned i)
{
    return i < FC_NKERNELS ? &fc_kernels[i] : &reg.plugin[i - FC_NKERNELS];
}

static int fc_by_name(const void *a, const void *b)
{
    return strcmp(fc_any(*(const unsigned *)a)->name, fc_any(*(const unsigned *)b)->name);
}

static int fc_name_cmp(const void *key, const void *elem)
{
    return strcmp(key, fc_any(*(const unsigned *)elem)->name);
}

/* Records the first reason the plugin is skipped; returns the refusal for register_kernel. */
__attribute__((format(printf, 2, 3))) static int fc_refuse(fc_loading *l, const char *fmt, ...)
{
    if (!l->reason[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(l->reason, sizeof l->reason, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The layout must be the C++ ABI's: non-empty parameters, in order, none overlapping. */
static int fc_check(fc_loading *l, const struct fakecuda_kernel *k)
{
    if (!k || !k->name || !k->name[0] || strnlen(k->name, FC_MAX_NAME_BYTES + 1) > FC_MAX_NAME_BYTES)
        return fc_refuse(l, "a kernel registered without a name, or with one over %u bytes", FC_MAX_NAME_BYTES);
    if (!k->run)
        return fc_refuse(l, "kernel %.200s registered without a function", k->name);
    if (k->nparams && !k->params)
        return fc_refuse(l, "kernel %.200s has %u parameters but no layout", k->name, k->nparams);
    size_t end = 0;
    for (unsigned i = 0; i < k->nparams; i++) {
        const struct fakecuda_param *p = &k->params[i];
        if (p->size == 0)
            return fc_refuse(l, "kernel %.200s: parameter %u has size 0", k->name, i);
        if (p->offset < end)
            return fc_refuse(l, "kernel %.200s: parameter %u at offset %zu overlaps the one before, which ends at %zu",
                             k->name, i, p->offset, end);
        if (p->offset > FC_MAX_PARAM_BYTES || p->size > FC_MAX_PARAM_BYTES - p->offset)
            return fc_refuse(l, "kernel %.200s: parameters end past %u bytes, the most a kernel may take", k->name,
                             FC_MAX_PARAM_BYTES);
        end = p->offset + p->size;
    }
    return 0;
}

static bool fc_grow(void)
{
    unsigned cap = reg.cap ? reg.cap * 2 : 64;
    fc_kernel *v = cap > reg.cap ? realloc(reg.plugin, cap * sizeof *v) : NULL;
    if (!v)
        return false;
    reg.plugin = v;
    reg.cap = cap;
    return true;
}

/* Appends fakecuda's own copy of k, uncommitted. */
static int fc_stage(fc_loading *l, const struct fakecuda_kernel *k)
{
    assert(in_load && "the registry changes only while it loads, in the once");
    if (reg.n == reg.cap && !fc_grow())
        return fc_refuse(l, "out of memory");
    char *name = strdup(k->name);
    fc_param *param = k->nparams ? calloc(k->nparams, sizeof *param) : NULL;
    if (!name || (k->nparams && !param)) {
        free(name);
        free(param);
        return fc_refuse(l, "out of memory");
    }
    for (unsigned i = 0; i < k->nparams; i++)
        param[i] = (fc_param){(uint32_t)k->params[i].offset, (uint32_t)k->params[i].size};
    reg.plugin[reg.n++] = (fc_kernel){name, NULL, k->nparams, param, k->run, k->user, l->host.plugin};
    return 0;
}

static int fc_register(const struct fakecuda_host *host, const struct fakecuda_kernel *k)
{
    fc_loading *l = loading;
    if (!l || host != &l->host)
        return -1; /* after its entry function returned, or from another thread */
    if (l->reason[0] || fc_check(l, k) != 0)
        return -1;
    return fc_stage(l, k);
}

static void fc_unstage(void)
{
    while (reg.n > reg.committed) {
        fc_kernel *k = &reg.plugin[--reg.n];
        free((void *)k->name);
        free((void *)k->param);
    }
}

/* Makes the staged kernels known, unless one's name already is. */
static int fc_commit(fc_loading *l)
{
    unsigned total = FC_NKERNELS + reg.n;
    unsigned *order = malloc(total * sizeof *order);
    if (!order)
        return fc_refuse(l, "out of memory");
    for (unsigned i = 0; i < total; i++)
        order[i] = i;
    qsort(order, total, sizeof *order, fc_by_name);
    for (unsigned i = 1; i < total; i++) {
        unsigned a = order[i - 1], b = order[i], first = a < b ? a : b;
        if (strcmp(fc_any(a)->name, fc_any(b)->name) != 0)
            continue;
        free(order);
        if (first >= FC_NKERNELS + reg.committed)
            return fc_refuse(l, "it registers kernel %.200s twice", fc_any(a)->name);
        return fc_refuse(l, "kernel %.200s is already registered by %s (the first registration of a name wins)",
                         fc_any(a)->name, first < FC_NKERNELS ? "fakecuda's built-in library" : fc_any(first)->origin);
    }
    if (reg.by_name != reg.builtin_order)
        free(reg.by_name);
    reg.by_name = order;
    reg.committed = reg.n;
    return 0;
}

/* Checks the version before running anything of the plugin's but its constructors. */
static void fc_call_entry(fc_loading *l, void *so)
{
    const unsigned *abi = dlsym(so, "fakecuda_kernel_abi_version");
    int (*entry)(const struct fakecuda_host *) =
        (int (*)(const struct fakecuda_host *))dlsym(so, "fakecuda_kernels_register");
    if (!abi) {
        fc_refuse(l, "no fakecuda_kernel_abi_version symbol (define it with FAKECUDA_KERNEL_PLUGIN_ABI)");
    } else if (*abi != FAKECUDA_KERNEL_ABI_VERSION) {
        fc_refuse(l, "built for kernel ABI version %u, but this fakecuda has version %u", *abi,
                  FAKECUDA_KERNEL_ABI_VERSION);
    } else if (!entry) {
        fc_refuse(l, "no fakecuda_kernels_register function");
    } else {
        loading = l;
        int rc = entry(&l->host);
        loading = NULL;
        if (rc != 0)
            fc_refuse(l, "fakecuda_kernels_register returned %d", rc);
    }
}

static void fc_load_plugin(const char *path)
{
    fc_loading l = {.host = {FAKECUDA_KERNEL_ABI_VERSION, path, fc_register}};
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        const char *err = dlerror();
        fc_refuse(&l, "%s", err ? err : "dlopen failed");
    } else {
        fc_call_entry(&l, so);
    }
    if (!l.reason[0])
        fc_commit(&l);
    if (!l.reason[0])
        return;
    fc_unstage();
    fprintf(stderr, "fakecuda: FAKECUDA_KERNELS: skipping plugin %s: %s\n", path, l.reason);
    if (so)
        dlclose(so);
}

static void fc_load_all(void)
{
    in_load = true;
    for (unsigned i = 0; i < FC_NKERNELS; i++)
        reg.builtin_order[i] = i;
    qsort(reg.builtin_order, FC_NKERNELS, sizeof reg.builtin_order[0], fc_by_name);
    reg.by_name = reg.builtin_order;
    const char *env = getenv("FAKECUDA_KERNELS");
    spec = env && *env ? strdup(env) : NULL;
    if (env && *env && !spec)
        fprintf(stderr, "fakecuda: FAKECUDA_KERNELS ignored: out of memory\n");
    char *save = NULL;
    for (char *path = spec ? strtok_r(spec, ":", &save) : NULL; path; path = strtok_r(NULL, ":", &save))
        fc_load_plugin(path);
    in_load = false;
}

/* False on the loading thread itself: a plugin calling the driver while it loads. */
bool fc_plugins_load(void)
{
    if (in_load)
        return false;
    pthread_once(&plugins_once, fc_load_all);
    return true;
}

unsigned fc_kernel_count(void)
{
    return FC_NKERNELS + reg.committed;
}

const fc_kernel *fc_kernel_at(unsigned i)
{
    return fc_any(i);
}

const fc_kernel *fc_kernel_find(const char *name, unsigned *index)
{
    const unsigned *hit = reg.by_name ? bsearch(name, reg.by_name, fc_kernel_count(), sizeof *hit, fc_name_cmp) : NULL;
    if (hit && index)
        *index = *hit;
    return hit ? fc_any(*hit) : NULL;
}

/* Bytes of the packed parameter buffer: up to the end of the last parameter. */
size_t fc_kernel_param_bytes(const fc_kernel *k)
{
    return k->nparams ? (size_t)k->param[k->nparams - 1].offset + k->param[k->nparams - 1].size : 0;
}

/* Runs under the memory read lock (queue.c), so views stay valid for the call. */
static void *fc_plugin_device(uint64_t addr, size_t bytes)
{
    return fc_mem_view_locked((CUdeviceptr)addr, bytes);
}

static CUresult fc_plugin_result(int rc)
{
    switch (rc) {
    case FAKECUDA_KERNEL_OK: return CUDA_SUCCESS;
    case FAKECUDA_KERNEL_ILLEGAL_ADDRESS: return CUDA_ERROR_ILLEGAL_ADDRESS;
    case FAKECUDA_KERNEL_MISALIGNED_ADDRESS: return CUDA_ERROR_MISALIGNED_ADDRESS;
    case CUDA_ERROR_ASSERT: return CUDA_ERROR_ASSERT;                           /* the PTX executor's */
    case CUDA_ERROR_ILLEGAL_INSTRUCTION: return CUDA_ERROR_ILLEGAL_INSTRUCTION; /* faults (ptx/ptx.h) */
    case CUDA_ERROR_LAUNCH_TIMEOUT: return CUDA_ERROR_LAUNCH_TIMEOUT;
    default: return CUDA_ERROR_LAUNCH_FAILED;
    }
}

CUresult fc_kernel_run(fc_kwork *kw)
{
    const fc_kernel *k = kw->k;
    fc_dims d = kw->dims;
    if (k->run)
        return k->run(fc_kwork_params(kw), (uint64_t)d.gx * d.gy * d.gz * d.bx * d.by * d.bz);
    struct fakecuda_launch l = {
        .grid = {d.gx, d.gy, d.gz},
        .block = {d.bx, d.by, d.bz},
        .shared_bytes = kw->smem,
        .stream = kw->stream,
        .params = fc_kwork_params(kw),
        .params_size = kw->nbytes,
        .device = fc_plugin_device,
        .user = k->user,
    };
    /* a cooperative launch of a PTX kernel has every block resident (ptx/ptx_sync.c) */
    fakecuda_kernel_fn host = kw->cooperative && k->host == fc_ptx_launch ? fc_ptx_launch_cooperative : k->host;
    return fc_plugin_result(host(&l));
}

/*
 * testlayer.c - libtestlayer.so, a second interposer of the driver in the
 * pattern of the GPU-sharing layers (HAMi-core's libvgpu.so, vgpu-manager):
 * it exports its own wrappers of a few cu* entry points (per-thread
 * _ptds/_ptsz names among them), overrides dlsym (a lookup of one of those
 * names gets its wrapper), and swaps the pointers cuGetProcAddress returns
 * for its wrappers.  Built twice, resolving its real functions two ways:
 * - libtestlayer.so, as interposers that mean to stack do: through the
 *   next dlsym in the chain (glibc's dlsym asked for RTLD_NEXT's "dlsym")
 *   on a handle of libcuda.so.1;
 * - libtestlayer_hami.so (LAYER_HAMI), as HAMi-core's libvgpu.so does (its
 *   documented behaviour; none of its code): "the real dlsym" is
 *   dlvsym(RTLD_NEXT, "dlsym", <glibc's first version>), every driver
 *   function is looked up with it on a handle of libcuda.so.1, and
 *   RTLD_NEXT is the fallback when the handle has none;
 * - libtestlayer_bypass.so (LAYER_BYPASS), around every hook: glibc's
 *   dlsym asked of libc.so.6's own handle, which no interposer can answer
 *   (what cutaint can only notice at exit, never check).
 *
 * Owns: counting the calls that reach it, written at exit as "NAME COUNT"
 * lines to $TESTLAYER_COUNTS (the test's evidence of what was passed down),
 * and a memory limit, $TESTLAYER_MEMORY_LIMIT bytes, that it enforces
 * itself (an allocation past it is CUDA_ERROR_OUT_OF_MEMORY and never
 * passed down): the layer's own effect, which must hold in either order.
 * Knows nothing of cutaint.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* An X-macro table, laid out by hand: */
/* clang-format off */
#define LAUNCH_PARAMS                                                                      \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
     unsigned shared, CUstream s, void **params, void **extra)
/* clang-format on */
#define LAUNCH_ARGS (f, gx, gy, gz, bx, by, bz, shared, s, params, extra)
/* The plain wrappers: name, parameters, arguments. */
/* An X-macro table, laid out by hand: */
/* clang-format off */
#define LAYER_CALLS(X)                                                          \
    X(cuInit, (unsigned flags), (flags))                                        \
    X(cuMemcpyHtoD_v2, (CUdeviceptr d, const void *h, size_t n), (d, h, n))     \
    X(cuMemcpyDtoH_v2, (void *h, CUdeviceptr d, size_t n), (h, d, n))           \
    X(cuMemcpyHtoD_v2_ptds, (CUdeviceptr d, const void *h, size_t n), (d, h, n)) \
    X(cuMemcpyDtoH_v2_ptds, (void *h, CUdeviceptr d, size_t n), (h, d, n))      \
    X(cuLaunchKernel, LAUNCH_PARAMS, LAUNCH_ARGS)                               \
    X(cuLaunchKernel_ptsz, LAUNCH_PARAMS, LAUNCH_ARGS)
/* clang-format on */
/* Every function it exports (the limit's and cuGetProcAddress's are
 * written out). */
/* An X-macro table, laid out by hand: */
/* clang-format off */
#define LAYER_FUNCS(X)                                                 \
    LAYER_CALLS(X)                                                     \
    X(cuMemAlloc_v2, (CUdeviceptr * p, size_t n), ())                  \
    X(cuMemFree_v2, (CUdeviceptr p), ())                               \
    X(cuGetProcAddress_v2,                                             \
      (const char *symbol, void **pfn, int version, cuuint64_t flags, CUdriverProcAddressQueryResult *status), ()) \
    X(cuGetProcAddress, (const char *symbol, void **pfn, int version, cuuint64_t flags), ())
/* clang-format on */

enum {
#define X(name, params, args) ID_##name,
    LAYER_FUNCS(X)
#undef X
        N_FUNCS
};

typedef CUresult CUDAAPI cuGetProcAddress_v2_fn(const char *, void **, int, cuuint64_t,
                                                CUdriverProcAddressQueryResult *);
typedef CUresult CUDAAPI cuGetProcAddress_fn(const char *, void **, int, cuuint64_t);

typedef void *(*dlsym_fn)(void *, const char *);

static const char *const names[N_FUNCS] = {
#define X(name, params, args) #name,
    LAYER_FUNCS(X)
#undef X
};
static void *real[N_FUNCS];
static void *mine[N_FUNCS];
static atomic_ulong calls[N_FUNCS];
static dlsym_fn next_dlsym;
static pthread_once_t resolved = PTHREAD_ONCE_INIT;

/* glibc's dlsym, then the dlsym after this library (another interposer's,
 * or glibc's again). */
void *layer_glibc_dlsym(void);

#if defined(__aarch64__)
#define GLIBC_FIRST "GLIBC_2.17"
#else
#define GLIBC_FIRST "GLIBC_2.2.5"
#endif

static bool loaded; /* the constructor has begun */

static void find_next_dlsym(void)
{
#if defined(LAYER_HAMI)
    next_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", GLIBC_FIRST);
#elif defined(LAYER_BYPASS)
    /* A sanitizer runtime asks before the constructor ran, when its own
     * dlopen is not ready yet: glibc's by version until then. */
    if (!loaded) {
        next_dlsym = (dlsym_fn)layer_glibc_dlsym();
        return;
    }
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    next_dlsym = libc ? (dlsym_fn)dlvsym(libc, "dlsym", "GLIBC_2.34") : NULL;
    if (libc && !next_dlsym)
        next_dlsym = (dlsym_fn)dlvsym(libc, "dlsym", GLIBC_FIRST);
#else
    dlsym_fn glibc = (dlsym_fn)layer_glibc_dlsym();
    next_dlsym = glibc ? (dlsym_fn)glibc(RTLD_NEXT, "dlsym") : NULL;
    if (!next_dlsym)
        next_dlsym = glibc;
#endif
}

static void resolve(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    for (int i = 0; i < N_FUNCS; i++) {
        real[i] = cuda && next_dlsym ? next_dlsym(cuda, names[i]) : NULL;
#ifdef LAYER_HAMI
        if (!real[i] && next_dlsym)
            real[i] = next_dlsym(RTLD_NEXT, names[i]);
#endif
    }
}

/* Counts the call and resolves on first use; the real function or NULL. */
static void *arrive(int id)
{
    pthread_once(&resolved, resolve);
    atomic_fetch_add(&calls[id], 1);
    return real[id];
}

static void swap_in(CUresult r, void **pfn);

#define X(name, params, args)                           \
    typedef CUresult CUDAAPI name##_fn params;          \
    EXPORT CUresult CUDAAPI name params                 \
    {                                                   \
        name##_fn *fn = (name##_fn *)arrive(ID_##name); \
        return fn ? fn args : CUDA_ERROR_NOT_FOUND;     \
    }
LAYER_CALLS(X)
#undef X

/* The limit: what is live, by pointer (a test's few allocations). */
#define MAX_LIVE 256
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    CUdeviceptr p;
    size_t n;
} live[MAX_LIVE];
static size_t in_use;

static size_t memory_limit(void)
{
    const char *v = getenv("TESTLAYER_MEMORY_LIMIT");
    return v && *v ? strtoull(v, NULL, 10) : SIZE_MAX;
}

EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    typedef CUresult CUDAAPI alloc_fn(CUdeviceptr *, size_t);
    alloc_fn *fn = (alloc_fn *)arrive(ID_cuMemAlloc_v2);
    pthread_mutex_lock(&live_lock);
    CUresult r = !fn ? CUDA_ERROR_NOT_FOUND : n > memory_limit() - in_use ? CUDA_ERROR_OUT_OF_MEMORY : fn(p, n);
    for (int i = 0; r == CUDA_SUCCESS && i < MAX_LIVE; i++)
        if (!live[i].p) {
            live[i].p = *p, live[i].n = n, in_use += n;
            break;
        }
    pthread_mutex_unlock(&live_lock);
    return r;
}

EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr p)
{
    typedef CUresult CUDAAPI free_fn(CUdeviceptr);
    free_fn *fn = (free_fn *)arrive(ID_cuMemFree_v2);
    CUresult r = fn ? fn(p) : CUDA_ERROR_NOT_FOUND;
    pthread_mutex_lock(&live_lock);
    for (int i = 0; r == CUDA_SUCCESS && p && i < MAX_LIVE; i++)
        if (live[i].p == p) {
            in_use -= live[i].n, live[i].p = 0;
            break;
        }
    pthread_mutex_unlock(&live_lock);
    return r;
}

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult *status)
{
    cuGetProcAddress_v2_fn *fn = (cuGetProcAddress_v2_fn *)arrive(ID_cuGetProcAddress_v2);
    CUresult r = fn ? fn(symbol, pfn, version, flags, status) : CUDA_ERROR_NOT_FOUND;
    swap_in(r, pfn);
    return r;
}

EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    cuGetProcAddress_fn *fn = (cuGetProcAddress_fn *)arrive(ID_cuGetProcAddress);
    CUresult r = fn ? fn(symbol, pfn, version, flags) : CUDA_ERROR_NOT_FOUND;
    swap_in(r, pfn);
    return r;
}

/* A pointer the driver (or whoever is behind us) handed out for one of our
 * names is replaced with our wrapper of that very function. */
static void swap_in(CUresult r, void **pfn)
{
    if (r != CUDA_SUCCESS || !pfn || !*pfn)
        return;
    for (int i = 0; i < N_FUNCS; i++)
        if (*pfn == real[i]) {
            *pfn = mine[i];
            return;
        }
}

/* glibc's dlsym, for RTLD_NEXT lookups: found on first use, as a sanitizer
 * runtime asks before any constructor ran. */
__attribute__((visibility("hidden"), used)) void *layer_glibc_dlsym(void)
{
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    static _Atomic(dlsym_fn) glibc;
    dlsym_fn found = atomic_load(&glibc);
    for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !found; i++)
        found = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    atomic_store(&glibc, found);
    return (void *)found;
}

__attribute__((visibility("hidden"), used)) void *layer_dlsym_hook(void *handle, const char *name)
{
    if (!next_dlsym)
        find_next_dlsym();
    if (name[0] == 'c' && name[1] == 'u')
        for (int i = 0; i < N_FUNCS; i++)
            if (strcmp(name, names[i]) == 0)
                return mine[i];
    return next_dlsym ? next_dlsym(handle, name) : NULL;
}

/* dlsym: RTLD_NEXT tail-jumps to glibc's, so "next" stays relative to the
 * caller (a sanitizer runtime looks up its real functions that way);
 * anything else goes through the hook. */
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    cmpq $-1, %rdi\n"
        "    jne 1f\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"
        "    call layer_glibc_dlsym\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    jmp *%rax\n"
        "1:  jmp layer_dlsym_hook\n"
        ".size dlsym, .-dlsym\n");
#else
EXPORT void *dlsym(void *handle, const char *name)
{
    if (handle == RTLD_NEXT)
        return ((dlsym_fn)layer_glibc_dlsym())(handle, name); /* relative to this layer */
    return layer_dlsym_hook(handle, name);
}
#endif

__attribute__((constructor)) static void layer_load(void)
{
    loaded = true;
#define X(name, params, args) mine[ID_##name] = (void *)name;
    LAYER_FUNCS(X)
#undef X
    find_next_dlsym();
}

__attribute__((destructor)) static void layer_unload(void)
{
    const char *path = getenv("TESTLAYER_COUNTS");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f)
        return;
    for (int i = 0; i < N_FUNCS; i++)
        fprintf(f, "%s %lu\n", names[i], atomic_load(&calls[i]));
    fclose(f);
}

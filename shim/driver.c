/*
 * driver.c - the real libcuda: where it is, and where each real function is.
 *
 * Real functions are resolved from an explicit handle, dlopen("libcuda.so.1")
 * (RTLD_NOLOAD first, so the copy the runtime opened RTLD_LOCAL is the one we
 * use), through the real dlsym (dlsym.c), unless another interposer loaded
 * after this library stands in for the function (chain.c): the wrapper then
 * calls that.
 *
 * Invariants:
 * - The driver is loaded at most once, lazily, on the first call that needs
 *   a real function; never from inside dlsym (ct_in_driver only asks dladdr).
 * - A slot, once resolved, never changes; a missing function is remembered as
 *   missing, so the lookup cost is paid once per entry point or helper
 *   (shim.h CT_HELPERS): no dlsym on any path a program can repeat.
 * - No driver: one clear line in the log, and every wrapped call answers
 *   CT_NO_DRIVER_RESULT instead of crashing.
 * - Every first use of a slot tells init.c the
 *   process has reached the driver; the hot path never asks.  A forked child
 *   empties its slots (the functions stay known), so its own first call
 *   takes that slow path once and the child is a process that reached the
 *   driver only when it calls it.
 */
#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

static void *driver_handle;
static int driver_version;      /* 0: none could be loaded, or it did not say */
static pid_t driver_pid;        /* the process that loaded it */
static atomic_bool loaded_flag; /* load_driver has run and found one */
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
_Atomic(void *) ct_slots[CT_N_SLOTS];     /* what the wrappers call; emptied in a forked child */
static _Atomic(void *) known[CT_N_SLOTS]; /* every function found so far, kept across fork */
static const char *const helper_names[] = {
#define CT_HELPER_NAME(name) #name,
    CT_HELPERS(CT_HELPER_NAME)
#undef CT_HELPER_NAME
};

static int driver_version_of(void *handle)
{
    CUresult (*get)(int *) = handle ? (CUresult(*)(int *))ct_real_dlsym(handle, "cuDriverGetVersion") : NULL;
    int version = 0;
    return get && get(&version) == CUDA_SUCCESS ? version : 0;
}

static void load_driver(void)
{
#ifndef NDEBUG
    static atomic_bool loaded_before;
    bool again = atomic_exchange(&loaded_before, true);
    assert(!again && "the driver is loaded at most once");
#endif
    driver_handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!driver_handle)
        driver_handle = dlopen("libcuda.so.1", RTLD_NOW);
    driver_pid = getpid();
    if (!driver_handle) {
        const char *why = dlerror();
        ct_log(CT_LOG_ERROR,
               "cannot load the CUDA driver libcuda.so.1 (%s); every CUDA call "
               "will fail with CUDA_ERROR_NO_DEVICE",
               why ? why : "not found");
    }
    driver_version = driver_version_of(driver_handle);
    atomic_store_explicit(&loaded_flag, driver_handle != NULL, memory_order_release);
}

bool ct_driver_loaded(void)
{
    pthread_once(&driver_once, load_driver);
    return driver_handle != NULL;
}

/* Never loads it: for the exit handler, which must not start a driver the
 * program never used, nor use one a forked child inherited. */
bool ct_driver_used_here(void)
{
    bool loaded = atomic_load_explicit(&loaded_flag, memory_order_acquire);
    return loaded && driver_pid == getpid();
}

/* The driver is loaded (or known absent) and the process has reached it. */
static bool reach_driver(void)
{
    bool loaded = ct_driver_loaded();
    ct_reached_driver(driver_version);
    return loaded;
}

static const char *slot_name(int id)
{
    return id < CT_N_ENTRIES ? ct_entries[id].name : helper_names[id - CT_N_ENTRIES];
}

void *ct_real_own(int id)
{
    return ct_driver_loaded() ? ct_real_dlsym(driver_handle, ct_entries[id].name) : NULL;
}

/* Out of line: inlined, its register saves would be paid by every call. */
__attribute__((noinline)) void *ct_real_resolve(int id)
{
    bool loaded = reach_driver();
    void *fn = atomic_load_explicit(&known[id], memory_order_acquire);
    if (!fn) {
        fn = loaded ? ct_chain_resolve(driver_handle, slot_name(id)) : NULL;
        if (!fn)
            fn = CT_MISSING;
        atomic_store_explicit(&known[id], fn, memory_order_release);
    }
    assert(fn && "a missing function is remembered as missing, so its lookup is paid once");
    assert((id >= CT_N_ENTRIES || fn != ct_entries[id].wrapper) && "the shim calls real functions, never its own");
    atomic_store_explicit(&ct_slots[id], fn, memory_order_release);
    return fn == CT_MISSING ? NULL : fn;
}

void ct_driver_atfork_child(void)
{
    for (int id = 0; id < CT_N_SLOTS; id++)
        atomic_store_explicit(&ct_slots[id], NULL, memory_order_relaxed);
}

bool ct_in_driver(const void *addr)
{
    Dl_info info;
    if (!addr || !dladdr(addr, &info) || !info.dli_fname)
        return false;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    return strncmp(base, "libcuda.so", strlen("libcuda.so")) == 0;
}

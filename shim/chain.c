/*
 * chain.c - living beside another interposer of the driver: GPU-sharing
 * layers such as HAMi-core's libvgpu.so export their own cu* wrappers,
 * override dlsym and swap the pointers cuGetProcAddress returns.
 *
 * With libcutaint.so first (LD_PRELOAD="libcutaint.so layer.so", the order
 * docs/LAYERS.md asks for) every call cutaint passes down must reach the layer,
 * or its quota stops being enforced: a wrapper's real function is the
 * layer's when it stands in for that name - found after this library in
 * the global scope (its export), or given by its dlsym for the driver's
 * handle - and the driver's own otherwise.  The dlsym hook (dlsym.c) and
 * the cuGetProcAddress wrappers (entry.c) hand out cutaint's wrappers for
 * the layer's stand-ins too, so all three paths end in the same chain:
 * program -> cutaint -> layer -> driver.  Calls cutaint answers itself
 * (refusals, skips) reach neither.
 *
 * With the layer first, cutaint sees the calls the layer makes through
 * dlsym (its lookups reach cutaint's hook, also when it asks for glibc's
 * dlsym by version: dlsym.c), and says once, when the program first
 * reaches the driver, which library is ahead of it.  A layer that reaches
 * the driver around every hook (glibc's dlsym asked of libc.so.6 itself)
 * leaves cutaint nothing to see: at exit, if the loaded driver said it was
 * initialised though no call came here, cutaint says the process ran
 * unprotected (ct_chain_check_bypass).  The driver is asked as exit begins
 * (a thread-exit destructor of the main thread, which glibc's exit() runs
 * before any exit handler, so before a driver's teardown registered with
 * atexit at cuInit) and again from the destructor (for an exit from
 * another thread, before a teardown in the driver's own destructor).
 *
 * Invariants:
 * - Resolution happens once per entry point (driver.c caches it); nothing
 *   here runs on the hot path.
 * - cutaint never resolves to itself: a function inside libcutaint.so is
 *   never a "next" function.
 * - The order check makes no CUDA call and logs at most two lines.
 * - The bypass check runs only at exit, only when no call reached cutaint,
 *   never in a fork child, never loads the driver (RTLD_NOLOAD) and asks it
 *   two questions that change nothing (cuDriverGetVersion,
 *   cuDeviceGetCount), at most twice; it decides once, in the destructor.
 */
#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "rules.h"
#include "shim.h"

bool ct_in_self(const void *addr)
{
    Dl_info self, info;
    return addr && dladdr((void *)ct_in_self, &self) && dladdr(addr, &info) && info.dli_fbase == self.dli_fbase;
}

/* Another library's function: neither the driver's nor ours. */
static bool stands_in(const void *fn)
{
    return fn && !ct_in_driver(fn) && !ct_in_self(fn);
}

static const char *library_of(const void *fn)
{
    Dl_info info;
    if (!dladdr(fn, &info) || !info.dli_fname)
        return "another library";
    const char *base = strrchr(info.dli_fname, '/');
    return base ? base + 1 : info.dli_fname;
}

static atomic_bool told_after;

static void *passing_on(void *fn, const char *name)
{
    if (!atomic_exchange(&told_after, true))
        ct_log(CT_LOG_INFO,
               "%s is loaded after libcutaint.so and stands in for %s: the calls cutaint "
               "passes on go through it",
               library_of(fn), name);
    return fn;
}

void *ct_chain_resolve(void *driver_handle, const char *name)
{
    void *exported = ct_real_dlsym(RTLD_NEXT, name); /* relative to this library */
    if (stands_in(exported))
        return passing_on(exported, name);
    void *hooked = ct_chain_dlsym(driver_handle, name);
    if (stands_in(hooked))
        return passing_on(hooked, name);
    /* The driver's own: never ours, or a wrapper would call itself. */
    void *own = ct_real_dlsym(driver_handle, name);
    assert(!ct_in_self(own) && "cutaint never resolves to itself");
    return own;
}

/* The first definition of name in the program's search order, when it is
 * another library's (for dlsym: not glibc's either). */
static const void *ahead_of_us(const char *name)
{
    const void *first = ct_real_dlsym(RTLD_DEFAULT, name);
    if (!first || ct_in_self(first) || ct_in_driver(first))
        return NULL;
    if (strcmp(name, "dlsym") == 0) {
        Dl_info info, libc;
        const void *glibc = ct_find_next_dlsym();
        if (glibc && dladdr(first, &info) && dladdr(glibc, &libc) && info.dli_fbase == libc.dli_fbase)
            return NULL;
    }
    return first;
}

static char ahead_name[256];
static const char *ahead;

static void find_ahead(void)
{
    for (int id = 0; id <= CT_N_ENTRIES && !ahead; id++) {
        const char *name = id < CT_N_ENTRIES ? ct_entries[id].name : "dlsym";
        /* Our own wrapper first, the usual answer: known without dladdr,
         * which costs more than the lookup (the first stand-in waits on
         * this loop: tools/bench's first_use). */
        if (id < CT_N_ENTRIES && ct_real_dlsym(RTLD_DEFAULT, name) == ct_entries[id].wrapper)
            continue;
        const void *first = ahead_of_us(name);
        if (first) {
            snprintf(ahead_name, sizeof ahead_name, "%s", library_of(first));
            ahead = ahead_name;
        }
    }
}

const char *ct_chain_library_ahead(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_ahead);
    return ahead;
}

void ct_chain_check_order(void)
{
    static const char *const names[] = {"cuGetProcAddress_v2", "cuLaunchKernel", "cuMemcpyDtoH_v2", "cuMemAlloc_v2",
                                        "dlsym"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const void *first = ahead_of_us(names[i]);
        if (!first)
            continue;
        const char *lib = library_of(first);
        ct_log(CT_LOG_WARN,
               "%s is loaded before libcutaint.so and defines %s: cutaint checks only the calls "
               "that library passes on through dlsym, and calls it answers or resolves otherwise go unchecked",
               lib, names[i]);
        ct_log(CT_LOG_WARN, "   preload libcutaint.so first: LD_PRELOAD=\"libcutaint.so %s\"", lib);
        return;
    }
}

/* The driver's own answer, asked of its own handle (never a wrapper). */
static ct_driver_answer ask_driver(void *handle, int *driver_version)
{
    typedef CUresult CUDAAPI version_fn(int *);
    typedef CUresult CUDAAPI count_fn(int *);
    version_fn *version = (version_fn *)ct_real_dlsym(handle, "cuDriverGetVersion");
    count_fn *count = (count_fn *)ct_real_dlsym(handle, "cuDeviceGetCount");
    if (version && version(driver_version) != CUDA_SUCCESS)
        *driver_version = 0;
    int devices = 0;
    switch (count ? count(&devices) : CUDA_ERROR_NOT_FOUND) {
    case CUDA_SUCCESS: return CT_DRIVER_INITIALISED;
    case CUDA_ERROR_NOT_INITIALIZED: return CT_DRIVER_NOT_INITIALISED;
    default: return CT_DRIVER_OTHER;
    }
}

/* The driver already in the process, asked; CT_DRIVER_NOT_ASKED without one. */
static ct_driver_answer ask_loaded_driver(int *driver_version)
{
    void *handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        return CT_DRIVER_NOT_ASKED;
    ct_driver_answer answer = ask_driver(handle, driver_version);
    dlclose(handle);
    return answer;
}

static bool bypass_possible(void)
{
    return !ct_was_reached() && !ct_g.cfg.disable && !ct_g.forked;
}

/* What the driver said as exit began, and its version then. */
static _Atomic ct_driver_answer answer_as_exit_began = CT_DRIVER_NOT_ASKED;
static atomic_int version_as_exit_began;

/* A thread-exit destructor of the thread that loaded cutaint (the main
 * thread): exit() on that thread, or a return from main, runs it before
 * any exit handler, while a driver that registered its teardown with
 * atexit (at cuInit, during main) still answers; measured in
 * docs/LAYERS.md. */
static void ask_as_exit_begins(void *unused)
{
    (void)unused;
    if (!bypass_possible())
        return;
    int driver_version = 0;
    ct_driver_answer answer = ask_loaded_driver(&driver_version);
    atomic_store(&version_as_exit_began, driver_version);
    atomic_store(&answer_as_exit_began, answer);
}

/* glibc's registration of thread_local destructors (the C++ ABI's). */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *arg, void *dso);
extern void *__dso_handle;

void ct_chain_arm_bypass_check(void)
{
    if (__cxa_thread_atexit_impl(ask_as_exit_begins, NULL, &__dso_handle) != 0)
        ct_log(CT_LOG_DEBUG, "cannot ask the driver as exit begins: a bypass is told only where the driver "
                             "still answers at unload");
}

/* At exit, from this library's destructor: the C runtime registered the
 * destructors (_dl_fini) before main, so the handlers registered during
 * main have run (a driver's atexit teardown among them: the answer asked
 * as exit began covers it), and a driver loaded after us (dlopen, or
 * linked) is destroyed after us: it still answers. */
__attribute__((destructor)) static void check_bypass_at_unload(void)
{
    if (atomic_load(&ct_g.ready) == 2)
        ct_chain_check_bypass();
}

void ct_chain_check_bypass(void)
{
    if (!bypass_possible())
        return;
    int driver_version = 0;
    ct_bypass_facts f = {.as_exit_began = atomic_load(&answer_as_exit_began)};
    f.at_unload = ask_loaded_driver(&driver_version);
    f.driver_loaded = f.as_exit_began != CT_DRIVER_NOT_ASKED || f.at_unload != CT_DRIVER_NOT_ASKED;
    if (!ct_bypass_rule(&f))
        return;
    if (f.at_unload != CT_DRIVER_INITIALISED)
        driver_version = atomic_load(&version_as_exit_began); /* torn down since */
    atomic_store(&ct_g.unprotected, true);
    ct_reached_driver(driver_version);
    const char *ahead = ct_chain_library_ahead();
    ct_log(CT_LOG_WARN,
           "this process used the CUDA driver, but none of its calls reached cutaint: %s reached "
           "libcuda.so.1 around every hook cutaint offers, so nothing was checked; preload libcutaint.so first",
           ahead ? ahead : "a library loaded before libcutaint.so");
}

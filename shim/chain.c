/*
 * chain.c - living beside another interposer of the driver: GPU-sharing
 * layers such as HAMi-core's libvgpu.so export their own cu* wrappers,
 * override dlsym and swap the pointers cuGetProcAddress returns.
 *
 * With libcutaint.so first (LD_PRELOAD="libcutaint.so layer.so", the order
 * the README asks for) every call cutaint passes down must reach the layer,
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
 * dlsym (its lookups reach cutaint's hook), and says once, when the program
 * first reaches the driver, which library is ahead of it.
 *
 * Invariants:
 * - Resolution happens once per entry point (driver.c caches it); nothing
 *   here runs on the hot path.
 * - cutaint never resolves to itself: a function inside libcutaint.so is
 *   never a "next" function.
 * - The order check makes no CUDA call and logs at most two lines.
 */
#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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
        ct_log(CT_LOG_INFO, "%s is loaded after libcutaint.so and stands in for %s: the calls cutaint "
               "passes on go through it", library_of(fn), name);
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
        const void *first = ahead_of_us(id < CT_N_ENTRIES ? ct_entries[id].name : "dlsym");
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
    static const char *const names[] = {"cuGetProcAddress_v2", "cuLaunchKernel", "cuMemcpyDtoH_v2",
                                        "cuMemAlloc_v2", "dlsym"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const void *first = ahead_of_us(names[i]);
        if (!first)
            continue;
        const char *lib = library_of(first);
        ct_log(CT_LOG_WARN, "%s is loaded before libcutaint.so and defines %s: cutaint checks only the calls "
               "that library passes on through dlsym, and calls it answers or resolves otherwise go unchecked",
               lib, names[i]);
        ct_log(CT_LOG_WARN, "   preload libcutaint.so first: LD_PRELOAD=\"libcutaint.so %s\"", lib);
        return;
    }
}

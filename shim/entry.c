/*
 * entry.c - the cuGetProcAddress wrappers (what the CUDA runtime fetches
 * every entry point through; dlsym is in dlsym.c).
 *
 * cuGetProcAddress: the real one answers first, with the caller's version,
 * flags and status; the pointer it returns is identified in a table built
 * once from the real library's exports, and the wrapper of exactly that
 * variant is handed back.  An unidentified pointer passes through.
 *
 * Invariants:
 * - The real cuGetProcAddress always answers first, with the caller's
 *   version, flags and status; cutaint only swaps the pointer it returned.
 */
#include <assert.h>
#include <pthread.h>
#include <string.h>

#include "shim.h"

/* ---- pointer -> entry ------------------------------------------------------- */

#define CT_POINTER_SLOTS 2048 /* power of two, > 4 * CT_N_ENTRIES (two pointers each) */

typedef struct {
    const void *real;
    int id;
} ct_pointer_entry;
_Static_assert(CT_POINTER_SLOTS > 4 * CT_N_ENTRIES, "the pointer table must stay sparse");
static ct_pointer_entry by_pointer[CT_POINTER_SLOTS];
static pthread_once_t by_pointer_once = PTHREAD_ONCE_INIT;
static atomic_bool unidentified_logged;

static unsigned pointer_slot(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 54) & (CT_POINTER_SLOTS - 1);
}

static void insert_pointer(const void *real, int id)
{
    if (!real)
        return;
    unsigned slot = pointer_slot(real);
    while (by_pointer[slot].real && by_pointer[slot].real != real)
        slot = (slot + 1) & (CT_POINTER_SLOTS - 1);
    if (!by_pointer[slot].real)
        by_pointer[slot] = (ct_pointer_entry){real, id};
}

/* What the wrappers call, and the driver's own function where another
 * interposer stands in front of it (its cuGetProcAddress may hand back
 * either). */
static void build_pointer_table(void)
{
    for (int id = 0; id < CT_N_ENTRIES; id++) {
        insert_pointer(ct_real(id), id);
        insert_pointer(ct_real_own(id), id);
    }
}

static int identify(const void *real)
{
    pthread_once(&by_pointer_once, build_pointer_table);
    for (unsigned slot = pointer_slot(real); by_pointer[slot].real; slot = (slot + 1) & (CT_POINTER_SLOTS - 1))
        if (by_pointer[slot].real == real)
            return by_pointer[slot].id;
    return -1;
}

/* The function to hand back for `symbol` in place of the real `found`. */
static void *swap_in_wrapper(const char *symbol, void *found, int cuda_version)
{
    if (ct_g.cfg.disable || !found)
        return found;
    if (symbol && strcmp(symbol, "cuGetProcAddress") == 0)
        return ct_entries[cuda_version >= 12000 ? CT_ID_cuGetProcAddress_v2 : CT_ID_cuGetProcAddress].wrapper;
    int id = identify(found);
    if (id >= 0)
        return ct_entries[id].wrapper;
    if (ct_looks_like_driver_name(symbol) && ct_entry_find(symbol) >= 0 && !atomic_exchange(&unidentified_logged, true))
        ct_log(CT_LOG_INFO,
               "cuGetProcAddress(%s) returned a function cutaint cannot identify; "
               "calls through it are not checked",
               symbol);
    return found;
}

typedef CUresult CUDAAPI proc_address_v2_fn(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult CUDAAPI proc_address_fn(const char *, void **, int, cuuint64_t);

/* Both exported variants: the real one of entry `id` answers (v1 takes no
 * symbolStatus), then its pointer is swapped for our wrapper. */
static CUresult proc_address(int id, const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    ct_ensure_ready();
    void *real = ct_real(id);
    if (!real)
        return ct_driver_loaded() ? CUDA_ERROR_NOT_FOUND : CT_NO_DRIVER_RESULT;
    assert(real != ct_entries[id].wrapper && "the real cuGetProcAddress answers first, never our own wrapper");
    CUresult result = id == CT_ID_cuGetProcAddress_v2
                          ? ((proc_address_v2_fn *)real)(symbol, pfn, cudaVersion, flags, symbolStatus)
                          : ((proc_address_fn *)real)(symbol, pfn, cudaVersion, flags);
    if (result == CUDA_SUCCESS && pfn)
        *pfn = swap_in_wrapper(symbol, *pfn, cudaVersion);
    return result;
}

CT_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                               CUdriverProcAddressQueryResult *symbolStatus)
{
    return proc_address(CT_ID_cuGetProcAddress_v2, symbol, pfn, cudaVersion, flags, symbolStatus);
}

CT_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return proc_address(CT_ID_cuGetProcAddress, symbol, pfn, cudaVersion, flags, NULL);
}

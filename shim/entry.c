/*
 * entry.c - every way a program reaches the driver without linking to it:
 * dlsym, and cuGetProcAddress (what the CUDA runtime uses for everything).
 *
 * dlsym: a lookup in libcuda of a name this library wraps gets the wrapper
 * instead, with the caller's handle kept.  RTLD_NEXT lookups jump straight
 * to the real dlsym (an assembly tail jump), so the caller stays the caller:
 * "next" is relative to whoever asked, not to cutaint.
 *
 * cuGetProcAddress: the real one answers first, with the caller's version,
 * flags and status; the pointer it returns is identified in a table built
 * once from the real library's exports, and the wrapper of exactly that
 * variant is handed back.  An unidentified pointer passes through.
 *
 * Invariants:
 * - dlsym makes no CUDA call and loads nothing; names that do not look like
 *   cu[A-Z]... cost one real dlsym and three compares.
 * - A thread-local flag stops re-entry (a hook that ends up in dlsym again
 *   gets the real answer).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "shim.h"

/* ---- dlsym ------------------------------------------------------------------ */

static __thread bool in_hook;

static bool looks_like_driver_name(const char *name)
{
    return name && name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z';
}

__attribute__((visibility("hidden"), used)) CT_NO_TSAN void *ct_dlsym_hook(void *handle, const char *name)
{
    void *sym = ct_real_dlsym(handle, name);
    if (!sym || !looks_like_driver_name(name) || in_hook)
        return sym;
    in_hook = true;
    ct_ensure_ready();
    if (!ct_g.cfg.disable) {
        int id = ct_entry_find(name);
        if (id >= 0 && ct_in_driver(sym))
            sym = ct_entries[id].wrapper;
    }
    in_hook = false;
    return sym;
}

/* dlsym(handle, name): RTLD_NEXT ((void *)-1) tail-jumps to the real dlsym,
 * found on first use (a sanitizer runtime asks before any constructor ran);
 * everything else goes through ct_dlsym_hook. */
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
        "    call ct_find_next_dlsym\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testq %rax, %rax\n"
        "    je 1f\n"
        "    jmp *%rax\n"
        "1:  jmp ct_dlsym_hook\n"
        ".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, %function\n"
        "dlsym:\n"
        "    cmn x0, #1\n"
        "    b.ne 1f\n"
        "    stp x29, x30, [sp, #-32]!\n"
        "    stp x0, x1, [sp, #16]\n"
        "    bl ct_find_next_dlsym\n"
        "    mov x16, x0\n"
        "    ldp x0, x1, [sp, #16]\n"
        "    ldp x29, x30, [sp], #32\n"
        "    cbz x16, 1f\n"
        "    br x16\n"
        "1:  b ct_dlsym_hook\n"
        ".size dlsym, .-dlsym\n");
#else
/* Elsewhere RTLD_NEXT is answered relative to this library: documented. */
CT_EXPORT void *dlsym(void *handle, const char *name)
{
    return ct_dlsym_hook(handle, name);
}
#endif

/* ---- pointer -> entry ------------------------------------------------------- */

#define CT_POINTER_SLOTS 1024 /* power of two, > 2 * CT_N_ENTRIES */

typedef struct {
    const void *real;
    int id;
} ct_pointer_entry;
static ct_pointer_entry by_pointer[CT_POINTER_SLOTS];
static pthread_once_t by_pointer_once = PTHREAD_ONCE_INIT;
static atomic_bool unidentified_logged;

static unsigned pointer_slot(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 54) & (CT_POINTER_SLOTS - 1);
}

static void build_pointer_table(void)
{
    for (int id = 0; id < CT_N_ENTRIES; id++) {
        const void *real = ct_real(id);
        if (!real)
            continue;
        unsigned slot = pointer_slot(real);
        while (by_pointer[slot].real && by_pointer[slot].real != real)
            slot = (slot + 1) & (CT_POINTER_SLOTS - 1);
        if (!by_pointer[slot].real)
            by_pointer[slot] = (ct_pointer_entry){real, id};
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
    if (looks_like_driver_name(symbol) && ct_entry_find(symbol) >= 0 && !atomic_exchange(&unidentified_logged, true))
        ct_log(CT_LOG_INFO, "cuGetProcAddress(%s) returned a function cutaint cannot identify; "
               "calls through it are not checked", symbol);
    return found;
}

typedef CUresult CUDAAPI proc_address_v2_fn(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult CUDAAPI proc_address_fn(const char *, void **, int, cuuint64_t);

CT_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                                CUdriverProcAddressQueryResult *symbolStatus)
{
    ct_ensure_ready();
    proc_address_v2_fn *real = (proc_address_v2_fn *)ct_real(CT_ID_cuGetProcAddress_v2);
    if (!real)
        return ct_driver_loaded() ? CUDA_ERROR_NOT_FOUND : CT_NO_DRIVER_RESULT;
    CUresult result = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (result == CUDA_SUCCESS && pfn)
        *pfn = swap_in_wrapper(symbol, *pfn, cudaVersion);
    return result;
}

CT_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    ct_ensure_ready();
    proc_address_fn *real = (proc_address_fn *)ct_real(CT_ID_cuGetProcAddress);
    if (!real)
        return ct_driver_loaded() ? CUDA_ERROR_NOT_FOUND : CT_NO_DRIVER_RESULT;
    CUresult result = real(symbol, pfn, cudaVersion, flags);
    if (result == CUDA_SUCCESS && pfn)
        *pfn = swap_in_wrapper(symbol, *pfn, cudaVersion);
    return result;
}

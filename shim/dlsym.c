/*
 * dlsym.c - the dlsym override, and the real dlsym behind it.
 *
 * A lookup in libcuda of a name this library wraps gets the wrapper instead,
 * with the caller's handle kept.  RTLD_NEXT lookups jump straight to the
 * real dlsym (an assembly tail jump), so the caller stays the caller: "next"
 * is relative to whoever asked, not to cutaint (HAMi-core PR #315: LLVM
 * OpenMP looped when the shim became the caller).
 *
 * Beside another interposer (chain.c): a lookup is answered by the next
 * dlsym after this library - another interposer's override when one is
 * loaded after us (so the names it hooks through dlsym still reach it),
 * else glibc's.  A driver name that cutaint wraps gets the wrapper when the
 * lookup finds the driver's function, or another interposer's stand-in for
 * it (glibc's own answer is then the driver's): the wrapper passes the call
 * on to that interposer.
 *
 * This file is built without sanitizer instrumentation: a sanitizer runtime
 * resolves its interceptors with dlsym(RTLD_NEXT, ...) before it can run any
 * instrumented code.
 *
 * Invariants:
 * - dlsym makes no CUDA call and loads nothing; names that do not look like
 *   cu[A-Z]... or a wrapped CUDA library's (cublas..., curand..., cufft...,
 *   cusolver..., cusparse...) cost one dlsym of the next library and a few
 *   compares.
 * - A CUDA library's name found in the caller's scope gets cutaint's
 *   wrapper of it, whichever handle it was asked of (dlopen("libcublas.so")
 *   then dlsym): the wrapper finds the library's definition with the real
 *   dlsym, never through this hook, so no lookup comes back here.  dlvsym
 *   is not interposed: a lookup by version gets the library's own.
 * - The real dlsym is found without pthread_once or any constructor having
 *   run; finding it twice is harmless.
 * - A thread-local flag stops re-entry (a hook that ends up in dlsym again
 *   gets the real answer).
 */
#include <assert.h>
#include <dlfcn.h>

#include "shim.h"

typedef void *(*ct_dlsym_fn)(void *, const char *);

static _Atomic(ct_dlsym_fn) real_dlsym_fn;

void *ct_find_next_dlsym(void)
{
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    ct_dlsym_fn found = atomic_load_explicit(&real_dlsym_fn, memory_order_acquire);
    if (found)
        return (void *)found;
    for (size_t i = 0; i < sizeof versions / sizeof *versions && !found; i++)
        found = (ct_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    atomic_store_explicit(&real_dlsym_fn, found, memory_order_release);
    return (void *)found;
}

void *ct_real_dlsym(void *handle, const char *name)
{
    ct_dlsym_fn real = atomic_load_explicit(&real_dlsym_fn, memory_order_acquire);
    if (CT_UNLIKELY(!real))
        real = (ct_dlsym_fn)ct_find_next_dlsym();
    return real ? real(handle, name) : NULL;
}

/* The dlsym defined after this library: asked from here, RTLD_NEXT is
 * relative to libcutaint.so.  dlvsym with glibc's version (above) skips
 * other interposers' unversioned dlsym, a plain lookup does not. */
static _Atomic(ct_dlsym_fn) chain_dlsym_fn;

static ct_dlsym_fn chain_dlsym(void)
{
    ct_dlsym_fn next = atomic_load_explicit(&chain_dlsym_fn, memory_order_acquire);
    if (CT_UNLIKELY(!next)) {
        next = (ct_dlsym_fn)ct_real_dlsym(RTLD_NEXT, "dlsym");
        if (!next)
            next = (ct_dlsym_fn)ct_find_next_dlsym();
        atomic_store_explicit(&chain_dlsym_fn, next, memory_order_release);
    }
    return next;
}

void *ct_chain_dlsym(void *handle, const char *name)
{
    ct_dlsym_fn next = chain_dlsym();
    return next ? next(handle, name) : NULL;
}

static __thread bool in_hook;

/* sym (the chain's answer) stands for the driver's function: it is it, or
 * another interposer answered for a lookup that finds the driver. */
static bool finds_the_driver(void *handle, const char *name, void *sym)
{
    if (ct_in_driver(sym))
        return true;
    void *own = ct_real_dlsym(handle, name);
    return own && own != sym && ct_in_driver(own);
}

/* A CUDA library's entry point that libcalls.def wraps, found (sym) in the
 * handle's scope: its wrapper, which passes the call on to the library's
 * definition.  The wrappers pass calls through under CUTAINT_DISABLE=1 on
 * their own: nothing to ask here, and nothing that loads or calls out. */
static void *library_lookup(const char *name, void *sym)
{
    void *wrapper = ct_lib_wrapper_find(name);
    return wrapper ? wrapper : sym;
}

__attribute__((visibility("hidden"), used)) void *ct_dlsym_hook(void *handle, const char *name)
{
    void *sym = ct_chain_dlsym(handle, name);
    if (sym && ct_looks_like_library_name(name))
        return library_lookup(name, sym);
    if (!sym || !ct_looks_like_driver_name(name) || in_hook)
        return sym;
    in_hook = true;
    ct_ensure_ready();
    if (!ct_g.cfg.disable) {
        int id = ct_entry_find(name);
        assert(id < CT_N_ENTRIES && "ct_entry_find names an entry of the table or none");
        if (id >= 0 && finds_the_driver(handle, name, sym))
            sym = ct_entries[id].wrapper;
    }
    assert(in_hook && "nothing the hook calls clears its re-entry flag");
    in_hook = false;
    return sym;
}

/* dlsym(handle, name): RTLD_NEXT ((void *)-1) tail-jumps to the real dlsym,
 * found on first use (a sanitizer runtime asks before any constructor ran);
 * everything else goes through ct_dlsym_hook. */
#if defined(__x86_64__) || defined(__aarch64__)
#if defined(__x86_64__)
#define CT_GLIBC_BASE "GLIBC_2.2.5"
#define CT_DLSYM_BODY               \
    "    cmpq $-1, %rdi\n"          \
    "    jne 1f\n"                  \
    "    pushq %rdi\n"              \
    "    pushq %rsi\n"              \
    "    subq $8, %rsp\n"           \
    "    call ct_find_next_dlsym\n" \
    "    addq $8, %rsp\n"           \
    "    popq %rsi\n"               \
    "    popq %rdi\n"               \
    "    testq %rax, %rax\n"        \
    "    je 1f\n"                   \
    "    jmp *%rax\n"               \
    "1:  jmp ct_dlsym_hook\n"
#define CT_FUNCTION "@function"
#else
#define CT_GLIBC_BASE "GLIBC_2.17"
#define CT_DLSYM_BODY                 \
    "    cmn x0, #1\n"                \
    "    b.ne 1f\n"                   \
    "    stp x29, x30, [sp, #-32]!\n" \
    "    stp x0, x1, [sp, #16]\n"     \
    "    bl ct_find_next_dlsym\n"     \
    "    mov x16, x0\n"               \
    "    ldp x0, x1, [sp, #16]\n"     \
    "    ldp x29, x30, [sp], #32\n"   \
    "    cbz x16, 1f\n"               \
    "    br x16\n"                    \
    "1:  b ct_dlsym_hook\n"
#define CT_FUNCTION "%function"
#endif
/* One body under two names, glibc's versions of dlsym (exports.map.in):
 * dlsym@@GLIBC_2.34, the default programs bind to, and dlsym@<first>, the
 * one a layer loaded ahead of us asks for by version as "the real dlsym"
 * (HAMi-core), so that its lookups come here instead of skipping us. */
__asm__(".text\n"
        ".globl ct_dlsym\n"
        ".type ct_dlsym, " CT_FUNCTION "\n"
        "ct_dlsym:\n"
        ".globl ct_dlsym_first\n"
        ".type ct_dlsym_first, " CT_FUNCTION "\n"
        "ct_dlsym_first:\n" CT_DLSYM_BODY ".size ct_dlsym, .-ct_dlsym\n"
        ".size ct_dlsym_first, .-ct_dlsym_first\n"
        ".symver ct_dlsym, dlsym@@GLIBC_2.34\n"
        ".symver ct_dlsym_first, dlsym@" CT_GLIBC_BASE "\n");
#else
/* Elsewhere RTLD_NEXT is answered relative to this library: documented. */
CT_EXPORT void *dlsym(void *handle, const char *name)
{
    return ct_dlsym_hook(handle, name);
}
#endif

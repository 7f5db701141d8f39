/*
 * private.c: cuGetExportTable, the private tables NVIDIA's CUDA runtime
 * (13.0.x) and libraries (cuBLASLt, cuFFT) ask the driver for, and the
 * context-local storage one of them exposes. The facts implemented are listed in README.md ("The runtime's
 * private interface"); they were measured with runtime 13.0.88.
 *
 * Invariants:
 * - A table is a static array of pointer-sized words; where the runtime
 *   expects it, word 0 is the table's size in bytes. Slots the runtime was
 *   never seen calling hold a stub that says so once on stderr and returns
 *   CUDA_ERROR_NOT_SUPPORTED, so a newer runtime gets an answer, not a jump
 *   through garbage.
 * - An unknown table is CUDA_ERROR_NOT_SUPPORTED with one stderr line per
 *   UUID naming it and the object that asked (for the first 32 UUIDs;
 *   each request for a later one gets its line); nothing here ever crashes
 *   on an unexpected request. A known table
 *   deliberately not provided (its client carries on without it) is
 *   CUDA_ERROR_NOT_SUPPORTED with only the FAKECUDA_LOG=debug line.
 * - Context-local storage holds at most one value per (context, key), under
 *   cls_lock; destructors run outside it, when the context is released
 *   (fc_ctx_storage_drop from context.c, before the context is freed).
 * - The integrity answer hashes what cuDriverGetVersion, cuDeviceGetUuid
 *   and cuDeviceGetAttribute report, through the same functions.
 */
#include "fakecuda.h"

#include <assert.h>
#include <dlfcn.h>
#include <nettle/md2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uintptr_t fc_word;

#define FC_FN(f) ((fc_word)(f))
#define FC_SIZE_WORD(n) ((fc_word)((n) * sizeof(fc_word)))
/* Word 0 of a sized table says its size: checked against the array itself. */
#define FC_SIZED(table, n) _Static_assert(sizeof(table) == FC_SIZE_WORD(n), "word 0 is " #table "'s size in bytes")

/* ---- slots the runtime was never seen calling -------------------------- */

static CUresult fc_slot_unused(const char *table, int slot, atomic_flag *said)
{
    fc_debug("export table %s: slot %d called", table, slot);
    if (!atomic_flag_test_and_set(said))
        fprintf(stderr,
                "fakecuda: cuGetExportTable: slot %d of %s is not emulated (CUDA_ERROR_NOT_SUPPORTED); "
                "only the slots the README lists were measured\n",
                slot, table);
    return CUDA_ERROR_NOT_SUPPORTED;
}

/*
 * Called through a word with whatever arguments the runtime passes: on the
 * x86-64 and AArch64 C ABIs a function taking none may be called so.
 */
#define FC_UNUSED_SLOT(table, n)                    \
    static CUresult fc_##table##_##n(void)          \
    {                                               \
        static atomic_flag said = ATOMIC_FLAG_INIT; \
        return fc_slot_unused(#table, n, &said);    \
    }

FC_UNUSED_SLOT(CUDART_INTERFACE, 1)
FC_UNUSED_SLOT(CUDART_INTERFACE, 3)
FC_UNUSED_SLOT(CUDART_INTERFACE, 4)
FC_UNUSED_SLOT(CUDART_INTERFACE, 5)
FC_UNUSED_SLOT(CUDART_INTERFACE, 6)
FC_UNUSED_SLOT(CUDART_INTERFACE, 7)
FC_UNUSED_SLOT(CUDART_INTERFACE, 8)
FC_UNUSED_SLOT(CUDART_INTERFACE, 9)
FC_UNUSED_SLOT(CUDART_INTERFACE, 10)
FC_UNUSED_SLOT(CUDART_INTERFACE, 11)
FC_UNUSED_SLOT(CUDART_INTERFACE, 13)
FC_UNUSED_SLOT(CUDART_INTERFACE, 14)
FC_UNUSED_SLOT(CUDART_INTERFACE, 15)
FC_UNUSED_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 1)
FC_UNUSED_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 3)
FC_UNUSED_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 4)
FC_UNUSED_SLOT(TOOLS_RUNTIME_CALLBACK_HOOKS, 5)
FC_UNUSED_SLOT(TOOLS_TLS, 1)
FC_UNUSED_SLOT(TOOLS_TLS, 3)
FC_UNUSED_SLOT(CONTEXT_CHECKS, 1)
FC_UNUSED_SLOT(INTEGRITY_CHECK, 2)

/* ---- CUDART_INTERFACE: the primary context ----------------------------- */

/*
 * The primary context this table holds one reference on; NULL once that
 * context is released (fc_ctx_storage_drop), so a later request retains
 * the new one.
 */
static _Atomic(CUcontext) rt_primary;

static CUresult fc_rt_primary_ctx(CUcontext *out, CUdevice dev)
{
    fc_debug("export table CUDART_INTERFACE: slot 2 (primary context of device %d)", (int)dev);
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext held = atomic_load(&rt_primary);
    if (held && fc_device_check(dev) == CUDA_SUCCESS) {
        *out = held;
        return CUDA_SUCCESS;
    }
    CUcontext c;
    CUresult r = fc_primary_retain(&c, dev);
    if (r != CUDA_SUCCESS)
        return r;
    CUcontext none = NULL;
    if (!atomic_compare_exchange_strong(&rt_primary, &none, c))
        fc_primary_release(dev); /* another thread's request took the reference */
    *out = c;
    return CUDA_SUCCESS;
}

/*
 * Runtime 13.2 (PyTorch's wheels) calls slot 12 once as it starts, with no
 * arguments (unless its environment holds a private override), and stops
 * with that error where it fails; 13.0 never calls it. Measured with gdb
 * on runtime 13.2.86: what it checks on a real driver is not known, so it
 * checks nothing here.
 */
static CUresult fc_rt_start_check(void)
{
    fc_debug("export table CUDART_INTERFACE: slot 12 (start check)");
    return CUDA_SUCCESS;
}

static const fc_word cudart_interface[] = {
    FC_SIZE_WORD(16),
    FC_FN(fc_CUDART_INTERFACE_1),
    FC_FN(fc_rt_primary_ctx),
    FC_FN(fc_CUDART_INTERFACE_3),
    FC_FN(fc_CUDART_INTERFACE_4),
    FC_FN(fc_CUDART_INTERFACE_5),
    FC_FN(fc_CUDART_INTERFACE_6),
    FC_FN(fc_CUDART_INTERFACE_7),
    FC_FN(fc_CUDART_INTERFACE_8),
    FC_FN(fc_CUDART_INTERFACE_9),
    FC_FN(fc_CUDART_INTERFACE_10),
    FC_FN(fc_CUDART_INTERFACE_11),
    FC_FN(fc_rt_start_check),
    FC_FN(fc_CUDART_INTERFACE_13),
    FC_FN(fc_CUDART_INTERFACE_14),
    FC_FN(fc_CUDART_INTERFACE_15),
};
FC_SIZED(cudart_interface, 16);

/* ---- TOOLS_RUNTIME_CALLBACK_HOOKS: buffers the runtime writes ---------- */

/* Sizes that worked: 1024 bytes and 14 u32s (rounded up here).  The runtime
 * reads slot 2's buffer further than the size it is told: its
 * cudaEventElapsedTime (13.0) tests a flag 0x798 bytes in, and takes the
 * tools' path (TOOLS_TLS, callback hooks) when that is not zero.  So the
 * buffer has zeroed room behind it: with 1024 bytes the flag was read from
 * whatever the loader mapped after fakecuda, a different value in every
 * run. */
#define FC_HOOKS2_TOLD 1024
static unsigned char hooks_buf2[4096] __attribute__((aligned(16)));
static unsigned char hooks_buf6[64] __attribute__((aligned(16)));

static CUresult fc_hooks_buffer(void **buf, size_t *n, void *mem, size_t bytes, int slot)
{
    fc_debug("export table TOOLS_RUNTIME_CALLBACK_HOOKS: slot %d", slot);
    if (buf)
        *buf = mem;
    if (n)
        *n = bytes;
    return CUDA_SUCCESS;
}

static CUresult fc_hooks_2(void **buf, size_t *n)
{
    return fc_hooks_buffer(buf, n, hooks_buf2, FC_HOOKS2_TOLD, 2);
}

static CUresult fc_hooks_6(void **buf, size_t *n)
{
    return fc_hooks_buffer(buf, n, hooks_buf6, sizeof hooks_buf6, 6);
}

/* The runtime refuses a size word under 0x38 (seven words) with error 35. */
static const fc_word tools_hooks[] = {
    FC_SIZE_WORD(7),
    FC_FN(fc_TOOLS_RUNTIME_CALLBACK_HOOKS_1),
    FC_FN(fc_hooks_2),
    FC_FN(fc_TOOLS_RUNTIME_CALLBACK_HOOKS_3),
    FC_FN(fc_TOOLS_RUNTIME_CALLBACK_HOOKS_4),
    FC_FN(fc_TOOLS_RUNTIME_CALLBACK_HOOKS_5),
    FC_FN(fc_hooks_6),
};
FC_SIZED(tools_hooks, 7);

/* ---- TOOLS_TLS: must exist; the runtime calls none of it --------------- */

/* Slot 2, the calling thread's current context, as cuCtxGetCurrent: cuBLASLt
   calls it at every GEMM (measured: cublasSgemm answered
   CUBLAS_STATUS_NOT_SUPPORTED without it; public traces of cuBLASLt on a
   GPU found it equal to cuCtxGetCurrent). */
static CUresult fc_tools_tls_current(CUcontext *out)
{
    fc_debug("export table TOOLS_TLS: slot 2 (current context)");
    return fc_ctx_get_current(out);
}

static const fc_word tools_tls[] = {
    FC_SIZE_WORD(4),
    FC_FN(fc_TOOLS_TLS_1),
    FC_FN(fc_tools_tls_current),
    FC_FN(fc_TOOLS_TLS_3),
};
FC_SIZED(tools_tls, 4);

/* ---- CONTEXT_LOCAL_STORAGE_INTERFACE_V0301 ----------------------------- */

typedef void (*fc_cls_dtor)(CUcontext ctx, void *key, void *value);

typedef struct fc_cls_entry {
    CUcontext ctx;
    void *key, *value;
    fc_cls_dtor dtor;
    struct fc_cls_entry *next;
} fc_cls_entry;

static pthread_mutex_t cls_lock = PTHREAD_MUTEX_INITIALIZER;
static fc_cls_entry *cls_head;

#ifndef NDEBUG
/* Whether (ctx, key) has at most one entry. */
static bool fc_cls_unique_locked(CUcontext ctx, const void *key)
{
    unsigned n = 0;
    for (const fc_cls_entry *e = cls_head; e; e = e->next)
        n += e->ctx == ctx && e->key == key;
    return n <= 1;
}
#endif

static fc_cls_entry **fc_cls_find_locked(CUcontext ctx, const void *key)
{
    fc_cls_entry **p = &cls_head;
    while (*p && ((*p)->ctx != ctx || (*p)->key != key))
        p = &(*p)->next;
    return p;
}

/* Storing again under a key replaces value and destructor, running neither. */
static CUresult fc_cls_put(CUcontext ctx, void *key, void *value, fc_cls_dtor dtor)
{
    fc_debug("export table CONTEXT_LOCAL_STORAGE: put ctx %p key %p", (void *)ctx, key);
    CUresult r = fc_ctx_or_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    fc_cls_entry *fresh = malloc(sizeof *fresh);
    if (!fresh)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&cls_lock);
    fc_cls_entry **p = fc_cls_find_locked(ctx, key);
    if (*p) {
        (*p)->value = value;
        (*p)->dtor = dtor;
    } else {
        *fresh = (fc_cls_entry){ctx, key, value, dtor, cls_head};
        cls_head = fresh;
        fresh = NULL;
    }
    assert(fc_cls_unique_locked(ctx, key) && "at most one value per (context, key)");
    pthread_mutex_unlock(&cls_lock);
    free(fresh);
    return CUDA_SUCCESS;
}

/* An explicit delete drops the entry without its destructor, as pthread_key_delete does. */
static CUresult fc_cls_delete(CUcontext ctx, void *key)
{
    fc_debug("export table CONTEXT_LOCAL_STORAGE: delete ctx %p key %p", (void *)ctx, key);
    CUresult r = fc_ctx_or_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&cls_lock);
    fc_cls_entry **p = fc_cls_find_locked(ctx, key), *gone = *p;
    if (gone)
        *p = gone->next;
    pthread_mutex_unlock(&cls_lock);
    free(gone);
    return gone ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* A miss must fail: the runtime sets up its per-context state only then. */
static CUresult fc_cls_get(void **value, CUcontext ctx, void *key)
{
    fc_debug("export table CONTEXT_LOCAL_STORAGE: get ctx %p key %p", (void *)ctx, key);
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_ctx_or_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&cls_lock);
    fc_cls_entry *e = *fc_cls_find_locked(ctx, key);
    if (e)
        *value = e->value;
    pthread_mutex_unlock(&cls_lock);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* No size word: the functions start at word 0. */
static const fc_word context_local_storage[] = {
    FC_FN(fc_cls_put),
    FC_FN(fc_cls_delete),
    FC_FN(fc_cls_get),
};

void fc_ctx_storage_drop(CUcontext ctx)
{
    CUcontext held = ctx;
    atomic_compare_exchange_strong(&rt_primary, &held, NULL);
    fc_cls_entry *gone = NULL;
    pthread_mutex_lock(&cls_lock);
    for (fc_cls_entry **p = &cls_head; *p;) {
        fc_cls_entry *e = *p;
        if (e->ctx != ctx) {
            p = &e->next;
            continue;
        }
        *p = e->next;
        e->next = gone;
        gone = e;
    }
    pthread_mutex_unlock(&cls_lock);
    /* Outside the lock: a destructor may call back into the driver. */
    while (gone) {
        fc_cls_entry *e = gone;
        gone = e->next;
        fc_debug("context-local storage: destructor for ctx %p key %p", (void *)ctx, e->key);
        if (e->dtor)
            e->dtor(ctx, e->key, e->value);
        free(e);
    }
}

/* ---- CONTEXT_CHECKS: nothing to report --------------------------------- */

static CUresult fc_checks_2(CUcontext ctx, uint32_t *out1, void **out2)
{
    (void)ctx;
    (void)out2;
    fc_debug("export table CONTEXT_CHECKS: slot 2");
    if (out1)
        *out1 = 0;
    return CUDA_SUCCESS;
}

static CUresult fc_checks_3(void *p, size_t n, unsigned flags)
{
    fc_debug("export table CONTEXT_CHECKS: slot 3 (%p, %#zx, %u)", p, n, flags);
    return CUDA_SUCCESS;
}

static const fc_word context_checks[] = {
    FC_SIZE_WORD(4),
    FC_FN(fc_CONTEXT_CHECKS_1),
    FC_FN(fc_checks_2),
    FC_FN(fc_checks_3),
};
FC_SIZED(context_checks, 4);

/* ---- INTEGRITY_CHECK ---------------------------------------------------- */

static CUresult fc_integrity(uint32_t version, uint64_t unix_seconds, uint64_t out[2]);

static const fc_word integrity_check[] = {
    FC_SIZE_WORD(3),
    FC_FN(fc_integrity),
    FC_FN(fc_INTEGRITY_CHECK_2),
};
FC_SIZED(integrity_check, 3);

static const uint8_t integrity_key[MD2_BLOCK_SIZE] = {
    0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52, 0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F,
};

#define FC_MAX_DEVICES 8
#define FC_INTEGRITY_HEAD 44u   /* 4 u32, 3 addresses, the time */
#define FC_INTEGRITY_DEVICE 28u /* UUID, PCI domain, bus, device */

typedef struct fc_msg {
    uint8_t b[FC_INTEGRITY_HEAD + FC_MAX_DEVICES * FC_INTEGRITY_DEVICE];
    size_t n;
} fc_msg;

static void fc_msg_le(fc_msg *m, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        m->b[m->n++] = (uint8_t)(v >> (8 * i));
}

static void fc_msg_devices(fc_msg *m)
{
    static const CUdevice_attribute pci[] = {
        CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
        CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
        CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID,
    };
    int count = 0;
    fc_device_count(&count);
    for (CUdevice d = 0; d < count && d < FC_MAX_DEVICES; d++) {
        CUuuid u;
        fc_device_uuid(&u, d);
        memcpy(m->b + m->n, u.bytes, sizeof u.bytes);
        m->n += sizeof u.bytes;
        for (size_t i = 0; i < sizeof pci / sizeof pci[0]; i++) {
            int v = 0;
            fc_device_attribute(&v, pci[i], d);
            fc_msg_le(m, (uint32_t)v, 4);
        }
    }
}

static void fc_md2_keyed(const uint8_t *data, size_t n, uint8_t pad, uint8_t digest[MD2_DIGEST_SIZE])
{
    uint8_t k[MD2_BLOCK_SIZE];
    for (size_t i = 0; i < sizeof k; i++)
        k[i] = integrity_key[i] ^ pad;
    struct md2_ctx c;
    md2_init(&c);
    md2_update(&c, sizeof k, k);
    md2_update(&c, n, data);
    md2_digest(&c, MD2_DIGEST_SIZE, digest);
}

/* HMAC-MD2 (16-byte block) of the process, thread, tables and devices. */
static void fc_integrity_hmac(uint32_t version, uint64_t unix_seconds, uint64_t out[2])
{
    int driver = 0;
    fc_driver_version(&driver);
    fc_msg m = {.n = 0};
    fc_msg_le(&m, (uint32_t)driver, 4);
    fc_msg_le(&m, version, 4);
    fc_msg_le(&m, (uint32_t)getpid(), 4);
    fc_msg_le(&m, (uint32_t)pthread_self(), 4);
    fc_msg_le(&m, (uintptr_t)cudart_interface, 8);
    fc_msg_le(&m, (uintptr_t)integrity_check, 8);
    fc_msg_le(&m, integrity_check[1], 8);
    fc_msg_le(&m, unix_seconds, 8);
    fc_msg_devices(&m);
    uint8_t inner[MD2_DIGEST_SIZE], outer[MD2_DIGEST_SIZE];
    fc_md2_keyed(m.b, m.n, 0x36, inner);
    fc_md2_keyed(inner, sizeof inner, 0x5c, outer);
    memcpy(out, outer, sizeof outer);
}

static CUresult fc_integrity(uint32_t version, uint64_t unix_seconds, uint64_t out[2])
{
    fc_debug("export table INTEGRITY_CHECK: slot 1 (version %u)", version);
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    static atomic_flag said = ATOMIC_FLAG_INIT;
    /* 13000-13002: runtime 13.0.88; 13010-13012: the runtime cuDNN 9 carries
       (a 13.1), which accepts these answers (cudnnCreate, measured);
       13020-13022: runtime 13.2 (the one CuPy 14.2 links statically, and
       13.2.86 of PyTorch 2.15's wheels), which accepts them too (CuPy's
       arrays, NVRTC kernels and cuBLAS; torch.cuda.is_available; measured);
       13040-13042: runtime 13.4, the one Warp 1.19 links statically, which
       accepts them too (its kernels load and run; measured). */
    bool measured = (version >= 13000 && version <= 13002) || (version >= 13010 && version <= 13012) ||
                    (version >= 13020 && version <= 13022) || (version >= 13040 && version <= 13042);
    if (!measured && !atomic_flag_test_and_set(&said))
        fprintf(stderr,
                "fakecuda: cuGetExportTable: integrity check version %u answered as 1300%u; "
                "its answers were measured with runtimes 13.0, 13.1, 13.2 and 13.4 only\n",
                version, version % 10);
    switch (version % 10) {
    case 0:
        out[0] = 0x3341181C03CB675Cull;
        out[1] = 0x8ED383AA1F4CD1E8ull;
        return CUDA_SUCCESS;
    case 1:
        out[0] = 0x1841181C03CB675Cull;
        out[1] = 0x8ED383AA1F4CD1E8ull;
        return CUDA_SUCCESS;
    case 2: fc_integrity_hmac(version, unix_seconds, out); return CUDA_SUCCESS;
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
}

/* ---- the libraries' context table (21318c60-...) ------------------------ */

/*
 * cuBLASLt (at its first GEMM) and cuFFT (at plan creation) ask for it.
 * Slot 4 (CUcontext ctx, unsigned long long *id) is cuCtxGetId (public
 * traces of cuBLASLt on a GPU); the size word says 95 words, as a 13.x
 * driver is reported to serve it. Every other slot is a stub that says so
 * once and returns CUDA_ERROR_NOT_SUPPORTED.
 */
static CUresult fc_context_id(CUcontext ctx, unsigned long long *id)
{
    fc_debug("export table LIBRARY_CONTEXT: slot 4 (context id)");
    return fc_ctx_get_id(ctx, id);
}

static CUresult fc_library_context_unused(void)
{
    static atomic_flag said = ATOMIC_FLAG_INIT;
    fc_debug("export table LIBRARY_CONTEXT: a slot other than 4 called");
    if (!atomic_flag_test_and_set(&said))
        fprintf(stderr, "fakecuda: cuGetExportTable: a slot of 21318c60-9714-3248-8ca6-41ff7324c8f2 other than 4 "
                        "was called: not emulated (CUDA_ERROR_NOT_SUPPORTED)\n");
    return CUDA_ERROR_NOT_SUPPORTED;
}

#define FC_LIBRARY_CONTEXT_WORDS 95
static fc_word library_context[FC_LIBRARY_CONTEXT_WORDS];

/* Filled once, before its first use (pthread_once). */
static void fc_library_context_fill(void)
{
    library_context[0] = FC_SIZE_WORD(FC_LIBRARY_CONTEXT_WORDS);
    for (int i = 1; i < FC_LIBRARY_CONTEXT_WORDS; i++)
        library_context[i] = FC_FN(fc_library_context_unused);
    library_context[4] = FC_FN(fc_context_id);
}

static void fc_library_context_ready(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fc_library_context_fill);
}

/* ---- MODULE_FUNCTIONS (6e163fbe-...): what cuFFT asks of its modules ---- */

/*
 * cuFFT 12 loads each of its kernels as a module of its own
 * (cuModuleLoadData) and, where it has no name for it, takes its function
 * with slot 7 (ctx, module, each, arg): each(arg, function, owner) for
 * every function of the module, returning how many. cuFFT's `each` stores
 * the function at arg and it wants exactly 1 (its code compares the answer
 * with 1 and fails the plan with CUFFT_INTERNAL_ERROR otherwise, measured
 * by disassembly and on fakecuda); that slot 7 is a module's function
 * iterator with that callback is public prior art. The third argument of
 * `each` is not used by cuFFT; fakecuda passes the module. The context
 * argument (the current one, in cuFFT's calls) is not needed: a module
 * knows its context.
 */
typedef void (*fc_function_each)(void *arg, CUfunction f, uint64_t owner);

typedef struct fc_function_visit {
    fc_function_each each;
    void *arg;
    CUmodule module;
} fc_function_visit;

static void fc_function_visit_one(void *visit, CUfunction f)
{
    const fc_function_visit *v = visit;
    v->each(v->arg, f, (uint64_t)(uintptr_t)v->module);
}

static size_t fc_module_functions(CUcontext ctx, CUmodule module, fc_function_each each, void *arg)
{
    (void)ctx;
    fc_debug("export table MODULE_FUNCTIONS: slot 7 (module %p)", (void *)module);
    if (!each)
        return 0;
    fc_function_visit v = {each, arg, module};
    return fc_module_each_function(module, fc_function_visit_one, &v);
}

FC_UNUSED_SLOT(MODULE_FUNCTIONS, 1)
FC_UNUSED_SLOT(MODULE_FUNCTIONS, 2)
FC_UNUSED_SLOT(MODULE_FUNCTIONS, 3)
FC_UNUSED_SLOT(MODULE_FUNCTIONS, 4)
FC_UNUSED_SLOT(MODULE_FUNCTIONS, 5)
FC_UNUSED_SLOT(MODULE_FUNCTIONS, 6)

/* cuFFT refuses a size word of 0x38 or less (no slot 7). */
static const fc_word module_functions[] = {
    FC_SIZE_WORD(8),
    FC_FN(fc_MODULE_FUNCTIONS_1),
    FC_FN(fc_MODULE_FUNCTIONS_2),
    FC_FN(fc_MODULE_FUNCTIONS_3),
    FC_FN(fc_MODULE_FUNCTIONS_4),
    FC_FN(fc_MODULE_FUNCTIONS_5),
    FC_FN(fc_MODULE_FUNCTIONS_6),
    FC_FN(fc_module_functions),
};
FC_SIZED(module_functions, 8);

/* ---- cuGetExportTable --------------------------------------------------- */

typedef struct fc_table {
    uint8_t id[16];
    const char *name;
    const fc_word *words; /* NULL: known, deliberately not provided */
} fc_table;

static const fc_table fc_tables[] = {
    {{0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9},
     "CUDA 13 requirements",
     NULL},
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9},
     "CUDART_INTERFACE",
     cudart_interface},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
     "TOOLS_RUNTIME_CALLBACK_HOOKS",
     tools_hooks},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc},
     "TOOLS_TLS",
     tools_tls},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
     "CONTEXT_LOCAL_STORAGE_INTERFACE_V0301",
     context_local_storage},
    {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e},
     "CONTEXT_CHECKS",
     context_checks},
    {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2},
     "INTEGRITY_CHECK",
     integrity_check},
    /* NVRTC 13.0 asks for it right after cuInit, and compiles (PTX and
       cubin) without it; what its words would be was never measured. */
    {{0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2},
     "LIBRARY_CONTEXT",
     library_context},
    {{0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d, 0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e},
     "MODULE_FUNCTIONS",
     module_functions},
    {{0xda, 0x91, 0x51, 0xd3, 0x3a, 0xe6, 0xcc, 0x41, 0xa5, 0xc0, 0x4f, 0x26, 0xd5, 0x33, 0xe3, 0x28}, "NVRTC", NULL},
};

static void fc_uuid_text(const CUuuid *id, char out[37])
{
    const unsigned char *b = (const unsigned char *)id->bytes;
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
             b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* The file of the object holding code address pc: who asked for a table. */
static const char *fc_caller_object(const void *pc)
{
    Dl_info info;
    if (!pc || !dladdr(pc, &info) || !info.dli_fname || !*info.dli_fname)
        return "an unknown caller";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

/*
 * Said once per UUID, for the first 32 distinct ones; every one after those
 * each time. It names the table and the object that asked: NVIDIA's
 * libraries (cuFFT) ask for tables of their own, so an unknown table says
 * nothing about the runtime's version.
 */
static void fc_unknown_table(const CUuuid *id, const char *text, const void *caller)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static CUuuid seen[32];
    static unsigned nseen;
    bool first = true;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < nseen && first; i++)
        first = memcmp(&seen[i], id, sizeof *id) != 0;
    if (first && nseen < sizeof seen / sizeof seen[0])
        seen[nseen++] = *id;
    pthread_mutex_unlock(&lock);
    if (first)
        fprintf(stderr,
                "fakecuda: cuGetExportTable: unknown table %s asked for by %s: not provided "
                "(CUDA_ERROR_NOT_SUPPORTED)\n",
                text, fc_caller_object(caller));
}

CUresult fc_get_export_table(const void **table, const CUuuid *id, const void *caller)
{
    if (!table || !id)
        return CUDA_ERROR_INVALID_VALUE;
    *table = NULL;
    fc_library_context_ready();
    char text[37];
    fc_uuid_text(id, text);
    for (size_t i = 0; i < sizeof fc_tables / sizeof fc_tables[0]; i++) {
        if (memcmp(fc_tables[i].id, id->bytes, sizeof fc_tables[i].id) != 0)
            continue;
        fc_debug("cuGetExportTable %s (%s)%s", text, fc_tables[i].name, fc_tables[i].words ? "" : ": not provided");
        *table = fc_tables[i].words;
        return fc_tables[i].words ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
    }
    fc_debug("cuGetExportTable %s: unknown", text);
    fc_unknown_table(id, text, caller);
    return CUDA_ERROR_NOT_SUPPORTED;
}

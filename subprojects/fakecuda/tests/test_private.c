/*
 * test_private.c: cuGetExportTable as NVIDIA's CUDA 13.0 runtime uses it
 * (README.md, "The runtime's private interface"): the
 * tables it needs exist with the documented layout, unknown tables are
 * refused with one stderr line and no crash, context-local storage misses
 * fail and its destructors run when a context goes away, and the integrity
 * answer agrees with what the public entry points report (checked with
 * nettle's own HMAC over MD2, not fakecuda's).
 */
#include "fc_test.h"

#include <criterion/redirect.h>
#include <errno.h>
#include <nettle/hmac.h>
#include <nettle/md2.h>
#include <pthread.h>
#include <unistd.h>

typedef uintptr_t word;

#define UUID(...) ((CUuuid){{__VA_ARGS__}})
static const CUuuid REQUIREMENTS =
    UUID(0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9);
static const CUuuid CUDART_INTERFACE =
    UUID(0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9);
static const CUuuid HOOKS =
    UUID(0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66);
static const CUuuid TOOLS_TLS =
    UUID(0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc);
static const CUuuid CLS =
    UUID(0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93);
static const CUuuid CHECKS =
    UUID(0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e);
static const CUuuid INTEGRITY =
    UUID(0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2);
static const CUuuid MODULE_FUNCTIONS =
    UUID(0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d, 0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e);

typedef void (*cls_dtor)(CUcontext, void *, void *);
typedef CUresult (*cls_put_fn)(CUcontext, void *, void *, cls_dtor);
typedef CUresult (*cls_delete_fn)(CUcontext, void *);
typedef CUresult (*cls_get_fn)(void **, CUcontext, void *);

static const word *table(const CUuuid *id)
{
    const void *t = NULL;
    OK(cuGetExportTable(&t, id));
    cr_assert_not_null(t);
    return t;
}

static CUresult cls_put(CUcontext ctx, void *key, void *value, cls_dtor dtor)
{
    return ((cls_put_fn)table(&CLS)[0])(ctx, key, value, dtor);
}

static CUresult cls_delete(CUcontext ctx, void *key)
{
    return ((cls_delete_fn)table(&CLS)[1])(ctx, key);
}

static CUresult cls_get(void **value, CUcontext ctx, void *key)
{
    return ((cls_get_fn)table(&CLS)[2])(value, ctx, key);
}

/* ---- the tables -------------------------------------------------------- */

Test(private, every_needed_table_exists_before_cuInit)
{
    const CUuuid *ids[] = {&CUDART_INTERFACE, &HOOKS, &TOOLS_TLS, &CLS, &CHECKS, &INTEGRITY};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        table(ids[i]);
}

Test(private, the_requirements_table_is_refused_quietly, .init = cr_redirect_stderr)
{
    const void *t = (const void *)1;
    FAILS(cuGetExportTable(&t, &REQUIREMENTS), CUDA_ERROR_NOT_SUPPORTED);
    cr_assert_null(t);
    fflush(stderr);
    cr_assert_stderr_eq_str("");
}

Test(private, unknown_table_is_refused_with_one_line_per_uuid, .init = cr_redirect_stderr)
{
    CUuuid unknown =
        UUID(0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77);
    CUuuid other = unknown;
    other.bytes[15] = 0x78;
    const void *t = (const void *)1;
    for (int i = 0; i < 3; i++) {
        FAILS(cuGetExportTable(&t, &unknown), CUDA_ERROR_NOT_SUPPORTED);
        cr_assert_null(t);
    }
    FAILS(cuGetExportTable(&t, &other), CUDA_ERROR_NOT_SUPPORTED);
    FAILS(cuGetExportTable(NULL, &unknown), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGetExportTable(&t, NULL), CUDA_ERROR_INVALID_VALUE);
    fflush(stderr);
    /* The line names the table and the object that asked: this program,
       which dladdr names as it was started (criterion's worker). */
    char want[512];
    snprintf(want, sizeof want,
             "fakecuda: cuGetExportTable: unknown table 01234567-89ab-cdef-0011-223344556677 "
             "asked for by %s: not provided (CUDA_ERROR_NOT_SUPPORTED)\n"
             "fakecuda: cuGetExportTable: unknown table 01234567-89ab-cdef-0011-223344556678 "
             "asked for by %s: not provided (CUDA_ERROR_NOT_SUPPORTED)\n",
             program_invocation_short_name, program_invocation_short_name);
    cr_assert_stderr_eq_str(want);
}

Test(private, cudart_interface_slot2_is_the_primary_context)
{
    OK(cuInit(0));
    CUresult (*primary)(CUcontext *, CUdevice) = (CUresult(*)(CUcontext *, CUdevice))table(&CUDART_INTERFACE)[2];
    CUcontext a, b, retained;
    OK(primary(&a, 0));
    OK(primary(&b, 0));
    cr_assert_eq(a, b);
    OK(cuDevicePrimaryCtxRetain(&retained, 0));
    cr_assert_eq(a, retained);
    unsigned flags;
    int active;
    OK(cuDevicePrimaryCtxRelease(0));
    OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
    cr_assert(active, "the table keeps its own reference");
    FAILS(primary(&a, 1), CUDA_ERROR_INVALID_DEVICE);
}

/* Runtime 13.2 calls slot 12 with no arguments as it starts and stops on
   an error there; the 16-word table also covers the slots between. */
Test(private, cudart_interface_slot12_lets_runtime_13_2_start, .init = cr_redirect_stderr)
{
    const word *t = table(&CUDART_INTERFACE);
    cr_assert_eq(t[0], 16 * sizeof(word));
    OK(((CUresult(*)(void))t[12])());
    FAILS(((CUresult(*)(void))t[15])(), CUDA_ERROR_NOT_SUPPORTED);
    fflush(stderr);
    cr_assert_stderr_eq_str("fakecuda: cuGetExportTable: slot 15 of CUDART_INTERFACE is not emulated "
                            "(CUDA_ERROR_NOT_SUPPORTED); only the slots the README lists were measured\n");
}

Test(private, callback_hooks_size_and_writable_buffers)
{
    const word *t = table(&HOOKS);
    cr_assert_geq(t[0], 0x38);
    for (int slot = 2; slot <= 6; slot += 4) {
        void *buf = NULL;
        size_t n = 0;
        OK(((CUresult(*)(void **, size_t *))t[slot])(&buf, &n));
        cr_assert_not_null(buf);
        size_t need = slot == 2 ? 1024 : 14 * sizeof(uint32_t);
        cr_assert_geq(n, need);
        memset(buf, 0xA5, need);
    }
}

Test(private, context_checks_report_nothing)
{
    CUcontext ctx = fc_setup();
    const word *t = table(&CHECKS);
    uint32_t out1 = 7;
    void *out2 = NULL;
    OK(((CUresult(*)(CUcontext, uint32_t *, void **))t[2])(ctx, &out1, &out2));
    cr_assert_eq(out1, 0);
    OK(((CUresult(*)(void *, size_t, unsigned))t[3])(&out1, 0x40, 0));
}

Test(private, a_slot_never_seen_called_says_so, .init = cr_redirect_stderr)
{
    const word *t = table(&TOOLS_TLS);
    for (int i = 0; i < 2; i++)
        FAILS(((CUresult(*)(void))t[3])(), CUDA_ERROR_NOT_SUPPORTED);
    fflush(stderr);
    cr_assert_stderr_eq_str("fakecuda: cuGetExportTable: slot 3 of TOOLS_TLS is not emulated "
                            "(CUDA_ERROR_NOT_SUPPORTED); only the slots the README lists were measured\n");
}

/* ---- MODULE_FUNCTIONS: cuFFT's way to a module's function ------------- */

typedef void (*each_fn)(void *arg, CUfunction f, uint64_t owner);
typedef size_t (*module_functions_fn)(CUcontext ctx, CUmodule m, each_fn each, void *arg);

typedef struct seen_functions {
    CUfunction f[4];
    uint64_t owner[4];
    unsigned n;
} seen_functions;

static void seen(void *arg, CUfunction f, uint64_t owner)
{
    seen_functions *s = arg;
    if (s->n < 4) {
        s->f[s->n] = f;
        s->owner[s->n] = owner;
    }
    s->n++;
}

static size_t module_functions(CUmodule m, seen_functions *s)
{
    const word *t = table(&MODULE_FUNCTIONS);
    cr_assert_gt(t[0], 7 * sizeof(word), "cuFFT refuses a table without slot 7");
    CUcontext ctx;
    OK(cuCtxGetCurrent(&ctx));
    return ((module_functions_fn)t[7])(ctx, m, seen, s);
}

static CUmodule ptx_module(const char *ptx)
{
    CUmodule m;
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    OK(cuModuleLoadData(&m, ptx));
    return m;
}

#define PTX_HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"

/* cuFFT loads each kernel as a module and wants exactly one function back. */
Test(private, module_functions_calls_back_with_each_function_and_counts)
{
    CUmodule one = ptx_module(PTX_HEAD ".visible .entry only()\n{\n  ret;\n}\n");
    seen_functions s = {0};
    cr_assert_eq(module_functions(one, &s), 1);
    cr_assert_eq(s.n, 1);
    CUfunction f;
    OK(cuModuleGetFunction(&f, one, "only"));
    cr_assert_eq(s.f[0], f, "the function is the module's own handle");
    cr_assert_eq(s.owner[0], (uint64_t)(uintptr_t)one);

    CUmodule two = ptx_module(PTX_HEAD ".visible .entry first()\n{\n  ret;\n}\n"
                                       ".visible .entry second()\n{\n  ret;\n}\n");
    seen_functions t = {0};
    cr_assert_eq(module_functions(two, &t), 2);
    cr_assert_eq(t.n, 2);
    CUfunction first, second;
    OK(cuModuleGetFunction(&first, two, "first"));
    OK(cuModuleGetFunction(&second, two, "second"));
    cr_assert(t.f[0] == first && t.f[1] == second);
}

/* Nothing to call back for where the handle is no module: an unloaded one,
   a library (whose kernels are not a module's functions), NULL. */
Test(private, module_functions_of_no_module_is_zero)
{
    static const char ptx[] = PTX_HEAD ".visible .entry k()\n{\n  ret;\n}\n";
    seen_functions s = {0};
    CUmodule m = ptx_module(ptx);
    OK(cuModuleUnload(m));
    CUlibrary lib;
    OK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
    cr_assert_eq(module_functions(m, &s), 0);
    cr_assert_eq(module_functions((CUmodule)lib, &s), 0);
    cr_assert_eq(module_functions(NULL, &s), 0);
    cr_assert_eq(s.n, 0);
}

/* ---- context-local storage --------------------------------------------- */

static struct {
    CUcontext ctx;
    void *key, *value;
} ran[8];
static int nran;

static void record(CUcontext ctx, void *key, void *value)
{
    cr_assert_lt(nran, 8);
    ran[nran].ctx = ctx;
    ran[nran].key = key;
    ran[nran].value = value;
    nran++;
}

static int key_a, key_b, value_a, value_b;

Test(private, get_misses_fail_and_null_means_current)
{
    CUcontext ctx = fc_setup();
    void *v = NULL;
    FAILS(cls_get(&v, NULL, &key_a), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cls_get(&v, ctx, &key_a), CUDA_ERROR_INVALID_HANDLE);
    OK(cls_put(NULL, &key_a, &value_a, record));
    OK(cls_get(&v, ctx, &key_a));
    cr_assert_eq(v, &value_a);
    FAILS(cls_get(&v, NULL, &key_b), CUDA_ERROR_INVALID_HANDLE);
    OK(cls_put(ctx, &key_a, &value_b, record)); /* replaces */
    OK(cls_get(&v, NULL, &key_a));
    cr_assert_eq(v, &value_b);
    OK(cls_delete(NULL, &key_a));
    FAILS(cls_get(&v, ctx, &key_a), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cls_delete(ctx, &key_a), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cls_get(NULL, ctx, &key_a), CUDA_ERROR_INVALID_VALUE);
    cr_assert_eq(nran, 0, "neither replacing nor deleting runs a destructor");
}

Test(private, without_a_context_storage_is_refused)
{
    OK(cuInit(0));
    void *v;
    FAILS(cls_get(&v, NULL, &key_a), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cls_put(NULL, &key_a, &value_a, record), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cls_delete(NULL, &key_a), CUDA_ERROR_INVALID_CONTEXT);
}

Test(private, primary_reset_runs_destructors_and_drops_entries)
{
    CUcontext ctx = fc_setup();
    OK(cls_put(ctx, &key_a, &value_a, record));
    OK(cls_put(ctx, &key_b, &value_b, record));
    OK(cuDevicePrimaryCtxReset(0));
    cr_assert_eq(nran, 2);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(ran[i].ctx, ctx);
        cr_assert_eq(ran[i].value, ran[i].key == (void *)&key_a ? (void *)&value_a : (void *)&value_b);
    }
    cr_assert_neq(ran[0].key, ran[1].key);
    CUcontext again;
    OK(cuDevicePrimaryCtxRetain(&again, 0));
    OK(cuCtxSetCurrent(again));
    void *v;
    FAILS(cls_get(&v, again, &key_a), CUDA_ERROR_INVALID_HANDLE);
    cr_assert_eq(nran, 2);
}

Test(private, primary_release_to_zero_runs_destructors)
{
    CUcontext ctx = fc_setup();
    OK(cls_put(ctx, &key_a, &value_a, record));
    OK(cuDevicePrimaryCtxRelease(0));
    cr_assert_eq(nran, 1);
    cr_assert_eq(ran[0].ctx, ctx);
    cr_assert_eq(ran[0].key, &key_a);
    cr_assert_eq(ran[0].value, &value_a);
}

Test(private, ctx_destroy_runs_only_that_contexts_destructors)
{
    CUcontext primary = fc_setup(), created;
    OK(cls_put(primary, &key_a, &value_a, record));
    OK(cuCtxCreate(&created, NULL, 0, 0));
    OK(cls_put(NULL, &key_a, &value_b, record));
    OK(cls_put(created, &key_b, NULL, NULL)); /* no destructor: dropped silently */
    OK(cuCtxDestroy(created));
    cr_assert_eq(nran, 1);
    cr_assert_eq(ran[0].ctx, created);
    cr_assert_eq(ran[0].value, &value_b);
    void *v;
    OK(cls_get(&v, primary, &key_a));
    cr_assert_eq(v, &value_a);
    FAILS(cls_get(&v, created, &key_a), CUDA_ERROR_INVALID_CONTEXT);
}

/* The runtime re-makes its state on the primary context it finds current after a reset. */
Test(private, primary_context_keeps_its_handle_across_reset)
{
    CUcontext before = fc_setup(), after;
    OK(cuDevicePrimaryCtxReset(0));
    OK(cuDevicePrimaryCtxRetain(&after, 0));
    cr_assert_eq(before, after);
}

#define THREADS 8
#define ROUNDS 2000

static CUcontext shared_ctx;

static void *hammer(void *arg)
{
    int *keys = arg;
    for (int r = 0; r < ROUNDS; r++) {
        void *key = &keys[r % 4], *v = NULL;
        if (cls_put(shared_ctx, key, (void *)(uintptr_t)(r + 1), NULL) != CUDA_SUCCESS)
            return (void *)1;
        if (cls_get(&v, shared_ctx, key) != CUDA_SUCCESS || v != (void *)(uintptr_t)(r + 1))
            return (void *)2;
        if (r % 3 == 0 && cls_delete(shared_ctx, key) != CUDA_SUCCESS)
            return (void *)3;
    }
    return NULL;
}

Test(private, storage_is_thread_safe)
{
    shared_ctx = fc_setup();
    static int keys[THREADS][4];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, hammer, keys[i]), 0);
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        cr_assert_null(r, "thread %d failed at step %p", i, r);
    }
}

/* ---- the integrity check ----------------------------------------------- */

typedef CUresult (*integrity_fn)(uint32_t, uint64_t, uint64_t[2]);

static void le(uint8_t *msg, size_t *n, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        msg[(*n)++] = (uint8_t)(v >> (8 * i));
}

/* The documented message, built from the public entry points only. */
static void expected_hmac(uint32_t version, uint64_t now, uint8_t digest[MD2_DIGEST_SIZE])
{
    static const uint8_t key[16] = {0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
                                    0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F};
    uint8_t msg[256];
    size_t n = 0;
    int driver, count;
    OK(cuDriverGetVersion(&driver));
    le(msg, &n, (uint32_t)driver, 4);
    le(msg, &n, version, 4);
    le(msg, &n, (uint32_t)getpid(), 4);
    le(msg, &n, (uint32_t)pthread_self(), 4);
    le(msg, &n, (uintptr_t)table(&CUDART_INTERFACE), 8);
    le(msg, &n, (uintptr_t)table(&INTEGRITY), 8);
    le(msg, &n, table(&INTEGRITY)[1], 8);
    le(msg, &n, now, 8);
    OK(cuDeviceGetCount(&count));
    for (CUdevice d = 0; d < count; d++) {
        CUuuid u;
        OK(cuDeviceGetUuid(&u, d));
        memcpy(msg + n, u.bytes, 16);
        n += 16;
        const CUdevice_attribute pci[] = {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
                                          CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID};
        for (int i = 0; i < 3; i++) {
            int v;
            OK(cuDeviceGetAttribute(&v, pci[i], d));
            le(msg, &n, (uint32_t)v, 4);
        }
    }
    struct HMAC_CTX(struct md2_ctx) h;
    HMAC_SET_KEY(&h, &nettle_md2, sizeof key, key);
    hmac_update(&h.state, &nettle_md2, n, msg);
    HMAC_DIGEST(&h, &nettle_md2, MD2_DIGEST_SIZE, digest);
}

Test(private, integrity_answers_the_three_versions)
{
    OK(cuInit(0));
    integrity_fn check = (integrity_fn)table(&INTEGRITY)[1];
    uint64_t out[2];
    OK(check(13000, 1700000000, out));
    cr_assert_eq(out[0], 0x3341181C03CB675Cull);
    cr_assert_eq(out[1], 0x8ED383AA1F4CD1E8ull);
    OK(check(13001, 1700000000, out));
    cr_assert_eq(out[0], 0x1841181C03CB675Cull);
    cr_assert_eq(out[1], 0x8ED383AA1F4CD1E8ull);
    for (uint64_t now = 1700000000; now < 1700000003; now++) {
        uint8_t want[MD2_DIGEST_SIZE];
        expected_hmac(13002, now, want);
        OK(check(13002, now, out));
        cr_assert_arr_eq(out, want, sizeof want, "HMAC-MD2 at time %llu", (unsigned long long)now);
    }
    FAILS(check(13002, 0, NULL), CUDA_ERROR_INVALID_VALUE);
}

/* cuDNN 9's runtime asks 13010-13012, runtime 13.2 (CuPy's,
   PyTorch's) 13020-13022 and runtime 13.4 (Warp's) 13040-13042, answered by
   version % 10 without a word; any other version is answered so too, said
   once (the only line). */
Test(private, integrity_versions_of_cudnns_and_cupys_runtimes_are_quiet, .init = cr_redirect_stderr)
{
    OK(cuInit(0));
    integrity_fn check = (integrity_fn)table(&INTEGRITY)[1];
    uint64_t out[2];
    OK(check(13010, 1700000000, out));
    cr_assert_eq(out[0], 0x3341181C03CB675Cull);
    OK(check(13011, 1700000000, out));
    cr_assert_eq(out[0], 0x1841181C03CB675Cull);
    OK(check(13012, 1700000000, out));
    OK(check(13020, 1700000000, out));
    cr_assert_eq(out[0], 0x3341181C03CB675Cull);
    OK(check(13021, 1700000000, out));
    cr_assert_eq(out[0], 0x1841181C03CB675Cull);
    OK(check(13022, 1700000000, out));
    OK(check(13040, 1700000000, out));
    cr_assert_eq(out[0], 0x3341181C03CB675Cull);
    OK(check(13041, 1700000000, out));
    cr_assert_eq(out[0], 0x1841181C03CB675Cull);
    OK(check(13042, 1700000000, out));
    OK(check(13030, 1700000000, out));
    OK(check(13031, 1700000000, out));
    fflush(stderr);
    cr_assert_stderr_eq_str("fakecuda: cuGetExportTable: integrity check version 13030 answered as 13000; "
                            "its answers were measured with runtimes 13.0, 13.1, 13.2 and 13.4 only\n");
}

Test(private, device_uuid_is_the_same_through_both_variants)
{
    OK(cuInit(0));
    CUuuid a, b;
    OK(cuDeviceGetUuid(&a, 0));
    OK(cuDeviceGetUuid_v2(&b, 0));
    cr_assert_arr_eq(a.bytes, b.bytes, 16);
    cr_assert_arr_eq(a.bytes, "fakecuda-device0", 16);
    FAILS(cuDeviceGetUuid(&a, 1), CUDA_ERROR_INVALID_DEVICE);
    FAILS(cuDeviceGetUuid(NULL, 0), CUDA_ERROR_INVALID_VALUE);
}

Test(private, ctx_api_version_and_loading_mode)
{
    unsigned v = 0;
    OK(cuInit(0));
    FAILS(cuCtxGetApiVersion(NULL, &v), CUDA_ERROR_INVALID_CONTEXT);
    CUcontext ctx = fc_setup();
    OK(cuCtxGetApiVersion(ctx, &v));
    cr_assert_eq(v, 3020);
    OK(cuCtxGetApiVersion(NULL, &v));
    FAILS(cuCtxGetApiVersion(ctx, NULL), CUDA_ERROR_INVALID_VALUE);
    CUmoduleLoadingMode mode;
    unsetenv("CUDA_MODULE_LOADING");
    OK(cuModuleGetLoadingMode(&mode));
    cr_assert_eq(mode, CU_MODULE_LAZY_LOADING);
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    OK(cuModuleGetLoadingMode(&mode));
    cr_assert_eq(mode, CU_MODULE_EAGER_LOADING);
    FAILS(cuModuleGetLoadingMode(NULL), CUDA_ERROR_INVALID_VALUE);
}

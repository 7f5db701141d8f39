/*
 * test_plugins.c: kernel plugins (FAKECUDA_KERNELS). plugin_demo.c's
 * kernels are found through modules and libraries with their registered
 * layouts, compute the right numbers from kernelParams and from `extra`
 * (parameter blocks of 8, 124 and 4116 bytes, each queued launch holding its
 * own copy), see the launch as it was made, and fault stickily; a bad plugin
 * (plugin_bad.c's variants, a missing file, a name listed twice) costs one
 * stderr line and nothing else; a plugin calling the driver while it loads
 * is refused, not deadlocked.
 */
#include "fc_test.h"

#include <criterion/parameterized.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000

#define BOTH_FORMS(test)                            \
    ParameterizedTestParameters(plugins, test)      \
    {                                               \
        static bool forms[] = {false, true};        \
        return cr_make_param_array(bool, forms, 2); \
    }                                               \
    ParameterizedTest(bool *packed, plugins, test)

/* The demo plugin's by-value structs, as its kernels declare them. */
struct poly {
    float coef[24];
    int degree;
};
struct table {
    int v[1024];
};

static CUcontext with_plugins(const char *list)
{
    setenv("FAKECUDA_KERNELS", list, 1);
    return fc_setup();
}

static void download(void *host, CUdeviceptr d, size_t bytes)
{
    OK(cuCtxSynchronize());
    OK(cuMemcpyDtoH(host, d, bytes));
}

static CUkernel library_kernel(const char *name)
{
    CUlibrary lib;
    CUkernel k;
    OK(cuLibraryLoadData(&lib, "fakecuda ignores library images", NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, name));
    return k;
}

static void expect_layout(CUfunction f, const size_t (*want)[2], size_t n)
{
    size_t off, size;
    for (size_t i = 0; i < n; i++) {
        OK(cuFuncGetParamInfo(f, i, &off, &size));
        cr_assert(off == want[i][0] && size == want[i][1], "parameter %zu: %zu/%zu, expected %zu/%zu", i, off, size,
                  want[i][0], want[i][1]);
    }
    FAILS(cuFuncGetParamInfo(f, n, &off, &size), CUDA_ERROR_INVALID_VALUE);
}

/* ---- found by name, with the registered layout ---------------------------- */

Test(plugins, found_through_modules_and_libraries)
{
    with_plugins(FC_PLUGIN_DEMO);
    const char *name;
    CUfunction f = fc_function("_Z6vecaddPKfS0_Pfi"), kf;
    OK(cuFuncGetName(&name, f));
    cr_assert_str_eq(name, "_Z6vecaddPKfS0_Pfi");
    CUkernel k = library_kernel("_Z6horner4PolyPKfPfi");
    OK(cuKernelGetName(&name, k));
    cr_assert_str_eq(name, "_Z6horner4PolyPKfPfi");
    OK(cuKernelGetFunction(&kf, k));
    OK(cuFuncGetName(&name, kf));
    cr_assert_str_eq(name, "_Z6horner4PolyPKfPfi");
}

Test(plugins, param_info_reports_the_registered_layout)
{
    with_plugins(FC_PLUGIN_DEMO);
    static const size_t vecadd[][2] = {{0, 8}, {8, 8}, {16, 8}, {24, 4}};
    static const size_t horner[][2] = {{0, 100}, {104, 8}, {112, 8}, {120, 4}};
    static const size_t lookup[][2] = {{0, 4096}, {4096, 8}, {4104, 8}, {4112, 4}};
    expect_layout(fc_function("_Z6vecaddPKfS0_Pfi"), vecadd, 4);
    expect_layout((CUfunction)(void *)library_kernel("_Z6horner4PolyPKfPfi"), horner, 4);
    expect_layout(fc_function("_Z6lookup5TablePKiPii"), lookup, 4);
    expect_layout(fc_function("_Z4trapv"), NULL, 0);
}

Test(plugins, unknown_kernels_are_still_not_found)
{
    with_plugins(FC_PLUGIN_DEMO);
    CUmodule mod;
    CUlibrary lib;
    CUfunction f;
    CUkernel k;
    OK(cuModuleLoadData(&mod, "image"));
    OK(cuLibraryLoadData(&lib, "image", NULL, NULL, 0, NULL, NULL, 0));
    FAILS(cuModuleGetFunction(&f, mod, "_Z6vecaddPfS_S_i"), CUDA_ERROR_NOT_FOUND);
    FAILS(cuLibraryGetKernel(&k, lib, "_Z6vecadd"), CUDA_ERROR_NOT_FOUND);
}

/* ---- launches compute the right numbers ---------------------------------- */

BOTH_FORMS(vecadd)
{
    with_plugins(FC_PLUGIN_DEMO);
    float a[N], b[N], c[N + 8];
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i;
    }
    CUdeviceptr da = fc_upload(a, sizeof a), db = fc_upload(b, sizeof b), dc;
    OK(cuMemAlloc(&dc, sizeof c));
    int n = N;
    void *args[] = {&da, &db, &dc, &n};
    OK(fc_launch(fc_function("_Z6vecaddPKfS0_Pfi"), N, args, *packed, NULL));
    download(c, dc, sizeof c);
    for (int i = 0; i < N; i++)
        cr_assert_eq(c[i], 1.5f * (float)i, "c[%d] = %f", i, c[i]);
    for (int i = N; i < N + 8; i++)
        cr_assert_eq(fc_as_bits(c[i]), FC_STALE_WORD, "c[%d] was written", i);
}

BOTH_FORMS(horner_takes_a_struct_by_value)
{
    with_plugins(FC_PLUGIN_DEMO);
    struct poly p = {.degree = 3};
    p.coef[0] = 1, p.coef[1] = -2, p.coef[2] = 0.5f, p.coef[3] = 3;
    p.coef[4] = 1e9f; /* above the degree: must not count */
    float x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 17) - 8;
    CUdeviceptr dx = fc_upload(x, sizeof x), dy;
    OK(cuMemAlloc(&dy, sizeof y));
    int n = N;
    void *args[] = {&p, &dx, &dy, &n};
    OK(fc_launch((CUfunction)(void *)library_kernel("_Z6horner4PolyPKfPfi"), N, args, *packed, NULL));
    download(y, dy, sizeof y);
    for (int i = 0; i < N; i++) {
        float want = ((3 * x[i] + 0.5f) * x[i] - 2) * x[i] + 1;
        cr_assert_eq(y[i], want, "y[%d] = %f, expected %f", i, y[i], want);
    }
}

/* Each queued launch keeps the table it was given, though the host's changes. */
BOTH_FORMS(queued_launches_keep_their_own_large_parameters)
{
    with_plugins(FC_PLUGIN_DEMO);
    enum { LAUNCHES = 20, M = 64 };
    static struct table t;
    int idx[M], out[LAUNCHES][M];
    for (int i = 0; i < M; i++)
        idx[i] = (i * 37) % 1024;
    CUdeviceptr didx = fc_upload(idx, sizeof idx), dout[LAUNCHES];
    CUfunction f = fc_function("_Z6lookup5TablePKiPii");
    int n = M;
    for (int l = 0; l < LAUNCHES; l++) {
        for (int i = 0; i < 1024; i++)
            t.v[i] = l * 10000 + i;
        OK(cuMemAlloc(&dout[l], sizeof out[l]));
        void *args[] = {&t, &didx, &dout[l], &n};
        OK(fc_launch(f, M, args, *packed, NULL));
    }
    memset(&t, 0, sizeof t);
    OK(cuCtxSynchronize());
    for (int l = 0; l < LAUNCHES; l++) {
        download(out[l], dout[l], sizeof out[l]);
        for (int i = 0; i < M; i++)
            cr_assert_eq(out[l][i], l * 10000 + idx[i], "launch %d: out[%d] = %d", l, i, out[l][i]);
    }
}

Test(plugins, the_kernel_sees_the_launch_as_made)
{
    with_plugins(FC_PLUGIN_DEMO);
    CUstream s;
    OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 10 * sizeof(unsigned long long)));
    void *args[] = {&d};
    unsigned long long seen[10];
    OK(cuLaunchKernel(fc_function("_Z5probePy"), 2, 3, 4, 5, 6, 7, 1000, s, args, NULL));
    OK(cuStreamSynchronize(s));
    OK(cuMemcpyDtoH(seen, d, sizeof seen));
    unsigned long long want[9] = {2, 3, 4, 5, 6, 7, 1000, 8, (unsigned long long)(uintptr_t)s};
    for (int i = 0; i < 9; i++)
        cr_assert_eq(seen[i], want[i], "field %d: %llu, expected %llu", i, seen[i], want[i]);
    cr_assert_neq(seen[9], 0, "the registration's user pointer reaches the kernel");
    OK(cuLaunchKernel(fc_function("_Z5probePy"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    download(seen, d, sizeof seen);
    cr_assert_eq(seen[8], 0, "the default stream is NULL, as the launch named it");
}

Test(plugins, launch_checks_use_the_registered_layout)
{
    with_plugins(FC_PLUGIN_DEMO);
    CUfunction f = fc_function("_Z6lookup5TablePKiPii");
    static unsigned char buf[4200];
    size_t short_size = 4112; /* the layout ends at 4116 */
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &short_size,
                     CU_LAUNCH_PARAM_END};
    FAILS(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuLaunchKernel(fc_function("_Z4trapv"), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL)); /* takes nothing */
    FAILS(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
}

Test(plugins, built_ins_still_work_beside_plugins)
{
    with_plugins(FC_PLUGIN_DEMO);
    float data[4] = {1, 2, 3, 4}, out[4];
    CUdeviceptr d = fc_upload(data, sizeof data);
    int n = 4;
    float factor = -2;
    void *args[] = {&d, &n, &factor};
    OK(fc_launch(fc_function("scale"), 4, args, false, NULL));
    download(out, d, sizeof out);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(out[i], -2 * data[i]);
}

/* ---- faults are sticky, reported at the next sync ------------------------ */

static void expect_sticky(CUresult fault)
{
    CUdeviceptr d;
    CUresult r = cuCtxSynchronize();
    cr_assert_eq(r, fault, "sync returned %d, expected %d", r, fault);
    FAILS(cuMemAlloc(&d, 16), fault);
    r = cuCtxSynchronize();
    cr_assert_eq(r, fault, "the fault is sticky");
}

/* a and b are in bounds; c holds one element fewer than n. */
Test(plugins, out_of_allocation_range_is_a_sticky_illegal_address)
{
    with_plugins(FC_PLUGIN_DEMO);
    CUdeviceptr a, b, c;
    OK(cuMemAlloc(&a, 64 * sizeof(float)));
    OK(cuMemAlloc(&b, 64 * sizeof(float)));
    OK(cuMemAlloc(&c, 63 * sizeof(float)));
    int n = 64;
    void *args[] = {&a, &b, &c, &n};
    OK(fc_launch(fc_function("_Z6vecaddPKfS0_Pfi"), 64, args, false, NULL));
    expect_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
}

Test(plugins, misaligned_pointer_is_a_sticky_misaligned_address)
{
    with_plugins(FC_PLUGIN_DEMO);
    CUdeviceptr a, c;
    OK(cuMemAlloc(&a, 256));
    OK(cuMemAlloc(&c, 256));
    CUdeviceptr b = a + 2;
    int n = 4;
    void *args[] = {&a, &b, &c, &n};
    OK(fc_launch(fc_function("_Z6vecaddPKfS0_Pfi"), 4, args, false, NULL));
    expect_sticky(CUDA_ERROR_MISALIGNED_ADDRESS);
}

/* Work queued behind the failing launch, large parameters included, is
   dropped. Sync: asynchronously the trap may run before they are queued. */
Test(plugins, other_codes_are_a_sticky_launch_failure)
{
    fc_schedule_sync();
    with_plugins(FC_PLUGIN_DEMO);
    static struct table t;
    CUdeviceptr idx, out;
    OK(cuMemAlloc(&idx, 4 * sizeof(int)));
    OK(cuMemAlloc(&out, 4 * sizeof(int)));
    int n = 4;
    void *args[] = {&t, &idx, &out, &n};
    OK(cuLaunchKernel(fc_function("_Z4trapv"), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    for (int i = 0; i < 8; i++)
        OK(fc_launch(fc_function("_Z6lookup5TablePKiPii"), 4, args, false, NULL));
    expect_sticky(CUDA_ERROR_LAUNCH_FAILED);
}

Test(plugins, launch_fault_injection_names_plugin_kernels)
{
    setenv("FAKECUDA_FAULTS", "launch:_Z6vecadd*#2=fault", 1);
    with_plugins(FC_PLUGIN_DEMO);
    CUdeviceptr a;
    OK(cuMemAlloc(&a, 64 * sizeof(float)));
    int n = 64;
    void *args[] = {&a, &a, &a, &n};
    CUfunction f = fc_function("_Z6vecaddPKfS0_Pfi");
    OK(fc_launch(f, 64, args, false, NULL));
    OK(cuCtxSynchronize());
    OK(fc_launch(f, 64, args, false, NULL));
    expect_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
}

/* ---- a bad plugin: one line, skipped whole, everything else works -------- */

typedef struct bad_plugin {
    const char *path;
    const char *reason; /* a piece of the line */
} bad_plugin;

static const bad_plugin bad_plugins[] = {
    {"/nonexistent/fakecuda-plugin.so", "No such file"},
    {FC_PLUGIN_BAD_ABI, "built for kernel ABI version 99, but this fakecuda has version 1"},
    {FC_PLUGIN_BAD_NO_ENTRY, "no fakecuda_kernels_register function"},
    {FC_PLUGIN_BAD_LAYOUT, "kernel _Z7overlapPvi: parameter 1 at offset 4 overlaps the one before, which ends at 8"},
    {FC_PLUGIN_BAD_DUPLICATE,
     "kernel scale is already registered by fakecuda's built-in library (the first registration of a name wins)"},
    {FC_PLUGIN_DEMO, "kernel _Z4trapv is already registered by " FC_PLUGIN_DEMO},
};

/* Indexes, not pointers: Criterion runs each case in a new process. */
ParameterizedTestParameters(plugins, bad_plugin_is_skipped_with_one_line)
{
    static size_t cases[sizeof bad_plugins / sizeof bad_plugins[0]];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cases[i] = i;
    return cr_make_param_array(size_t, cases, sizeof cases / sizeof cases[0]);
}

/* The list is "BAD::DEMO" (an empty entry is no plugin): the demo loads after
   the bad one, or, when the bad one is the demo itself, is skipped the second time. */
ParameterizedTest(size_t *which, plugins, bad_plugin_is_skipped_with_one_line, .init = cr_redirect_stderr)
{
    const bad_plugin *bad = &bad_plugins[*which];
    char list[1024];
    snprintf(list, sizeof list, "%s::%s", bad->path, FC_PLUGIN_DEMO);
    with_plugins(list);

    CUmodule mod;
    CUfunction f;
    OK(cuModuleLoadData(&mod, "image"));
    FAILS(cuModuleGetFunction(&f, mod, "_Z6markerv"), CUDA_ERROR_NOT_FOUND);
    OK(cuModuleGetFunction(&f, mod, "_Z4trapv"));

    float data[2] = {3, 4}, out[2];
    CUdeviceptr d = fc_upload(data, sizeof data);
    int n = 2;
    float factor = 0.5f;
    void *args[] = {&d, &n, &factor};
    OK(fc_launch(fc_function("scale"), 2, args, false, NULL));
    download(out, d, sizeof out);
    cr_assert(out[0] == 1.5f && out[1] == 2.0f, "the built-in scale ran: %f %f", out[0], out[1]);

    fflush(stderr);
    char line[1024] = "", prefix[512];
    FILE *err = cr_get_redirected_stderr();
    cr_assert_not_null(fgets(line, sizeof line, err));
    snprintf(prefix, sizeof prefix, "fakecuda: FAKECUDA_KERNELS: skipping plugin %s: ", bad->path);
    cr_assert(strncmp(line, prefix, strlen(prefix)) == 0, "stderr: %s", line);
    cr_assert(strstr(line, bad->reason), "stderr: %s (expected: %s)", line, bad->reason);
    cr_assert_null(fgets(line, sizeof line, err), "one line only, then: %s", line);
}

Test(plugins, a_plugin_calling_the_driver_while_loading_is_refused, .init = cr_redirect_stderr)
{
    with_plugins(FC_PLUGIN_BAD_REENTRANT);
    CUmodule mod;
    CUfunction f;
    OK(cuModuleLoadData(&mod, "image"));
    OK(cuModuleGetFunction(&f, mod, "_Z6markerv"));
    fflush(stderr);
    char line[256];
    cr_assert_null(fgets(line, sizeof line, cr_get_redirected_stderr()), "stderr: %s", line);
}

Test(plugins, no_variable_no_line, .init = cr_redirect_stderr)
{
    unsetenv("FAKECUDA_KERNELS");
    fc_setup();
    CUmodule mod;
    CUfunction f;
    OK(cuModuleLoadData(&mod, "image"));
    FAILS(cuModuleGetFunction(&f, mod, "_Z6vecaddPKfS0_Pfi"), CUDA_ERROR_NOT_FOUND);
    fflush(stderr);
    char line[256];
    cr_assert_null(fgets(line, sizeof line, cr_get_redirected_stderr()), "stderr: %s", line);
}

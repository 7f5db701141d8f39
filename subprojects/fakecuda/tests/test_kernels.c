/*
 * test_kernels.c: every built-in kernel computes the right numbers, with
 * its parameters passed as kernelParams and as a packed `extra` buffer;
 * parameter layouts and names are the ones an nvcc-built kernel has;
 * kernels reached through cuLibrary* work the same.
 */
#include "fc_test.h"

#include <criterion/parameterized.h>

#define N 1000

/* The test body runs twice: parameters as kernelParams, then as `extra`. */
#define BOTH_FORMS(test)                            \
    ParameterizedTestParameters(kernels, test)      \
    {                                               \
        static bool forms[] = {false, true};        \
        return cr_make_param_array(bool, forms, 2); \
    }                                               \
    ParameterizedTest(bool *packed, kernels, test)

struct pair {
    const float *in;
    float *out;
    int n;
};

static void fill_host(float *v, int n, float base)
{
    for (int i = 0; i < n; i++)
        v[i] = base + (float)i;
}

static void download(float *host, CUdeviceptr d, size_t n)
{
    OK(cuCtxSynchronize());
    OK(cuMemcpyDtoH(host, d, n * sizeof *host));
}

BOTH_FORMS(fill)
{
    fc_setup();
    CUfunction f = fc_function("_Z4fillPfif");
    CUdeviceptr out;
    OK(cuMemAlloc(&out, (N + 24) * sizeof(float)));
    int n = N;
    float v = 2.5f, host[N + 24];
    void *args[] = {&out, &n, &v};
    OK(fc_launch(f, N, args, *packed, NULL));
    download(host, out, N + 24);
    for (int i = 0; i < N; i++)
        cr_assert_eq(host[i], 2.5f, "out[%d] = %f", i, host[i]);
    for (int i = N; i < N + 24; i++)
        cr_assert_eq(fc_as_bits(host[i]), FC_STALE_WORD, "out[%d] was written", i);
}

Test(kernels, fill_covers_only_the_grid)
{
    fc_setup();
    CUfunction f = fc_function("_Z4fillPfif");
    CUdeviceptr out;
    OK(cuMemAlloc(&out, N * sizeof(float)));
    int n = N;
    float v = 1.0f, host[N];
    void *args[] = {&out, &n, &v};
    OK(cuLaunchKernel(f, 2, 2, 1, 32, 2, 1, 0, NULL, args, NULL)); /* 4 blocks of 64: 256 threads */
    download(host, out, N);
    cr_assert_eq(host[255], 1.0f);
    cr_assert_eq(fc_as_bits(host[256]), FC_STALE_WORD);
}

BOTH_FORMS(saxpy)
{
    fc_setup();
    float x[N], y[N], out[N];
    fill_host(x, N, 0);
    fill_host(y, N, 100);
    CUdeviceptr dx = fc_upload(x, sizeof x), dy = fc_upload(y, sizeof y);
    int n = N;
    float a = 3.0f;
    void *args[] = {&n, &a, &dx, &dy};
    OK(fc_launch(fc_function("_Z5saxpyifPKfPf"), N, args, *packed, NULL));
    download(out, dy, N);
    for (int i = 0; i < N; i++)
        cr_assert_eq(out[i], 3.0f * x[i] + y[i], "y[%d] = %f", i, out[i]);
}

BOTH_FORMS(gather)
{
    fc_setup();
    float in[N], out[N];
    int idx[N];
    fill_host(in, N, 0.5f);
    for (int i = 0; i < N; i++)
        idx[i] = (i * 7) % N;
    CUdeviceptr din = fc_upload(in, sizeof in), didx = fc_upload(idx, sizeof idx), dout;
    OK(cuMemAlloc(&dout, sizeof out));
    int n = N;
    void *args[] = {&dout, &din, &didx, &n};
    OK(fc_launch(fc_function("_Z6gatherPfPKfPKii"), N, args, *packed, NULL));
    download(out, dout, N);
    for (int i = 0; i < N; i++)
        cr_assert_eq(out[i], in[idx[i]]);
}

Test(kernels, gather_index_outside_input_faults)
{
    fc_setup();
    float in[16] = {0};
    int idx[4] = {0, 1, 16, 2};
    CUdeviceptr din = fc_upload(in, sizeof in), didx = fc_upload(idx, sizeof idx), dout;
    OK(cuMemAlloc(&dout, 4 * sizeof(float)));
    int n = 4;
    void *args[] = {&dout, &din, &didx, &n};
    OK(fc_launch(fc_function("_Z6gatherPfPKfPKii"), 4, args, false, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

BOTH_FORMS(copy_pair)
{
    fc_setup();
    float in[N], out[N];
    fill_host(in, N, 7);
    CUdeviceptr din = fc_upload(in, sizeof in), dout;
    OK(cuMemAlloc(&dout, sizeof out));
    struct pair p = {(const float *)(uintptr_t)din, (float *)(uintptr_t)dout, N};
    void *args[] = {&p};
    OK(fc_launch(fc_function("_Z9copy_pair4Pair"), N, args, *packed, NULL));
    download(out, dout, N);
    cr_assert_arr_eq(out, in, sizeof in);
}

BOTH_FORMS(reduce)
{
    fc_setup();
    float in[N], sum = 0;
    fill_host(in, N, 1);
    CUdeviceptr din = fc_upload(in, sizeof in), dout;
    OK(cuMemAlloc(&dout, sizeof(float)));
    int n = N;
    void *args[] = {&din, &dout, &n};
    OK(fc_launch(fc_function("_Z6reducePKfPfi"), 256, args, *packed, NULL));
    download(&sum, dout, 1);
    cr_assert_eq(sum, (float)(N * (N + 1) / 2));
}

BOTH_FORMS(scale)
{
    fc_setup();
    float data[N], out[N];
    fill_host(data, N, 0);
    CUdeviceptr d = fc_upload(data, sizeof data);
    int n = N;
    float factor = -2.0f;
    void *args[] = {&d, &n, &factor};
    OK(fc_launch(fc_function("scale"), N, args, *packed, NULL));
    download(out, d, N);
    for (int i = 0; i < N; i++)
        cr_assert_eq(out[i], -2.0f * data[i]);
}

BOTH_FORMS(count_fill)
{
    fc_setup();
    int count = 300;
    float out[N];
    CUdeviceptr dcount = fc_upload(&count, sizeof count), dout;
    OK(cuMemAlloc(&dout, sizeof out));
    void *args[] = {&dcount, &dout};
    OK(fc_launch(fc_function("_Z10count_fillPKiPf"), 32, args, *packed, NULL));
    download(out, dout, N);
    for (int i = 0; i < count; i++)
        cr_assert_eq(out[i], (float)i);
    cr_assert_eq(fc_as_bits(out[count]), FC_STALE_WORD);
}

Test(kernels, count_fill_with_a_garbage_count_faults)
{
    fc_setup();
    CUdeviceptr dcount, dout;
    OK(cuMemAlloc(&dcount, sizeof(int))); /* never written: stale bytes */
    OK(cuMemAlloc(&dout, N * sizeof(float)));
    void *args[] = {&dcount, &dout};
    OK(fc_launch(fc_function("_Z10count_fillPKiPf"), 32, args, false, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

BOTH_FORMS(crash)
{
    fc_setup();
    CUdeviceptr p;
    OK(cuMemAlloc(&p, 64));
    void *args[] = {&p};
    OK(fc_launch(fc_function("_Z5crashPf"), 1, args, *packed, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

BOTH_FORMS(empty)
{
    fc_setup();
    void *p = NULL;
    void *args[] = {&p, &p, &p, &p};
    for (int i = 0; i < 100; i++)
        OK(fc_launch(fc_function("_Z5emptyPvS_S_S_"), 1024, args, *packed, NULL));
    OK(cuCtxSynchronize());
}

Test(kernels, out_of_bounds_write_faults)
{
    fc_setup();
    CUdeviceptr out;
    OK(cuMemAlloc(&out, 10 * sizeof(float)));
    int n = 11;
    float v = 1;
    void *args[] = {&out, &n, &v};
    OK(fc_launch(fc_function("_Z4fillPfif"), 32, args, false, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

Test(kernels, misaligned_pointer_faults)
{
    fc_setup();
    CUdeviceptr out;
    OK(cuMemAlloc(&out, 64));
    CUdeviceptr odd = out + 2;
    int n = 4;
    float v = 1;
    void *args[] = {&odd, &n, &v};
    OK(fc_launch(fc_function("_Z4fillPfif"), 4, args, false, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_MISALIGNED_ADDRESS);
}

/* offsets and sizes as nvcc lays out the parameters of each signature */
static const struct {
    const char *name;
    unsigned n;
    size_t off[4], size[4];
} layouts[] = {
    {"_Z4fillPfif", 3, {0, 8, 12}, {8, 4, 4}},
    {"_Z5saxpyifPKfPf", 4, {0, 4, 8, 16}, {4, 4, 8, 8}},
    {"_Z6gatherPfPKfPKii", 4, {0, 8, 16, 24}, {8, 8, 8, 4}},
    {"_Z9copy_pair4Pair", 1, {0}, {24}},
    {"_Z6reducePKfPfi", 3, {0, 8, 16}, {8, 8, 4}},
    {"scale", 3, {0, 8, 12}, {8, 4, 4}},
    {"_Z5crashPf", 1, {0}, {8}},
    {"_Z10count_fillPKiPf", 2, {0, 8}, {8, 8}},
    {"_Z5emptyPvS_S_S_", 4, {0, 8, 16, 24}, {8, 8, 8, 8}},
};

Test(kernels, parameter_layouts_and_names)
{
    fc_setup();
    for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
        CUfunction f = fc_function(layouts[k].name);
        const char *name;
        OK(cuFuncGetName(&name, f));
        cr_assert_str_eq(name, layouts[k].name);
        size_t off, size;
        for (unsigned i = 0; i < layouts[k].n; i++) {
            OK(cuFuncGetParamInfo(f, i, &off, &size));
            cr_assert_eq(off, layouts[k].off[i], "%s param %u offset", name, i);
            cr_assert_eq(size, layouts[k].size[i], "%s param %u size", name, i);
        }
        FAILS(cuFuncGetParamInfo(f, layouts[k].n, &off, &size), CUDA_ERROR_INVALID_VALUE);
    }
}

Test(kernels, unknown_name_is_not_found)
{
    fc_setup();
    CUmodule mod;
    CUfunction f;
    OK(cuModuleLoadData(&mod, "image"));
    FAILS(cuModuleGetFunction(&f, mod, "_Z7missingv"), CUDA_ERROR_NOT_FOUND);
    FAILS(cuModuleLoad(&mod, "/nonexistent/kernels.cubin"), CUDA_ERROR_FILE_NOT_FOUND);
}

Test(kernels, library_kernels)
{
    fc_setup();
    CUlibrary lib;
    CUkernel k;
    CUfunction f;
    const char *name;
    OK(cuLibraryLoadData(&lib, "image", NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, "scale"));
    OK(cuKernelGetName(&name, k));
    cr_assert_str_eq(name, "scale");
    OK(cuKernelGetFunction(&f, k));
    OK(cuFuncGetName(&name, f));
    cr_assert_str_eq(name, "scale");

    float data[4] = {1, 2, 3, 4}, out[4];
    CUdeviceptr d = fc_upload(data, sizeof data);
    int n = 4;
    float factor = 10;
    void *args[] = {&d, &n, &factor};
    OK(fc_launch(f, 4, args, false, NULL));
    OK(fc_launch((CUfunction)(void *)k, 4, args, false, NULL)); /* a CUkernel is launchable too */
    download(out, d, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(out[i], 100 * data[i]);
    OK(cuLibraryUnload(lib));
    FAILS(cuFuncGetName(&name, f), CUDA_ERROR_INVALID_HANDLE);
}

/*
 * test_link.c: the JIT linker joins images (cubin, PTX, fatbinary, by data
 * or by file) into one cubin that cuModuleLoadData loads, holding the
 * union of the inputs' kernels and no other; one PTX text alone comes
 * back as itself and its kernel runs; every error code of bad
 * states, input types, inputs and outputs. The inputs are nvcc-built
 * (FC_IMAGES): link_a (scale), link_b (saxpy), and test_images.c's.
 */
#include "fc_test.h"

#include <stdio.h>
#include <stdlib.h>

/* The file FC_IMAGES/name, whole and NUL-terminated; its size in *n. */
static void *image(const char *name, size_t *n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", FC_IMAGES, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *b = calloc((size_t)size + 1, 1);
    cr_assert_eq(fread(b, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return b;
}

static const char *path_of(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", FC_IMAGES, name);
    return path;
}

static void add(CUlinkState st, CUjitInputType type, const char *name)
{
    size_t n;
    void *b = image(name, &n);
    OK(cuLinkAddData(st, type, b, type == CU_JIT_INPUT_PTX ? n + 1 : n, name, 0, NULL, NULL));
    free(b); /* the linker keeps nothing of its inputs */
}

static CUmodule complete_and_load(CUlinkState st)
{
    void *cubin = NULL;
    size_t size = 0;
    OK(cuLinkComplete(st, &cubin, &size));
    cr_assert(cubin && size > 64);
    cr_assert_eq(memcmp(cubin, "\177ELF", 4), 0, "the joined image is a cubin");
    CUmodule m;
    OK(cuModuleLoadData(&m, cubin));
    return m;
}

enum { N = 100 };

Test(link, two_images_join_into_one_holding_both_kernels)
{
    fc_setup();
    char info[256] = "x", error[256] = "x";
    CUjit_option opt[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                          CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[] = {info, (void *)(uintptr_t)sizeof info, error, (void *)(uintptr_t)sizeof error};
    CUlinkState st;
    OK(cuLinkCreate(4, opt, val, &st));
    cr_assert_str_empty(info);
    cr_assert_str_empty(error);
    add(st, CU_JIT_INPUT_CUBIN, "link_a.cubin");
    add(st, CU_JIT_INPUT_PTX, "link_b.ptx");
    CUmodule m = complete_and_load(st);
    OK(cuLinkDestroy(st));
    CUfunction scale, saxpy, fill;
    OK(cuModuleGetFunction(&scale, m, "scale"));
    OK(cuModuleGetFunction(&saxpy, m, "_Z5saxpyifPKfPf"));
    FAILS(cuModuleGetFunction(&fill, m, "_Z4fillPfif"), CUDA_ERROR_NOT_FOUND);
    /* a kernel from each input runs */
    float x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    CUdeviceptr dx = fc_upload(x, sizeof x), dy = fc_upload(y, sizeof y);
    int n = N;
    float a = 2.0f, factor = 10.0f;
    void *sargs[] = {&n, &a, &dx, &dy};
    OK(fc_launch(saxpy, N, sargs, false, NULL));
    void *cargs[] = {&dy, &n, &factor};
    OK(fc_launch(scale, N, cargs, false, NULL));
    OK(cuMemcpyDtoH(y, dy, sizeof y));
    for (int i = 0; i < N; i++)
        cr_assert_eq(y[i], 10.0f * (2.0f * (float)i + 1.0f), "y[%d] = %f", i, y[i]);
    OK(cuModuleUnload(m));
}

Test(link, files_and_fatbinaries)
{
    fc_setup();
    CUlinkState st;
    OK(cuLinkCreate(0, NULL, NULL, &st));
    OK(cuLinkAddFile(st, CU_JIT_INPUT_PTX, path_of("link_a.ptx"), 0, NULL, NULL));
    OK(cuLinkAddFile(st, CU_JIT_INPUT_FATBINARY, path_of("sm90.fatbin"), 0, NULL, NULL));
    CUmodule m = complete_and_load(st);
    CUfunction f;
    OK(cuModuleGetFunction(&f, m, "scale"));
    OK(cuModuleGetFunction(&f, m, "_Z4fillPfif"));
    FAILS(cuModuleGetFunction(&f, m, "_Z5saxpyifPKfPf"), CUDA_ERROR_NOT_FOUND);
    /* one input is enough; completing again makes a new image of what was added */
    OK(cuLinkAddFile(st, CU_JIT_INPUT_CUBIN, path_of("link_b.cubin"), 0, NULL, NULL));
    CUmodule m2 = complete_and_load(st);
    OK(cuModuleGetFunction(&f, m2, "_Z5saxpyifPKfPf"));
    OK(cuLinkDestroy(st));
}

/* put(float *p, float v): *p = v; a kernel only PTX holds, no built-in. */
static const char put_ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                              ".visible .entry put(.param .u64 p, .param .f32 v)\n{\n"
                              ".reg .b64 %rd<3>;\n.reg .f32 %f<2>;\n"
                              "ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\n"
                              "ld.param.f32 %f1, [v];\nst.global.f32 [%rd2], %f1;\nret;\n}\n";

/* numba-cuda's link without nvJitLink: one PTX text, whose kernel the
   loaded image then runs with the PTX executor. */
Test(link, a_link_of_one_ptx_text_runs_its_kernel)
{
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    CUlinkState st;
    OK(cuLinkCreate(0, NULL, NULL, &st));
    OK(cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)put_ptx, sizeof put_ptx, "put.ptx", 0, NULL, NULL));
    void *image = NULL;
    size_t size = 0;
    OK(cuLinkComplete(st, &image, &size));
    cr_assert_eq(size, sizeof put_ptx, "the PTX text, its NUL included");
    CUmodule m;
    OK(cuModuleLoadData(&m, image));
    OK(cuLinkDestroy(st));
    CUfunction put;
    OK(cuModuleGetFunction(&put, m, "put"));
    CUdeviceptr d;
    OK(cuMemAlloc(&d, sizeof(float)));
    float v = 3.5f, got = 0;
    void *args[] = {&d, &v};
    OK(cuLaunchKernel(put, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    OK(cuMemcpyDtoH(&got, d, sizeof got));
    cr_assert_eq(got, 3.5f, "the linked kernel ran: %g", got);
    OK(cuModuleUnload(m));
}

Test(link, an_input_fakecuda_does_not_read_holds_every_kernel)
{
    fc_setup();
    CUlinkState st;
    OK(cuLinkCreate(0, NULL, NULL, &st));
    static const char object[] = "a host object fakecuda does not read";
    OK(cuLinkAddData(st, CU_JIT_INPUT_OBJECT, (void *)object, sizeof object, "host.o", 0, NULL, NULL));
    CUmodule m = complete_and_load(st);
    CUfunction f;
    OK(cuModuleGetFunction(&f, m, "_Z5emptyPvS_S_S_"));
    OK(cuModuleGetFunction(&f, m, "_Z6reducePKfPfi"));
    OK(cuLinkDestroy(st));
}

Test(link, bad_states_and_outputs)
{
    CUlinkState st;
    OK(cuInit(0));
    FAILS(cuLinkCreate(0, NULL, NULL, &st), CUDA_ERROR_INVALID_CONTEXT);
    fc_setup();
    FAILS(cuLinkCreate(0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    CUjit_option opt = CU_JIT_INFO_LOG_BUFFER;
    FAILS(cuLinkCreate(1, &opt, NULL, &st), CUDA_ERROR_INVALID_VALUE);
    CUjit_option bogus = CU_JIT_NUM_OPTIONS;
    void *val = NULL;
    FAILS(cuLinkCreate(1, &bogus, &val, &st), CUDA_ERROR_INVALID_VALUE);
    size_t n;
    void *cubin = image("link_a.cubin", &n), *out;
    size_t size;
    FAILS(cuLinkAddData(NULL, CU_JIT_INPUT_CUBIN, cubin, n, "a", 0, NULL, NULL), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuLinkAddFile(NULL, CU_JIT_INPUT_CUBIN, path_of("link_a.cubin"), 0, NULL, NULL), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuLinkComplete(NULL, &out, &size), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuLinkDestroy(NULL), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuLinkDestroy((CUlinkState)(void *)cubin), CUDA_ERROR_INVALID_HANDLE);
    OK(cuLinkCreate(0, NULL, NULL, &st));
    FAILS(cuLinkComplete(st, &out, &size), CUDA_ERROR_INVALID_VALUE); /* nothing added */
    OK(cuLinkAddData(st, CU_JIT_INPUT_CUBIN, cubin, n, "a", 0, NULL, NULL));
    FAILS(cuLinkComplete(st, NULL, &size), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLinkComplete(st, &out, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuLinkDestroy(st));
    FAILS(cuLinkDestroy(st), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuLinkAddData(st, CU_JIT_INPUT_CUBIN, cubin, n, "a", 0, NULL, NULL), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuLinkComplete(st, &out, &size), CUDA_ERROR_INVALID_HANDLE);
    free(cubin);
}

Test(link, bad_inputs)
{
    fc_setup();
    char error[256] = "x";
    CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[] = {error, (void *)(uintptr_t)sizeof error};
    CUlinkState st;
    OK(cuLinkCreate(2, opt, val, &st));
    size_t nc, np;
    void *cubin = image("link_a.cubin", &nc), *ptx = image("link_b.ptx", &np);
    FAILS(cuLinkAddData(st, (CUjitInputType)99, cubin, nc, "a", 0, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLinkAddData(st, CU_JIT_NUM_INPUT_TYPES, cubin, nc, "a", 0, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLinkAddData(st, CU_JIT_INPUT_NVVM, cubin, nc, "a", 0, NULL, NULL), CUDA_ERROR_NOT_SUPPORTED);
    FAILS(cuLinkAddData(st, CU_JIT_INPUT_CUBIN, NULL, nc, "a", 0, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLinkAddData(st, CU_JIT_INPUT_CUBIN, cubin, 0, "a", 0, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLinkAddData(st, CU_JIT_INPUT_CUBIN, cubin, nc, "a", 1, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLinkAddData(st, CU_JIT_INPUT_PTX, cubin, nc, "a", 0, NULL, NULL), CUDA_ERROR_INVALID_PTX);
    cr_assert_str_not_empty(error, "a refused input is explained in the error log");
    FAILS(cuLinkAddData(st, CU_JIT_INPUT_PTX, "not ptx", 8, "t", 0, NULL, NULL), CUDA_ERROR_INVALID_PTX);
    /* by file, nothing stops at a NUL: an image that reads whole is still not PTX */
    FAILS(cuLinkAddFile(st, CU_JIT_INPUT_PTX, path_of("link_a.cubin"), 0, NULL, NULL), CUDA_ERROR_INVALID_PTX);
    FAILS(cuLinkAddFile(st, CU_JIT_INPUT_PTX, path_of("sm90.fatbin"), 0, NULL, NULL), CUDA_ERROR_INVALID_PTX);
    FAILS(cuLinkAddData(st, CU_JIT_INPUT_CUBIN, ptx, np + 1, "b", 0, NULL, NULL), CUDA_ERROR_INVALID_IMAGE);
    FAILS(cuLinkAddData(st, CU_JIT_INPUT_FATBINARY, cubin, nc, "a", 0, NULL, NULL), CUDA_ERROR_INVALID_IMAGE);
    FAILS(cuLinkAddFile(st, CU_JIT_INPUT_CUBIN, path_of("sm80.cubin"), 0, NULL, NULL), CUDA_ERROR_NO_BINARY_FOR_GPU);
    FAILS(cuLinkAddFile(st, CU_JIT_INPUT_CUBIN, path_of("no-such-file.cubin"), 0, NULL, NULL),
          CUDA_ERROR_FILE_NOT_FOUND);
    FAILS(cuLinkAddFile(st, CU_JIT_INPUT_CUBIN, FC_IMAGES, 0, NULL, NULL), CUDA_ERROR_FILE_NOT_FOUND);
    FAILS(cuLinkAddFile(st, CU_JIT_INPUT_CUBIN, NULL, 0, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    /* refused inputs changed nothing: still nothing to link */
    void *out;
    size_t size;
    FAILS(cuLinkComplete(st, &out, &size), CUDA_ERROR_INVALID_VALUE);
    OK(cuLinkDestroy(st));
    free(cubin);
    free(ptx);
}

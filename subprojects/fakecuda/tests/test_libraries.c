/*
 * test_libraries.c: what NVIDIA's math libraries ask of the driver, each
 * answer as fakecuda gives it (README, "NVIDIA's libraries"): kernels
 * shipped as SASS only under FAKECUDA_SASS (FC_SASS_CUBIN, an sm_90 cubin
 * of sass_kernels.cu), the occupancy and cluster queries cublasCreate
 * makes, cuCtxGetId, and the private-table slots cuBLASLt and cuFFT call.
 *
 * FAKECUDA_SASS is read once, so each test sets it before its first driver
 * call (each runs in its own process).
 */
#include "fc_test.h"

#include <criterion/redirect.h>
#include <stdlib.h>

#define SASS_KERNEL "_Z11add_offsetsPfi"

static CUlibrary sass_library(const char *mode)
{
    if (mode)
        setenv("FAKECUDA_SASS", mode, 1);
    fc_setup();
    CUlibrary lib;
    OK(cuLibraryLoadFromFile(&lib, FC_SASS_CUBIN, NULL, NULL, 0, NULL, NULL, 0));
    return lib;
}

Test(libraries, a_kernel_without_code_is_not_found_by_default)
{
    CUlibrary lib = sass_library(NULL);
    CUkernel k;
    FAILS(cuLibraryGetKernel(&k, lib, SASS_KERNEL), CUDA_ERROR_NOT_FOUND);
    CUdeviceptr at;
    size_t size;
    FAILS(cuLibraryGetGlobal(&at, &size, lib, "offsets"), CUDA_ERROR_NOT_FOUND);
}

Test(libraries, nowrite_launches_a_kernel_without_code_and_writes_nothing)
{
    CUlibrary lib = sass_library("nowrite");
    CUkernel k;
    OK(cuLibraryGetKernel(&k, lib, SASS_KERNEL));
    const char *name;
    OK(cuKernelGetName(&name, k));
    cr_assert_str_eq(name, SASS_KERNEL);
    CUdeviceptr out;
    OK(cuMemAlloc(&out, 64 * sizeof(float)));
    int n = 64;
    void *args[] = {&out, &n};
    OK(cuLaunchKernel((CUfunction)(void *)k, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
    OK(cuCtxSynchronize());
    unsigned host[64];
    OK(cuMemcpyDtoH(host, out, sizeof host));
    for (int i = 0; i < 64; i++)
        cr_assert_eq(host[i], FC_STALE_WORD, "word %d was written", i);
    /* Names the image does not hold stay unknown. */
    FAILS(cuLibraryGetKernel(&k, lib, "_Z7missingv"), CUDA_ERROR_NOT_FOUND);
}

Test(libraries, nowrite_places_a_cubin_variable_zeroed)
{
    CUlibrary lib = sass_library("nowrite");
    CUdeviceptr at, again;
    size_t size;
    OK(cuLibraryGetGlobal(&at, &size, lib, "offsets"));
    cr_assert_eq(size, 16 * sizeof(float), "the symbol's size");
    OK(cuLibraryGetGlobal(&again, &size, lib, "offsets"));
    cr_assert_eq(again, at, "one variable per library");
    float host[16];
    OK(cuMemcpyDtoH(host, at, sizeof host));
    for (int i = 0; i < 16; i++)
        cr_assert_eq(host[i], 0.0f);
    FAILS(cuLibraryGetGlobal(&at, &size, lib, "absent"), CUDA_ERROR_NOT_FOUND);
    OK(cuLibraryUnload(lib));
}

Test(libraries, an_unknown_sass_mode_is_reported_and_fails, .init = cr_redirect_stderr)
{
    CUlibrary lib = sass_library("sometimes");
    CUkernel k;
    FAILS(cuLibraryGetKernel(&k, lib, SASS_KERNEL), CUDA_ERROR_NOT_FOUND);
    fflush(stderr);
    cr_assert_stderr_eq_str("fakecuda: FAKECUDA_SASS=\"sometimes\" ignored: expected fail or nowrite; using fail\n");
}

/* cublasCreate: the opt-in size, then what is left per block and how many clusters fit. */
Test(libraries, occupancy_and_cluster_queries)
{
    CUlibrary lib = sass_library("nowrite");
    CUkernel k;
    CUfunction f;
    OK(cuLibraryGetKernel(&k, lib, SASS_KERNEL));
    OK(cuKernelGetFunction(&f, k));
    size_t smem;
    OK(cuOccupancyAvailableDynamicSMemPerBlock(&smem, f, 1, 1));
    cr_assert_eq(smem, 48u * 1024, "capped at the function's default dynamic size");
    OK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 227 * 1024, k, 0));
    OK(cuOccupancyAvailableDynamicSMemPerBlock(&smem, f, 1, 1));
    cr_assert_eq(smem, 227u * 1024);
    OK(cuOccupancyAvailableDynamicSMemPerBlock(&smem, f, 4, 128));
    cr_assert_eq(smem, 57u * 1024, "228 KiB shared by 4 blocks");
    OK(cuOccupancyAvailableDynamicSMemPerBlock(&smem, f, 64, 32));
    cr_assert_eq(smem, 0, "64 blocks never reside on one SM");
    FAILS(cuOccupancyAvailableDynamicSMemPerBlock(&smem, f, 0, 32), CUDA_ERROR_INVALID_VALUE);

    int v = -1;
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, f));
    cr_assert_eq(v, 0);
    CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
    attr.value.clusterDim.x = 16;
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    CUlaunchConfig cfg = {.gridDimX = 16,
                          .gridDimY = 1,
                          .gridDimZ = 1,
                          .blockDimX = 128,
                          .blockDimY = 1,
                          .blockDimZ = 1,
                          .attrs = &attr,
                          .numAttrs = 1};
    int clusters = -1;
    OK(cuOccupancyMaxActiveClusters(&clusters, f, &cfg));
    cr_assert_eq(clusters, 0, "16 blocks exceed the portable cluster size");
    OK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, k, 0));
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, f));
    cr_assert_eq(v, 1);
    OK(cuOccupancyMaxActiveClusters(&clusters, f, &cfg));
    cr_assert_eq(clusters, 8, "8 SMs of 16 blocks of 128 threads, 16 blocks a cluster");
    FAILS(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 2, k, 0), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuOccupancyMaxActiveClusters(&clusters, f, NULL), CUDA_ERROR_INVALID_VALUE);
}

static const void *const *table(const CUuuid *id)
{
    const void *t = NULL;
    OK(cuGetExportTable(&t, id));
    return t;
}

Test(libraries, context_ids_and_the_tables_that_read_them)
{
    CUcontext primary = fc_setup(), other, current;
    static const CUuuid tools_tls = {
        {0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc}};
    static const CUuuid library_context = {
        {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2}};
    CUresult (*tls_current)(CUcontext *) = (CUresult(*)(CUcontext *))table(&tools_tls)[2];
    const void *const *lc = table(&library_context);
    cr_assert_eq((uintptr_t)lc[0], 95 * sizeof(void *), "the size word");
    CUresult (*context_id)(CUcontext, unsigned long long *) = (CUresult(*)(CUcontext, unsigned long long *))lc[4];

    unsigned long long a, b, c;
    OK(cuCtxGetId(primary, &a));
    cr_assert_neq(a, 0);
    OK(context_id(NULL, &b));
    cr_assert_eq(a, b, "NULL is the current context");
    OK(cuCtxCreate(&other, NULL, 0, 0));
    OK(tls_current(&current));
    cr_assert_eq(current, other, "slot 2 is the current context");
    OK(context_id(other, &c));
    cr_assert_neq(c, a, "each context its own id");
    OK(cuCtxDestroy(other));
    FAILS(cuCtxGetId(other, &c), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cuCtxGetId(primary, NULL), CUDA_ERROR_INVALID_VALUE);
}

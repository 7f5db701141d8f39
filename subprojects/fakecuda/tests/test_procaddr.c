/*
 * test_procaddr.c: cuGetProcAddress hands out the variant the real driver
 * does for (base name, CUDA version, flags), compared with dlsym() of the
 * expected exported name; failures report the documented status.
 */
#include "fc_test.h"

#include <dlfcn.h>

#include "entry_points.h" /* every exported name, for the exhaustive check */

#define PT CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

static void *fc_dlsym(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h, "libcuda.so.1 is not loaded");
    void *p = dlsym(h, name);
    cr_assert_not_null(p, "%s is not exported", name);
    dlclose(h);
    return p;
}

static const struct {
    const char *base;
    int version;
    cuuint64_t flags;
    const char *expect;
} mapping[] = {
    {"cuMemAlloc", 12000, 0, "cuMemAlloc_v2"},
    {"cuMemAlloc", 3020, 0, "cuMemAlloc_v2"},
    {"cuMemAlloc", 3010, 0, "cuMemAlloc"},
    {"cuMemAlloc", 12000, PT, "cuMemAlloc_v2"},
    {"cuMemFree", 11000, 0, "cuMemFree_v2"},
    {"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"},
    {"cuGetProcAddress", 11030, 0, "cuGetProcAddress"},
    {"cuMemcpyHtoD", 12000, 0, "cuMemcpyHtoD_v2"},
    {"cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuMemcpyHtoD_v2"},
    {"cuMemcpyHtoD", 12000, PT, "cuMemcpyHtoD_v2_ptds"},
    {"cuMemcpyHtoD", 6050, PT, "cuMemcpyHtoD_v2"},
    {"cuMemcpyHtoD", 2000, 0, "cuMemcpyHtoD"},
    {"cuMemcpyDtoHAsync", 12000, PT, "cuMemcpyDtoHAsync_v2_ptsz"},
    {"cuMemcpy", 12000, PT, "cuMemcpy_ptds"},
    {"cuMemcpyAsync", 12000, PT, "cuMemcpyAsync_ptsz"},
    {"cuMemsetD8", 12000, PT, "cuMemsetD8_v2_ptds"},
    {"cuMemsetD2D32Async", 12000, PT, "cuMemsetD2D32Async_ptsz"},
    {"cuMemsetD2D32Async", 12000, 0, "cuMemsetD2D32Async"},
    {"cuLaunchKernel", 12000, 0, "cuLaunchKernel"},
    {"cuLaunchKernel", 12000, PT, "cuLaunchKernel_ptsz"},
    {"cuLaunchKernelEx", 12000, PT, "cuLaunchKernelEx_ptsz"},
    {"cuStreamSynchronize", 12000, PT, "cuStreamSynchronize_ptsz"},
    {"cuStreamSynchronize", 12000, 0, "cuStreamSynchronize"},
    {"cuMemAllocAsync", 11020, PT, "cuMemAllocAsync_ptsz"},
    {"cuMemAllocAsync", 11020, 0, "cuMemAllocAsync"},
    {"cuCtxCreate", 13000, 0, "cuCtxCreate_v4"},
    {"cuCtxCreate", 12000, 0, "cuCtxCreate_v3"},
    {"cuCtxCreate", 11000, 0, "cuCtxCreate_v2"},
    {"cuCtxDestroy", 12000, 0, "cuCtxDestroy_v2"},
    {"cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2"},
    {"cuCtxSynchronize", 12090, 0, "cuCtxSynchronize"},
    {"cuEventElapsedTime", 12080, 0, "cuEventElapsedTime_v2"},
    {"cuEventElapsedTime", 12000, 0, "cuEventElapsedTime"},
    {"cuDevicePrimaryCtxRelease", 12000, 0, "cuDevicePrimaryCtxRelease_v2"},
    {"cuFuncGetParamInfo", 12040, 0, "cuFuncGetParamInfo"},
    {"cuGetExportTable", 12000, 0, "cuGetExportTable"},
};

Test(procaddr, versioned_mapping)
{
    for (size_t i = 0; i < sizeof mapping / sizeof mapping[0]; i++) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult st = -1;
        OK(cuGetProcAddress(mapping[i].base, &fn, mapping[i].version, mapping[i].flags, &st));
        cr_assert_eq(st, CU_GET_PROC_ADDRESS_SUCCESS);
        cr_assert_eq(fn, fc_dlsym(mapping[i].expect), "%s at %d flags %llu: expected %s", mapping[i].base,
                     mapping[i].version, (unsigned long long)mapping[i].flags, mapping[i].expect);
    }
}

/* Every exported name, emulated or not, is what its own (base, since, flags) asks for. */
Test(procaddr, every_export_is_reachable)
{
    static const struct {
        const char *name, *base;
        int since, pt;
    } rows[] = {
#define ROW(name, base, since, pt) {#name, base, since, pt},
        FC_ENTRY_POINTS(ROW)
#undef ROW
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        void *fn = NULL;
        OK(cuGetProcAddress(rows[i].base, &fn, rows[i].since, rows[i].pt ? PT : 0, NULL));
        cr_assert_eq(fn, fc_dlsym(rows[i].name), "%s", rows[i].name);
    }
}

Test(procaddr, the_four_argument_form)
{
    CUresult (*gpa4)(const char *, void **, int, cuuint64_t) =
        (CUresult(*)(const char *, void **, int, cuuint64_t))fc_dlsym("cuGetProcAddress");
    void *fn;
    OK(gpa4("cuMemAlloc", &fn, 11030, 0));
    cr_assert_eq(fn, fc_dlsym("cuMemAlloc_v2"));
    OK(gpa4("cuGetProcAddress", &fn, 11030, 0));
    cr_assert_eq(fn, (void *)gpa4);
}

Test(procaddr, unknown_symbol)
{
    void *fn = (void *)1;
    CUdriverProcAddressQueryResult st;
    FAILS(cuGetProcAddress("cuNoSuchFunction", &fn, 12000, 0, &st), CUDA_ERROR_NOT_FOUND);
    cr_assert_null(fn);
    cr_assert_eq(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    FAILS(cuGetProcAddress("cuMemAlloc_v2", &fn, 12000, 0, &st), CUDA_ERROR_NOT_FOUND);
    cr_assert_eq(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
}

Test(procaddr, symbol_newer_than_the_version)
{
    void *fn = (void *)1;
    CUdriverProcAddressQueryResult st;
    FAILS(cuGetProcAddress("cuMemAllocAsync", &fn, 11010, 0, &st), CUDA_ERROR_NOT_FOUND);
    cr_assert_null(fn);
    cr_assert_eq(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    FAILS(cuGetProcAddress("cuFuncGetParamInfo", &fn, 12030, 0, &st), CUDA_ERROR_NOT_FOUND);
    cr_assert_eq(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

Test(procaddr, bad_arguments)
{
    void *fn;
    FAILS(cuGetProcAddress("cuInit", &fn, 13010, 0, NULL), CUDA_ERROR_INVALID_VALUE); /* newer than the driver */
    FAILS(cuGetProcAddress(NULL, &fn, 12000, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGetProcAddress("cuInit", NULL, 12000, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuGetProcAddress("cuInit", &fn, 12000, 8, NULL), CUDA_ERROR_INVALID_VALUE);
}

Test(procaddr, works_before_cuInit_and_export_table_is_not_supported)
{
    void *fn;
    const void *table = (const void *)1;
    CUuuid id = {{0}};
    OK(cuGetProcAddress("cuInit", &fn, 12000, 0, NULL));
    FAILS(cuGetExportTable(&table, &id), CUDA_ERROR_NOT_SUPPORTED);
    cr_assert_null(table);
}

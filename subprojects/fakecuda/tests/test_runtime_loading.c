/*
 * test_runtime_loading.c: the CUDA runtime's exact way of reaching the
 * driver, on fakecuda. This program does not link libcuda: like cudart it
 * dlopen()s "libcuda.so.1" (found through LD_LIBRARY_PATH, set by meson),
 * takes only cuGetProcAddress_v2 with dlsym(), asks it for
 * "cuGetProcAddress" itself at 12000 (and 11030), and fetches every other
 * entry point through that pointer; then it runs a kernel end to end.
 */
#include <criterion/criterion.h>
#include <cuda.h>
#include <dlfcn.h>

typedef CUresult (*gpa5_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa4_t)(const char *, void **, int, cuuint64_t);

static void *driver;
static gpa5_t gpa;

static void *entry(const char *name, cuuint64_t flags)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    cr_assert_eq(gpa(name, &fn, 12000, flags, &st), CUDA_SUCCESS, "%s", name);
    cr_assert_eq(st, CU_GET_PROC_ADDRESS_SUCCESS);
    return fn;
}

static void load_like_cudart(void)
{
    driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(driver, "dlopen(libcuda.so.1): %s", dlerror());
    gpa5_t boot = (gpa5_t)dlsym(driver, "cuGetProcAddress_v2");
    cr_assert_not_null(boot);
    void *self = NULL;
    cr_assert_eq(boot("cuGetProcAddress", &self, 12000, 0, NULL), CUDA_SUCCESS);
    cr_assert_eq(self, (void *)boot, "at 12000 cuGetProcAddress is the 5-argument cuGetProcAddress_v2");
    gpa = (gpa5_t)self;
}

Test(runtime_loading, self_lookup_follows_the_version)
{
    load_like_cudart();
    void *old = NULL;
    cr_assert_eq(gpa("cuGetProcAddress", &old, 11030, 0, NULL), CUDA_SUCCESS);
    cr_assert_eq(old, dlsym(driver, "cuGetProcAddress"));
    void *fn = NULL;
    cr_assert_eq(((gpa4_t)old)("cuMemAlloc", &fn, 11030, 0), CUDA_SUCCESS);
    cr_assert_eq(fn, dlsym(driver, "cuMemAlloc_v2"));
}

Test(runtime_loading, full_program_through_the_pointers)
{
    load_like_cudart();
    CUresult (*init)(unsigned) = entry("cuInit", 0);
    CUresult (*version)(int *) = entry("cuDriverGetVersion", 0);
    CUresult (*retain)(CUcontext *, CUdevice) = entry("cuDevicePrimaryCtxRetain", 0);
    CUresult (*set_current)(CUcontext) = entry("cuCtxSetCurrent", 0);
    CUresult (*alloc)(CUdeviceptr *, size_t) = entry("cuMemAlloc", 0);
    CUresult (*htod)(CUdeviceptr, const void *, size_t) =
        entry("cuMemcpyHtoD", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t) = entry("cuMemcpyDtoH", 0);
    CUresult (*load)(CUmodule *, const void *) = entry("cuModuleLoadData", 0);
    CUresult (*get_fn)(CUfunction *, CUmodule, const char *) = entry("cuModuleGetFunction", 0);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                       void **, void **) = entry("cuLaunchKernel", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    CUresult (*sync)(CUstream) = entry("cuStreamSynchronize", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    CUresult (*mfree)(CUdeviceptr) = entry("cuMemFree", 0);
    CUresult (*export_table)(const void **, const CUuuid *) = entry("cuGetExportTable", 0);

    cr_assert_eq(htod, dlsym(driver, "cuMemcpyHtoD_v2_ptds"));
    cr_assert_eq(launch, dlsym(driver, "cuLaunchKernel_ptsz"));
    const void *table;
    CUuuid id = {{0}};
    cr_assert_eq(export_table(&table, &id), CUDA_ERROR_NOT_SUPPORTED);

    int v = 0;
    CUcontext ctx;
    CUdeviceptr y, x;
    CUmodule mod;
    CUfunction saxpy;
    cr_assert_eq(version(&v), CUDA_SUCCESS);
    cr_assert_eq(v, 13000);
    cr_assert_eq(init(0), CUDA_SUCCESS);
    cr_assert_eq(retain(&ctx, 0), CUDA_SUCCESS);
    cr_assert_eq(set_current(ctx), CUDA_SUCCESS);
    float hx[64], hy[64], out[64];
    for (int i = 0; i < 64; i++) {
        hx[i] = (float)i;
        hy[i] = 1;
    }
    cr_assert_eq(alloc(&x, sizeof hx), CUDA_SUCCESS);
    cr_assert_eq(alloc(&y, sizeof hy), CUDA_SUCCESS);
    cr_assert_eq(htod(x, hx, sizeof hx), CUDA_SUCCESS);
    cr_assert_eq(htod(y, hy, sizeof hy), CUDA_SUCCESS);
    cr_assert_eq(load(&mod, "fatbin"), CUDA_SUCCESS);
    cr_assert_eq(get_fn(&saxpy, mod, "_Z5saxpyifPKfPf"), CUDA_SUCCESS);
    int n = 64;
    float a = 2;
    void *args[] = {&n, &a, &x, &y};
    cr_assert_eq(launch(saxpy, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL), CUDA_SUCCESS);
    cr_assert_eq(sync(NULL), CUDA_SUCCESS);
    cr_assert_eq(dtoh(out, y, sizeof out), CUDA_SUCCESS);
    for (int i = 0; i < 64; i++)
        cr_assert_eq(out[i], 2.0f * (float)i + 1);
    cr_assert_eq(mfree(x), CUDA_SUCCESS);
    cr_assert_eq(mfree(y), CUDA_SUCCESS);
}

/*
 * test_settings.c: what loaders ask at start (driver version, compute capability, PCI
 * address, peer access, limits, cache and shared-memory configuration,
 * primary-context flags, module globals) and host work in stream order
 * (cuLaunchHostFunc, cuStreamAddCallback).
 */
#include "fc_test.h"

/* Loaders still call the deprecated queries, so the test does too. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>

Test(settings, device_identity_agrees_with_attributes)
{
    int major, minor, attr;
    char id[32], expect[32];
    OK(cuInit(0));
    OK(cuDeviceComputeCapability(&major, &minor, 0));
    OK(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
    cr_assert_eq(major, attr);
    cr_assert_eq(major, 9);
    cr_assert_eq(minor, 0);
    int domain, bus, dev;
    OK(cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0));
    OK(cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0));
    OK(cuDeviceGetAttribute(&dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0));
    snprintf(expect, sizeof expect, "%08x:%02x:%02x.0", (unsigned)domain, (unsigned)bus, (unsigned)dev);
    OK(cuDeviceGetPCIBusId(id, sizeof id, 0));
    cr_assert_str_eq(id, expect);
    OK(cuDeviceGetPCIBusId(id, 5, 0));
    cr_assert_eq(strlen(id), 4, "truncated to the buffer");
    FAILS(cuDeviceComputeCapability(&major, &minor, 1), CUDA_ERROR_INVALID_DEVICE);
    FAILS(cuDeviceGetPCIBusId(NULL, 32, 0), CUDA_ERROR_INVALID_VALUE);
}

/* Both queries follow FAKECUDA_COMPUTE_CAPABILITY; a malformed one is 9.0. */
static void expect_cc(const char *env, int want_major, int want_minor)
{
    int major, minor, attr_major, attr_minor;
    setenv("FAKECUDA_COMPUTE_CAPABILITY", env, 1);
    OK(cuInit(0));
    OK(cuDeviceComputeCapability(&major, &minor, 0));
    OK(cuDeviceGetAttribute(&attr_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
    OK(cuDeviceGetAttribute(&attr_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0));
    cr_assert_eq(major, want_major, "%s: major %d", env, major);
    cr_assert_eq(minor, want_minor, "%s: minor %d", env, minor);
    cr_assert_eq(attr_major, major);
    cr_assert_eq(attr_minor, minor);
}

Test(settings, compute_capability_8_6)
{
    expect_cc("8.6", 8, 6);
}
Test(settings, compute_capability_12_0)
{
    expect_cc("12.0", 12, 0);
}
Test(settings, compute_capability_malformed_is_9_0)
{
    expect_cc("8.6.1", 9, 0);
}
Test(settings, compute_capability_without_minor_is_9_0)
{
    expect_cc("8", 9, 0);
}

/* cuDriverGetVersion and cuGetProcAddress's version bound follow
   FAKECUDA_DRIVER_VERSION; anything but a 13.x version is 13000, said. */
static void expect_driver_version(const char *env, int want)
{
    int version;
    void *fn;
    setenv("FAKECUDA_DRIVER_VERSION", env, 1);
    OK(cuInit(0));
    OK(cuDriverGetVersion(&version));
    cr_assert_eq(version, want, "%s: %d", env, version);
    OK(cuGetProcAddress("cuMemAlloc", &fn, want, 0, NULL));
    FAILS(cuGetProcAddress("cuMemAlloc", &fn, want + 10, 0, NULL), CUDA_ERROR_INVALID_VALUE);
}

Test(settings, driver_version_13040)
{
    expect_driver_version("13040", 13040);
}
Test(settings, driver_version_of_cuda_12_is_13000, .init = cr_redirect_stderr)
{
    expect_driver_version("12080", 13000);
    fflush(stderr);
    cr_assert_stderr_eq_str("fakecuda: FAKECUDA_DRIVER_VERSION=\"12080\" ignored: expected a CUDA 13.x driver "
                            "version as cuDriverGetVersion writes it (13000 to 13990, a multiple of 10), such as "
                            "13040; using 13000\n");
}
Test(settings, driver_version_not_a_multiple_of_10_is_13000, .init = cr_redirect_stderr)
{
    expect_driver_version("13041", 13000);
}
Test(settings, driver_version_with_text_is_13000, .init = cr_redirect_stderr)
{
    expect_driver_version("13.4", 13000);
}

Test(settings, one_device_has_no_peer)
{
    CUcontext primary = fc_setup(), other;
    int can = -1;
    OK(cuDeviceCanAccessPeer(&can, 0, 0));
    cr_assert_eq(can, 0);
    FAILS(cuDeviceCanAccessPeer(&can, 0, 1), CUDA_ERROR_INVALID_DEVICE);
    OK(cuCtxCreate(&other, NULL, 0, 0)); /* pushed: current */
    FAILS(cuCtxEnablePeerAccess(primary, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
    FAILS(cuCtxEnablePeerAccess(primary, 1), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuCtxEnablePeerAccess(other, 0), CUDA_ERROR_INVALID_CONTEXT);
    FAILS(cuCtxDisablePeerAccess(primary), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    FAILS(cuCtxEnablePeerAccess(NULL, 0), CUDA_ERROR_INVALID_CONTEXT);
}

Test(settings, limits_and_configs_read_back_per_context)
{
    fc_setup();
    size_t v;
    OK(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    cr_assert_eq(v, 1024);
    OK(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 64u << 20));
    OK(cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    cr_assert_eq(v, 64u << 20);
    FAILS(cuCtxSetLimit(CU_LIMIT_SHMEM_SIZE, 1), CUDA_ERROR_UNSUPPORTED_LIMIT);
    FAILS(cuCtxSetLimit(CU_LIMIT_MAX, 1), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuCtxGetLimit(NULL, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_VALUE);

    CUfunc_cache cache;
    OK(cuCtxGetCacheConfig(&cache));
    cr_assert_eq(cache, CU_FUNC_CACHE_PREFER_NONE);
    OK(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1));
    OK(cuCtxGetCacheConfig(&cache));
    cr_assert_eq(cache, CU_FUNC_CACHE_PREFER_L1);
    FAILS(cuCtxSetCacheConfig((CUfunc_cache)7), CUDA_ERROR_INVALID_VALUE);

    CUsharedconfig shared;
    OK(cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE));
    OK(cuCtxGetSharedMemConfig(&shared));
    cr_assert_eq(shared, CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE);

    CUcontext other; /* a new context starts from the defaults */
    OK(cuCtxCreate(&other, NULL, 0, 0));
    OK(cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    cr_assert_eq(v, 8u << 20);
    OK(cuCtxGetCacheConfig(&cache));
    cr_assert_eq(cache, CU_FUNC_CACHE_PREFER_NONE);
    OK(cuCtxDestroy(other));
    OK(cuCtxSetCurrent(NULL));
    FAILS(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_CONTEXT);
}

Test(settings, primary_flags_survive_reset)
{
    unsigned flags;
    int active;
    OK(cuInit(0));
    OK(cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_BLOCKING_SYNC));
    OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
    cr_assert_eq(flags, CU_CTX_SCHED_BLOCKING_SYNC);
    cr_assert_eq(active, 0);
    CUcontext ctx;
    OK(cuDevicePrimaryCtxRetain(&ctx, 0));
    OK(cuDevicePrimaryCtxReset(0));
    OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
    cr_assert_eq(flags, CU_CTX_SCHED_BLOCKING_SYNC);
    cr_assert_eq(active, 0);
    FAILS(cuDevicePrimaryCtxSetFlags(0, 0x80000000u), CUDA_ERROR_INVALID_VALUE);
}

Test(settings, module_globals_are_scratch_only)
{
    fc_setup();
    CUmodule mod;
    CUdeviceptr p, again;
    size_t n = 0;
    OK(cuModuleLoadData(&mod, "image"));
    FAILS(cuModuleGetGlobal(&p, &n, mod, "counter"), CUDA_ERROR_NOT_FOUND);
    FAILS(cuModuleGetGlobal(&p, &n, mod, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuModuleGetGlobal(&p, &n, mod, "scratch"));
    cr_assert_eq(n, 4096);
    OK(cuModuleGetGlobal(&again, NULL, mod, "scratch"));
    cr_assert_eq(again, p, "one global per module");
    unsigned char stale[16], back[16];
    OK(cuMemcpyDtoH(stale, p, sizeof stale));
    cr_assert_eq(stale[0], 0x5a, "fresh device memory holds stale bytes");
    memset(back, 7, sizeof back);
    OK(cuMemcpyHtoD(p + 4080, back, sizeof back));
    OK(cuMemcpyDtoH(stale, p + 4080, sizeof stale));
    cr_assert_eq(stale[15], 7);
    OK(cuModuleUnload(mod));
    FAILS(cuModuleGetGlobal(&p, &n, mod, "scratch"), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuMemcpyDtoH(stale, p, sizeof stale), CUDA_ERROR_INVALID_VALUE);
}

static char trace[16];
static size_t ntrace;
static CUresult seen_status = -1;

static void host_fn(void *user)
{
    trace[ntrace++] = *(const char *)user;
}

static void CUDA_CB stream_cb(CUstream s, CUresult status, void *user)
{
    (void)s;
    seen_status = status;
    host_fn(user);
}

Test(settings, host_work_runs_in_stream_order_at_the_sync)
{
    fc_schedule_sync(); /* it asserts what has not run before the sync */
    fc_setup();
    CUstream s;
    OK(cuStreamCreate(&s, 0));
    OK(cuLaunchHostFunc(s, host_fn, "a"));
    OK(cuStreamAddCallback(s, stream_cb, "b", 0));
    OK(cuLaunchHostFunc(NULL, host_fn, "c"));
    cr_assert_eq(ntrace, 0, "host work runs at a sync point, not when queued");
    OK(cuStreamSynchronize(NULL));
    trace[ntrace] = '\0';
    cr_assert_str_eq(trace, "abc");
    cr_assert_eq(seen_status, CUDA_SUCCESS);
    FAILS(cuLaunchHostFunc(s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuStreamAddCallback(s, stream_cb, NULL, 1), CUDA_ERROR_INVALID_VALUE);
}

/* Sync: asynchronously the crash may run first and refuse the queueing calls. */
Test(settings, after_a_fault_callbacks_hear_it_and_host_functions_do_not_run)
{
    fc_schedule_sync();
    fc_setup();
    CUfunction crash = fc_function("_Z5crashPf");
    CUdeviceptr d;
    OK(cuMemAlloc(&d, 16));
    void *args[] = {&d};
    OK(cuLaunchKernel(crash, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    OK(cuLaunchHostFunc(NULL, host_fn, "x"));
    OK(cuStreamAddCallback(NULL, stream_cb, "y", 0));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    trace[ntrace] = '\0';
    cr_assert_str_eq(trace, "y");
    cr_assert_eq(seen_status, CUDA_ERROR_ILLEGAL_ADDRESS);
}

/*
 * driver.c: process-wide driver state (initialised, shutting down, sticky
 * fault), the guard every entry point passes through, the one emulated
 * device and its attributes, and the CUresult names and texts.
 *
 * Invariants:
 * - sticky is CUDA_SUCCESS until the first execution fault, then holds that
 *   fault for the rest of the process: the real driver cannot recover a
 *   context after an illegal address either.
 * - After the teardown runs (process exit: the library destructor, or with
 *   FAKECUDA_TEARDOWN=atexit the exit handler cuInit registered, whichever
 *   comes first), every entry point but the error-string ones returns
 *   CUDA_ERROR_DEINITIALIZED, and no queued work runs any more (the workers
 *   are stopped, queue.c). The teardown may run twice; the second changes
 *   nothing.
 * - On a worker thread (a host function or callback, async mode) every call
 *   that needs a context returns CUDA_ERROR_NOT_PERMITTED.
 */
#include "fakecuda.h"
#include "errors.def"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_bool initialized;
static atomic_bool shut_down;
static _Atomic int sticky = CUDA_SUCCESS;
static _Thread_local bool per_thread_call; /* the current call is a _ptds / _ptsz twin */
_Thread_local unsigned fc_calls_in;

/* The workers stop too (async mode): nothing runs once the driver is gone. */
static void fc_teardown(void)
{
    atomic_store(&shut_down, true);
    fc_queue_shutdown(fc_calls_in > 0);
}

__attribute__((destructor)) static void fc_shutdown(void)
{
    fc_teardown();
}

/* FAKECUDA_TEARDOWN=atexit: the teardown is also registered with atexit at
   the first successful cuInit, as a driver may do: glibc then runs it
   before every library destructor, and before the exit handlers registered
   earlier (a program's, before its cuInit). Unset, empty or "destructor":
   the destructor alone. Read once. */
static void fc_teardown_register(void)
{
    const char *env = getenv("FAKECUDA_TEARDOWN");
    if (!env || !*env || strcmp(env, "destructor") == 0)
        return;
    if (strcmp(env, "atexit") != 0)
        fprintf(stderr, "fakecuda: FAKECUDA_TEARDOWN=%s ignored (destructor or atexit); destructor used\n", env);
    else if (atexit(fc_teardown) != 0)
        fprintf(stderr, "fakecuda: FAKECUDA_TEARDOWN=atexit: atexit failed; destructor used\n");
}

CUresult fc_sticky(void)
{
    return (CUresult)atomic_load_explicit(&sticky, memory_order_acquire);
}

void fc_set_sticky(CUresult r)
{
    assert(r != CUDA_SUCCESS && "sticky holds a fault once set: CUDA_SUCCESS would reopen it");
    int expected = CUDA_SUCCESS;
    atomic_compare_exchange_strong(&sticky, &expected, (int)r);
}

void fc_mark_per_thread(void)
{
    per_thread_call = true;
}

/* Whether s names the legacy default stream in the current call. */
bool fc_is_legacy_stream(CUstream s)
{
    return s == CU_STREAM_LEGACY || (s == NULL && !per_thread_call);
}

CUresult fc_enter(unsigned api_id, fc_cls cls)
{
    assert(api_id < FC_API_COUNT && "entry points pass their own FC_ID_");
    const fc_api_row *row = &fc_api_rows[api_id];
    per_thread_call = false;
    fc_debug("%s", row->name);
    bool ending = atomic_load(&shut_down);
    if (cls != FC_PURE && ending)
        return CUDA_ERROR_DEINITIALIZED;
    /* Kernels first: launch: rules name them. A plugin calling the driver
       while it is loaded would wait on its own load, so it is refused. */
    if (!ending && !fc_plugins_load())
        return cls == FC_PURE ? CUDA_SUCCESS : CUDA_ERROR_NOT_PERMITTED;
    fc_faults_load();
    if (cls >= FC_DEV && !atomic_load(&initialized))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (cls == FC_CTX && fc_sticky() != CUDA_SUCCESS)
        return fc_sticky();
    /* A host function calling the API from a worker (async mode) would wait
       for its own thread; the real driver may refuse it the same way. */
    if (cls == FC_CTX && fc_on_worker())
        return CUDA_ERROR_NOT_PERMITTED;
    fc_action a = fc_faults_api(row);
    if (a.code != CUDA_SUCCESS)
        return a.code;
    fc_fault_pending_set(a.fault);
    return CUDA_SUCCESS;
}

/* An injected "=fault" on a call that queued no work faults at the next sync. */
CUresult fc_leave(CUresult r)
{
    if (!fc_fault_pending_take() || r != CUDA_SUCCESS)
        return r;
    fc_work w = {.kind = FC_W_FAULT};
    if (fc_submit_async(NULL, &w) != CUDA_SUCCESS)
        fc_set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
    return r;
}

CUresult fc_init(unsigned int flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_mem_total() == 0)
        return CUDA_ERROR_OPERATING_SYSTEM;
    atomic_store(&initialized, true);
    static pthread_once_t teardown_once = PTHREAD_ONCE_INIT;
    pthread_once(&teardown_once, fc_teardown_register);
    return CUDA_SUCCESS;
}

CUresult fc_driver_version(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = fc_reported_driver_version();
    return CUDA_SUCCESS;
}

CUresult fc_device_check(CUdevice d)
{
    return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult fc_device_get(CUdevice *d, int ordinal)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}

CUresult fc_device_count(int *n)
{
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    *n = 1;
    return CUDA_SUCCESS;
}

CUresult fc_device_name(char *name, int len, CUdevice d)
{
    static const char fc_name[] = "fakecuda CPU emulation";
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_device_check(d) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    size_t n = (size_t)len - 1 < sizeof fc_name - 1 ? (size_t)len - 1 : sizeof fc_name - 1;
    memcpy(name, fc_name, n);
    name[n] = '\0';
    return CUDA_SUCCESS;
}

/* The attributes programs ask about, but the compute capability (settings.c);
   every other valid attribute reads 0. */
static const struct {
    CUdevice_attribute a;
    int v;
} fc_attrs[] = {
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64},
    {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647},
    {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535},
    {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, (int)FC_DEFAULT_SMEM},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, (int)FC_OPTIN_SMEM},
    {CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 65536},
    {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
    {CU_DEVICE_ATTRIBUTE_MAX_PITCH, 2147483647},
    {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536},
    {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1000000},
    {CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 512},
    {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 8},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 2048},
    {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1},
    {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
    /* registered host memory is mapped at its host address (memory.c) */
    {CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, 1},
    {CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, 1},
    {CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, 1},
    {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1},
    {CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 1},
    {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1},
    {CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 1},
    {CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 1},
    {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
    /* Stated, not left to the default: the runtime's integrity hash covers them. */
    {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0},
    {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 1},
    {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0},
};

CUresult fc_device_attribute(int *v, CUdevice_attribute a, CUdevice d)
{
    if (!v || a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_device_check(d) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    *v = 0;
    for (size_t i = 0; i < sizeof fc_attrs / sizeof fc_attrs[0]; i++)
        if (fc_attrs[i].a == a)
            *v = fc_attrs[i].v;
    if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        *v = fc_device_cc() / 10;
    if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        *v = fc_device_cc() % 10;
    return CUDA_SUCCESS;
}

CUresult fc_device_total_mem(size_t *bytes, CUdevice d)
{
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_device_check(d) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = fc_mem_total();
    return CUDA_SUCCESS;
}

/* The 32-bit variant reports at most 4 GiB - 1. */
CUresult fc_device_total_mem_v1(unsigned *bytes, CUdevice d)
{
    size_t total;
    CUresult r = fc_device_total_mem(bytes ? &total : NULL, d);
    if (r == CUDA_SUCCESS)
        *bytes = total > UINT32_MAX ? UINT32_MAX : (unsigned)total;
    return r;
}

static const struct {
    CUresult code;
    const char *name, *text;
} fc_errors[] = {
#define FC_ERROR_ROW(name, text) {name, #name, text},
    FC_ERRORS(FC_ERROR_ROW)
#undef FC_ERROR_ROW
};

static int fc_error_index(CUresult r)
{
    for (size_t i = 0; i < sizeof fc_errors / sizeof fc_errors[0]; i++)
        if (fc_errors[i].code == r)
            return (int)i;
    return -1;
}

bool fc_error_by_name(const char *name, CUresult *out)
{
    for (size_t i = 0; i < sizeof fc_errors / sizeof fc_errors[0]; i++)
        if (strcmp(fc_errors[i].name, name) == 0) {
            *out = fc_errors[i].code;
            return true;
        }
    return false;
}

static CUresult fc_error_lookup(CUresult r, const char **s, bool text)
{
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    int i = fc_error_index(r);
    *s = i < 0 ? NULL : text ? fc_errors[i].text : fc_errors[i].name;
    return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult fc_get_error_name(CUresult r, const char **s)
{
    return fc_error_lookup(r, s, false);
}

CUresult fc_get_error_string(CUresult r, const char **s)
{
    return fc_error_lookup(r, s, true);
}

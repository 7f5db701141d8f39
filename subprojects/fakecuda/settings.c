/*
 * settings.c: what loaders ask of the device and of a context at start and
 * fakecuda keeps only as numbers: the driver version reported, compute
 * capability, PCI address, peer access, a context's limits and cache
 * preference.
 *
 * None of it changes how fakecuda runs work; a value set is read back, and
 * values out of range are refused as the real driver refuses them.
 * Invariants:
 * - The compute capability is FAKECUDA_COMPUTE_CAPABILITY (MAJOR.MINOR,
 *   default 9.0), read at the first call that needs it (threads racing
 *   that call may each read it; the first value stored is kept);
 *   cuDeviceComputeCapability and both cuDeviceGetAttribute answers come
 *   from it, so they never disagree.
 * - The driver version reported is FAKECUDA_DRIVER_VERSION (13000 to 13990,
 *   a multiple of 10, as cuDriverGetVersion writes 13.x; default 13000),
 *   read once as the compute capability is; cuDriverGetVersion, the
 *   integrity answer and cuGetProcAddress's version bound all follow it.
 *   It changes no behaviour: the API stays CUDA 13.0's (FC_DRIVER_VERSION).
 * - The PCI address is formatted from the device attributes, so
 *   cuDeviceGetPCIBusId and cuDeviceGetAttribute never disagree.
 * - With one device, no context can access a peer: cuDeviceCanAccessPeer
 *   says 0 and enabling peer access is CUDA_ERROR_PEER_ACCESS_UNSUPPORTED.
 * - A context's settings are written only by threads for which it is
 *   current; they are plain fields of the context (fc_ctx_settings).
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

/* CU_LIMIT_* defaults of a Hopper GPU; 0 where a limit is query-only and unused. */
static const size_t fc_limit_default[CU_LIMIT_MAX] = {
    [CU_LIMIT_STACK_SIZE] = 1024,
    [CU_LIMIT_PRINTF_FIFO_SIZE] = 1u << 20,
    [CU_LIMIT_MALLOC_HEAP_SIZE] = 8u << 20,
    [CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2,
    [CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048,
    [CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64,
    [CU_LIMIT_PERSISTING_L2_CACHE_SIZE] = 0,
    [CU_LIMIT_SHMEM_SIZE] = FC_OPTIN_SMEM,
    [CU_LIMIT_CIG_ENABLED] = 0,
    [CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED] = 0,
};

void fc_ctx_settings_init(fc_ctx_settings *s)
{
    for (int i = 0; i < CU_LIMIT_MAX; i++)
        s->limit[i] = fc_limit_default[i];
    s->choice[FC_CHOICE_CACHE] = CU_FUNC_CACHE_PREFER_NONE;
    s->choice[FC_CHOICE_SHARED] = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
}

/* 9.0, a Hopper GPU's, unless FAKECUDA_COMPUTE_CAPABILITY names another. */
static int fc_cc_parse(void)
{
    const char *env = getenv("FAKECUDA_COMPUTE_CAPABILITY");
    if (!env)
        return 90;
    char *end;
    long major = strtol(env, &end, 10);
    bool ok = end != env && env[0] >= '0' && env[0] <= '9' && major >= 1 && major <= 99 && end[0] == '.' &&
              end[1] >= '0' && end[1] <= '9' && end[2] == '\0';
    if (ok)
        return (int)major * 10 + (end[1] - '0');
    fprintf(stderr,
            "fakecuda: FAKECUDA_COMPUTE_CAPABILITY=\"%s\" ignored: expected MAJOR.MINOR (1 to 99, then one "
            "digit), such as 8.6; using 9.0\n",
            env);
    return 90;
}

int fc_device_cc(void)
{
    static _Atomic int cc;
    int v = atomic_load_explicit(&cc, memory_order_relaxed);
    if (v)
        return v;
    int none = 0;
    atomic_compare_exchange_strong(&cc, &none, fc_cc_parse());
    v = atomic_load(&cc);
    assert(v >= 10 && v <= 999 && "MAJOR (1 to 99) * 10 + MINOR (one digit)");
    return v;
}

/* 13000 unless FAKECUDA_DRIVER_VERSION names another 13.x. */
static int fc_driver_version_parse(void)
{
    const char *env = getenv("FAKECUDA_DRIVER_VERSION");
    if (!env)
        return FC_DRIVER_VERSION;
    char *end;
    long v = strtol(env, &end, 10);
    if (end != env && env[0] >= '0' && env[0] <= '9' && *end == '\0' && v >= 13000 && v <= 13990 && v % 10 == 0)
        return (int)v;
    fprintf(stderr,
            "fakecuda: FAKECUDA_DRIVER_VERSION=\"%s\" ignored: expected a CUDA 13.x driver version as "
            "cuDriverGetVersion writes it (13000 to 13990, a multiple of 10), such as 13040; using %d\n",
            env, FC_DRIVER_VERSION);
    return FC_DRIVER_VERSION;
}

int fc_reported_driver_version(void)
{
    static _Atomic int version;
    int v = atomic_load_explicit(&version, memory_order_relaxed);
    if (v)
        return v;
    int none = 0;
    atomic_compare_exchange_strong(&version, &none, fc_driver_version_parse());
    v = atomic_load(&version);
    assert(v >= FC_DRIVER_VERSION && v <= 13990 && v % 10 == 0 && "a CUDA 13.x driver version");
    return v;
}

CUresult fc_device_compute_capability(int *major, int *minor, CUdevice d)
{
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_device_attribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    if (r == CUDA_SUCCESS)
        r = fc_device_attribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
    assert((r != CUDA_SUCCESS || *major * 10 + *minor == fc_device_cc()) && "the attributes answer the one value");
    return r;
}

CUresult fc_device_pci_bus_id(char *id, int len, CUdevice d)
{
    int domain, bus, device;
    if (!id || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_device_attribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
    if (r == CUDA_SUCCESS)
        r = fc_device_attribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
    if (r == CUDA_SUCCESS)
        r = fc_device_attribute(&device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
    if (r == CUDA_SUCCESS) {
        int n = snprintf(id, (size_t)len, "%08x:%02x:%02x.0", (unsigned)domain, (unsigned)bus, (unsigned)device);
        assert(n == 16 && "domain, bus and device attributes fit the fixed format");
        (void)n;
    }
    return r;
}

CUresult fc_device_can_access_peer(int *can, CUdevice d, CUdevice peer)
{
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_device_check(d) != CUDA_SUCCESS || fc_device_check(peer) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    assert(d == peer && "one device: any valid peer is the device itself");
    *can = 0;
    return CUDA_SUCCESS;
}

static CUresult fc_peer_check(CUcontext peer)
{
    CUcontext self;
    CUresult r = fc_current(&self);
    if (r == CUDA_SUCCESS && (!peer || !fc_obj_valid(peer, FC_K_CTX) || peer == self))
        r = CUDA_ERROR_INVALID_CONTEXT;
    return r;
}

CUresult fc_ctx_enable_peer(CUcontext peer, unsigned flags)
{
    CUresult r = fc_peer_check(peer);
    if (r == CUDA_SUCCESS && flags != 0)
        r = CUDA_ERROR_INVALID_VALUE;
    return r == CUDA_SUCCESS ? CUDA_ERROR_PEER_ACCESS_UNSUPPORTED : r;
}

CUresult fc_ctx_disable_peer(CUcontext peer)
{
    CUresult r = fc_peer_check(peer);
    return r == CUDA_SUCCESS ? CUDA_ERROR_PEER_ACCESS_NOT_ENABLED : r;
}

static CUresult fc_settings(fc_ctx_settings **s)
{
    CUcontext c;
    CUresult r = fc_current(&c);
    if (r == CUDA_SUCCESS)
        *s = &c->settings;
    return r;
}

static bool fc_limit_settable(CUlimit l)
{
    return l != CU_LIMIT_SHMEM_SIZE && l != CU_LIMIT_CIG_ENABLED;
}

CUresult fc_ctx_set_limit(CUlimit l, size_t v)
{
    fc_ctx_settings *s;
    if ((int)l < 0 || l >= CU_LIMIT_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_limit_settable(l))
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    if (l == CU_LIMIT_MAX_L2_FETCH_GRANULARITY && v > 128)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_settings(&s);
    if (r == CUDA_SUCCESS)
        s->limit[l] = v;
    return r;
}

CUresult fc_ctx_get_limit(size_t *v, CUlimit l)
{
    fc_ctx_settings *s;
    if (!v || (int)l < 0 || l >= CU_LIMIT_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_settings(&s);
    if (r == CUDA_SUCCESS)
        *v = s->limit[l];
    return r;
}

/* The valid values of each enumerated setting. */
static const struct {
    int lo, hi;
} fc_choice_range[FC_CHOICE_COUNT] = {
    [FC_CHOICE_CACHE] = {CU_FUNC_CACHE_PREFER_NONE, CU_FUNC_CACHE_PREFER_EQUAL},
    [FC_CHOICE_SHARED] = {CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE, CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE},
};

CUresult fc_ctx_get_choice(fc_ctx_choice which, int *v)
{
    fc_ctx_settings *s;
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_settings(&s);
    if (r == CUDA_SUCCESS)
        *v = s->choice[which];
    return r;
}

CUresult fc_ctx_set_choice(fc_ctx_choice which, int v)
{
    fc_ctx_settings *s;
    if (v < fc_choice_range[which].lo || v > fc_choice_range[which].hi)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_settings(&s);
    if (r == CUDA_SUCCESS)
        s->choice[which] = v;
    return r;
}

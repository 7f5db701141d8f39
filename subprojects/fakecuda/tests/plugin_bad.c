/*
 * plugin_bad.c: kernel plugins that break the rules, built once per defect
 * (tests/meson.build). Skipped whole: FC_BAD_ABI (built for
 * another ABI version), FC_BAD_NO_ENTRY (no fakecuda_kernels_register),
 * FC_BAD_LAYOUT (overlapping parameters), FC_BAD_DUPLICATE (a built-in
 * kernel's name); each would register _Z6markerv first, which must then stay
 * unknown. FC_BAD_REENTRANT calls the driver from its entry function and
 * loads (registering _Z6markerv) only if that call was refused, not
 * deadlocked or run.
 */
#include "fakecuda_kernel.h"

#include <stddef.h>

#ifdef FC_BAD_REENTRANT
#include <dlfcn.h>
#endif

#ifdef FC_BAD_ABI
const unsigned fakecuda_kernel_abi_version = FAKECUDA_KERNEL_ABI_VERSION + 98;
#else
FAKECUDA_KERNEL_PLUGIN_ABI;
#endif

#ifndef FC_BAD_NO_ENTRY
static int k_nothing(const struct fakecuda_launch *l)
{
    (void)l;
    return FAKECUDA_KERNEL_OK;
}

static const struct fakecuda_kernel kernels[] = {
    {"_Z6markerv", k_nothing, 0, NULL, NULL},
#if defined(FC_BAD_LAYOUT)
    {"_Z7overlapPvi", k_nothing, 2, (const struct fakecuda_param[]){{0, 8}, {4, 4}}, NULL},
#elif defined(FC_BAD_DUPLICATE)
    {"scale", k_nothing, 3, (const struct fakecuda_param[]){{0, 8}, {8, 4}, {12, 4}}, NULL},
#endif
};

#ifdef FC_BAD_REENTRANT
/* CUDA_ERROR_NOT_PERMITTED, from the driver already loaded. */
static int refused_while_loading(void)
{
    int (*version)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cuDriverGetVersion");
    int v = 0;
    return version && version(&v) == 800;
}
#endif

int fakecuda_kernels_register(const struct fakecuda_host *host)
{
#ifdef FC_BAD_REENTRANT
    if (!refused_while_loading())
        return 2;
#endif
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (host->register_kernel(host, &kernels[i]) != 0)
            return 1;
    return 0;
}
#endif

/*
 * wide_kernel.c - a fakecuda kernel plugin (FAKECUDA_KERNELS) for
 * test_memory.c: a kernel passing more pointer words than a launch's room
 * in cutaint holds (CT_MAX_BINDINGS, 256), as a kernel taking a struct of
 * many buffers does.
 *   wide(Ptrs p)   struct Ptrs { float *p[300]; }: writes 1.0f into the
 *                  first WIDE_FLOATS floats of p[0] and of p[299]; the
 *                  words between are numbers it never dereferences (as a
 *                  struct of handles and sizes holds)
 */
#include "fakecuda_kernel.h"

#include <stddef.h>

FAKECUDA_KERNEL_PLUGIN_ABI;

#define WIDE_PTRS 300
#define WIDE_FLOATS 1024

struct wide_args {
    float *p[WIDE_PTRS];
};

static int k_wide(const struct fakecuda_launch *l)
{
    const struct wide_args *a = l->params;
    int err = FAKECUDA_KERNEL_OK;
    static const int ends[] = {0, WIDE_PTRS - 1};
    float *out[2] = {0};
    for (int i = 0; i < 2 && err == FAKECUDA_KERNEL_OK; i++)
        if (a->p[ends[i]])
            out[i] =
                fakecuda_view(l, (uint64_t)(uintptr_t)a->p[ends[i]], WIDE_FLOATS, sizeof(float), _Alignof(float), &err);
    for (int i = 0; i < 2 && err == FAKECUDA_KERNEL_OK; i++)
        for (int j = 0; out[i] && j < WIDE_FLOATS; j++)
            out[i][j] = 1.0f;
    return err;
}

int fakecuda_kernels_register(const struct fakecuda_host *host)
{
    static const struct fakecuda_param params[] = {{0, sizeof(struct wide_args)}};
    const struct fakecuda_kernel k = {"_Z4wide4Ptrs", k_wide, 1, params, NULL};
    return host->register_kernel(host, &k);
}

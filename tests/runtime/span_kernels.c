/*
 * span_kernels.c: a fakecuda kernel plugin (FAKECUDA_KERNELS) for
 * unusable.sh's `late` case, built against fakecuda_kernel.h alone.
 *
 * It gives fakecuda unusable.cu's fill_span, so the driver finds it in the
 * image and fails only its launch:
 *   fill_span(Span s, float value)   s.p[i] = value for i < s.n
 * as nvcc names and lays it out (nvcc -ptx: `.entry _Z9fill_span4Spanf`,
 * `.param .align 8 .b8 ..._param_0[16]` and `.param .f32 ..._param_1`):
 * the Span { float *p; int n; } 16 bytes at offset 0, the float at 16.
 * The range is checked before anything is written, as the ABI asks.
 */
#include "fakecuda_kernel.h"

#include <stddef.h>
#include <stdint.h>

FAKECUDA_KERNEL_PLUGIN_ABI;

struct span {
    float *p;
    int n;
};
struct fill_span_args {
    struct span s;
    float value;
};

_Static_assert(sizeof(struct span) == 16, "nvcc's Span is 16 bytes");
_Static_assert(offsetof(struct fill_span_args, value) == 16, "nvcc puts value at 16");

/* Covers i < min(n, threads of the grid), as the kernel's guard does. */
static int k_fill_span(const struct fakecuda_launch *l)
{
    const struct fill_span_args *a = l->params;
    uint64_t threads = (uint64_t)l->grid.x * l->grid.y * l->grid.z * l->block.x * l->block.y * l->block.z;
    uint64_t n = a->s.n <= 0 ? 0 : (uint64_t)a->s.n < threads ? (uint64_t)a->s.n : threads;
    if (n == 0)
        return FAKECUDA_KERNEL_OK;
    int err = FAKECUDA_KERNEL_OK;
    float *out = fakecuda_view(l, (uint64_t)(uintptr_t)a->s.p, n, sizeof *out, _Alignof(float), &err);
    for (uint64_t i = 0; out && i < n; i++)
        out[i] = a->value;
    return err;
}

static const struct fakecuda_param fill_span_params[] = {
    {offsetof(struct fill_span_args, s), sizeof(struct span)},
    {offsetof(struct fill_span_args, value), sizeof(float)},
};

int fakecuda_kernels_register(const struct fakecuda_host *host)
{
    const struct fakecuda_kernel k = {"_Z9fill_span4Spanf", k_fill_span, 2, fill_span_params, NULL};
    return host->register_kernel(host, &k) != 0;
}

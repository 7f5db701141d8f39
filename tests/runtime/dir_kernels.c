/*
 * dir_kernels.c: a fakecuda kernel plugin (FAKECUDA_KERNELS) giving fakecuda
 * directions.cu's kernels, as nvcc names and lays them out:
 *   sum_into(float *out, float *in, int n)  out[i] += in[i] for i < n
 *   mark(float *out, int *flag, int n)      out[i] = 1 for i < n; *flag = 1
 *   stash(const float *out, int n)          out[i] = 1 for i < n (image_files.cu's)
 * (pointers at 0 and 8, the int at 16; stash's int at 8), each i below the
 * grid's threads.
 */
#include "fakecuda_kernel.h"

#include <stddef.h>
#include <stdint.h>

FAKECUDA_KERNEL_PLUGIN_ABI;

struct args {
    uint64_t a, b;
    int n;
};

static uint64_t covered(const struct fakecuda_launch *l, int n)
{
    uint64_t threads = (uint64_t)l->grid.x * l->grid.y * l->grid.z * l->block.x * l->block.y * l->block.z;
    return n <= 0 ? 0 : (uint64_t)n < threads ? (uint64_t)n : threads;
}

static int k_sum_into(const struct fakecuda_launch *l)
{
    const struct args *a = l->params;
    uint64_t n = covered(l, a->n);
    int err = FAKECUDA_KERNEL_OK;
    float *out = n ? fakecuda_view(l, a->a, n, sizeof *out, _Alignof(float), &err) : NULL;
    const float *in = n ? fakecuda_view(l, a->b, n, sizeof *in, _Alignof(float), &err) : NULL;
    for (uint64_t i = 0; out && in && i < n; i++)
        out[i] += in[i];
    return err;
}

static int k_mark(const struct fakecuda_launch *l)
{
    const struct args *a = l->params;
    uint64_t n = covered(l, a->n);
    int err = FAKECUDA_KERNEL_OK;
    float *out = n ? fakecuda_view(l, a->a, n, sizeof *out, _Alignof(float), &err) : NULL;
    int *flag = n ? fakecuda_view(l, a->b, 1, sizeof *flag, _Alignof(int), &err) : NULL;
    for (uint64_t i = 0; out && i < n; i++)
        out[i] = 1.0f;
    if (flag)
        *flag = 1;
    return err;
}

struct stash_args {
    uint64_t out;
    int n;
};

static int k_stash(const struct fakecuda_launch *l)
{
    const struct stash_args *a = l->params;
    uint64_t n = covered(l, a->n);
    int err = FAKECUDA_KERNEL_OK;
    float *out = n ? fakecuda_view(l, a->out, n, sizeof *out, _Alignof(float), &err) : NULL;
    for (uint64_t i = 0; out && i < n; i++)
        out[i] = 1.0f;
    return err;
}

static const struct fakecuda_param layout[] = {
    {offsetof(struct args, a), 8},
    {offsetof(struct args, b), 8},
    {offsetof(struct args, n), sizeof(int)},
};

/* stash(const float *out, int n): the pointer at 0, the int at 8. */
static const struct fakecuda_param stash_layout[] = {
    {offsetof(struct stash_args, out), 8},
    {offsetof(struct stash_args, n), sizeof(int)},
};

int fakecuda_kernels_register(const struct fakecuda_host *host)
{
    const struct fakecuda_kernel sum = {"_Z8sum_intoPfS_i", k_sum_into, 3, layout, NULL};
    const struct fakecuda_kernel mark = {"_Z4markPfPii", k_mark, 3, layout, NULL};
    const struct fakecuda_kernel stash = {"_Z5stashPKfi", k_stash, 2, stash_layout, NULL};
    return host->register_kernel(host, &sum) != 0 || host->register_kernel(host, &mark) != 0 ||
           host->register_kernel(host, &stash) != 0;
}

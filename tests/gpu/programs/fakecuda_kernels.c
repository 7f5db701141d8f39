/*
 * fakecuda_kernels.c: host implementations of the GPU suite's kernels, as a
 * fakecuda kernel plugin (subprojects/fakecuda/fakecuda_kernel.h), so that
 * `tests/gpu/run.sh --driver fakecuda` runs the same nvcc-built programs
 * with the same checks on a machine without a GPU.
 *
 * saxpy and the extern "C" scale (driver_api.cpp's module, wrong_arch.cu,
 * arch_read.cu) are fakecuda built-ins; this adds the rest, each computing what its .cu source says
 * for the whole grid, and checking every range before writing anything.
 */
#include "fakecuda_kernel.h"

#include <string.h>

FAKECUDA_KERNEL_PLUGIN_ABI;

static uint64_t threads_of(const struct fakecuda_launch *l)
{
    return (uint64_t)l->grid.x * l->grid.y * l->grid.z * l->block.x * l->block.y * l->block.z;
}

static uint64_t extent(int n, uint64_t threads)
{
    return n <= 0 ? 0 : (uint64_t)n < threads ? (uint64_t)n : threads;
}

/* badconfig.cu: scale(const float* in, float* out, int n, float a): out[i] = a * in[i]. */
struct scale_args {
    uint64_t in, out;
    int n;
    float a;
};

static int k_scale(const struct fakecuda_launch *l)
{
    struct scale_args a;
    memcpy(&a, l->params, sizeof a);
    uint64_t n = extent(a.n, threads_of(l));
    int err = FAKECUDA_KERNEL_OK;
    const float *in = n ? fakecuda_view(l, a.in, n, sizeof(float), sizeof(float), &err) : NULL;
    float *out = in ? fakecuda_view(l, a.out, n, sizeof(float), sizeof(float), &err) : NULL;
    for (uint64_t i = 0; out && i < n; i++)
        out[i] = a.a * in[i];
    return err;
}

/* happy.cu: sum_u64(const float* x, unsigned long long* acc, int n): *acc += x[i]. */
struct sum_args {
    uint64_t x, acc;
    int n;
};

static int k_sum_u64(const struct fakecuda_launch *l)
{
    struct sum_args a;
    memcpy(&a, l->params, sizeof a);
    uint64_t n = extent(a.n, threads_of(l));
    int err = FAKECUDA_KERNEL_OK;
    const float *x = n ? fakecuda_view(l, a.x, n, sizeof(float), sizeof(float), &err) : NULL;
    unsigned long long *acc = x ? fakecuda_view(l, a.acc, 1, sizeof *acc, sizeof *acc, &err) : NULL;
    for (uint64_t i = 0; acc && i < n; i++)
        *acc += (unsigned long long)x[i];
    return err;
}

/* wildptr.cu: write_results(Batch b): b.out[blockIdx.y][i] = blockIdx.y * 1000 + i. */
struct batch_args {
    uint64_t out[4];
    int n;
};

static int k_write_results(const struct fakecuda_launch *l)
{
    struct batch_args a;
    memcpy(&a, l->params, sizeof a);
    uint64_t n = extent(a.n, (uint64_t)l->grid.x * l->block.x);
    unsigned rows = l->grid.y < 4 ? l->grid.y : 4;
    float *out[4] = {0};
    int err = FAKECUDA_KERNEL_OK;
    for (unsigned y = 0; y < rows && n; y++)
        if (!(out[y] = fakecuda_view(l, a.out[y], n, sizeof(float), sizeof(float), &err)))
            return err;
    for (unsigned y = 0; y < rows; y++)
        for (uint64_t i = 0; i < n; i++)
            out[y][i] = (float)(y * 1000 + i);
    return err;
}

/* empty_launch.cu: empty(). */
static int k_empty(const struct fakecuda_launch *l)
{
    (void)l;
    return FAKECUDA_KERNEL_OK;
}

#define PARAM(s, m)                                       \
    {                                                     \
        offsetof(struct s, m), sizeof(((struct s *)0)->m) \
    }

static const struct fakecuda_param scale_params[] = {PARAM(scale_args, in), PARAM(scale_args, out),
                                                     PARAM(scale_args, n), PARAM(scale_args, a)};
static const struct fakecuda_param sum_params[] = {PARAM(sum_args, x), PARAM(sum_args, acc), PARAM(sum_args, n)};
static const struct fakecuda_param batch_params[] = {{0, sizeof(struct batch_args)}};

static const struct fakecuda_kernel kernels[] = {
    {"_Z5scalePKfPfif", k_scale, 4, scale_params, NULL},
    {"_Z7sum_u64PKfPyi", k_sum_u64, 3, sum_params, NULL},
    {"_Z13write_results5Batch", k_write_results, 1, batch_params, NULL},
    {"_Z5emptyv", k_empty, 0, NULL, NULL},
};

int fakecuda_kernels_register(const struct fakecuda_host *host)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (host->register_kernel(host, &kernels[i]) != 0)
            return 1;
    return 0;
}

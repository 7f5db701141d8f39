/*
 * plugin_demo.c: a fakecuda kernel plugin (FAKECUDA_KERNELS) for
 * test_plugins.c, built against fakecuda_kernel.h alone (no cuda.h).
 *
 * Its kernels, as nvcc would name and lay them out:
 *   vecadd(const float* a, const float* b, float* c, int n)   c = a + b
 *   horner(Poly p, const float* x, float* y, int n)           y = p(x), 124 bytes
 *   lookup(Table t, const int* idx, int* out, int n)          out = t.v[idx], 4116 bytes
 *   probe(unsigned long long* out)                            what the launch saw
 *   trap()                                                    returns a code that is no fault
 * Every kernel checks each range before it writes, as the ABI asks.
 */
#include "fakecuda_kernel.h"

#include <stddef.h>
#include <string.h>

FAKECUDA_KERNEL_PLUGIN_ABI;

struct poly {
    float coef[24];
    int degree;
};
struct table {
    int v[1024];
};

struct vecadd_args {
    const float *a, *b;
    float *c;
    int n;
};
struct horner_args {
    struct poly p;
    const float *x;
    float *y;
    int n;
};
struct lookup_args {
    struct table t;
    const int *idx;
    int *out;
    int n;
};
struct probe_args {
    unsigned long long *out;
};

static uint64_t dev(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

/* Element-wise kernels cover i < min(n, threads of the grid). */
static uint64_t extent(const struct fakecuda_launch *l, int n)
{
    uint64_t threads = (uint64_t)l->grid.x * l->grid.y * l->grid.z * l->block.x * l->block.y * l->block.z;
    return n <= 0 ? 0 : (uint64_t)n < threads ? (uint64_t)n : threads;
}

#define VIEW(l, p, n, err) fakecuda_view((l), dev(p), (n), sizeof *(p), _Alignof(__typeof__(*(p))), (err))

static int k_vecadd(const struct fakecuda_launch *l)
{
    const struct vecadd_args *a = l->params;
    uint64_t n = extent(l, a->n);
    int err = FAKECUDA_KERNEL_OK;
    const float *x = n ? VIEW(l, a->a, n, &err) : NULL;
    const float *y = x ? VIEW(l, a->b, n, &err) : NULL;
    float *z = y ? VIEW(l, a->c, n, &err) : NULL;
    for (uint64_t i = 0; z && i < n; i++)
        z[i] = x[i] + y[i];
    return err;
}

static int k_horner(const struct fakecuda_launch *l)
{
    const struct horner_args *a = l->params;
    uint64_t n = extent(l, a->n);
    int err = FAKECUDA_KERNEL_OK;
    if (a->p.degree < 0 || a->p.degree >= 24)
        return FAKECUDA_KERNEL_LAUNCH_FAILED;
    const float *x = n ? VIEW(l, a->x, n, &err) : NULL;
    float *y = x ? VIEW(l, a->y, n, &err) : NULL;
    for (uint64_t i = 0; y && i < n; i++) {
        float v = 0;
        for (int d = a->p.degree; d >= 0; d--)
            v = v * x[i] + a->p.coef[d];
        y[i] = v;
    }
    return err;
}

static int k_lookup(const struct fakecuda_launch *l)
{
    const struct lookup_args *a = l->params;
    uint64_t n = extent(l, a->n);
    int err = FAKECUDA_KERNEL_OK;
    const int *idx = n ? VIEW(l, a->idx, n, &err) : NULL;
    int *out = idx ? VIEW(l, a->out, n, &err) : NULL;
    for (uint64_t i = 0; out && i < n; i++)
        out[i] = a->t.v[idx[i] & 1023];
    return err;
}

static int k_probe(const struct fakecuda_launch *l)
{
    const struct probe_args *a = l->params;
    int err = FAKECUDA_KERNEL_OK;
    unsigned long long *out = VIEW(l, a->out, 10, &err);
    if (!out)
        return err;
    unsigned long long seen[10] = {l->grid.x,
                                   l->grid.y,
                                   l->grid.z,
                                   l->block.x,
                                   l->block.y,
                                   l->block.z,
                                   l->shared_bytes,
                                   l->params_size,
                                   (unsigned long long)(uintptr_t)l->stream,
                                   (unsigned long long)(uintptr_t)l->user};
    memcpy(out, seen, sizeof seen);
    return FAKECUDA_KERNEL_OK;
}

static int k_trap(const struct fakecuda_launch *l)
{
    (void)l;
    return 42;
}

#define P(s, m)                                           \
    {                                                     \
        offsetof(struct s, m), sizeof(((struct s *)0)->m) \
    }

static const struct fakecuda_param vecadd_params[] = {P(vecadd_args, a), P(vecadd_args, b), P(vecadd_args, c),
                                                      P(vecadd_args, n)};
static const struct fakecuda_param horner_params[] = {P(horner_args, p), P(horner_args, x), P(horner_args, y),
                                                      P(horner_args, n)};
static const struct fakecuda_param lookup_params[] = {P(lookup_args, t), P(lookup_args, idx), P(lookup_args, out),
                                                      P(lookup_args, n)};
static const struct fakecuda_param probe_params[] = {P(probe_args, out)};

/* The probe reports its user pointer, so the test can see it arrive. */
static int probe_user;

static const struct fakecuda_kernel kernels[] = {
    {"_Z6vecaddPKfS0_Pfi", k_vecadd, 4, vecadd_params, NULL},
    {"_Z6horner4PolyPKfPfi", k_horner, 4, horner_params, NULL},
    {"_Z6lookup5TablePKiPii", k_lookup, 4, lookup_params, NULL},
    {"_Z5probePy", k_probe, 1, probe_params, &probe_user},
    {"_Z4trapv", k_trap, 0, NULL, NULL},
};

int fakecuda_kernels_register(const struct fakecuda_host *host)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (host->register_kernel(host, &kernels[i]) != 0)
            return 1;
    return 0;
}

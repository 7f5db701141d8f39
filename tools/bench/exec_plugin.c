/*
 * exec_plugin.c: exec_kernels.cu's kernels as a fakecuda kernel plugin
 * (fakecuda_kernel.h), so exec_bench.c can time the PTX executor beside
 * the same work in C. The results match the PTX's (same float operations
 * in the same order per thread).
 */
#include "fakecuda_kernel.h"

#include <math.h>
#include <string.h>

FAKECUDA_KERNEL_PLUGIN_ABI;

static unsigned threads(const struct fakecuda_launch *l)
{
    return l->grid.x * l->block.x;
}

static int arith(const struct fakecuda_launch *l)
{
    uint64_t out;
    int iters, err = 0;
    memcpy(&out, l->params, 8);
    memcpy(&iters, (const char *)l->params + 8, 4);
    unsigned n = threads(l);
    float *o = fakecuda_view(l, out, n, sizeof(float), 4, &err);
    if (!o)
        return err;
    for (unsigned i = 0; i < n; i++) {
        float a = (float)i * 0.001f, b = 1.0001f;
        unsigned h = i;
        for (int k = 0; k < iters; k++) {
            a = fmaf(a, b, 0.5f);
            h = h * 1664525u + 1013904223u;
            b = b + (float)(h >> 28) * 1e-6f;
        }
        o[i] = a + (float)(h & 0xff);
    }
    return 0;
}

static int copy(const struct fakecuda_launch *l)
{
    uint64_t in, out;
    int n, err = 0;
    memcpy(&in, l->params, 8);
    memcpy(&out, (const char *)l->params + 8, 8);
    memcpy(&n, (const char *)l->params + 16, 4);
    const float *s = fakecuda_view(l, in, (uint64_t)n, sizeof(float), 4, &err);
    float *d = s ? fakecuda_view(l, out, (uint64_t)n, sizeof(float), 4, &err) : NULL;
    if (!d)
        return err;
    for (int i = 0; i < n; i++)
        d[i] = s[i] * 2.0f;
    return 0;
}

static int reduce(const struct fakecuda_launch *l)
{
    uint64_t in, out;
    int err = 0;
    memcpy(&in, l->params, 8);
    memcpy(&out, (const char *)l->params + 8, 8);
    unsigned blocks = l->grid.x;
    const float *s = fakecuda_view(l, in, (uint64_t)blocks * 256, sizeof(float), 4, &err);
    float *d = s ? fakecuda_view(l, out, blocks, sizeof(float), 4, &err) : NULL;
    if (!d)
        return err;
    for (unsigned b = 0; b < blocks; b++) {
        float t[256];
        memcpy(t, s + (size_t)b * 256, sizeof t);
        for (int k = 128; k > 0; k >>= 1)
            for (int i = 0; i < k; i++)
                t[i] += t[i + k];
        d[b] = t[0];
    }
    return 0;
}

int fakecuda_kernels_register(const struct fakecuda_host *host)
{
    static const struct fakecuda_param p_arith[] = {{0, 8}, {8, 4}}, p_copy[] = {{0, 8}, {8, 8}, {16, 4}},
                                       p_reduce[] = {{0, 8}, {8, 8}};
    const struct fakecuda_kernel k[] = {
        {"arith", arith, 2, p_arith, NULL},
        {"copy", copy, 3, p_copy, NULL},
        {"reduce", reduce, 2, p_reduce, NULL},
    };
    for (unsigned i = 0; i < 3; i++)
        if (host->register_kernel(host, &k[i]))
            return 1;
    return 0;
}

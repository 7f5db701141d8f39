/*
 * kernels.c: the built-in kernel library every loaded module contains
 * (the registry in plugins.c adds plugin kernels after these).
 *
 * Each kernel's parameters are declared as the C struct whose layout the
 * C++ ABI gives the parameter list (natural alignment, in order), so
 * cuFuncGetParamInfo reports offsetof/sizeof of its members: the layout an
 * nvcc-built kernel of that signature has.
 * Element-wise kernels cover i < min(n, total threads of the grid); reduce
 * and count_fill loop over their whole count (grid-stride kernels).
 *
 * Invariants:
 * - Kernels run with the memory read lock held and touch device memory only
 *   through fc_dev(): a range outside one allocation is
 *   CUDA_ERROR_ILLEGAL_ADDRESS, a pointer misaligned for its element type
 *   CUDA_ERROR_MISALIGNED_ADDRESS; either makes the context's fault sticky.
 * - A kernel checks every range before writing, so a fault writes nothing.
 */
#include "fakecuda.h"

#include <assert.h>
#include <string.h>

struct fill_args {
    CUdeviceptr out;
    int n;
    float value;
};
struct saxpy_args {
    int n;
    float a;
    CUdeviceptr x, y;
};
struct gather_args {
    CUdeviceptr out, in, idx;
    int n;
};
struct pair {
    CUdeviceptr in, out;
    int n;
};
struct copy_pair_args {
    struct pair p;
};
struct reduce_args {
    CUdeviceptr in, out;
    int n;
};
struct scale_args {
    CUdeviceptr data;
    int n;
    float factor;
};
struct crash_args {
    CUdeviceptr p;
};
struct count_fill_args {
    CUdeviceptr count, out;
};
struct empty_args {
    CUdeviceptr a, b, c, d;
};

static uint64_t fc_extent(int n, uint64_t threads)
{
    return n <= 0 ? 0 : (uint64_t)n < threads ? (uint64_t)n : threads;
}

/* Host view of count elements of elem bytes at device address p, or NULL and *err. */
static void *fc_dev(CUdeviceptr p, uint64_t count, size_t elem, CUresult *err)
{
    assert(*err == CUDA_SUCCESS && "a kernel asks for no range after a fault, so it has written nothing");
    if (p % elem != 0) {
        *err = CUDA_ERROR_MISALIGNED_ADDRESS;
        return NULL;
    }
    void *v = count > SIZE_MAX / elem ? NULL : fc_mem_view_locked(p, (size_t)count * elem);
    if (!v)
        *err = CUDA_ERROR_ILLEGAL_ADDRESS;
    return v;
}

static CUresult k_fill(const void *params, uint64_t threads)
{
    struct fill_args a;
    memcpy(&a, params, sizeof a);
    uint64_t n = fc_extent(a.n, threads);
    CUresult err = CUDA_SUCCESS;
    float *out = n ? fc_dev(a.out, n, sizeof *out, &err) : NULL;
    for (uint64_t i = 0; out && i < n; i++)
        out[i] = a.value;
    return err;
}

static CUresult k_saxpy(const void *params, uint64_t threads)
{
    struct saxpy_args a;
    memcpy(&a, params, sizeof a);
    uint64_t n = fc_extent(a.n, threads);
    CUresult err = CUDA_SUCCESS;
    const float *x = n ? fc_dev(a.x, n, sizeof *x, &err) : NULL;
    float *y = x ? fc_dev(a.y, n, sizeof *y, &err) : NULL;
    for (uint64_t i = 0; y && i < n; i++)
        y[i] = a.a * x[i] + y[i];
    return err;
}

/* out[i] = in[idx[i]]; every index must fall in in's allocation, from in onwards. */
static CUresult k_gather(const void *params, uint64_t threads)
{
    struct gather_args a;
    memcpy(&a, params, sizeof a);
    uint64_t n = fc_extent(a.n, threads);
    CUresult err = CUDA_SUCCESS;
    const int *idx = n ? fc_dev(a.idx, n, sizeof *idx, &err) : NULL;
    float *out = idx ? fc_dev(a.out, n, sizeof *out, &err) : NULL;
    int64_t top = -1;
    for (uint64_t i = 0; out && i < n; i++)
        top = idx[i] < 0 ? INT64_MAX : idx[i] > top ? idx[i] : top;
    const float *in = out && top < INT32_MAX ? fc_dev(a.in, (uint64_t)top + 1, sizeof *in, &err) : NULL;
    if (out && !in)
        err = err == CUDA_SUCCESS ? CUDA_ERROR_ILLEGAL_ADDRESS : err;
    for (uint64_t i = 0; in && i < n; i++)
        out[i] = in[idx[i]];
    return err;
}

static CUresult k_copy_pair(const void *params, uint64_t threads)
{
    struct copy_pair_args a;
    memcpy(&a, params, sizeof a);
    uint64_t n = fc_extent(a.p.n, threads);
    CUresult err = CUDA_SUCCESS;
    const float *in = n ? fc_dev(a.p.in, n, sizeof *in, &err) : NULL;
    float *out = in ? fc_dev(a.p.out, n, sizeof *out, &err) : NULL;
    if (out)
        memmove(out, in, n * sizeof *out);
    return err;
}

static CUresult k_reduce(const void *params, uint64_t threads)
{
    struct reduce_args a;
    memcpy(&a, params, sizeof a);
    (void)threads;
    uint64_t n = a.n > 0 ? (uint64_t)a.n : 0;
    CUresult err = CUDA_SUCCESS;
    const float *in = n ? fc_dev(a.in, n, sizeof *in, &err) : NULL;
    float *out = in || !n ? fc_dev(a.out, 1, sizeof *out, &err) : NULL;
    double sum = 0;
    for (uint64_t i = 0; out && i < n; i++)
        sum += in[i];
    if (out)
        out[0] = (float)sum;
    return err;
}

static CUresult k_scale(const void *params, uint64_t threads)
{
    struct scale_args a;
    memcpy(&a, params, sizeof a);
    uint64_t n = fc_extent(a.n, threads);
    CUresult err = CUDA_SUCCESS;
    float *data = n ? fc_dev(a.data, n, sizeof *data, &err) : NULL;
    for (uint64_t i = 0; data && i < n; i++)
        data[i] *= a.factor;
    return err;
}

static CUresult k_crash(const void *params, uint64_t threads)
{
    (void)params;
    (void)threads;
    return CUDA_ERROR_ILLEGAL_ADDRESS;
}

/* Writes out[i] = i for i < *count: a garbage count runs off the end of out. */
static CUresult k_count_fill(const void *params, uint64_t threads)
{
    struct count_fill_args a;
    memcpy(&a, params, sizeof a);
    (void)threads;
    CUresult err = CUDA_SUCCESS;
    const int *count = fc_dev(a.count, 1, sizeof *count, &err);
    uint64_t n = count && *count > 0 ? (uint64_t)*count : 0;
    float *out = n ? fc_dev(a.out, n, sizeof *out, &err) : NULL;
    for (uint64_t i = 0; out && i < n; i++)
        out[i] = (float)i;
    return err;
}

static CUresult k_empty(const void *params, uint64_t threads)
{
    (void)params;
    (void)threads;
    return CUDA_SUCCESS;
}

#define FC_P(s, m)                                        \
    {                                                     \
        offsetof(struct s, m), sizeof(((struct s *)0)->m) \
    }
#define FC_BUILTIN(name, run, n, ...)                                   \
    {                                                                   \
        name, run, n, (const fc_param[]){__VA_ARGS__}, NULL, NULL, NULL \
    }

const fc_kernel fc_kernels[FC_NKERNELS] = {
    FC_BUILTIN("_Z4fillPfif", k_fill, 3, FC_P(fill_args, out), FC_P(fill_args, n), FC_P(fill_args, value)),
    FC_BUILTIN("_Z5saxpyifPKfPf", k_saxpy, 4, FC_P(saxpy_args, n), FC_P(saxpy_args, a), FC_P(saxpy_args, x),
               FC_P(saxpy_args, y)),
    FC_BUILTIN("_Z6gatherPfPKfPKii", k_gather, 4, FC_P(gather_args, out), FC_P(gather_args, in), FC_P(gather_args, idx),
               FC_P(gather_args, n)),
    FC_BUILTIN("_Z9copy_pair4Pair", k_copy_pair, 1, FC_P(copy_pair_args, p)),
    FC_BUILTIN("_Z6reducePKfPfi", k_reduce, 3, FC_P(reduce_args, in), FC_P(reduce_args, out), FC_P(reduce_args, n)),
    FC_BUILTIN("scale", k_scale, 3, FC_P(scale_args, data), FC_P(scale_args, n), FC_P(scale_args, factor)),
    FC_BUILTIN("_Z5crashPf", k_crash, 1, FC_P(crash_args, p)),
    FC_BUILTIN("_Z10count_fillPKiPf", k_count_fill, 2, FC_P(count_fill_args, count), FC_P(count_fill_args, out)),
    FC_BUILTIN("_Z5emptyPvS_S_S_", k_empty, 4, FC_P(empty_args, a), FC_P(empty_args, b), FC_P(empty_args, c),
               FC_P(empty_args, d)),
};

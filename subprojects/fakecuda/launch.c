/*
 * launch.c: kernel launches (cuLaunchKernel, cuLaunchKernelEx,
 * cuLaunchCooperativeKernel).
 *
 * A launch is checked the way the driver checks it (context, stream,
 * function handle, its image (modules.c: an image the device cannot run may
 * be reported here), grid and block limits, shared memory, parameters); a
 * refused launch returns its error and queues nothing. An accepted launch
 * copies its parameters into the work item and returns: the kernel runs at
 * the next sync point, where its faults are reported.
 * Invariants: the caller's kernelParams / extra are read only here, never
 * beyond the kernel's own parameter layout; a work item's heap parameter
 * buffer is owned by the item from here on (freed by fc_work_discard).
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define FC_MAX_EXTRA 64 /* entries scanned for CU_LAUNCH_PARAM_END */

static CUresult fc_check_dims(fc_dims d)
{
    if (!d.gx || !d.gy || !d.gz || !d.bx || !d.by || !d.bz)
        return CUDA_ERROR_INVALID_VALUE;
    if (d.gx > INT32_MAX || d.gy > 65535 || d.gz > 65535 || d.bx > 1024 || d.by > 1024 || d.bz > 64)
        return CUDA_ERROR_INVALID_VALUE;
    return (uint64_t)d.bx * d.by * d.bz > 1024 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* A cooperative grid must fit on the device at once: 8 SMs of 2048 threads. */
static bool fc_fits_device(fc_dims d)
{
    uint64_t per_block = (uint64_t)d.bx * d.by * d.bz;
    return (uint64_t)d.gx * d.gy * d.gz <= 8 * (2048 / per_block);
}

static CUresult fc_unpack_extra(void **extra, size_t need, unsigned char *out)
{
    const void *buf = NULL;
    const size_t *size = NULL;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (i >= FC_MAX_EXTRA)
            return CUDA_ERROR_INVALID_VALUE;
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            size = extra[i + 1];
        else
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (need == 0)
        return CUDA_SUCCESS;
    if (!buf || !size || *size < need)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(out, buf, need);
    return CUDA_SUCCESS;
}

static CUresult fc_pack_params(const fc_kernel *k, void **params, void **extra, unsigned char *out)
{
    if (params && extra)
        return CUDA_ERROR_INVALID_VALUE;
    if (extra)
        return fc_unpack_extra(extra, fc_kernel_param_bytes(k), out);
    if (!params)
        return k->nparams == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < k->nparams; i++) {
        if (!params[i])
            return CUDA_ERROR_INVALID_VALUE;
        assert(k->param[i].offset + k->param[i].size <= fc_kernel_param_bytes(k) &&
               "a parameter is read only within the kernel's own layout");
        memcpy(out + k->param[i].offset, params[i], k->param[i].size);
    }
    return CUDA_SUCCESS;
}

/* The item's parameter buffer: inline, or zeroed heap (padding reads as 0 either way). */
static CUresult fc_param_buffer(fc_kwork *kw)
{
    kw->nbytes = fc_kernel_param_bytes(kw->k);
    if (kw->nbytes > FC_INLINE_PARAM_BYTES && !(kw->heap = calloc(1, kw->nbytes)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}

/* Checks a launch the way the driver does and fills w with it, parameters
   copied (w owns them); nothing is queued. Graph kernel nodes are made here too. */
CUresult fc_kernel_work(fc_work *w, CUfunction f, fc_dims d, unsigned smem, void **params, void **extra,
                        bool cooperative)
{
    struct CUfunc_st *fn = fc_func_resolve(f);
    if (!fn)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fn->owner->launch_error != CUDA_SUCCESS)
        return fn->owner->launch_error;
    CUresult r = fc_check_dims(d);
    if (r != CUDA_SUCCESS)
        return r;
    if (smem > (unsigned)fn->max_dyn_smem)
        return CUDA_ERROR_INVALID_VALUE;
    if (cooperative && !fc_fits_device(d))
        return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    *w = (fc_work){.kind = FC_W_KERNEL,
                   .u.kernel = {.k = fn->k, .func = f, .cooperative = cooperative, .dims = d, .smem = smem}};
    if ((r = fc_param_buffer(&w->u.kernel)) != CUDA_SUCCESS)
        return r;
    r = fc_pack_params(fn->k, params, extra, fc_kwork_params(&w->u.kernel));
    if (r != CUDA_SUCCESS)
        fc_work_discard(w);
    else
        atomic_store(&fn->loaded, true); /* a lazily loaded function is loaded by its first launch */
    return r;
}

CUresult fc_launch(CUfunction f, fc_dims d, unsigned smem, CUstream s, void **params, void **extra, bool cooperative)
{
    CUcontext ctx;
    CUstream st;
    fc_work w;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r == CUDA_SUCCESS)
        r = fc_kernel_work(&w, f, d, smem, params, extra, cooperative);
    if (r != CUDA_SUCCESS)
        return r;
    w.u.kernel.stream = s;
    /* A captured launch is counted when its graph launches, as the launch it then is. */
    fc_action a = fc_capturing(s) ? (fc_action){CUDA_SUCCESS, false} : fc_faults_launch(w.u.kernel.k->name);
    if (a.code != CUDA_SUCCESS) {
        fc_work_discard(&w);
        return a.code;
    }
    w.fault = a.fault;
    return fc_submit(ctx, s, &w, false);
}

CUresult fc_launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    if (!cfg || (cfg->numAttrs && !cfg->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    bool cooperative = false;
    for (unsigned i = 0; i < cfg->numAttrs; i++)
        if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
            cooperative = cfg->attrs[i].value.cooperative != 0;
    fc_dims d = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ, cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ};
    return fc_launch(f, d, cfg->sharedMemBytes, cfg->hStream, params, extra, cooperative);
}

#define FC_SMS 8
#define FC_SM_THREADS 2048
#define FC_SM_BLOCKS 32
#define FC_SM_SMEM (228u * 1024u)

CUresult fc_occupancy_blocks(int *n, CUfunction f, int block_size, size_t smem)
{
    if (!n || block_size <= 0 || block_size > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_func_resolve(f))
        return CUDA_ERROR_INVALID_HANDLE;
    int warps = (block_size + 31) / 32, blocks = FC_SM_THREADS / (32 * warps);
    if (blocks > FC_SM_BLOCKS)
        blocks = FC_SM_BLOCKS;
    if (smem && smem <= FC_SM_SMEM && (int)(FC_SM_SMEM / smem) < blocks)
        blocks = (int)(FC_SM_SMEM / smem);
    *n = smem > FC_SM_SMEM ? 0 : blocks;
    return CUDA_SUCCESS;
}

/*
 * The dynamic shared memory each of num_blocks resident blocks of f may
 * have: the SM's shared memory split between them, at most what f may ask
 * for (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); 0 when that many
 * blocks of block_size threads cannot reside at once. cuBLAS asks it at
 * cublasCreate, after setting that attribute.
 */
CUresult fc_occupancy_dyn_smem(size_t *bytes, CUfunction f, int num_blocks, int block_size)
{
    int fit;
    if (!bytes || num_blocks <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_occupancy_blocks(&fit, f, block_size, 0);
    if (r != CUDA_SUCCESS)
        return r;
    size_t share = FC_SM_SMEM / (unsigned)num_blocks, most = (size_t)fc_func_resolve(f)->max_dyn_smem;
    *bytes = num_blocks > fit ? 0 : share < most ? share : most;
    return CUDA_SUCCESS;
}

/*
 * Clusters of cfg's shape (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, else one
 * block) that can be resident at once: fakecuda's 8 SMs are one GPC, so a
 * cluster holds at most 8 blocks (16 where f allows non-portable sizes),
 * and the device's resident blocks are shared between clusters. cuBLAS
 * asks it at cublasCreate.
 */
CUresult fc_occupancy_clusters(int *n, CUfunction f, const CUlaunchConfig *cfg)
{
    if (!n || !cfg || (cfg->numAttrs && !cfg->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t threads = (uint64_t)cfg->blockDimX * cfg->blockDimY * cfg->blockDimZ, cluster = 1;
    for (unsigned i = 0; i < cfg->numAttrs; i++)
        if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            cluster = (uint64_t)cfg->attrs[i].value.clusterDim.x * cfg->attrs[i].value.clusterDim.y *
                      cfg->attrs[i].value.clusterDim.z;
    int per_sm;
    CUresult r = cluster == 0 || threads > 1024 ? CUDA_ERROR_INVALID_VALUE
                                                : fc_occupancy_blocks(&per_sm, f, (int)threads, cfg->sharedMemBytes);
    if (r != CUDA_SUCCESS)
        return r;
    uint64_t most = fc_func_resolve(f)->non_portable_cluster ? 16 : 8;
    *n = cluster > most ? 0 : (int)((uint64_t)FC_SMS * (unsigned)per_sm / cluster);
    return CUDA_SUCCESS;
}

/* The block size (a multiple of 32, at most limit) that keeps the most threads resident. */
CUresult fc_occupancy_block_size(int *grid, int *block_size, CUfunction f, CUoccupancyB2DSize b2d, size_t smem,
                                 int limit)
{
    if (!grid || !block_size)
        return CUDA_ERROR_INVALID_VALUE;
    int best = 0, best_threads = -1, best_blocks = 0;
    for (int bs = 32; bs <= 1024 && (limit <= 0 || bs <= limit); bs += 32) {
        int blocks;
        CUresult r = fc_occupancy_blocks(&blocks, f, bs, b2d ? b2d(bs) : smem);
        if (r != CUDA_SUCCESS)
            return r;
        if (blocks * bs >= best_threads) {
            best_threads = blocks * bs;
            best = bs;
            best_blocks = blocks;
        }
    }
    *block_size = best;
    *grid = best_blocks * FC_SMS;
    return CUDA_SUCCESS;
}

CUresult fc_func_set_config(CUfunction f, int v, int max)
{
    if (!fc_func_resolve(f))
        return CUDA_ERROR_INVALID_HANDLE;
    return v < 0 || v > max ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

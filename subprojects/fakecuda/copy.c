/*
 * copy.c: memory copies (linear, by address, peer, 2D, 3D, 3D peer, batches)
 * and memsets.
 *
 * Every copy is reduced to one shape (fc_copy: depth slices of rows of
 * width bytes, each side with its own pitch) and every memset to one fill
 * (fc_fill: rows of elements), checked when called and run by the queue.
 * Invariants:
 * - A call is refused (CUDA_ERROR_INVALID_VALUE) unless each device side
 *   lies inside one live allocation; when it runs, the range is resolved
 *   again, and a range freed meanwhile is an illegal address (sticky).
 * - A stream-ordered copy from pageable host memory snapshots its source at
 *   the call (as the driver stages pageable memory), so the caller may
 *   reuse it; from pinned or registered memory it reads the source when it
 *   runs, as the device's DMA does.  Into pinned or registered memory it
 *   writes the host destination when it runs; into pageable memory (a
 *   copy call, not a graph's node) the call returns once the copy ran, as
 *   the driver's does.
 * - A batch is checked whole before any of its copies is queued: refused,
 *   none of it runs.
 * - Copy arrays (CUarray) are not emulated: CUDA_ERROR_NOT_SUPPORTED.
 */
#include "fakecuda.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Bytes from the first to the last byte a side touches, or SIZE_MAX. */
static size_t fc_footprint(const fc_end *e, size_t width, size_t rows, size_t depth)
{
    size_t lines, bytes;
    if (__builtin_mul_overflow(depth - 1, e->height, &lines) || __builtin_add_overflow(lines, rows - 1, &lines) ||
        __builtin_mul_overflow(lines, e->pitch, &bytes) || __builtin_add_overflow(bytes, width, &bytes))
        return SIZE_MAX;
    return bytes;
}

static bool fc_end_ok(const fc_end *e, const fc_copy *c)
{
    if (c->rows > 1 && e->pitch < c->width)
        return false;
    if (c->depth > 1 && e->height < c->rows)
        return false;
    size_t n = fc_footprint(e, c->width, c->rows, c->depth);
    return n != SIZE_MAX && (e->device ? fc_mem_span_ok(e->dev, n) : e->host != NULL);
}

static unsigned char *fc_end_row(const fc_end *e, size_t y, size_t z, size_t width)
{
    size_t off = (z * e->height + y) * e->pitch;
    return e->device ? fc_mem_view_locked(e->dev + off, width) : e->host + off;
}

/* Runs with the memory read lock held (queue.c). */
CUresult fc_run_copy(fc_copy *c)
{
    for (size_t z = 0; z < c->depth; z++)
        for (size_t y = 0; y < c->rows; y++) {
            unsigned char *d = fc_end_row(&c->dst, y, z, c->width);
            const unsigned char *s = fc_end_row(&c->src, y, z, c->width);
            if (!d || !s)
                return CUDA_ERROR_ILLEGAL_ADDRESS;
            memmove(d, s, c->width);
        }
    return CUDA_SUCCESS;
}

/* Snapshot a host source into a dense buffer the copy owns (queue.c, for a
   stream-ordered copy: the driver stages pageable memory at the call). */
CUresult fc_copy_stage(fc_copy *c)
{
    assert(!c->src.device && !c->staging && "only a host source is staged, once");
    size_t n = c->width * c->rows * c->depth;
    unsigned char *buf = malloc(n);
    if (!buf)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t z = 0; z < c->depth; z++)
        for (size_t y = 0; y < c->rows; y++)
            memcpy(buf + (z * c->rows + y) * c->width, fc_end_row(&c->src, y, z, c->width), c->width);
    c->staging = buf;
    c->src = (fc_end){.host = buf, .pitch = c->width, .height = c->rows};
    return CUDA_SUCCESS;
}

/* Whether the host source lies in pinned or registered memory, which the
   device reads by DMA when the copy runs: such a copy is not staged. */
bool fc_copy_src_pinned(const fc_copy *c)
{
    size_t n = fc_footprint(&c->src, c->width, c->rows, c->depth);
    return !c->src.device && c->src.host && n != SIZE_MAX && fc_mem_host_pinned(c->src.host, n);
}

bool fc_copy_dst_pageable(const fc_copy *c)
{
    size_t n = fc_footprint(&c->dst, c->width, c->rows, c->depth);
    return !c->dst.device && c->dst.host && !(n != SIZE_MAX && fc_mem_host_pinned(c->dst.host, n));
}

/* The checks of the call: each device side inside one live allocation. */
CUresult fc_copy_check(const fc_copy *c)
{
    return fc_end_ok(&c->dst, c) && fc_end_ok(&c->src, c) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fc_copy_submit(fc_copy *c, CUstream s, bool async)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r != CUDA_SUCCESS || c->width == 0 || c->rows == 0 || c->depth == 0)
        return r;
    if ((r = fc_copy_check(c)) != CUDA_SUCCESS)
        return r;
    fc_work w = {.kind = FC_W_COPY, .u.copy = *c};
    /* Into pageable memory the call returns once the copy ran, as the
       driver documents ("API synchronization behavior") and programs rely
       on: Warp's .numpy() reads its array after cuMemcpyDtoHAsync.  A
       capture records it as it records any copy. */
    return fc_submit(ctx, s, &w, !async || (fc_copy_dst_pageable(c) && !fc_capturing(s)));
}

static fc_end fc_linear_end(CUdeviceptr p, bool device, size_t n)
{
    return (fc_end){.device = device, .dev = p, .host = (unsigned char *)(uintptr_t)p, .pitch = n, .height = 1};
}

CUresult fc_copy_linear(CUdeviceptr dst, bool dst_dev, CUdeviceptr src, bool src_dev, size_t n, CUstream s, bool async)
{
    fc_copy c = {fc_linear_end(dst, dst_dev, n), fc_linear_end(src, src_dev, n), n, 1, 1, NULL};
    return fc_copy_submit(&c, s, async);
}

/* Unified addressing: an address inside a device allocation is device memory. */
CUresult fc_copy_auto(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, bool async)
{
    return fc_copy_linear(dst, fc_mem_is_device(dst), src, fc_mem_is_device(src), n, s, async);
}

CUresult fc_copy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s,
                      bool async)
{
    if (!fc_obj_valid(dctx, FC_K_CTX) || !fc_obj_valid(sctx, FC_K_CTX))
        return CUDA_ERROR_INVALID_CONTEXT;
    return fc_copy_linear(dst, true, src, true, n, s, async);
}

/* One side of a 2D/3D descriptor, its origin (x, y, z) applied. */
static CUresult fc_end_from(fc_end *e, CUmemorytype type, const void *host, CUdeviceptr dev, CUarray array, size_t x,
                            size_t y, size_t z, size_t pitch, size_t height)
{
    if (type == CU_MEMORYTYPE_ARRAY) { /* the array's memory, rows unpadded (texture.c) */
        if (fc_array_memory(array, &dev, &pitch, &height) != CUDA_SUCCESS)
            return CUDA_ERROR_INVALID_VALUE;
        type = CU_MEMORYTYPE_DEVICE;
    }
    if (type == CU_MEMORYTYPE_UNIFIED) {
        type = fc_mem_is_device(dev) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        host = (const void *)(uintptr_t)dev;
    }
    if (type != CU_MEMORYTYPE_HOST && type != CU_MEMORYTYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    size_t off = x + (z * height + y) * pitch;
    *e = (fc_end){.device = type == CU_MEMORYTYPE_DEVICE,
                  .dev = dev + off,
                  .host = host ? (unsigned char *)(uintptr_t)host + off : NULL,
                  .pitch = pitch,
                  .height = height};
    return CUDA_SUCCESS;
}

/* A 3D descriptor as a copy shape (graph memcpy nodes use it too). */
CUresult fc_copy_from_3d(fc_copy *c, const CUDA_MEMCPY3D *p)
{
    if (!p || p->srcLOD || p->dstLOD || p->reserved0 || p->reserved1)
        return CUDA_ERROR_INVALID_VALUE;
    *c = (fc_copy){.width = p->WidthInBytes, .rows = p->Height, .depth = p->Depth};
    CUresult r = fc_end_from(&c->dst, p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY,
                             p->dstZ, p->dstPitch, p->dstHeight);
    if (r == CUDA_SUCCESS)
        r = fc_end_from(&c->src, p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY,
                        p->srcZ, p->srcPitch, p->srcHeight);
    return r;
}

static void fc_end_to(const fc_end *e, CUmemorytype *type, const void **host, CUdeviceptr *dev, size_t *pitch,
                      size_t *height)
{
    *type = e->device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    *host = e->device ? NULL : e->host;
    *dev = e->device ? e->dev : 0;
    *pitch = e->pitch;
    *height = e->height;
}

/* The descriptor of a copy shape, origins folded into the addresses (graph memcpy nodes report it). */
void fc_copy_to_3d(const fc_copy *c, CUDA_MEMCPY3D *p)
{
    *p = (CUDA_MEMCPY3D){.WidthInBytes = c->width, .Height = c->rows, .Depth = c->depth};
    fc_end_to(&c->src, &p->srcMemoryType, &p->srcHost, &p->srcDevice, &p->srcPitch, &p->srcHeight);
    const void *dst_host;
    fc_end_to(&c->dst, &p->dstMemoryType, &dst_host, &p->dstDevice, &p->dstPitch, &p->dstHeight);
    p->dstHost = (void *)(uintptr_t)dst_host;
}

CUresult fc_copy_3d(const CUDA_MEMCPY3D *p, CUstream s, bool async)
{
    fc_copy c;
    CUresult r = fc_copy_from_3d(&c, p);
    return r == CUDA_SUCCESS ? fc_copy_submit(&c, s, async) : r;
}

CUresult fc_copy_2d(const CUDA_MEMCPY2D *p, CUstream s, bool async)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D q = {
        .srcXInBytes = p->srcXInBytes,
        .srcY = p->srcY,
        .srcMemoryType = p->srcMemoryType,
        .srcHost = p->srcHost,
        .srcDevice = p->srcDevice,
        .srcArray = p->srcArray,
        .srcPitch = p->srcPitch,
        .srcHeight = p->Height,
        .dstXInBytes = p->dstXInBytes,
        .dstY = p->dstY,
        .dstMemoryType = p->dstMemoryType,
        .dstHost = p->dstHost,
        .dstDevice = p->dstDevice,
        .dstArray = p->dstArray,
        .dstPitch = p->dstPitch,
        .dstHeight = p->Height,
        .WidthInBytes = p->WidthInBytes,
        .Height = p->Height,
        .Depth = 1,
    };
    return fc_copy_3d(&q, s, async);
}

CUresult fc_copy_2d_v1(const CUDA_MEMCPY2D_v1 *p, CUstream s, bool async)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY2D q = {
        .srcXInBytes = p->srcXInBytes,
        .srcY = p->srcY,
        .srcMemoryType = p->srcMemoryType,
        .srcHost = p->srcHost,
        .srcDevice = p->srcDevice,
        .srcArray = p->srcArray,
        .srcPitch = p->srcPitch,
        .dstXInBytes = p->dstXInBytes,
        .dstY = p->dstY,
        .dstMemoryType = p->dstMemoryType,
        .dstHost = p->dstHost,
        .dstDevice = p->dstDevice,
        .dstArray = p->dstArray,
        .dstPitch = p->dstPitch,
        .WidthInBytes = p->WidthInBytes,
        .Height = p->Height,
    };
    return fc_copy_2d(&q, s, async);
}

CUresult fc_copy_3d_v1(const CUDA_MEMCPY3D_v1 *p, CUstream s, bool async)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D q = {
        .srcXInBytes = p->srcXInBytes,
        .srcY = p->srcY,
        .srcZ = p->srcZ,
        .srcLOD = p->srcLOD,
        .srcMemoryType = p->srcMemoryType,
        .srcHost = p->srcHost,
        .srcDevice = p->srcDevice,
        .srcArray = p->srcArray,
        .reserved0 = p->reserved0,
        .srcPitch = p->srcPitch,
        .srcHeight = p->srcHeight,
        .dstXInBytes = p->dstXInBytes,
        .dstY = p->dstY,
        .dstZ = p->dstZ,
        .dstLOD = p->dstLOD,
        .dstMemoryType = p->dstMemoryType,
        .dstHost = p->dstHost,
        .dstDevice = p->dstDevice,
        .dstArray = p->dstArray,
        .reserved1 = p->reserved1,
        .dstPitch = p->dstPitch,
        .dstHeight = p->dstHeight,
        .WidthInBytes = p->WidthInBytes,
        .Height = p->Height,
        .Depth = p->Depth,
    };
    return fc_copy_3d(&q, s, async);
}

/* ---- memsets --------------------------------------------------------------- */

/* Runs with the memory read lock held (queue.c). */
CUresult fc_run_fill(const fc_fill *f)
{
    uint8_t v8 = (uint8_t)f->value;
    uint16_t v16 = (uint16_t)f->value;
    const void *pattern = f->elem == 1   ? (const void *)&v8
                          : f->elem == 2 ? (const void *)&v16
                                         : (const void *)&f->value;
    for (size_t y = 0; y < f->height; y++) {
        unsigned char *row = fc_mem_view_locked(f->dst + y * f->pitch, f->width * f->elem);
        if (!row)
            return CUDA_ERROR_ILLEGAL_ADDRESS;
        for (size_t i = 0; i < f->width; i++)
            memcpy(row + i * f->elem, pattern, f->elem);
    }
    return CUDA_SUCCESS;
}

/* The checks of a memset, and its fill; dst must be aligned for the element. */
CUresult fc_fill_make(fc_fill *f, CUdeviceptr dst, size_t pitch, uint32_t value, unsigned elem, size_t width,
                      size_t height)
{
    size_t row, span;
    if (__builtin_mul_overflow(width, elem, &row) || dst % elem != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (pitch == 0)
        pitch = row;
    if (pitch < row || __builtin_mul_overflow(height - 1, pitch, &span) || __builtin_add_overflow(span, row, &span) ||
        !fc_mem_span_ok(dst, span))
        return CUDA_ERROR_INVALID_VALUE;
    *f = (fc_fill){dst, pitch, width, height, elem, value};
    return CUDA_SUCCESS;
}

CUresult fc_memset(CUdeviceptr dst, size_t pitch, uint32_t value, unsigned elem, size_t width, size_t height,
                   CUstream s, bool async)
{
    CUcontext ctx;
    CUstream st;
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r != CUDA_SUCCESS || width == 0 || height == 0)
        return r;
    fc_work w = {.kind = FC_W_FILL};
    if ((r = fc_fill_make(&w.u.fill, dst, pitch, value, elem, width, height)) != CUDA_SUCCESS)
        return r;
    return fc_submit(ctx, s, &w, !async);
}

/* ---- 3D peer copies and batches -------------------------------------------- */

/* One device: a peer copy is a copy within it, once both contexts are live. */
CUresult fc_copy_3d_peer(const CUDA_MEMCPY3D_PEER *p, CUstream s, bool async)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    if ((p->srcMemoryType != CU_MEMORYTYPE_ARRAY && !fc_obj_valid(p->srcContext, FC_K_CTX)) ||
        (p->dstMemoryType != CU_MEMORYTYPE_ARRAY && !fc_obj_valid(p->dstContext, FC_K_CTX)))
        return CUDA_ERROR_INVALID_CONTEXT;
    CUDA_MEMCPY3D q = {
        .srcXInBytes = p->srcXInBytes,
        .srcY = p->srcY,
        .srcZ = p->srcZ,
        .srcLOD = p->srcLOD,
        .srcMemoryType = p->srcMemoryType,
        .srcHost = p->srcHost,
        .srcDevice = p->srcDevice,
        .srcArray = p->srcArray,
        .srcPitch = p->srcPitch,
        .srcHeight = p->srcHeight,
        .dstXInBytes = p->dstXInBytes,
        .dstY = p->dstY,
        .dstZ = p->dstZ,
        .dstLOD = p->dstLOD,
        .dstMemoryType = p->dstMemoryType,
        .dstHost = p->dstHost,
        .dstDevice = p->dstDevice,
        .dstArray = p->dstArray,
        .dstPitch = p->dstPitch,
        .dstHeight = p->dstHeight,
        .WidthInBytes = p->WidthInBytes,
        .Height = p->Height,
        .Depth = p->Depth,
    };
    return fc_copy_3d(&q, s, async);
}

static bool fc_access_order_ok(CUmemcpySrcAccessOrder o)
{
    return o == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || o == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ||
           o == CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
}

/* A batch's copies, all checked first, then queued in order: one whose
 * source order says its source is done with when the call returns
 * (DURING_API_CALL) is run to completion then; the others (STREAM, and ANY,
 * which stream order satisfies) are queued, a host source snapshotted as for
 * every stream-ordered copy. On error *fail_at is the copy at fault, or
 * SIZE_MAX when no one copy is. */
typedef struct fc_batch {
    size_t n;
    CUresult (*nth)(const struct fc_batch *b, size_t i, fc_copy *c, CUmemcpySrcAccessOrder *order);
    const void *args;
} fc_batch;

static CUresult fc_batch_run(const fc_batch *b, size_t *fail_at, CUstream s)
{
    *fail_at = SIZE_MAX;
    CUcontext ctx;
    CUstream st;
    if (b->n == 0 || fc_is_legacy_stream(s))
        return CUDA_ERROR_INVALID_VALUE; /* the batch needs a stream of its own order */
    CUresult r = fc_resolve_stream(s, &ctx, &st);
    if (r != CUDA_SUCCESS)
        return r;
    fc_copy c;
    CUmemcpySrcAccessOrder order;
    for (size_t i = 0; i < b->n; i++) { /* all checked before any is queued */
        r = b->nth(b, i, &c, &order);
        if (r == CUDA_SUCCESS && !fc_access_order_ok(order))
            r = CUDA_ERROR_INVALID_VALUE;
        if (r == CUDA_SUCCESS && c.width != 0)
            r = fc_copy_check(&c);
        if (r != CUDA_SUCCESS) {
            *fail_at = i;
            return r;
        }
    }
    for (size_t i = 0; i < b->n; i++) {
        CUresult again = b->nth(b, i, &c, &order);
        assert(again == CUDA_SUCCESS && "a batch is checked whole before any of its copies is queued");
        (void)again;
        if (c.width == 0)
            continue;
        fc_work w = {.kind = FC_W_COPY, .u.copy = c};
        if ((r = fc_submit(ctx, s, &w, order == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL)) != CUDA_SUCCESS) {
            *fail_at = i;
            return r;
        }
    }
    return CUDA_SUCCESS;
}

/* failIdx is written only on failure: SIZE_MAX when no one copy is at fault. */
static CUresult fc_batch_failed(size_t *fail_idx, size_t at, CUresult r)
{
    if (fail_idx)
        *fail_idx = at;
    return r;
}

static CUresult fc_batch_answer(const fc_batch *b, size_t *fail_idx, CUstream s)
{
    size_t at;
    CUresult r = fc_batch_run(b, &at, s);
    return r == CUDA_SUCCESS ? r : fc_batch_failed(fail_idx, at, r);
}

/* ---- cuMemcpyBatchAsync: pointer to pointer, by address ---- */
typedef struct fc_linear_batch {
    CUdeviceptr *dsts, *srcs;
    size_t *sizes;
    CUmemcpyAttributes *attrs;
    size_t *attrs_idxs, n_attrs;
} fc_linear_batch;

static CUresult fc_linear_nth(const fc_batch *b, size_t i, fc_copy *c, CUmemcpySrcAccessOrder *order)
{
    const fc_linear_batch *l = b->args;
    size_t a = 0; /* the last attribute whose first copy is at or before i */
    while (a + 1 < l->n_attrs && l->attrs_idxs[a + 1] <= i)
        a++;
    *order = l->attrs[a].srcAccessOrder;
    CUdeviceptr d = l->dsts[i], src = l->srcs[i];
    size_t n = l->sizes[i];
    *c = (fc_copy){fc_linear_end(d, fc_mem_is_device(d), n),
                   fc_linear_end(src, fc_mem_is_device(src), n),
                   n,
                   1,
                   1,
                   NULL};
    return CUDA_SUCCESS;
}

/* attrsIdxs: starts at 0, strictly increasing, each below count. */
static bool fc_attrs_ok(size_t count, const CUmemcpyAttributes *attrs, const size_t *idxs, size_t n)
{
    if (!attrs || !idxs || n == 0 || n > count || idxs[0] != 0)
        return false;
    for (size_t k = 1; k < n; k++)
        if (idxs[k] <= idxs[k - 1] || idxs[k] >= count)
            return false;
    return true;
}

CUresult fc_copy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs,
                       size_t *attrs_idxs, size_t n_attrs, size_t *fail_idx, CUstream s)
{
    if (!dsts || !srcs || !sizes || !fc_attrs_ok(count, attrs, attrs_idxs, n_attrs))
        return fc_batch_failed(fail_idx, SIZE_MAX, CUDA_ERROR_INVALID_VALUE);
    fc_linear_batch l = {dsts, srcs, sizes, attrs, attrs_idxs, n_attrs};
    fc_batch b = {count, fc_linear_nth, &l};
    return fc_batch_answer(&b, fail_idx, s);
}

/* ---- cuMemcpy3DBatchAsync: pointer operands (arrays are not emulated) ---- */
static CUresult fc_operand_end(fc_end *e, const CUmemcpy3DOperand *o, const CUextent3D *x)
{
    if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (o->type != CU_MEMCPY_OPERAND_TYPE_POINTER || (o->op.ptr.rowLength && o->op.ptr.rowLength < x->width) ||
        (o->op.ptr.layerHeight && o->op.ptr.layerHeight < x->height))
        return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr p = o->op.ptr.ptr;
    *e = (fc_end){.device = fc_mem_is_device(p),
                  .dev = p,
                  .host = (unsigned char *)(uintptr_t)p,
                  .pitch = o->op.ptr.rowLength ? o->op.ptr.rowLength : x->width,
                  .height = o->op.ptr.layerHeight ? o->op.ptr.layerHeight : x->height};
    return CUDA_SUCCESS;
}

static CUresult fc_op_nth(const fc_batch *b, size_t i, fc_copy *c, CUmemcpySrcAccessOrder *order)
{
    const CUDA_MEMCPY3D_BATCH_OP *op = (const CUDA_MEMCPY3D_BATCH_OP *)b->args + i;
    *order = op->srcAccessOrder;
    *c = (fc_copy){.width = op->extent.width, .rows = op->extent.height, .depth = op->extent.depth};
    if (!op->extent.width || !op->extent.height || !op->extent.depth)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_operand_end(&c->dst, &op->dst, &op->extent);
    return r == CUDA_SUCCESS ? fc_operand_end(&c->src, &op->src, &op->extent) : r;
}

CUresult fc_copy_3d_batch(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, unsigned long long flags, CUstream s)
{
    if (!ops || flags)
        return fc_batch_failed(fail_idx, SIZE_MAX, CUDA_ERROR_INVALID_VALUE);
    fc_batch b = {n, fc_op_nth, ops};
    return fc_batch_answer(&b, fail_idx, s);
}

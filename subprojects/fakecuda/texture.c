/*
 * texture.c: CUDA arrays (cuArrayCreate, cuArray3DCreate and their
 * descriptors) and texture objects (cuTexObjectCreate / Destroy /
 * GetResourceDesc / GetTextureDesc; simpleTexture).
 *
 * An array's texels live in one device allocation of the array's context,
 * row after row with no padding (pitch = width * texel size), so copies
 * to and from an array are copies of that memory (copy.c, through
 * fc_array_memory) and the PTX executor reads it like any other. A texture
 * object is one fc_tex_desc (ptx/ptx_tex.h) written into device memory of
 * the current context; its handle is that descriptor's device address,
 * which the executor's `tex` reads through the launch's device mapping.
 * Invariants: an array's and a texture's memory lives exactly as long as
 * the object (or its context); a handle is a texture object exactly while
 * its descriptor names, as owner, a live FC_K_TEXOBJ slot that names it
 * back; a descriptor is never changed after its handle is handed out.
 */
#include "fakecuda.h"
#include "ptx/ptx_tex.h"

#include <assert.h>
#include <string.h>

/* A format's channel size and element kind; false for formats not emulated. */
static bool fc_format(CUarray_format f, unsigned *bytes, uint32_t *kind)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: *bytes = 1, *kind = FC_TEX_UINT; return true;
    case CU_AD_FORMAT_UNSIGNED_INT16: *bytes = 2, *kind = FC_TEX_UINT; return true;
    case CU_AD_FORMAT_UNSIGNED_INT32: *bytes = 4, *kind = FC_TEX_UINT; return true;
    case CU_AD_FORMAT_SIGNED_INT8: *bytes = 1, *kind = FC_TEX_SINT; return true;
    case CU_AD_FORMAT_SIGNED_INT16: *bytes = 2, *kind = FC_TEX_SINT; return true;
    case CU_AD_FORMAT_SIGNED_INT32: *bytes = 4, *kind = FC_TEX_SINT; return true;
    case CU_AD_FORMAT_HALF: *bytes = 2, *kind = FC_TEX_HALF; return true;
    case CU_AD_FORMAT_FLOAT: *bytes = 4, *kind = FC_TEX_FLOAT; return true;
    default: return false;
    }
}

/* ---- arrays --------------------------------------------------------------------- */

/* Layered, cubemap, sparse and the other special arrays are not emulated;
   surface load/store and texture gather only mark an array's uses. */
#define FC_ARRAY_FLAGS_KEPT (CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_TEXTURE_GATHER)

CUresult fc_array_create(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    unsigned cb;
    uint32_t kind;
    CUcontext ctx;
    if (!out || !d || !d->Width || (d->Depth && !d->Height) || !fc_format(d->Format, &cb, &kind) ||
        (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4))
        return CUDA_ERROR_INVALID_VALUE;
    if (d->Flags & ~(unsigned)FC_ARRAY_FLAGS_KEPT)
        return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    size_t pitch = d->Width * cb * d->NumChannels, rows = d->Height ? d->Height : 1, depth = d->Depth ? d->Depth : 1;
    if (pitch / (cb * d->NumChannels) != d->Width || rows > SIZE_MAX / pitch || depth > SIZE_MAX / (pitch * rows))
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUarray a = fc_obj_new(FC_P_ARRAY, FC_K_ARRAY, ctx);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->desc = *d;
    a->pitch = pitch;
    a->rows = rows;
    if ((r = fc_mem_alloc_global(&a->data, pitch * rows * depth, ctx)) != CUDA_SUCCESS) {
        fc_obj_free(a);
        return r;
    }
    *out = a;
    return CUDA_SUCCESS;
}

CUresult fc_array_create_2d(CUarray *out, const CUDA_ARRAY_DESCRIPTOR *d)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d3 = {.Width = d->Width,
                                  .Height = d->Height,
                                  .Format = d->Format,
                                  .NumChannels = d->NumChannels};
    return fc_array_create(out, &d3);
}

/* Like cuMemFree, destroying an array first runs the work queued before it. */
CUresult fc_array_destroy(CUarray a)
{
    if (!fc_obj_valid(a, FC_K_ARRAY))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = fc_drain_all(a->hdr.ctx);
    if (r != CUDA_SUCCESS)
        return r;
    r = fc_mem_free_now(a->data);
    assert(r == CUDA_SUCCESS && "a live array's memory is a live allocation");
    fc_obj_free(a);
    return r;
}

CUresult fc_array_descriptor(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_obj_valid(a, FC_K_ARRAY))
        return CUDA_ERROR_INVALID_HANDLE;
    *d = a->desc;
    return CUDA_SUCCESS;
}

CUresult fc_array_descriptor_2d(CUDA_ARRAY_DESCRIPTOR *d, CUarray a)
{
    CUDA_ARRAY3D_DESCRIPTOR d3;
    CUresult r = d ? fc_array_descriptor(&d3, a) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS)
        *d = (CUDA_ARRAY_DESCRIPTOR){.Width = d3.Width,
                                     .Height = d3.Height,
                                     .Format = d3.Format,
                                     .NumChannels = d3.NumChannels};
    return r;
}

/* For copies: the array's memory, its row pitch and rows per slice. */
CUresult fc_array_memory(CUarray a, CUdeviceptr *data, size_t *pitch, size_t *rows)
{
    if (!fc_obj_valid(a, FC_K_ARRAY))
        return CUDA_ERROR_INVALID_VALUE;
    *data = a->data;
    *pitch = a->pitch;
    *rows = a->rows;
    return CUDA_SUCCESS;
}

/* ---- texture objects ---------------------------------------------------------------- */

/* The texels a resource names, as a descriptor's geometry. */
static CUresult fc_tex_resource(fc_tex_desc *t, const CUDA_RESOURCE_DESC *res)
{
    unsigned cb;
    CUarray_format format;
    unsigned channels;
    t->height = t->depth = 1;
    switch (res->resType) {
    case CU_RESOURCE_TYPE_ARRAY: {
        CUarray a = res->res.array.hArray;
        if (!fc_obj_valid(a, FC_K_ARRAY))
            return CUDA_ERROR_INVALID_HANDLE;
        format = a->desc.Format, channels = a->desc.NumChannels;
        t->data = a->data, t->pitch = a->pitch, t->slice = a->pitch * a->rows;
        t->width = a->desc.Width;
        t->height = a->rows;
        t->depth = a->desc.Depth ? a->desc.Depth : 1;
        t->dims = a->desc.Depth ? 3 : a->desc.Height ? 2 : 1;
        break;
    }
    case CU_RESOURCE_TYPE_LINEAR:
        format = res->res.linear.format, channels = res->res.linear.numChannels;
        t->data = res->res.linear.devPtr, t->dims = 1;
        if (!fc_format(format, &cb, &t->kind) || !channels)
            return CUDA_ERROR_INVALID_VALUE;
        t->width = res->res.linear.sizeInBytes / (cb * channels);
        t->pitch = t->slice = res->res.linear.sizeInBytes;
        break;
    case CU_RESOURCE_TYPE_PITCH2D:
        format = res->res.pitch2D.format, channels = res->res.pitch2D.numChannels;
        t->data = res->res.pitch2D.devPtr, t->dims = 2;
        t->width = res->res.pitch2D.width, t->height = res->res.pitch2D.height;
        t->pitch = res->res.pitch2D.pitchInBytes, t->slice = t->pitch * t->height;
        break;
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: return CUDA_ERROR_NOT_SUPPORTED;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    if (!fc_format(format, &cb, &t->kind) || (channels != 1 && channels != 2 && channels != 4) || !t->width ||
        !t->height)
        return CUDA_ERROR_INVALID_VALUE;
    t->channel_bytes = cb;
    t->channels = channels;
    /* linear memory must hold every texel the descriptor names */
    if (res->resType != CU_RESOURCE_TYPE_ARRAY &&
        (t->pitch < t->width * cb * channels || !fc_mem_span_ok(t->data, t->slice * t->depth)))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* How the texels are sampled. Linear filtering returns floats only. */
static CUresult fc_tex_sampling(fc_tex_desc *t, const CUDA_TEXTURE_DESC *td)
{
    if (td->flags & ~(unsigned)(CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES |
                                CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION | CU_TRSF_SEAMLESS_CUBEMAP))
        return CUDA_ERROR_NOT_SUPPORTED; /* sRGB conversion */
    for (unsigned k = 0; k < 3; k++) {
        if (td->addressMode[k] < CU_TR_ADDRESS_MODE_WRAP || td->addressMode[k] > CU_TR_ADDRESS_MODE_BORDER)
            return CUDA_ERROR_INVALID_VALUE;
        t->address[k] = (uint32_t)td->addressMode[k];
    }
    if (td->filterMode != CU_TR_FILTER_MODE_POINT && td->filterMode != CU_TR_FILTER_MODE_LINEAR)
        return CUDA_ERROR_INVALID_VALUE;
    t->filter = td->filterMode == CU_TR_FILTER_MODE_LINEAR ? FC_TEX_LINEAR : FC_TEX_POINT;
    t->normalized_coords = (td->flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
    t->read_as_integer = (td->flags & CU_TRSF_READ_AS_INTEGER) != 0;
    bool integers = (t->kind == FC_TEX_UINT || t->kind == FC_TEX_SINT) && (t->channel_bytes == 4 || t->read_as_integer);
    if (t->filter == FC_TEX_LINEAR && integers)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(t->border, td->borderColor, sizeof t->border);
    return CUDA_SUCCESS;
}

CUresult fc_tex_create(CUtexObject *out, const CUDA_RESOURCE_DESC *res, const CUDA_TEXTURE_DESC *td,
                       const CUDA_RESOURCE_VIEW_DESC *view)
{
    CUcontext ctx;
    if (!out || !res || !td || res->flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (view)
        return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = fc_current(&ctx);
    if (r != CUDA_SUCCESS)
        return r;
    fc_tex_desc t = {.magic = FC_TEX_MAGIC};
    if ((r = fc_tex_resource(&t, res)) != CUDA_SUCCESS || (r = fc_tex_sampling(&t, td)) != CUDA_SUCCESS)
        return r;
    struct CUtexobj_st *o = fc_obj_new(FC_P_TEXOBJ, FC_K_TEXOBJ, ctx);
    if (!o)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if ((r = fc_mem_alloc_global(&o->at, sizeof t, ctx)) != CUDA_SUCCESS) {
        fc_obj_free(o);
        return r;
    }
    o->res = *res;
    o->tex = *td;
    t.owner = (uint64_t)(uintptr_t)o;
    fc_mem_rdlock();
    void *p = fc_mem_view_locked(o->at, sizeof t);
    assert(p && "a fresh allocation is mapped");
    memcpy(p, &t, sizeof t);
    fc_mem_unlock();
    *out = (CUtexObject)o->at;
    return CUDA_SUCCESS;
}

/* The live object a handle names, or NULL; reads the descriptor, never a foreign pointer. */
static struct CUtexobj_st *fc_tex_find(CUtexObject h)
{
    uint64_t owner = 0;
    fc_mem_rdlock();
    const fc_tex_desc *t = h ? fc_mem_view_locked((CUdeviceptr)h, sizeof *t) : NULL;
    if (t && t->magic == FC_TEX_MAGIC)
        owner = t->owner;
    fc_mem_unlock();
    struct CUtexobj_st *o = (struct CUtexobj_st *)(uintptr_t)owner;
    return owner && fc_obj_valid(o, FC_K_TEXOBJ) && o->at == (CUdeviceptr)h ? o : NULL;
}

/* The work queued before it runs first (it may sample the texture), as
   cuMemFree waits for it. */
CUresult fc_tex_destroy(CUtexObject h)
{
    struct CUtexobj_st *o = fc_tex_find(h);
    if (!o)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_drain_all(o->hdr.ctx);
    if (r != CUDA_SUCCESS)
        return r;
    fc_mem_free_now(o->at);
    fc_obj_free(o);
    return CUDA_SUCCESS;
}

CUresult fc_tex_get(CUDA_RESOURCE_DESC *res, CUDA_TEXTURE_DESC *td, CUtexObject h)
{
    struct CUtexobj_st *o = fc_tex_find(h);
    if (!res && !td)
        return CUDA_ERROR_INVALID_VALUE;
    if (!o)
        return CUDA_ERROR_INVALID_VALUE;
    if (res)
        *res = o->res;
    if (td)
        *td = o->tex;
    return CUDA_SUCCESS;
}

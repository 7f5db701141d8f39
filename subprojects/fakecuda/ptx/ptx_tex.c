/*
 * ptx_tex.c: the executor's texture fetches (`tex.1d/2d/3d`): a texture
 * object's descriptor (ptx_tex.h) read through the launch's device()
 * mapping, its coordinates normalized or not, the address modes wrap,
 * clamp, mirror and border, point and linear filtering, and the read
 * modes (element type, or 8- and 16-bit integers as normalized floats).
 *
 * Linear filtering follows the CUDA programming guide's texture-fetching
 * appendix: x - 0.5 split into a texel index and a fraction, the fraction
 * kept, as the hardware keeps it, in 9-bit fixed point with 8 fractional
 * bits, then the 2^dims neighbours weighted by it.
 * Invariants: a fetch only reads device memory, through device(); every
 * texel address it forms is inside [0, width) x [0, height) x [0, depth)
 * once the address mode is applied (border texels are not read).
 */
#include "ptx_tex.h"

#include <assert.h>
#include <math.h>
#include <string.h>

static float tex_half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
    if (exp == 0x1f)
        bits = sign | 0x7f800000u | (man << 13);
    else if (exp)
        bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (!man)
        bits = sign;
    else { /* subnormal: normalise */
        exp = 113;
        while (!(man & 0x400u)) {
            man <<= 1;
            exp--;
        }
        bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The texel index i of a dimension of n texels under an address mode; false: a border texel. */
static bool tex_index(int64_t *i, uint64_t n, uint32_t mode, bool normalized)
{
    int64_t m = (int64_t)n;
    if (!normalized && (mode == FC_TEX_WRAP || mode == FC_TEX_MIRROR))
        mode = FC_TEX_CLAMP; /* wrap and mirror need normalized coordinates */
    switch (mode) {
    case FC_TEX_WRAP: *i = ((*i % m) + m) % m; return true;
    case FC_TEX_MIRROR: {
        int64_t k = ((*i % (2 * m)) + 2 * m) % (2 * m);
        *i = k < m ? k : 2 * m - 1 - k;
        return true;
    }
    case FC_TEX_BORDER: return *i >= 0 && *i < m;
    default: *i = *i < 0 ? 0 : *i >= m ? m - 1 : *i; return true;
    }
}

/* One channel's value as the fetch returns it: a float, or the integer's bits. */
static uint32_t tex_channel(const fc_tex_desc *d, const unsigned char *p, bool float_result)
{
    uint32_t raw = 0;
    memcpy(&raw, p, d->channel_bytes);
    unsigned bits = 8 * d->channel_bytes;
    int32_t s = bits == 32 ? (int32_t)raw : (int32_t)(raw << (32 - bits)) >> (32 - bits);
    float f;
    switch (d->kind) {
    case FC_TEX_FLOAT: return raw;
    case FC_TEX_HALF: f = tex_half((uint16_t)raw); break;
    case FC_TEX_SINT:
        if (!float_result)
            return (uint32_t)s;
        f = bits == 32 ? (float)s : fmaxf((float)s / (float)((1u << (bits - 1)) - 1), -1.0f);
        break;
    default:
        if (!float_result)
            return raw;
        f = bits == 32 ? (float)raw : (float)raw / (float)((1ull << bits) - 1);
    }
    uint32_t out;
    memcpy(&out, &f, sizeof out);
    return out;
}

/* Texel (i, j, k)'s four channels (missing ones read 0, alpha 1). */
static int tex_texel(const struct fakecuda_launch *L, const fc_tex_desc *d, const int64_t at[3], bool float_result,
                     uint32_t out[4])
{
    int64_t idx[3] = {at[0], at[1], at[2]};
    const uint64_t n[3] = {d->width, d->height, d->depth};
    for (unsigned k = 0; k < 3; k++)
        if (!tex_index(&idx[k], n[k], k < d->dims ? d->address[k] : FC_TEX_CLAMP, d->normalized_coords)) {
            memcpy(out, d->border, 4 * sizeof *out);
            return FAKECUDA_KERNEL_OK;
        }
    for (unsigned k = 0; k < 3; k++)
        assert(idx[k] >= 0 && (uint64_t)idx[k] < n[k] && "an address mode keeps a texel index inside its dimension");
    uint32_t elem = d->channel_bytes * d->channels;
    uint64_t a = d->data + (uint64_t)idx[2] * d->slice + (uint64_t)idx[1] * d->pitch + (uint64_t)idx[0] * elem;
    const unsigned char *p = L->device(a, elem);
    if (!p)
        return FAKECUDA_KERNEL_ILLEGAL_ADDRESS;
    float one = 1.0f;
    out[0] = out[1] = out[2] = 0;
    memcpy(&out[3], &one, sizeof one);
    if (!float_result)
        out[3] = 1;
    for (unsigned c = 0; c < d->channels; c++)
        out[c] = tex_channel(d, p + c * d->channel_bytes, float_result);
    return FAKECUDA_KERNEL_OK;
}

static float tex_f(uint32_t v)
{
    float f;
    memcpy(&f, &v, sizeof f);
    return f;
}

int fc_ptx_tex_fetch(const struct fakecuda_launch *L, uint64_t handle, unsigned dims, const uint32_t coord[3],
                     bool int_coords, bool float_result, uint32_t out[4])
{
    const fc_tex_desc *dp = L->device(handle, sizeof *dp);
    if (!dp || dp->magic != FC_TEX_MAGIC || dp->dims != dims)
        return FAKECUDA_KERNEL_ILLEGAL_ADDRESS;
    fc_tex_desc d = *dp;
    const uint64_t n[3] = {d.width, d.height, d.depth};
    int64_t base[3] = {0, 0, 0};
    float frac[3] = {0, 0, 0};
    bool linear = d.filter == FC_TEX_LINEAR && !int_coords && float_result;
    for (unsigned k = 0; k < dims; k++) {
        if (int_coords) {
            base[k] = (int32_t)coord[k];
            continue;
        }
        float x = tex_f(coord[k]) * (d.normalized_coords ? (float)n[k] : 1.0f);
        if (linear) {
            x -= 0.5f;
            float fl = floorf(x);
            frac[k] = roundf((x - fl) * 256.0f) / 256.0f; /* 1.8 fixed point */
            x = fl;
        }
        /* bounded so the conversion is defined; every address mode maps it inside */
        base[k] = isfinite(x) ? (int64_t)floorf(fmaxf(fminf(x, 0x1p40f), -0x1p40f)) : 0;
    }
    if (!linear)
        return tex_texel(L, &d, base, float_result, out);
    float acc[4] = {0, 0, 0, 0};
    for (unsigned corner = 0; corner < (1u << dims); corner++) {
        int64_t at[3] = {base[0], base[1], base[2]};
        float w = 1.0f;
        for (unsigned k = 0; k < dims; k++) {
            bool up = corner >> k & 1;
            at[k] += up;
            w *= up ? frac[k] : 1.0f - frac[k];
        }
        uint32_t t[4];
        int r = tex_texel(L, &d, at, true, t);
        if (r != FAKECUDA_KERNEL_OK)
            return r;
        for (unsigned c = 0; c < 4; c++)
            acc[c] += w * tex_f(t[c]);
    }
    memcpy(out, acc, sizeof acc);
    return FAKECUDA_KERNEL_OK;
}

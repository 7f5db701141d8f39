/*
 * ptx_tex.h: texture objects as the PTX executor samples them (`tex`).
 *
 * A texture object's handle is the device address of one fc_tex_desc that
 * fakecuda (texture.c) writes into device memory when the object is made,
 * so the executor reaches a texture, like every other byte, through the
 * launch's device() mapping, and depends on nothing else of fakecuda.
 * Invariants: a descriptor is written once, before the handle is handed
 * out, and never changed; its texels lie inside one allocation (its
 * array's or the program's linear memory); a handle that does not name a
 * descriptor with the magic is an illegal address, never a crash.
 */
#ifndef FC_PTX_TEX_H
#define FC_PTX_TEX_H

#include "../fakecuda_kernel.h"

#include <stdbool.h>
#include <stdint.h>

#define FC_TEX_MAGIC 0x54584346u /* "FCXT" */

/* Element kinds (the driver's CUarray_format, by class). */
enum { FC_TEX_UINT, FC_TEX_SINT, FC_TEX_FLOAT, FC_TEX_HALF };
/* Address modes and filters: the driver's CUaddress_mode / CUfilter_mode values. */
enum { FC_TEX_WRAP, FC_TEX_CLAMP, FC_TEX_MIRROR, FC_TEX_BORDER };
enum { FC_TEX_POINT, FC_TEX_LINEAR };

typedef struct fc_tex_desc {
    uint32_t magic;
    uint32_t kind;          /* FC_TEX_UINT ... */
    uint32_t channel_bytes; /* 1, 2 or 4 */
    uint32_t channels;      /* 1, 2 or 4 */
    uint32_t dims;          /* 1, 2 or 3 */
    uint32_t filter;        /* FC_TEX_POINT or FC_TEX_LINEAR */
    uint32_t normalized_coords;
    uint32_t read_as_integer; /* 8- and 16-bit integers read as integers, not [0, 1] / [-1, 1] floats */
    uint32_t address[3];      /* per dimension */
    float border[4];
    uint64_t owner;                /* fakecuda's object for it (checked by fakecuda, not here) */
    uint64_t data;                 /* device address of texel (0, 0, 0) */
    uint64_t width, height, depth; /* texels; 1 for an unused dimension */
    uint64_t pitch, slice;         /* bytes from a row to the next, from a slice to the next */
} fc_tex_desc;

/* One fetch: coordinates (floats, or integer texel coordinates when
   int_coords) for dims dimensions; out receives four 32-bit results,
   floats when float_result, else integers. Returns FAKECUDA_KERNEL_OK or
   the fault. */
int fc_ptx_tex_fetch(const struct fakecuda_launch *launch, uint64_t handle, unsigned dims, const uint32_t coord[3],
                     bool int_coords, bool float_result, uint32_t out[4]);

#endif

/* fuzz_image: the kernel image reader (core/image.h) on arbitrary bytes.
 * The first byte says how the rest is read: bit 0, with the input's size
 * as the limit (else with none, fetches past the input failing); bit 1,
 * with base 0, so that a wrapper's pointer is an offset into the input;
 * bit 2, with directions (ct_image_read_directions, as every load is read).
 * Every query is then asked, and its answer held to image.h's promises
 * (each kept kernel's parameter layout among them, and its directions for
 * every device, each a ct_ptx_dir). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "ptx.h"

static void check_describe(const ct_image *img)
{
    static char big[8192];
    char small[16];
    size_t n = ct_image_describe(img, big, sizeof big);
    if (n == 0 || ct_image_describe(img, small, sizeof small) != n || ct_image_describe(img, NULL, 0) != n)
        abort();
    if ((n < sizeof big && strlen(big) != n) || strlen(small) != (n < sizeof small ? n : sizeof small - 1))
        abort();
}

/* A kernel's layout: -1, or a count whose kept parameters each lie after
 * the one before, within the parameter space; asked with less room, the
 * same count and the same first ones. */
static void check_params(const ct_image *img, const char *name)
{
    static ct_image_param v[CT_IMAGE_MAX_PARAMS + 1], few[2];
    int n = ct_image_kernel_params(img, name, v, CT_IMAGE_MAX_PARAMS + 1);
    if (n < -1 || n > CT_IMAGE_MAX_PARAMS)
        abort();
    uint64_t end = 0;
    for (int i = 0; i < n; i++) {
        if (v[i].offset < end)
            abort();
        end = (uint64_t)v[i].offset + v[i].size;
        if (end > CT_IMAGE_PARAM_SPACE)
            abort();
    }
    few[1] = (ct_image_param){7, 7};
    if (ct_image_kernel_params(img, name, few, 1) != n || (n > 0 && memcmp(few, v, sizeof *v) != 0) ||
        few[1].offset != 7 || few[1].size != 7)
        abort();
}

static void check(const ct_image *img, const ct_image_bytes *in, bool limited)
{
    if (img->n_entries > CT_IMAGE_MAX_ENTRIES || img->n_entries > img->entries_total ||
        img->n_kernels > CT_IMAGE_MAX_KERNELS || img->n_kernels > img->kernels_total)
        abort();
    /* read whole within a limit, an image lies inside it */
    if (limited && img->status == CT_IMAGE_OK && img->form != CT_IMAGE_WRAPPER && img->bytes > in->n)
        abort();
    for (size_t i = 0; i < img->n_kernels; i++) {
        bool known = false;
        if (strlen(img->kernels[i]) > CT_IMAGE_NAME_MAX || !ct_image_has_kernel(img, img->kernels[i], &known) || !known)
            abort();
        check_params(img, img->kernels[i]);
    }
    if (ct_image_kernel_params(img, "", NULL, 0) != -1 && !ct_image_has_kernel(img, "", NULL))
        abort();
    static const unsigned ccs[] = {0, 75, 80, 86, 90, 100, 103, 120, 121};
    for (size_t i = 0; i < sizeof ccs / sizeof *ccs; i++) {
        ct_image_fit fit = ct_image_fit_for(img, ccs[i]);
        if (fit > CT_FIT_NONE || (img->status != CT_IMAGE_OK && fit != CT_FIT_UNKNOWN))
            abort();
    }
    check_describe(img);
}

/* Every kept kernel's directions, on devices of every capability cutaint
 * meets: -1, or that many values each a ct_ptx_dir. */
static void check_directions(const ct_image *img)
{
    static const unsigned ccs[] = {50, 70, 80, 86, 89, 90, 100, 120};
    uint8_t dirs[64];
    for (size_t k = 0; k < img->n_kernels; k++)
        for (size_t c = 0; c < sizeof ccs / sizeof *ccs; c++) {
            int n = ct_image_kernel_directions(img, img->kernels[k], ccs[c], dirs, sizeof dirs);
            if (n < -1 || (n >= 0 && !img->directions))
                abort();
            for (int i = 0; i < n && i < (int)sizeof dirs; i++)
                if (dirs[i] > CT_PTX_BOTH)
                    abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    bool limited = data[0] & 1, at_zero = data[0] & 2, directions = data[0] & 4;
    /* a copy of its own, so that AddressSanitizer sees a read past the end */
    uint8_t *copy = malloc(size - 1 ? size - 1 : 1);
    if (!copy)
        abort();
    memcpy(copy, data + 1, size - 1);
    ct_image_bytes in = {copy, size - 1};
    ct_image img;
    uint64_t limit = limited ? in.n : 0;
    uint64_t zero = 0;
    ct_image_status st = directions
                             ? ct_image_read_directions(&img, ct_image_fetch_bytes, &in, limit, at_zero ? &zero : NULL)
                         : at_zero ? ct_image_read_at(&img, ct_image_fetch_bytes, &in, limit, 0)
                                   : ct_image_read(&img, ct_image_fetch_bytes, &in, limit);
    if (st != img.status || st > CT_IMAGE_MALFORMED)
        abort();
    check(&img, &in, limited);
    check_directions(&img);
    ct_image_free(&img);
    free(copy);
    return 0;
}

/*
 * test_image.c - kernel images read without the driver (core/image.h).
 *
 * Suite image: images made here, byte by byte (fatbin containers, cubins,
 * PTX, wrappers), whole and broken.  Suite image_nvcc: the images
 * tests/unit/meson.build has nvcc build from image_kernels.cu, found in
 * CT_IMAGE_DIR; meson reports it skipped where there is no nvcc.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "image.h"
#include "ptx.h"

/* ---- bytes ------------------------------------------------------------------ */

typedef struct blob {
    uint8_t *p;
    size_t n, cap;
} blob;

static void put(blob *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        cr_assert(b->p);
    }
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put_zero(blob *b, size_t n)
{
    static const uint8_t zero[64];
    for (; n > sizeof zero; n -= sizeof zero)
        put(b, zero, sizeof zero);
    put(b, zero, n);
}

static void set_le(blob *b, size_t at, uint64_t v, unsigned bytes)
{
    cr_assert(at + bytes <= b->n);
    for (unsigned i = 0; i < bytes; i++)
        b->p[at + i] = (uint8_t)(v >> (8 * i));
}

static void put_le(blob *b, uint64_t v, unsigned bytes)
{
    put_zero(b, bytes);
    set_le(b, b->n - bytes, v, bytes);
}

static uint64_t get_le(const blob *b, size_t at, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v |= (uint64_t)b->p[at + i] << (8 * i);
    return v;
}

static void align(blob *b, size_t to)
{
    put_zero(b, (to - b->n % to) % to);
}

static blob copy_of(const blob *b)
{
    blob c = {0};
    put(&c, b->p, b->n);
    return c;
}

static void blob_free(blob *b)
{
    free(b->p);
    *b = (blob){0};
}

/* ---- fetching ------------------------------------------------------------------ */

/* Serves the first n bytes of p and fails past them, counting what it hands out. */
typedef struct source {
    const uint8_t *p;
    uint64_t n;
    uint64_t fetched;
} source;

static bool fetch(void *ctx, uint64_t off, void *dst, size_t len)
{
    source *s = ctx;
    if (off > s->n || len > s->n - off)
        return false;
    memcpy(dst, s->p + off, len);
    s->fetched += len;
    return true;
}

static ct_image_status read_blob(ct_image *img, const blob *b, uint64_t limit)
{
    source s = {b->p, b->n, 0};
    return ct_image_read(img, fetch, &s, limit);
}

/* The image's bytes as far as readable serves them, no limit given. */
static ct_image_status read_readable(ct_image *img, const blob *b, uint64_t readable)
{
    source s = {b->p, readable, 0};
    return ct_image_read(img, fetch, &s, 0);
}

static char *describe(const ct_image *img)
{
    static char text[1024];
    size_t want = ct_image_describe(img, text, sizeof text);
    cr_assert_lt(want, sizeof text);
    cr_assert_eq(strlen(text), want);
    return text;
}

static bool has(const ct_image *img, const char *name)
{
    bool known = false;
    bool found = ct_image_has_kernel(img, name, &known);
    cr_assert(known, "whether %s is there is known", name);
    return found;
}

/* ---- making images -------------------------------------------------------------- */

#define FLAGS_BASE 0x11u /* what nvcc 13.0 sets on every entry (docs/IMAGES.md) */
#define FLAG_LZ4 0x2000u
#define FLAG_ZSTD 0x8000u
#define FLAG_SPECIFIC 0x100000u
#define FLAG_FAMILY 0x200000u

typedef struct entry_spec {
    uint16_t kind; /* 1 PTX, 2 ELF, 8 LTO-IR */
    uint32_t arch;
    uint64_t flags;      /* besides FLAGS_BASE */
    const blob *payload; /* as stored: a zstd frame when flags say so */
    uint32_t compressed; /* 0: payload->n when compressed */
    uint64_t inflated;
} entry_spec;

static void put_entry(blob *b, const entry_spec *e)
{
    size_t padded = (e->payload->n + 7) / 8 * 8;
    bool packed = e->flags & (FLAG_LZ4 | FLAG_ZSTD);
    put_le(b, e->kind, 2);
    put_le(b, 0x0101, 2);
    put_le(b, 64, 4);
    put_le(b, padded, 8);
    put_le(b, packed ? (e->compressed ? e->compressed : e->payload->n) : 0, 4);
    put_le(b, e->kind == 1 ? 64 : 0, 4);
    put_le(b, e->kind == 1 ? 0 : 8, 2);
    put_le(b, e->kind == 1 ? 9 : 1, 2);
    put_le(b, e->arch, 4);
    put_le(b, 0, 8); /* object name offset and length */
    put_le(b, FLAGS_BASE | e->flags, 8);
    put_le(b, 0, 8);
    put_le(b, packed ? e->inflated : 0, 8);
    put(b, e->payload->p, e->payload->n);
    put_zero(b, padded - e->payload->n);
}

/* The container: magic, version 1, header size 16, the entries' size. */
static blob fatbin(const entry_spec *e, size_t n)
{
    blob entries = {0}, f = {0};
    for (size_t i = 0; i < n; i++)
        put_entry(&entries, &e[i]);
    put_le(&f, 0xba55ed50u, 4);
    put_le(&f, 1, 2);
    put_le(&f, 16, 2);
    put_le(&f, entries.n, 8);
    put(&f, entries.p, entries.n);
    blob_free(&entries);
    return f;
}

static blob zstd_frame(const blob *plain, bool with_size)
{
    blob z = {0};
    put_zero(&z, ZSTD_compressBound(plain->n));
    ZSTD_CCtx *c = ZSTD_createCCtx();
    cr_assert(c);
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, with_size);
    size_t n = ZSTD_compress2(c, z.p, z.n, plain->p, plain->n);
    cr_assert(!ZSTD_isError(n));
    ZSTD_freeCCtx(c);
    z.n = n;
    return z;
}

static void put_text(blob *b, const char *const *parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(b, parts[i], strlen(parts[i]));
}

/* PTX text, NUL included, with one .entry per name, as nvcc lays it out. */
static blob ptx(const char *target, const char *const *names, size_t n)
{
    blob t = {0};
    put_text(&t,
             (const char *[]){"//\n// made by test_image.c\n//\n\n.version 9.0\n.target ", target,
                              "\n.address_size 64\n\n"},
             3);
    for (size_t i = 0; i < n; i++)
        put_text(&t,
                 (const char *[]){"\t// .globl\t", names[i], "\n.visible .entry ", names[i], "(\n\t.param .u64 ",
                                  names[i], "_param_0\n)\n{\n\tret;\n}\n"},
                 7);
    put(&t, "", 1);
    return t;
}

/* Where a made cubin keeps what the tests break. */
typedef struct cubin_layout {
    size_t shoff;  /* section headers */
    size_t symtab; /* symbols */
    size_t n_sections;
} cubin_layout;

enum { SEC_SHSTRTAB = 1, SEC_STRTAB, SEC_SYMTAB, SEC_FIRST_TEXT };
#define MAX_SECTIONS 160

typedef struct section {
    uint32_t name, type, link, info;
    uint64_t size, entsize, off;
} section;

static uint32_t add_string(blob *t, const char *prefix, const char *name)
{
    uint32_t at = (uint32_t)t->n;
    put(t, prefix, strlen(prefix));
    put(t, name, strlen(name) + 1);
    return at;
}

static void add_symbol(blob *sym, uint32_t name, uint8_t info, uint16_t shndx)
{
    put_le(sym, name, 4);
    put_le(sym, info, 1);
    put_le(sym, 0x10, 1); /* st_other: what nvcc sets on a kernel */
    put_le(sym, shndx, 2);
    put_le(sym, 0, 8);
    put_le(sym, 16, 8);
}

/* A cubin (ELF ABI 8, as nvcc 13.0 writes them) whose kernels are names:
 * each with .text.<name> and .nv.info.<name>.  Besides them, functions
 * that are no kernels: a device function inside the first kernel's
 * section, "lonely", which has a .text.lonely but no .nv.info.lonely, and
 * "stray", which has a .nv.info.stray but lives in the first kernel's
 * section.  compat: the bytes of a .nv.compat section, or NULL; infos: the
 * bytes of each kernel's .nv.info.<name>, or NULL for 4 zero bytes each. */
static blob cubin_with_info(const char *const *names, size_t n, unsigned arch, const blob *compat, const blob *infos,
                            cubin_layout *lay)
{
    cr_assert(2 * n + SEC_FIRST_TEXT + 3 <= MAX_SECTIONS);
    blob shstr = {0}, str = {0}, sym = {0}, out = {0};
    section sec[MAX_SECTIONS] = {{0}};
    size_t ns = SEC_FIRST_TEXT, info_at[MAX_SECTIONS] = {0}, next_info = 0;
    put(&shstr, "", 1);
    put(&str, "", 1);
    put_zero(&sym, 24);
    sec[SEC_SHSTRTAB] = (section){.name = add_string(&shstr, ".shstrtab", ""), .type = 3};
    sec[SEC_STRTAB] = (section){.name = add_string(&shstr, ".strtab", ""), .type = 3};
    sec[SEC_SYMTAB] =
        (section){.name = add_string(&shstr, ".symtab", ""), .type = 2, .link = SEC_STRTAB, .entsize = 24};
    for (size_t i = 0; i < n; i++) {
        uint16_t text = (uint16_t)ns;
        sec[ns++] = (section){.name = add_string(&shstr, ".text.", names[i]), .type = 1, .size = 16};
        info_at[i] = ns;
        sec[ns++] = (section){.name = add_string(&shstr, ".nv.info.", names[i]),
                              .type = 0x70000000,
                              .link = SEC_SYMTAB,
                              .info = text,
                              .size = infos ? infos[i].n : 4};
        add_symbol(&sym, add_string(&str, "", names[i]), 0x12, text);
        if (i == 0) {
            add_symbol(&sym, add_string(&str, "$", "device_helper"), 0x02, text);
            add_symbol(&sym, add_string(&str, "", "stray"), 0x12, text);
            sec[ns++] = (section){.name = add_string(&shstr, ".nv.info.", "stray"),
                                  .type = 0x70000000,
                                  .link = SEC_SYMTAB,
                                  .size = 4};
        }
    }
    uint16_t lonely = (uint16_t)ns;
    sec[ns++] = (section){.name = add_string(&shstr, ".text.", "lonely"), .type = 1, .size = 16};
    add_symbol(&sym, add_string(&str, "", "lonely"), 0x12, lonely);
    size_t compat_at = ns;
    if (compat)
        sec[ns++] = (section){.name = add_string(&shstr, ".nv.compat", ""), .type = 0x70000086, .size = compat->n};
    sec[SEC_SHSTRTAB].size = shstr.n;
    sec[SEC_STRTAB].size = str.n;
    sec[SEC_SYMTAB].size = sym.n;

    put_zero(&out, 64);
    const blob *tables[] = {&shstr, &str, &sym};
    for (size_t i = 0; i < 3; i++) {
        align(&out, 8);
        sec[SEC_SHSTRTAB + i].off = out.n;
        put(&out, tables[i]->p, tables[i]->n);
    }
    for (size_t i = SEC_FIRST_TEXT; i < ns; i++) {
        align(&out, 8);
        sec[i].off = out.n;
        if (compat && i == compat_at)
            put(&out, compat->p, compat->n);
        else if (infos && next_info < n && i == info_at[next_info])
            put(&out, infos[next_info++].p, sec[i].size);
        else
            put_zero(&out, sec[i].size);
    }
    align(&out, 8);
    lay->shoff = out.n;
    lay->symtab = sec[SEC_SYMTAB].off;
    lay->n_sections = ns;
    for (size_t i = 0; i < ns; i++) {
        put_le(&out, sec[i].name, 4);
        put_le(&out, sec[i].type, 4);
        put_le(&out, 0, 8); /* flags */
        put_le(&out, 0, 8); /* addr */
        put_le(&out, sec[i].off, 8);
        put_le(&out, sec[i].size, 8);
        put_le(&out, sec[i].link, 4);
        put_le(&out, sec[i].info, 4);
        put_le(&out, 1, 8); /* align */
        put_le(&out, sec[i].entsize, 8);
    }
    static const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x41, 8};
    memcpy(out.p, ident, sizeof ident);
    set_le(&out, 16, 2, 2);   /* ET_EXEC */
    set_le(&out, 18, 190, 2); /* EM_CUDA */
    set_le(&out, 20, 1, 4);
    set_le(&out, 40, lay->shoff, 8);
    set_le(&out, 48, 0x06000002u | arch << 8, 4);
    set_le(&out, 52, 64, 2);
    set_le(&out, 54, 56, 2);
    set_le(&out, 58, 64, 2);
    set_le(&out, 60, ns, 2);
    set_le(&out, 62, SEC_SHSTRTAB, 2);
    blob_free(&shstr);
    blob_free(&str);
    blob_free(&sym);
    return out;
}

/* A cubin whose .nv.info.<name> sections are 4 zero bytes: no parameter
 * table this reader knows. */
static blob cubin(const char *const *names, size_t n, unsigned arch, const blob *compat, cubin_layout *lay)
{
    return cubin_with_info(names, n, arch, compat, NULL, lay);
}

static size_t section_at(const cubin_layout *lay, size_t i, size_t field)
{
    return lay->shoff + 64 * i + field;
}

static const char *const kernels3[] = {"_Z4fillPfif", "plain", "_Z5twiceIdEvPT_"};

/* A fatbin of sm_80 SASS and compute_90 PTX, the PTX compressed or not. */
static blob two_entry_fatbin(bool zstd)
{
    cubin_layout lay;
    blob elf = cubin(kernels3, 3, 80, NULL, &lay);
    blob text = ptx("sm_90", kernels3, 3);
    blob z = zstd ? zstd_frame(&text, true) : copy_of(&text);
    entry_spec e[] = {
        {.kind = 2, .arch = 80, .payload = &elf},
        {.kind = 1, .arch = 90, .flags = zstd ? FLAG_ZSTD : 0, .payload = &z, .inflated = text.n},
    };
    blob f = fatbin(e, 2);
    blob_free(&elf);
    blob_free(&text);
    blob_free(&z);
    return f;
}

/* ---- checks ------------------------------------------------------------------- */

/* Kernel name's layout in a is b's, or (partly) unsaid in a (-1). */
static void assert_layout_of(const ct_image *a, const ct_image *b, const char *name, bool unsaid_ok, const char *what)
{
    static ct_image_param x[CT_IMAGE_MAX_PARAMS], y[CT_IMAGE_MAX_PARAMS];
    int n = ct_image_kernel_params(a, name, x, CT_IMAGE_MAX_PARAMS);
    if (n == -1 && unsaid_ok)
        return;
    cr_assert_eq(n, ct_image_kernel_params(b, name, y, CT_IMAGE_MAX_PARAMS), "%s: %s's count", what, name);
    cr_assert(n <= 0 || memcmp(x, y, (size_t)(n < CT_IMAGE_MAX_PARAMS ? n : CT_IMAGE_MAX_PARAMS) * sizeof *x) == 0,
              "%s: %s's layout", what, name);
}

static void assert_same(const ct_image *a, const ct_image *b, const char *what)
{
    cr_assert_eq(a->form, b->form, "%s: form", what);
    cr_assert_eq(a->status, b->status, "%s: status", what);
    cr_assert_eq(a->bytes, b->bytes, "%s: bytes", what);
    cr_assert_eq(a->n_entries, b->n_entries, "%s: entries", what);
    for (size_t i = 0; i < a->n_entries; i++) {
        const ct_image_entry *x = &a->entries[i], *y = &b->entries[i];
        cr_assert(x->kind == y->kind && x->arch == y->arch && x->arch_specific == y->arch_specific &&
                      x->family_specific == y->family_specific && x->compressed == y->compressed &&
                      x->inflated == y->inflated && x->kernels_read == y->kernels_read,
                  "%s: entry %zu", what, i);
    }
    cr_assert_eq(a->n_kernels, b->n_kernels, "%s: kernels", what);
    for (size_t i = 0; i < a->n_kernels; i++) {
        cr_assert_str_eq(a->kernels[i], b->kernels[i], "%s", what);
        assert_layout_of(a, b, a->kernels[i], false, what);
    }
    cr_assert_eq(a->param_conflicts, b->param_conflicts, "%s: conflicts", what);
}

/* Cut at every offset: a limit short of the image is TRUNCATED, never a
 * guess; a fetch that fails from there on is UNREADABLE, or reads the whole
 * image alike when no byte past the cut was needed.  Either way what was
 * kept is a part of the whole's reading. */
static void assert_every_cut(const blob *b, const char *what)
{
    ct_image whole;
    cr_assert_eq(read_blob(&whole, b, b->n), CT_IMAGE_OK, "%s", what);
    cr_assert_eq(whole.bytes, b->n, "%s: its headers state its size", what);
    ct_image img;
    for (size_t k = 1; k < b->n; k++) { /* a limit of 0 is none */
        cr_assert_eq(read_blob(&img, b, k), CT_IMAGE_TRUNCATED, "%s: limit %zu of %zu", what, k, b->n);
        cr_assert_leq(img.n_entries, whole.n_entries, "%s", what);
        for (size_t i = 0; i < img.n_kernels; i++) {
            cr_assert(ct_image_has_kernel(&whole, img.kernels[i], NULL), "%s: %s", what, img.kernels[i]);
            assert_layout_of(&img, &whole, img.kernels[i], true, what); /* a layout read is the whole's */
        }
        cr_assert_eq(ct_image_fit_for(&img, 80), CT_FIT_UNKNOWN, "%s: limit %zu", what, k);
        ct_image_free(&img);
    }
    for (size_t k = 0; k < b->n; k++) {
        ct_image_status st = read_readable(&img, b, k);
        if (st == CT_IMAGE_OK)
            assert_same(&img, &whole, what);
        else
            cr_assert_eq(st, CT_IMAGE_UNREADABLE, "%s: readable %zu of %zu: %d", what, k, b->n, st);
        ct_image_free(&img);
    }
    ct_image_free(&whole);
}

static void assert_fits(const ct_image *img, const ct_image_fit want[4], const char *what)
{
    static const unsigned cc[4] = {80, 86, 90, 100};
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(ct_image_fit_for(img, cc[i]), want[i], "%s on cc %u: %d", what, cc[i],
                     ct_image_fit_for(img, cc[i]));
}

/* fits, for short tables */
#define FS CT_FIT_SASS
#define FP CT_FIT_PTX
#define FN CT_FIT_NONE

/* ---- suite image: made here ------------------------------------------------------ */

Test(image, fatbin_of_sass_and_ptx)
{
    blob f = two_entry_fatbin(false);
    ct_image img;
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
    cr_assert_eq(img.form, CT_IMAGE_FATBIN);
    cr_assert_eq(img.bytes, f.n);
    cr_assert_eq(img.n_entries, 2);
    cr_assert_eq(img.entries[0].kind, CT_ENTRY_SASS);
    cr_assert_eq(img.entries[0].arch, 80);
    cr_assert_eq(img.entries[1].kind, CT_ENTRY_PTX);
    cr_assert_eq(img.entries[1].arch, 90);
    cr_assert(!img.entries[1].compressed);
    cr_assert_eq(img.n_kernels, 3, "distinct over both entries");
    for (size_t i = 0; i < 3; i++)
        cr_assert(has(&img, kernels3[i]), "%s", kernels3[i]);
    cr_assert(!has(&img, "lonely"), "a function with no .nv.info of its own");
    cr_assert(!has(&img, "$device_helper"), "a device function in a kernel's section");
    cr_assert(!has(&img, "stray"), "a function with a .nv.info but in another's section");
    cr_assert(!has(&img, "_Z5otherv"));
    assert_fits(&img, (ct_image_fit[]){FS, FS, FP, FP}, "sm_80 + compute_90");
    cr_assert_str_eq(describe(&img), "sm_80 code and compute_90 PTX");
    ct_image_free(&img);
    blob_free(&f);
}

Test(image, zstd_entry_is_inflated)
{
    blob f = two_entry_fatbin(true);
    ct_image img;
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
    cr_assert(img.entries[1].compressed && img.entries[1].inflated && img.entries[1].kernels_read);
    cr_assert(has(&img, "_Z4fillPfif"));
    cr_assert_str_eq(describe(&img), "sm_80 code and compute_90 PTX");
    ct_image_free(&img);
    blob_free(&f);
}

Test(image, cut_at_every_offset)
{
    blob f = two_entry_fatbin(true);
    assert_every_cut(&f, "fatbin");
    blob_free(&f);
    cubin_layout lay;
    blob c = cubin(kernels3, 3, 80, NULL, &lay);
    assert_every_cut(&c, "cubin");
    blob_free(&c);
    blob t = ptx("sm_80", kernels3, 3);
    assert_every_cut(&t, "ptx");
    blob_free(&t);
}

Test(image, sizes_that_lie)
{
    blob f = two_entry_fatbin(false);
    ct_image img;
    struct {
        size_t at;
        unsigned bytes;
        uint64_t value;
        ct_image_status want;
        const char *what;
    } cases[] = {
        {8, 8, 1 << 20, CT_IMAGE_TRUNCATED, "container larger than the limit"},
        {4, 2, 2, CT_IMAGE_MALFORMED, "container version 2"},
        {6, 2, 8, CT_IMAGE_MALFORMED, "container header shorter than its own fields"},
        {8, 8, UINT64_MAX - 8, CT_IMAGE_MALFORMED, "container size wrapping past 2^64"},
        {16 + 4, 4, 32, CT_IMAGE_MALFORMED, "entry header shorter than its fields"},
        {16 + 4, 4, 1u << 30, CT_IMAGE_MALFORMED, "entry header past the container"},
        {16 + 8, 8, 1u << 30, CT_IMAGE_MALFORMED, "entry payload past the container"},
        {16 + 8, 8, 8, CT_IMAGE_MALFORMED, "entry payload too short for its ELF"},
        {16 + 40, 8, FLAGS_BASE | FLAG_LZ4 | FLAG_ZSTD, CT_IMAGE_MALFORMED, "two compressions"},
        {16 + 40, 8, FLAGS_BASE | FLAG_ZSTD, CT_IMAGE_MALFORMED, "compressed, with no compressed size"},
        {16 + 40, 8, FLAGS_BASE | FLAG_SPECIFIC | FLAG_FAMILY, CT_IMAGE_MALFORMED, "sm_80a and sm_80f"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        blob b = copy_of(&f);
        set_le(&b, cases[i].at, cases[i].value, cases[i].bytes);
        cr_assert_eq(read_blob(&img, &b, b.n), cases[i].want, "%s: %d", cases[i].what, img.status);
        cr_assert_eq(ct_image_fit_for(&img, 80), CT_FIT_UNKNOWN, "%s", cases[i].what);
        bool known = true;
        cr_assert(!ct_image_has_kernel(&img, "_Z5otherv", &known) && !known, "%s", cases[i].what);
        ct_image_free(&img);
        blob_free(&b);
    }
    /* a container larger than what can be read, with no limit given */
    blob b = copy_of(&f);
    set_le(&b, 8, get_le(&b, 8, 8) + 64, 8);
    cr_assert_eq(read_blob(&img, &b, 0), CT_IMAGE_UNREADABLE);
    cr_assert_eq(img.n_entries, 2, "what was read is kept");
    cr_assert(ct_image_has_kernel(&img, "_Z4fillPfif", NULL));
    cr_assert(strstr(describe(&img), "unreadable, as far as read: sm_80 code and compute_90 PTX"), "%s",
              describe(&img));
    ct_image_free(&img);
    /* bytes left over that are no entry header */
    set_le(&b, 8, get_le(&f, 8, 8) + 8, 8);
    put_zero(&b, 8);
    cr_assert_eq(read_blob(&img, &b, 0), CT_IMAGE_MALFORMED);
    ct_image_free(&img);
    blob_free(&b);
    blob_free(&f);
}

Test(image, long_header_past_the_limit)
{
    /* found by fuzz_image: a container whose header alone runs past the
     * limit, its bytes never needed, is cut short all the same */
    blob f = fatbin(NULL, 0);
    set_le(&f, 6, 3600, 2);
    put_zero(&f, 64);
    ct_image img;
    cr_assert_eq(read_blob(&img, &f, f.n), CT_IMAGE_TRUNCATED);
    cr_assert_eq(img.bytes, 3600);
    ct_image_free(&img);
    blob_free(&f);
}

Test(image, zero_entries)
{
    blob f = fatbin(NULL, 0);
    ct_image img;
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
    cr_assert_eq(img.form, CT_IMAGE_FATBIN);
    cr_assert_eq(img.n_entries, 0);
    cr_assert_eq(img.bytes, 16);
    assert_fits(&img, (ct_image_fit[]){FN, FN, FN, FN}, "empty");
    cr_assert(!has(&img, "_Z4fillPfif"));
    cr_assert_str_eq(describe(&img), "no code and no PTX");
    ct_image_free(&img);
    blob_free(&f);
}

/* An entry whose payload is a zstd frame of plain, its header claiming
 * `claim` bytes inflated. */
static ct_image_status read_claiming(const blob *plain, bool frame_says_size, uint64_t claim, ct_image *img)
{
    blob z = zstd_frame(plain, frame_says_size);
    entry_spec e = {.kind = 1, .arch = 90, .flags = FLAG_ZSTD, .payload = &z, .inflated = claim};
    blob f = fatbin(&e, 1);
    ct_image_status st = read_blob(img, &f, 0);
    blob_free(&f);
    blob_free(&z);
    return st;
}

Test(image, inflated_size_claims)
{
    blob text = ptx("sm_90", kernels3, 3);
    ct_image img;
    cr_assert_eq(read_claiming(&text, true, text.n, &img), CT_IMAGE_OK);
    cr_assert(img.entries[0].inflated && has(&img, "plain"));
    ct_image_free(&img);

    /* a frame that says its size, against a header saying another */
    cr_assert_eq(read_claiming(&text, true, 1ull << 40, &img), CT_IMAGE_MALFORMED, "huge claim");
    ct_image_free(&img);
    cr_assert_eq(read_claiming(&text, true, text.n - 1, &img), CT_IMAGE_MALFORMED, "short claim");
    ct_image_free(&img);

    /* a frame that does not say: too much to inflate is left compressed,
     * its kernels unknown, without asking for the memory */
    cr_assert_eq(read_claiming(&text, false, 1ull << 40, &img), CT_IMAGE_OK);
    cr_assert(img.entries[0].compressed && !img.entries[0].inflated && !img.entries[0].kernels_read);
    cr_assert(!img.out_of_memory);
    bool known = true;
    cr_assert(!ct_image_has_kernel(&img, "plain", &known) && !known);
    assert_fits(&img, (ct_image_fit[]){FN, FN, FP, FP}, "its arch is known all the same");
    cr_assert_str_eq(describe(&img), "no code and compute_90 PTX; kernels not read from compressed compute_90");
    ct_image_free(&img);
    cr_assert_eq(read_claiming(&text, false, (uint64_t)CT_IMAGE_MAX_INFLATED + 1, &img), CT_IMAGE_OK);
    cr_assert(!img.entries[0].inflated);
    ct_image_free(&img);

    /* ... and what inflates to more or less than claimed contradicts it */
    cr_assert_eq(read_claiming(&text, false, text.n + 1, &img), CT_IMAGE_MALFORMED, "inflates to less");
    ct_image_free(&img);
    cr_assert_eq(read_claiming(&text, false, text.n - 1, &img), CT_IMAGE_MALFORMED, "inflates to more");
    ct_image_free(&img);

    /* compressed bytes past zstd's bound for the claimed size are not even fetched */
    blob z = zstd_frame(&text, true);
    blob big = copy_of(&z);
    put_zero(&big, 64 << 10);
    entry_spec e = {.kind = 1, .arch = 90, .flags = FLAG_ZSTD, .payload = &big, .inflated = text.n};
    blob f = fatbin(&e, 1);
    source s = {f.p, f.n, 0};
    cr_assert_eq(ct_image_read(&img, fetch, &s, 0), CT_IMAGE_MALFORMED);
    cr_assert_lt(s.fetched, 1024, "fetched %llu", (unsigned long long)s.fetched);
    ct_image_free(&img);
    blob_free(&f);
    blob_free(&big);
    blob_free(&z);
    blob_free(&text);
}

Test(image, corrupt_zstd_frames)
{
    blob text = ptx("sm_90", kernels3, 3);
    blob z = zstd_frame(&text, true);
    struct {
        size_t at;
        uint8_t value;
        const char *what;
    } cases[] = {
        {3, 0xfe, "not zstd's magic"},
        {4, 0xff, "a frame descriptor with the reserved bit"},
    };
    ct_image img;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        blob bad = copy_of(&z);
        bad.p[cases[i].at] = cases[i].value;
        entry_spec e = {.kind = 1, .arch = 90, .flags = FLAG_ZSTD, .payload = &bad, .inflated = text.n};
        blob f = fatbin(&e, 1);
        cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_MALFORMED, "%s", cases[i].what);
        ct_image_free(&img);
        blob_free(&f);
        blob_free(&bad);
    }
    /* the frame cut short: its header's compressed size less than the frame */
    entry_spec e =
        {.kind = 1, .arch = 90, .flags = FLAG_ZSTD, .payload = &z, .inflated = text.n, .compressed = (uint32_t)z.n - 5};
    blob f = fatbin(&e, 1);
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_MALFORMED, "cut short");
    ct_image_free(&img);
    blob_free(&f);
    /* its blocks overwritten */
    blob bad = copy_of(&z);
    memset(bad.p + 8, 0xff, bad.n - 8);
    e.payload = &bad;
    e.compressed = 0;
    f = fatbin(&e, 1);
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_MALFORMED, "garbage blocks");
    ct_image_free(&img);
    blob_free(&f);
    blob_free(&bad);
    blob_free(&z);
    blob_free(&text);
}

Test(image, lz4_and_other_kinds_are_not_read)
{
    blob text = ptx("sm_90", kernels3, 3);
    blob lto = {0};
    put(&lto, "\xe5\x6f\x52\xd9 not a frame", 16);
    entry_spec e[] = {
        {.kind = 1, .arch = 90, .flags = FLAG_LZ4, .payload = &text, .inflated = 4 * text.n},
        {.kind = 8, .arch = 80, .flags = FLAG_ZSTD | 0x10000, .payload = &lto, .inflated = 64},
    };
    blob f = fatbin(e, 2);
    ct_image img;
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
    cr_assert_eq(img.entries[0].kind, CT_ENTRY_PTX);
    cr_assert(img.entries[0].compressed && !img.entries[0].inflated);
    cr_assert_eq(img.entries[1].kind, CT_ENTRY_OTHER);
    bool known = true;
    cr_assert(!ct_image_has_kernel(&img, "plain", &known) && !known, "LZ4 is not inflated");
    cr_assert_str_eq(describe(&img), "no code and compute_90 PTX, and 1 entry of another kind; "
                                     "kernels not read from compressed compute_90");
    assert_fits(&img, (ct_image_fit[]){FN, FN, FP, FP}, "LZ4 PTX");
    ct_image_free(&img);
    blob_free(&f);
    blob_free(&lto);
    blob_free(&text);
}

/* ---- fit and describe ---------------------------------------------------------- */

static blob one_entry(uint16_t kind, unsigned arch, uint64_t flags)
{
    blob payload = kind == 1 ? ptx("sm_80", kernels3, 1) : cubin(kernels3, 1, arch, NULL, &(cubin_layout){0});
    entry_spec e = {.kind = kind, .arch = arch, .flags = flags, .payload = &payload};
    blob f = fatbin(&e, 1);
    blob_free(&payload);
    return f;
}

Test(image, fit_rule)
{
    static const struct {
        uint16_t kind;
        unsigned arch;
        uint64_t flags;
        unsigned cc;
        ct_image_fit want;
    } cases[] = {
        {2, 80, 0, 80, CT_FIT_SASS},
        {2, 80, 0, 86, CT_FIT_SASS},
        {2, 80, 0, 89, CT_FIT_SASS},
        {2, 80, 0, 90, CT_FIT_NONE},
        {2, 86, 0, 80, CT_FIT_NONE},
        {2, 86, 0, 87, CT_FIT_SASS},
        {2, 90, FLAG_SPECIFIC, 90, CT_FIT_SASS},
        {2, 90, FLAG_SPECIFIC, 100, CT_FIT_NONE},
        {2, 100, FLAG_SPECIFIC, 103, CT_FIT_NONE},
        {2, 100, 0, 103, CT_FIT_SASS},
        {2, 100, FLAG_FAMILY, 103, CT_FIT_SASS},
        {2, 100, FLAG_FAMILY, 110, CT_FIT_NONE},
        {2, 100, 0, 120, CT_FIT_NONE},
        {2, 120, 0, 121, CT_FIT_SASS},
        {1, 80, 0, 75, CT_FIT_NONE},
        {1, 80, 0, 80, CT_FIT_PTX},
        {1, 80, 0, 120, CT_FIT_PTX},
        {1, 90, FLAG_SPECIFIC, 90, CT_FIT_PTX},
        {1, 90, FLAG_SPECIFIC, 100, CT_FIT_NONE},
        {1, 100, FLAG_FAMILY, 103, CT_FIT_PTX},
        {1, 100, FLAG_FAMILY, 120, CT_FIT_NONE},
        {2, 0, 0, 80, CT_FIT_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        blob f = one_entry(cases[i].kind, cases[i].arch, cases[i].flags);
        ct_image img;
        cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
        cr_assert_eq(ct_image_fit_for(&img, cases[i].cc), cases[i].want, "case %zu: %s on cc %u", i, describe(&img),
                     cases[i].cc);
        ct_image_free(&img);
        blob_free(&f);
    }
}

Test(image, describe_texts)
{
    cubin_layout lay;
    blob e70 = cubin(kernels3, 1, 70, NULL, &lay), e80 = cubin(kernels3, 1, 80, NULL, &lay),
         e90 = cubin(kernels3, 1, 90, NULL, &lay), t = ptx("sm_90", kernels3, 1);
    struct {
        entry_spec e[4];
        size_t n;
        const char *want;
    } cases[] = {
        {{{2, 80, 0, &e80, 0, 0}, {2, 70, 0, &e70, 0, 0}}, 2, "sm_70 and sm_80 code and no PTX"},
        {{{2, 90, 0, &e90, 0, 0}, {1, 90, 0, &t, 0, 0}}, 2, "sm_90 code and compute_90 PTX"},
        {{{2, 70, 0, &e70, 0, 0}, {2, 80, 0, &e80, 0, 0}, {2, 90, FLAG_SPECIFIC, &e90, 0, 0}, {2, 80, 0, &e80, 0, 0}},
         4,
         "sm_70, sm_80 and sm_90a code and no PTX"},
        {{{1, 90, 0, &t, 0, 0}, {1, 100, FLAG_FAMILY, &t, 0, 0}}, 2, "no code and compute_90 and compute_100f PTX"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        blob f = fatbin(cases[i].e, cases[i].n);
        ct_image img;
        cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
        cr_assert_str_eq(describe(&img), cases[i].want);
        /* a short buffer: cut, terminated, and the length wanted returned */
        char small[8];
        cr_assert_eq(ct_image_describe(&img, small, sizeof small), strlen(cases[i].want));
        cr_assert_eq(strlen(small), sizeof small - 1);
        cr_assert_eq(strncmp(small, cases[i].want, sizeof small - 1), 0);
        cr_assert_eq(ct_image_describe(&img, NULL, 0), strlen(cases[i].want));
        ct_image_free(&img);
        blob_free(&f);
    }
    blob_free(&e70);
    blob_free(&e80);
    blob_free(&e90);
    blob_free(&t);
}

/* ---- the wrapper ---------------------------------------------------------------- */

typedef struct wrapper {
    int magic;
    int version;
    const unsigned long long *data;
    void *filename_or_fatbins;
} wrapper;

/* Serves the process's own memory as the shim does, offsets from base,
 * but only the two regions a test hands it. */
typedef struct regions {
    uintptr_t base;
    const void *at[2];
    size_t n[2];
} regions;

static bool fetch_memory(void *ctx, uint64_t off, void *dst, size_t len)
{
    const regions *r = ctx;
    uintptr_t a = (uintptr_t)(r->base + off);
    for (size_t i = 0; i < 2; i++) {
        uintptr_t lo = (uintptr_t)r->at[i];
        if (a >= lo && a - lo <= r->n[i] && len <= r->n[i] - (a - lo)) {
            memcpy(dst, (const void *)a, len);
            return true;
        }
    }
    return false;
}

Test(image, wrapper)
{
    blob f = two_entry_fatbin(true);
    wrapper w = {0x466243b1, 1, (const unsigned long long *)(void *)f.p, NULL};
    regions r = {(uintptr_t)&w, {&w, f.p}, {sizeof w, f.n}};
    ct_image img;
    cr_assert_eq(ct_image_read_at(&img, fetch_memory, &r, sizeof w, (uintptr_t)&w), CT_IMAGE_OK);
    cr_assert_eq(img.form, CT_IMAGE_WRAPPER);
    cr_assert(img.followed);
    cr_assert_eq(img.wrapped, (uintptr_t)f.p);
    cr_assert_eq(img.bytes, f.n, "the fatbin's size");
    cr_assert_eq(img.n_entries, 2);
    cr_assert(has(&img, "_Z4fillPfif"));
    assert_fits(&img, (ct_image_fit[]){FS, FS, FP, FP}, "wrapped");
    cr_assert_str_eq(describe(&img), "sm_80 code and compute_90 PTX");
    ct_image_free(&img);

    /* without the base its pointer cannot be followed: nothing is guessed */
    cr_assert_eq(ct_image_read(&img, fetch_memory, &r, 0), CT_IMAGE_OK);
    cr_assert_eq(img.form, CT_IMAGE_WRAPPER);
    cr_assert(!img.followed && img.n_entries == 0);
    bool known = true;
    cr_assert(!ct_image_has_kernel(&img, "_Z4fillPfif", &known) && !known);
    cr_assert_eq(ct_image_fit_for(&img, 80), CT_FIT_UNKNOWN);
    cr_assert(strstr(describe(&img), "a fatbin wrapper; its fatbin, at 0x"), "%s", describe(&img));
    ct_image_free(&img);

    for (uint64_t k = 1; k < sizeof w; k++) { /* 0: no limit */
        cr_assert_eq(ct_image_read_at(&img, fetch_memory, &r, k, (uintptr_t)&w), CT_IMAGE_TRUNCATED);
        ct_image_free(&img);
    }
    /* the fatbin the wrapper points at is read to its own stated size */
    r.n[1] = f.n - 16; /* past the padding, into the compressed PTX */
    cr_assert_eq(ct_image_read_at(&img, fetch_memory, &r, sizeof w, (uintptr_t)&w), CT_IMAGE_UNREADABLE);
    ct_image_free(&img);
    r.n[1] = f.n;

    wrapper bad[] = {
        {0x466243b1, 3, w.data, NULL},
        {0x466243b1, 1, NULL, NULL},
        {0x466243b1, 1, (const unsigned long long *)(void *)(f.p + 16), NULL}, /* no container there */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        regions rb = {(uintptr_t)&bad[i], {&bad[i], f.p}, {sizeof bad[i], f.n}};
        cr_assert_eq(ct_image_read_at(&img, fetch_memory, &rb, 0, (uintptr_t)&bad[i]), CT_IMAGE_MALFORMED,
                     "wrapper %zu", i);
        ct_image_free(&img);
    }
    blob_free(&f);
}

/* ---- cubins ---------------------------------------------------------------------- */

Test(image, bare_cubin)
{
    cubin_layout lay;
    blob c = cubin(kernels3, 3, 90, NULL, &lay);
    ct_image img;
    cr_assert_eq(read_blob(&img, &c, 0), CT_IMAGE_OK);
    cr_assert_eq(img.form, CT_IMAGE_CUBIN);
    cr_assert_eq(img.bytes, c.n);
    cr_assert_eq(img.n_entries, 1);
    cr_assert_eq(img.entries[0].kind, CT_ENTRY_SASS);
    cr_assert_eq(img.entries[0].arch, 90, "from e_flags bits 8-15 (ABI 8)");
    cr_assert(has(&img, "plain") && !has(&img, "lonely"));
    cr_assert_str_eq(describe(&img), "sm_90 code and no PTX");
    ct_image_free(&img);
    /* sm_90a: ABI 8 marks it in .nv.compat (attribute 9), not in e_flags */
    blob compat = {0};
    put(&compat,
        "\x02\x02\x01\x00"
        "\x02\x09\x01\x00"
        "\x04\x0b\x08\x00"
        "\0\0\0\0\0\0\0\0",
        20);
    blob specific = cubin(kernels3, 3, 90, &compat, &lay);
    cr_assert_eq(read_blob(&img, &specific, 0), CT_IMAGE_OK);
    cr_assert(img.entries[0].arch_specific);
    cr_assert_eq(ct_image_fit_for(&img, 90), CT_FIT_SASS);
    cr_assert_str_eq(describe(&img), "sm_90a code and no PTX");
    ct_image_free(&img);
    blob_free(&specific);
    compat.p[10] = 9; /* the last record's bytes run past the section */
    specific = cubin(kernels3, 3, 90, &compat, &lay);
    cr_assert_eq(read_blob(&img, &specific, 0), CT_IMAGE_MALFORMED);
    ct_image_free(&img);
    blob_free(&specific);
    blob_free(&compat);
    /* ABI 7's e_flags: the SM in the low byte */
    blob old = copy_of(&c);
    old.p[8] = 7;
    set_le(&old, 48, 0x00500550u | 0x800, 4);
    cr_assert_eq(read_blob(&img, &old, 0), CT_IMAGE_OK);
    cr_assert_eq(img.entries[0].arch, 80);
    cr_assert(img.entries[0].arch_specific);
    ct_image_free(&img);
    blob_free(&old);
    /* no CUDA ELF is no kernel image */
    blob other = copy_of(&c);
    set_le(&other, 18, 62, 2); /* EM_X86_64 */
    cr_assert_eq(read_blob(&img, &other, 0), CT_IMAGE_OK);
    cr_assert_eq(img.form, CT_IMAGE_UNKNOWN);
    cr_assert_eq(ct_image_fit_for(&img, 80), CT_FIT_UNKNOWN);
    cr_assert_str_eq(describe(&img), "no kernel image (not a fatbin, cubin or PTX)");
    ct_image_free(&img);
    blob_free(&other);
    blob_free(&c);
}

Test(image, cubins_that_lie)
{
    cubin_layout lay;
    blob c = cubin(kernels3, 3, 80, NULL, &lay);
    size_t sym1 = lay.symtab + 24;
    /* Bare, the image's end is only the limit: past it is TRUNCATED; in a
     * fatbin entry it is the entry's stated size. */
    struct {
        size_t at;
        unsigned bytes;
        uint64_t value;
        const char *what;
        ct_image_status bare;
    } cases[] = {
        {58, 2, 40, "section headers of another size", CT_IMAGE_MALFORMED},
        {40, 8, 1u << 30, "section headers past the end", CT_IMAGE_TRUNCATED},
        {40, 8, UINT64_MAX - 8, "section headers wrapping past 2^64", CT_IMAGE_MALFORMED},
        {62, 2, 200, "section names in a section that is not there", CT_IMAGE_MALFORMED},
        {62, 2, SEC_SYMTAB, "section names in a section that is no string table", CT_IMAGE_MALFORMED},
        {section_at(&lay, SEC_FIRST_TEXT, 24), 8, 1u << 30, "a section past the end", CT_IMAGE_TRUNCATED},
        {section_at(&lay, SEC_FIRST_TEXT, 0), 4, 1u << 20, "a section name past its table", CT_IMAGE_MALFORMED},
        {section_at(&lay, SEC_SYMTAB, 56), 8, 16, "symbols of another size", CT_IMAGE_MALFORMED},
        {section_at(&lay, SEC_SYMTAB, 32), 8, 24 * 3 + 1, "a symbol table of part of a symbol", CT_IMAGE_MALFORMED},
        {section_at(&lay, SEC_SYMTAB, 40), 4, SEC_SYMTAB, "symbol names in no string table", CT_IMAGE_MALFORMED},
        {sym1, 4, 1u << 20, "a symbol name past its table", CT_IMAGE_MALFORMED},
        {sym1 + 6, 2, 150, "a symbol in a section that is not there", CT_IMAGE_MALFORMED},
        {sym1 + 6, 2, 0xffff, "an extended section index with no index table", CT_IMAGE_MALFORMED},
    };
    ct_image img;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        blob b = copy_of(&c);
        set_le(&b, cases[i].at, cases[i].value, cases[i].bytes);
        ct_image_status st = read_blob(&img, &b, b.n);
        cr_assert_eq(st, cases[i].bare, "%s: %d", cases[i].what, st);
        ct_image_free(&img);
        /* the same lie inside a fatbin entry */
        entry_spec e = {.kind = 2, .arch = 80, .payload = &b};
        blob f = fatbin(&e, 1);
        cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_MALFORMED, "in a fatbin: %s", cases[i].what);
        ct_image_free(&img);
        blob_free(&f);
        blob_free(&b);
    }
    /* a string table whose last byte is not NUL */
    blob b = copy_of(&c);
    size_t strtab_end =
        get_le(&b, section_at(&lay, SEC_STRTAB, 24), 8) + get_le(&b, section_at(&lay, SEC_STRTAB, 32), 8);
    b.p[strtab_end - 1] = 'x';
    cr_assert_eq(read_blob(&img, &b, 0), CT_IMAGE_MALFORMED, "an unterminated string table");
    ct_image_free(&img);
    blob_free(&b);
    /* an ELF entry that is no CUDA ELF */
    blob text = ptx("sm_80", kernels3, 1);
    entry_spec e = {.kind = 2, .arch = 80, .payload = &text};
    blob f = fatbin(&e, 1);
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_MALFORMED, "PTX said to be ELF");
    ct_image_free(&img);
    blob_free(&f);
    blob_free(&text);
    blob_free(&c);
}

/* ---- PTX ------------------------------------------------------------------------- */

static ct_image_status read_text(ct_image *img, const char *text)
{
    source s = {(const uint8_t *)text, strlen(text) + 1, 0};
    return ct_image_read(img, fetch, &s, 0);
}

Test(image, ptx_text)
{
    static const char text[] = "// .entry _Z4fakev( in a comment\n"
                               "/* and .entry _Z5fake2v( in a block */\n"
                               ".version 9.0\n"
                               ".target sm_90a, debug\n"
                               ".file 1 \"/src//a.cu\"\n" /* a // inside a string is no comment */
                               ".pragma \"\\\".entry _Z5fake3v(\";\n"
                               ".visible .entry _Z1kv()\n{ ret; }\n"
                               ".weak .entry $dollar_name(.param .u64 a)\n{ ret; }\n"
                               ".func _Z6helperf(.param .b32 x) { ret; }\n"
                               ".entry\n\tspaced\n(\n)\n{ ret; } // no newline after this";
    ct_image img;
    cr_assert_eq(read_text(&img, text), CT_IMAGE_OK);
    cr_assert_eq(img.form, CT_IMAGE_PTX);
    cr_assert_eq(img.bytes, sizeof text);
    cr_assert_eq(img.entries[0].arch, 90);
    cr_assert(img.entries[0].arch_specific);
    cr_assert_eq(img.n_kernels, 3);
    cr_assert(has(&img, "_Z1kv") && has(&img, "$dollar_name") && has(&img, "spaced"));
    cr_assert(!has(&img, "_Z4fakev") && !has(&img, "_Z5fake2v") && !has(&img, "_Z5fake3v") && !has(&img, "_Z6helperf"));
    assert_fits(&img, (ct_image_fit[]){FN, FN, FP, FN}, "compute_90a");
    cr_assert_str_eq(describe(&img), "no code and compute_90a PTX");
    ct_image_free(&img);

    cr_assert_eq(read_text(&img, ".version 8.0\n.target sm_100f\n"), CT_IMAGE_OK);
    cr_assert(img.entries[0].family_specific && img.entries[0].arch == 100);
    ct_image_free(&img);
    cr_assert_eq(read_text(&img, ".version 8.0\n.target sm_xx\n"), CT_IMAGE_OK);
    cr_assert_eq(img.entries[0].arch, 0, "a target not known is an unknown arch, no guess");
    cr_assert_eq(ct_image_fit_for(&img, 120), CT_FIT_NONE);
    ct_image_free(&img);
}

/* Code that defines no kernel, as the JIT linker writes for inputs without
 * any, is said to be that: a form cutaint reads, holding no kernels. */
Test(image, no_kernels_is_said)
{
    cubin_layout lay;
    blob c = cubin(NULL, 0, 90, NULL, &lay);
    ct_image img;
    cr_assert_eq(read_blob(&img, &c, c.n), CT_IMAGE_OK);
    cr_assert_eq(img.form, CT_IMAGE_CUBIN);
    cr_assert_eq(img.kernels_total, 0);
    cr_assert_str_eq(describe(&img), "no kernels: sm_90 code and no PTX");
    ct_image_free(&img);
    blob_free(&c);
    cr_assert_eq(read_text(&img, ".version 8.0\n.target sm_90\n.func f() { ret; }\n"), CT_IMAGE_OK);
    cr_assert_str_eq(describe(&img), "no kernels: no code and compute_90 PTX");
    ct_image_free(&img);
    blob f = fatbin(NULL, 0);
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
    cr_assert_str_eq(describe(&img), "no code and no PTX", "no entry: nothing more to say");
    ct_image_free(&img);
    blob_free(&f);
}

/* A file's end is the end of its text (ct_image_read_file): PTX without a
 * NUL, as `nvcc -ptx` writes it, reads as the same text with one; as bytes
 * in memory it runs on past its limit (TRUNCATED). */
Test(image, ptx_file_without_a_nul)
{
    static const char text[] = ".version 9.0\n.target sm_90\n.visible .entry _Z1kPKf(.param .u64 p)\n{ ret; }\n";
    ct_image file, data;
    source s = {(const uint8_t *)text, sizeof text - 1, 0};
    cr_assert_eq(ct_image_read_file(&file, fetch, &s, sizeof text - 1, true), CT_IMAGE_OK);
    cr_assert_eq(read_text(&data, text), CT_IMAGE_OK);
    cr_assert_eq(file.form, CT_IMAGE_PTX);
    cr_assert_eq(file.bytes, sizeof text - 1, "the file's bytes, no NUL among them");
    cr_assert(has(&file, "_Z1kPKf"));
    char said[1024];
    snprintf(said, sizeof said, "%s", describe(&data));
    cr_assert_str_eq(describe(&file), said);
    cr_assert_eq(ct_image_fit_for(&file, 90), ct_image_fit_for(&data, 90));
    uint8_t dirs[4];
    cr_assert_eq(ct_image_kernel_directions(&file, "_Z1kPKf", 90, dirs, 4), 1, "its directions are read");
    ct_image_free(&file);
    ct_image_free(&data);
    s.fetched = 0;
    cr_assert_eq(ct_image_read(&data, fetch, &s, sizeof text - 1), CT_IMAGE_TRUNCATED, "bytes in memory end at a NUL");
    ct_image_free(&data);
    /* Empty, or cut inside a comment: what the same text with a NUL says. */
    s = (source){(const uint8_t *)"", 0, 0};
    cr_assert_eq(ct_image_read_file(&file, fetch, &s, 0, false), CT_IMAGE_TRUNCATED, "no form in no bytes");
    ct_image_free(&file);
    static const char open_comment[] = ".version 9.0\n/* open";
    s = (source){(const uint8_t *)open_comment, sizeof open_comment - 1, 0};
    cr_assert_eq(ct_image_read_file(&file, fetch, &s, sizeof open_comment - 1, false), read_text(&data, open_comment));
    ct_image_free(&file);
    ct_image_free(&data);
}

Test(image, ptx_malformed_and_unknown)
{
    static const struct {
        const char *text;
        ct_image_form form;
        ct_image_status want;
    } cases[] = {
        {".version 9.0\n.entry (.param .u64 a)\n", CT_IMAGE_PTX, CT_IMAGE_MALFORMED},
        {".version 9.0\n.entry .visible\n", CT_IMAGE_PTX, CT_IMAGE_MALFORMED},
        {".version 9.0\n.entry", CT_IMAGE_PTX, CT_IMAGE_MALFORMED},
        {".version 9.0\n.target", CT_IMAGE_PTX, CT_IMAGE_MALFORMED},
        {".version 9.0\n/* open", CT_IMAGE_PTX, CT_IMAGE_MALFORMED},
        {".version 9.0\n.file \"open", CT_IMAGE_PTX, CT_IMAGE_MALFORMED},
        {"hello, world", CT_IMAGE_UNKNOWN, CT_IMAGE_OK},
        {"// .version 9.0 in a comment\n", CT_IMAGE_UNKNOWN, CT_IMAGE_OK},
        {"{ .version 9.0 }", CT_IMAGE_UNKNOWN, CT_IMAGE_OK},
        {".versionx 9.0", CT_IMAGE_UNKNOWN, CT_IMAGE_OK},
        {"abc", CT_IMAGE_UNKNOWN, CT_IMAGE_OK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ct_image img;
        cr_assert_eq(read_text(&img, cases[i].text), cases[i].want, "%s", cases[i].text);
        cr_assert_eq(img.form, cases[i].form, "%s", cases[i].text);
        ct_image_free(&img);
    }
    /* a PTX entry in a fatbin must be PTX */
    blob junk = {0};
    put(&junk, "hello", 6);
    entry_spec e = {.kind = 1, .arch = 90, .payload = &junk};
    blob f = fatbin(&e, 1);
    ct_image img;
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_MALFORMED);
    ct_image_free(&img);
    blob_free(&f);
    blob_free(&junk);
}

Test(image, ptx_at_the_end_of_readable_memory)
{
    /* text whose NUL is its last readable byte: read whole, though the
     * reader fetches in chunks */
    blob t = ptx("sm_80", kernels3, 3);
    ct_image img;
    cr_assert_eq(read_readable(&img, &t, t.n), CT_IMAGE_OK);
    cr_assert_eq(img.bytes, t.n);
    cr_assert_eq(img.n_kernels, 3);
    ct_image_free(&img);
    /* without its NUL: the text runs on into what cannot be read */
    cr_assert_eq(read_readable(&img, &t, t.n - 1), CT_IMAGE_UNREADABLE);
    cr_assert_eq(img.n_kernels, 3, "what was read is kept");
    cr_assert(strstr(describe(&img), "unreadable, as far as read"), "%s", describe(&img));
    ct_image_free(&img);
    blob_free(&t);
}

/* ---- caps -------------------------------------------------------------------------- */

Test(image, kernel_caps)
{
    enum { MANY = CT_IMAGE_MAX_KERNELS + 44 };
    static char names[MANY][16];
    const char *v[MANY];
    for (size_t i = 0; i < MANY; i++) {
        snprintf(names[i], sizeof names[i], "k%zu", i);
        v[i] = names[i];
    }
    blob t = ptx("sm_80", v, MANY);
    ct_image img;
    cr_assert_eq(read_blob(&img, &t, 0), CT_IMAGE_OK);
    cr_assert_eq(img.n_kernels, CT_IMAGE_MAX_KERNELS);
    cr_assert_eq(img.kernels_total, MANY);
    cr_assert(ct_image_has_kernel(&img, "k0", NULL));
    bool known = true;
    cr_assert(!ct_image_has_kernel(&img, names[MANY - 1], &known) && !known, "past the cap: unknown");
    cr_assert(strstr(describe(&img), "; 44 kernel names past the caps not kept"), "%s", describe(&img));
    ct_image_free(&img);
    blob_free(&t);

    /* a name longer than CT_IMAGE_NAME_MAX is counted, not kept */
    size_t long_n = CT_IMAGE_NAME_MAX + 1;
    char *long_name = malloc(long_n + 1);
    cr_assert(long_name);
    memset(long_name, 'x', long_n);
    long_name[long_n] = '\0';
    const char *two[] = {"short", long_name};
    t = ptx("sm_80", two, 2);
    cr_assert_eq(read_blob(&img, &t, 0), CT_IMAGE_OK);
    cr_assert_eq(img.n_kernels, 1);
    cr_assert_eq(img.kernels_total, 2);
    cr_assert(!ct_image_has_kernel(&img, long_name, &known) && !known);
    ct_image_free(&img);
    blob_free(&t);
    free(long_name);
}

Test(image, entry_cap)
{
    cubin_layout lay;
    blob c = cubin(kernels3, 1, 70, NULL, &lay), c90 = cubin(kernels3, 1, 90, NULL, &lay);
    enum { MANY = CT_IMAGE_MAX_ENTRIES + 2 };
    entry_spec e[MANY];
    for (size_t i = 0; i < MANY; i++)
        e[i] = (entry_spec){.kind = 2, .arch = 70, .payload = &c};
    e[MANY - 1] = (entry_spec){.kind = 2, .arch = 90, .payload = &c90};
    blob f = fatbin(e, MANY);
    ct_image img;
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
    cr_assert_eq(img.n_entries, CT_IMAGE_MAX_ENTRIES);
    cr_assert_eq(img.entries_total, MANY);
    cr_assert_eq(ct_image_fit_for(&img, 75), CT_FIT_SASS, "a kept entry runs");
    cr_assert_eq(ct_image_fit_for(&img, 90), CT_FIT_UNKNOWN, "the entries not kept might");
    bool known = true;
    cr_assert(!ct_image_has_kernel(&img, "_Z5otherv", &known) && !known);
    cr_assert_str_eq(describe(&img), "sm_70 code and no PTX; 2 more entries not kept");
    ct_image_free(&img);
    /* an entry not kept is checked against the container all the same */
    set_le(&f, 8, get_le(&f, 8, 8) - 8, 8);
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_MALFORMED);
    ct_image_free(&img);
    blob_free(&f);
    blob_free(&c);
    blob_free(&c90);
}

Test(image, unreadable_and_tiny)
{
    ct_image img;
    source s = {NULL, 0, 0};
    cr_assert_eq(ct_image_read(&img, fetch, &s, 0), CT_IMAGE_UNREADABLE);
    cr_assert_eq(img.form, CT_IMAGE_UNKNOWN);
    cr_assert_str_eq(describe(&img), "unreadable before its form could be told");
    ct_image_free(&img);
    cr_assert_eq(read_text(&img, "ab"), CT_IMAGE_UNREADABLE, "shorter than any image, at unreadable memory");
    ct_image_free(&img);
    ct_image_free(NULL);
}

/* ---- parameter layouts ------------------------------------------------------------ */

/* .nv.info records as nvcc 13.0 writes them (docs/IMAGES.md). */
static void put_record(blob *b, uint8_t format, uint8_t attr, uint16_t value)
{
    put_le(b, format, 1);
    put_le(b, attr, 1);
    put_le(b, value, 2);
}

/* EIATTR_KPARAM_INFO: index, ordinal, offset, size in bits 18-31 over
 * nvcc's 0x1f000. */
static void put_kparam(blob *b, uint16_t ordinal, uint16_t offset, uint32_t size)
{
    put_record(b, 4, 0x17, 12);
    put_le(b, 0, 4);
    put_le(b, ordinal, 2);
    put_le(b, offset, 2);
    put_le(b, size << 18 | 0x1f000, 4);
}

/* The wide record (attribute 0x45): the size a whole u32. */
static void put_kparam_wide(blob *b, uint16_t ordinal, uint16_t offset, uint32_t size)
{
    put_record(b, 4, 0x45, 12);
    put_le(b, 0, 4);
    put_le(b, ordinal, 2);
    put_le(b, offset, 2);
    put_le(b, size, 4);
}

/* What nvcc writes around the parameters: EIATTR_PARAM_CBANK and
 * EIATTR_CBANK_PARAM_SIZE, both stating total bytes. */
static void put_totals(blob *b, uint16_t total)
{
    put_record(b, 4, 0x37, 4);
    put_le(b, 0x82, 4);
    put_record(b, 1, 0x35, 0);
    put_record(b, 4, 0x0a, 8);
    put_le(b, 4, 4);
    put_le(b, 0x160, 2);
    put_le(b, total, 2);
    put_record(b, 3, 0x19, total);
}

static void put_tail(blob *b)
{
    put_record(b, 3, 0x1b, 0xff);
    put_record(b, 4, 0x1c, 4);
    put_le(b, 0x10, 4);
}

/* (pointer, int, float) as nvcc lays out _Z4fillPfif: 0+8, 8+4, 12+4,
 * its records last ordinal first; swap: the middle ones swapped. */
static blob fill_info(bool swap)
{
    blob b = {0};
    put_totals(&b, 16);
    put_kparam(&b, 2, 12, 4);
    if (swap) {
        put_kparam(&b, 0, 0, 8);
        put_kparam(&b, 1, 8, 4);
    } else {
        put_kparam(&b, 1, 8, 4);
        put_kparam(&b, 0, 0, 8);
    }
    put_tail(&b);
    return b;
}

static const ct_image_param fill_layout[] = {{0, 8}, {8, 4}, {12, 4}};

/* Kernel name's layout in img is want (n of them; -1: none said). */
static void assert_params(const ct_image *img, const char *name, int n, const ct_image_param *want, const char *what)
{
    ct_image_param got[64];
    int count = ct_image_kernel_params(img, name, got, 64);
    cr_assert_eq(count, n, "%s: %s has %d parameters, not %d", what, name, count, n);
    for (int i = 0; i < n && i < 64; i++)
        cr_assert(got[i].offset == want[i].offset && got[i].size == want[i].size,
                  "%s: %s parameter %d at %u+%u, not %u+%u", what, name, i, got[i].offset, got[i].size, want[i].offset,
                  want[i].size);
}

/* A cubin of kernels3 whose first kernel's .nv.info is info, the others'
 * those of fill_info (plain) and of no parameters (twice). */
static blob cubin_info_first(const blob *info)
{
    blob none = {0};
    put_record(&none, 4, 0x37, 4);
    put_le(&none, 0x82, 4);
    put_tail(&none);
    blob swapped = fill_info(true);
    blob infos[3] = {*info, swapped, none};
    cubin_layout lay;
    blob c = cubin_with_info(kernels3, 3, 80, NULL, infos, &lay);
    blob_free(&none);
    blob_free(&swapped);
    return c;
}

Test(image, cubin_params)
{
    blob info = fill_info(false);
    blob c = cubin_info_first(&info);
    ct_image img;
    cr_assert_eq(read_blob(&img, &c, 0), CT_IMAGE_OK);
    assert_params(&img, "_Z4fillPfif", 3, fill_layout, "records last first");
    assert_params(&img, "plain", 3, fill_layout, "records out of order");
    assert_params(&img, "_Z5twiceIdEvPT_", 0, NULL, "no records, no total: no parameters");
    cr_assert_eq(img.param_conflicts, 0);
    /* cap: how many it has, only cap written */
    ct_image_param one[2] = {{77, 77}, {77, 77}};
    cr_assert_eq(ct_image_kernel_params(&img, "_Z4fillPfif", one, 1), 3);
    cr_assert(one[0].offset == 0 && one[0].size == 8 && one[1].offset == 77 && one[1].size == 77);
    cr_assert_eq(ct_image_kernel_params(&img, "_Z4fillPfif", NULL, 0), 3);
    /* not there, or no kernel */
    cr_assert_eq(ct_image_kernel_params(&img, "_Z4fakev", one, 2), -1);
    cr_assert_eq(ct_image_kernel_params(&img, "lonely", one, 2), -1, "a function with no .nv.info");
    cr_assert_eq(ct_image_kernel_params(&img, NULL, one, 2), -1);
    ct_image_free(&img);
    /* the same inside a fatbin, and inflated from zstd */
    blob z = zstd_frame(&c, true);
    entry_spec e = {.kind = 2, .arch = 80, .flags = FLAG_ZSTD, .payload = &z, .inflated = c.n};
    blob f = fatbin(&e, 1);
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
    cr_assert(img.entries[0].inflated);
    assert_params(&img, "plain", 3, fill_layout, "inflated");
    ct_image_free(&img);
    blob_free(&f);
    blob_free(&z);
    /* tables made of the wide records (attribute 0x45) */
    blob wide = {0};
    put_kparam_wide(&wide, 2, 20004, 4);
    put_kparam_wide(&wide, 1, 4, 20000);
    put_kparam_wide(&wide, 0, 0, 1);
    put_record(&wide, 3, 0x19, 20008);
    blob_free(&c);
    c = cubin_info_first(&wide);
    cr_assert_eq(read_blob(&img, &c, 0), CT_IMAGE_OK);
    assert_params(&img, "_Z4fillPfif", 3, (ct_image_param[]){{0, 1}, {4, 20000}, {20004, 4}}, "wide");
    ct_image_free(&img);
    blob_free(&wide);
    blob_free(&c);
    blob_free(&info);
}

/* Tables that do not say a layout whole: the kernel's is unsaid (-1),
 * the image read; the other kernels' stay. */
Test(image, cubin_params_unsaid)
{
    enum { GAP, TWICE, OVERLAP, TOTAL, TOTALS, SHORT_RECORD, UNKNOWN_FORMAT, PAST_SPACE, HVAL_PARAM, CASES };
    static const char *const what[] = {"a gap in the ordinals",          "an ordinal twice",
                                       "overlapping parameters",         "a total that disagrees",
                                       "two totals that disagree",       "a record of 8 bytes",
                                       "a format not known before them", "past the parameter space",
                                       "a parameter record of format 3"};
    for (int i = 0; i < CASES; i++) {
        blob b = {0};
        put_totals(&b, i == TOTAL ? 20 : 16);
        if (i == TOTALS)
            put_record(&b, 3, 0x19, 12);
        if (i == UNKNOWN_FORMAT)
            put_record(&b, 9, 0x17, 0);
        if (i == HVAL_PARAM)
            put_record(&b, 3, 0x17, 4);
        put_kparam(&b, i == GAP ? 3 : 2, i == OVERLAP ? 10 : 12, i == OVERLAP ? 6 : 4); /* ends at 16 */
        put_kparam(&b, i == TWICE ? 2 : 1, 8, 4);
        if (i == SHORT_RECORD) {
            put_record(&b, 4, 0x17, 8);
            put_le(&b, 0, 8);
        } else {
            put_kparam(&b, 0, 0, 8);
        }
        if (i == PAST_SPACE) {
            b.n = 0;
            put_kparam(&b, 0, 0, 8);
            put_kparam(&b, 1, 32760, 8);
        }
        put_tail(&b);
        blob c = cubin_info_first(&b);
        ct_image img;
        cr_assert_eq(read_blob(&img, &c, 0), CT_IMAGE_OK, "%s", what[i]);
        assert_params(&img, "_Z4fillPfif", -1, NULL, what[i]);
        assert_params(&img, "plain", 3, fill_layout, what[i]);
        ct_image_free(&img);
        blob_free(&c);
        blob_free(&b);
    }
}

/* A record that runs past its section, or bytes too few for one: the
 * cubin is MALFORMED, bare or in a fatbin. */
Test(image, cubin_params_malformed)
{
    for (int cut = 0; cut < 2; cut++) {
        blob b = fill_info(false);
        if (cut)
            b.n -= 2; /* the tail's last record cut short */
        else
            set_le(&b, b.n - 8 + 2, 9, 2); /* its last record says 9 bytes follow, 4 do */
        blob c = cubin_info_first(&b);
        ct_image img;
        cr_assert_eq(read_blob(&img, &c, 0), CT_IMAGE_MALFORMED, "cut %d", cut);
        assert_params(&img, "_Z4fillPfif", -1, NULL, "malformed");
        ct_image_free(&img);
        entry_spec e = {.kind = 2, .arch = 80, .payload = &c};
        blob f = fatbin(&e, 1);
        cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_MALFORMED, "in a fatbin, cut %d", cut);
        ct_image_free(&img);
        blob_free(&f);
        blob_free(&c);
        blob_free(&b);
    }
}

Test(image, ptx_params)
{
    static const char text[] =
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry scalars(\n\t.param .u8 a,\n\t.param .u32 b,\n\t.param .u16 c,\n"
        "\t.param .f64 d, // a comment\n\t.param .f32 e,\n\t.param .u64 f,\n\t.param .s8 g\n)\n{ ret; }\n"
        ".visible .entry arrays(.param .u8 a, .param .align 4 .b8 b[12], .param .align 8 .b8 c[24],\n"
        "\t.param .align 16 .b8 d[16], .param .b8 e[3], .param .u8 f)\n{ ret; }\n"
        ".entry pointers(.param .u8 a, .param .u64 .ptr .global .align 16 b, .param.u32.ptr.const c,\n"
        "\t.param .b128 d, .param .bf16 e)\n{ ret; }\n"
        ".entry bare\n.maxntid 1, 1, 1\n{ ret; }\n"
        ".entry empty()\n{ ret; }\n"
        ".entry vector(.param .v2 .f32 a)\n{ ret; }\n" /* a list not known: unsaid */
        ".entry align3(.param .align 3 .b8 a[4])\n{ ret; }\n"
        ".entry huge(.param .align 4 .b8 a[32764], .param .u8 b)\n{ ret; }\n"
        ".entry fits(.param .align 4 .b8 a[32760], .param .u32 b)\n{ ret; }\n"
        ".entry no_type(.param a)\n{ ret; }\n"
        ".entry after(.param .u16 a)\n{ ret; }\n"
        ".entry open(.param .u32 a";
    ct_image img;
    cr_assert_eq(read_text(&img, text), CT_IMAGE_OK);
    cr_assert_eq(img.n_kernels, 12);
    assert_params(&img, "scalars", 7, (ct_image_param[]){{0, 1}, {4, 4}, {8, 2}, {16, 8}, {24, 4}, {32, 8}, {40, 1}},
                  "scalars");
    assert_params(&img, "arrays", 6, (ct_image_param[]){{0, 1}, {4, 12}, {16, 24}, {48, 16}, {64, 3}, {67, 1}},
                  "arrays");
    assert_params(&img, "pointers", 5, (ct_image_param[]){{0, 1}, {8, 8}, {16, 4}, {32, 16}, {48, 2}},
                  "a pointee's .align is not the parameter's");
    assert_params(&img, "bare", 0, NULL, "no list");
    assert_params(&img, "empty", 0, NULL, "()");
    assert_params(&img, "vector", -1, NULL, ".v2");
    assert_params(&img, "align3", -1, NULL, ".align 3");
    assert_params(&img, "huge", -1, NULL, "past 32764 bytes");
    assert_params(&img, "fits", 2, (ct_image_param[]){{0, 32760}, {32760, 4}}, "32764 bytes");
    assert_params(&img, "no_type", -1, NULL, "no type");
    assert_params(&img, "after", 1, (ct_image_param[]){{0, 2}}, "after lists not known");
    assert_params(&img, "open", -1, NULL, "the text ends in the list");
    ct_image_free(&img);
}

/* A kernel in several entries has one layout: SASS's over PTX's, in
 * either order; two SASS that disagree say nothing.  Disagreements are
 * counted. */
Test(image, params_across_entries)
{
    blob info = fill_info(false);
    blob c = cubin_info_first(&info);
    /* the PTX has (.u64) for each kernel: plain's disagrees with the SASS */
    blob text = ptx("sm_90", kernels3, 3);
    blob z = zstd_frame(&text, true);
    entry_spec sass = {.kind = 2, .arch = 80, .payload = &c};
    entry_spec ptx_entry = {.kind = 1, .arch = 90, .flags = FLAG_ZSTD, .payload = &z, .inflated = text.n};
    const ct_image_param u64[] = {{0, 8}};
    for (int order = 0; order < 2; order++) {
        entry_spec e[2] = {order ? ptx_entry : sass, order ? sass : ptx_entry};
        blob f = fatbin(e, 2);
        ct_image img;
        cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
        assert_params(&img, "plain", 3, fill_layout, "SASS first or not");
        assert_params(&img, "_Z4fillPfif", 3, fill_layout, "SASS first or not");
        cr_assert_eq(img.param_conflicts, 3, "order %d: %zu", order, img.param_conflicts);
        ct_image_free(&img);
        blob_free(&f);
    }
    /* PTX alone, inflated */
    blob f = fatbin(&ptx_entry, 1);
    ct_image img;
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
    assert_params(&img, "plain", 1, u64, "compressed PTX");
    ct_image_free(&img);
    blob_free(&f);
    /* two SASS entries that disagree on _Z4fillPfif */
    blob other = fill_info(false);
    set_le(&other, other.n - 8 - 12 + 6, 2, 2); /* ordinal 0's offset 2 */
    blob c2 = cubin_info_first(&other);
    entry_spec two[3] = {sass, {.kind = 2, .arch = 90, .payload = &c2}, ptx_entry};
    f = fatbin(two, 3);
    cr_assert_eq(read_blob(&img, &f, 0), CT_IMAGE_OK);
    assert_params(&img, "_Z4fillPfif", -1, NULL, "two SASS disagree");
    assert_params(&img, "plain", 3, fill_layout, "two SASS agree");
    cr_assert_eq(img.param_conflicts, 1 + 3);
    ct_image_free(&img);
    blob_free(&f);
    blob_free(&c2);
    blob_free(&other);
    blob_free(&z);
    blob_free(&text);
    blob_free(&c);
    blob_free(&info);
}

/* A kernel of CT_IMAGE_MAX_PARAMS parameters is kept; one more is not
 * (-1), nor a wrong count. */
Test(image, param_cap)
{
    for (size_t extra = 0; extra < 2; extra++) {
        size_t n = CT_IMAGE_MAX_PARAMS + extra;
        blob t = {0};
        put_text(&t, (const char *[]){".version 9.0\n.target sm_80\n.entry many("}, 1);
        for (size_t i = 0; i < n; i++) {
            char one[64];
            snprintf(one, sizeof one, "%s.param .u8 p%zu", i ? ", " : "", i);
            put_text(&t, (const char *[]){one}, 1);
        }
        put(&t, ")\n{ ret; }\n", 12);
        ct_image img;
        cr_assert_eq(read_blob(&img, &t, 0), CT_IMAGE_OK);
        static ct_image_param v[CT_IMAGE_MAX_PARAMS + 1];
        int got = ct_image_kernel_params(&img, "many", v, CT_IMAGE_MAX_PARAMS + 1);
        cr_assert_eq(got, extra ? -1 : CT_IMAGE_MAX_PARAMS, "%zu parameters: %d", n, got);
        if (!extra)
            cr_assert(v[n - 1].offset == n - 1 && v[n - 1].size == 1);
        ct_image_free(&img);
        blob_free(&t);
    }
}

/* ---- suite image_nvcc: what nvcc builds ----------------------------------------------- */

static blob load(const char *name, bool text)
{
    const char *dir = getenv("CT_IMAGE_DIR");
    if (!dir || !*dir)
        cr_skip_test("CT_IMAGE_DIR is not set: meson test runs these on the images nvcc builds");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s: not built", path);
    blob b = {0};
    uint8_t chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        put(&b, chunk, n);
    fclose(f);
    if (text)
        put(&b, "", 1); /* in memory, PTX ends at its NUL */
    return b;
}

typedef struct nvcc_case {
    const char *file;
    ct_image_form form;
    size_t n_entries;
    ct_image_fit fit[4]; /* cc 80, 86, 90, 100 */
    const char *describe;
} nvcc_case;

static const nvcc_case nvcc_cases[] = {
    {"sm80.fatbin", CT_IMAGE_FATBIN, 1, {FS, FS, FN, FN}, "sm_80 code and no PTX"},
    {"sm80_sm90.fatbin", CT_IMAGE_FATBIN, 2, {FS, FS, FS, FN}, "sm_80 and sm_90 code and no PTX"},
    {"compute90.fatbin", CT_IMAGE_FATBIN, 1, {FN, FN, FP, FP}, "no code and compute_90 PTX"},
    {"sm90a.fatbin", CT_IMAGE_FATBIN, 1, {FN, FN, FS, FN}, "sm_90a code and no PTX"},
    {"sm80_compute90.fatbin", CT_IMAGE_FATBIN, 2, {FS, FS, FP, FP}, "sm_80 code and compute_90 PTX"},
    {"sm80_compute90_plain.fatbin", CT_IMAGE_FATBIN, 2, {FS, FS, FP, FP}, "sm_80 code and compute_90 PTX"},
    {"sm80_compute90_all.fatbin", CT_IMAGE_FATBIN, 2, {FS, FS, FP, FP}, "sm_80 code and compute_90 PTX"},
    /* PTX before the SASS that agrees with it, as in cuSOLVER's fatbins: the layout is SASS's */
    {"compute90_sm80.fatbin", CT_IMAGE_FATBIN, 2, {FS, FS, FP, FP}, "sm_80 code and compute_90 PTX"},
    {"sm80.cubin", CT_IMAGE_CUBIN, 1, {FS, FS, FN, FN}, "sm_80 code and no PTX"},
    {"sm90a.cubin", CT_IMAGE_CUBIN, 1, {FN, FN, FS, FN}, "sm_90a code and no PTX"},
    {"compute80.ptx", CT_IMAGE_PTX, 1, {FP, FP, FP, FP}, "no code and compute_80 PTX"},
};

static const nvcc_case *nvcc_case_of(const char *file)
{
    for (size_t i = 0; i < sizeof nvcc_cases / sizeof *nvcc_cases; i++)
        if (strcmp(nvcc_cases[i].file, file) == 0)
            return &nvcc_cases[i];
    cr_assert_fail("%s: no such case", file);
    return NULL;
}

static blob load_case(const nvcc_case *c)
{
    return load(c->file, c->form == CT_IMAGE_PTX);
}

Test(image_nvcc, every_shape)
{
    for (size_t i = 0; i < sizeof nvcc_cases / sizeof *nvcc_cases; i++) {
        const nvcc_case *c = &nvcc_cases[i];
        blob b = load_case(c);
        ct_image img;
        cr_assert_eq(read_blob(&img, &b, b.n), CT_IMAGE_OK, "%s", c->file);
        cr_assert_eq(img.form, c->form, "%s", c->file);
        cr_assert_eq(img.bytes, b.n, "%s: its headers state its size", c->file);
        cr_assert_eq(img.n_entries, c->n_entries, "%s", c->file);
        cr_assert_eq(img.n_kernels, 7, "%s: %zu kernels", c->file, img.n_kernels);
        cr_assert(has(&img, "_Z4fillPfif") && has(&img, "plain") && has(&img, "_Z5twiceIdEvPT_"), "%s", c->file);
        cr_assert(!has(&img, "_Z6helperf"), "%s: a device function is no kernel", c->file);
        assert_fits(&img, c->fit, c->file);
        cr_assert_str_eq(describe(&img), c->describe, "%s", c->file);
        ct_image_free(&img);
        blob_free(&b);
    }
}

Test(image_nvcc, compression)
{
    struct {
        const char *file;
        bool sass, ptx;
    } cases[] = {
        {"sm80_compute90.fatbin", false, true},        /* nvcc's default: PTX only */
        {"sm80_compute90_plain.fatbin", false, false}, /* --no-compress */
        {"sm80_compute90_all.fatbin", true, true},     /* -Xfatbin -compress-all */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        blob b = load_case(nvcc_case_of(cases[i].file));
        ct_image img;
        cr_assert_eq(read_blob(&img, &b, 0), CT_IMAGE_OK);
        const ct_image_entry *sass = &img.entries[0], *ptx = &img.entries[1];
        cr_assert_eq(sass->kind, CT_ENTRY_SASS);
        cr_assert_eq(ptx->kind, CT_ENTRY_PTX);
        cr_assert_eq(sass->compressed, cases[i].sass, "%s", cases[i].file);
        cr_assert_eq(ptx->compressed, cases[i].ptx, "%s", cases[i].file);
        cr_assert(sass->inflated == sass->compressed && ptx->inflated == ptx->compressed, "%s", cases[i].file);
        cr_assert(sass->kernels_read && ptx->kernels_read, "%s", cases[i].file);
        ct_image_free(&img);
        blob_free(&b);
    }
    /* -compress-mode=speed: LZ4, recognised, not inflated */
    blob b = load("compute90_lz4.fatbin", false);
    ct_image img;
    cr_assert_eq(read_blob(&img, &b, 0), CT_IMAGE_OK);
    cr_assert(img.entries[0].compressed && !img.entries[0].inflated);
    bool known = true;
    cr_assert(!ct_image_has_kernel(&img, "_Z4fillPfif", &known) && !known);
    assert_fits(&img, (ct_image_fit[]){FN, FN, FP, FP}, "LZ4");
    cr_assert_str_eq(describe(&img), "no code and compute_90 PTX; kernels not read from compressed compute_90");
    ct_image_free(&img);
    blob_free(&b);
}

/* The layouts measured on nvcc 13.0's cubins (docs/IMAGES.md), from every
 * shape: SASS alone, PTX alone (bare and in a fatbin), both, compressed or
 * not; SASS and PTX agree. */
Test(image_nvcc, params)
{
    static const ct_image_param fill[] = {{0, 8}, {8, 4}, {12, 4}};
    static const ct_image_param pointer[] = {{0, 8}};
    static const ct_image_param shapes[] = {{0, 1},  {2, 2},   {4, 4},   {8, 4},   {16, 8},
                                            {24, 8}, {32, 12}, {48, 24}, {80, 16}, {96, 1}};
    static const ct_image_param large[] = {{0, 1}, {4, 20000}, {20004, 4}};
    ct_image_param many[40];
    for (uint32_t i = 0; i < 10; i++) {
        many[4 * i] = (ct_image_param){24 * i, 4};
        many[4 * i + 1] = (ct_image_param){24 * i + 4, 1};
        many[4 * i + 2] = (ct_image_param){24 * i + 8, 8};
        many[4 * i + 3] = (ct_image_param){24 * i + 16, 8};
    }
    for (size_t i = 0; i < sizeof nvcc_cases / sizeof *nvcc_cases; i++) {
        const nvcc_case *c = &nvcc_cases[i];
        blob b = load_case(c);
        ct_image img;
        cr_assert_eq(read_blob(&img, &b, b.n), CT_IMAGE_OK, "%s", c->file);
        assert_params(&img, "_Z4fillPfif", 3, fill, c->file);
        assert_params(&img, "plain", 1, pointer, c->file);
        assert_params(&img, "_Z5twiceIdEvPT_", 1, pointer, c->file);
        assert_params(&img, "shapes", 10, shapes, c->file);
        assert_params(&img, "none", 0, NULL, c->file);
        assert_params(&img, "many", 40, many, c->file);
        assert_params(&img, "large", 3, large, c->file);
        cr_assert_eq(img.param_conflicts, 0, "%s: SASS and PTX agree", c->file);
        ct_image_free(&img);
        blob_free(&b);
    }
}

/* Directions come from the PTX of the code that runs (docs/IMAGES.md,
 * "Parameter directions"): fill(float *p, ...) and plain(int *q) only
 * store, twice<double>(double *p) loads and stores. */
Test(image_nvcc, directions_of_the_code_that_runs)
{
    static const struct {
        const char *file;
        unsigned cc;
        bool known;
    } cases[] = {
        {"sm90_compute90.fatbin", 90, true},     /* sm_90 SASS runs; its compute_90 twin */
        {"sm80_compute90.fatbin", 90, true},     /* no SASS for 9.0: compute_90 is JIT-compiled */
        {"sm80_compute90_all.fatbin", 90, true}, /* the same, every entry compressed */
        {"compute90.fatbin", 90, true},
        {"compute80.ptx", 90, true},          /* bare PTX: what the driver compiles */
        {"sm80_compute90.fatbin", 80, false}, /* sm_80 SASS runs: compute_90 PTX is other code */
        {"sm80.fatbin", 80, false},           /* SASS only */
        {"compute90.fatbin", 80, false},      /* nothing runs on 8.0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        blob b = load(cases[i].file, strstr(cases[i].file, ".ptx") != NULL);
        source s = {b.p, b.n, 0};
        ct_image img;
        cr_assert_eq(ct_image_read_directions(&img, fetch, &s, b.n, NULL), CT_IMAGE_OK, "%s", cases[i].file);
        uint8_t d[3] = {9, 9, 9};
        int n = ct_image_kernel_directions(&img, "_Z4fillPfif", cases[i].cc, d, 3);
        if (!cases[i].known) {
            cr_assert_eq(n, -1, "%s on %u", cases[i].file, cases[i].cc);
        } else {
            cr_assert_eq(n, 3, "%s on %u", cases[i].file, cases[i].cc);
            /* v goes to a call (helper(v)): an escape, but 4 bytes are no pointer */
            cr_assert(d[0] == CT_PTX_STORES && d[1] == CT_PTX_UNUSED, "%s: %u %u", cases[i].file, d[0], d[1]);
            cr_assert_eq(ct_image_kernel_directions(&img, "plain", cases[i].cc, d, 3), 1);
            cr_assert_eq(d[0], CT_PTX_STORES, "%s: plain", cases[i].file);
            cr_assert_eq(ct_image_kernel_directions(&img, "_Z5twiceIdEvPT_", cases[i].cc, d, 3), 1);
            cr_assert_eq(d[0], CT_PTX_BOTH, "%s: twice", cases[i].file);
        }
        ct_image_free(&img);
        /* Read without directions, nothing is known. */
        cr_assert_eq(read_blob(&img, &b, b.n), CT_IMAGE_OK);
        cr_assert_eq(ct_image_kernel_directions(&img, "_Z4fillPfif", cases[i].cc, d, 3), -1);
        ct_image_free(&img);
        blob_free(&b);
    }
}

Test(image_nvcc, cut_at_every_offset)
{
    static const char *const files[] = {"sm80_compute90.fatbin", "sm80_compute90_all.fatbin", "sm80.cubin",
                                        "compute80.ptx"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        blob b = load_case(nvcc_case_of(files[i]));
        assert_every_cut(&b, files[i]);
        blob_free(&b);
    }
}

Test(image_nvcc, wrapper)
{
    blob f = load_case(nvcc_case_of("sm80_sm90.fatbin"));
    wrapper w = {0x466243b1, 1, (const unsigned long long *)(void *)f.p, NULL};
    regions r = {(uintptr_t)&w, {&w, f.p}, {sizeof w, f.n}};
    ct_image img;
    cr_assert_eq(ct_image_read_at(&img, fetch_memory, &r, 0, (uintptr_t)&w), CT_IMAGE_OK);
    cr_assert_eq(img.form, CT_IMAGE_WRAPPER);
    cr_assert_eq(img.n_entries, 2);
    cr_assert(has(&img, "_Z4fillPfif"));
    assert_fits(&img, (ct_image_fit[]){FS, FS, FS, FN}, "wrapped sm_80 + sm_90");
    ct_image_free(&img);
    blob_free(&f);
}

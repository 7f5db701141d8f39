/*
 * image.c: fakecuda's own reader of module and library images: the CUDA
 * runtime's fatbin wrapper, the fatbin container, a bare cubin (CUDA ELF)
 * and PTX text. It says whether the device can run an image and which of
 * the known kernels (plugins.c's registry) it holds.
 *
 * It shares no code with cutaint's core/ on purpose: the emulator and the
 * tool it tests must not share a misreading of these formats.
 *
 * The layouts, measured on what nvcc 13.0 builds (all little-endian):
 * - wrapper (__fatBinC_Wrapper_t, what the runtime passes to
 *   cuLibraryLoadData): i32 magic 0x466243b1, i32 version (1; 2 for the
 *   static runtime's own kernel-less image), the container's address, one
 *   more pointer.
 * - container: u32 magic 0xBA55ED50, u16 version 1, u16 header size (16),
 *   u64 bytes of entries after the header; the entries fill them exactly,
 *   back to back.
 * - entry: u16 kind (1 PTX, 2 ELF) at 0, u32 header size (0x40 to 0x70)
 *   at 4, u64 payload size (padded) at 8, u32 compressed size at 0x10,
 *   u32 arch at 0x1c (major * 10 + minor: 80, 90, 100), u64 flags at 0x28
 *   (FC_FLAG_*), u64 size before compression at 0x38; the payload follows
 *   the header.
 * - cubin: ELF64, e_machine 190 (EM_CUDA), EI_ABIVERSION 8, the arch in
 *   bits 8-15 of e_flags (0x5a00 for sm_90). sm_90 and sm_90a cubins have
 *   the same e_flags, so a bare cubin is taken as the plain arch. A kernel
 *   is an STT_FUNC symbol with st_other bit 0x10 (a __device__ function
 *   lacks it).
 * - PTX: text whose first directive is .version; ".target sm_NN" with an
 *   optional "a" or "f" names the arch; ".entry NAME" a kernel
 *   (".extern .entry" only declares one).
 * A compressed entry (flag 0x8000, zstd) is read with libzstd where the
 * build found it (FC_HAVE_ZSTD); without it its kernels are unknown, and
 * the image holds every known kernel. An entry with flag 0x2000 (cuFFT
 * 12's fatbins: PTX and SASS alike) is an LZ4 block, read by fakecuda's
 * own decoder (u32 compressed size at 0x10, u64 plain size at 0x38, as
 * for zstd; measured by decoding cuFFT's entries into their PTX text). Whether the device runs an entry never needs
 * its payload.
 * Invariants:
 * - Image bytes given by address are only read through fc_peek, which
 *   never faults: a bogus or short image is an image fakecuda does not
 *   read, never a crash.
 * - An image is read whole or not at all: not read (fc_image.read false)
 *   means fakecuda holds every known kernel for it, today's answer for
 *   made-up images; so does one too large (FC_IMAGE_MAX), malformed, or an
 *   entry whose kernels fakecuda cannot list (holds NULL).
 */
#include "fakecuda.h"

#include <assert.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#if FC_HAVE_ZSTD
#include <zstd.h>
#endif

#define FC_IMAGE_MAX ((size_t)256 << 20) /* larger images are not read */

#define FC_WRAPPER_MAGIC 0x466243b1u
#define FC_FATBIN_MAGIC 0xBA55ED50u
#define FC_ELF_MAGIC 0x464c457fu /* "\177ELF" read as a u32 */
#define FC_ENTRY_PTX 1
#define FC_ENTRY_ELF 2
#define FC_ENTRY_MIN 0x40u              /* the smallest entry header */
#define FC_FLAG_LZ4 0x2000u             /* payload compressed (LZ4 block; cuFFT 12's) */
#define FC_FLAG_COMPRESSED 0x8000u      /* payload compressed (zstd) */
#define FC_FLAG_ARCH_SPECIFIC 0x100000u /* sm_90a: runs on exactly that arch */
#define FC_FLAG_FAMILY 0x200000u        /* sm_100f: runs within the family */
#define FC_EM_CUDA 190
#define FC_ELF_ABI 8      /* the cubin layout measured */
#define FC_STO_ENTRY 0x10 /* st_other of a kernel's symbol */

static uint16_t fc_rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t fc_rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t fc_rd64(const unsigned char *p)
{
    return fc_rd32(p) | (uint64_t)fc_rd32(p + 4) << 32;
}

/* Copies n bytes at src into dst if every one of them is readable, through
   the kernel, so an unmapped or PROT_NONE address (fakecuda's own device
   memory) fails instead of faulting. Where the call is refused, nothing is
   readable: the image is then not read. */
static bool fc_peek(void *dst, const void *src, size_t n)
{
    struct iovec local = {dst, n}, remote = {(void *)(uintptr_t)src, n};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

/* ---- what the device runs ------------------------------------------------ */

/* SASS runs on the same major with a minor no larger, arch-specific SASS
   (sm_90a) on exactly its arch. */
static bool fc_sass_runs(uint32_t arch, uint64_t flags, int cc)
{
    if ((int)arch / 10 != cc / 10 || (int)arch % 10 > cc % 10)
        return false;
    return !(flags & FC_FLAG_ARCH_SPECIFIC) || (int)arch == cc;
}

/* PTX is compiled for any later device; arch-specific PTX only for its
   arch, family PTX within the family. */
static bool fc_ptx_jits(uint32_t arch, uint64_t flags, int cc)
{
    if (flags & FC_FLAG_ARCH_SPECIFIC)
        return (int)arch == cc;
    if (flags & FC_FLAG_FAMILY)
        return (int)arch / 10 == cc / 10 && (int)arch % 10 <= cc % 10;
    return (int)arch <= cc;
}

/* ---- kernels ------------------------------------------------------------- */

/* Appends the len bytes at name, a NUL and the extra bytes to the list
   (FAKECUDA_SASS=nowrite looks names up there); one that does not fit
   leaves the image's lists incomplete. */
static void fc_list_add(fc_image *img, fc_names *l, const char *name, size_t len, const void *extra, size_t nextra)
{
    size_t need = len + 1 + nextra;
    if (l->len + need > l->cap) {
        size_t cap = 2 * (l->cap + need);
        char *grown = realloc(l->text, cap);
        if (!grown) {
            img->names_complete = false;
            return;
        }
        l->text = grown;
        l->cap = cap;
    }
    memcpy(l->text + l->len, name, len);
    l->text[l->len + len] = '\0';
    if (nextra) /* a kernel's name has none; memcpy may not take NULL */
        memcpy(l->text + l->len + len + 1, extra, nextra);
    l->len += need;
}

/* Marks the known kernel named by the len bytes at name, if there is one,
   and keeps the name. */
static void fc_holds_mark(fc_image *img, const char *name, size_t len)
{
    for (unsigned i = 0; i < fc_kernel_count(); i++) {
        const char *k = fc_kernel_at(i)->name;
        if (strlen(k) == len && memcmp(k, name, len) == 0)
            img->holds[i] = 1;
    }
    fc_list_add(img, &img->names, name, len, NULL, 0);
}

/* Marks the kernels of the ELF at e; false unless it is a well-formed
   ELF64 whose symbol tables lie inside it. */
static bool fc_elf_kernels(const unsigned char *e, size_t n, fc_image *img)
{
    if (n < 64 || memcmp(e, "\177ELF", 4) != 0 || e[4] != 2 || e[5] != 1)
        return false;
    uint64_t shoff = fc_rd64(e + 0x28);
    uint16_t shentsize = fc_rd16(e + 0x3a), shnum = fc_rd16(e + 0x3c);
    if (shentsize < 64 || shoff > n || shnum > (n - shoff) / shentsize)
        return false;
    const unsigned char *sh = e + shoff;
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *s = sh + (size_t)i * shentsize;
        if (fc_rd32(s + 4) != 2) /* SHT_SYMTAB */
            continue;
        uint64_t off = fc_rd64(s + 0x18), size = fc_rd64(s + 0x20), entsize = fc_rd64(s + 0x38);
        uint32_t link = fc_rd32(s + 0x28);
        if (off > n || size > n - off || entsize < 24 || link >= shnum)
            return false;
        const unsigned char *str = sh + (size_t)link * shentsize;
        uint64_t soff = fc_rd64(str + 0x18), ssize = fc_rd64(str + 0x20);
        if (soff > n || ssize > n - soff)
            return false;
        const char *names = (const char *)e + soff;
        for (uint64_t at = 0; at + 24 <= size; at += entsize) {
            const unsigned char *sym = e + off + at;
            uint32_t name = fc_rd32(sym);
            bool kernel = (sym[4] & 0xf) == 2 && (sym[5] & FC_STO_ENTRY),
                 var = (sym[4] & 0xf) == 1; /* STT_FUNC, STT_OBJECT */
            if ((!kernel && !var) || name >= ssize)
                continue;
            size_t len = strnlen(names + name, ssize - name);
            if (len == ssize - name)
                return false;
            if (kernel)
                fc_holds_mark(img, names + name, len);
            else
                fc_list_add(img, &img->vars, names + name, len, sym + 16, 8); /* st_size */
        }
    }
    return true;
}

/* PTX text, token by token: directives and names ([.A-Za-z0-9_$%]+) are
   tokens, blanks, comments and quoted strings are skipped, any other byte
   is a token of its own. */
typedef struct fc_ptx {
    const char *p, *end;
} fc_ptx;

static bool fc_ptx_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c == '%' || c == '.';
}

/* The next token into *tok / *len; false at the end of the text. */
static bool fc_ptx_next(fc_ptx *x, const char **tok, size_t *len)
{
    for (;;) {
        while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r'))
            x->p++;
        if (x->end - x->p >= 2 && x->p[0] == '/' && x->p[1] == '/') {
            while (x->p < x->end && *x->p != '\n')
                x->p++;
        } else if (x->end - x->p >= 2 && x->p[0] == '/' && x->p[1] == '*') {
            const char *close = NULL;
            for (const char *c = x->p + 2; !close && c + 1 < x->end; c++)
                if (c[0] == '*' && c[1] == '/')
                    close = c;
            x->p = close ? close + 2 : x->end;
        } else if (x->p < x->end && *x->p == '"') {
            const char *q = memchr(x->p + 1, '"', (size_t)(x->end - x->p - 1));
            x->p = q ? q + 1 : x->end;
        } else {
            break;
        }
    }
    if (x->p >= x->end)
        return false;
    const char *start = x->p++;
    if (fc_ptx_word(*start))
        while (x->p < x->end && fc_ptx_word(*x->p))
            x->p++;
    *tok = start;
    *len = (size_t)(x->p - start);
    return true;
}

static bool fc_tok_is(const char *tok, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(tok, word, len) == 0;
}

/* Whether text (n bytes) starts, past blanks and comments, with .version:
   1 yes, 0 not PTX, -1 cannot tell from so few bytes. */
static int fc_ptx_starts(const char *text, size_t n)
{
    fc_ptx x = {text, text + n};
    const char *tok;
    size_t len;
    if (!fc_ptx_next(&x, &tok, &len) || x.p == x.end)
        return -1;
    return fc_tok_is(tok, len, ".version");
}

/* "sm_90", "sm_90a", "sm_100f": the arch and its FC_FLAG_* bits. */
static bool fc_ptx_target(const char *tok, size_t len, uint32_t *arch, uint64_t *flags)
{
    if (len < 5 || memcmp(tok, "sm_", 3) != 0)
        return false;
    size_t i = 3;
    uint32_t v = 0;
    while (i < len && i < 6 && tok[i] >= '0' && tok[i] <= '9')
        v = v * 10 + (uint32_t)(tok[i++] - '0');
    if (i < 5)
        return false;
    *flags = 0;
    if (i + 1 == len && (tok[i] == 'a' || tok[i] == 'f'))
        *flags = tok[i++] == 'a' ? FC_FLAG_ARCH_SPECIFIC : FC_FLAG_FAMILY;
    *arch = v;
    return i == len;
}

/* Marks the kernels of PTX text (up to n bytes or a NUL) and reads its
   target; false unless it starts with .version and names an sm_ target. */
static bool fc_ptx_read(const char *text, size_t n, uint32_t *arch, uint64_t *flags, fc_image *img)
{
    const char *nul = memchr(text, '\0', n);
    fc_ptx x = {text, nul ? nul : text + n};
    const char *tok, *prev = "";
    size_t len, prev_len = 0;
    bool target = false;
    if (!fc_ptx_next(&x, &tok, &len) || !fc_tok_is(tok, len, ".version"))
        return false;
    while (fc_ptx_next(&x, &tok, &len)) {
        if (fc_tok_is(tok, len, ".target")) {
            /* ".target sm_80, debug": the sm_ one of a comma-separated list. */
            do {
                if (!fc_ptx_next(&x, &tok, &len))
                    return false;
                target = target || fc_ptx_target(tok, len, arch, flags);
            } while (fc_ptx_next(&x, &tok, &len) && fc_tok_is(tok, len, ","));
        } else if (fc_tok_is(tok, len, ".entry") && !fc_tok_is(prev, prev_len, ".extern")) {
            if (!fc_ptx_next(&x, &tok, &len))
                return false;
            fc_holds_mark(img, tok, len);
        }
        prev = tok;
        prev_len = len;
    }
    return target;
}

/* ---- the fatbin container ------------------------------------------------ */

typedef struct fc_entry_view {
    uint16_t kind;
    uint32_t arch;
    uint64_t flags;
    const unsigned char *payload;
    size_t size;
    uint32_t packed;   /* compressed: the payload's bytes in use */
    uint64_t unpacked; /* compressed: its size before compression */
} fc_entry_view;

/* The entry at *off of the container b (n bytes, header checked), *off
   moved past it; false after the last. *bad is set where an entry does not
   fit the container. */
static bool fc_container_entry(const unsigned char *b, size_t n, size_t *off, fc_entry_view *v, bool *bad)
{
    if (*off == n)
        return false;
    size_t rest = n - *off;
    const unsigned char *h = b + *off;
    uint32_t hsize = rest >= FC_ENTRY_MIN ? fc_rd32(h + 4) : 0;
    uint64_t psize = hsize ? fc_rd64(h + 8) : 0;
    if (hsize < FC_ENTRY_MIN || hsize > rest || psize > rest - hsize) {
        *bad = true;
        return false;
    }
    *v = (fc_entry_view){fc_rd16(h),    fc_rd32(h + 0x1c), fc_rd64(h + 0x28), h + hsize,
                         (size_t)psize, fc_rd32(h + 0x10), fc_rd64(h + 0x38)};
    *off += hsize + (size_t)psize;
    return true;
}

/* Marks the kernels of the payload p (n bytes) of an entry of this kind. */
static bool fc_payload_kernels(uint16_t kind, const unsigned char *p, size_t n, fc_image *img)
{
    uint32_t arch;
    uint64_t flags;
    if (kind == FC_ENTRY_ELF)
        return fc_elf_kernels(p, n, img);
    return fc_ptx_read((const char *)p, n, &arch, &flags, img);
}

/*
 * LZ4's block format (the LZ4 project's public description): sequences of
 * a token (literal count in its high nibble, match length - 4 in its low
 * one, 15 continued by bytes that add until one is not 255), the literals,
 * a u16 little-endian offset back into the output, the match; the last
 * sequence has literals only. True when the n bytes at src decode to
 * exactly `want` bytes at dst; every read and write is bounds-checked, so
 * a corrupt payload is an entry fakecuda does not read, never a crash.
 */
static bool fc_lz4_length(const unsigned char *src, size_t n, size_t *i, size_t *len)
{
    if (*len != 15)
        return true;
    unsigned char more;
    do {
        if (*i >= n)
            return false;
        more = src[(*i)++];
        *len += more;
    } while (more == 255);
    return true;
}

static bool fc_lz4_block(const unsigned char *src, size_t n, unsigned char *dst, size_t want)
{
    size_t i = 0, o = 0;
    while (i < n) {
        unsigned token = src[i++];
        size_t lit = token >> 4, match = token & 15u;
        if (!fc_lz4_length(src, n, &i, &lit) || lit > n - i || lit > want - o)
            return false;
        memcpy(dst + o, src + i, lit);
        i += lit;
        o += lit;
        if (i == n)
            break; /* the last sequence: literals only */
        if (n - i < 2)
            return false;
        size_t back = fc_rd16(src + i);
        i += 2;
        if (!fc_lz4_length(src, n, &i, &match))
            return false;
        match += 4;
        if (back == 0 || back > o || match > want - o)
            return false;
        for (size_t k = 0; k < match; k++, o++) /* overlapping copies repeat bytes */
            dst[o] = dst[o - back];
    }
    return o == want;
}

/* Entry v's payload as it was before compression: v's own bytes (*owned
   NULL), or a malloc'ed copy the caller frees (*owned). False where it
   cannot be had (a codec fakecuda lacks, a corrupt payload, no memory). */
static bool fc_entry_plain(const fc_entry_view *v, const unsigned char **plain, size_t *n, unsigned char **owned)
{
    *owned = NULL;
    *plain = v->payload;
    *n = v->size;
    if (!(v->flags & (FC_FLAG_COMPRESSED | FC_FLAG_LZ4)))
        return true;
    if (v->packed > v->size || v->unpacked == 0 || v->unpacked > FC_IMAGE_MAX)
        return false;
    unsigned char *out = malloc((size_t)v->unpacked);
    if (!out)
        return false;
    bool ok = false;
    if (v->flags & FC_FLAG_LZ4) {
        ok = fc_lz4_block(v->payload, v->packed, out, (size_t)v->unpacked);
    } else {
#if FC_HAVE_ZSTD
        size_t got = ZSTD_decompress(out, (size_t)v->unpacked, v->payload, v->packed);
        ok = !ZSTD_isError(got) && got == v->unpacked;
#endif
    }
    if (!ok) {
        free(out);
        return false;
    }
    *owned = out;
    *plain = out;
    *n = (size_t)v->unpacked;
    return true;
}

/* Marks the kernels of one entry; false where fakecuda cannot list them. */
static bool fc_entry_kernels(const fc_entry_view *v, fc_image *img)
{
    const unsigned char *plain;
    unsigned char *owned;
    size_t n;
    bool ok = fc_entry_plain(v, &plain, &n, &owned) && fc_payload_kernels(v->kind, plain, n, img);
    free(owned);
    return ok;
}

/* The PTX text of entry v (decompressed), kept in img for the executor. */
static void fc_entry_text(const fc_entry_view *v, fc_image *img)
{
    const unsigned char *src;
    unsigned char *owned;
    size_t n;
    if (!fc_entry_plain(v, &src, &n, &owned))
        return;
    const unsigned char *nul = memchr(src, '\0', n);
    n = nul ? (size_t)(nul - src) : n;
    if ((img->ptx = malloc(n + 1))) {
        memcpy(img->ptx, src, n);
        img->ptx[n] = '\0';
        img->ptx_len = n;
    }
    free(owned);
}

/* A container (its n bytes whole): the entry the device would use is the
   newest SASS it runs, else the newest PTX it can compile; the image holds
   that entry's kernels, or every entry's when it runs none. */
static bool fc_container_read(fc_image *img, const unsigned char *b, size_t n)
{
    if (n < 16 || fc_rd32(b) != FC_FATBIN_MAGIC || fc_rd16(b + 4) != 1)
        return false;
    size_t hsize = fc_rd16(b + 6);
    if (hsize < 16 || hsize > n || fc_rd64(b + 8) != n - hsize)
        return false;
    int cc = fc_device_cc();
    fc_entry_view v, best = {0}, best_ptx = {0};
    bool bad = false, best_sass = false;
    for (size_t off = hsize; fc_container_entry(b, n, &off, &v, &bad);) {
        bool sass = v.kind == FC_ENTRY_ELF && fc_sass_runs(v.arch, v.flags, cc);
        bool ptx = v.kind == FC_ENTRY_PTX && fc_ptx_jits(v.arch, v.flags, cc);
        if (ptx && (!best_ptx.kind || v.arch > best_ptx.arch))
            best_ptx = v;
        if ((sass && (!best_sass || v.arch > best.arch)) || (ptx && !best_sass && v.arch > best.arch)) {
            best = v;
            best_sass = sass;
        }
    }
    if (bad)
        return false;
    img->runs = best.kind != 0;
    if (best_ptx.kind && fc_ptx_on())
        fc_entry_text(&best_ptx, img);
    bool known = true;
    if (img->runs)
        known = fc_entry_kernels(&best, img);
    for (size_t off = hsize; !img->runs && fc_container_entry(b, n, &off, &v, &bad);)
        if (v.kind == FC_ENTRY_ELF || v.kind == FC_ENTRY_PTX)
            known = fc_entry_kernels(&v, img) && known;
    if (!known) {
        free(img->holds);
        img->holds = NULL;
        img->names_complete = false;
    }
    return true;
}

/* ---- an image's bytes ---------------------------------------------------- */

/* A bare cubin: the layout measured, its arch from e_flags. */
static bool fc_cubin_read(fc_image *img, const unsigned char *e, size_t n)
{
    if (n < 64 || fc_rd16(e + 0x12) != FC_EM_CUDA || e[8] != FC_ELF_ABI)
        return false;
    if (!fc_elf_kernels(e, n, img))
        return false;
    img->runs = fc_sass_runs((fc_rd32(e + 0x30) >> 8) & 0xff, 0, fc_device_cc());
    return true;
}

static bool fc_text_read(fc_image *img, const unsigned char *t, size_t n)
{
    uint32_t arch;
    uint64_t flags;
    if (!fc_ptx_read((const char *)t, n, &arch, &flags, img))
        return false;
    img->runs = fc_ptx_jits(arch, flags, fc_device_cc());
    if (fc_ptx_on() && (img->ptx = malloc(n + 1))) {
        memcpy(img->ptx, t, n);
        img->ptx[n] = '\0';
        img->ptx_len = n;
    }
    return true;
}

/* Reads the n bytes at b as a container, a cubin or PTX text. */
static void fc_image_parse(fc_image *img, const unsigned char *b, size_t n)
{
    assert(n <= FC_IMAGE_MAX && "a larger image is never read");
    *img = (fc_image){.names_complete = true};
    if (!(img->holds = calloc(fc_kernel_count(), 1)))
        return;
    if (n >= 4 && fc_rd32(b) == FC_FATBIN_MAGIC)
        img->read = fc_container_read(img, b, n);
    else if (n >= 4 && fc_rd32(b) == FC_ELF_MAGIC)
        img->read = fc_cubin_read(img, b, n);
    else
        img->read = fc_text_read(img, b, n);
    if (!img->read)
        fc_image_drop(img);
    assert((img->read || (!img->holds && !img->ptx)) && "an image is read whole or not at all");
}

/* The n (> 0) bytes at src, copied whole; NULL where they are not all readable. */
static unsigned char *fc_copy_in(const void *src, size_t n)
{
    unsigned char *b = n <= FC_IMAGE_MAX ? malloc(n) : NULL;
    if (b && !fc_peek(b, src, n)) {
        free(b);
        b = NULL;
    }
    return b;
}

/* How many bytes the container at p spans; 0 if it is not one. */
static size_t fc_container_span(const void *p)
{
    unsigned char h[16];
    if (!fc_peek(h, p, sizeof h) || fc_rd32(h) != FC_FATBIN_MAGIC)
        return 0;
    uint64_t size = fc_rd64(h + 8), hsize = fc_rd16(h + 6);
    return size <= FC_IMAGE_MAX ? (size_t)(hsize + size) : 0;
}

/* How many bytes the ELF at p spans: its headers' tables and sections. */
static size_t fc_elf_span(const void *p)
{
    unsigned char e[64];
    if (!fc_peek(e, p, sizeof e))
        return 0;
    uint64_t shoff = fc_rd64(e + 0x28), phoff = fc_rd64(e + 0x20);
    uint16_t phentsize = fc_rd16(e + 0x36), phnum = fc_rd16(e + 0x38);
    uint16_t shentsize = fc_rd16(e + 0x3a), shnum = fc_rd16(e + 0x3c);
    if (shentsize < 64 || shoff > FC_IMAGE_MAX || phoff > FC_IMAGE_MAX)
        return 0;
    uint64_t end = shoff + (uint64_t)shnum * shentsize;
    if (phoff + (uint64_t)phnum * phentsize > end)
        end = phoff + (uint64_t)phnum * phentsize;
    unsigned char *sh = fc_copy_in((const void *)((uintptr_t)p + shoff), (size_t)shnum * shentsize);
    if (!sh)
        return 0;
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *s = sh + (size_t)i * shentsize;
        uint64_t off = fc_rd64(s + 0x18), size = fc_rd64(s + 0x20);
        if (fc_rd32(s + 4) != 8 && off <= FC_IMAGE_MAX && size <= FC_IMAGE_MAX && off + size > end) /* not NOBITS */
            end = off + size;
    }
    free(sh);
    return end <= FC_IMAGE_MAX ? (size_t)end : 0;
}

/* Text at p up to its NUL, read a page at a time so that a string ending
   just before unreadable memory is still read; NULL unless it starts like
   PTX. */
static unsigned char *fc_text_copy_in(const void *p, size_t *n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 0, cap = 0;
    unsigned char *b = NULL;
    const unsigned char *at = p;
    for (;;) {
        size_t chunk = page - (uintptr_t)(at + len) % page;
        if (len + chunk > FC_IMAGE_MAX)
            break;
        if (len + chunk > cap) {
            unsigned char *grown = realloc(b, cap = 2 * (len + chunk));
            if (!grown)
                break;
            b = grown;
        }
        if (!fc_peek(b + len, at + len, chunk))
            break;
        const unsigned char *nul = memchr(b + len, '\0', chunk);
        len += chunk;
        int starts = fc_ptx_starts((const char *)b, nul ? (size_t)(nul - b) : len);
        if (starts == 0 || (nul && starts < 0))
            break;
        if (nul) {
            *n = (size_t)(nul - b);
            return b;
        }
    }
    free(b);
    return NULL;
}

void fc_image_read_memory(fc_image *img, const void *image)
{
    *img = (fc_image){0};
    unsigned char w[16];
    const void *at = image;
    /* The runtime's wrapper names its container. */
    if (fc_peek(w, image, sizeof w) && fc_rd32(w) == FC_WRAPPER_MAGIC) {
        uint32_t version = fc_rd32(w + 4);
        if (version != 1 && version != 2)
            return;
        at = (const void *)(uintptr_t)fc_rd64(w + 8);
    }
    unsigned char m[4];
    uint32_t magic = fc_peek(m, at, sizeof m) ? fc_rd32(m) : 0;
    size_t n = 0;
    unsigned char *b = NULL;
    if (magic == FC_FATBIN_MAGIC || magic == FC_ELF_MAGIC) {
        n = magic == FC_FATBIN_MAGIC ? fc_container_span(at) : fc_elf_span(at);
        b = n ? fc_copy_in(at, n) : NULL;
    } else if (at == image) {
        b = fc_text_copy_in(at, &n);
    }
    if (b)
        fc_image_parse(img, b, n);
    free(b);
}

CUresult fc_image_read_file(fc_image *img, const char *path)
{
    *img = (fc_image){0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return CUDA_ERROR_FILE_NOT_FOUND;
    }
    size_t n = (size_t)st.st_size, got = 0;
    unsigned char *b = n <= FC_IMAGE_MAX ? malloc(n + 1) : NULL;
    while (b && got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    /* A wrapper in a file would name addresses of another process: not read. */
    if (b && got == n && !(n >= 4 && fc_rd32(b) == FC_WRAPPER_MAGIC)) {
        b[n] = '\0';
        fc_image_parse(img, b, n);
    }
    free(b);
    return CUDA_SUCCESS;
}

/* The n bytes at src, copied whole (the caller frees them); NULL where they
   are not all readable. */
unsigned char *fc_image_copy_in(const void *src, size_t n)
{
    return n ? fc_copy_in(src, n) : NULL;
}

/* n bytes given with their size (the linker's inputs): read if all readable. */
bool fc_image_read_bytes(fc_image *img, const void *data, size_t n)
{
    *img = (fc_image){0};
    unsigned char *b = n ? fc_copy_in(data, n) : NULL;
    if (!b)
        return false;
    fc_image_parse(img, b, n);
    free(b);
    return true;
}

void fc_image_drop(fc_image *img)
{
    free(img->holds);
    free(img->ptx);
    free(img->names.text);
    free(img->vars.text);
    *img = (fc_image){0};
}

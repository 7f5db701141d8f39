/*
 * image.c - a kernel image read without the driver (image.h says what is
 * promised): the fatbin wrapper, the fatbin container and its entries, a
 * cubin's sections and symbols, PTX text; and what a device can use.
 *
 * Owns: the byte layouts of docs/IMAGES.md (measured on CUDA 13.0's nvcc)
 * and the compatibility rule behind ct_image_fit_for.
 *
 * Invariants:
 * - Every byte comes through span_read, which refuses a read past its
 *   window: a size the image states (a read past it is MALFORMED) or the
 *   caller's limit (TRUNCATED).  Offsets wrap modulo 2^64 on purpose (a
 *   wrapper's pointer less base); lengths are checked, never wrapped.
 * - The first status that is not OK ends the reading; what was read before
 *   it stays in the image.
 * - What is allocated is bounded before it is asked for: one ELF's tables
 *   by CT_IMAGE_MAX_TABLES (each kernel's .nv.info, and room for one
 *   table's CT_IMAGE_MAX_PARAMS parameters, among them), a PTX scan by its
 *   chunk, one token of CT_IMAGE_NAME_MAX and CT_IMAGE_MAX_PARAMS
 *   parameters, the kept names by CT_IMAGE_MAX_KERNELS of those with a
 *   layout of at most CT_IMAGE_MAX_PARAMS parameters each, an inflated
 *   entry by CT_IMAGE_MAX_INFLATED and its compressed input by zstd's bound
 *   for that size.
 * - libzstd is opened (dlopen) only when a compressed entry is met, never
 *   linked: no process the shim is preloaded into loads it otherwise.
 * - img->kernels holds n_kernels distinct NUL-terminated names; n_kernels
 *   <= kernels_total and n_entries <= entries_total.  Past the caps a name
 *   is counted each time it is met, so kernels_total is then an upper bound.
 * - img->layouts[i] is img->kernels[i]'s parameter layout, set only from a
 *   table read whole and found consistent (kparams_read, the PTX list):
 *   parameters dense by ordinal, each at or after the end of the one
 *   before, all within CT_IMAGE_PARAM_SPACE, a stated total matching; a
 *   record that runs past its section is MALFORMED, anything else not
 *   understood leaves the layout unsaid.  At most CT_IMAGE_MAX_PARAMS are
 *   kept per kernel (more only counted).  SASS's layout is kept over PTX's;
 *   two of one kind that disagree leave it conflicted (unsaid).
 */
#include "image.h"

#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "ptx.h"

#define FATBIN_MAGIC 0xba55ed50u
#define WRAPPER_BYTES 24
#define FATBIN_HEADER 16
#define ENTRY_HEADER 64

#define ENTRY_PTX 1
#define ENTRY_ELF 2
#define FLAG_LZ4 0x2000u
#define FLAG_ZSTD 0x8000u
#define FLAG_ARCH_SPECIFIC 0x100000u
#define FLAG_FAMILY 0x200000u

#define EM_CUDA 190
#define SHT_SYMTAB 2
#define SHT_STRTAB 3
#define SHT_NOBITS 8
#define SHT_SYMTAB_SHNDX 18
#define STT_FUNC 2
#define SHN_LORESERVE 0xff00u
#define SHN_XINDEX 0xffffu
#define SECTION_HEADER 64
#define SYMBOL 24

/* PTX is scanned this many bytes at a time. */
#define CHUNK (64u << 10)

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static bool fits(uint64_t off, uint64_t n, uint64_t len)
{
    return off <= len && n <= len - off;
}

static ct_image_status out_of_memory(ct_image *img)
{
    img->out_of_memory = true;
    return CT_IMAGE_MALFORMED;
}

/* ---- spans: windows onto what fetch serves --------------------------------- */

typedef struct span {
    ct_image_fetch fetch;
    void *ctx;
    uint64_t at; /* the offset, in fetch's terms, of the window's first byte */
    uint64_t len;
    ct_image_status past; /* what a read past len means */
    bool text_ends;       /* len is the image's end (a file's): bare PTX text ends there as at its NUL */
} span;

static ct_image_status span_read(const span *s, uint64_t off, void *dst, size_t n)
{
    if (!fits(off, n, s->len))
        return s->past;
    if (n == 0 || s->fetch(s->ctx, s->at + off, dst, n))
        return CT_IMAGE_OK;
    return CT_IMAGE_UNREADABLE;
}

/* [off, off + n) of s, a window a stated size bounds. */
static ct_image_status span_sub(const span *s, uint64_t off, uint64_t n, span *out)
{
    if (!fits(off, n, s->len))
        return s->past;
    *out = (span){s->fetch, s->ctx, s->at + off, n, CT_IMAGE_MALFORMED, false};
    return CT_IMAGE_OK;
}

/* Up to *n bytes at off: where the fetch fails part-way, the largest
 * halving of *n it serves (so text that ends just before unreadable memory
 * is still read whole).  UNREADABLE when not even one byte is served. */
static ct_image_status span_read_some(const span *s, uint64_t off, uint8_t *dst, size_t *n)
{
    for (size_t want = *n; want; want /= 2) {
        ct_image_status st = span_read(s, off, dst, want);
        if (st != CT_IMAGE_UNREADABLE) {
            *n = want;
            return st;
        }
    }
    return CT_IMAGE_UNREADABLE;
}

/* ---- what was found ------------------------------------------------------- */

/* One PTX entry's directions for a kernel: arch 0 for bare PTX text. */
typedef struct ptx_dirs {
    unsigned arch;
    uint32_t n;
    uint8_t *v;
} ptx_dirs;
#define DIRS_KEPT 8 /* PTX entries' directions kept per kernel; more are dropped (unknown) */

/* A kept kernel's parameter layout (img->layouts[i] is img->kernels[i]'s). */
struct ct_image_layout {
    bool known;               /* some entry's table said it */
    bool conflicted;          /* two entries of the kind kept disagreed: it says nothing */
    ct_image_entry_kind from; /* the kind of entry it came from */
    uint8_t kinds;            /* 1 << kind for every kind of entry that said one */
    uint32_t n;               /* its parameters; past CT_IMAGE_MAX_PARAMS only counted */
    ct_image_param *v;        /* n of them when kept, NULL when none or not kept */
    uint32_t n_dirs;          /* ct_image_read_directions: one per PTX entry holding it */
    ptx_dirs dirs[DIRS_KEPT];
};

/* The index of kept name (n bytes), SIZE_MAX when it is not kept. */
static size_t find_name(const ct_image *img, const char *name, size_t n)
{
    for (size_t i = 0; i < img->n_kernels; i++)
        if (strncmp(img->kernels[i], name, n) == 0 && img->kernels[i][n] == '\0')
            return i;
    return SIZE_MAX;
}

static bool has_name(const ct_image *img, const char *name, size_t n)
{
    return find_name(img, name, n) != SIZE_MAX;
}

/* Counts kernel name (n bytes, not NUL-terminated) and keeps it when new and
 * within the caps; *at is its index, SIZE_MAX when not kept.  MALFORMED
 * only when memory runs out. */
static ct_image_status add_kernel(ct_image *img, const char *name, size_t n, size_t *at)
{
    *at = n <= CT_IMAGE_NAME_MAX ? find_name(img, name, n) : SIZE_MAX;
    if (*at != SIZE_MAX)
        return CT_IMAGE_OK;
    img->kernels_total++;
    if (n > CT_IMAGE_NAME_MAX || img->n_kernels == CT_IMAGE_MAX_KERNELS)
        return CT_IMAGE_OK;
    if (!img->kernels) {
        img->kernels = calloc(CT_IMAGE_MAX_KERNELS, sizeof *img->kernels);
        img->layouts = calloc(CT_IMAGE_MAX_KERNELS, sizeof *img->layouts);
        if (!img->kernels || !img->layouts) {
            free(img->kernels);
            free(img->layouts);
            img->kernels = NULL;
            img->layouts = NULL;
            return out_of_memory(img);
        }
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return out_of_memory(img);
    memcpy(copy, name, n);
    copy[n] = '\0';
    *at = img->n_kernels;
    img->kernels[img->n_kernels++] = copy;
    return CT_IMAGE_OK;
}

static bool same_layout(const ct_image_layout *l, const ct_image_param *v, uint32_t n)
{
    return l->n == n && (n == 0 || n > CT_IMAGE_MAX_PARAMS || memcmp(l->v, v, n * sizeof *v) == 0);
}

/* An entry of kind `from` lays kept kernel k's parameters out as v (n of
 * them; more than CT_IMAGE_MAX_PARAMS only counted, v unread).  The first
 * layout read is kept; one that disagrees is counted, and replaces it only
 * where SASS meets PTX (the code that runs is ptxas's, whose table the
 * SASS carries); two of one kind that disagree leave the layout unsaid. */
static ct_image_status set_layout(ct_image *img, size_t k, ct_image_entry_kind from, const ct_image_param *v,
                                  uint32_t n)
{
    ct_image_layout *l = &img->layouts[k];
    uint8_t kinds = l->kinds | (uint8_t)(1u << from);
    l->kinds = kinds;
    if (l->known && same_layout(l, v, n)) {
        if (from == CT_ENTRY_SASS) /* PTX read first said what SASS says: SASS's now */
            l->from = from;
        return CT_IMAGE_OK;
    }
    if (l->known) {
        img->param_conflicts++;
        if (from == l->from)
            l->conflicted = true;
        if (from == l->from || from != CT_ENTRY_SASS)
            return CT_IMAGE_OK;
    }
    ct_image_param *copy = NULL;
    if (n && n <= CT_IMAGE_MAX_PARAMS) {
        if (!(copy = malloc(n * sizeof *copy)))
            return out_of_memory(img);
        memcpy(copy, v, n * sizeof *copy);
    }
    free(l->v);
    *l = (ct_image_layout){.known = true, .from = from, .kinds = kinds, .n = n, .v = copy};
    return CT_IMAGE_OK;
}

/* The next entry's slot, or NULL past CT_IMAGE_MAX_ENTRIES; counted either way. */
static ct_image_entry *add_entry(ct_image *img, ct_image_entry_kind kind)
{
    img->entries_total++;
    if (img->n_entries == CT_IMAGE_MAX_ENTRIES)
        return NULL;
    ct_image_entry *e = &img->entries[img->n_entries++];
    *e = (ct_image_entry){.kind = kind};
    return e;
}

/* ---- PTX ------------------------------------------------------------------- */

/* Only tokens matter: directives and names.  Comments and white space
 * separate them; strings (.file, .pragma) and other punctuation end them
 * too, and a "//" inside a string is no comment. */
typedef enum ptx_lex {
    LEX_CODE,
    LEX_SLASH, /* a '/' that may open a comment */
    LEX_LINE_COMMENT,
    LEX_BLOCK_COMMENT,
    LEX_BLOCK_STAR,
    LEX_STRING,
    LEX_STRING_ESCAPE,
} ptx_lex;

/* What the next token means: PTX opens with .version; .target and .entry
 * are each followed by the name that says what they are; an .entry's name
 * by its parameter list, `( .param <attributes> .<type> <name>[<count>],
 * ... )`, read from WANT_LIST on (docs/IMAGES.md). */
typedef enum ptx_want {
    WANT_VERSION,
    WANT_ANY,
    WANT_TARGET,
    WANT_NAME,
    WANT_LIST,        /* an .entry's name was read: '(' opens its parameters */
    WANT_FIRST_PARAM, /* after '(': .param, or ')' for none */
    WANT_PARAM,       /* after ',': .param */
    WANT_ATTRIBUTES,  /* after .param: .align N, .ptr, a state space after it, the type, then the name */
    WANT_ALIGN,       /* the N of .align */
    WANT_AFTER_NAME,  /* '[' count ']' (once), then ',' or ')' */
    WANT_COUNT,
    WANT_COUNT_CLOSE,
} ptx_want;

typedef struct ptx_scan {
    ct_image *img;
    ct_image_entry *entry; /* NULL for bare text until .version makes it PTX */
    ptx_lex lex;
    ptx_want want;
    bool target_seen;
    bool stop; /* not PTX after all, or status is not OK */
    ct_image_status status;
    size_t tok_len; /* may pass CT_IMAGE_NAME_MAX: then only counted */
    char tok[CT_IMAGE_NAME_MAX];
    /* the .entry whose parameters are read: */
    size_t kernel;     /* its index among the kept names; SIZE_MAX: not kept */
    uint32_t n_params; /* read so far (past CT_IMAGE_MAX_PARAMS only counted) */
    uint64_t end;      /* where the last one read ends, at most CT_IMAGE_PARAM_SPACE */
    /* the parameter being read: */
    unsigned type_size; /* its type's bytes; 0 before the type */
    uint64_t align;     /* its .align; 0 when none (its type's) */
    uint64_t count;     /* its array count; 0 for a scalar */
    bool ptr;           /* .ptr: the state space and .align that follow are the pointee's */
    bool pointee_align; /* the .align being read is the pointee's */
    ct_image_param params[CT_IMAGE_MAX_PARAMS];
    /* ct_image_read_directions: the kept kernels this text's .entry lines
     * named, and where in the text each .entry stands, so each kernel's
     * body is read from there, not found again from the text's start */
    uint32_t n_named;
    uint32_t named[CT_IMAGE_MAX_KERNELS];
    uint64_t named_at[CT_IMAGE_MAX_KERNELS];
    uint64_t at;       /* the text offset of the bytes being stepped through */
    uint64_t tok_at;   /* ... where the token being read began */
    uint64_t entry_at; /* ... where the last .entry began */
} ptx_scan;

/* [A-Za-z0-9_$.%] as a bitmap of ASCII: the scan's innermost test. */
static bool is_token_char(uint8_t c)
{
    static const uint64_t token[2] = {0x03ff403000000000, 0x07fffffe87fffffe};
    return c < 128 && (token[c >> 6] >> (c & 63) & 1);
}

static bool token_is(const ptx_scan *p, const char *word)
{
    size_t n = strlen(word);
    return p->tok_len == n && memcmp(p->tok, word, n) == 0;
}

static void ptx_fail(ptx_scan *p, ct_image_status st)
{
    p->status = st;
    p->stop = true;
}

/* "sm_90a": the architecture and its suffix; anything else leaves them unknown. */
static void ptx_target(ptx_scan *p)
{
    ct_image_entry *e = p->entry;
    if (e->arch || p->tok_len < 4 || memcmp(p->tok, "sm_", 3) != 0 || p->tok_len > 16)
        return;
    unsigned arch = 0;
    size_t i = 3;
    for (; i < p->tok_len && p->tok[i] >= '0' && p->tok[i] <= '9'; i++)
        arch = arch * 10 + (unsigned)(p->tok[i] - '0');
    char suffix = i < p->tok_len ? p->tok[i++] : '\0';
    if (i != p->tok_len || i == 3 || (suffix && suffix != 'a' && suffix != 'f'))
        return;
    e->arch = arch;
    e->arch_specific = suffix == 'a';
    e->family_specific = suffix == 'f';
}

static void ptx_version(ptx_scan *p)
{
    if (!token_is(p, ".version")) {
        /* bare text: some other form; an entry said it was PTX */
        ptx_fail(p, p->entry ? CT_IMAGE_MALFORMED : CT_IMAGE_OK);
        return;
    }
    if (!p->entry) {
        p->img->form = CT_IMAGE_PTX;
        p->entry = add_entry(p->img, CT_ENTRY_PTX);
    }
    p->want = WANT_ANY;
}

/* ---- PTX parameter lists ---- */

/* The token as a decimal number of at most max; false when it is none. */
static bool token_number(const ptx_scan *p, uint64_t max, uint64_t *v)
{
    if (p->tok_len == 0 || p->tok_len > 7)
        return false;
    uint64_t n = 0;
    for (size_t i = 0; i < p->tok_len; i++) {
        if (p->tok[i] < '0' || p->tok[i] > '9')
            return false;
        n = n * 10 + (uint64_t)(p->tok[i] - '0');
    }
    *v = n;
    return n <= max;
}

/* The bytes of a parameter type (PTX ISA: fundamental types; .b128 from
 * PTX 8.3, which nvcc 13.0 does not emit for parameters); 0 for another word. */
static unsigned type_bytes(const char *w, size_t n)
{
    static const struct {
        const char *name;
        unsigned bytes;
    } types[] = {
        {"b8", 1},  {"u8", 1},  {"s8", 1},  {"b16", 2}, {"u16", 2}, {"s16", 2}, {"f16", 2}, {"bf16", 2},  {"b32", 4},
        {"u32", 4}, {"s32", 4}, {"f32", 4}, {"b64", 8}, {"u64", 8}, {"s64", 8}, {"f64", 8}, {"b128", 16},
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strlen(types[i].name) == n && memcmp(types[i].name, w, n) == 0)
            return types[i].bytes;
    return 0;
}

static bool word_is(const char *w, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(w, word, n) == 0;
}

/* One word of a parameter's attributes (".ptr.global.align" is three);
 * false when it is none this reader knows. */
static bool ptx_param_word(ptx_scan *p, const char *w, size_t n)
{
    unsigned bytes = type_bytes(w, n);
    if (p->want != WANT_ATTRIBUTES)
        return false; /* a word after .align */
    if (bytes) {
        if (p->type_size)
            return false;
        p->type_size = bytes;
    } else if (word_is(w, n, "align")) {
        p->pointee_align = p->ptr;
        p->want = WANT_ALIGN;
    } else if (word_is(w, n, "ptr")) {
        if (p->ptr)
            return false;
        p->ptr = true;
    } else if (!p->ptr || !(word_is(w, n, "global") || word_is(w, n, "const") || word_is(w, n, "local") ||
                            word_is(w, n, "shared"))) {
        return false;
    }
    return true;
}

/* A token of directives (".param", ".align", ".b8"): its words in turn. */
static bool ptx_param_words(ptx_scan *p, size_t from)
{
    if (p->tok_len > sizeof p->tok)
        return false;
    for (size_t i = from; i < p->tok_len;) {
        if (p->tok[i] != '.')
            return false;
        size_t j = ++i;
        while (j < p->tok_len && p->tok[j] != '.')
            j++;
        if (j == i || !ptx_param_word(p, p->tok + i, j - i))
            return false;
        i = j;
    }
    return true;
}

/* The parameter list ended: said (each parameter read) or not.  A layout
 * said is the kept kernel's from this entry. */
static void ptx_params_done(ptx_scan *p, bool said)
{
    p->want = WANT_ANY;
    if (!said || p->kernel == SIZE_MAX)
        return;
    if (p->n_named < CT_IMAGE_MAX_KERNELS) {
        p->named_at[p->n_named] = p->entry_at;
        p->named[p->n_named++] = (uint32_t)p->kernel;
    }
    ct_image_status st = set_layout(p->img, p->kernel, CT_ENTRY_PTX, p->params, p->n_params);
    if (st != CT_IMAGE_OK)
        ptx_fail(p, st);
}

/* The parameter read ends: it lies at the next offset its alignment (its
 * .align, else its type's) allows.  False when it passes the parameter
 * space. */
static bool ptx_param_end(ptx_scan *p)
{
    uint64_t size = p->type_size * (p->count ? p->count : 1);
    uint64_t align = p->align ? p->align : p->type_size;
    uint64_t offset = (p->end + align - 1) / align * align;
    if (offset + size > CT_IMAGE_PARAM_SPACE)
        return false;
    if (p->n_params < CT_IMAGE_MAX_PARAMS)
        p->params[p->n_params] = (ct_image_param){(uint32_t)offset, (uint32_t)size};
    p->n_params++;
    p->end = offset + size;
    return true;
}

/* A token inside an .entry's parameter list; false when it is none there. */
static bool ptx_param_token(ptx_scan *p)
{
    uint64_t n;
    switch (p->want) {
    case WANT_FIRST_PARAM:
    case WANT_PARAM:
        if (p->tok_len < 6 || memcmp(p->tok, ".param", 6) != 0 || (p->tok_len > 6 && p->tok[6] != '.'))
            return false;
        p->type_size = 0;
        p->align = p->count = 0;
        p->ptr = p->pointee_align = false;
        p->want = WANT_ATTRIBUTES;
        return ptx_param_words(p, 6);
    case WANT_ATTRIBUTES:
        if (p->tok[0] == '.')
            return ptx_param_words(p, 0);
        if (!p->type_size || (p->tok[0] >= '0' && p->tok[0] <= '9'))
            return false;
        p->want = WANT_AFTER_NAME; /* the parameter's name */
        return true;
    case WANT_ALIGN:
        if (!token_number(p, CT_IMAGE_PARAM_SPACE, &n) || n == 0 || (n & (n - 1)))
            return false;
        if (!p->pointee_align)
            p->align = n;
        p->want = WANT_ATTRIBUTES;
        return true;
    case WANT_COUNT:
        if (!token_number(p, CT_IMAGE_PARAM_SPACE, &n) || n == 0)
            return false;
        p->count = n;
        p->want = WANT_COUNT_CLOSE;
        return true;
    default: return false;
    }
}

/* Punctuation inside an .entry's parameter list (or where one may open). */
static void ptx_param_punct(ptx_scan *p, uint8_t c)
{
    if (p->want == WANT_LIST) {
        if (c == '(')
            p->want = WANT_FIRST_PARAM;
        else
            ptx_params_done(p, c == '{' || c == ';'); /* none: the body, or a declaration */
    } else if (p->want == WANT_FIRST_PARAM && c == ')') {
        ptx_params_done(p, true);
    } else if (p->want == WANT_AFTER_NAME && c == '[' && !p->count) {
        p->want = WANT_COUNT;
    } else if (p->want == WANT_COUNT_CLOSE && c == ']') {
        p->want = WANT_AFTER_NAME;
    } else if (p->want == WANT_AFTER_NAME && (c == ',' || c == ')')) {
        if (!ptx_param_end(p))
            ptx_params_done(p, false);
        else if (c == ',')
            p->want = WANT_PARAM;
        else
            ptx_params_done(p, true);
    } else {
        ptx_params_done(p, false);
    }
}

/* ---- PTX tokens ---- */

/* A token where any may come: only .entry and the first .target matter. */
static void ptx_any(ptx_scan *p)
{
    if (token_is(p, ".entry")) {
        p->entry_at = p->tok_at;
        p->want = WANT_NAME;
    } else if (token_is(p, ".target") && !p->target_seen) {
        p->target_seen = true;
        p->want = WANT_TARGET;
    }
}

static void ptx_token(ptx_scan *p)
{
    if (p->tok_len == 0)
        return;
    switch (p->want) {
    case WANT_VERSION: ptx_version(p); break;
    case WANT_TARGET:
        ptx_target(p);
        p->want = WANT_ANY;
        break;
    case WANT_NAME:
        if (p->tok[0] == '.' || (p->tok[0] >= '0' && p->tok[0] <= '9')) {
            ptx_fail(p, CT_IMAGE_MALFORMED);
            break;
        }
        if ((p->status = add_kernel(p->img, p->tok, p->tok_len, &p->kernel)) != CT_IMAGE_OK)
            p->stop = true;
        p->n_params = 0;
        p->end = 0;
        p->want = WANT_LIST;
        break;
    case WANT_ANY: ptx_any(p); break;
    case WANT_LIST: /* no list: a directive (.maxntid) or the body follow */
        ptx_params_done(p, true);
        if (!p->stop)
            ptx_any(p);
        break;
    default:
        if (!ptx_param_token(p)) {
            ptx_params_done(p, false); /* a list this reader does not know says nothing */
            if (!p->stop)
                ptx_any(p);
        }
        break;
    }
    p->tok_len = 0;
}

/* Punctuation c: where a token is wanted, before .version bare text is
 * not PTX; after .entry or .target the name is missing.  After an .entry's
 * name it may open, go on with or close its parameter list. */
static void ptx_punct(ptx_scan *p, uint8_t c)
{
    ptx_token(p);
    if (p->stop || p->want == WANT_ANY)
        return;
    if (p->want >= WANT_LIST)
        ptx_param_punct(p, c);
    else
        ptx_fail(p, p->want == WANT_VERSION && !p->entry ? CT_IMAGE_OK : CT_IMAGE_MALFORMED);
}

/* A byte of code that is no token character. */
static void ptx_code_byte(ptx_scan *p, uint8_t c)
{
    if (c == '/') {
        ptx_token(p);
        p->lex = LEX_SLASH;
    } else if (c == '"') {
        ptx_punct(p, c);
        p->lex = LEX_STRING;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ptx_token(p);
    } else {
        ptx_punct(p, c);
    }
}

/* n token characters that go on with the token (kept up to its room). */
static void ptx_token_chars(ptx_scan *p, const uint8_t *b, size_t n)
{
    if (p->tok_len == 0)
        p->tok_at = p->at;
    if (p->tok_len < sizeof p->tok) {
        size_t room = sizeof p->tok - p->tok_len;
        memcpy(p->tok + p->tok_len, b, n < room ? n : room);
    }
    p->tok_len += n;
}

/* How many of the n text bytes at b the lexer takes in its state: a whole
 * comment, string or token at a time, where the text is mostly spent (0
 * when a '/' turns out to open no comment: that byte is code again). */
static size_t ptx_step(ptx_scan *p, const uint8_t *b, size_t n)
{
    const uint8_t *hit;
    size_t i = 0;
    switch (p->lex) {
    case LEX_CODE:
        while (i < n && is_token_char(b[i]))
            i++;
        if (i) {
            ptx_token_chars(p, b, i);
            return i;
        }
        ptx_code_byte(p, b[0]);
        return 1;
    case LEX_SLASH:
        if (b[0] == '/' || b[0] == '*') {
            p->lex = b[0] == '/' ? LEX_LINE_COMMENT : LEX_BLOCK_COMMENT;
            return 1;
        }
        p->lex = LEX_CODE;
        ptx_punct(p, '/');
        return 0;
    case LEX_LINE_COMMENT:
        if ((hit = memchr(b, '\n', n)))
            p->lex = LEX_CODE;
        return hit ? (size_t)(hit - b) + 1 : n;
    case LEX_BLOCK_COMMENT:
        if ((hit = memchr(b, '*', n)))
            p->lex = LEX_BLOCK_STAR;
        return hit ? (size_t)(hit - b) + 1 : n;
    case LEX_BLOCK_STAR: p->lex = b[0] == '/' ? LEX_CODE : b[0] == '*' ? LEX_BLOCK_STAR : LEX_BLOCK_COMMENT; return 1;
    case LEX_STRING:
        while (i < n && b[i] != '"' && b[i] != '\\')
            i++;
        if (i < n)
            p->lex = b[i++] == '"' ? LEX_CODE : LEX_STRING_ESCAPE;
        return i;
    case LEX_STRING_ESCAPE: break;
    }
    p->lex = LEX_STRING; /* past the escaped byte */
    return 1;
}

/* The text ended (its NUL, or an entry's payload end). */
static void ptx_end(ptx_scan *p)
{
    if (p->lex == LEX_SLASH)
        ptx_punct(p, '/');
    else if (p->lex == LEX_CODE)
        ptx_token(p);
    if (p->stop)
        return;
    if (p->want >= WANT_LIST)
        ptx_params_done(p, false); /* the text ended in a parameter list, or before it */
    if (p->stop)
        return;
    if (p->want == WANT_VERSION)
        ptx_fail(p, p->entry ? CT_IMAGE_MALFORMED : CT_IMAGE_OK);
    else if (p->want != WANT_ANY || (p->lex != LEX_CODE && p->lex != LEX_LINE_COMMENT))
        ptx_fail(p, CT_IMAGE_MALFORMED); /* a name missing, a block comment or string left open */
    else if (p->entry)
        p->entry->kernels_read = true;
}

/* Feeds n bytes; *ended when the text's NUL is among them (*used: through it). */
static void ptx_feed(ptx_scan *p, const uint8_t *b, size_t n, bool *ended, size_t *used)
{
    const uint8_t *nul = memchr(b, '\0', n);
    size_t text = nul ? (size_t)(nul - b) : n;
    uint64_t from = p->at;
    for (size_t i = 0; i < text && !p->stop;) {
        p->at = from + i;
        i += ptx_step(p, b + i, text - i);
    }
    if (nul && !p->stop) {
        *ended = true;
        *used = text + 1;
        ptx_end(p);
    }
}

/* The text held for directions: grown as it is read, dropped (NULL) past
 * CT_IMAGE_MAX_INFLATED or when memory runs out: then no directions. */
typedef struct held_text {
    char *p;
    size_t n, cap;
    bool dropped;
} held_text;

static void hold_text(held_text *t, const uint8_t *b, size_t n)
{
    if (t->dropped)
        return;
    if (t->n + n > CT_IMAGE_MAX_INFLATED) {
        t->dropped = true;
        return;
    }
    if (t->n + n > t->cap) {
        size_t cap = t->cap ? t->cap : 1u << 16;
        while (cap < t->n + n)
            cap *= 2;
        char *grown = realloc(t->p, cap);
        if (!grown) {
            t->dropped = true;
            return;
        }
        t->p = grown;
        t->cap = cap;
    }
    memcpy(t->p + t->n, b, n);
    t->n += n;
}

/* The directions of every kernel the text named, for the entry of arch. */
static void keep_directions(ct_image *img, const ptx_scan *p, const held_text *t, unsigned arch)
{
    uint8_t *dirs = malloc(CT_IMAGE_MAX_PARAMS);
    for (uint32_t i = 0; dirs && !t->dropped && i < p->n_named; i++) {
        ct_image_layout *l = &img->layouts[p->named[i]];
        uint64_t at = p->named_at[i] < t->n ? p->named_at[i] : 0;
        int n = ct_ptx_directions(t->p + at, t->n - at, img->kernels[p->named[i]], dirs, CT_IMAGE_MAX_PARAMS);
        if (n < 0 || n > CT_IMAGE_MAX_PARAMS || l->n_dirs == DIRS_KEPT)
            continue;
        uint8_t *copy = malloc(n ? (size_t)n : 1);
        if (!copy)
            break;
        memcpy(copy, dirs, (size_t)n);
        l->dirs[l->n_dirs++] = (ptx_dirs){arch, (uint32_t)n, copy};
    }
    free(dirs);
}

/* PTX text in s: an entry's payload (entry given: it ends at its NUL or the
 * payload's end), or bare text, which ends at its NUL (or at the end of a
 * file: s->text_ends) and sets the image's form and size. */
static ct_image_status read_ptx(ct_image *img, const span *s, ct_image_entry *entry)
{
    held_text text = {0};
    ptx_scan *p = calloc(1, sizeof *p); /* the lexer's and want's first values are 0 */
    uint8_t *buf = malloc(CHUNK);
    if (!p || !buf) {
        free(p);
        free(buf);
        return out_of_memory(img);
    }
    p->img = img;
    p->entry = entry;
    bool ended = false;
    for (uint64_t off = 0; !ended && !p->stop;) {
        uint64_t left = s->len - off;
        if (left == 0) {
            if (entry || s->text_ends)
                ptx_end(p);
            else
                ptx_fail(p, s->past); /* no NUL within the limit */
            if (!entry && s->text_ends && !p->stop && img->form == CT_IMAGE_PTX)
                img->bytes = off;
            break;
        }
        size_t n = left < CHUNK ? (size_t)left : CHUNK;
        ct_image_status got = span_read_some(s, off, buf, &n);
        if (got != CT_IMAGE_OK) {
            ptx_fail(p, got);
            break;
        }
        size_t used = n;
        p->at = off;
        ptx_feed(p, buf, n, &ended, &used);
        if (img->directions)
            hold_text(&text, buf, used);
        off += used;
        if (ended && !entry && img->form == CT_IMAGE_PTX)
            img->bytes = off;
    }
    ct_image_status st = p->status;
    if (img->directions && st == CT_IMAGE_OK)
        keep_directions(img, p, &text, entry ? entry->arch : 0);
    free(text.p);
    free(buf);
    free(p);
    return st;
}

/* ---- cubins (ELF) ---------------------------------------------------------- */

typedef struct elf {
    const span *s;
    uint8_t abi;    /* e_ident[EI_ABIVERSION] */
    uint32_t flags; /* e_flags */
    uint64_t shoff, phoff;
    uint16_t shentsize, phentsize;
    uint64_t shnum, shstrndx, phnum;
    uint64_t extent; /* the bytes its headers say it spans */
    uint8_t *sh;     /* shnum section headers */
    char *names;     /* the section names (.shstrtab) */
    uint64_t names_len;
    size_t held; /* table bytes held, at most CT_IMAGE_MAX_TABLES */
} elf;

static const uint8_t *section(const elf *f, uint64_t i)
{
    return f->sh + i * SECTION_HEADER;
}

static uint32_t sec_type(const elf *f, uint64_t i)
{
    return le32(section(f, i) + 4);
}

static uint64_t sec_offset(const elf *f, uint64_t i)
{
    return le64(section(f, i) + 24);
}

static uint64_t sec_size(const elf *f, uint64_t i)
{
    return le64(section(f, i) + 32);
}

static uint32_t sec_link(const elf *f, uint64_t i)
{
    return le32(section(f, i) + 40);
}

/* The string at off of a table whose last byte is NUL; NULL past its end. */
static const char *string_at(const char *table, uint64_t len, uint64_t off)
{
    return off < len ? table + off : NULL;
}

static const char *section_name(const elf *f, uint64_t i)
{
    return string_at(f->names, f->names_len, le32(section(f, i)));
}

/* n bytes counted against the ELF's table cap; NULL (out of memory) past it. */
static void *elf_alloc(ct_image *img, elf *f, uint64_t n)
{
    void *b = n <= CT_IMAGE_MAX_TABLES - f->held ? malloc(n ? (size_t)n : 1) : NULL;
    if (!b) {
        out_of_memory(img);
        return NULL;
    }
    f->held += (size_t)n;
    return b;
}

/* n bytes at off of the ELF, into memory from elf_alloc. */
static ct_image_status elf_hold(ct_image *img, elf *f, uint64_t off, uint64_t n, uint8_t **out)
{
    uint8_t *b = elf_alloc(img, f, n);
    if (!b)
        return CT_IMAGE_MALFORMED;
    ct_image_status st = span_read(f->s, off, b, (size_t)n);
    if (st != CT_IMAGE_OK) {
        free(b);
        return st;
    }
    *out = b;
    return CT_IMAGE_OK;
}

/* Section i, a string table, whole.  Its last byte must be NUL, so that
 * every name in it ends inside it. */
static ct_image_status elf_strings(ct_image *img, elf *f, uint64_t i, char **out, uint64_t *len)
{
    if (i == 0 || i >= f->shnum || sec_type(f, i) != SHT_STRTAB || sec_size(f, i) == 0)
        return CT_IMAGE_MALFORMED;
    uint8_t *b;
    ct_image_status st = elf_hold(img, f, sec_offset(f, i), sec_size(f, i), &b);
    if (st != CT_IMAGE_OK)
        return st;
    *len = sec_size(f, i);
    if (b[*len - 1] != '\0') {
        free(b);
        return CT_IMAGE_MALFORMED;
    }
    *out = (char *)b;
    return CT_IMAGE_OK;
}

/* The ELF header; *cuda false when this is no 64-bit little-endian CUDA ELF. */
static ct_image_status elf_open(elf *f, const span *s, bool *cuda)
{
    uint8_t h[64];
    ct_image_status st = span_read(s, 0, h, sizeof h);
    if (st != CT_IMAGE_OK)
        return st;
    *cuda = memcmp(h,
                   "\x7f"
                   "ELF",
                   4) == 0 &&
            h[4] == 2 && h[5] == 1 && le16(h + 18) == EM_CUDA;
    *f = (elf){
        .s = s,
        .abi = h[8],
        .flags = le32(h + 48),
        .phoff = le64(h + 32),
        .shoff = le64(h + 40),
        .phentsize = le16(h + 54),
        .phnum = le16(h + 56),
        .shentsize = le16(h + 58),
        .shnum = le16(h + 60),
        .shstrndx = le16(h + 62),
        .extent = sizeof h,
    };
    return CT_IMAGE_OK;
}

/* count items of size bytes at off lie inside the ELF's span, and it spans them. */
static ct_image_status elf_spans(elf *f, uint64_t off, uint64_t count, uint64_t size)
{
    if (count && size > UINT64_MAX / count)
        return CT_IMAGE_MALFORMED;
    uint64_t n = count * size;
    if (n > UINT64_MAX - off)
        return CT_IMAGE_MALFORMED;
    if (!fits(off, n, f->s->len))
        return f->s->past;
    if (off + n > f->extent)
        f->extent = off + n;
    return CT_IMAGE_OK;
}

/* Large counts live in section 0 (ELF's extended numbering). */
static ct_image_status elf_extended_counts(elf *f)
{
    if (!f->shoff || (f->shnum && f->shstrndx != SHN_XINDEX && f->phnum != 0xffff))
        return CT_IMAGE_OK;
    uint8_t sh0[SECTION_HEADER];
    ct_image_status st = span_read(f->s, f->shoff, sh0, sizeof sh0);
    if (st != CT_IMAGE_OK)
        return st;
    if (!f->shnum)
        f->shnum = le64(sh0 + 32);
    if (f->shstrndx == SHN_XINDEX)
        f->shstrndx = le32(sh0 + 40);
    if (f->phnum == 0xffff)
        f->phnum = le32(sh0 + 44);
    return CT_IMAGE_OK;
}

/* The section headers, each section checked to lie inside the span, and
 * the section names. */
static ct_image_status elf_sections(ct_image *img, elf *f)
{
    ct_image_status st = elf_extended_counts(f);
    if (st == CT_IMAGE_OK && f->shnum && f->shentsize != SECTION_HEADER)
        st = CT_IMAGE_MALFORMED;
    if (st == CT_IMAGE_OK)
        st = elf_spans(f, f->phoff, f->phnum, f->phentsize);
    if (st == CT_IMAGE_OK)
        st = elf_spans(f, f->shoff, f->shnum, SECTION_HEADER);
    if (st != CT_IMAGE_OK || f->shnum == 0)
        return st;
    if ((st = elf_hold(img, f, f->shoff, f->shnum * SECTION_HEADER, &f->sh)) != CT_IMAGE_OK)
        return st;
    for (uint64_t i = 1; i < f->shnum && st == CT_IMAGE_OK; i++)
        if (sec_type(f, i) != SHT_NOBITS)
            st = elf_spans(f, sec_offset(f, i), 1, sec_size(f, i));
    if (st == CT_IMAGE_OK)
        st = elf_strings(img, f, f->shstrndx, &f->names, &f->names_len);
    return st;
}

static void elf_close(elf *f)
{
    free(f->sh);
    free(f->names);
    f->sh = NULL;
    f->names = NULL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A .nv.info.<name> section: the name (first, for by_name) and its index. */
typedef struct info_section {
    const char *name;
    uint64_t index;
} info_section;

/* The suffixes of the .nv.info.<name> sections, sorted: a function is a
 * kernel only if its name is among them. */
static ct_image_status elf_info_names(ct_image *img, elf *f, info_section **out, size_t *n)
{
    static const char prefix[] = ".nv.info.";
    const size_t plen = sizeof prefix - 1;
    info_section *v = elf_alloc(img, f, f->shnum * sizeof *v);
    if (!v)
        return CT_IMAGE_MALFORMED;
    size_t k = 0;
    for (uint64_t i = 1; i < f->shnum; i++) {
        const char *name = section_name(f, i);
        if (!name) {
            free(v);
            return CT_IMAGE_MALFORMED;
        }
        if (strncmp(name, prefix, plen) == 0 && name[plen])
            v[k++] = (info_section){name + plen, i};
    }
    qsort(v, k, sizeof *v, by_name);
    *out = v;
    *n = k;
    return CT_IMAGE_OK;
}

static uint64_t find_section(const elf *f, uint32_t type, bool any_link, uint32_t link)
{
    for (uint64_t i = 1; i < f->shnum; i++)
        if (sec_type(f, i) == type && (any_link || sec_link(f, i) == link))
            return i;
    return 0;
}

/* What elf_kernels holds while it walks the symbols. */
typedef struct symbols {
    uint8_t *sym, *shndx; /* .symtab, and .symtab_shndx where there is one */
    uint64_t n_sym, n_shndx;
    char *str;
    uint64_t str_len;
    info_section *info; /* elf_info_names */
    size_t n_info;
    ct_image_param *params; /* CT_IMAGE_MAX_PARAMS of them, for one kernel's table */
} symbols;

static ct_image_status elf_symbols(ct_image *img, elf *f, uint64_t symtab, symbols *y)
{
    if (le64(section(f, symtab) + 56) != SYMBOL || sec_size(f, symtab) % SYMBOL)
        return CT_IMAGE_MALFORMED;
    y->n_sym = sec_size(f, symtab) / SYMBOL;
    ct_image_status st = elf_hold(img, f, sec_offset(f, symtab), sec_size(f, symtab), &y->sym);
    if (st == CT_IMAGE_OK)
        st = elf_strings(img, f, sec_link(f, symtab), &y->str, &y->str_len);
    uint64_t x = find_section(f, SHT_SYMTAB_SHNDX, false, (uint32_t)symtab);
    if (st == CT_IMAGE_OK && x) {
        y->n_shndx = sec_size(f, x) / 4;
        st = elf_hold(img, f, sec_offset(f, x), sec_size(f, x), &y->shndx);
    }
    if (st == CT_IMAGE_OK)
        st = elf_info_names(img, f, &y->info, &y->n_info);
    return st;
}

/* Symbol i's section, 0 when it has none (undefined, absolute, common);
 * UINT64_MAX when its index lies. */
static uint64_t symbol_section(const elf *f, const symbols *y, uint64_t i)
{
    uint64_t sec = le16(y->sym + i * SYMBOL + 6);
    if (sec == SHN_XINDEX)
        sec = i < y->n_shndx ? le32(y->shndx + i * 4) : UINT64_MAX;
    else if (sec >= SHN_LORESERVE)
        return 0;
    return sec < f->shnum ? sec : UINT64_MAX;
}

/* ---- a kernel's parameters: its .nv.info.<name> ---- */

/* .nv.info records: [format u8][attribute u8][value u16], an SVAL's value
 * the length of the payload that follows (docs/IMAGES.md). */
#define EIFMT_NVAL 1
#define EIFMT_HVAL 3
#define EIFMT_SVAL 4
#define EIATTR_PARAM_CBANK 0x0a
#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_CBANK_PARAM_SIZE 0x19
#define EIATTR_KPARAM_INFO_WIDE 0x45 /* nvcc 13.0's, past some 4 KiB of parameters: a u32 size */
#define KPARAM_RECORD 12

/* What one walk over a kernel's records found. */
typedef struct kparams {
    ct_image_param *v; /* by ordinal, in the second walk */
    uint64_t n;        /* parameter records */
    bool place;        /* the second walk: put each in v */
    bool unsaid;       /* a record not understood, or contradicting another */
    bool has_total;
    uint32_t total; /* the parameter bytes PARAM_CBANK / CBANK_PARAM_SIZE state */
} kparams;

static void kparam_total(kparams *k, uint32_t total)
{
    if (k->has_total && k->total != total)
        k->unsaid = true;
    k->has_total = true;
    k->total = total;
}

/* A KPARAM_INFO payload: u32 index, u16 ordinal, u16 offset, u32 whose bits
 * 18-31 are the size (the wide record's u32 is the size). */
static void kparam_record(kparams *k, uint8_t attr, const uint8_t *b, uint16_t len)
{
    if (len != KPARAM_RECORD) {
        k->unsaid = true;
        return;
    }
    if (!k->place) {
        k->n++;
        return;
    }
    uint16_t ordinal = le16(b + 4);
    uint32_t word = le32(b + 8);
    uint32_t size = attr == EIATTR_KPARAM_INFO ? word >> 18 : word;
    if (ordinal >= k->n || k->v[ordinal].size != UINT32_MAX || size > CT_IMAGE_PARAM_SPACE)
        k->unsaid = true; /* a gap (some ordinal past the count), twice the same, too large */
    else
        k->v[ordinal] = (ct_image_param){le16(b + 6), size};
}

/* One record of an ELF attribute section (.nv.info, .nv.compat): [format
 * u8][attribute u8][value u16]; format EIFMT_SVAL's value is the length
 * of the payload that follows. */
typedef struct nv_record {
    uint8_t format, attr;
    uint16_t value;
    const uint8_t *payload; /* EIFMT_SVAL's, value bytes */
} nv_record;

/* Walks the n bytes of records at p, each to visit.  A record running past
 * them is MALFORMED; a format not known ends the walk (its length cannot be
 * told), and returns with *unknown set. */
static ct_image_status nv_records(const uint8_t *p, uint64_t n, void (*visit)(const nv_record *, void *), void *ctx,
                                  bool *unknown)
{
    for (uint64_t i = 0; i < n;) {
        if (n - i < 4)
            return CT_IMAGE_MALFORMED;
        nv_record r = {p[i], p[i + 1], le16(p + i + 2), p + i + 4};
        i += 4;
        if (r.format == EIFMT_SVAL) {
            if (r.value > n - i)
                return CT_IMAGE_MALFORMED;
            i += r.value;
        } else if (r.format < EIFMT_NVAL || r.format > EIFMT_HVAL) {
            *unknown = true;
            break;
        }
        visit(&r, ctx);
    }
    return CT_IMAGE_OK;
}

/* A .nv.info record, as what it says of the parameters. */
static void kparam_visit(const nv_record *r, void *ctx)
{
    kparams *k = ctx;
    bool param = r->attr == EIATTR_KPARAM_INFO || r->attr == EIATTR_KPARAM_INFO_WIDE || r->attr == EIATTR_PARAM_CBANK ||
                 r->attr == EIATTR_CBANK_PARAM_SIZE;
    if (r->format == EIFMT_SVAL) {
        if (r->attr == EIATTR_KPARAM_INFO || r->attr == EIATTR_KPARAM_INFO_WIDE)
            kparam_record(k, r->attr, r->payload, r->value);
        else if (r->attr == EIATTR_PARAM_CBANK && r->value == 8)
            kparam_total(k, le16(r->payload + 6)); /* u32 symbol, u16 bank offset, u16 size */
        else if (param)
            k->unsaid = true;
    } else if (r->attr == EIATTR_CBANK_PARAM_SIZE && r->format == EIFMT_HVAL) {
        kparam_total(k, r->value);
    } else if (param) {
        k->unsaid = true; /* a parameter's attribute in a form not seen */
    }
}

/* One walk over the n bytes of records at p; a format not known ends it,
 * and with it what the table says of the parameters. */
static ct_image_status kparams_walk(const uint8_t *p, uint64_t n, kparams *k)
{
    bool unknown = false;
    ct_image_status st = nv_records(p, n, kparam_visit, k, &unknown);
    if (unknown)
        k->unsaid = true;
    return st;
}

/* The layout a kernel's .nv.info records (n bytes at p) state: *count of
 * them into v (room for CT_IMAGE_MAX_PARAMS; past it only counted), *said
 * false where the table does not say.  Said, the parameters are dense by
 * ordinal, each after the one before, within the parameter space, and end
 * where a stated total says; none at all (no records, no total) is a
 * kernel without parameters. */
static ct_image_status kparams_read(const uint8_t *p, uint64_t n, ct_image_param *v, uint32_t *count, bool *said)
{
    kparams k = {.v = v};
    ct_image_status st = kparams_walk(p, n, &k);
    *said = false;
    if (st != CT_IMAGE_OK || k.unsaid)
        return st;
    *count = (uint32_t)k.n; /* at most n / 16 records */
    *said = true;
    if (k.n > CT_IMAGE_MAX_PARAMS)
        return CT_IMAGE_OK;
    for (uint64_t i = 0; i < k.n; i++)
        v[i].size = UINT32_MAX; /* not placed yet */
    k.place = true;
    kparams_walk(p, n, &k); /* its structure was read whole */
    uint64_t end = 0;
    for (uint64_t i = 0; i < k.n && !k.unsaid; i++) {
        k.unsaid = v[i].offset < end;
        end = (uint64_t)v[i].offset + v[i].size;
    }
    if (k.unsaid || end > CT_IMAGE_PARAM_SPACE || (k.has_total && k.total != end))
        *said = false;
    return CT_IMAGE_OK;
}

/* Kept kernel k's layout from section i, .nv.info.<its name>, in f. */
static ct_image_status elf_kernel_params(ct_image *img, elf *f, symbols *y, uint64_t i, size_t k)
{
    if (sec_type(f, i) == SHT_NOBITS)
        return CT_IMAGE_OK;
    if (!y->params && !(y->params = elf_alloc(img, f, CT_IMAGE_MAX_PARAMS * sizeof *y->params)))
        return CT_IMAGE_MALFORMED;
    uint8_t *b;
    ct_image_status st = elf_hold(img, f, sec_offset(f, i), sec_size(f, i), &b);
    if (st != CT_IMAGE_OK)
        return st;
    uint32_t n = 0;
    bool said;
    st = kparams_read(b, sec_size(f, i), y->params, &n, &said);
    free(b);
    if (st == CT_IMAGE_OK && said)
        st = set_layout(img, k, CT_ENTRY_SASS, y->params, n);
    return st;
}

/* A kernel is a function symbol whose section is .text.<name> and which
 * has a .nv.info.<name>: device functions have neither of their own. */
static ct_image_status elf_kernels(ct_image *img, elf *f)
{
    uint64_t symtab = find_section(f, SHT_SYMTAB, true, 0);
    if (!symtab)
        return CT_IMAGE_OK;
    symbols y = {0};
    ct_image_status st = elf_symbols(img, f, symtab, &y);
    for (uint64_t i = 1; i < y.n_sym && st == CT_IMAGE_OK; i++) {
        const uint8_t *sym = y.sym + i * SYMBOL;
        if ((sym[4] & 0xf) != STT_FUNC)
            continue;
        uint64_t sec = symbol_section(f, &y, i);
        const char *name = string_at(y.str, y.str_len, le32(sym));
        const char *where = sec && sec != UINT64_MAX ? section_name(f, sec) : "";
        if (sec == UINT64_MAX || !name || !where) {
            st = CT_IMAGE_MALFORMED;
            break;
        }
        const info_section *info = NULL;
        if (*name && strncmp(where, ".text.", 6) == 0 && strcmp(where + 6, name) == 0)
            info = bsearch(&name, y.info, y.n_info, sizeof *y.info, by_name);
        size_t k = SIZE_MAX;
        if (info)
            st = add_kernel(img, name, strlen(name), &k);
        if (st == CT_IMAGE_OK && k != SIZE_MAX)
            st = elf_kernel_params(img, f, &y, info->index, k);
    }
    free(y.sym);
    free(y.shndx);
    free(y.str);
    free(y.info);
    free(y.params);
    return st;
}

/* .nv.compat's records (nv_records): attribute 9 set marks code for that
 * very architecture (sm_90a), where ABI 8's e_flags, as nvcc 13.0 writes
 * them, do not.  A format not seen yet ends the walk. */
static void compat_visit(const nv_record *r, void *specific)
{
    if (r->format != EIFMT_SVAL && r->attr == 9 && r->value)
        *(bool *)specific = true;
}

static ct_image_status compat_specific(const uint8_t *p, uint64_t n, bool *specific)
{
    bool unknown = false;
    return nv_records(p, n, compat_visit, specific, &unknown);
}

static ct_image_status elf_compat(ct_image *img, elf *f, ct_image_entry *e)
{
    for (uint64_t i = 1; i < f->shnum; i++) {
        const char *name = section_name(f, i);
        if (!name)
            return CT_IMAGE_MALFORMED;
        if (strcmp(name, ".nv.compat") != 0 || sec_type(f, i) == SHT_NOBITS)
            continue;
        uint8_t *b;
        ct_image_status st = elf_hold(img, f, sec_offset(f, i), sec_size(f, i), &b);
        if (st == CT_IMAGE_OK)
            st = compat_specific(b, sec_size(f, i), &e->arch_specific);
        free(b);
        return st;
    }
    return CT_IMAGE_OK;
}

/* A bare cubin says its architecture in e_flags: ABI 7 (CUDA 12 and
 * before) in the low byte, 0x800 marking sm_90a; ABI 8 in bits 8-15, 0x8
 * marking it (LLVM's ELF.h) or .nv.compat (measured).  Another ABI's is
 * unknown. */
static ct_image_status elf_arch(ct_image *img, elf *f, ct_image_entry *e)
{
    if (f->abi == 7) {
        e->arch = f->flags & 0xff;
        e->arch_specific = f->flags & 0x800;
    } else if (f->abi == 8) {
        e->arch = (f->flags >> 8) & 0xff;
        e->arch_specific = f->flags & 0x8;
        return elf_compat(img, f, e);
    }
    return CT_IMAGE_OK;
}

/* The cubin f opened: its sections and kernels, and when bare (the image
 * itself, not a fatbin entry, whose header says it) its architecture. */
static ct_image_status elf_read(ct_image *img, elf *f, ct_image_entry *e, bool bare)
{
    ct_image_status st = elf_sections(img, f);
    if (st == CT_IMAGE_OK && bare)
        st = elf_arch(img, f, e);
    if (st == CT_IMAGE_OK)
        st = elf_kernels(img, f);
    if (st == CT_IMAGE_OK)
        e->kernels_read = true;
    elf_close(f);
    return st;
}

/* The image is an ELF: a cubin, or (not a CUDA one) some other form. */
static ct_image_status read_cubin(ct_image *img, const span *s)
{
    elf f;
    bool cuda;
    ct_image_status st = elf_open(&f, s, &cuda);
    if (st != CT_IMAGE_OK || !cuda)
        return st;
    img->form = CT_IMAGE_CUBIN;
    st = elf_read(img, &f, add_entry(img, CT_ENTRY_SASS), true);
    img->bytes = f.extent;
    return st;
}

/* ---- the fatbin container --------------------------------------------------- */

/* What an entry's header says (docs/IMAGES.md). */
typedef struct entry_header {
    uint16_t kind;
    uint32_t header_size;
    uint64_t payload;    /* bytes after the header, padding included */
    uint32_t compressed; /* the compressed payload's bytes, when compressed */
    uint32_t arch;
    uint64_t flags;
    uint64_t inflated; /* the payload's bytes decompressed, when compressed */
} entry_header;

static entry_header entry_header_of(const uint8_t h[ENTRY_HEADER])
{
    return (entry_header){
        .kind = le16(h),
        .header_size = le32(h + 4),
        .payload = le64(h + 8),
        .compressed = le32(h + 16),
        .arch = le32(h + 28),
        .flags = le64(h + 40),
        .inflated = le64(h + 56),
    };
}

/* A header that contradicts itself: two compressions, or compressed sizes
 * that do not fit its payload; code for one architecture and for a family. */
static bool entry_header_lies(const entry_header *h)
{
    bool lz4 = h->flags & FLAG_LZ4, zstd = h->flags & FLAG_ZSTD;
    if (lz4 && zstd)
        return true;
    if ((lz4 || zstd) && (h->compressed == 0 || h->compressed > h->payload || h->inflated == 0))
        return true;
    return (h->flags & FLAG_ARCH_SPECIFIC) && (h->flags & FLAG_FAMILY);
}

static ct_image_entry_kind kind_of(uint16_t kind)
{
    return kind == ENTRY_ELF ? CT_ENTRY_SASS : kind == ENTRY_PTX ? CT_ENTRY_PTX : CT_ENTRY_OTHER;
}

/* The kernels of entry e (SASS or PTX), whose uncompressed payload is s. */
static ct_image_status read_content(ct_image *img, const span *s, ct_image_entry *e)
{
    if (e->kind == CT_ENTRY_PTX)
        return read_ptx(img, s, e);
    elf f;
    bool cuda;
    ct_image_status st = elf_open(&f, s, &cuda);
    if (st == CT_IMAGE_OK && !cuda)
        st = CT_IMAGE_MALFORMED; /* its header said ELF */
    return st == CT_IMAGE_OK ? elf_read(img, &f, e, false) : st;
}

/* The largest zstd frame header (RFC 8878: magic, descriptor, window,
 * dictionary id, content size). */
#define ZSTD_HEADER_MAX 18

/* libzstd, opened the first time an entry needs inflating, not linked: the
 * shim is preloaded into every process of a job or a machine, and none of
 * them should carry another library until one fails to load a compressed
 * image.  Without it (not installed), compressed entries stay unread. */
typedef struct zstd_api {
    unsigned long long (*frame_size)(const void *src, size_t n);
    size_t (*bound)(size_t n);
    size_t (*decompress)(void *dst, size_t cap, const void *src, size_t n);
    unsigned (*is_error)(size_t code);
} zstd_api;

static zstd_api zstd;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;

static void zstd_open(void)
{
    void *lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return;
    zstd_api z = {
        .frame_size = (unsigned long long (*)(const void *, size_t))dlsym(lib, "ZSTD_getFrameContentSize"),
        .bound = (size_t(*)(size_t))dlsym(lib, "ZSTD_compressBound"),
        .decompress = (size_t(*)(void *, size_t, const void *, size_t))dlsym(lib, "ZSTD_decompress"),
        .is_error = (unsigned (*)(size_t))dlsym(lib, "ZSTD_isError"),
    };
    if (z.frame_size && z.bound && z.decompress && z.is_error)
        zstd = z;
    else
        dlclose(lib);
}

static bool zstd_available(void)
{
    pthread_once(&zstd_once, zstd_open);
    return zstd.decompress != NULL;
}

/* The zstd payload s of an entry whose header is h, inflated to exactly
 * the size h states: *plain stays NULL, and the entry unread, when that
 * is past CT_IMAGE_MAX_INFLATED.  A frame that says another size, or
 * inflates to another, contradicts the header. */
static ct_image_status inflate(ct_image *img, const span *s, const entry_header *h, uint8_t **plain)
{
    uint8_t head[ZSTD_HEADER_MAX];
    size_t n = h->compressed < sizeof head ? h->compressed : sizeof head;
    ct_image_status st = span_read(s, 0, head, n);
    if (st != CT_IMAGE_OK || !zstd_available())
        return st;
    unsigned long long said = zstd.frame_size(head, n);
    if (said == ZSTD_CONTENTSIZE_ERROR || (said != ZSTD_CONTENTSIZE_UNKNOWN && said != h->inflated))
        return CT_IMAGE_MALFORMED;
    if (h->inflated > CT_IMAGE_MAX_INFLATED)
        return CT_IMAGE_OK;
    if (h->compressed > zstd.bound((size_t)h->inflated))
        return CT_IMAGE_MALFORMED; /* more than any frame of that size needs */
    uint8_t *in = malloc(h->compressed), *out = malloc((size_t)h->inflated);
    if (!in || !out) {
        st = out_of_memory(img);
    } else if ((st = span_read(s, 0, in, h->compressed)) == CT_IMAGE_OK) {
        size_t got = zstd.decompress(out, (size_t)h->inflated, in, h->compressed);
        if (zstd.is_error(got) || got != h->inflated)
            st = CT_IMAGE_MALFORMED;
    }
    free(in);
    if (st == CT_IMAGE_OK)
        *plain = out;
    else
        free(out);
    return st;
}

bool ct_image_fetch_bytes(void *ctx, uint64_t off, void *dst, size_t len)
{
    const ct_image_bytes *b = ctx;
    if (!fits(off, len, b->n))
        return false;
    memcpy(dst, b->p + off, len);
    return true;
}

/* The kernels of entry e, whose payload is s: zstd's inflated first, from
 * memory; LZ4's (nvcc's -compress-mode=speed) left unread.  Other kinds
 * hold no kernels this reader knows (an LTO-IR entry's payload is no zstd
 * frame, though its flags say zstd). */
static ct_image_status read_payload(ct_image *img, const span *s, const entry_header *h, ct_image_entry *e)
{
    if (e->kind == CT_ENTRY_OTHER)
        return CT_IMAGE_OK;
    if (!e->compressed)
        return read_content(img, s, e);
    uint8_t *plain = NULL;
    ct_image_status st = h->flags & FLAG_ZSTD ? inflate(img, s, h, &plain) : CT_IMAGE_OK;
    if (st != CT_IMAGE_OK || !plain)
        return st;
    e->inflated = true;
    ct_image_bytes b = {plain, h->inflated};
    span mem = {ct_image_fetch_bytes, &b, 0, h->inflated, CT_IMAGE_MALFORMED, false};
    st = read_content(img, &mem, e);
    free(plain);
    return st;
}

/* The entry at off of the container box, which ends at end; *next is where
 * the one after it starts. */
static ct_image_status read_entry(ct_image *img, const span *box, uint64_t off, uint64_t end, uint64_t *next)
{
    uint8_t raw[ENTRY_HEADER];
    if (end - off < sizeof raw)
        return CT_IMAGE_MALFORMED;
    ct_image_status st = span_read(box, off, raw, sizeof raw);
    if (st != CT_IMAGE_OK)
        return st;
    entry_header h = entry_header_of(raw);
    if (h.header_size < ENTRY_HEADER || !fits(h.header_size, h.payload, end - off) || entry_header_lies(&h))
        return CT_IMAGE_MALFORMED;
    *next = off + h.header_size + h.payload;
    ct_image_entry *e = add_entry(img, kind_of(h.kind));
    if (e) {
        e->arch = h.arch;
        e->arch_specific = h.flags & FLAG_ARCH_SPECIFIC;
        e->family_specific = h.flags & FLAG_FAMILY;
        e->compressed = h.flags & (FLAG_LZ4 | FLAG_ZSTD);
    }
    span payload;
    if ((st = span_sub(box, off + h.header_size, h.payload, &payload)) != CT_IMAGE_OK)
        return st;
    return e ? read_payload(img, &payload, &h, e) : CT_IMAGE_OK;
}

/* The container at offset 0 of s: its header, then entries back to back
 * to the size it states. */
static ct_image_status read_fatbin(ct_image *img, const span *s)
{
    uint8_t raw[FATBIN_HEADER];
    ct_image_status st = span_read(s, 0, raw, sizeof raw);
    if (st != CT_IMAGE_OK)
        return st;
    uint16_t version = le16(raw + 4), header_size = le16(raw + 6);
    uint64_t size = le64(raw + 8);
    if (version != 1 || header_size < FATBIN_HEADER || size > UINT64_MAX - header_size)
        return CT_IMAGE_MALFORMED;
    img->bytes = header_size + size;
    span box = *s;
    if (box.len >= img->bytes) {
        box.len = img->bytes;
        box.past = CT_IMAGE_MALFORMED;
    }
    for (uint64_t off = header_size; off < img->bytes && st == CT_IMAGE_OK;)
        st = read_entry(img, &box, off, img->bytes, &off);
    /* bytes past the limit that no read needed (a long header) still are */
    return st == CT_IMAGE_OK && box.len < img->bytes ? box.past : st;
}

/* __fatBinC_Wrapper_t: magic, version (1, or 2 for relocatable code), the
 * fatbin's address, and a file name or prelinked fatbins, not read. */
static ct_image_status read_wrapper(ct_image *img, const span *s, const uint64_t *base)
{
    uint8_t raw[WRAPPER_BYTES];
    ct_image_status st = span_read(s, 0, raw, sizeof raw);
    if (st != CT_IMAGE_OK)
        return st;
    uint32_t version = le32(raw + 4);
    img->wrapped = le64(raw + 8);
    if ((version != 1 && version != 2) || img->wrapped == 0)
        return CT_IMAGE_MALFORMED;
    if (!base)
        return CT_IMAGE_OK;
    img->followed = true;
    span fatbin = {s->fetch, s->ctx, img->wrapped - *base, UINT64_MAX, CT_IMAGE_MALFORMED, false};
    uint8_t magic[4];
    if ((st = span_read(&fatbin, 0, magic, sizeof magic)) != CT_IMAGE_OK)
        return st;
    return le32(magic) == FATBIN_MAGIC ? read_fatbin(img, &fatbin) : CT_IMAGE_MALFORMED;
}

/* ---- reading ---------------------------------------------------------------- */

#ifndef NDEBUG
/* A kept layout: dense, each parameter after the one before, within the
 * parameter space; from SASS wherever a SASS entry said one. */
static void assert_layout(const ct_image_layout *l)
{
    if (!l->known) {
        assert(!l->v && !l->n && !l->conflicted && !(l->kinds & 1u << CT_ENTRY_SASS));
        return;
    }
    assert(l->from == CT_ENTRY_SASS || l->from == CT_ENTRY_PTX);
    assert(l->kinds & 1u << l->from);
    assert((l->from == CT_ENTRY_SASS || !(l->kinds & 1u << CT_ENTRY_SASS)) && "SASS's layout wins over PTX's");
    assert(!l->v == (l->n == 0 || l->n > CT_IMAGE_MAX_PARAMS) && "kept when within the cap");
    uint64_t end = 0;
    for (uint32_t i = 0; l->v && i < l->n; i++) {
        assert(l->v[i].offset >= end && "each parameter after the one before");
        end = (uint64_t)l->v[i].offset + l->v[i].size;
        assert(end <= CT_IMAGE_PARAM_SPACE);
    }
}

/* image.h's invariants over what a read left (debug builds). */
static void assert_image(const ct_image *img)
{
    assert(img->n_entries <= CT_IMAGE_MAX_ENTRIES && img->n_entries <= img->entries_total);
    assert(img->n_kernels <= CT_IMAGE_MAX_KERNELS && img->n_kernels <= img->kernels_total);
    assert((img->status == CT_IMAGE_MALFORMED || !img->out_of_memory) && "out of memory is reported");
    for (size_t i = 0; i < img->n_entries; i++) {
        const ct_image_entry *e = &img->entries[i];
        assert((!e->inflated || e->compressed) && "only a compressed entry is inflated");
        assert(!(e->arch_specific && e->family_specific));
    }
    assert(!img->kernels == !img->layouts && "a layout per kept name");
    for (size_t i = 0; i < img->n_kernels; i++) {
        assert(strlen(img->kernels[i]) <= CT_IMAGE_NAME_MAX);
        for (size_t j = 0; j < i; j++)
            assert(strcmp(img->kernels[i], img->kernels[j]) != 0 && "kept names are distinct");
        assert_layout(&img->layouts[i]);
    }
}
#else
#define assert_image(img) ((void)0)
#endif

/* Four bytes tell the form: no image is shorter (PTX opens with .version). */
static ct_image_status read_form(ct_image *img, const span *s, const uint64_t *base)
{
    uint8_t m[4];
    ct_image_status st = span_read(s, 0, m, sizeof m);
    if (st != CT_IMAGE_OK)
        return st;
    if (le32(m) == CT_IMAGE_WRAPPER_MAGIC) {
        img->form = CT_IMAGE_WRAPPER;
        return read_wrapper(img, s, base);
    }
    if (le32(m) == FATBIN_MAGIC) {
        img->form = CT_IMAGE_FATBIN;
        return read_fatbin(img, s);
    }
    if (memcmp(m,
               "\x7f"
               "ELF",
               4) == 0)
        return read_cubin(img, s);
    /* PTX opens with white space, a comment or .version: anything else is
     * no image, known without setting up the text's reader (every load a
     * program makes is read, most of them images, some made-up names). */
    if (m[0] != '.' && m[0] != '/' && m[0] != ' ' && m[0] != '\t' && m[0] != '\n' && m[0] != '\r')
        return CT_IMAGE_OK;
    return read_ptx(img, s, NULL);
}

static ct_image_status read_image(ct_image *img, ct_image_fetch fetch, void *ctx, uint64_t limit, const uint64_t *base,
                                  bool directions, bool file)
{
    assert(img && fetch);
    assert((!file || !base) && "a file holds no addresses");
    *img = (ct_image){.directions = directions};
    span s = {fetch, ctx, 0, limit || file ? limit : UINT64_MAX, CT_IMAGE_TRUNCATED, file};
    img->status = read_form(img, &s, base);
    assert_image(img);
    return img->status;
}

ct_image_status ct_image_read(ct_image *img, ct_image_fetch fetch, void *ctx, uint64_t limit)
{
    return read_image(img, fetch, ctx, limit, NULL, false, false);
}

ct_image_status ct_image_read_at(ct_image *img, ct_image_fetch fetch, void *ctx, uint64_t limit, uint64_t base)
{
    return read_image(img, fetch, ctx, limit, &base, false, false);
}

ct_image_status ct_image_read_directions(ct_image *img, ct_image_fetch fetch, void *ctx, uint64_t limit,
                                         const uint64_t *base)
{
    return read_image(img, fetch, ctx, limit, base, true, false);
}

ct_image_status ct_image_read_file(ct_image *img, ct_image_fetch fetch, void *ctx, uint64_t size, bool directions)
{
    return read_image(img, fetch, ctx, size, NULL, directions, true);
}

void ct_image_free(ct_image *img)
{
    if (!img)
        return;
    for (size_t i = 0; i < img->n_kernels; i++) {
        free(img->kernels[i]);
        free(img->layouts[i].v);
        for (uint32_t d = 0; d < img->layouts[i].n_dirs; d++)
            free(img->layouts[i].dirs[d].v);
    }
    free(img->kernels);
    free(img->layouts);
    *img = (ct_image){0};
}

/* ---- what it holds ---------------------------------------------------------- */

/* Every entry's kernels are among img->kernels. */
static bool kernels_known(const ct_image *img)
{
    if (img->form == CT_IMAGE_UNKNOWN || img->status != CT_IMAGE_OK || img->entries_total > img->n_entries ||
        img->kernels_total > img->n_kernels || (img->form == CT_IMAGE_WRAPPER && !img->followed))
        return false;
    for (size_t i = 0; i < img->n_entries; i++)
        if (img->entries[i].kind != CT_ENTRY_OTHER && !img->entries[i].kernels_read)
            return false;
    return true;
}

bool ct_image_has_kernel(const ct_image *img, const char *mangled, bool *known)
{
    bool found = mangled && has_name(img, mangled, strlen(mangled));
    if (known)
        *known = found || kernels_known(img);
    return found;
}

int ct_image_kernel_params(const ct_image *img, const char *mangled, ct_image_param *out, unsigned cap)
{
    size_t k = mangled ? find_name(img, mangled, strlen(mangled)) : SIZE_MAX;
    if (k == SIZE_MAX)
        return -1;
    const ct_image_layout *l = &img->layouts[k];
    if (!l->known || l->conflicted || l->n > CT_IMAGE_MAX_PARAMS)
        return -1;
    for (uint32_t i = 0; i < l->n && i < cap; i++)
        out[i] = l->v[i];
    return (int)l->n;
}

static bool same_family(unsigned arch, unsigned cc)
{
    return arch / 10 == cc / 10 && arch % 10 <= cc % 10;
}

/* SASS runs on its major's later minors (a family-specific one too: the
 * family is those); an arch-specific one only on its very architecture. */
static bool sass_runs(const ct_image_entry *e, unsigned cc)
{
    return e->arch && (e->arch_specific ? e->arch == cc : same_family(e->arch, cc));
}

/* PTX JIT-compiles for any later architecture, a family's only within it,
 * an arch-specific one only for its very architecture. */
static bool ptx_jits(const ct_image_entry *e, unsigned cc)
{
    if (!e->arch)
        return false;
    if (e->arch_specific)
        return e->arch == cc;
    return e->family_specific ? same_family(e->arch, cc) : e->arch <= cc;
}

ct_image_fit ct_image_fit_for(const ct_image *img, unsigned cc)
{
    if (img->form == CT_IMAGE_UNKNOWN || img->status != CT_IMAGE_OK ||
        (img->form == CT_IMAGE_WRAPPER && !img->followed))
        return CT_FIT_UNKNOWN;
    bool ptx = false;
    for (size_t i = 0; i < img->n_entries; i++) {
        const ct_image_entry *e = &img->entries[i];
        if (e->kind == CT_ENTRY_SASS && sass_runs(e, cc))
            return CT_FIT_SASS;
        ptx |= e->kind == CT_ENTRY_PTX && ptx_jits(e, cc);
    }
    if (img->entries_total > img->n_entries)
        return CT_FIT_UNKNOWN; /* an entry not kept may hold SASS that runs */
    return ptx ? CT_FIT_PTX : CT_FIT_NONE;
}

/* The architecture of the code that runs on cc, as its PTX would state it:
 * the latest SASS that runs, else the latest PTX the driver JITs; 0 for
 * bare PTX text; false when nothing runs. */
static bool running_arch(const ct_image *img, unsigned cc, unsigned *arch)
{
    if (img->form == CT_IMAGE_PTX) {
        *arch = 0;
        return true;
    }
    unsigned sass = 0, ptx = 0;
    for (size_t i = 0; i < img->n_entries; i++) {
        const ct_image_entry *e = &img->entries[i];
        if (e->kind == CT_ENTRY_SASS && sass_runs(e, cc) && e->arch > sass)
            sass = e->arch;
        if (e->kind == CT_ENTRY_PTX && ptx_jits(e, cc) && e->arch > ptx)
            ptx = e->arch;
    }
    *arch = sass ? sass : ptx;
    return *arch != 0 && ct_image_fit_for(img, cc) != CT_FIT_UNKNOWN;
}

int ct_image_kernel_directions(const ct_image *img, const char *mangled, unsigned cc, uint8_t *out, unsigned cap)
{
    size_t k = mangled && img->directions ? find_name(img, mangled, strlen(mangled)) : SIZE_MAX;
    unsigned arch;
    if (k == SIZE_MAX || !running_arch(img, cc, &arch))
        return -1;
    const ct_image_layout *l = &img->layouts[k];
    for (uint32_t d = 0; d < l->n_dirs; d++) {
        const ptx_dirs *pd = &l->dirs[d];
        if (pd->arch != arch)
            continue;
        if (l->known && !l->conflicted && l->n != pd->n)
            return -1; /* the PTX does not describe the code that runs */
        for (uint32_t i = 0; i < pd->n && i < cap; i++)
            out[i] = pd->v[i];
        return (int)pd->n;
    }
    return -1;
}

/* ---- describing it ---------------------------------------------------------- */

typedef struct out {
    char *buf;
    size_t cap, len; /* len: what the whole text wants */
} out;

static void put(out *o, const char *s)
{
    for (; *s; s++, o->len++)
        if (o->len + 1 < o->cap)
            o->buf[o->len] = *s;
}

static void put_arch(out *o, const char *prefix, const ct_image_entry *e)
{
    char name[32];
    if (e->arch)
        snprintf(name, sizeof name, "%s_%u%s", prefix, e->arch, e->arch_specific ? "a" : e->family_specific ? "f" : "");
    else
        snprintf(name, sizeof name, "%s_unknown", prefix);
    put(o, name);
}

static unsigned arch_key(const ct_image_entry *e)
{
    return e->arch * 4u + e->arch_specific + 2u * e->family_specific;
}

/* The kept entries matching (kind, and compressed-but-not-inflated when
 * unread), one per architecture, in ascending order. */
static size_t distinct(const ct_image *img, ct_image_entry_kind kind, bool unread,
                       const ct_image_entry *v[CT_IMAGE_MAX_ENTRIES])
{
    size_t n = 0;
    for (size_t i = 0; i < img->n_entries; i++) {
        const ct_image_entry *e = &img->entries[i];
        if (e->kind != kind || (unread && !(e->compressed && !e->inflated)))
            continue;
        size_t j = 0;
        while (j < n && arch_key(v[j]) < arch_key(e))
            j++;
        if (j < n && arch_key(v[j]) == arch_key(e))
            continue;
        memmove(v + j + 1, v + j, (n - j) * sizeof *v);
        v[j] = e;
        n++;
    }
    return n;
}

/* "sm_70, sm_80 and sm_90"; "no" for none. */
static void put_list(out *o, const ct_image_entry *const *v, size_t n, const char *prefix)
{
    if (n == 0)
        put(o, "no");
    for (size_t i = 0; i < n; i++) {
        if (i)
            put(o, i + 1 == n ? " and " : ", ");
        put_arch(o, prefix, v[i]);
    }
}

static void put_count(out *o, size_t n, const char *what)
{
    char text[64];
    snprintf(text, sizeof text, "%zu %s", n, what);
    put(o, text);
}

/* "sm_80 code and compute_90 PTX", then what was left unread. */
static void put_entries(out *o, const ct_image *img)
{
    const ct_image_entry *v[CT_IMAGE_MAX_ENTRIES];
    put_list(o, v, distinct(img, CT_ENTRY_SASS, false, v), "sm");
    put(o, " code and ");
    put_list(o, v, distinct(img, CT_ENTRY_PTX, false, v), "compute");
    put(o, " PTX");
    size_t others = 0;
    for (size_t i = 0; i < img->n_entries; i++)
        others += img->entries[i].kind == CT_ENTRY_OTHER;
    if (others) {
        put(o, ", and ");
        put_count(o, others, others == 1 ? "entry of another kind" : "entries of other kinds");
    }
    if (img->entries_total > img->n_entries) {
        put(o, "; ");
        put_count(o, img->entries_total - img->n_entries, "more entries not kept");
    }
    size_t sass = distinct(img, CT_ENTRY_SASS, true, v);
    size_t ptx = distinct(img, CT_ENTRY_PTX, true, v + sass);
    if (sass + ptx) {
        put(o, "; kernels not read from compressed ");
        for (size_t i = 0; i < sass + ptx; i++) {
            if (i)
                put(o, i + 1 == sass + ptx ? " and " : ", ");
            put_arch(o, i < sass ? "sm" : "compute", v[i]);
        }
    }
    if (img->kernels_total > img->n_kernels) {
        put(o, "; ");
        put_count(o, img->kernels_total - img->n_kernels, "kernel names past the caps not kept");
    }
}

static const char *status_word(const ct_image *img)
{
    switch (img->status) {
    case CT_IMAGE_TRUNCATED: return "truncated";
    case CT_IMAGE_UNREADABLE: return "unreadable";
    case CT_IMAGE_MALFORMED: return img->out_of_memory ? "out of memory" : "malformed";
    case CT_IMAGE_OK: break;
    }
    return "";
}

size_t ct_image_describe(const ct_image *img, char *buf, size_t cap)
{
    out o = {buf, cap, 0};
    if (img->status != CT_IMAGE_OK) {
        put(&o, status_word(img));
        put(&o, img->form == CT_IMAGE_UNKNOWN ? " before its form could be told" : ", as far as read: ");
    }
    if (img->form == CT_IMAGE_UNKNOWN) {
        if (img->status == CT_IMAGE_OK)
            put(&o, "no kernel image (not a fatbin, cubin or PTX)");
    } else if (img->form == CT_IMAGE_WRAPPER && !img->followed) {
        char at[80];
        snprintf(at, sizeof at, "a fatbin wrapper; its fatbin, at 0x%llx, not read", (unsigned long long)img->wrapped);
        put(&o, at);
    } else {
        /* Code that defines no kernel (the JIT linker's cubin of inputs
         * without any) is said to be that, not taken for an unknown form. */
        if (img->n_entries && img->kernels_total == 0 && kernels_known(img))
            put(&o, "no kernels: ");
        put_entries(&o, img);
    }
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}

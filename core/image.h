/*
 * image.h - what a kernel image holds, read without the driver: the fatbin
 * container the CUDA runtime hands the driver (and the wrapper around it),
 * a cubin (ELF) or PTX text, and which of them a device of a given
 * compute capability can use.
 *
 * Owns: reading an image through a fetch callback that may fail at any
 * byte (the shim reads the program's memory fault-safely), decompressing
 * compressed fatbin entries (zstd), and the image's description: its
 * entries (kind, architecture), its kernels (from cubin symbols and
 * .nv.info, or PTX .entry lines), each kernel's parameter layout (a
 * cubin's EIATTR_KPARAM_INFO records, a PTX .entry's parameter list) and
 * what each needs.
 *
 * Invariants:
 * - Never reads past a size the container states, nor past limit; a
 *   header that lies (sizes past the limit, offsets past the end) makes the
 *   image MALFORMED or TRUNCATED, never a guess.  An unknown form is
 *   UNKNOWN, not an error.
 * - Never allocates without bound: at most CT_IMAGE_MAX_ENTRIES entries and
 *   CT_IMAGE_MAX_KERNELS kernel names are kept (the totals are counted),
 *   each with at most CT_IMAGE_MAX_PARAMS parameters, and a compressed
 *   entry decompresses to at most its stated size, itself at most
 *   CT_IMAGE_MAX_INFLATED.
 * - A parameter layout is one the image states whole, never a guess: its
 *   parameters dense in order, each lying after the one before and all
 *   within CT_IMAGE_PARAM_SPACE bytes.  A table with a gap, an overlap or
 *   a total that disagrees with itself says nothing (-1); so does one of
 *   more than CT_IMAGE_MAX_PARAMS parameters, which is not kept.  Where
 *   entries disagree on a kernel's layout, SASS wins over PTX, and two of
 *   the same kind that disagree say nothing (param_conflicts counts them).
 * - Reading changes nothing the image points at.
 */
#ifndef CT_IMAGE_H
#define CT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_IMAGE_MAX_ENTRIES 64
#define CT_IMAGE_MAX_KERNELS 256
#define CT_IMAGE_MAX_INFLATED (256u << 20)
/* A kernel name longer than this is counted, not kept. */
#define CT_IMAGE_NAME_MAX 16384
/* One ELF's section, symbol and string tables held while it is read. */
#define CT_IMAGE_MAX_TABLES (64u << 20)
/* A kernel's parameters kept; more are counted, not kept. */
#define CT_IMAGE_MAX_PARAMS 4096
/* The parameter space's bytes (ptxas: "max 32764 bytes allowed"). */
#define CT_IMAGE_PARAM_SPACE 32764u

/* Copies len bytes at offset from the image's start into dst; false when
 * any of them cannot be read. */
typedef bool (*ct_image_fetch)(void *ctx, uint64_t offset, void *dst, size_t len);

/* A fetch from bytes already in memory (ctx: a ct_image_bytes): an
 * inflated entry, a test's image, a fuzzer's input. */
typedef struct ct_image_bytes {
    const uint8_t *p;
    uint64_t n;
} ct_image_bytes;
bool ct_image_fetch_bytes(void *ctx, uint64_t offset, void *dst, size_t len);

/* The first word of the runtime's __fatBinC_Wrapper_t. */
#define CT_IMAGE_WRAPPER_MAGIC 0x466243b1u

typedef enum ct_image_form {
    CT_IMAGE_UNKNOWN, /* none of the forms below */
    CT_IMAGE_WRAPPER, /* __fatBinC_Wrapper_t (magic 0x466243b1) around a fatbin */
    CT_IMAGE_FATBIN,  /* the container (magic 0xba55ed50) */
    CT_IMAGE_CUBIN,   /* one ELF object */
    CT_IMAGE_PTX,     /* PTX text */
} ct_image_form;

typedef enum ct_image_status {
    CT_IMAGE_OK,
    CT_IMAGE_UNREADABLE, /* the fetch failed where the image's own sizes said bytes were */
    CT_IMAGE_TRUNCATED,  /* it ends (limit) before its stated size */
    CT_IMAGE_MALFORMED,  /* a header contradicts itself or its container */
} ct_image_status;

typedef enum ct_image_entry_kind { CT_ENTRY_SASS, CT_ENTRY_PTX, CT_ENTRY_OTHER } ct_image_entry_kind;

typedef struct ct_image_entry {
    ct_image_entry_kind kind;
    unsigned arch;      /* 90 for sm_90 / compute_90; 0 unknown */
    bool arch_specific; /* sm_90a: only that very architecture */
    bool compressed;
    bool inflated;        /* compressed and decompressed, so its kernels are known */
    bool family_specific; /* sm_100f: that family only (same major, minor at most the device's) */
    bool kernels_read;    /* SASS or PTX whose kernels were all read (names past the caps counted) */
} ct_image_entry;

/* Where a kept kernel's parameter layout came from (image.c). */
typedef struct ct_image_layout ct_image_layout;

typedef struct ct_image {
    ct_image_form form;
    ct_image_status status;
    uint64_t bytes; /* the image's size as its headers state it */
    size_t n_entries, entries_total;
    ct_image_entry entries[CT_IMAGE_MAX_ENTRIES];
    size_t n_kernels, kernels_total; /* distinct names over all entries */
    char **kernels;                  /* mangled names, owned by the image */
    ct_image_layout *layouts;        /* one per kept name, owned by the image */
    size_t param_conflicts;          /* entries whose layout of a kernel disagreed with one read before */
    uint64_t wrapped;                /* WRAPPER: the address its fatbin pointer holds */
    bool followed;                   /* WRAPPER: that fatbin was read (ct_image_read_at) */
    bool out_of_memory;              /* MALFORMED because memory, or CT_IMAGE_MAX_TABLES, ran out */
    bool directions;                 /* read by ct_image_read_directions: PTX kernels' directions kept */
} ct_image;

/* Reads the image at offset 0 of what fetch serves, at most limit bytes (0:
 * no limit known, as for cuModuleLoadData: the headers say).  Fills img
 * (free it with ct_image_free) and returns its status; out of memory is
 * MALFORMED's sibling: the image is kept as far as it was read. */
ct_image_status ct_image_read(ct_image *img, ct_image_fetch fetch, void *ctx, uint64_t limit);
/* A wrapper's fatbin pointer is an address, which ct_image_read cannot
 * turn into an offset: it reads the wrapper alone (followed false, fit
 * unknown).  ct_image_read_at is told the address offset 0 stands at and
 * reads the wrapper's fatbin at offset pointer - base (modulo 2^64), through
 * the same fetch and with no limit but its own header's size; img->bytes is
 * then the fatbin's. */
ct_image_status ct_image_read_at(ct_image *img, ct_image_fetch fetch, void *ctx, uint64_t limit, uint64_t base);
/* ct_image_read (base NULL) or ct_image_read_at, and every PTX entry's
 * kernels' parameter directions (core/ptx.h) are kept too: the whole text
 * of each PTX entry (inflated, at most CT_IMAGE_MAX_INFLATED) is held
 * while its directions are found. */
ct_image_status ct_image_read_directions(ct_image *img, ct_image_fetch fetch, void *ctx, uint64_t limit,
                                         const uint64_t *base);
/* The image a file of size bytes holds (fetch serves the file), with its
 * PTX's directions or not.  The file's end is the end of its text: bare
 * PTX without a trailing NUL (as `nvcc -ptx` writes it) reads as the same
 * text with one; every other form reads as ct_image_read reads its bytes. */
ct_image_status ct_image_read_file(ct_image *img, ct_image_fetch fetch, void *ctx, uint64_t size, bool directions);
void ct_image_free(ct_image *img);

/* Does the image hold kernel `mangled`?  Unknown (false, *known false) when
 * some entry's kernels could not be read. */
bool ct_image_has_kernel(const ct_image *img, const char *mangled, bool *known);

/* One parameter of a kernel as its image lays it out in the parameter
 * buffer: byte offset and size. */
typedef struct ct_image_param {
    uint32_t offset, size;
} ct_image_param;
/* Kernel `mangled`'s parameters in order, at most cap of them into out;
 * returns how many it has (may exceed cap: only cap were written), or -1
 * when the image does not say (no such kernel, or no entry holding it had
 * a readable parameter table; one of more than CT_IMAGE_MAX_PARAMS
 * parameters is not kept, so not readable here). */
int ct_image_kernel_params(const ct_image *img, const char *mangled, ct_image_param *out, unsigned cap);

/* Kernel `mangled`'s parameter directions (ct_ptx_dir) as the PTX of the
 * code that runs on a device of compute capability cc states them: bare
 * PTX text; the PTX entry the driver would JIT when no SASS runs; or, when
 * SASS runs, the PTX entry of that very SASS's architecture (compiled
 * alongside it).  At most cap into out; returns how many parameters, or -1
 * when no such PTX was read (SASS only, another architecture's PTX, an
 * image not read by ct_image_read_directions) or its parameter count
 * disagrees with the kernel's layout: nothing is known then. */
int ct_image_kernel_directions(const ct_image *img, const char *mangled, unsigned cc, uint8_t *out, unsigned cap);

/* What a device of compute capability cc (major * 10 + minor) can do with
 * the image: run an entry's SASS (same major, minor at most the device's;
 * an arch-specific one only on that very architecture), JIT its PTX (a
 * PTX entry of an architecture at most the device's), or neither. */
typedef enum ct_image_fit {
    CT_FIT_UNKNOWN, /* not an image this reader knows, or not read whole */
    CT_FIT_SASS,
    CT_FIT_PTX,  /* only by JIT compiling its PTX */
    CT_FIT_NONE, /* nothing this device can use */
} ct_image_fit;
ct_image_fit ct_image_fit_for(const ct_image *img, unsigned cc);

/* "sm_70 and sm_80 code and no PTX" / "sm_90 code and compute_90 PTX":
 * what the image holds, for people; returns the length it wanted. */
size_t ct_image_describe(const ct_image *img, char *buf, size_t cap);

#endif

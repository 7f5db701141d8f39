/*
 * link.c: the JIT linker (cuLinkCreate, AddData, AddFile, Complete,
 * Destroy), which hashcat and numba use to join their images into one
 * before loading it.
 *
 * fakecuda runs no device code, so linking is deciding which kernels the
 * joined image holds: the union of its inputs' (image.c reads each as the
 * loader would). cuLinkComplete writes that union as a bare cubin of the
 * device's arch, one a loader reads back (image.c: ELF64, EM_CUDA,
 * EI_ABIVERSION 8, the arch in bits 8-15 of e_flags, each kernel an
 * STT_FUNC symbol with st_other 0x10), so cuModuleLoadData of it holds
 * exactly those kernels, and they still run as built-ins or plugins.
 *
 * Each input must be what its type says: a cubin an ELF for EM_CUDA, a
 * fatbinary a container, PTX text that reads as PTX (else
 * CUDA_ERROR_INVALID_IMAGE, or CUDA_ERROR_INVALID_PTX for PTX); an input
 * the device cannot run is CUDA_ERROR_NO_BINARY_FOR_GPU, as at a load.
 * Host objects and libraries (CU_JIT_INPUT_OBJECT, LIBRARY) and cubins or
 * containers fakecuda does not read are taken like images the loader does
 * not read: they hold every known kernel. LTO IR (CU_JIT_INPUT_NVVM) is not
 * emulated.
 *
 * A link of one PTX text that defines a kernel, and nothing else
 * (numba-cuda's kernel without device libraries, when nvJitLink is absent)
 * hands back that text, NUL included, not a cubin: the loader then runs its
 * kernels with the PTX executor, as the kernels a cubin would hold are not
 * fakecuda's to run.
 * Joined with other inputs, a PTX input adds only the kernels the registry
 * knows (PTX modules are not merged).
 *
 * Invariants:
 * - A state's holds has fc_kernel_count() entries; every set means the
 *   union is all of them, whatever holds says.
 * - The image cuLinkComplete hands out is owned by the state and lives
 *   until the next cuLinkComplete or cuLinkDestroy, as the driver's does.
 * - A refused input changes nothing in the state.
 */
#include "fakecuda.h"

#include <assert.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FC_LINK_FILE_MAX ((size_t)256 << 20) /* image.c's largest image */

static CUlinkState fc_link_resolve(CUlinkState st)
{
    return fc_obj_valid(st, FC_K_LINK) ? st : NULL;
}

/* The caller's error log gets the reason of a refusal, as the driver's does. */
static CUresult fc_link_error(CUlinkState st, CUresult r, const char *fmt, ...)
{
    if (st->error_log && st->error_log_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->error_log, st->error_log_size, fmt, ap);
        va_end(ap);
    }
    return r;
}

static bool fc_options_ok(unsigned nopt, const CUjit_option *opt, void **val)
{
    if (nopt && (!opt || !val))
        return false;
    for (unsigned i = 0; i < nopt; i++)
        if ((unsigned)opt[i] >= CU_JIT_NUM_OPTIONS)
            return false;
    return true;
}

CUresult fc_link_create(unsigned nopt, CUjit_option *opt, void **val, CUlinkState *out)
{
    CUcontext ctx;
    if (!out || !fc_options_ok(nopt, opt, val))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_current(&ctx); /* the link targets the current context's device */
    if (r != CUDA_SUCCESS)
        return r;
    CUlinkState st = fc_obj_new(FC_P_LINK, FC_K_LINK, NULL);
    if (!st)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (!(st->holds = calloc(fc_kernel_count() + 1, 1))) {
        fc_obj_free(st);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* The logs start empty: nothing fakecuda does writes an info message. */
    for (unsigned i = 0; i < nopt; i++) {
        if (opt[i] == CU_JIT_ERROR_LOG_BUFFER)
            st->error_log = val[i];
        else if (opt[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            st->error_log_size = (size_t)(uintptr_t)val[i];
    }
    for (unsigned i = 0; i < nopt; i++)
        for (unsigned j = 0; j < nopt; j++)
            if (opt[i] == CU_JIT_INFO_LOG_BUFFER && opt[j] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES && val[i] &&
                (uintptr_t)val[j] > 0)
                *(char *)val[i] = '\0';
    if (!st->error_log)
        st->error_log_size = 0;
    if (st->error_log_size)
        st->error_log[0] = '\0';
    *out = st;
    return CUDA_SUCCESS;
}

static uint32_t fc_magic(const unsigned char *b, size_t n)
{
    return n >= 4 ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24 : 0;
}

/* Whether the n bytes at b (already readable) are what type says. */
static CUresult fc_input_kind_ok(CUjitInputType type, const unsigned char *b, size_t n)
{
    switch (type) {
    case CU_JIT_INPUT_CUBIN:
        return n >= 20 && fc_magic(b, n) == 0x464c457fu && (b[0x12] | b[0x13] << 8) == 190 ? CUDA_SUCCESS
                                                                                           : CUDA_ERROR_INVALID_IMAGE;
    case CU_JIT_INPUT_FATBINARY: return fc_magic(b, n) == 0xBA55ED50u ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
    case CU_JIT_INPUT_PTX:
        return fc_magic(b, n) == 0x464c457fu || fc_magic(b, n) == 0xBA55ED50u ? CUDA_ERROR_INVALID_PTX : CUDA_SUCCESS;
    default: return CUDA_SUCCESS;
    }
}

/* Adds the n bytes at b (a private copy) of this type to the state. */
static CUresult fc_link_take(CUlinkState st, CUjitInputType type, const unsigned char *b, size_t n, const char *name)
{
    const char *what = name ? name : "(unnamed)";
    CUresult r = fc_input_kind_ok(type, b, n);
    if (r != CUDA_SUCCESS)
        return fc_link_error(st, r, "fakecuda: input %s is not a %s", what,
                             type == CU_JIT_INPUT_PTX     ? "PTX text"
                             : type == CU_JIT_INPUT_CUBIN ? "cubin"
                                                          : "fatbinary");
    fc_image img = {0};
    bool read =
        type != CU_JIT_INPUT_OBJECT && type != CU_JIT_INPUT_LIBRARY && fc_image_read_bytes(&img, b, n) && img.read;
    if (type == CU_JIT_INPUT_PTX && !read)
        return fc_link_error(st, CUDA_ERROR_INVALID_PTX, "fakecuda: input %s does not read as PTX", what);
    if (read && !img.runs) {
        fc_image_drop(&img);
        return fc_link_error(st, CUDA_ERROR_NO_BINARY_FOR_GPU, "fakecuda: input %s has no code for sm_%d", what,
                             fc_device_cc());
    }
    if (!read || !img.holds)
        st->every = true;
    assert(st->holds && "a state's holds has fc_kernel_count() entries");
    for (unsigned i = 0; read && img.holds && i < fc_kernel_count(); i++)
        st->holds[i] |= img.holds[i];
    bool defines_kernels = read && img.names.len > 0;
    fc_image_drop(&img);
    if (type == CU_JIT_INPUT_PTX && defines_kernels && !st->ptx && !(st->ptx = strndup((const char *)b, n)))
        return fc_link_error(st, CUDA_ERROR_OUT_OF_MEMORY, "fakecuda: no memory for input %s", what);
    st->inputs++;
    return CUDA_SUCCESS;
}

static CUresult fc_input_check(CUlinkState st, CUjitInputType type, unsigned nopt, CUjit_option *opt, void **val)
{
    if (!fc_link_resolve(st))
        return CUDA_ERROR_INVALID_HANDLE;
    if ((unsigned)type >= CU_JIT_NUM_INPUT_TYPES || !fc_options_ok(nopt, opt, val))
        return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_JIT_INPUT_NVVM)
        return fc_link_error(st, CUDA_ERROR_NOT_SUPPORTED, "fakecuda: LTO IR (CU_JIT_INPUT_NVVM) is not emulated");
    return CUDA_SUCCESS;
}

CUresult fc_link_add_data(CUlinkState st, CUjitInputType type, void *data, size_t size, const char *name, unsigned nopt,
                          CUjit_option *opt, void **val)
{
    CUresult r = fc_input_check(st, type, nopt, opt, val);
    if (r != CUDA_SUCCESS)
        return r;
    if (!data || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (size > FC_LINK_FILE_MAX)
        return fc_link_error(st, CUDA_ERROR_INVALID_IMAGE, "fakecuda: input %s is too large", name ? name : "");
    /* Read through image.c's copy, which fails rather than faults on a bogus address. */
    unsigned char *b = fc_image_copy_in(data, size);
    if (!b)
        return fc_link_error(st, CUDA_ERROR_INVALID_VALUE, "fakecuda: input %s is not readable", name ? name : "");
    /* PTX may be counted with its NUL or without: the text ends at either. */
    if (type == CU_JIT_INPUT_PTX) {
        const unsigned char *nul = memchr(b, '\0', size);
        size = nul ? (size_t)(nul - b) : size;
    }
    r = size ? fc_link_take(st, type, b, size, name)
             : fc_link_error(st, CUDA_ERROR_INVALID_PTX, "fakecuda: input %s is empty", name ? name : "");
    free(b);
    return r;
}

/* The whole file at path, NUL-terminated; NULL when it cannot be read. */
static unsigned char *fc_slurp(const char *path, size_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0)
        return NULL;
    unsigned char *b = NULL;
    size_t got = 0;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size <= FC_LINK_FILE_MAX &&
        (b = malloc((size_t)sb.st_size + 1)))
        while (got < (size_t)sb.st_size) {
            ssize_t r = read(fd, b + got, (size_t)sb.st_size - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
    close(fd);
    if (b && got != (size_t)sb.st_size) {
        free(b);
        return NULL;
    }
    if (b) {
        b[got] = '\0';
        *n = got;
    }
    return b;
}

CUresult fc_link_add_file(CUlinkState st, CUjitInputType type, const char *path, unsigned nopt, CUjit_option *opt,
                          void **val)
{
    CUresult r = fc_input_check(st, type, nopt, opt, val);
    if (r != CUDA_SUCCESS)
        return r;
    if (!path)
        return CUDA_ERROR_INVALID_VALUE;
    size_t n = 0;
    unsigned char *b = fc_slurp(path, &n);
    if (!b)
        return fc_link_error(st, CUDA_ERROR_FILE_NOT_FOUND, "fakecuda: cannot read %s", path);
    r = n ? fc_link_take(st, type, b, n, path)
          : fc_link_error(st, CUDA_ERROR_INVALID_IMAGE, "fakecuda: %s is empty", path);
    free(b);
    return r;
}

/* ---- the joined image: a bare cubin ------------------------------------- */

static void fc_put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void fc_put32(unsigned char *p, uint32_t v)
{
    fc_put16(p, (uint16_t)v);
    fc_put16(p + 2, (uint16_t)(v >> 16));
}

static void fc_put64(unsigned char *p, uint64_t v)
{
    fc_put32(p, (uint32_t)v);
    fc_put32(p + 4, (uint32_t)(v >> 32));
}

/* One section header (64 bytes) at p. */
static void fc_section(unsigned char *p, uint32_t name, uint32_t type, uint64_t off, uint64_t size, uint32_t link,
                       uint32_t info, uint64_t entsize)
{
    fc_put32(p, name);
    fc_put32(p + 4, type);
    fc_put64(p + 0x18, off);
    fc_put64(p + 0x20, size);
    fc_put32(p + 0x28, link);
    fc_put32(p + 0x2c, info);
    fc_put64(p + 0x30, 1);
    fc_put64(p + 0x38, entsize);
}

/* Layout: ELF header, .shstrtab, .strtab, .symtab (8-aligned), the four
   section headers (null, .shstrtab, .strtab, .symtab). */
static unsigned char *fc_cubin_make(const CUlinkState st, size_t *size)
{
    static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab";
    unsigned n = fc_kernel_count(), nsym = 1;
    size_t strsz = 1;
    for (unsigned i = 0; i < n; i++)
        if (st->every || st->holds[i]) {
            strsz += strlen(fc_kernel_at(i)->name) + 1;
            nsym++;
        }
    size_t shstr_off = 64, str_off = shstr_off + sizeof shstr;
    size_t sym_off = (str_off + strsz + 7) / 8 * 8, sh_off = sym_off + (size_t)nsym * 24;
    size_t total = sh_off + 4 * 64;
    unsigned char *e = calloc(total, 1);
    if (!e)
        return NULL;
    memcpy(e, "\177ELF", 4);
    e[4] = 2;              /* ELFCLASS64 */
    e[5] = 1;              /* little-endian */
    e[6] = 1;              /* EV_CURRENT */
    e[7] = 0x33;           /* ELFOSABI_CUDA */
    e[8] = 8;              /* the ABI version image.c reads */
    fc_put16(e + 0x10, 2); /* ET_EXEC, as a linked cubin is */
    fc_put16(e + 0x12, 190);
    fc_put32(e + 0x14, 1);
    fc_put64(e + 0x28, sh_off);
    fc_put32(e + 0x30, (uint32_t)fc_device_cc() << 8);
    fc_put16(e + 0x34, 64);
    fc_put16(e + 0x3a, 64);
    fc_put16(e + 0x3c, 4);
    fc_put16(e + 0x3e, 1);
    memcpy(e + shstr_off, shstr, sizeof shstr);
    size_t name = 1;
    unsigned sym = 1;
    for (unsigned i = 0; i < n; i++) {
        if (!st->every && !st->holds[i])
            continue;
        const char *k = fc_kernel_at(i)->name;
        memcpy(e + str_off + name, k, strlen(k) + 1);
        unsigned char *s = e + sym_off + (size_t)sym++ * 24;
        fc_put32(s, (uint32_t)name);
        s[4] = 0x12;             /* STB_GLOBAL, STT_FUNC */
        s[5] = 0x10;             /* a kernel's st_other */
        fc_put16(s + 6, 0xfff1); /* SHN_ABS: the code is not fakecuda's to place */
        name += strlen(k) + 1;
    }
    unsigned char *sh = e + sh_off;
    fc_section(sh + 64, 1, 3, shstr_off, sizeof shstr, 0, 0, 0);         /* .shstrtab, SHT_STRTAB */
    fc_section(sh + 128, 11, 3, str_off, strsz, 0, 0, 0);                /* .strtab */
    fc_section(sh + 192, 19, 2, sym_off, (uint64_t)nsym * 24, 2, 1, 24); /* .symtab, SHT_SYMTAB */
    *size = total;
    return e;
}

CUresult fc_link_complete(CUlinkState st, void **cubin, size_t *size)
{
    if (!fc_link_resolve(st))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!cubin || !size)
        return CUDA_ERROR_INVALID_VALUE;
    if (st->inputs == 0)
        return fc_link_error(st, CUDA_ERROR_INVALID_VALUE, "fakecuda: nothing to link");
    size_t n = 0;
    bool ptx_alone = st->inputs == 1 && st->ptx;
    unsigned char *e = ptx_alone ? (unsigned char *)strdup(st->ptx) : fc_cubin_make(st, &n);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (ptx_alone)
        n = strlen(st->ptx) + 1;
    free(st->image);
    st->image = e;
    st->image_size = n;
    *cubin = e;
    *size = n;
    assert(st->inputs > 0 && *cubin == st->image && "the image handed out is the state's own");
    return CUDA_SUCCESS;
}

CUresult fc_link_destroy(CUlinkState st)
{
    if (!fc_link_resolve(st))
        return CUDA_ERROR_INVALID_HANDLE;
    free(st->holds);
    free(st->ptx);
    free(st->image);
    fc_obj_free(st);
    return CUDA_SUCCESS;
}

/*
 * test_images.c: fakecuda reads the module and library images it is given
 * (image.c): nvcc-built fatbins, cubins and PTX (FC_IMAGES, built by
 * meson.build from image_kernels.cu) load only where the device can run
 * them, at every load entry point, and hold only their own kernels; an
 * image fakecuda does not recognise, or cannot read, still holds every
 * known kernel. FC_HAVE_ZSTD says whether fakecuda was built with libzstd,
 * which lists the kernels of compressed entries.
 *
 * Each test sets FAKECUDA_COMPUTE_CAPABILITY, when it needs another device
 * than 9.0, before its first driver call (each runs in its own process).
 */
#include "fc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define IN_IMAGE_1 "scale"
#define IN_IMAGE_2 "_Z4fillPfif"
#define NOT_IN_IMAGE "_Z5saxpyifPKfPf" /* a built-in the images lack */

/* The CUDA runtime's __fatBinC_Wrapper_t. */
struct wrapper {
    int magic, version;
    const void *data;
    void *unused;
};
#define WRAPPER_MAGIC 0x466243b1

/* The file FC_IMAGES/name, whole and NUL-terminated (PTX must be). */
static const void *image(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", FC_IMAGES, name);
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    cr_assert(b);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    return b;
}

static const char *path_of(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", FC_IMAGES, name);
    return path;
}

static void set_cc(const char *cc)
{
    setenv("FAKECUDA_COMPUTE_CAPABILITY", cc, 1);
    fc_setup();
}

/* What every load entry point answers for the image file name. */
static void expect_load(const char *name, CUresult want)
{
    const void *b = image(name);
    struct wrapper w = {WRAPPER_MAGIC, 1, b, NULL};
    CUmodule mod;
    CUlibrary lib;
    FAILS(cuModuleLoad(&mod, path_of(name)), want);
    FAILS(cuLibraryLoadFromFile(&lib, path_of(name), NULL, NULL, 0, NULL, NULL, 0), want);
    FAILS(cuModuleLoadData(&mod, b), want);
    FAILS(cuModuleLoadDataEx(&mod, b, 0, NULL, NULL), want);
    FAILS(cuLibraryLoadData(&lib, b, NULL, NULL, 0, NULL, NULL, 0), want);
    if (((const unsigned char *)b)[0] == 0x50) { /* a fatbin container: also whole and wrapped */
        FAILS(cuModuleLoadFatBinary(&mod, b), want);
        FAILS(cuModuleLoadFatBinary(&mod, &w), want);
        FAILS(cuModuleLoadData(&mod, &w), want);
        FAILS(cuLibraryLoadData(&lib, &w, NULL, NULL, 0, NULL, NULL, 0), want);
    }
}

/* The image holds scale and fill, not saxpy, as a module and as a library. */
static void expect_own_kernels(const char *name)
{
    CUmodule mod;
    CUlibrary lib;
    CUfunction f;
    CUkernel k;
    OK(cuModuleLoadData(&mod, image(name)));
    OK(cuModuleGetFunction(&f, mod, IN_IMAGE_1));
    OK(cuModuleGetFunction(&f, mod, IN_IMAGE_2));
    FAILS(cuModuleGetFunction(&f, mod, NOT_IN_IMAGE), CUDA_ERROR_NOT_FOUND);
    OK(cuLibraryLoadData(&lib, image(name), NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, IN_IMAGE_1));
    FAILS(cuLibraryGetKernel(&k, lib, NOT_IN_IMAGE), CUDA_ERROR_NOT_FOUND);
    OK(cuModuleLoad(&mod, path_of(name)));
    OK(cuModuleGetFunction(&f, mod, IN_IMAGE_2));
    FAILS(cuModuleGetFunction(&f, mod, NOT_IN_IMAGE), CUDA_ERROR_NOT_FOUND);
    OK(cuLibraryLoadFromFile(&lib, path_of(name), NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, IN_IMAGE_2));
    FAILS(cuLibraryGetKernel(&k, lib, NOT_IN_IMAGE), CUDA_ERROR_NOT_FOUND);
}

/* The image loads and holds every known kernel, as a module and as a library. */
static void expect_every_kernel(const void *img)
{
    static const char *const names[] = {"_Z4fillPfif", "_Z5saxpyifPKfPf", "scale", "_Z5crashPf"};
    CUmodule mod;
    CUlibrary lib;
    CUfunction f;
    CUkernel k;
    OK(cuModuleLoadData(&mod, img));
    OK(cuLibraryLoadData(&lib, img, NULL, NULL, 0, NULL, NULL, 0));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        OK(cuModuleGetFunction(&f, mod, names[i]));
        OK(cuLibraryGetKernel(&k, lib, names[i]));
    }
}

Test(images, sm80_fails_on_9_0)
{
    fc_setup();
    expect_load("sm80.fatbin", CUDA_ERROR_NO_BINARY_FOR_GPU);
    expect_load("sm80.cubin", CUDA_ERROR_NO_BINARY_FOR_GPU);
}

Test(images, sm80_loads_on_8_0)
{
    set_cc("8.0");
    expect_load("sm80.fatbin", CUDA_SUCCESS);
    expect_own_kernels("sm80.fatbin");
    expect_own_kernels("sm80.cubin");
}

Test(images, sm80_loads_on_8_6)
{
    set_cc("8.6");
    expect_load("sm80.fatbin", CUDA_SUCCESS);
    expect_load("sm80.cubin", CUDA_SUCCESS);
    expect_load("sm90.fatbin", CUDA_ERROR_NO_BINARY_FOR_GPU);
}

Test(images, sm90_loads_on_9_0)
{
    fc_setup();
    expect_load("sm90.fatbin", CUDA_SUCCESS);
    expect_own_kernels("sm90.fatbin");
}

/* SASS runs within its major, from its minor up. */
Test(images, sm90_loads_on_9_1_sm90a_does_not)
{
    set_cc("9.1");
    expect_load("sm90.fatbin", CUDA_SUCCESS);
    expect_load("sm90a.fatbin", CUDA_ERROR_NO_BINARY_FOR_GPU);
}

Test(images, sm90a_loads_on_exactly_9_0)
{
    fc_setup();
    expect_load("sm90a.fatbin", CUDA_SUCCESS);
    expect_own_kernels("sm90a.fatbin");
}

Test(images, sm90_fails_on_10_0)
{
    set_cc("10.0");
    expect_load("sm90.fatbin", CUDA_ERROR_NO_BINARY_FOR_GPU);
}

/* PTX for an older arch is compiled for the device: it loads. */
Test(images, ptx80_is_compiled_on_9_0)
{
    fc_setup();
    expect_load("ptx80.fatbin", CUDA_SUCCESS);
    expect_load("ptx80_plain.fatbin", CUDA_SUCCESS);
    expect_load("sm80.ptx", CUDA_SUCCESS);
    expect_own_kernels("ptx80_plain.fatbin");
    expect_own_kernels("sm80.ptx");
}

Test(images, ptx80_fails_on_7_5)
{
    set_cc("7.5");
    expect_load("ptx80.fatbin", CUDA_ERROR_NO_BINARY_FOR_GPU);
    expect_load("sm80.ptx", CUDA_ERROR_NO_BINARY_FOR_GPU);
}

Test(images, hand_written_ptx)
{
    static const char newer[] = "// for a later GPU\n.version 9.0\n.target sm_100\n.address_size 64\n"
                                ".visible .entry scale(.param .u64 a, .param .u32 b, .param .f32 c) { ret; }\n";
    static const char older[] = ".version 7.0\n.target sm_75, debug\n.address_size 64\n"
                                ".extern .entry _Z4fillPfif(.param .u64 a);\n"
                                "/* .entry _Z5saxpyifPKfPf */\n"
                                ".visible .entry scale(.param .u64 a, .param .u32 b, .param .f32 c) { ret; }\n";
    fc_setup();
    CUmodule mod;
    CUfunction f;
    FAILS(cuModuleLoadData(&mod, newer), CUDA_ERROR_NO_BINARY_FOR_GPU);
    OK(cuModuleLoadData(&mod, older));
    OK(cuModuleGetFunction(&f, mod, "scale"));
    FAILS(cuModuleGetFunction(&f, mod, "_Z4fillPfif"), CUDA_ERROR_NOT_FOUND);     /* only declared */
    FAILS(cuModuleGetFunction(&f, mod, "_Z5saxpyifPKfPf"), CUDA_ERROR_NOT_FOUND); /* a comment */
}

/* A __device__ function is not a kernel, though it has a kernel's name. */
Test(images, device_functions_are_not_kernels)
{
    fc_setup();
    CUmodule mod;
    CUfunction f;
    for (int i = 0; i < 2; i++) {
        OK(cuModuleLoadData(&mod, image(i ? "sm90_rdc.cubin" : "sm80.ptx")));
        OK(cuModuleGetFunction(&f, mod, "scale"));
        FAILS(cuModuleGetFunction(&f, mod, "_Z5crashPf"), CUDA_ERROR_NOT_FOUND);
    }
}

/* Made-up images, bogus pointers among them, load and hold every kernel,
   on any device, as before fakecuda read images. */
Test(images, made_up_images_hold_every_kernel)
{
    set_cc("7.0");
    struct {
        int a;
        void *b;
    } small = {1, NULL};
    CUdeviceptr dev;
    OK(cuMemAlloc(&dev, 256));
    struct wrapper nowhere = {WRAPPER_MAGIC, 1, NULL, NULL};
    struct wrapper at_text = {WRAPPER_MAGIC, 1, "not a fatbin", NULL};
    struct wrapper at_device = {WRAPPER_MAGIC, 1, (void *)(uintptr_t)dev, NULL};
    /* Images cut short by unreadable memory: a container that says it is
       longer, PTX without its NUL. */
    long page = sysconf(_SC_PAGESIZE);
    unsigned char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(two, MAP_FAILED);
    cr_assert_eq(mprotect(two + page, (size_t)page, PROT_NONE), 0);
    unsigned char *cut = two + page - 64;
    memcpy(cut, image("sm90.fatbin"), 64);
    static const char ptx[] = ".version 9.0\n.target sm_100\n";
    char *unended = (char *)two + page - (sizeof ptx - 1);
    memcpy(unended, ptx, sizeof ptx - 1);
    expect_every_kernel("image");
    expect_every_kernel("");
    expect_every_kernel(&small);
    expect_every_kernel((const void *)(uintptr_t)16);
    expect_every_kernel((const void *)(uintptr_t)dev); /* fakecuda's PROT_NONE device memory */
    expect_every_kernel(&nowhere);
    expect_every_kernel(&at_text);
    expect_every_kernel(&at_device);
    expect_every_kernel(cut);
    expect_every_kernel(unended);
    expect_every_kernel(".version 9.0\n// no .target\n");
    CUmodule mod;
    CUfunction f;
    OK(cuModuleLoad(&mod, FC_SOURCE "/image_kernels.cu")); /* C++ source */
    OK(cuModuleGetFunction(&f, mod, NOT_IN_IMAGE));
    OK(cuModuleLoad(&mod, "/proc/self/exe")); /* an ELF for the host, not the GPU */
    OK(cuModuleGetFunction(&f, mod, NOT_IN_IMAGE));
    CUlibrary lib;
    CUkernel k;
    OK(cuLibraryLoadFromFile(&lib, "/proc/self/exe", NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, NOT_IN_IMAGE));
}

Test(images, unreadable_files)
{
    fc_setup();
    CUmodule mod;
    CUlibrary lib;
    FAILS(cuModuleLoad(&mod, "/nonexistent/kernels.cubin"), CUDA_ERROR_FILE_NOT_FOUND);
    FAILS(cuLibraryLoadFromFile(&lib, "/nonexistent/kernels.cubin", NULL, NULL, 0, NULL, NULL, 0),
          CUDA_ERROR_FILE_NOT_FOUND);
    FAILS(cuLibraryLoadFromFile(&lib, FC_IMAGES, NULL, NULL, 0, NULL, NULL, 0), CUDA_ERROR_FILE_NOT_FOUND);
    FAILS(cuLibraryLoadFromFile(NULL, FC_IMAGES "/sm90.fatbin", NULL, NULL, 0, NULL, NULL, 0),
          CUDA_ERROR_INVALID_VALUE);
    FAILS(cuLibraryLoadFromFile(&lib, NULL, NULL, NULL, 0, NULL, NULL, 0), CUDA_ERROR_INVALID_VALUE);
}

/* Whether the first entry of the container b is compressed: the premise
   of the next test, which nvcc's defaults could change. */
static uint64_t first_entry_flags(const unsigned char *b)
{
    uint64_t flags;
    memcpy(&flags, b + 16 + 0x28, sizeof flags);
    return flags;
}

static bool first_entry_compressed(const unsigned char *b)
{
    return first_entry_flags(b) & 0x8000;
}

/* Compressed entries' kernels are listed with libzstd; without it they are
   unknown and the image holds every kernel. Either way it loads or not by
   its header. */
Test(images, compressed_entries)
{
    cr_assert(first_entry_compressed(image("ptx80.fatbin")), "nvcc compresses PTX entries by default");
    cr_assert(first_entry_compressed(image("sm90_packed.fatbin")));
    cr_assert(!first_entry_compressed(image("ptx80_plain.fatbin")));
    fc_setup();
    expect_load("sm90_packed.fatbin", CUDA_SUCCESS);
#if FC_HAVE_ZSTD
    expect_own_kernels("ptx80.fatbin");
    expect_own_kernels("sm90_packed.fatbin");
#else
    expect_every_kernel(image("ptx80.fatbin"));
    expect_every_kernel(image("sm90_packed.fatbin"));
#endif
}

/* LZ4 entries (flag 0x2000: nvcc's --compress-mode=speed, and every entry
   of cuFFT 12) are read by fakecuda's own decoder, libzstd or not. */
Test(images, lz4_entries)
{
    cr_assert(first_entry_flags(image("ptx80_lz4.fatbin")) & 0x2000, "--compress-mode=speed packs with LZ4");
    cr_assert(first_entry_flags(image("sm90_lz4.fatbin")) & 0x2000);
    fc_setup();
    expect_load("ptx80_lz4.fatbin", CUDA_SUCCESS);
    expect_load("sm90_lz4.fatbin", CUDA_SUCCESS);
    expect_own_kernels("ptx80_lz4.fatbin");
    expect_own_kernels("sm90_lz4.fatbin");
}

/* A payload that does not decode to the size its header says (here one
   whose compressed size is cut short, or claims more bytes than it holds)
   is an image fakecuda does not read: every kernel, no crash. */
Test(images, lz4_entry_that_does_not_decode_is_not_read)
{
    fc_setup();
    for (int cut = 0; cut < 2; cut++) {
        const unsigned char *good = image("sm90_lz4.fatbin");
        uint64_t size;
        memcpy(&size, good + 8, sizeof size);
        unsigned char *bad = malloc(16 + size);
        cr_assert(bad);
        memcpy(bad, good, 16 + size);
        uint32_t packed;
        uint64_t plain;
        memcpy(&packed, bad + 16 + 0x10, sizeof packed);
        memcpy(&plain, bad + 16 + 0x38, sizeof plain);
        if (cut == 0)
            packed /= 2;
        else
            plain += 1;
        memcpy(bad + 16 + 0x10, &packed, sizeof packed);
        memcpy(bad + 16 + 0x38, &plain, sizeof plain);
        expect_every_kernel(bad);
    }
}

Test(images, compressed_entry_for_another_gpu_fails)
{
    set_cc("8.6");
    expect_load("sm90_packed.fatbin", CUDA_ERROR_NO_BINARY_FOR_GPU);
}

/* ---- where a lazily loaded image the device cannot run is reported ------ */

static void set_modes(const char *loading, const char *lazy_errors)
{
    if (loading)
        setenv("CUDA_MODULE_LOADING", loading, 1);
    else
        unsetenv("CUDA_MODULE_LOADING");
    if (lazy_errors)
        setenv("FAKECUDA_LAZY_IMAGE_ERRORS", lazy_errors, 1);
    else
        unsetenv("FAKECUDA_LAZY_IMAGE_ERRORS");
    fc_setup();
}

static CUfunctionLoadingState state_of(CUfunction f)
{
    CUfunctionLoadingState st = CU_FUNCTION_LOADING_STATE_MAX;
    OK(cuFuncIsLoaded(&st, f));
    return st;
}

/* EAGER reports at the load, whatever FAKECUDA_LAZY_IMAGE_ERRORS says, and
   its functions are loaded from the start. */
Test(images, eager_reports_at_load)
{
    set_modes("EAGER", "launch");
    expect_load("sm80.fatbin", CUDA_ERROR_NO_BINARY_FOR_GPU);
    CUmodule mod;
    CUfunction f;
    OK(cuModuleLoadData(&mod, image("sm90.fatbin")));
    OK(cuModuleGetFunction(&f, mod, IN_IMAGE_1));
    cr_assert_eq(state_of(f), CU_FUNCTION_LOADING_STATE_LOADED);
}

Test(images, lazy_reports_at_load_by_default)
{
    set_modes(NULL, NULL);
    expect_load("sm80.fatbin", CUDA_ERROR_NO_BINARY_FOR_GPU);
}

Test(images, lazy_malformed_setting_reports_at_load)
{
    set_modes("LAZY", "later");
    expect_load("sm80.fatbin", CUDA_ERROR_NO_BINARY_FOR_GPU);
}

Test(images, lazy_reports_at_lookup)
{
    set_modes("LAZY", "lookup");
    expect_load("sm80.fatbin", CUDA_SUCCESS);
    CUmodule mod;
    CUlibrary lib;
    CUfunction f;
    CUkernel k;
    OK(cuModuleLoadData(&mod, image("sm80.fatbin")));
    FAILS(cuModuleGetFunction(&f, mod, IN_IMAGE_1), CUDA_ERROR_NO_BINARY_FOR_GPU);
    FAILS(cuModuleGetFunction(&f, mod, NOT_IN_IMAGE), CUDA_ERROR_NO_BINARY_FOR_GPU);
    FAILS(cuModuleGetFunction(&f, mod, IN_IMAGE_1), CUDA_ERROR_NO_BINARY_FOR_GPU); /* every time */
    OK(cuLibraryLoadData(&lib, image("sm80.fatbin"), NULL, NULL, 0, NULL, NULL, 0));
    FAILS(cuLibraryGetKernel(&k, lib, IN_IMAGE_1), CUDA_ERROR_NO_BINARY_FOR_GPU);
    OK(cuModuleUnload(mod));
    OK(cuLibraryUnload(lib));
    /* An image the device runs is not affected. */
    OK(cuModuleLoadData(&mod, image("sm90.fatbin")));
    OK(cuModuleGetFunction(&f, mod, IN_IMAGE_1));
    FAILS(cuModuleGetFunction(&f, mod, NOT_IN_IMAGE), CUDA_ERROR_NOT_FOUND);
}

Test(images, lazy_reports_at_launch)
{
    set_modes(NULL, "launch");
    expect_load("sm80.fatbin", CUDA_SUCCESS);
    CUmodule mod;
    CUlibrary lib;
    CUfunction f;
    CUkernel k;
    OK(cuModuleLoadData(&mod, image("sm80.fatbin")));
    OK(cuModuleGetFunction(&f, mod, IN_IMAGE_1));
    FAILS(cuModuleGetFunction(&f, mod, NOT_IN_IMAGE), CUDA_ERROR_NOT_FOUND); /* still the image's kernels */
    cr_assert_eq(state_of(f), CU_FUNCTION_LOADING_STATE_UNLOADED);
    FAILS(cuFuncLoad(f), CUDA_ERROR_NO_BINARY_FOR_GPU);
    CUdeviceptr d = fc_upload((float[4]){1, 2, 3, 4}, 4 * sizeof(float));
    int n = 4;
    float factor = 2;
    void *args[] = {&d, &n, &factor};
    FAILS(fc_launch(f, 4, args, false, NULL), CUDA_ERROR_NO_BINARY_FOR_GPU);
    cr_assert_eq(state_of(f), CU_FUNCTION_LOADING_STATE_UNLOADED);
    CUgraph g;
    CUgraphNode node;
    CUDA_KERNEL_NODE_PARAMS p = {.func = f,
                                 .gridDimX = 1,
                                 .gridDimY = 1,
                                 .gridDimZ = 1,
                                 .blockDimX = 4,
                                 .blockDimY = 1,
                                 .blockDimZ = 1,
                                 .kernelParams = args};
    OK(cuGraphCreate(&g, 0));
    FAILS(cuGraphAddKernelNode(&node, g, NULL, 0, &p), CUDA_ERROR_NO_BINARY_FOR_GPU);
    OK(cuLibraryLoadData(&lib, image("sm80.fatbin"), NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, IN_IMAGE_1));
    FAILS(fc_launch((CUfunction)(void *)k, 4, args, false, NULL), CUDA_ERROR_NO_BINARY_FOR_GPU);
    OK(cuKernelGetFunction(&f, k));
    FAILS(fc_launch(f, 4, args, false, NULL), CUDA_ERROR_NO_BINARY_FOR_GPU);
    /* Refused launches leave the context usable. */
    OK(cuCtxSynchronize());
}

/* The driver cannot describe a function it could not load: its parameter
   layout and attributes answer the launch's error (to be confirmed on a GPU),
   for a module's function, a library's kernel and that kernel's function. */
Test(images, lazy_unloadable_functions_are_not_described)
{
    set_modes(NULL, "launch");
    CUmodule mod;
    CUlibrary lib;
    CUfunction f[3];
    CUkernel k;
    OK(cuModuleLoadData(&mod, image("sm80.fatbin")));
    OK(cuModuleGetFunction(&f[0], mod, IN_IMAGE_1));
    OK(cuLibraryLoadData(&lib, image("sm80.fatbin"), NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, IN_IMAGE_1));
    f[1] = (CUfunction)(void *)k;
    OK(cuKernelGetFunction(&f[2], k));
    for (int i = 0; i < 3; i++) {
        size_t off = 99, size = 99;
        int v = -1;
        FAILS(cuFuncGetParamInfo(f[i], 0, &off, &size), CUDA_ERROR_NO_BINARY_FOR_GPU);
        cr_assert(off == 99 && size == 99, "nothing written");
        FAILS(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f[i]), CUDA_ERROR_NO_BINARY_FOR_GPU);
        FAILS(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f[i]), CUDA_ERROR_NO_BINARY_FOR_GPU);
        cr_assert_eq(v, -1);
        const char *name = NULL;
        OK(cuFuncGetName(&name, f[i])); /* its name is the lookup's */
        cr_assert_str_eq(name, IN_IMAGE_1);
    }
    /* A function of an image the device runs is described. */
    CUmodule runs;
    CUfunction g;
    size_t off = 99, size = 99;
    int v = -1;
    OK(cuModuleLoadData(&runs, image("sm90.fatbin")));
    OK(cuModuleGetFunction(&g, runs, IN_IMAGE_1));
    OK(cuFuncGetParamInfo(g, 0, &off, &size));
    cr_assert(off == 0 && size == 8);
    OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, g));
    cr_assert_eq(v, 1024);
    OK(cuModuleUnload(runs));
    OK(cuModuleUnload(mod));
    OK(cuLibraryUnload(lib));
}

/* A lazily loaded function is loaded by cuFuncLoad or by its first launch. */
Test(images, lazy_functions_load_when_needed)
{
    set_modes(NULL, NULL);
    CUmodule mod;
    CUfunction a, b;
    OK(cuModuleLoadData(&mod, image("sm90.fatbin")));
    OK(cuModuleGetFunction(&a, mod, IN_IMAGE_1));
    OK(cuModuleGetFunction(&b, mod, IN_IMAGE_2));
    cr_assert_eq(state_of(a), CU_FUNCTION_LOADING_STATE_UNLOADED);
    OK(cuFuncLoad(a));
    cr_assert_eq(state_of(a), CU_FUNCTION_LOADING_STATE_LOADED);
    OK(cuFuncLoad(a)); /* no effect on a loaded one */
    CUdeviceptr d = fc_upload((float[4]){1, 2, 3, 4}, 4 * sizeof(float));
    int n = 4;
    float value = 7;
    void *args[] = {&d, &n, &value};
    cr_assert_eq(state_of(b), CU_FUNCTION_LOADING_STATE_UNLOADED);
    OK(fc_launch(b, 4, args, false, NULL));
    cr_assert_eq(state_of(b), CU_FUNCTION_LOADING_STATE_LOADED);
    OK(cuCtxSynchronize());
    CUfunctionLoadingState st;
    FAILS(cuFuncIsLoaded(NULL, a), CUDA_ERROR_INVALID_VALUE);
    FAILS(cuFuncIsLoaded(&st, NULL), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuFuncLoad(NULL), CUDA_ERROR_INVALID_HANDLE);
    OK(cuModuleUnload(mod));
    FAILS(cuFuncLoad(a), CUDA_ERROR_INVALID_HANDLE);
    FAILS(cuFuncIsLoaded(&st, a), CUDA_ERROR_INVALID_HANDLE);
}

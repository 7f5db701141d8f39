/*
 * image_files.c: a driver-API program loading image_files.cu's image from
 * its file, by path or as the same bytes in memory, for image_files.sh.
 *
 *   image_files HOW FILE TYPE
 *     HOW   module_file (cuModuleLoad)      module_data (cuModuleLoadData)
 *           library_file (cuLibraryLoadFromFile)
 *           library_data (cuLibraryLoadData)
 *           link_file (cuLinkAddFile)       link_data (cuLinkAddData)
 *           a link is completed and its cubin loaded with cuModuleLoadData
 *           module_gone (cuModuleLoad, then the file removed and a kernel
 *           the module lacks looked up: only "RESULT missing=")
 *           link_empty (FILE unused: PTX defining no kernel linked, the
 *           linker's cubin loaded, the link destroyed, a kernel looked up
 *           in the module: only "RESULT missing=")
 *     FILE  the image; as data, its bytes with a NUL after them (PTX as
 *           data must end with one: that is what the file's end means)
 *     TYPE  ptx, cubin or fatbin: the link input's type
 *
 * It prints "RESULT load=<error name>" for the load (or the link input),
 * and when that loads: stash<<<2, 2048>>> (refused: 2048 threads per block
 * is past the limit) over a buffer of 7s, then "RESULT launch=", "RESULT
 * read=" (the read back's error) and "RESULT host=" (correct: 1s, poisoned,
 * or stale: 7s).
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static const char *name(CUresult r)
{
    const char *s = NULL;
    return cuGetErrorName(r, &s) == CUDA_SUCCESS && s ? s : "unknown";
}

/* What the host buffer holds: correct (1s), stale (7s), poisoned (every
 * byte 0xff, cutaint's poison) or mixed. */
static const char *classify(const float *h)
{
    bool correct = true, stale = true;
    for (int i = 0; i < N; i++) {
        correct &= h[i] == 1.0f;
        stale &= h[i] == 7.0f;
    }
    const unsigned char *b = (const unsigned char *)h;
    bool poisoned = true;
    for (size_t i = 0; i < N * sizeof *h; i++)
        poisoned &= b[i] == 0xff;
    return correct ? "correct" : stale ? "stale" : poisoned ? "poisoned" : "mixed";
}

/* The file's bytes and a NUL after them (*size: without it). */
static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = calloc((size_t)n + 1, 1)) && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (f)
        fclose(f);
    *size = b ? (size_t)n : 0;
    return b;
}

static CUjitInputType input_type(const char *type)
{
    return !strcmp(type, "ptx")     ? CU_JIT_INPUT_PTX
           : !strcmp(type, "cubin") ? CU_JIT_INPUT_CUBIN
                                    : CU_JIT_INPUT_FATBINARY;
}

/* The link of the one input, its cubin loaded; the input's result. */
static CUresult by_link(CUmodule *m, bool file, const char *path, const char *type, const char *bytes, size_t size)
{
    CUlinkState link;
    CUresult r = cuLinkCreate(0, NULL, NULL, &link);
    if (r != CUDA_SUCCESS)
        return r;
    r = file ? cuLinkAddFile(link, input_type(type), path, 0, NULL, NULL)
             : cuLinkAddData(link, input_type(type), (void *)bytes, size + 1, "image", 0, NULL, NULL);
    void *cubin = NULL;
    size_t cubin_size = 0;
    if (r == CUDA_SUCCESS &&
        (cuLinkComplete(link, &cubin, &cubin_size) != CUDA_SUCCESS || cuModuleLoadData(m, cubin) != CUDA_SUCCESS))
        *m = NULL;
    cuLinkDestroy(link);
    return r;
}

/* link_empty: the JIT linker's cubin of an input that defines no kernel. */
static void link_empty(void)
{
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n.func helper()\n{\n\tret;\n}\n";
    CUlinkState link;
    void *cubin = NULL;
    size_t size = 0;
    CUmodule m;
    CUfunction f;
    if (cuLinkCreate(0, NULL, NULL, &link) != CUDA_SUCCESS ||
        cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, sizeof ptx, "empty", 0, NULL, NULL) != CUDA_SUCCESS ||
        cuLinkComplete(link, &cubin, &size) != CUDA_SUCCESS || cuModuleLoadData(&m, cubin) != CUDA_SUCCESS)
        exit(1);
    cuLinkDestroy(link); /* the cubin with it: the driver's to free */
    printf("RESULT missing=%s\n", name(cuModuleGetFunction(&f, m, "_Z5stashPKfi")));
}

/* The kernel, or NULL: printed "load". */
static CUfunction load(const char *how, const char *path, const char *type)
{
    size_t size = 0;
    char *bytes = slurp(path, &size);
    if (!bytes) {
        fprintf(stderr, "image_files: cannot read %s\n", path);
        exit(2);
    }
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    CUmodule m = NULL;
    CUlibrary l = NULL;
    CUfunction f = NULL;
    if (!strcmp(how, "module_file") || !strcmp(how, "module_gone"))
        r = cuModuleLoad(&m, path);
    else if (!strcmp(how, "module_data"))
        r = cuModuleLoadData(&m, bytes);
    else if (!strcmp(how, "library_file"))
        r = cuLibraryLoadFromFile(&l, path, NULL, NULL, 0, NULL, NULL, 0);
    else if (!strcmp(how, "library_data"))
        r = cuLibraryLoadData(&l, bytes, NULL, NULL, 0, NULL, NULL, 0);
    else if (!strncmp(how, "link_", 5))
        r = by_link(&m, !strcmp(how, "link_file"), path, type, bytes, size);
    free(bytes);
    printf("RESULT load=%s\n", name(r));
    if (r != CUDA_SUCCESS)
        return NULL;
    if (!strcmp(how, "module_gone")) {
        if (remove(path) != 0)
            exit(2);
        printf("RESULT missing=%s\n", name(cuModuleGetFunction(&f, m, "_Z7missingv")));
        return NULL;
    }
    if (l) {
        CUkernel k;
        if (cuLibraryGetKernel(&k, l, "_Z5stashPKfi") != CUDA_SUCCESS || cuKernelGetFunction(&f, k) != CUDA_SUCCESS)
            f = NULL;
    } else if (!m || cuModuleGetFunction(&f, m, "_Z5stashPKfi") != CUDA_SUCCESS) {
        f = NULL;
    }
    printf("RESULT lookup=%s\n", f ? "found" : "none");
    return f;
}

int main(int argc, char **argv)
{
    static float h[N];
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr out;
    if (argc != 4) {
        fprintf(stderr, "usage: image_files HOW FILE ptx|cubin|fatbin\n");
        return 2;
    }
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuCtxCreate(&ctx, NULL, 0, dev) != CUDA_SUCCESS || cuMemAlloc(&out, sizeof h) != CUDA_SUCCESS)
        return 1;
    for (int i = 0; i < N; i++)
        h[i] = 7.0f;
    if (cuMemcpyHtoD(out, h, sizeof h) != CUDA_SUCCESS)
        return 1;
    if (!strcmp(argv[1], "link_empty")) {
        link_empty();
        cuCtxDestroy(ctx);
        return 0;
    }
    CUfunction f = load(argv[1], argv[2], argv[3]);
    if (f) {
        int n = N;
        void *params[] = {&out, &n};
        printf("RESULT launch=%s\n", name(cuLaunchKernel(f, 2, 1, 1, 2048, 1, 1, 0, NULL, params, NULL)));
        memset(h, 0, sizeof h);
        printf("RESULT read=%s\n", name(cuMemcpyDtoH(h, out, sizeof h)));
        printf("RESULT host=%s\n", classify(h));
    }
    cuCtxDestroy(ctx);
    return 0;
}

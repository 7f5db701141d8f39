/*
 * lifecycle.c - an ordinary driver-API program, knowing nothing of cutaint,
 * that lives through what a long-running process lives through: contexts
 * destroyed, reset and released; modules and libraries unloaded; a context
 * lost and seen first by a query; pitched copies; failures repeated; long
 * runs of skipped launches.  One scenario per argv[1]; it prints what it saw
 * in client.h's stable text form:
 *   NAME: CUDA_...                      a call's return code
 *   read LABEL: CUDA_... bytes=0xHH     every byte read was HH (0x3c: left untouched)
 *   read LABEL: CUDA_... first=F last=F the first and last float read
 *   NAME: yes|no                        a fact about the driver's answers
 * Exit: the scenario's status, 2 usage, 4 setup failed.
 */
#include <cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client.h"

#define N 1024
#define BYTES (N * sizeof(float))
#define OK_BLOCK 256u
#define BAD_BLOCK 2048u /* > 1024 threads: the launch fails, the kernel does not run */
#define UNTOUCHED 0x3c  /* host bytes before a read (fakecuda fills new memory with 0x5a) */

static const char image_bytes[] = "any bytes: the kernels are found by name";
/* reduce(const float *in, float *out, int n) as PTX whose code also stores
 * through `in` (a const_cast): only its image says `in` is written. */
static const char reduce_writing_in_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry _Z6reducePKfPfi(.param .u64 _Z6reducePKfPfi_param_0, .param .u64 _Z6reducePKfPfi_param_1,"
    " .param .u32 _Z6reducePKfPfi_param_2)\n{\n .reg .b64 %rd<5>; .reg .f32 %f<2>;\n"
    " ld.param.u64 %rd1, [_Z6reducePKfPfi_param_0];\n ld.param.u64 %rd2, [_Z6reducePKfPfi_param_1];\n"
    " cvta.to.global.u64 %rd3, %rd1;\n cvta.to.global.u64 %rd4, %rd2;\n ld.global.f32 %f1, [%rd3];\n"
    " st.global.f32 [%rd4], %f1;\n st.global.f32 [%rd3], %f1;\n ret;\n}\n";

/* ---- printing --------------------------------------------------------- */
static void fact(const char *what, bool yes)
{
    printf("%s: %s\n", what, yes ? "yes" : "no");
}

/* ---- driver helpers ---------------------------------------------------- */
static CUdeviceptr alloc(size_t bytes)
{
    CUdeviceptr p = 0;
    check("cuMemAlloc", cuMemAlloc(&p, bytes));
    return p;
}

static CUfunction function(CUmodule mod, const char *name)
{
    CUfunction f;
    check(name, cuModuleGetFunction(&f, mod, name));
    return f;
}

static CUmodule load_module(void)
{
    CUmodule mod;
    check("cuModuleLoadData", cuModuleLoadData(&mod, image_bytes));
    return mod;
}

static CUresult launch(CUfunction f, unsigned block, unsigned n, void **params)
{
    unsigned grid = block > 1024 ? 1 : (n + block - 1) / block;
    return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL);
}

static CUresult fill(CUfunction k_fill, CUdeviceptr out, int n, float v, unsigned block)
{
    void *p[] = {&out, &n, &v};
    return launch(k_fill, block, (unsigned)n, p);
}

static CUresult saxpy(CUfunction k_saxpy, int n, float a, CUdeviceptr x, CUdeviceptr y, unsigned block)
{
    void *p[] = {&n, &a, &x, &y};
    return launch(k_saxpy, block, (unsigned)n, p);
}

/* Read `bytes` at src into a host buffer preset to UNTOUCHED and print it. */
static CUresult show_read(const char *label, CUdeviceptr src, size_t bytes)
{
    unsigned char *host = malloc(bytes);
    if (host == NULL)
        exit(4);
    memset(host, UNTOUCHED, bytes);
    CUresult r = cuMemcpyDtoH(host, src, bytes);
    describe(label, r, host, bytes);
    free(host);
    return r;
}

/* The primary context of device 0, current on this thread. */
static CUcontext use_primary(void)
{
    CUcontext ctx;
    check("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, 0));
    check("cuCtxSetCurrent", cuCtxSetCurrent(ctx));
    return ctx;
}

static void init(void)
{
    CUdevice dev;
    check("cuInit", cuInit(0));
    check("cuDeviceGet", cuDeviceGet(&dev, 0));
}

/* ---- contexts ------------------------------------------------------------ */

/* A context to lose: created (argv "destroy"), or the primary one. */
static CUcontext take_context(const char *how)
{
    if (strcmp(how, "destroy") != 0)
        return use_primary();
    CUcontext ctx;
    check("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, 0));
    return ctx;
}

static CUresult lose_context(const char *how, CUcontext ctx)
{
    if (strcmp(how, "destroy") == 0)
        return cuCtxDestroy(ctx);
    if (strcmp(how, "reset") == 0)
        return cuDevicePrimaryCtxReset(0);
    return cuDevicePrimaryCtxRelease(0); /* the last reference */
}

/* A failed fill taints x, the first allocation of a context; the context
 * goes (argv[0]: destroy, reset or release); in a new one, a module's
 * global lands where x was (the driver reuses the addresses).  The driver
 * placed it without an allocation call: nothing of x may stick to it. */
static int sc_context_gone(int argc, char **argv)
{
    const char *how = argc > 0 ? argv[0] : "destroy";
    CUcontext ctx = take_context(how);
    CUfunction k_fill = function(load_module(), "_Z4fillPfif");
    CUdeviceptr x = alloc(BYTES);
    say("launch fill x", fill(k_fill, x, N, 1.0f, BAD_BLOCK));
    show_read("x", x, BYTES);
    say(how, lose_context(how, ctx));

    take_context(how);
    CUmodule mod = load_module();
    CUdeviceptr global = 0;
    size_t size = 0;
    say("cuModuleGetGlobal scratch", cuModuleGetGlobal(&global, &size, mod, "scratch"));
    fact("global at the freed address", global == x && size == BYTES);
    show_read("global", global, BYTES);
    say("launch fill global", fill(function(mod, "_Z4fillPfif"), global, N, 2.0f, OK_BLOCK));
    show_read("global after fill", global, BYTES);
    return 0;
}

/* ---- modules and libraries ------------------------------------------------ */

/* Where kernels come from: a module, or a library (whose CUkernel handles
 * are launched as they are). */
typedef struct image {
    bool library;
    CUmodule mod;
    CUlibrary lib;
} image;

static image load_image_of(bool library, const char *bytes)
{
    image im = {.library = library};
    if (library)
        check("cuLibraryLoadData", cuLibraryLoadData(&im.lib, bytes, NULL, NULL, 0, NULL, NULL, 0));
    else
        check("cuModuleLoadData", cuModuleLoadData(&im.mod, bytes));
    return im;
}

static image load_image(bool library)
{
    return load_image_of(library, image_bytes);
}

static CUfunction kernel_of(const image *im, const char *name)
{
    if (!im->library)
        return function(im->mod, name);
    CUkernel k;
    check(name, cuLibraryGetKernel(&k, im->lib, name));
    return (CUfunction)(void *)k;
}

static CUresult unload_image(const image *im)
{
    return im->library ? cuLibraryUnload(im->lib) : cuModuleUnload(im->mod);
}

/* `bytes` of host memory that end where an inaccessible page begins. */
static void *before_guard_page(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + page, page, PROT_NONE) != 0)
        exit(4);
    return p + page - bytes;
}

/* copy_pair(Pair p) with its one parameter pointer the last word before a
 * guard page: reading kernelParams[1] is a SIGSEGV. */
static CUresult copy_pair_guarded(CUfunction f, CUdeviceptr in, CUdeviceptr out, unsigned block)
{
    static struct {
        CUdeviceptr in, out;
        int n;
    } pair;
    pair.in = in, pair.out = out, pair.n = N;
    void **params = before_guard_page(sizeof(void *));
    params[0] = &pair;
    return launch(f, block, N, params);
}

/* The launches of sc_handle_reuse, on the main thread or on another one
 * (whose own cache of kernels must not outlive the unload either). */
typedef struct reuse {
    CUcontext ctx;
    CUfunction saxpy, copy_pair;
    CUdeviceptr x, y, in, ok_out, bad_out;
} reuse;

static void *reuse_first(void *arg)
{
    reuse *r = arg;
    cuCtxSetCurrent(r->ctx);
    say("launch saxpy x y", saxpy(r->saxpy, N, 2.0f, r->x, r->y, OK_BLOCK));
    return NULL;
}

static void *reuse_then(void *arg)
{
    reuse *r = arg;
    cuCtxSetCurrent(r->ctx);
    say("launch copy_pair in ok_out", copy_pair_guarded(r->copy_pair, r->in, r->ok_out, OK_BLOCK));
    say("launch copy_pair in bad_out", copy_pair_guarded(r->copy_pair, r->in, r->bad_out, BAD_BLOCK));
    return NULL;
}

static void on_thread(void *(*fn)(void *), reuse *r, bool other)
{
    pthread_t t;
    if (!other) {
        fn(r);
        return;
    }
    if (pthread_create(&t, NULL, fn, r) != 0 || pthread_join(t, NULL) != 0)
        exit(4);
}

/* While taint exists elsewhere (so every launch is decoded), saxpy - four
 * parameters - is launched from a module or library (argv[0]), which is
 * then unloaded; the driver hands the same handle out for copy_pair - one
 * parameter - of the next one.  argv[1] "other": the launches run on
 * another thread than the unload (each thread keeps its own cache). */
static int sc_handle_reuse(int argc, char **argv)
{
    bool library = argc > 0 && strcmp(argv[0], "library") == 0;
    bool other = argc > 1 && strcmp(argv[1], "other") == 0;
    reuse r = {.ctx = use_primary()};
    CUfunction k_fill = function(load_module(), "_Z4fillPfif");
    CUdeviceptr u = alloc(BYTES);
    r.x = alloc(BYTES), r.y = alloc(BYTES), r.in = alloc(BYTES), r.ok_out = alloc(BYTES), r.bad_out = alloc(BYTES);
    say("launch fill u", fill(k_fill, u, N, 1.0f, BAD_BLOCK));
    say("launch fill x", fill(k_fill, r.x, N, 1.0f, OK_BLOCK));
    say("launch fill y", fill(k_fill, r.y, N, 1.0f, OK_BLOCK));
    say("launch fill in", fill(k_fill, r.in, N, 5.0f, OK_BLOCK));

    image first = load_image(library);
    r.saxpy = kernel_of(&first, "_Z5saxpyifPKfPf");
    on_thread(reuse_first, &r, other);
    show_read("y", r.y, BYTES);
    say("unload", unload_image(&first));
    /* A handle the driver never gave out (inside its pool, off a slot):
     * refused by the driver, and whatever cutaint kept for saxpy's handle
     * may now describe this one. */
    CUfunction unknown = (CUfunction)(void *)((char *)(void *)r.saxpy + 16);
    say("launch unknown handle", fill(unknown, r.x, N, 1.0f, OK_BLOCK));

    image next = load_image(library);
    r.copy_pair = kernel_of(&next, "_Z9copy_pair4Pair");
    fact("handle reused", r.copy_pair == r.saxpy);
    on_thread(reuse_then, &r, other);
    show_read("ok_out", r.ok_out, BYTES);
    show_read("bad_out", r.bad_out, BYTES);
    return 0;
}

/* ---- ends the driver refuses ---------------------------------------------- */

/* An end the driver refuses (argv[0]): "destroy_primary" (cuCtxDestroy of
 * the primary context, which the driver always refuses), "destroy" (of a
 * created context), "release", "reset"; "module", "library" (an unload).
 * The test makes the driver refuse with FAKECUDA_FAULTS.  What cutaint
 * knew stays: a buffer a failed launch left stale is still refused, and a
 * kernel of the image still unloaded is described from its image (whose
 * PTX says `in` is written).  Prints each answer and read. */
static int sc_refused_end(int argc, char **argv)
{
    const char *how = argc > 0 ? argv[0] : "destroy_primary";
    bool library = strcmp(how, "library") == 0;
    if (library || strcmp(how, "module") == 0) {
        use_primary();
        image im = load_image_of(library, reduce_writing_in_ptx);
        say("unload", unload_image(&im));
        CUfunction reduce = kernel_of(&im, "_Z6reducePKfPfi");
        CUdeviceptr in = alloc(BYTES), out = alloc(BYTES);
        int n = N;
        void *p[] = {&in, &out, &n};
        say("memset in", cuMemsetD32(in, 0, N));
        say("launch reduce", launch(reduce, BAD_BLOCK, N, p));
        show_read("in", in, BYTES);
        show_read("out", out, BYTES);
        return 0;
    }
    CUcontext ctx = strcmp(how, "destroy_primary") == 0 ? use_primary() : take_context(how);
    CUfunction k_fill = function(load_module(), "_Z4fillPfif");
    CUdeviceptr x = alloc(BYTES);
    say("launch fill x", fill(k_fill, x, N, 1.0f, BAD_BLOCK));
    show_read("x", x, BYTES);
    say(how, strcmp(how, "destroy_primary") == 0 ? cuCtxDestroy(ctx) : lose_context(how, ctx));
    show_read("x after", x, BYTES);
    return 0;
}

/* ---- a lost context, and a process that leaves at once ------------------ */

/* A kernel that faults at execution, then one look (argv[0]): "stream"
 * cuStreamQuery, "event" cuEventRecord + cuEventQuery, "unwrapped" a call
 * cutaint does not check (cuMemGetInfo), then exit(1) at once, as a Python
 * process does on an exception.  "not_ready": nothing faults, and the last
 * call is a query that says CUDA_ERROR_NOT_READY (with FAKECUDA_FAULTS);
 * exit(3). */
static int sc_loss_then_exit(int argc, char **argv)
{
    const char *how = argc > 0 ? argv[0] : "stream";
    use_primary();
    CUmodule mod = load_module();
    CUdeviceptr x = alloc(BYTES);
    if (strcmp(how, "not_ready") == 0) {
        say("launch fill x", fill(function(mod, "_Z4fillPfif"), x, N, 1.0f, OK_BLOCK));
        say("cuStreamQuery", cuStreamQuery(NULL));
        exit(3);
    }
    void *params[] = {&x};
    say("launch crash x", launch(function(mod, "_Z5crashPf"), OK_BLOCK, N, params));
    if (strcmp(how, "stream") == 0) {
        say("cuStreamQuery", cuStreamQuery(NULL));
    } else if (strcmp(how, "event") == 0) {
        CUevent e;
        check("cuEventCreate", cuEventCreate(&e, 0));
        say("cuEventRecord", cuEventRecord(e, NULL));
        say("cuEventQuery", cuEventQuery(e));
    } else {
        size_t free_bytes, total;
        say("cuMemGetInfo", cuMemGetInfo(&free_bytes, &total));
    }
    exit(1);
}

/* ---- pitched reads ---------------------------------------------------------- */

#define ROW_BYTES 320u  /* a 320-pixel row of bytes, as ffmpeg's planes */
#define HOST_PITCH 384u /* the host's rows are wider */
#define SLICE_GAP 4u    /* 3D: rows between the host's slices */

/* One byte every position of a kind holds, or -1 (mixed). */
static int uniform(const unsigned char *host, size_t bytes, bool (*in_row)(size_t, unsigned), unsigned slice_rows,
                   bool want_row)
{
    int seen = -2;
    for (size_t i = 0; i < bytes; i++) {
        if (in_row(i, slice_rows) != want_row)
            continue;
        if (seen == -2)
            seen = host[i];
        else if (seen != host[i])
            return -1;
    }
    return seen;
}

/* Is host byte i one the copy writes: inside a row, and inside a slice's
 * rows (the slice's last SLICE_GAP rows are a gap)? */
static bool copied(size_t i, unsigned slice_rows)
{
    size_t row = i / HOST_PITCH;
    return i % HOST_PITCH < ROW_BYTES && row % slice_rows < slice_rows - SLICE_GAP;
}

static void say_bytes(const char *label, int byte)
{
    if (byte < 0)
        printf(" %s=mixed", label);
    else
        printf(" %s=0x%02x", label, byte);
}

/* argv[0] rows (default 240) of ROW_BYTES from a pitched allocation a
 * failed fill left unwritten, read with cuMemcpy2D into host rows
 * HOST_PITCH apart (argv[1] "3d": cuMemcpy3D, two slices of half the rows,
 * SLICE_GAP rows apart on the host). */
static int sc_read_pitched(int argc, char **argv)
{
    unsigned rows = argc > 0 ? (unsigned)atoi(argv[0]) : 240;
    bool three_d = argc > 1 && strcmp(argv[1], "3d") == 0;
    unsigned depth = three_d ? 2 : 1, height = rows / depth, slice_rows = height + SLICE_GAP;
    use_primary();
    CUdeviceptr dev;
    size_t pitch;
    check("cuMemAllocPitch", cuMemAllocPitch(&dev, &pitch, ROW_BYTES, rows, 4));
    say("launch fill frame",
        fill(function(load_module(), "_Z4fillPfif"), dev, (int)(pitch * rows / 4), 1.0f, BAD_BLOCK));
    size_t host_bytes = (size_t)HOST_PITCH * slice_rows * depth;
    unsigned char *host = malloc(host_bytes);
    if (host == NULL)
        exit(4);
    memset(host, UNTOUCHED, host_bytes);
    CUresult r;
    if (three_d) {
        CUDA_MEMCPY3D c = {.srcMemoryType = CU_MEMORYTYPE_DEVICE,
                           .srcDevice = dev,
                           .srcPitch = pitch,
                           .srcHeight = height,
                           .dstMemoryType = CU_MEMORYTYPE_HOST,
                           .dstHost = host,
                           .dstPitch = HOST_PITCH,
                           .dstHeight = slice_rows,
                           .WidthInBytes = ROW_BYTES,
                           .Height = height,
                           .Depth = depth};
        r = cuMemcpy3D(&c);
    } else {
        CUDA_MEMCPY2D c = {.srcMemoryType = CU_MEMORYTYPE_DEVICE,
                           .srcDevice = dev,
                           .srcPitch = pitch,
                           .dstMemoryType = CU_MEMORYTYPE_HOST,
                           .dstHost = host,
                           .dstPitch = HOST_PITCH,
                           .WidthInBytes = ROW_BYTES,
                           .Height = height};
        r = cuMemcpy2D(&c);
    }
    printf("read frame: %s", cuapi_errname(r));
    say_bytes("rows", uniform(host, host_bytes, copied, slice_rows, true));
    say_bytes("gaps", uniform(host, host_bytes, copied, slice_rows, false));
    printf("\n");
    free(host);
    return 0;
}

/* ---- memory pressure --------------------------------------------------------- */

/* The failing malloc of a preloaded failmalloc.so, when there is one. */
static bool malloc_fails(bool on)
{
    void (*arm)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "failmalloc_arm");
    if (arm)
        arm(on);
    return arm != NULL;
}

/* While malloc fails: a read of bytes a failed fill left unwritten, and a
 * kernel first named then (the kernel registry, emptied by an unload, must
 * grow its table).  Buffers are made before. */
static int sc_oom(int argc, char **argv)
{
    (void)argc, (void)argv;
    use_primary();
    CUmodule first = load_module();
    CUfunction k_fill = function(first, "_Z4fillPfif");
    function(first, "_Z5saxpyifPKfPf");
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES);
    unsigned char *host = malloc(BYTES);
    if (host == NULL)
        exit(4);
    memset(host, UNTOUCHED, BYTES);
    say("launch fill x", fill(k_fill, x, N, 1.0f, BAD_BLOCK));
    say("unload", cuModuleUnload(first));
    CUmodule next = load_module();

    fact("malloc fails", malloc_fails(true));
    CUresult read = cuMemcpyDtoH(host, x, BYTES);
    CUfunction k_saxpy;
    CUresult got = cuModuleGetFunction(&k_saxpy, next, "_Z5saxpyifPKfPf");
    CUresult ran = got == CUDA_SUCCESS ? saxpy(k_saxpy, N, 2.0f, x, y, OK_BLOCK) : got;
    malloc_fails(false);

    describe("x", read, host, BYTES);
    say("cuModuleGetFunction saxpy", got);
    say("launch saxpy x y", ran);
    free(host);
    return 0;
}

/* A thread whose first launch that needs its scratch (an input carries a
 * failure) meets a failing malloc: that launch goes to the driver
 * unchecked, and the program goes on. */
typedef struct oom_launch {
    CUcontext ctx;
    CUfunction k_saxpy;
    CUdeviceptr x, y;
    CUresult ran;
} oom_launch;

static void *oom_launcher(void *arg)
{
    oom_launch *o = arg;
    cuCtxSetCurrent(o->ctx);
    malloc_fails(true);
    o->ran = saxpy(o->k_saxpy, N, 2.0f, o->x, o->y, OK_BLOCK);
    malloc_fails(false);
    return NULL;
}

static int sc_oom_scratch(int argc, char **argv)
{
    (void)argc, (void)argv;
    oom_launch o = {.ctx = use_primary()};
    CUmodule module = load_module();
    CUfunction k_fill = function(module, "_Z4fillPfif");
    o.k_saxpy = function(module, "_Z5saxpyifPKfPf");
    o.x = alloc(BYTES);
    o.y = alloc(BYTES);
    CUdeviceptr z = alloc(BYTES);
    say("launch fill x", fill(k_fill, o.x, N, 1.0f, BAD_BLOCK));
    /* saxpy is described here, on this thread, while memory lasts */
    say("launch saxpy z z", saxpy(o.k_saxpy, N, 2.0f, z, z, OK_BLOCK));
    fact("malloc fails", malloc_fails(false));
    pthread_t t;
    if (pthread_create(&t, NULL, oom_launcher, &o) != 0 || pthread_join(t, NULL) != 0)
        exit(4);
    say("launch saxpy x y on a new thread", o.ran);
    return 0;
}

/* ---- a failure repeated ----------------------------------------------------- */

/* The same kernel fails the same way three times (launches 1 to 3, each on
 * its own buffer), then the last buffer is read. */
static int sc_fold(int argc, char **argv)
{
    (void)argc, (void)argv;
    use_primary();
    CUfunction k_fill = function(load_module(), "_Z4fillPfif");
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), z = alloc(BYTES);
    say("launch fill x", fill(k_fill, x, N, 1.0f, BAD_BLOCK));
    say("launch fill y", fill(k_fill, y, N, 1.0f, BAD_BLOCK));
    say("launch fill z", fill(k_fill, z, N, 1.0f, BAD_BLOCK));
    show_read("z", z, BYTES);
    return 0;
}

/* ---- scenarios ---------------------------------------------------------- */

/* fill(x) fails; then argv[0] (default 10) saxpy(x -> y) launches, each
 * skipped because x carries the failure. */
static int sc_skip_loop(int argc, char **argv)
{
    int launches = argc > 0 ? atoi(argv[0]) : 10;
    use_primary();
    CUmodule mod = load_module();
    CUfunction k_fill = function(mod, "_Z4fillPfif"), k_saxpy = function(mod, "_Z5saxpyifPKfPf");
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES);
    say("launch fill x", fill(k_fill, x, N, 1.0f, BAD_BLOCK));
    int failed = 0;
    for (int i = 0; i < launches; i++)
        failed += saxpy(k_saxpy, N, 2.0f, x, y, OK_BLOCK) != CUDA_SUCCESS;
    printf("saxpy launches: %d, failed: %d\n", launches, failed);
    show_read("y", y, BYTES);
    return 0;
}

static const client_scenario scenarios[] = {
    {"skip_loop", sc_skip_loop},       {"context_gone", sc_context_gone},
    {"handle_reuse", sc_handle_reuse}, {"loss_then_exit", sc_loss_then_exit},
    {"read_pitched", sc_read_pitched}, {"oom", sc_oom},
    {"oom_scratch", sc_oom_scratch},   {"fold", sc_fold},
    {"refused_end", sc_refused_end},
};

int main(int argc, char **argv)
{
    return client_main(argc, argv, scenarios, sizeof scenarios / sizeof scenarios[0], init);
}

/*
 * bench.c - what each hot driver call costs, measured in a tight loop.
 *
 * A plain driver-API program (linked with -lcuda like any other): it knows
 * nothing of cutaint.  tools/bench/run.sh runs it twice per case, without and
 * with libcutaint.so in LD_PRELOAD, and reports the difference.
 *
 *   bench [--ops LIST] [--live N] [--threads T] [--taint | --tainted N] [--regions] [--iters N]
 *         [--reps R] [--mem | --grow-max] [--callgrind]
 *
 * Operations (--ops, comma-separated; default all):
 *   launch_base      cuLaunchKernel of _Z5emptyPvS_S_S_ with 4 base pointers
 *   launch_interior  the same with 4 interior pointers into 64 KiB buffers
 *   dtoh             cuMemcpyDtoH of 4 KiB from inside a 64 KiB buffer
 *   htod             cuMemcpyHtoD of 4 KiB into a 64 KiB buffer
 *                    (both rotate over 8 host and device offsets, 528 B
 *                    apart, so that 4K aliasing between the host buffer and
 *                    fakecuda's backing, which shifts with heap layout, hits
 *                    the runs with and without cutaint alike)
 *   alloc_free       cuMemAlloc of 1 KiB, then cuMemFree
 *   launch_dtoh      launch_interior's launch, then dtoh's read of the
 *                    memory its pointer into that buffer let it write:
 *                    what a read of a kernel's output costs beyond the two calls alone
 *   libcall          cublasSgemm_v2 (64 x 64 x 64, over three of the 64 KiB
 *                    buffers) of a library that does nothing (benchlib.c):
 *                    what the wrapper of a library call adds
 *   sync             cuStreamSynchronize(0)
 *   graph_launch     cuGraphLaunch of an executable graph of one kernel node,
 *                    launch_interior's launch (made only when selected)
 *   graph_launch4    the same with four such nodes, each depending on the
 *                    one before: more nodes, the same allocations
 *   module_load      cuModuleLoadData of a module image that loads, then
 *                    cuModuleUnload: what a healthy image costs cutaint
 *                    (it is not read; its handle is remembered)
 *   first_use        the first use of a kernel the driver has no code for,
 *                    as NVIDIA's runtime makes it: cuLibraryGetKernel in a
 *                    library loaded as the runtime loads its image (a
 *                    fatbin wrapper, CU_LIBRARY_BINARY_IS_PRESERVED; loaded
 *                    once, not measured), which the driver answers
 *                    CUDA_ERROR_NOT_FOUND, then cuLaunchKernel of what it
 *                    answered.  Under cutaint: an image event, a stand-in
 *                    and its launch failed.  The image holds FIRST_USE_KERNELS
 *                    kernels in FIRST_USE_IMAGE bytes of PTX, taken in turn.
 * --live N     N allocations (256 B each) stay live while the loops run.
 * --threads T  every thread runs the loop on its own buffers.
 * --regions    each 64 KiB buffer is cut into 16 regions of 4 KiB
 *              (include/cutaint.h, as a pool allocator would), so the
 *              interior pointers point into regions.
 * --taint      before measuring, a launch of _Z4fillPfif with 2048 threads
 *              per block fails (CUDA_ERROR_INVALID_VALUE) on an unrelated
 *              buffer: under cutaint that buffer then carries a failure.
 * --tainted N  the same on N unrelated buffers: N allocations carry a
 *              failure elsewhere.
 * Output, one line per operation:
 *   op=launch_interior live=100000 threads=1 taint=0 iters=... ns=<median>
 * ns is the median over reps of: wall time of the whole parallel loop x
 * min(T, CPUs) / (T x iters), i.e. CPU-normalised time per call; with T=1
 * it is plain wall time per call.
 *
 * --mem: instead of timing, report the heap (mallinfo2: in-use arena bytes
 * plus mmapped blocks) and RSS growth while --live allocations are made,
 * after the context and module exist:  mem live=N heap_bytes=B rss_kb=K
 * The shim's bytes per allocation are (B with shim - B without) / N.
 *
 * --grow-max: instead of timing the operations, make the --live
 * allocations one by one, each step an allocation kept plus one alloc+free,
 * and report the slowest step: grow live=N max_us=U (a whole-table rehash
 * shows here, not in a median).
 *
 * --callgrind: for valgrind --tool=callgrind: 200 calls of warm-up, then one
 * untimed rep of --iters calls of each operation; instrumentation (when
 * <valgrind/callgrind.h> is available: the bench then prints
 * callgrind_requests=1) is switched on only for that rep, and the runner
 * collects bench_loop alone with --toggle-collect=bench_loop.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cublas_api.h>
#include <cuda.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blob.h"
#include "cutaint.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#define MAX_THREADS 64
#define BUF_BIG (64 * 1024)
#define COPY_BYTES 4096
#define FILLER_BYTES 256
#define MAX_REPS 256

enum op {
    OP_LAUNCH_BASE,
    OP_LAUNCH_INTERIOR,
    OP_DTOH,
    OP_HTOD,
    OP_ALLOC_FREE,
    OP_SYNC,
    OP_GRAPH_LAUNCH,
    OP_GRAPH_LAUNCH4,
    OP_MODULE_LOAD,
    OP_FIRST_USE,
    OP_LAUNCH_DTOH,
    OP_LIBCALL,
    N_OPS
};
static const char *const op_names[N_OPS] = {"launch_base",  "launch_interior", "dtoh",
                                            "htod",         "alloc_free",      "sync",
                                            "graph_launch", "graph_launch4",   "module_load",
                                            "first_use",    "launch_dtoh",     "libcall"};
/* Calls per rep (all threads together) at --iters-scale 1: about 10-30 ms
 * per rep on fakecuda. */
static const long default_iters[N_OPS] = {100000, 100000, 60000, 60000, 50000, 300000,
                                          100000, 100000, 50000, 2000,  40000, 100000};
static const char module_image[] = "fakecuda accepts any module image";

static CUcontext ctx;
static CUfunction k_empty, k_fill;

static void die(const char *what, CUresult r)
{
    const char *name = NULL;
    cuGetErrorName(r, &name);
    fprintf(stderr, "bench: %s failed: %s (%d)\n", what, name ? name : "?", (int)r);
    exit(1);
}

#define CHECK(call)             \
    do {                        \
        CUresult r_ = (call);   \
        if (r_ != CUDA_SUCCESS) \
            die(#call, r_);     \
    } while (0)

/* ---- first_use: an image as NVIDIA's runtime hands it to the driver ---- */

#define FIRST_USE_KERNELS 64
#define FIRST_USE_IMAGE ((size_t)4 << 20)
static CUlibrary first_use_library;
static char first_use_names[FIRST_USE_KERNELS][16];

/* PTX of FIRST_USE_KERNELS kernels k00(float *, int) ... whose bodies fill
 * FIRST_USE_IMAGE bytes, in a fatbin's one PTX entry for compute_90
 * (docs/IMAGES.md), in the runtime's wrapper: leaked, the library keeps it. */
static const void *runtime_image(void)
{
    blob ptx = {0}, fatbin = {0};
    static const char head[] = "//\n// first_use\n//\n.version 8.0\n.target sm_90\n.address_size 64\n";
    static const char line[] = "\tadd.s32 %r1, %r1, %r2;\n";
    blob_put(&ptx, head, sizeof head - 1);
    for (int k = 0; k < FIRST_USE_KERNELS; k++) {
        char entry[256];
        snprintf(first_use_names[k], sizeof first_use_names[k], "_Z3k%02dPfi", k);
        int n = snprintf(entry, sizeof entry,
                         ".visible .entry %s(.param .u64 %s_p0, .param .u32 %s_p1)\n{\n\t.reg .b32 %%r<3>;\n",
                         first_use_names[k], first_use_names[k], first_use_names[k]);
        blob_put(&ptx, entry, (size_t)n);
        for (size_t b = 0; b < FIRST_USE_IMAGE / FIRST_USE_KERNELS; b += sizeof line - 1)
            blob_put(&ptx, line, sizeof line - 1);
        blob_put(&ptx, "\tret;\n}\n", 8);
    }
    blob_put(&ptx, "", 1);
    size_t padded = (ptx.n + 7) / 8 * 8;
    blob_put_le(&fatbin, 0xba55ed50u, 4); /* the container: magic, version, header size, size */
    blob_put_le(&fatbin, 1, 2);
    blob_put_le(&fatbin, 16, 2);
    blob_put_le(&fatbin, 64 + padded, 8);
    blob_put_le(&fatbin, 1, 2); /* the entry: PTX, version, header size, payload */
    blob_put_le(&fatbin, 0x0101, 2);
    blob_put_le(&fatbin, 64, 4);
    blob_put_le(&fatbin, padded, 8);
    blob_put_zero(&fatbin, 12);
    blob_put_le(&fatbin, 90, 4); /* the architecture */
    blob_put_le(&fatbin, 0, 8);
    blob_put_le(&fatbin, 0x11, 8); /* 64-bit, host linux */
    blob_put_zero(&fatbin, 16);
    blob_put(&fatbin, ptx.p, ptx.n);
    blob_put_zero(&fatbin, padded - ptx.n);
    free(ptx.p);
    static struct {
        uint32_t magic, version;
        const void *data, *filename;
    } wrapper = {0x466243b1u, 1, NULL, NULL};
    wrapper.data = fatbin.p;
    return &wrapper;
}

static void load_runtime_image(void)
{
    CUlibraryOption option = CU_LIBRARY_BINARY_IS_PRESERVED;
    void *value = (void *)(uintptr_t)1;
    CHECK(cuLibraryLoadData(&first_use_library, runtime_image(), NULL, NULL, 0, &option, &value, 1));
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One thread's buffers. */
typedef struct worker {
    pthread_t thread;
    CUdeviceptr big[4]; /* 64 KiB each: interior pointers point inside */
    void *base_params[4];
    void *interior_params[4];
    CUdeviceptr base_args[4]; /* 256-byte allocations: base pointers */
    CUdeviceptr interior_args[4];
    unsigned char host[COPY_BYTES + 8 * 528]; /* copies rotate over 8 offsets */
    CUgraphExec graph[2];                     /* graph_launch's and graph_launch4's, when selected */
    enum op op;
    long iters;
    CUresult error;
} worker;

static worker workers[MAX_THREADS];
static int n_threads = 1;
static pthread_barrier_t start_line, finish_line;
static volatile int quitting;

/* The measured loop: kept out of line so callgrind can collect exactly it. */
/* One first use: CUDA_SUCCESS when it went as it goes for the runtime (the
 * lookup refused, or under cutaint its stand-in's launch failed). */
static CUresult first_use(worker *w, long i)
{
    CUkernel k;
    CUresult r = cuLibraryGetKernel(&k, first_use_library, first_use_names[i % FIRST_USE_KERNELS]);
    if (r == CUDA_SUCCESS) {
        int n = 32;
        void *params[] = {&w->base_args[0], &n};
        r = cuLaunchKernel((CUfunction)(void *)k, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
    }
    return r == CUDA_ERROR_NOT_FOUND ? CUDA_SUCCESS : r == CUDA_SUCCESS ? CUDA_ERROR_UNKNOWN : r;
}

__attribute__((noinline)) CUresult bench_loop(worker *w, enum op op, long iters)
{
    CUresult r = CUDA_SUCCESS;
    switch (op) {
    case OP_LAUNCH_BASE:
    case OP_LAUNCH_INTERIOR: {
        void **params = op == OP_LAUNCH_BASE ? w->base_params : w->interior_params;
        for (long i = 0; i < iters && r == CUDA_SUCCESS; i++)
            r = cuLaunchKernel(k_empty, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
        break;
    }
    case OP_DTOH:
        for (long i = 0; i < iters && r == CUDA_SUCCESS; i++)
            r = cuMemcpyDtoH(w->host + (i & 7) * 528, w->big[1] + 8192 + (i & 7) * 528, COPY_BYTES);
        break;
    case OP_LAUNCH_DTOH:
        for (long i = 0; i < iters && r == CUDA_SUCCESS; i++) {
            r = cuLaunchKernel(k_empty, 1, 1, 1, 32, 1, 1, 0, NULL, w->interior_params, NULL);
            if (r == CUDA_SUCCESS)
                r = cuMemcpyDtoH(w->host + (i & 7) * 528, w->big[1] + 8192 + (i & 7) * 528, COPY_BYTES);
        }
        break;
    case OP_HTOD:
        for (long i = 0; i < iters && r == CUDA_SUCCESS; i++)
            r = cuMemcpyHtoD(w->big[2] + 8192 + (i & 7) * 528, w->host + (i & 7) * 528, COPY_BYTES);
        break;
    case OP_ALLOC_FREE:
        for (long i = 0; i < iters && r == CUDA_SUCCESS; i++) {
            CUdeviceptr p;
            r = cuMemAlloc(&p, 1024);
            if (r == CUDA_SUCCESS)
                r = cuMemFree(p);
        }
        break;
    case OP_LIBCALL: {
        const float one = 1, zero = 0;
        const float *a = (const float *)(uintptr_t)w->big[0], *b = (const float *)(uintptr_t)w->big[1];
        float *c = (float *)(uintptr_t)w->big[2];
        for (long i = 0; i < iters && r == CUDA_SUCCESS; i++)
            if (cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a, 64, b, 64, &zero, c, 64))
                r = CUDA_ERROR_UNKNOWN;
        break;
    }
    case OP_SYNC:
        for (long i = 0; i < iters && r == CUDA_SUCCESS; i++)
            r = cuStreamSynchronize(NULL);
        break;
    case OP_GRAPH_LAUNCH:
    case OP_GRAPH_LAUNCH4: {
        CUgraphExec exec = w->graph[op == OP_GRAPH_LAUNCH4];
        for (long i = 0; i < iters && r == CUDA_SUCCESS; i++)
            r = cuGraphLaunch(exec, NULL);
        break;
    }
    case OP_FIRST_USE:
        for (long i = 0; i < iters && r == CUDA_SUCCESS; i++)
            r = first_use(w, i);
        break;
    case OP_MODULE_LOAD:
        for (long i = 0; i < iters && r == CUDA_SUCCESS; i++) {
            CUmodule m;
            r = cuModuleLoadData(&m, module_image);
            if (r == CUDA_SUCCESS)
                r = cuModuleUnload(m);
        }
        break;
    default: break;
    }
    __asm__ volatile("" ::: "memory");
    return r;
}

/* A chain of n kernel nodes, each the empty kernel over the worker's
 * interior pointers. */
static void setup_graph(worker *w, CUgraphExec *exec, int n)
{
    CUgraph g;
    CUgraphNode node, before;
    CUDA_KERNEL_NODE_PARAMS kp = {.func = k_empty,
                                  .gridDimX = 1,
                                  .gridDimY = 1,
                                  .gridDimZ = 1,
                                  .blockDimX = 32,
                                  .blockDimY = 1,
                                  .blockDimZ = 1,
                                  .kernelParams = w->interior_params};
    CHECK(cuGraphCreate(&g, 0));
    for (int i = 0; i < n; i++) {
        CHECK(cuGraphAddKernelNode(&node, g, i ? &before : NULL, i ? 1 : 0, &kp));
        before = node;
    }
    CHECK(cuGraphInstantiate(exec, g, 0));
    CHECK(cuGraphDestroy(g));
}

static bool regions;

static void setup_worker(worker *w, bool graph)
{
    for (int i = 0; i < 4; i++) {
        CHECK(cuMemAlloc(&w->base_args[i], 256));
        CHECK(cuMemAlloc(&w->big[i], BUF_BIG));
        for (uint64_t off = 0; regions && off < BUF_BIG; off += 4096)
            CUTAINT_REGION_ALLOC(w->big[i] + off, 4096);
        w->interior_args[i] = w->big[i] + 4096 * (uint64_t)(i + 1);
        w->base_params[i] = &w->base_args[i];
        w->interior_params[i] = &w->interior_args[i];
    }
    memset(w->host, 0x11, sizeof w->host);
    CHECK(cuMemcpyHtoD(w->big[1], w->host, COPY_BYTES)); /* something written to read */
    if (graph) {
        setup_graph(w, &w->graph[0], 1);
        setup_graph(w, &w->graph[1], 4);
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    CHECK(cuCtxSetCurrent(ctx));
    for (;;) {
        pthread_barrier_wait(&start_line);
        if (quitting)
            return NULL;
        w->error = bench_loop(w, w->op, w->iters);
        pthread_barrier_wait(&finish_line);
    }
}

/* One timed rep of op on every thread: CPU-normalised ns per call. */
static double run_rep(enum op op, long iters, int cpus)
{
    for (int t = 0; t < n_threads; t++) {
        workers[t].op = op;
        workers[t].iters = iters;
    }
    int64_t start = now_ns();
    pthread_barrier_wait(&start_line);
    pthread_barrier_wait(&finish_line);
    int64_t elapsed = now_ns() - start;
    for (int t = 0; t < n_threads; t++)
        if (workers[t].error != CUDA_SUCCESS)
            die(op_names[op], workers[t].error);
    int par = n_threads < cpus ? n_threads : cpus;
    return (double)elapsed * par / ((double)n_threads * (double)iters);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void make_filler(long live, CUdeviceptr **out)
{
    CUdeviceptr *v = live ? malloc((size_t)live * sizeof *v) : NULL;
    if (live && !v) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    for (long i = 0; i < live; i++)
        CHECK(cuMemAlloc(&v[i], FILLER_BYTES));
    *out = v;
}

/* Failing launches on n buffers nothing else touches; under cutaint each
 * buffer then carries the failure.  Returns whether a read of the last is
 * refused. */
static bool taint_unrelated(long n_buffers)
{
    CUdeviceptr victim = 0;
    for (long i = 0; i < n_buffers; i++) {
        CHECK(cuMemAlloc(&victim, 4096));
        int n = 1024;
        float value = 1.0f;
        void *params[] = {&victim, &n, &value};
        CUresult r = cuLaunchKernel(k_fill, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL);
        if (r != CUDA_ERROR_INVALID_VALUE)
            fprintf(stderr, "bench: the tainting launch returned %d, not CUDA_ERROR_INVALID_VALUE\n", (int)r);
    }
    unsigned char host[64];
    return cuMemcpyDtoH(host, victim, sizeof host) != CUDA_SUCCESS;
}

/* --grow-max: the slowest step of growing to live allocations. */
static double grow_max_us(long live)
{
    CUdeviceptr *v = malloc((size_t)(live ? live : 1) * sizeof *v);
    if (!v) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    int64_t worst = 0;
    for (long i = 0; i < live; i++) {
        CUdeviceptr tmp;
        int64_t t0 = now_ns();
        CHECK(cuMemAlloc(&v[i], FILLER_BYTES));
        CHECK(cuMemAlloc(&tmp, FILLER_BYTES));
        CHECK(cuMemFree(tmp));
        int64_t dt = now_ns() - t0;
        if (dt > worst)
            worst = dt;
    }
    free(v);
    return worst / 1000.0;
}

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void usage(void)
{
    fprintf(stderr, "usage: bench [--ops LIST] [--live N] [--threads T] [--taint | --tainted N] [--regions]\n"
                    "             [--iters N | --iters-scale F] [--reps R] [--mem | --grow-max] [--callgrind]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    bool ops[N_OPS] = {false};
    bool any_op = false, mem = false, grow = false, callgrind = false;
    long live = 0, iters = 0, tainted = 0;
    double scale = 1.0;
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--ops") && v) {
            char *list = strdup(v), *save = NULL;
            for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                int k = 0;
                while (k < N_OPS && strcmp(tok, op_names[k]))
                    k++;
                if (k == N_OPS) {
                    fprintf(stderr, "bench: unknown op %s\n", tok);
                    usage();
                }
                ops[k] = any_op = true;
            }
            free(list);
            i++;
        } else if (!strcmp(a, "--live") && v) {
            live = atol(v), i++;
        } else if (!strcmp(a, "--threads") && v) {
            n_threads = atoi(v), i++;
        } else if (!strcmp(a, "--iters") && v) {
            iters = atol(v), i++;
        } else if (!strcmp(a, "--iters-scale") && v) {
            scale = atof(v), i++;
        } else if (!strcmp(a, "--reps") && v) {
            reps = atoi(v), i++;
        } else if (!strcmp(a, "--taint")) {
            tainted = 1;
        } else if (!strcmp(a, "--tainted") && v) {
            tainted = atol(v), i++;
        } else if (!strcmp(a, "--grow-max")) {
            grow = true;
        } else if (!strcmp(a, "--regions")) {
            regions = true;
        } else if (!strcmp(a, "--mem")) {
            mem = true;
        } else if (!strcmp(a, "--callgrind")) {
            callgrind = true;
        } else {
            usage();
        }
    }
    if (n_threads < 1 || n_threads > MAX_THREADS || reps < 1 || reps > MAX_REPS || live < 0 || scale <= 0 ||
        tainted < 0)
        usage();
    int taint = tainted > 0;
    if (!any_op)
        for (int k = 0; k < N_OPS; k++)
            ops[k] = true;

    CUdevice dev;
    CUmodule mod;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, module_image));
    CHECK(cuModuleGetFunction(&k_empty, mod, "_Z5emptyPvS_S_S_"));
    CHECK(cuModuleGetFunction(&k_fill, mod, "_Z4fillPfif"));

    CUdeviceptr *filler = NULL;
    if (mem) {
        /* Warm the allocation path first, so one-time set-up is not counted. */
        CUdeviceptr *warm;
        make_filler(64, &warm);
        size_t heap0 = heap_in_use();
        long rss0 = rss_kb();
        make_filler(live, &filler);
        /* the filler vector itself is the same with and without the shim */
        printf("mem live=%ld heap_bytes=%zu rss_kb=%ld\n", live, heap_in_use() - heap0, rss_kb() - rss0);
        return 0;
    }
    if (grow) {
        printf("grow live=%ld max_us=%.1f\n", live, grow_max_us(live));
        return 0;
    }
    make_filler(live, &filler);
    for (int t = 0; t < n_threads; t++)
        setup_worker(&workers[t], ops[OP_GRAPH_LAUNCH] || ops[OP_GRAPH_LAUNCH4]);
    if (ops[OP_FIRST_USE])
        load_runtime_image();
    if (taint)
        printf("taint refused_read=%d\n", taint_unrelated(tainted) ? 1 : 0);

    pthread_barrier_init(&start_line, NULL, (unsigned)n_threads + 1);
    pthread_barrier_init(&finish_line, NULL, (unsigned)n_threads + 1);
    for (int t = 0; t < n_threads; t++)
        if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]) != 0) {
            fprintf(stderr, "bench: pthread_create failed\n");
            return 1;
        }
#ifdef HAVE_CALLGRIND
    if (callgrind)
        printf("callgrind_requests=1\n");
#endif
    long cpus_l = sysconf(_SC_NPROCESSORS_ONLN);
    int cpus = cpus_l > 0 ? (int)cpus_l : 1;

    for (int k = 0; k < N_OPS; k++) {
        if (!ops[k])
            continue;
        /* --iters is per thread; the defaults are shared among the threads */
        long n = iters ? iters : (long)(default_iters[k] * scale) / n_threads;
        if (n < 1)
            n = 1;
        if (callgrind) {
            run_rep((enum op)k, 200, cpus); /* warm-up: not instrumented */
            CALLGRIND_START_INSTRUMENTATION;
            run_rep((enum op)k, n, cpus);
            CALLGRIND_STOP_INSTRUMENTATION;
            printf("op=%s live=%ld threads=%d taint=%d iters=%ld\n", op_names[k], live, n_threads, taint, n);
            continue;
        }
        run_rep((enum op)k, n / 10 ? n / 10 : 1, cpus); /* warm-up */
        double ns[MAX_REPS];
        for (int r = 0; r < reps; r++)
            ns[r] = run_rep((enum op)k, n, cpus);
        qsort(ns, (size_t)reps, sizeof *ns, cmp_double);
        printf("op=%s live=%ld threads=%d taint=%d iters=%ld ns=%.1f min=%.1f\n", op_names[k], live, n_threads, taint,
               n, ns[reps / 2], ns[0]);
        fflush(stdout);
    }

    quitting = 1;
    pthread_barrier_wait(&start_line);
    for (int t = 0; t < n_threads; t++)
        pthread_join(workers[t].thread, NULL);
    free(filler);
    return 0;
}

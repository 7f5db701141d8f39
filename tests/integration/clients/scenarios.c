/*
 * scenarios.c - an ordinary driver-API program, knowing nothing of cutaint,
 * that the integration tests run with and without the shim.  It owns the
 * scenarios (one per argv[1]) and prints what it saw -- every return code by
 * name, every value read back -- in a stable text form; its exit status is
 * its own (0, or what the scenario asked for).
 *
 * Built four ways from this one file (see cuapi.h): linked with -lcuda,
 * linked with per-thread default stream symbols, runtime-style loading
 * through dlopen + cuGetProcAddress, and linked with CLIENT_DLSYM_NOISE, which
 * calls dlsym(RTLD_NEXT / RTLD_DEFAULT, ...) for unrelated names around
 * every driver call and prints a line only if an answer was wrong.
 *
 * Output lines:
 *   NAME: CUDA_...                      a call's return code
 *   read LABEL: CUDA_... bytes=0xHH     every byte read was HH (0x3c: left untouched)
 *   read LABEL: CUDA_... first=F last=F the first and last float read
 * Exit: the scenario's status, 2 usage, 3 driver not reachable, 4 setup failed.
 */
#include "cuapi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"

#define N 1024
#define BYTES (N * sizeof(float))
#define OK_BLOCK 256u
#define BAD_BLOCK 2048u /* > 1024 threads: the launch fails, the kernel does not run */
#define UNTOUCHED 0x3c  /* host bytes before a read (fakecuda fills new memory with 0x5a) */

static CUcontext ctx;
static CUmodule mod;
static CUfunction k_fill, k_saxpy, k_gather, k_copy_pair, k_reduce, k_scale, k_crash, k_count_fill, k_empty;

/* copy_pair's by-value parameter: struct Pair { const float* in; float* out; int n; } */
struct pair {
    CUdeviceptr in;
    CUdeviceptr out;
    int n;
};

/* ---- dlsym noise ------------------------------------------------------ */
#if CLIENT_DLSYM_NOISE
/* Unrelated lookups must answer exactly as the dynamic linker would. */
static void noise(void)
{
    static const struct {
        const char *name;
        void *expect;
    } names[] = {
        {"malloc", (void *)malloc}, {"free", (void *)free},       {"pthread_create", (void *)pthread_create},
        {"getenv", (void *)getenv}, {"fprintf", (void *)fprintf},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *next = dlsym(RTLD_NEXT, names[i].name);
        void *dflt = dlsym(RTLD_DEFAULT, names[i].name);
        if (next != names[i].expect || dflt != names[i].expect)
            printf("noise: dlsym(%s) answered %p/%p, expected %p\n", names[i].name, next, dflt, names[i].expect);
    }
    if (dlsym(RTLD_NEXT, "cutaint_no_such_symbol") != NULL || dlerror() == NULL)
        printf("noise: lookup of a missing symbol did not fail\n");
    /* The first definition after this program is the same whichever way it
     * is asked for: RTLD_NEXT is relative to the caller, which is us. */
    void *next_init = dlsym(RTLD_NEXT, "cuInit");
    void *dflt_init = dlsym(RTLD_DEFAULT, "cuInit");
    if (next_init != dflt_init)
        printf("noise: dlsym(RTLD_NEXT, cuInit) %p != dlsym(RTLD_DEFAULT, cuInit) %p\n", next_init, dflt_init);
}
#else
static void noise(void)
{
}
#endif

/* ---- driver helpers (say, check, describe: client.h) ------------------- */
static CUdeviceptr alloc(size_t bytes)
{
    CUdeviceptr p = 0;
    noise();
    check("cuMemAlloc", CU(cuMemAlloc)(&p, bytes));
    return p;
}

static CUresult launch_on(CUstream s, CUfunction f, unsigned block, unsigned n, void **params, void **extra)
{
    unsigned grid = block > 1024 ? 1 : (n + block - 1) / block;
    noise();
    return CU(cuLaunchKernel)(f, grid, 1, 1, block, 1, 1, 0, s, params, extra);
}

static CUresult fill_on(CUstream s, CUdeviceptr out, int n, float v, unsigned block)
{
    void *p[] = {&out, &n, &v};
    return launch_on(s, k_fill, block, (unsigned)n, p, NULL);
}

static CUresult fill(CUdeviceptr out, int n, float v, unsigned block)
{
    return fill_on(0, out, n, v, block);
}

static CUresult saxpy(int n, float a, CUdeviceptr x, CUdeviceptr y, unsigned block)
{
    void *p[] = {&n, &a, &x, &y};
    return launch_on(0, k_saxpy, block, (unsigned)n, p, NULL);
}

static CUresult copy_pair(CUdeviceptr in, CUdeviceptr out, int n, unsigned block)
{
    /* Zeroed whole: cutaint scans a by-value struct word by word, padding
     * included (docs/PRECISION.md), and memcheck says so of padding left
     * unwritten. */
    struct pair pr;
    memset(&pr, 0, sizeof pr);
    pr.in = in, pr.out = out, pr.n = n;
    void *p[] = {&pr};
    return launch_on(0, k_copy_pair, block, (unsigned)n, p, NULL);
}

/* A launch through `extra`: the parameters packed in one buffer. */
static CUresult launch_packed(CUfunction f, unsigned block, unsigned n, void *buf, size_t size)
{
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    return launch_on(0, f, block, n, NULL, extra);
}

static CUresult fill_extra(CUdeviceptr out, int n, float v, unsigned block)
{
    unsigned char buf[16]; /* float* @0, int @8, float @12 */
    memcpy(buf, &out, 8);
    memcpy(buf + 8, &n, 4);
    memcpy(buf + 12, &v, 4);
    return launch_packed(k_fill, block, (unsigned)n, buf, sizeof buf);
}

static CUresult saxpy_extra(int n, float a, CUdeviceptr x, CUdeviceptr y, unsigned block)
{
    unsigned char buf[24]; /* int @0, float @4, const float* @8, float* @16 */
    memcpy(buf, &n, 4);
    memcpy(buf + 4, &a, 4);
    memcpy(buf + 8, &x, 8);
    memcpy(buf + 16, &y, 8);
    return launch_packed(k_saxpy, block, (unsigned)n, buf, sizeof buf);
}

/* Read `bytes` at src into a host buffer preset to UNTOUCHED and print it. */
static CUresult show_read(const char *label, CUdeviceptr src, size_t bytes)
{
    unsigned char *host = malloc(bytes);
    if (host == NULL)
        exit(4);
    memset(host, UNTOUCHED, bytes);
    noise();
    CUresult r = CU(cuMemcpyDtoH)(host, src, bytes);
    describe(label, r, host, bytes);
    free(host);
    return r;
}

/* Host write of n copies of v. */
static CUresult write_floats(CUdeviceptr dst, size_t n, float v)
{
    float *host = malloc(n * sizeof *host);
    if (host == NULL)
        exit(4);
    for (size_t i = 0; i < n; i++)
        host[i] = v;
    noise();
    CUresult r = CU(cuMemcpyHtoD)(dst, host, n * sizeof *host);
    free(host);
    return r;
}

static unsigned bits(float f)
{
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void setup(void)
{
    if (cuapi_load() != 0)
        exit(3);
    client_primary_and_module(&ctx, &mod);
    static const struct {
        CUfunction *f;
        const char *name;
    } kernels[] = {
        {&k_fill, "_Z4fillPfif"},          {&k_saxpy, "_Z5saxpyifPKfPf"},
        {&k_gather, "_Z6gatherPfPKfPKii"}, {&k_copy_pair, "_Z9copy_pair4Pair"},
        {&k_reduce, "_Z6reducePKfPfi"},    {&k_scale, "scale"},
        {&k_crash, "_Z5crashPf"},          {&k_count_fill, "_Z10count_fillPKiPf"},
        {&k_empty, "_Z5emptyPvS_S_S_"},
    };
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        check(kernels[i].name, CU(cuModuleGetFunction)(kernels[i].f, mod, kernels[i].name));
}

/* ---- scenarios ---------------------------------------------------------- */
/* Every kernel and every kind of call, nothing failing; exits with argv[0]
 * (default 0) so a program's own non-zero status can be checked. */
static int sc_happy(int argc, char **argv)
{
    int status = argc > 0 ? atoi(argv[0]) : 0;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), z = alloc(BYTES), g = alloc(BYTES);
    CUdeviceptr r = alloc(BYTES), e = alloc(BYTES), w = alloc(BYTES), idx = alloc(N * sizeof(int));
    CUdeviceptr cnt = alloc(sizeof(int));
    say("launch fill x", fill(x, N, 1.0f, OK_BLOCK));
    say("launch fill y", fill(y, N, 2.0f, OK_BLOCK));
    say("launch saxpy x y", saxpy(N, 3.0f, x, y, OK_BLOCK));
    say("memset z", CU(cuMemsetD32)(z, bits(0.5f), N));
    show_read("z after memset", z, BYTES);
    say("launch copy_pair x z", copy_pair(x, z, N, OK_BLOCK));
    int host_idx[N], n = N, count = N / 2;
    for (int i = 0; i < N; i++)
        host_idx[i] = N - 1 - i;
    say("write idx", CU(cuMemcpyHtoD)(idx, host_idx, sizeof host_idx));
    void *pg[] = {&g, &y, &idx, &n};
    say("launch gather g y idx", launch_on(0, k_gather, OK_BLOCK, N, pg, NULL));
    void *pr[] = {&y, &r, &n};
    say("launch reduce y r", launch_on(0, k_reduce, OK_BLOCK, N, pr, NULL));
    float factor = 2.0f;
    void *ps[] = {&g, &n, &factor};
    say("launch scale g", launch_on(0, k_scale, OK_BLOCK, N, ps, NULL));
    CUdeviceptr nul = 0;
    void *pe[] = {&x, &y, &nul, &nul};
    say("launch empty", launch_on(0, k_empty, OK_BLOCK, 1, pe, NULL));
    say("copy g e", CU(cuMemcpyDtoD)(e, g, BYTES));
    say("memset w", CU(cuMemsetD8)(w, 0, BYTES));
    say("write cnt", CU(cuMemcpyHtoD)(cnt, &count, sizeof count));
    void *pc[] = {&cnt, &w};
    say("launch count_fill cnt w", launch_on(0, k_count_fill, OK_BLOCK, N, pc, NULL));
    say("launch fill(extra) x", fill_extra(x, N, 9.0f, OK_BLOCK));
    say("sync stream", CU(cuStreamSynchronize)(0));
    say("sync context", CU(cuCtxSynchronize)());
    show_read("x", x, BYTES);
    show_read("y", y, BYTES);
    show_read("z", z, BYTES);
    show_read("g", g, BYTES);
    show_read("r[0]", r, sizeof(float));
    show_read("e", e, BYTES);
    show_read("w", w, BYTES);
    show_read("y[100..200)", y + 100 * sizeof(float), 100 * sizeof(float));
    CUdeviceptr all[] = {x, y, z, g, r, e, w, idx, cnt};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        say("free", CU(cuMemFree)(all[i]));
    say("release", CU(cuDevicePrimaryCtxRelease)(0));
    return status;
}

/* One failed launch, its error ignored, its output read back.  argv[0]: the
 * block size (default 2048, which fails; 256 with a fault injected). */
static int sc_failed_launch(int argc, char **argv)
{
    unsigned block = argc > 0 ? (unsigned)atoi(argv[0]) : BAD_BLOCK;
    CUdeviceptr x = alloc(BYTES);
    say("write x", write_floats(x, N, 1.0f));
    say("launch fill x", fill(x, N, 7.0f, block));
    show_read("x", x, BYTES);
    say("free", CU(cuMemFree)(x));
    return 0;
}

/* fill(x) fails, saxpy(x -> y) runs on it, y is read; u, untouched by the
 * failure, is read in between. */
static int sc_two_hops(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), u = alloc(BYTES);
    say("launch fill u", fill(u, N, 4.0f, OK_BLOCK));
    say("launch fill y", fill(y, N, 1.0f, OK_BLOCK));
    say("launch fill x", fill(x, N, 3.0f, BAD_BLOCK));
    say("launch saxpy x y", saxpy(N, 2.0f, x, y, OK_BLOCK));
    show_read("u", u, BYTES);
    show_read("y", y, BYTES);
    show_read("x", x, BYTES);
    return 0;
}

/* A failed launch of saxpy(n, a, const x, y): x must stay readable. */
static int sc_const_input(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES);
    say("launch fill x", fill(x, N, 1.0f, OK_BLOCK));
    say("launch fill y", fill(y, N, 2.0f, OK_BLOCK));
    say("launch saxpy x y", saxpy(N, 2.0f, x, y, BAD_BLOCK));
    show_read("x", x, BYTES);
    show_read("y", y, BYTES);
    return 0;
}

/* Host writes and memsets make tainted bytes readable again, exactly the
 * bytes they cover. */
static int sc_rewrite(int argc, char **argv)
{
    (void)argc, (void)argv;
    const size_t half = BYTES / 2;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), z = alloc(BYTES);
    say("launch fill x", fill(x, N, 1.0f, BAD_BLOCK));
    say("launch fill y", fill(y, N, 1.0f, BAD_BLOCK));
    say("launch fill z", fill(z, N, 1.0f, BAD_BLOCK));
    say("write x", write_floats(x, N, 5.0f));
    show_read("x", x, BYTES);
    say("memset y", CU(cuMemsetD32)(y, bits(6.0f), N));
    show_read("y", y, BYTES);
    say("write z first half", write_floats(z, N / 2, 7.0f));
    show_read("z first half", z, half);
    show_read("z second half", z + half, half);
    show_read("z before memset", z, BYTES);
    say("memset z second half", CU(cuMemsetD8)(z + half, 0, half));
    show_read("z after memset", z, BYTES);
    return 0;
}

/* Interior pointers: a failed launch on big+2N floats covers the rest of
 * big from there; a launch reading through an interior pointer is skipped. */
static int sc_interior(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr big = alloc(4 * BYTES), y = alloc(BYTES);
    say("write big", write_floats(big, 4 * N, 1.0f));
    say("launch fill y", fill(y, N, 2.0f, OK_BLOCK));
    say("launch fill big+2N", fill(big + 2 * BYTES, N, 3.0f, BAD_BLOCK));
    show_read("big[0,N)", big, BYTES);
    show_read("big[N,2N)", big + BYTES, BYTES);
    show_read("big[2N,3N)", big + 2 * BYTES, BYTES);
    show_read("big[3N,4N)", big + 3 * BYTES, BYTES);
    say("launch saxpy big+3N y", saxpy(N, 1.0f, big + 3 * BYTES, y, OK_BLOCK));
    show_read("y", y, BYTES);
    return 0;
}

/* Pointers inside a by-value struct: both directions. */
static int sc_struct(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr a = alloc(BYTES), b = alloc(BYTES), c = alloc(BYTES), d = alloc(BYTES);
    say("launch fill a", fill(a, N, 1.0f, OK_BLOCK));
    say("launch copy_pair a b", copy_pair(a, b, N, BAD_BLOCK));
    show_read("b", b, BYTES);
    say("launch fill c", fill(c, N, 2.0f, BAD_BLOCK));
    say("launch fill d", fill(d, N, 3.0f, OK_BLOCK));
    say("launch copy_pair c d", copy_pair(c, d, N, OK_BLOCK));
    show_read("d", d, BYTES);
    return 0;
}

/* Launches through `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER). */
static int sc_extra(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), z = alloc(BYTES);
    say("launch fill(extra) z", fill_extra(z, N, 8.0f, OK_BLOCK));
    say("launch fill(extra) y", fill_extra(y, N, 1.0f, OK_BLOCK));
    say("launch fill(extra) x", fill_extra(x, N, 2.0f, BAD_BLOCK));
    show_read("z", z, BYTES);
    show_read("x", x, BYTES);
    say("launch saxpy(extra) x y", saxpy_extra(N, 2.0f, x, y, OK_BLOCK));
    show_read("y", y, BYTES);
    return 0;
}

/* A launch over a buffer whose last writer failed: fill's float* may be
 * read, so by default it is skipped; CUTAINT_ARGS can declare it write-only. */
static int sc_refill(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES);
    say("launch fill x", fill(x, N, 1.0f, BAD_BLOCK));
    say("launch fill x again", fill(x, N, 2.0f, OK_BLOCK));
    show_read("x", x, BYTES);
    return 0;
}

/* One failure spreads: fill(x) fails, 12 more fills of x are skipped (each
 * may read x), saxpy(x -> y) is skipped, y is read, then argv[0] (default
 * 13) reads of 512 bytes of x, a slice at a time, round the buffer. */
static int sc_cascade(int argc, char **argv)
{
    int reads = argc > 0 ? atoi(argv[0]) : 13;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES);
    say("launch fill x", fill(x, N, 1.0f, BAD_BLOCK));
    int failed = 0;
    for (int i = 0; i < 12; i++)
        failed += fill(x, N, 2.0f, OK_BLOCK) != CUDA_SUCCESS;
    printf("fill x again: 12 launches, failed: %d\n", failed);
    say("launch saxpy x y", saxpy(N, 2.0f, x, y, OK_BLOCK));
    show_read("y", y, BYTES);
    for (int i = 0; i < reads; i++)
        show_read("x slice", x + (CUdeviceptr)(i % 8) * 512, 512);
    return 0;
}

/* A kernel that faults at execution; the program ignores it and returns 0. */
static int sc_crash(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES);
    say("launch fill x", fill(x, N, 1.0f, OK_BLOCK));
    void *p[] = {&x};
    say("launch crash x", launch_on(0, k_crash, OK_BLOCK, N, p, NULL));
    say("sync", CU(cuStreamSynchronize)(0));
    say("sync again", CU(cuCtxSynchronize)());
    return 0;
}

/* ---- suspects: which launches a lost context's report names -------------
 * fakecuda runs queued work only at a sync point, and crash's fault makes
 * that sync (and every later one) answer CUDA_ERROR_ILLEGAL_ADDRESS: the
 * launches themselves answer CUDA_SUCCESS.  Each scenario prints what every
 * call returned, "stream NAME=0x..." for each stream it creates and
 * "thread NAME=TID" for each thread that launches, so the test can match
 * the report's suspects to them; it ends with "sync: ..." (cuCtxSynchronize)
 * and returns 0. */
static void show_thread(const char *name)
{
    printf("thread %s=%ld\n", name, (long)syscall(SYS_gettid));
}

static CUstream new_stream(const char *name, unsigned flags)
{
    CUstream s;
    check("cuStreamCreate", CU(cuStreamCreate)(&s, flags));
    printf("stream %s=0x%llx\n", name, (unsigned long long)(uintptr_t)s);
    return s;
}

static CUresult crash_on(CUstream s, CUdeviceptr x)
{
    void *p[] = {&x};
    return launch_on(s, k_crash, OK_BLOCK, N, p, NULL);
}

/* fill, proven by cuCtxSynchronize, then crash: crash alone. */
static int sc_sus_alone(int argc, char **argv)
{
    (void)argc, (void)argv;
    show_thread("main");
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES);
    say("launch fill x", fill(x, N, 1.0f, OK_BLOCK));
    say("sync context", CU(cuCtxSynchronize)());
    say("launch crash", crash_on(0, y));
    say("sync", CU(cuCtxSynchronize)());
    return 0;
}

/* crash, then fill queued behind it on the same stream: both, crash prime. */
static int sc_sus_queued(int argc, char **argv)
{
    (void)argc, (void)argv;
    show_thread("main");
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES);
    say("launch crash", crash_on(0, x));
    say("launch fill y", fill(y, N, 1.0f, OK_BLOCK));
    say("sync", CU(cuStreamSynchronize)(0));
    return 0;
}

/* Two created streams.  argv[0] "synced": fill on s1, s1 synchronised, crash
 * on s2.  "unsynced": fill on s1, crash on s2, fill on s1 again, nothing
 * synchronised: s1 first (its oldest is older), both its fills, then s2. */
static int sc_sus_streams(int argc, char **argv)
{
    bool synced = argc > 0 && strcmp(argv[0], "synced") == 0;
    show_thread("main");
    CUstream s1 = new_stream("s1", 0), s2 = new_stream("s2", 0);
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES);
    say("launch fill s1", fill_on(s1, x, N, 1.0f, OK_BLOCK));
    if (synced)
        say("sync s1", CU(cuStreamSynchronize)(s1));
    say("launch crash", crash_on(s2, y));
    if (!synced)
        say("launch fill s1 again", fill_on(s1, x, N, 2.0f, OK_BLOCK));
    say("sync", CU(cuCtxSynchronize)());
    return 0;
}

/* Events.  argv[0]:
 *   sync    fill on s1, e recorded on s1, cuEventSynchronize(e), crash on s1
 *   query   the same with cuEventQuery(e) (fakecuda runs the work: success)
 *   wait    fill on s1, e recorded on s1, s2 waits for e, fill on s2, s2
 *           synchronised (which proves s1 through e's record), crash on s1
 *   nowait  the same without the wait: s1's fill is not proven */
static int sc_sus_events(int argc, char **argv)
{
    const char *how = argc > 0 ? argv[0] : "sync";
    show_thread("main");
    CUstream s1 = new_stream("s1", 0), s2 = new_stream("s2", 0);
    CUevent e;
    check("cuEventCreate", CU(cuEventCreate)(&e, 0));
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), z = alloc(BYTES);
    say("launch fill s1", fill_on(s1, x, N, 1.0f, OK_BLOCK));
    say("record e s1", CU(cuEventRecord)(e, s1));
    if (strcmp(how, "sync") == 0) {
        say("sync e", CU(cuEventSynchronize)(e));
    } else if (strcmp(how, "query") == 0) {
        say("query e", CU(cuEventQuery)(e));
    } else {
        if (strcmp(how, "wait") == 0)
            say("s2 waits e", CU(cuStreamWaitEvent)(s2, e, 0));
        say("launch fill s2", fill_on(s2, z, N, 3.0f, OK_BLOCK));
        say("sync s2", CU(cuStreamSynchronize)(s2));
    }
    say("launch crash", crash_on(s1, y));
    say("sync", CU(cuCtxSynchronize)());
    return 0;
}

/* A synchronous read on the legacy default stream after fills on it and on
 * a created stream, then crash on the legacy stream.  argv[0]
 * "nonblocking": the created stream is CU_STREAM_NON_BLOCKING, which the
 * legacy stream does not wait for.  "recycled": a blocking one, made under
 * the handle of a non-blocking stream destroyed just before (fakecuda hands
 * the handle out again): a new stream, which the legacy stream waits for. */
static int sc_sus_sync_copy(int argc, char **argv)
{
    bool nonblocking = argc > 0 && strcmp(argv[0], "nonblocking") == 0;
    bool recycled = argc > 0 && strcmp(argv[0], "recycled") == 0;
    /* "copied": a synchronous copy before the launches too, so that the
     * one after them proves through the context entry its thread kept */
    bool copied = argc > 0 && strcmp(argv[0], "copied") == 0;
    show_thread("main");
    CUstream old = recycled ? new_stream("old", CU_STREAM_NON_BLOCKING) : NULL;
    if (recycled)
        say("destroy old", CU(cuStreamDestroy)(old));
    CUstream s = new_stream("s", nonblocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT);
    if (recycled)
        printf("handle recycled: %s\n", s == old ? "yes" : "no");
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), z = alloc(BYTES);
    if (copied)
        show_read("z", z, BYTES);
    say("launch fill x", fill(x, N, 1.0f, OK_BLOCK));
    say("launch fill s", fill_on(s, y, N, 2.0f, OK_BLOCK));
    show_read("x", x, BYTES);
    say("launch crash", crash_on(0, z));
    say("sync", CU(cuCtxSynchronize)());
    return 0;
}

/* Two threads launch into the primary context on the default stream, one
 * after the other: A fills (and with argv[0] "synced" synchronises its
 * stream), then B launches crash; the main thread synchronises the context. */
struct sus_thread {
    const char *name;
    bool crash, synced;
    CUdeviceptr buf;
};

static void *sus_thread_main(void *arg)
{
    struct sus_thread *t = arg;
    char label[64];
    show_thread(t->name);
    check("cuCtxSetCurrent", CU(cuCtxSetCurrent)(ctx));
    snprintf(label, sizeof label, "thread %s launch %s", t->name, t->crash ? "crash" : "fill");
    say(label, t->crash ? crash_on(0, t->buf) : fill(t->buf, N, 1.0f, OK_BLOCK));
    if (t->synced) {
        snprintf(label, sizeof label, "thread %s sync stream", t->name);
        say(label, CU(cuStreamSynchronize)(0));
    }
    return NULL;
}

static int sc_sus_threads(int argc, char **argv)
{
    bool synced = argc > 0 && strcmp(argv[0], "synced") == 0;
    show_thread("main");
    struct sus_thread t[2] = {{"A", false, synced, alloc(BYTES)}, {"B", true, false, alloc(BYTES)}};
    for (int i = 0; i < 2; i++) {
        pthread_t tid;
        if (pthread_create(&tid, NULL, sus_thread_main, &t[i]) != 0 || pthread_join(tid, NULL) != 0)
            exit(4);
    }
    say("sync", CU(cuCtxSynchronize)());
    return 0;
}

/* A fill left unproven on the primary context; then a context of its own
 * (cuCtxCreate, current from then on): a fill proven by its synchronise,
 * and crash.  Only crash: the primary's fill is another context's. */
static int sc_sus_context(int argc, char **argv)
{
    (void)argc, (void)argv;
    show_thread("main");
    CUdeviceptr x = alloc(BYTES);
    say("launch fill primary", fill(x, N, 1.0f, OK_BLOCK));
    CUdevice dev;
    CUcontext mine;
    CUmodule m;
    CUfunction f_fill, f_crash;
    check("cuDeviceGet", CU(cuDeviceGet)(&dev, 0));
    check("cuCtxCreate", CU(cuCtxCreate)(&mine, NULL, 0, dev));
    check("cuModuleLoadData", CU(cuModuleLoadData)(&m, "any bytes: the kernels are found by name"));
    check("cuModuleGetFunction", CU(cuModuleGetFunction)(&f_fill, m, "_Z4fillPfif"));
    check("cuModuleGetFunction", CU(cuModuleGetFunction)(&f_crash, m, "_Z5crashPf"));
    CUdeviceptr y = alloc(BYTES), z = alloc(BYTES);
    int n = N;
    float v = 2.0f;
    void *pf[] = {&y, &n, &v}, *pc[] = {&z};
    say("launch fill mine", launch_on(0, f_fill, OK_BLOCK, N, pf, NULL));
    say("sync mine", CU(cuCtxSynchronize)());
    say("launch crash", launch_on(0, f_crash, OK_BLOCK, N, pc, NULL));
    say("sync", CU(cuCtxSynchronize)());
    return 0;
}

/* NULL where the driver expects something: the driver's own answers.  Each
 * call that names memory gets its own allocation, so no call's failure
 * (a failed write taints what it was to write) colours another's answer. */
static int sc_null_args(int argc, char **argv)
{
    (void)argc, (void)argv;
    float host[4] = {0};
    CUfunction f;
    say("cuMemAlloc(NULL)", CU(cuMemAlloc)(NULL, 16));
    say("cuMemcpyHtoD(x, NULL)", CU(cuMemcpyHtoD)(alloc(BYTES), NULL, 16));
    say("cuMemcpyDtoH(NULL, x)", CU(cuMemcpyDtoH)(NULL, alloc(BYTES), 16));
    say("cuMemcpyDtoH(host, 0)", CU(cuMemcpyDtoH)(host, 0, 16));
    say("cuMemcpyDtoD(0, x)", CU(cuMemcpyDtoD)(0, alloc(BYTES), 16));
    say("cuMemcpyDtoD(x, 0)", CU(cuMemcpyDtoD)(alloc(BYTES), 0, 16));
    say("cuMemsetD32(0)", CU(cuMemsetD32)(0, 0, 4));
    say("cuModuleGetFunction(NULL)", CU(cuModuleGetFunction)(NULL, mod, "_Z4fillPfif"));
    say("cuModuleGetFunction(name NULL)", CU(cuModuleGetFunction)(&f, mod, NULL));
    say("cuModuleLoadData(NULL)", CU(cuModuleLoadData)(NULL, "x"));
    say("cuLaunchKernel(NULL function)", CU(cuLaunchKernel)(NULL, 1, 1, 1, 1, 1, 1, 0, 0, NULL, NULL));
    say("cuLaunchKernel(fill, no params)", CU(cuLaunchKernel)(k_fill, 1, 1, 1, 1, 1, 1, 0, 0, NULL, NULL));
    say("cuMemFree(0)", CU(cuMemFree)(0));
    CUdeviceptr x = alloc(BYTES);
    say("launch fill x", fill(x, N, 1.0f, OK_BLOCK));
    show_read("x", x, BYTES);
    return 0;
}

/* NULL arguments where the shim has something to do: a refused read into
 * NULL, a launch without parameters of a kernel whose inputs are tainted. */
static int sc_null_tainted(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES);
    say("launch fill x", fill(x, N, 1.0f, BAD_BLOCK));
    say("cuMemcpyDtoH(NULL, x)", CU(cuMemcpyDtoH)(NULL, x, 16));
    say("cuLaunchKernel(saxpy, no params)", CU(cuLaunchKernel)(k_saxpy, 1, 1, 1, 1, 1, 1, 0, 0, NULL, NULL));
    say("cuLaunchKernel(saxpy, extra without buffer)", launch_packed(k_saxpy, OK_BLOCK, N, NULL, 24));
    say("cuMemcpyDtoD(0, x)", CU(cuMemcpyDtoD)(0, x, 16));
    return 0;
}

/* Taint exists, yet the driver answers: a read running past the end of the
 * tainted allocation (the driver refuses it, nothing is poisoned), and a
 * launch and a device copy from it made with no context current (not
 * skipped: the driver refuses them, and that refusal is their failure). */
static int sc_driver_answers(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), z = alloc(BYTES);
    say("launch fill x", fill(x, N, 1.0f, BAD_BLOCK));
    static unsigned char host[BYTES + 64];
    memset(host, UNTOUCHED, sizeof host);
    CUresult r = CU(cuMemcpyDtoH)(host, x + BYTES - 64, 128);
    describe("x past its end", r, host, 128);
    check("cuCtxSetCurrent(NULL)", CU(cuCtxSetCurrent)(NULL));
    say("launch saxpy x y without a context", saxpy(N, 2.0f, x, y, OK_BLOCK));
    say("cuMemcpyDtoD(z, x) without a context", CU(cuMemcpyDtoD)(z, x, 16));
    check("cuCtxSetCurrent", CU(cuCtxSetCurrent)(ctx));
    show_read("y", y, BYTES);
    show_read("z", z, BYTES);
    return 0;
}

/* 8 threads x argv[0] (default 1000) iterations of memset + fill + read,
 * each on its own buffer and stream; thread 3's launch at the middle
 * iteration fails. */
#define N_THREADS 8
#define T_ELEMS 256
#define FAILING_THREAD 3

struct worker {
    pthread_t tid;
    int t, iters;
    CUdeviceptr buf;
    int ok, refused, wrong, errors;
    char first_refusal[96];
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    CUstream s;
    float host[T_ELEMS];
    if (CU(cuCtxSetCurrent)(ctx) != CUDA_SUCCESS || CU(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        w->errors++;
        return NULL;
    }
    for (int i = 0; i < w->iters; i++) {
        float v = (float)(w->t * 100000 + i);
        bool failing = w->t == FAILING_THREAD && i == w->iters / 2;
        /* a host-side write first: it also makes a buffer whose last
         * launch failed usable again (a fill of it alone would not: its
         * float* may be read, so it is skipped while tainted) */
        if (CU(cuMemsetD32)(w->buf, 0, T_ELEMS) != CUDA_SUCCESS)
            w->errors++;
        if (fill_on(s, w->buf, T_ELEMS, v, failing ? BAD_BLOCK : OK_BLOCK) != CUDA_SUCCESS && !failing)
            w->errors++;
        if (CU(cuStreamSynchronize)(s) != CUDA_SUCCESS)
            w->errors++;
        CUresult r = CU(cuMemcpyDtoH)(host, w->buf, sizeof host);
        if (r != CUDA_SUCCESS) {
            if (w->refused++ == 0)
                snprintf(w->first_refusal, sizeof w->first_refusal, " first_refusal=%s@%d", cuapi_errname(r), i);
        } else if (host[0] != v || host[T_ELEMS - 1] != v) {
            w->wrong++;
        } else {
            w->ok++;
        }
    }
    CU(cuStreamDestroy)(s);
    return NULL;
}

static int sc_threads(int argc, char **argv)
{
    int iters = argc > 0 ? atoi(argv[0]) : 1000;
    struct worker w[N_THREADS];
    memset(w, 0, sizeof w);
    for (int t = 0; t < N_THREADS; t++) {
        w[t].t = t;
        w[t].iters = iters;
        w[t].buf = alloc(T_ELEMS * sizeof(float));
    }
    for (int t = 0; t < N_THREADS; t++)
        if (pthread_create(&w[t].tid, NULL, worker_main, &w[t]) != 0)
            exit(4);
    for (int t = 0; t < N_THREADS; t++) {
        pthread_join(w[t].tid, NULL);
        printf("thread %d: ok=%d refused=%d wrong=%d errors=%d%s\n", t, w[t].ok, w[t].refused, w[t].wrong, w[t].errors,
               w[t].first_refusal);
    }
    return 0;
}

/* Two threads launch in turns of TURN_LAUNCHES (A, B, A, B, A), as a
 * program's main and worker threads do, then the main thread's launch
 * fails: cutaint must number it TURNS * TURN_LAUNCHES + 1. */
#define TURNS 5
#define TURN_LAUNCHES 40

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;

struct taker {
    int first_turn, errors;
    CUdeviceptr buf;
    pthread_t tid;
};

static void *take_turns(void *arg)
{
    struct taker *t = arg;
    CU(cuCtxSetCurrent)(ctx);
    for (int mine = t->first_turn; mine < TURNS; mine += 2) {
        pthread_mutex_lock(&turn_lock);
        while (turn != mine)
            pthread_cond_wait(&turn_changed, &turn_lock);
        pthread_mutex_unlock(&turn_lock);
        for (int i = 0; i < TURN_LAUNCHES; i++)
            if (fill(t->buf, N, (float)i, OK_BLOCK) != CUDA_SUCCESS)
                t->errors++;
        pthread_mutex_lock(&turn_lock);
        turn++;
        pthread_cond_broadcast(&turn_changed);
        pthread_mutex_unlock(&turn_lock);
    }
    return NULL;
}

static int sc_turns(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct taker t[2] = {{.first_turn = 0, .buf = alloc(BYTES)}, {.first_turn = 1, .buf = alloc(BYTES)}};
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i].tid, NULL, take_turns, &t[i]) != 0)
            exit(4);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i].tid, NULL);
    printf("turns: errors=%d\n", t[0].errors + t[1].errors);
    CUdeviceptr x = alloc(BYTES);
    say("launch fill x", fill(x, N, 7.0f, BAD_BLOCK));
    return 0;
}

/* fork after initialising: parent and child each read, fail a launch, read
 * the failed buffer, and recover with a host write.  argv[0] == "busy": a
 * second thread keeps launching and reading (through a tainted neighbour)
 * while the process forks; the child then stays off the driver, whose locks
 * that thread may have held (CUDA does not support a child using the
 * parent's context), and only reads a buffer tainted before the fork. */
static atomic_bool busy_stop;

static void *busy_main(void *arg)
{
    CUdeviceptr b = *(CUdeviceptr *)arg;
    float host[16];
    CU(cuCtxSetCurrent)(ctx);
    for (int i = 0; !atomic_load(&busy_stop); i++) {
        fill(b, 16, (float)i, OK_BLOCK);
        CU(cuMemcpyDtoH)(host, b, sizeof host);
    }
    return NULL;
}

static void fail_and_recover(const char *who, CUdeviceptr x)
{
    char label[64];
    snprintf(label, sizeof label, "%s launch fill y", who);
    CUdeviceptr y = alloc(BYTES);
    say(label, fill(y, N, 2.0f, BAD_BLOCK));
    snprintf(label, sizeof label, "%s y", who);
    show_read(label, y, BYTES);
    snprintf(label, sizeof label, "%s x", who);
    show_read(label, x, BYTES);
    snprintf(label, sizeof label, "%s write y", who);
    say(label, write_floats(y, N, 3.0f));
    snprintf(label, sizeof label, "%s y again", who);
    show_read(label, y, BYTES);
}

static int sc_fork(int argc, char **argv)
{
    bool busy = argc > 0 && strcmp(argv[0], "busy") == 0;
    CUdeviceptr x = alloc(BYTES), t = alloc(BYTES), b = alloc(16 * sizeof(float));
    say("launch fill x", fill(x, N, 1.0f, OK_BLOCK));
    show_read("x", x, BYTES);
    say("launch fill t", fill(t, N, 1.0f, BAD_BLOCK));
    pthread_t helper;
    if (busy && pthread_create(&helper, NULL, busy_main, &b) != 0)
        exit(4);
    if (busy)
        usleep(20000);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        exit(4);
    if (pid == 0) {
        show_read("child t", t, BYTES);
        if (!busy)
            fail_and_recover("child", x);
        exit(0);
    }
    if (busy) {
        atomic_store(&busy_stop, true);
        pthread_join(helper, NULL);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child status: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    fail_and_recover("parent", x);
    show_read("parent t", t, BYTES);
    return 0;
}

/* A CUDA program whose forked child never calls the driver and leaves
 * through exit(): what a fork-and-exec launcher's child does. */
static int sc_fork_quiet(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES);
    say("launch fill x", fill(x, N, 1.0f, OK_BLOCK));
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        exit(4);
    if (pid == 0)
        exit(0);
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child status: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    show_read("x", x, BYTES);
    return 0;
}

/* Five fills, five reads, five host writes, five reads: what CUTAINT_INJECT
 * hits is visible call by call. */
static int sc_inject_seq(int argc, char **argv)
{
    (void)argc, (void)argv;
    enum { K = 5 };
    CUdeviceptr buf[K];
    char label[64];
    for (int k = 0; k < K; k++)
        buf[k] = alloc(BYTES);
    for (int k = 0; k < K; k++) {
        snprintf(label, sizeof label, "launch fill %d", k + 1);
        say(label, fill(buf[k], N, (float)(k + 1), OK_BLOCK));
    }
    for (int k = 0; k < K; k++) {
        snprintf(label, sizeof label, "buf %d", k + 1);
        show_read(label, buf[k], BYTES);
    }
    for (int k = 0; k < K; k++) {
        snprintf(label, sizeof label, "write %d", k + 1);
        say(label, write_floats(buf[k], N, (float)(101 + k)));
    }
    for (int k = 0; k < K; k++) {
        snprintf(label, sizeof label, "buf %d after write", k + 1);
        show_read(label, buf[k], BYTES);
    }
    return 0;
}

/* Fails and reads in a loop until killed; prints "ready" once the report has
 * had something to say. */
static int sc_spin(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES);
    float host[N];
    for (long i = 0; i < 10000000; i++) {
        fill(x, N, 1.0f, BAD_BLOCK);
        saxpy(N, 1.0f, x, y, OK_BLOCK);
        CU(cuMemcpyDtoH)(host, y, sizeof host);
        CU(cuMemcpyDtoH)(host, x, sizeof host);
        fill(x, N, 1.0f, OK_BLOCK);
        fill(y, N, 1.0f, OK_BLOCK);
        if (i == 20) {
            printf("ready\n");
            fflush(stdout);
        }
    }
    return 1;
}

/* ---- graphs --------------------------------------------------------------- */
static CUDA_KERNEL_NODE_PARAMS saxpy_node(void **params)
{
    return (CUDA_KERNEL_NODE_PARAMS){.func = k_saxpy,
                                     .gridDimX = N / OK_BLOCK,
                                     .gridDimY = 1,
                                     .gridDimZ = 1,
                                     .blockDimX = OK_BLOCK,
                                     .blockDimY = 1,
                                     .blockDimZ = 1,
                                     .kernelParams = params};
}

/* An explicit graph: memset y = 0, then saxpy(2, in -> y). */
static CUgraph saxpy_graph(CUdeviceptr *in, CUdeviceptr *y, int *n, float *a, CUgraphNode *kernel)
{
    CUgraph g;
    CUgraphNode m;
    check("cuGraphCreate", CU(cuGraphCreate)(&g, 0));
    CUDA_MEMSET_NODE_PARAMS mp = {.dst = *y, .pitch = BYTES, .value = 0, .elementSize = 4, .width = N, .height = 1};
    check("cuGraphAddMemsetNode", CU(cuGraphAddMemsetNode)(&m, g, NULL, 0, &mp, ctx));
    void *params[] = {n, a, in, y};
    CUDA_KERNEL_NODE_PARAMS kp = saxpy_node(params);
    check("cuGraphAddKernelNode", CU(cuGraphAddKernelNode)(kernel, g, &m, 1, &kp));
    return g;
}

static void graph_launch(const char *what, CUgraphExec e)
{
    say(what, CU(cuGraphLaunch)(e, 0));
    say("sync", CU(cuStreamSynchronize)(0));
}

/* x = 1 is clean, z = 5 is left stale by a failed fill.  The graph reads x;
 * its exec is pointed at z by cuGraphExecKernelNodeSetParams, back at x,
 * then at z again by cuGraphExecUpdate from a second graph: y is read after
 * each launch. */
static int sc_graph_update(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), z = alloc(BYTES);
    int n = N;
    float a = 2.0f;
    say("write x", write_floats(x, N, 1.0f));
    say("write z", write_floats(z, N, 5.0f));
    say("launch fill z", fill(z, N, 3.0f, BAD_BLOCK));
    CUgraphNode node, node_z;
    CUgraph g = saxpy_graph(&x, &y, &n, &a, &node), g_z = saxpy_graph(&z, &y, &n, &a, &node_z);
    CUgraphExec e;
    say("instantiate", CU(cuGraphInstantiateWithFlags)(&e, g, 0));
    graph_launch("graph x", e);
    show_read("y after x", y, BYTES);

    void *on_z[] = {&n, &a, &z, &y}, *on_x[] = {&n, &a, &x, &y};
    CUDA_KERNEL_NODE_PARAMS kp = saxpy_node(on_z);
    say("set params z", CU(cuGraphExecKernelNodeSetParams)(e, node, &kp));
    graph_launch("graph z", e);
    show_read("y after z", y, BYTES);
    kp = saxpy_node(on_x);
    say("set params x", CU(cuGraphExecKernelNodeSetParams)(e, node, &kp));
    graph_launch("graph x again", e);
    show_read("y after x again", y, BYTES);

    CUgraphExecUpdateResultInfo info;
    say("update z", CU(cuGraphExecUpdate)(e, g_z, &info));
    graph_launch("graph updated", e);
    show_read("y after update", y, BYTES);

    say("exec destroy", CU(cuGraphExecDestroy)(e));
    CU(cuGraphDestroy)(g);
    CU(cuGraphDestroy)(g_z);
    return 0;
}

/* A conditional node (an if whose handle holds 1 from its creation) whose
 * body is y = 0, then saxpy(2, z -> y), z left stale by a failed fill.
 * cutaint follows the body (shim/graphs.c): its read of z is checked like
 * the exec's own nodes', so the graph launch is skipped and y refused. */
static int sc_graph_cond(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr y = alloc(BYTES), z = alloc(BYTES);
    int n = N;
    float a = 2.0f;
    say("write z", write_floats(z, N, 5.0f));
    say("launch fill z", fill(z, N, 3.0f, BAD_BLOCK));
    CUgraph g;
    CUgraphNode cond, body_kernel;
    CUgraphConditionalHandle handle;
    check("cuGraphCreate", CU(cuGraphCreate)(&g, 0));
    say("handle", CU(cuGraphConditionalHandleCreate)(&handle, g, ctx, 1, 0));
    CUgraphNodeParams cp = {.type = CU_GRAPH_NODE_TYPE_CONDITIONAL};
    cp.conditional = (CUDA_CONDITIONAL_NODE_PARAMS){.handle = handle, .type = CU_GRAPH_COND_TYPE_IF, .size = 1};
    say("add conditional", CU(cuGraphAddNode)(&cond, g, NULL, NULL, 0, &cp));
    CUgraph body = cp.conditional.phGraph_out[0];
    CUgraphNode zero_y;
    CUDA_MEMSET_NODE_PARAMS mp = {.dst = y, .pitch = BYTES, .value = 0, .elementSize = 4, .width = N, .height = 1};
    check("cuGraphAddMemsetNode", CU(cuGraphAddMemsetNode)(&zero_y, body, NULL, 0, &mp, ctx));
    void *params[] = {&n, &a, &z, &y};
    CUDA_KERNEL_NODE_PARAMS kp = saxpy_node(params);
    check("cuGraphAddKernelNode", CU(cuGraphAddKernelNode)(&body_kernel, body, &zero_y, 1, &kp));
    CUgraphExec e;
    say("instantiate", CU(cuGraphInstantiateWithFlags)(&e, g, 0));
    graph_launch("graph cond", e);
    show_read("y after cond", y, BYTES);
    say("exec destroy", CU(cuGraphExecDestroy)(e));
    say("graph destroy", CU(cuGraphDestroy)(g));
    return 0;
}

/* A loss simulated at the fill (CUTAINT_INJECT ...=context_lost): the
 * calls after it fail as on a destroyed context, except the ways out of
 * one (intercept.def's CT_WAY_OUT rows), which still reach the driver. */
static int sc_after_loss(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES), y = 0;
    say("launch fill x", fill(x, N, 1.0f, OK_BLOCK));
    say("alloc y", CU(cuMemAlloc)(&y, BYTES));
    say("set current", CU(cuCtxSetCurrent)(ctx));
    return 0;
}

/* A copy node's one row of BYTES from src to dst, or to host when given. */
static CUDA_MEMCPY3D copy_node(CUdeviceptr src, CUdeviceptr dst, void *host)
{
    return (CUDA_MEMCPY3D){.srcMemoryType = CU_MEMORYTYPE_DEVICE,
                           .srcDevice = src,
                           .dstMemoryType = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE,
                           .dstDevice = dst,
                           .dstHost = host,
                           .WidthInBytes = BYTES,
                           .Height = 1,
                           .Depth = 1};
}

/* A graph over z, left stale by a failed fill: z copied to y, y copied to
 * the host, and x (clean) copied to the host with a source pitch narrower
 * than its row, a shape the read rule leaves to the driver (fakecuda takes
 * it for one row).  Under cutaint the graph is skipped: the host copy of y
 * is refused and poisoned, the malformed one is left to the driver, which
 * never ran it, as the same read outside a graph would be. */
static int sc_graph_host(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), z = alloc(BYTES);
    say("write x", write_floats(x, N, 1.0f));
    say("write z", write_floats(z, N, 5.0f));
    say("launch fill z", fill(z, N, 3.0f, BAD_BLOCK));
    static unsigned char from_y[BYTES], from_x[BYTES];
    memset(from_y, UNTOUCHED, BYTES);
    memset(from_x, UNTOUCHED, BYTES);
    CUDA_MEMCPY3D z_to_y = copy_node(z, y, NULL), y_to_host = copy_node(y, 0, from_y),
                  x_to_host = copy_node(x, 0, from_x);
    x_to_host.srcPitch = 16;
    CUgraph g;
    CUgraphNode to_y, y_host, x_host;
    CUgraphExec e;
    check("cuGraphCreate", CU(cuGraphCreate)(&g, 0));
    check("cuGraphAddMemcpyNode", CU(cuGraphAddMemcpyNode)(&to_y, g, NULL, 0, &z_to_y, ctx));
    check("cuGraphAddMemcpyNode", CU(cuGraphAddMemcpyNode)(&y_host, g, &to_y, 1, &y_to_host, ctx));
    check("cuGraphAddMemcpyNode", CU(cuGraphAddMemcpyNode)(&x_host, g, NULL, 0, &x_to_host, ctx));
    say("instantiate", CU(cuGraphInstantiateWithFlags)(&e, g, 0));
    graph_launch("graph", e);
    describe("host y", CUDA_SUCCESS, from_y, BYTES);
    describe("host x", CUDA_SUCCESS, from_x, BYTES);
    say("exec destroy", CU(cuGraphExecDestroy)(e));
    CU(cuGraphDestroy)(g);
    return 0;
}

/* Two threads instantiating and destroying graph execs at once, so the
 * driver hands one thread the handle the other just destroyed.  The checker
 * thread's exec reads x, left stale by a failed fill: each launch must be
 * skipped and its y refused.  A y served means the exec went unchecked
 * (its record forgotten by the other thread's late destroy). */
#define REUSE_CHURNERS 6

struct reuse {
    CUgraph g;
    CUdeviceptr y;
    int iters, launches, served, errors;
};

static void *reuse_churn(void *arg)
{
    struct reuse *w = arg;
    if (CU(cuCtxSetCurrent)(ctx) != CUDA_SUCCESS)
        w->errors++;
    for (int i = 0; i < w->iters; i++) {
        CUgraphExec e;
        if (CU(cuGraphInstantiateWithFlags)(&e, w->g, 0) != CUDA_SUCCESS || CU(cuGraphExecDestroy)(e) != CUDA_SUCCESS)
            w->errors++;
    }
    return NULL;
}

static void *reuse_check(void *arg)
{
    struct reuse *w = arg;
    float host[N];
    if (CU(cuCtxSetCurrent)(ctx) != CUDA_SUCCESS)
        w->errors++;
    for (int i = 0; i < w->iters; i++) {
        CUgraphExec e;
        if (CU(cuMemsetD32)(w->y, 0, N) != CUDA_SUCCESS ||
            CU(cuGraphInstantiateWithFlags)(&e, w->g, 0) != CUDA_SUCCESS) {
            w->errors++;
            continue;
        }
        if (CU(cuGraphLaunch)(e, 0) != CUDA_SUCCESS || CU(cuStreamSynchronize)(0) != CUDA_SUCCESS)
            w->errors++;
        w->launches++;
        w->served += CU(cuMemcpyDtoH)(host, w->y, sizeof host) == CUDA_SUCCESS;
        if (CU(cuGraphExecDestroy)(e) != CUDA_SUCCESS)
            w->errors++;
    }
    return NULL;
}

static int sc_graph_reuse(int argc, char **argv)
{
    int iters = argc > 0 ? atoi(argv[0]) : 2000;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES), cx = alloc(BYTES), cy = alloc(BYTES);
    int n = N;
    float a = 2.0f;
    say("write x", write_floats(x, N, 1.0f));
    say("write cx", write_floats(cx, N, 1.0f));
    say("launch fill x", fill(x, N, 3.0f, BAD_BLOCK));
    CUgraphNode node, node_c;
    struct reuse check_w = {saxpy_graph(&x, &y, &n, &a, &node), y, iters, 0, 0, 0};
    struct reuse churn_w = {saxpy_graph(&cx, &cy, &n, &a, &node_c), cy, iters, 0, 0, 0};
    /* More churning threads than cores: a thread preempted between the
     * driver's destroy and cutaint's hook is what the race needs. */
    pthread_t churn[REUSE_CHURNERS], checker;
    struct reuse churn_ws[REUSE_CHURNERS];
    for (int i = 0; i < REUSE_CHURNERS; i++) {
        churn_ws[i] = churn_w;
        pthread_create(&churn[i], NULL, reuse_churn, &churn_ws[i]);
    }
    pthread_create(&checker, NULL, reuse_check, &check_w);
    int errors = check_w.errors;
    for (int i = 0; i < REUSE_CHURNERS; i++) {
        pthread_join(churn[i], NULL);
        errors += churn_ws[i].errors;
    }
    pthread_join(checker, NULL);
    printf("graph_reuse: launches=%d served=%d errors=%d\n", check_w.launches, check_w.served, errors + check_w.errors);
    return 0;
}

/* The check at exit looks from the exiting thread, on its context. */
static void *exit_1(void *unused)
{
    (void)unused;
    check("cuCtxSetCurrent", CU(cuCtxSetCurrent)(ctx));
    exit(1);
}

/* A kernel that faults at execution, a call cutaint does not check
 * (cuMemGetInfo), then exit(1), from main or (argv[0] "thread") from
 * another thread: the loss is seen only by the check made at exit.  On the
 * runtime's loading path cutaint loads the driver before the program's
 * cuInit. */
static int sc_loss_at_exit(int argc, char **argv)
{
    CUdeviceptr x = alloc(BYTES);
    say("launch crash", crash_on(0, x));
    size_t free_bytes, total;
    say("cuMemGetInfo", CU(cuMemGetInfo)(&free_bytes, &total));
    fflush(stdout);
    pthread_t t;
    if (argc > 0 && strcmp(argv[0], "thread") == 0 && pthread_create(&t, NULL, exit_1, NULL) == 0)
        pthread_join(t, NULL);
    exit(1);
}

/* x left stale by a failed fill, a graph reading x into y instantiated,
 * its destroy tried (FAKECUDA_FAULTS may make the driver refuse it), y
 * cleaned, then the exec launched and y read.  An exec still alive must
 * still be checked: its launch skipped and y refused. */
static int sc_exec_destroy(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdeviceptr x = alloc(BYTES), y = alloc(BYTES);
    int n = N;
    float a = 2.0f;
    say("write x", write_floats(x, N, 1.0f));
    say("launch fill x", fill(x, N, 3.0f, BAD_BLOCK));
    CUgraphNode node;
    CUgraph g = saxpy_graph(&x, &y, &n, &a, &node);
    CUgraphExec e;
    say("instantiate", CU(cuGraphInstantiateWithFlags)(&e, g, 0));
    CUresult destroyed = CU(cuGraphExecDestroy)(e);
    say("exec destroy", destroyed);
    if (destroyed == CUDA_SUCCESS)
        return 0;
    say("write y", write_floats(y, N, 0.0f));
    graph_launch("graph", e);
    show_read("y", y, BYTES);
    CU(cuGraphExecDestroy)(e);
    CU(cuGraphDestroy)(g);
    return 0;
}

/* reduce(const float *in, float *out, int n) as PTX whose code stores
 * through `in` as well (a const_cast): read with its image, `in` is an
 * output, tainted when a launch fails; described from its signature alone
 * (an image forgotten), it is an input, and its stale bytes are served. */
static const char reduce_writing_in_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry _Z6reducePKfPfi(.param .u64 _Z6reducePKfPfi_param_0, .param .u64 _Z6reducePKfPfi_param_1,"
    " .param .u32 _Z6reducePKfPfi_param_2)\n{\n .reg .b64 %rd<5>; .reg .f32 %f<2>;\n"
    " ld.param.u64 %rd1, [_Z6reducePKfPfi_param_0];\n ld.param.u64 %rd2, [_Z6reducePKfPfi_param_1];\n"
    " cvta.to.global.u64 %rd3, %rd1;\n cvta.to.global.u64 %rd4, %rd2;\n ld.global.f32 %f1, [%rd3];\n"
    " st.global.f32 [%rd4], %f1;\n st.global.f32 [%rd3], %f1;\n ret;\n}\n";

/* Threads churning contexts, modules or libraries while each fails a
 * reduce (reduce_writing_in_ptx) over fresh buffers, whose reads must all be
 * refused.  The driver hands a context, module or library handle one thread
 * just destroyed to the next thread that makes one, so the new lifetime's
 * allocations, kernels and image must outlive the old one's late forget.
 * Modes: "contexts" (each round creates a context, loads the module in it,
 * unloads and destroys it), "libraries" (the primary context, each round
 * loading and unloading a library).  Each round also reads a buffer
 * of the primary context that a failed fill left stale.  A read served is a
 * stale byte handed back as data. */
enum churn_mode { CHURN_CONTEXTS, CHURN_LIBRARIES };

struct churn {
    int rounds;
    enum churn_mode mode;
    CUdevice dev;
    CUdeviceptr shared; /* in the primary context, tainted */
    int reads, served, errors;
};

/* One failed reduce and its reads; true when each call answered as expected. */
static bool churn_round(struct churn *w, CUfunction reduce)
{
    CUdeviceptr in = 0, out = 0;
    float host[N];
    int n = N;
    void *p[] = {&in, &out, &n};
    if (CU(cuMemAlloc)(&in, BYTES) != CUDA_SUCCESS || CU(cuMemAlloc)(&out, BYTES) != CUDA_SUCCESS ||
        CU(cuMemsetD32)(in, 0, N) != CUDA_SUCCESS ||
        CU(cuLaunchKernel)(reduce, 1, 1, 1, BAD_BLOCK, 1, 1, 0, 0, p, NULL) == CUDA_SUCCESS)
        return false;
    w->reads += 3;
    w->served += CU(cuMemcpyDtoH)(host, in, BYTES) == CUDA_SUCCESS;
    w->served += CU(cuMemcpyDtoH)(host, out, BYTES) == CUDA_SUCCESS;
    w->served += CU(cuMemcpyDtoH)(host, w->shared, BYTES) == CUDA_SUCCESS;
    /* A destroyed context frees its own. */
    return w->mode == CHURN_CONTEXTS || (CU(cuMemFree)(in) == CUDA_SUCCESS && CU(cuMemFree)(out) == CUDA_SUCCESS);
}

static bool churn_library_round(struct churn *w)
{
    CUlibrary lib;
    CUkernel k;
    if (CU(cuLibraryLoadData)(&lib, reduce_writing_in_ptx, NULL, NULL, 0, NULL, NULL, 0) != CUDA_SUCCESS)
        return false;
    bool ok =
        CU(cuLibraryGetKernel)(&k, lib, "_Z6reducePKfPfi") == CUDA_SUCCESS && churn_round(w, (CUfunction)(void *)k);
    return CU(cuLibraryUnload)(lib) == CUDA_SUCCESS && ok;
}

static bool churn_context_round(struct churn *w)
{
    CUcontext c;
    CUmodule m;
    CUfunction f;
    if (CU(cuCtxCreate)(&c, NULL, 0, w->dev) != CUDA_SUCCESS)
        return false;
    bool ok = CU(cuModuleLoadData)(&m, reduce_writing_in_ptx) == CUDA_SUCCESS &&
              CU(cuModuleGetFunction)(&f, m, "_Z6reducePKfPfi") == CUDA_SUCCESS && churn_round(w, f) &&
              CU(cuModuleUnload)(m) == CUDA_SUCCESS;
    return CU(cuCtxDestroy)(c) == CUDA_SUCCESS && ok;
}

static void *churn_thread(void *arg)
{
    struct churn *w = arg;
    if (w->mode == CHURN_LIBRARIES && CU(cuCtxSetCurrent)(ctx) != CUDA_SUCCESS)
        w->errors++;
    for (int i = 0; i < w->rounds; i++)
        w->errors += !(w->mode == CHURN_LIBRARIES ? churn_library_round(w) : churn_context_round(w));
    return NULL;
}

#define CHURN_THREADS_MAX 48

static int sc_churn(int argc, char **argv)
{
    static const char *const modes[] = {"contexts", "libraries"};
    int threads = argc > 1 ? atoi(argv[1]) : 32, rounds = argc > 2 ? atoi(argv[2]) : 100, mode = -1;
    for (int i = 0; argc > 0 && i < 2; i++)
        if (strcmp(argv[0], modes[i]) == 0)
            mode = i;
    if (mode < 0 || threads < 1 || threads > CHURN_THREADS_MAX || rounds < 1) {
        fprintf(stderr, "churn contexts|libraries THREADS(1-%d) ROUNDS\n", CHURN_THREADS_MAX);
        return 2;
    }
    struct churn proto = {rounds, (enum churn_mode)mode, 0, alloc(BYTES), 0, 0, 0};
    check("cuDeviceGet", CU(cuDeviceGet)(&proto.dev, 0));
    say("launch fill shared", fill(proto.shared, N, 3.0f, BAD_BLOCK));
    pthread_t tid[CHURN_THREADS_MAX];
    struct churn ws[CHURN_THREADS_MAX];
    for (int t = 0; t < threads; t++) {
        ws[t] = proto;
        if (pthread_create(&tid[t], NULL, churn_thread, &ws[t]) != 0)
            exit(4);
    }
    int reads = 0, served = 0, errors = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        reads += ws[t].reads, served += ws[t].served, errors += ws[t].errors;
    }
    printf("churn %s: reads=%d served=%d errors=%d\n", modes[mode], reads, served, errors);
    return 0;
}

/* A driver-API program's own image loads and lookups the driver refuses
 * (FAKECUDA_FAULTS decides which; the setup's module is the first load): bytes that are no image, a pointer to
 * nothing, and a kernel its module lacks; and libraries loaded almost as
 * NVIDIA's runtime loads its own, which only the runtime's own form (a
 * fatbin wrapper with CU_LIBRARY_BINARY_IS_PRESERVED) would have answered
 * with a stand-in: a wrapper without the option, and the option on bytes.
 * Each answer is printed: under the shim it must be exactly the driver's. */
static int sc_images(int argc, char **argv)
{
    (void)argc, (void)argv;
    static const char not_an_image[] = "not a kernel image, just bytes";
    static const struct {
        int magic, version;
        const void *data;
        void *unused;
    } wrapper = {0x466243b1, 1, not_an_image, NULL};
    CUlibraryOption keep = CU_LIBRARY_BINARY_IS_PRESERVED;
    void *yes = (void *)(uintptr_t)1;
    CUlibrary lib;
    say("library wrapper", CU(cuLibraryLoadData)(&lib, &wrapper, NULL, NULL, 0, NULL, NULL, 0));
    say("library preserved bytes", CU(cuLibraryLoadData)(&lib, not_an_image, NULL, NULL, 0, &keep, &yes, 1));
    CUmodule m;
    say("load bytes", CU(cuModuleLoadData)(&m, not_an_image));
    say("load nowhere", CU(cuModuleLoadData)(&m, (const void *)(uintptr_t)0x10));
    say("load again", CU(cuModuleLoadData)(&m, not_an_image));
    CUfunction f;
    say("lookup missing", CU(cuModuleGetFunction)(&f, m, "no_such_kernel"));
    say("lookup fill", CU(cuModuleGetFunction)(&f, m, "_Z4fillPfif"));
    say("unload", CU(cuModuleUnload)(m));
    return 0;
}

static const client_scenario scenarios[] = {
    {"happy", sc_happy},
    {"failed_launch", sc_failed_launch},
    {"two_hops", sc_two_hops},
    {"const_input", sc_const_input},
    {"rewrite", sc_rewrite},
    {"interior", sc_interior},
    {"struct", sc_struct},
    {"extra", sc_extra},
    {"refill", sc_refill},
    {"cascade", sc_cascade},
    {"crash", sc_crash},
    {"sus_alone", sc_sus_alone},
    {"sus_queued", sc_sus_queued},
    {"sus_streams", sc_sus_streams},
    {"sus_events", sc_sus_events},
    {"sus_sync_copy", sc_sus_sync_copy},
    {"sus_threads", sc_sus_threads},
    {"sus_context", sc_sus_context},
    {"null_args", sc_null_args},
    {"null_tainted", sc_null_tainted},
    {"driver_answers", sc_driver_answers},
    {"threads", sc_threads},
    {"turns", sc_turns},
    {"fork", sc_fork},
    {"fork_quiet", sc_fork_quiet},
    {"inject_seq", sc_inject_seq},
    {"spin", sc_spin},
    {"graph_update", sc_graph_update},
    {"graph_reuse", sc_graph_reuse},
    {"exec_destroy", sc_exec_destroy},
    {"loss_at_exit", sc_loss_at_exit},
    {"churn", sc_churn},
    {"graph_host", sc_graph_host},
    {"graph_cond", sc_graph_cond},
    {"after_loss", sc_after_loss},
    {"images", sc_images},
};

int main(int argc, char **argv)
{
    return client_main(argc, argv, scenarios, sizeof scenarios / sizeof scenarios[0], setup);
}

/*
 * test_ptx.c: fakecuda runs the PTX of modules (ptx/):
 * kernels of our own (ptx_kernels.cu, compiled by nvcc at build time to
 * PTX text, FC_PTX, and to a fatbin, FC_FATBIN) compute what the same
 * computation on the host gives; device printf prints, assert, trap and bad
 * addresses fault as a GPU's would (sticky, at the next sync); an
 * instruction the executor lacks fails the launch naming it; and
 * FAKECUDA_PTX=off leaves PTX kernels unknown.
 */
#include "fc_test.h"

#include <fcntl.h>
#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *file_bytes(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    cr_assert(b);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    return b;
}

static CUmodule load(const char *path)
{
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    CUmodule m;
    OK(cuModuleLoadData(&m, file_bytes(path)));
    return m;
}

static CUfunction fn(CUmodule m, const char *name)
{
    CUfunction f;
    OK(cuModuleGetFunction(&f, m, name));
    return f;
}

static CUdeviceptr zeros(size_t bytes)
{
    CUdeviceptr d;
    OK(cuMemAlloc(&d, bytes));
    OK(cuMemsetD8(d, 0, bytes));
    return d;
}

static void launch(CUfunction f, unsigned grid, unsigned block, unsigned smem, void **args)
{
    OK(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, smem, NULL, args, NULL));
    OK(cuCtxSynchronize());
}

static bool close_to(double got, double want)
{
    return fabs(got - want) <= 1e-6 * fmax(1.0, fabs(want));
}

/* ---- arithmetic -------------------------------------------------------------- */

/* x + y, x * y and x / y under a rounding mode; volatile keeps the compiler
   from moving them across the mode's change. */
static double host_rounded(int mode, char op, double x, double y, bool single)
{
    volatile double vx = x, vy = y, r;
    volatile float fx = (float)x, fy = (float)y, fr;
    fesetround(mode);
    if (single)
        fr = fx + fy;
    else
        r = op == '*' ? vx * vy : vx / vy;
    fesetround(FE_TONEAREST);
    return single ? fr : r;
}

/* .rm and .rp arithmetic on whole warps rounds as asked: every result
   equals the host's under the same mode (round to nearest misses one of
   each pair). */
Test(ptx, directed_rounding_rounds_down_and_up)
{
    CUmodule m = load(FC_PTX);
    enum { N = 64 };
    float a[N];
    double b[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)(i + 1) / 7.0f;
        b[i] = (double)(i + 1) / 11.0;
    }
    CUdeviceptr da = fc_upload(a, sizeof a), db = fc_upload(b, sizeof b), of = zeros(N * 8), od = zeros(N * 16);
    void *args[] = {&da, &db, &of, &od};
    launch(fn(m, "rounding"), 1, N, 0, args);
    float gf[N * 2];
    double gd[N * 2];
    OK(cuMemcpyDtoH(gf, of, sizeof gf));
    OK(cuMemcpyDtoH(gd, od, sizeof gd));
    for (int i = 0; i < N; i++) {
        cr_expect_eq(gf[i * 2], (float)host_rounded(FE_DOWNWARD, '+', a[i], 1.0f / 3.0f, true), "rd f32 [%d]", i);
        cr_expect_eq(gf[i * 2 + 1], (float)host_rounded(FE_UPWARD, '+', a[i], 1.0f / 3.0f, true), "ru f32 [%d]", i);
        cr_expect_eq(gd[i * 2], host_rounded(FE_DOWNWARD, '*', b[i], 0.1, false), "rd f64 [%d]", i);
        cr_expect_eq(gd[i * 2 + 1], host_rounded(FE_UPWARD, '/', b[i], 3.0, false), "ru f64 [%d]", i);
    }
}

static unsigned brev32(unsigned v)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
        r |= ((v >> i) & 1u) << (31 - i);
    return r;
}

static unsigned byte_perm(unsigned x, unsigned y, unsigned s)
{
    unsigned long long b = (unsigned long long)y << 32 | x;
    unsigned r = 0;
    for (int i = 0; i < 4; i++)
        r |= (unsigned)((b >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}

static void check_arith(const char *image)
{
    CUmodule m = load(image);
    enum { N = 300 };
    static const int table[4] = {3, 5, 7, 11};
    int a[N];
    float b[N];
    for (int i = 0; i < N; i++) {
        a[i] = (i * 2654435761u) % 1000 - 300;
        b[i] = (float)(i - 150) * 0.37f;
    }
    CUdeviceptr da = fc_upload(a, sizeof a), db = fc_upload(b, sizeof b), oi = zeros(N * 16), of = zeros(N * 8),
                ou = zeros(N * 4), od = zeros(N * 8);
    int n = N;
    void *args[] = {&da, &db, &oi, &of, &ou, &od, &n};
    launch(fn(m, "arith"), (N + 127) / 128, 128, 0, args);
    int gi[N * 4];
    float gf[N * 2];
    unsigned gu[N];
    double gd[N];
    OK(cuMemcpyDtoH(gi, oi, sizeof gi));
    OK(cuMemcpyDtoH(gf, of, sizeof gf));
    OK(cuMemcpyDtoH(gu, ou, sizeof gu));
    OK(cuMemcpyDtoH(gd, od, sizeof gd));
    for (int i = 0; i < N; i++) {
        int x = a[i];
        float y = b[i];
        cr_expect_eq(gi[i * 4], x * 7 - (x >> 2) + (x % 5) + table[i & 3], "arith[%d].0", i);
        cr_expect_eq(gi[i * 4 + 1],
                     (int)lrintf(y * 3.5f) ^ __builtin_popcount((unsigned)x) ^ (__builtin_clz((unsigned)x | 1) << 8),
                     "arith[%d].1", i);
        cr_expect_eq(gi[i * 4 + 2], x > 10 ? (x < 100 ? x : 100) : (x > -100 ? x : -100), "arith[%d].2", i);
        cr_expect_eq((unsigned)gi[i * 4 + 3],
                     brev32((unsigned)x) ^ byte_perm((unsigned)x, 0x12345678u, 0x3210u + (unsigned)(i & 7)),
                     "arith[%d].3", i);
        cr_expect(close_to(gf[i * 2], fmaf(y, 1.5f, -2.0f) / (1.0f + fabsf(y))), "arith[%d].f0 %g", i, gf[i * 2]);
        cr_expect(close_to(gf[i * 2 + 1], sqrtf(fabsf(y)) + (float)x * 0.25f + (float)(_Float16)y), "arith[%d].f1 %g",
                  i, gf[i * 2 + 1]);
        unsigned ux = (unsigned)x;
        cr_expect_eq(gu[i], ux * 2654435761u + (unsigned)(((unsigned long long)ux * 2654435761u) >> 32), "arith[%d].u",
                     i);
        cr_expect(close_to(gd[i], (double)y * (double)x + 1.0 / (double)(i + 1)), "arith[%d].d %g", i, gd[i]);
    }
}

Test(ptx, arithmetic_from_ptx_text)
{
    check_arith(FC_PTX);
}

/* The same kernels from the fatbin nvcc makes by default (compressed PTX beside SASS). */
Test(ptx, arithmetic_from_a_fatbin)
{
    check_arith(FC_FATBIN);
}

/* ---- shared memory, barriers, divergence, warps ------------------------------ */

Test(ptx, block_sum_with_dynamic_shared_memory)
{
    CUmodule m = load(FC_PTX);
    enum { N = 1000, B = 256, G = (N + B - 1) / B };
    float in[N], out[G];
    for (int i = 0; i < N; i++)
        in[i] = (float)(i % 13);
    CUdeviceptr din = fc_upload(in, sizeof in), dout = zeros(sizeof out);
    int n = N;
    void *args[] = {&din, &dout, &n};
    launch(fn(m, "block_sum"), G, B, B * sizeof(float), args);
    OK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int g = 0; g < G; g++) {
        float want = 0;
        for (int i = g * B; i < (g + 1) * B && i < N; i++)
            want += in[i];
        cr_expect_eq(out[g], want, "block %d: %g, want %g", g, out[g], want);
    }
}

Test(ptx, divergent_loops)
{
    CUmodule m = load(FC_PTX);
    enum { N = 200 };
    unsigned in[N], steps[N];
    for (int i = 0; i < N; i++)
        in[i] = (unsigned)i + 1;
    CUdeviceptr din = fc_upload(in, sizeof in), dout = zeros(sizeof steps);
    int n = N;
    void *args[] = {&din, &dout, &n};
    launch(fn(m, "collatz"), 2, 128, 0, args);
    OK(cuMemcpyDtoH(steps, dout, sizeof steps));
    for (int i = 0; i < N; i++) {
        unsigned long long v = in[i];
        unsigned s = 0;
        for (; v != 1; s++)
            v = (v & 1) ? 3 * v + 1 : v / 2;
        cr_expect_eq(steps[i], s, "collatz(%u): %u, want %u", in[i], steps[i], s);
    }
}

Test(ptx, warp_votes_matches_and_shuffles)
{
    CUmodule m = load(FC_PTX);
    int in[32];
    for (int t = 0; t < 32; t++)
        in[t] = (t * 5 + 3) % 11;
    CUdeviceptr din = fc_upload(in, sizeof in), dout = zeros(32 * 6 * 4);
    void *args[] = {&din, &dout};
    launch(fn(m, "warp_ops"), 1, 32, 0, args);
    unsigned o[32 * 6];
    OK(cuMemcpyDtoH(o, dout, sizeof o));
    unsigned ballot = 0, odd = 0;
    bool any7 = false;
    for (int t = 0; t < 32; t++) {
        ballot |= (unsigned)(in[t] & 1) << t;
        any7 = any7 || in[t] == 7;
    }
    odd = ballot;
    for (int t = 0; t < 32; t++) {
        unsigned same = 0;
        for (int u = 0; u < 32; u++)
            same |= (unsigned)(in[u] % 3 == in[t] % 3) << u;
        cr_expect_eq(o[t * 6], ballot, "ballot at %d", t);
        cr_expect_eq(o[t * 6 + 1], (unsigned)any7 | 2u, "any/all at %d", t);
        cr_expect_eq(o[t * 6 + 2], same, "match at %d", t);
        cr_expect_eq(o[t * 6 + 3], (unsigned)in[t ^ 5], "shfl_xor at %d", t);
        cr_expect_eq(o[t * 6 + 4], (unsigned)in[(t * 7) & 31], "shfl idx at %d", t);
        if (in[t] & 1) {
            cr_expect_eq(o[t * 6 + 5], odd, "activemask of the odd lanes at %d", t);
        } else { /* shfl.up among the even lanes: from lane t-1 if it is even (active), else its own */
            int src = t > 0 && !(in[t - 1] & 1) ? t - 1 : t;
            cr_expect_eq(o[t * 6 + 5], (unsigned)in[src], "shfl_up in a branch at %d", t);
        }
    }
}

/* 64-bit values split into halves and joined again (mov's packing),
   in a full warp and in a partial one (48 threads). */
Test(ptx, a_shuffled_double_is_split_and_joined)
{
    CUmodule m = load(FC_PTX);
    enum { N = 48 };
    double in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = 1.0 / (i + 3) + (double)i * 1e10;
    CUdeviceptr din = fc_upload(in, sizeof in), dout = zeros(sizeof out);
    void *args[] = {&din, &dout};
    launch(fn(m, "shfl_double"), 1, N, 0, args);
    OK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int i = 0; i < N; i++)
        cr_expect_eq(out[i], in[i ^ 1] * 2.0, "lane %d: %.17g", i, out[i]);
}

Test(ptx, warp_operations_over_a_partition)
{
    CUmodule m = load(FC_PTX);
    int in[32];
    for (int t = 0; t < 32; t++)
        in[t] = (t * 37 + 11) % 101;
    CUdeviceptr din = fc_upload(in, sizeof in), dout = zeros(32 * 2 * 4);
    void *args[] = {&din, &dout};
    launch(fn(m, "partition_ops"), 1, 32, 0, args);
    unsigned o[64];
    OK(cuMemcpyDtoH(o, dout, sizeof o));
    for (int t = 0; t < 32; t++) {
        int max = 0;
        unsigned ballot = 0;
        for (int u = 0; u < 32; u++)
            if (in[u] % 4 == in[t] % 4) {
                max = in[u] > max ? in[u] : max;
                ballot |= (unsigned)(in[u] > 50) << u;
            }
        cr_expect_eq(o[t * 2], (unsigned)max, "redux.max of lane %d's partition", t);
        cr_expect_eq(o[t * 2 + 1], ballot, "ballot of lane %d's partition", t);
    }
}

Test(ptx, atomics_on_global_and_shared_memory)
{
    CUmodule m = load(FC_PTX);
    enum { N = 700 };
    unsigned in[N], bins[16] = {0};
    for (int i = 0; i < N; i++)
        in[i] = (unsigned)(i * 7919) % 97;
    CUdeviceptr din = fc_upload(in, sizeof in), dbins = zeros(sizeof bins), dsum = zeros(4);
    int n = N;
    void *args[] = {&din, &dbins, &dsum, &n};
    launch(fn(m, "histogram"), (N + 127) / 128, 128, 0, args);
    unsigned got[16];
    float sum;
    OK(cuMemcpyDtoH(got, dbins, sizeof got));
    OK(cuMemcpyDtoH(&sum, dsum, 4));
    for (int i = 0; i < N; i++)
        bins[in[i] & 15]++;
    for (int b = 0; b < 16; b++)
        cr_expect_eq(got[b], bins[b], "bin %d: %u, want %u", b, got[b], bins[b]);
    cr_expect_eq(sum, N * 0.5f);
    CUdeviceptr counter;
    size_t size;
    OK(cuModuleGetGlobal(&counter, &size, m, "g_counter"));
    cr_assert_eq(size, 4);
    unsigned c;
    OK(cuMemcpyDtoH(&c, counter, 4));
    cr_expect_eq(c, N, "the __device__ counter: %u", c);
}

Test(ptx, calls_recursion_and_local_arrays)
{
    CUmodule m = load(FC_PTX);
    enum { N = 64 };
    int in[N];
    for (int i = 0; i < N; i++)
        in[i] = i * 3 + 1;
    CUdeviceptr din = fc_upload(in, sizeof in), dout = zeros(N * 8);
    int n = N;
    void *args[] = {&din, &dout, &n};
    launch(fn(m, "calls"), 1, N, 0, args);
    unsigned long long out[N];
    OK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int i = 0; i < N; i++) {
        unsigned long long f = 1;
        for (int k = 2; k <= in[i] % 20; k++)
            f *= (unsigned long long)k;
        cr_expect_eq(out[i], f + (unsigned long long)((in[i] & 15) * in[i]), "calls[%d]", i);
    }
}

Test(ptx, two_dimensional_grids)
{
    CUmodule m = load(FC_PTX);
    CUdeviceptr d = zeros(16 * 12 * 4);
    void *args[] = {&d};
    OK(cuLaunchKernel(fn(m, "coords"), 2, 3, 1, 8, 4, 1, 0, NULL, args, NULL));
    OK(cuCtxSynchronize());
    unsigned out[16 * 12];
    OK(cuMemcpyDtoH(out, d, sizeof out));
    for (unsigned y = 0; y < 12; y++)
        for (unsigned x = 0; x < 16; x++)
            cr_expect_eq(out[y * 16 + x], y << 16 | x, "(%u, %u)", x, y);
}

Test(ptx, device_malloc_and_free)
{
    CUmodule m = load(FC_PTX);
    CUdeviceptr d = zeros(64 * 4);
    void *args[] = {&d};
    launch(fn(m, "heap"), 1, 64, 0, args);
    unsigned out[64];
    OK(cuMemcpyDtoH(out, d, sizeof out));
    for (unsigned t = 0; t < 64; t++)
        cr_expect_eq(out[t], 64 * t + 63 * 64 / 2, "thread %u: %u", t, out[t]);
}

Test(ptx, cp_async_copies_into_shared_memory)
{
    CUmodule m = load(FC_PTX);
    float in[64 * 4];
    for (int i = 0; i < 64 * 4; i++)
        in[i] = (float)i;
    CUdeviceptr din = fc_upload(in, sizeof in), dout = zeros(sizeof in);
    void *args[] = {&din, &dout};
    launch(fn(m, "async_copy"), 1, 64, 0, args);
    float out[64 * 4];
    OK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int t = 0; t < 64; t++)
        for (int c = 0; c < 4; c++)
            cr_expect_eq(out[t * 4 + c], 2 * in[(63 - t) * 4 + c], "thread %d component %d", t, c);
}

/* ---- printf, faults, what the executor lacks ------------------------------------ */

/* A context that goes takes its PTX module's function handles with it,
   once: freed twice, a handle would sit twice on the free list and two
   later functions would share it (the model check met saxpy and a PTX
   kernel as one handle after a context was destroyed). */
Test(ptx, a_released_context_frees_ptx_handles_once)
{
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    char *text = file_bytes(FC_PTX);
    static const char *const names[] = {"arith", "block_sum", "poke", "say", "check", "stop"};
    enum { N = sizeof names / sizeof *names };
    for (int round = 0; round < 2; round++) {
        int count = round ? N : N / 2; /* more than the first round freed: each of those twice would show */
        CUcontext ctx;
        OK(cuCtxCreate(&ctx, NULL, 0, 0));
        CUmodule m;
        OK(cuModuleLoadData(&m, text));
        CUfunction f[N];
        for (int i = 0; i < count; i++)
            f[i] = fn(m, names[i]);
        for (int i = 0; i < count; i++)
            for (int j = i + 1; j < count; j++)
                cr_assert_neq(f[i], f[j], "round %d: %s and %s share one handle", round, names[i], names[j]);
        OK(cuCtxDestroy(ctx));
    }
    free(text);
}

/* cuModuleUnload with a launch of its PTX still queued (the synchronous
   schedule runs nothing before a sync point): the launch runs first, on
   code the unload has not freed yet. */
Test(ptx, unload_runs_the_module_s_queued_launches_first)
{
    fc_schedule_sync();
    CUmodule m = load(FC_PTX);
    CUdeviceptr d = zeros(64 * 4);
    int v = 4242;
    void *args[] = {&d, &v};
    OK(cuLaunchKernel(fn(m, "poke"), 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
    OK(cuModuleUnload(m));
    OK(cuCtxSynchronize());
    int got[64];
    OK(cuMemcpyDtoH(got, d, sizeof got));
    for (int i = 0; i < 64; i++)
        cr_expect_eq(got[i], v, "got[%d]", i);
}

/* mbarrier: phases shared by a block's warps, cp.async arriving on one,
   a transaction count, pending_count and parity waits (ptx/ptx_sync.c). */
Test(ptx, mbarrier_phases_copies_and_transactions)
{
    setenv("FAKECUDA_PTX_STEPS", "20000000", 1); /* a wait that never completes fails, not hangs */
    CUmodule m = load(FC_PTX);
    enum { N = 128 };
    int in[N], out[3 * N];
    unsigned info[4];
    for (int i = 0; i < N; i++)
        in[i] = i * 7 - 300;
    CUdeviceptr din = fc_upload(in, sizeof in), dout = zeros(sizeof out), dinfo = zeros(sizeof info);
    void *args[] = {&din, &dout, &dinfo};
    launch(fn(m, "mbarrier_phases"), 1, N, 0, args);
    OK(cuMemcpyDtoH(out, dout, sizeof out));
    OK(cuMemcpyDtoH(info, dinfo, sizeof info));
    for (int t = 0; t < N; t++) {
        int c = (t + 99) % N % (N / 4);
        cr_expect_eq(out[t], in[(t + 37) % N] * 3, "phase 0, thread %d", t);
        cr_expect_eq(out[N + t], in[(t + 65) % N] + (t + 65) % N, "phase 1, thread %d", t);
        cr_expect_eq(out[2 * N + t], in[4 * c] + in[4 * c + 1] + in[4 * c + 2] + in[4 * c + 3], "copy, thread %d", t);
    }
    cr_expect_eq(info[0], 1u, "pending_count of the state before the only arrival");
    cr_expect_eq(info[1], 0u, "a phase with a transaction pending is not complete");
    cr_expect_eq(info[2], 1u, "complete_tx completes it");
    cr_expect_eq(info[3], 0u, "after two phases, the current one (parity 0 again) is not complete");
}

/* Indirect calls: a virtual function through its vtable (function
   addresses in a .global initialiser) and a table of function pointers
   (ptx/ptx_call.c). The PTX must really call through a register. */
Test(ptx, indirect_calls_through_vtables_and_pointers)
{
    char *text = file_bytes(FC_PTX);
    cr_assert(strstr(text, ".callprototype"), "nvcc devirtualised every call: the test would test nothing");
    free(text);
    CUmodule m = load(FC_PTX);
    enum { N = 128 };
    int in[N], out[2 * N];
    for (int i = 0; i < N; i++)
        in[i] = i % 17 - 5;
    CUdeviceptr din = fc_upload(in, sizeof in), dout = zeros(sizeof out);
    void *args[] = {&din, &dout};
    launch(fn(m, "indirect_calls"), 1, N, 0, args);
    OK(cuMemcpyDtoH(out, dout, sizeof out));
    for (int t = 0; t < N; t++) {
        int warp = t / 32, v = in[t];
        cr_expect_eq(out[2 * t], warp & 1 ? v * v - t : v + t, "virtual call, thread %d", t);
        cr_expect_eq(out[2 * t + 1], (warp >> 1) & 1 ? -v : 2 * v, "pointer call, thread %d", t);
    }
}

/* Cooperative groups' grid sync: a cooperative launch has every block
   resident, so blocks wait for each other (ptx_sync.c's grid). */
Test(ptx, grid_sync_in_a_cooperative_launch)
{
    setenv("FAKECUDA_PTX_STEPS", "50000000", 1);
    CUmodule m = load(FC_PTX);
    enum { BLOCKS = 8, THREADS = 64, N = BLOCKS * THREADS, ROUNDS = 3 };
    int a[N], b[N], want_a[N], want_b[N];
    for (int i = 0; i < N; i++)
        want_a[i] = a[i] = i * 3 + 1;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++)
            want_b[i] = want_a[(i + THREADS + 1) % N] + r;
        for (int i = 0; i < N; i++)
            want_a[i] = want_b[i] * 2;
    }
    CUdeviceptr da = fc_upload(a, sizeof a), db = zeros(sizeof b);
    int n = N, rounds = ROUNDS;
    void *args[] = {&da, &db, &n, &rounds};
    OK(cuLaunchCooperativeKernel(fn(m, "grid_rounds"), BLOCKS, 1, 1, THREADS, 1, 1, 0, NULL, args));
    OK(cuCtxSynchronize());
    OK(cuMemcpyDtoH(a, da, sizeof a));
    OK(cuMemcpyDtoH(b, db, sizeof b));
    for (int i = 0; i < N; i++) {
        cr_expect_eq(a[i], want_a[i], "a[%d]", i);
        cr_expect_eq(b[i], want_b[i], "b[%d]", i);
    }
}

/* The same kernel launched plainly has no grid workspace: cooperative
   groups trap, as on a GPU. */
Test(ptx, grid_sync_outside_a_cooperative_launch_traps)
{
    CUmodule m = load(FC_PTX);
    CUdeviceptr da = zeros(64 * 4), db = zeros(64 * 4);
    int n = 64, rounds = 1;
    void *args[] = {&da, &db, &n, &rounds};
    OK(cuLaunchKernel(fn(m, "grid_rounds"), 2, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    cr_expect_eq(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_INSTRUCTION);
}

/* What a stream (1 or 2) receives between capture_begin and capture_end. */
typedef struct capture {
    int stream, fd, saved;
} capture;

static capture capture_begin(int stream)
{
    char path[] = "/tmp/fc_ptx_capture_XXXXXX";
    capture c = {stream, mkstemp(path), -1};
    cr_assert_geq(c.fd, 0);
    unlink(path);
    fflush(stream == 1 ? stdout : stderr);
    c.saved = dup(stream);
    dup2(c.fd, stream);
    return c;
}

static void capture_end(capture c, char *buf, size_t n)
{
    fflush(c.stream == 1 ? stdout : stderr);
    dup2(c.saved, c.stream);
    close(c.saved);
    ssize_t got = pread(c.fd, buf, n - 1, 0);
    buf[got > 0 ? got : 0] = '\0';
    close(c.fd);
}

Test(ptx, device_printf_prints_at_the_sync)
{
    CUmodule m = load(FC_PTX);
    int v = 42;
    void *args[] = {&v};
    capture c = capture_begin(1);
    launch(fn(m, "say"), 1, 32, 0, args);
    char buf[512];
    capture_end(c, buf, sizeof buf);
    cr_expect_str_eq(buf, "lane 0 says 42 21.00 hi A 1234567890\nlane 1 says 42 21.00 hi B 1234567890\n");
}

Test(ptx, assert_is_a_sticky_assert_fault)
{
    CUmodule m = load(FC_PTX);
    int v = 3;
    void *args[] = {&v};
    OK(cuLaunchKernel(fn(m, "check"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ASSERT);
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ASSERT);
}

Test(ptx, assert_that_holds_passes)
{
    CUmodule m = load(FC_PTX);
    int v = 4;
    void *args[] = {&v};
    launch(fn(m, "check"), 1, 32, 0, args);
}

Test(ptx, bad_address_is_illegal_address)
{
    CUmodule m = load(FC_PTX);
    CUdeviceptr d = zeros(64);
    CUdeviceptr past = d + (1u << 20); /* beyond every allocation */
    int v = 1;
    void *args[] = {&past, &v};
    OK(cuLaunchKernel(fn(m, "poke"), 1, 1, 1, 4, 1, 1, 0, NULL, args, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

/* A warp whose lanes run past the end of an allocation the launch already
   reached (so the executor knows its extent): the lanes inside write, the
   first lane outside faults, as lane-by-lane access would. */
Test(ptx, a_warp_running_past_an_allocation_writes_up_to_its_end)
{
    char log[] = "/tmp/fc_ptx_log_XXXXXX";
    int fd = mkstemp(log);
    cr_assert(fd >= 0);
    close(fd);
    setenv("FAKECUDA_WRITE_LOG", log, 1);
    CUmodule m = load(FC_PTX);
    CUdeviceptr d = zeros(64), tail = d + 56;
    int v = 7;
    void *inside[] = {&d, &v}, *across[] = {&tail, &v};
    launch(fn(m, "poke"), 1, 16, 0, inside); /* the 16 ints of the allocation */
    OK(cuLaunchKernel(fn(m, "poke"), 1, 1, 1, 32, 1, 1, 0, NULL, across, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    char want[256], got[256] = "";
    snprintf(want, sizeof want, "poke 0x%llx+64\npoke 0x%llx+8 fault\n", (unsigned long long)d,
             (unsigned long long)tail);
    FILE *f = fopen(log, "r");
    cr_assert(f);
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = '\0';
    fclose(f);
    unlink(log);
    cr_assert_str_eq(got, want);
}

Test(ptx, misaligned_address_is_misaligned)
{
    CUmodule m = load(FC_PTX);
    CUdeviceptr d = zeros(64) + 2;
    int v = 1;
    void *args[] = {&d, &v};
    OK(cuLaunchKernel(fn(m, "poke"), 1, 1, 1, 4, 1, 1, 0, NULL, args, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_MISALIGNED_ADDRESS);
}

Test(ptx, trap_is_an_illegal_instruction)
{
    CUmodule m = load(FC_PTX);
    int v = 1;
    void *args[] = {&v};
    OK(cuLaunchKernel(fn(m, "stop"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_INSTRUCTION);
}

/* PTX the executor lacks an instruction of: the launch fails, the line names it. */
static const char lacking[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                              ".visible .entry lacks(.param .u64 p)\n{\n"
                              "  .reg .b64 %rd<2>;\n  ld.param.u64 %rd1, [p];\n"
                              "  mapa.u64 %rd1, %rd1, 0;\n  ret;\n}\n";

Test(ptx, unknown_instruction_fails_the_launch)
{
    fc_schedule_sync(); /* the launch runs at the sync, inside the capture */
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    CUmodule m;
    OK(cuModuleLoadData(&m, lacking));
    CUdeviceptr d = zeros(4);
    void *args[] = {&d};
    OK(cuLaunchKernel(fn(m, "lacks"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    capture c = capture_begin(2);
    CUresult r = cuCtxSynchronize();
    char buf[512];
    capture_end(c, buf, sizeof buf);
    cr_expect_eq(r, CUDA_ERROR_LAUNCH_FAILED);
    cr_expect_str_eq(buf, "fakecuda: PTX kernel lacks: line 8: instruction not supported: mapa.u64 %rd1, %rd1, 0 "
                          "(unknown instruction); the launch fails\n");
}

Test(ptx, off_leaves_ptx_kernels_unknown)
{
    setenv("FAKECUDA_PTX", "off", 1);
    fc_setup();
    CUmodule m;
    OK(cuModuleLoadData(&m, file_bytes(FC_PTX)));
    CUfunction f;
    FAILS(cuModuleGetFunction(&f, m, "arith"), CUDA_ERROR_NOT_FOUND);
}

/* A function the parser cannot read fails alone: the next one still runs;
   WARP_SZ is PTX's predefined 32. */
static const char two[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry broken(.param .u64 p)\n{\n  bra nowhere;\n}\n"
                          ".visible .entry warp_size(.param .u64 p)\n{\n"
                          "  .reg .b32 %r<2>;\n  .reg .b64 %rd<2>;\n"
                          "  ld.param.u64 %rd1, [p];\n  mov.u32 %r1, WARP_SZ;\n"
                          "  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";

Test(ptx, a_broken_function_fails_alone)
{
    fc_schedule_sync();
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    CUmodule m;
    OK(cuModuleLoadData(&m, two));
    CUdeviceptr d = zeros(4);
    void *args[] = {&d};
    launch(fn(m, "warp_size"), 1, 1, 0, args);
    unsigned v;
    OK(cuMemcpyDtoH(&v, d, 4));
    cr_expect_eq(v, 32);
    capture c = capture_begin(2);
    OK(cuLaunchKernel(fn(m, "broken"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CUresult r = cuCtxSynchronize();
    char buf[512];
    capture_end(c, buf, sizeof buf);
    cr_expect_eq(r, CUDA_ERROR_LAUNCH_FAILED);
    cr_expect_str_eq(buf, "fakecuda: PTX kernel broken cannot run: line 6: unknown name 'nowhere'; the launch fails\n");
}

/* The queries the runtime makes of a PTX kernel before launching it
   (cudaOccupancyMaxPotentialBlockSize, cudaFuncSetCacheConfig). */
Test(ptx, occupancy_and_cache_config)
{
    CUmodule m = load(FC_PTX);
    CUfunction f = fn(m, "arith");
    int blocks, grid, block;
    OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 256, 0));
    cr_expect_eq(blocks, 8, "2048 threads an SM: %d blocks of 256", blocks);
    OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 32, 64 * 1024));
    cr_expect_eq(blocks, 3, "228 KiB of shared memory an SM: %d blocks of 64 KiB", blocks);
    OK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 0));
    cr_expect_eq(block, 1024);
    cr_expect_eq(grid, 16);
    OK(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1));
    FAILS(cuFuncSetCacheConfig(f, (CUfunc_cache)99), CUDA_ERROR_INVALID_VALUE);
    CUlibrary lib;
    CUkernel k;
    OK(cuLibraryLoadData(&lib, file_bytes(FC_PTX), NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&k, lib, "arith"));
    OK(cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_SHARED, 0));
    int v;
    OK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k, 0));
    cr_expect_eq(v, 1024);
}

/* A malformed access (no [address]) is refused, never read through. */
static const char malformed[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                                ".visible .entry bad_access(.param .u64 p)\n{\n"
                                "  .reg .b32 %r<2>;\n  ld.global.u32 %r1, 5;\n  ret;\n}\n";

Test(ptx, malformed_access_fails_the_launch)
{
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    CUmodule m;
    OK(cuModuleLoadData(&m, malformed));
    CUdeviceptr d = zeros(4);
    void *args[] = {&d};
    OK(cuLaunchKernel(fn(m, "bad_access"), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
}

/* cuFFT's PTX widens a bf16 to f32 as "mov.b32 %f, {0, %rs}": the
   immediate 0 is the low half. Inside "{ }" braces, as cuFFT writes it. */
static const char widen[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                            ".visible .entry widen(.param .u64 p)\n{\n"
                            "  .reg .b16 %rs<3>;\n  .reg .f32 %f<2>;\n  .reg .b32 %r<2>;\n  .reg .b64 %rd<2>;\n"
                            "  ld.param.u64 %rd1, [p];\n  ld.global.v2.u16 {%rs1, %rs2}, [%rd1];\n"
                            "  { mov.b32 %f1, {0,%rs1};}\n  st.global.f32 [%rd1+4], %f1;\n"
                            "  mov.b32 %r1, {%rs2, 0};\n  st.global.u32 [%rd1+8], %r1;\n  ret;\n}\n"
                            ".visible .entry stores_zero(.param .u64 p)\n{\n"
                            "  .reg .b32 %r<2>;\n  .reg .b64 %rd<2>;\n  ld.param.u64 %rd1, [p];\n"
                            "  mov.u32 %r1, 7;\n  st.global.v2.u32 [%rd1], {0, %r1};\n  ret;\n}\n"
                            ".visible .entry packs_one(.param .u64 p)\n{\n"
                            "  .reg .b16 %rs<2>;\n  .reg .b32 %r<2>;\n  .reg .b64 %rd<2>;\n  ld.param.u64 %rd1, [p];\n"
                            "  mov.b16 %rs1, 3;\n  mov.b32 %r1, {1, %rs1};\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";

Test(ptx, an_immediate_zero_packs_as_a_vector_element)
{
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    CUmodule m;
    OK(cuModuleLoadData(&m, widen));
    uint16_t in[6] = {0x3fc0, 0xbeef}; /* bf16 1.5, then a half for the high-zero pack */
    CUdeviceptr d = zeros(sizeof in);
    OK(cuMemcpyHtoD(d, in, sizeof in));
    void *args[] = {&d};
    launch(fn(m, "widen"), 1, 1, 0, args);
    unsigned char out[12];
    OK(cuMemcpyDtoH(out, d, sizeof out));
    float f;
    uint32_t u;
    memcpy(&f, out + 4, 4);
    memcpy(&u, out + 8, 4);
    cr_expect_eq(f, 1.5f, "bf16 0x3fc0 widened: %g", f);
    cr_expect_eq(u, 0x0000beefu, "{%%rs2, 0}: %#x", u);
}

/* Elsewhere an immediate element is refused (a store would skip it, not
   write 0), as is one other than 0: the launch fails, writing nothing. */
static void expect_refused(const char *kernel)
{
    setenv("FAKECUDA_PTX", "on", 1);
    fc_setup();
    CUmodule m;
    OK(cuModuleLoadData(&m, widen));
    CUdeviceptr d = zeros(8);
    void *args[] = {&d};
    OK(cuLaunchKernel(fn(m, kernel), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    FAILS(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
}

Test(ptx, an_immediate_vector_element_in_a_store_fails_the_launch)
{
    expect_refused("stores_zero");
}

Test(ptx, an_immediate_vector_element_other_than_0_fails_the_launch)
{
    expect_refused("packs_one");
}

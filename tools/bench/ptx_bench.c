/*
 * ptx_bench.c - the one-off cost of reading a kernel's parameter
 * directions from a large PTX text (core/ptx.h), as the shim would for a
 * kernel the first time it is launched.
 *
 *   ptx_bench [--mb N] [--kernels K] [--reps R] [--file PTX]
 *
 * Synthesizes, in memory, PTX of K kernels (default 400) whose bodies
 * fill N MB (default 40): nvcc's shapes (mul.wide, add.s64, ld.global,
 * fma, st.global, setp and a guarded branch) with fresh registers each
 * block, as nvcc numbers them, so that a kernel of 100 KB names some 3000.
 * Each kernel's directions are checked (p0 L, p1 S, p2 B, n -).  With
 * --file, the kernels of an nvcc-written PTX file instead (not checked).
 * Times, median over R reps (default 5):
 *   first  the first kernel: its body read, nothing skipped
 *   last   the last kernel: every other body skipped first
 *   absent a kernel the text does not hold: all of it skipped
 *   all    every kernel in turn: what a program launching each once pays
 * One line per case:
 *   ptx case=first bytes=B kernels=K body=b ms=T mbps=M   (body bytes per second)
 *   ptx case=last bytes=B kernels=K ms=T mbps=M           (text bytes per second)
 *   ptx case=absent bytes=B kernels=K ms=T mbps=M
 *   ptx case=all bytes=B kernels=K ms=T per_kernel_ms=t
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "ptx.h"

#define MAX_REPS 64
#define NAME_MAX_BYTES 512

typedef struct blob {
    char *p;
    size_t n, cap;
} blob;

static void put(blob *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2 + 4096;
        if (!(b->p = realloc(b->p, b->cap))) {
            fprintf(stderr, "ptx_bench: out of memory\n");
            exit(1);
        }
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void puts_(blob *b, const char *s)
{
    put(b, s, strlen(s));
}

static void putf(blob *b, const char *fmt, unsigned a, unsigned c, unsigned d)
{
    char line[256];
    int n = snprintf(line, sizeof line, fmt, a, c, d);
    put(b, line, (size_t)n);
}

/* ---- synthesized PTX ------------------------------------------------------------------ */

/* One block of body, of registers numbered from i: p0 read, p2 read and
 * written, p1 written, n compared only. */
static void put_block(blob *b, unsigned k, unsigned i)
{
    unsigned rd = 10 + 4 * i, f = 1 + 2 * i, r = 5 + i;
    putf(b, "\tmul.wide.s32 \t%%rd%u, %%r%u, 4;\n", rd, r, 0);
    putf(b, "\tadd.s64 \t%%rd%u, %%rd3, %%rd%u;\n", rd + 1, rd, 0);
    putf(b, "\tld.global.f32 \t%%f%u, [%%rd%u];\n", f, rd + 1, 0);
    putf(b, "\tadd.s64 \t%%rd%u, %%rd5, %%rd%u;\n", rd + 2, rd, 0);
    putf(b, "\tld.global.f32 \t%%f%u, [%%rd%u+4];\n", f + 1, rd + 2, 0);
    putf(b, "\tfma.rn.f32 \t%%f%u, %%f%u, %%f%u, %%f0;\n", f + 1, f, f + 1);
    putf(b, "\tst.global.f32 \t[%%rd%u], %%f%u;\n", rd + 2, f + 1, 0);
    putf(b, "\tadd.s64 \t%%rd%u, %%rd4, %%rd%u;\n", rd + 3, rd, 0);
    putf(b, "\tst.global.f32 \t[%%rd%u], %%f%u;\n", rd + 3, f + 1, 0);
    putf(b, "\tadd.s32 \t%%r%u, %%r%u, 1;\n", r + 1, r, 0);
    putf(b, "\tsetp.ge.s32 \t%%p1, %%r%u, %%r1;\n\t@%%p1 bra \t$L__BB%u_end;\n", r + 1, k, 0);
}

static void put_kernel(blob *b, unsigned k, size_t bytes)
{
    size_t start = b->n;
    putf(b, "\t// .globl\t_Z8kernel%04uPfS_S_i\n.visible .entry _Z8kernel%04uPfS_S_i(\n", k, k, 0);
    putf(b, "\t.param .u64 _Z8kernel%04uPfS_S_i_param_0,\n\t.param .u64 _Z8kernel%04uPfS_S_i_param_1,\n", k, k, 0);
    putf(b, "\t.param .u64 _Z8kernel%04uPfS_S_i_param_2,\n\t.param .u32 _Z8kernel%04uPfS_S_i_param_3\n)\n{\n", k, k, 0);
    puts_(b, "\t.reg .pred \t%p<2>;\n\t.reg .f32 \t%f<100000>;\n\t.reg .b32 \t%r<100000>;\n"
             "\t.reg .b64 \t%rd<100000>;\n\n");
    for (unsigned p = 0; p < 3; p++)
        putf(b, "\tld.param.u64 \t%%rd%u, [_Z8kernel%04uPfS_S_i_param_%u];\n", p, k, p);
    putf(b, "\tld.param.u32 \t%%r1, [_Z8kernel%04uPfS_S_i_param_3];\n", k, 0, 0);
    puts_(b, "\tcvta.to.global.u64 \t%rd3, %rd0;\n\tcvta.to.global.u64 \t%rd4, %rd1;\n"
             "\tcvta.to.global.u64 \t%rd5, %rd2;\n\tmov.u32 \t%r5, %tid.x;\n\tmov.f32 \t%f0, 0f3F800000;\n");
    for (unsigned i = 0; b->n - start < bytes; i++)
        put_block(b, k, i);
    putf(b, "$L__BB%u_end:\n\tret;\n\n}\n", k, 0, 0);
}

static blob synthesize(size_t bytes, unsigned kernels)
{
    blob b = {0};
    static const char *const head = "//\n// ptx_bench\n//\n\n.version 9.0\n.target sm_90\n.address_size 64\n\n";
    puts_(&b, head);
    for (unsigned k = 0; k < kernels; k++)
        put_kernel(&b, k, bytes / kernels);
    return b;
}

static blob read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    blob b = {0};
    char chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        put(&b, chunk, n);
    fclose(f);
    return b;
}

/* ---- the kernels' names ------------------------------------------------------------------ */

typedef struct names {
    char (*v)[NAME_MAX_BYTES];
    size_t n;
} names;

/* Every ".entry NAME" of the text (a plain scan: the bench's, not ptx.c's). */
static names entries_of(const blob *b)
{
    names out = {0};
    for (const char *p = b->p; (p = strstr(p, ".entry ")); p += 7) {
        const char *q = p + 7;
        size_t n = strspn(q, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$");
        if (n == 0 || n >= NAME_MAX_BYTES)
            continue;
        if (!(out.v = realloc(out.v, (out.n + 1) * sizeof *out.v))) {
            fprintf(stderr, "ptx_bench: out of memory\n");
            exit(1);
        }
        memcpy(out.v[out.n], q, n);
        out.v[out.n++][n] = '\0';
    }
    return out;
}

/* ---- timing ---------------------------------------------------------------------------------- */

/* Kernels [from, to) of the text, each once; exits when one is unreadable,
 * or (check) answers other than p0 L, p1 S, p2 B, n -.  Past the last
 * kernel: one the text does not hold, which must be unreadable. */
static double time_kernels(const blob *b, const names *k, size_t from, size_t to, bool check)
{
    static const uint8_t want[4] = {CT_PTX_LOADS, CT_PTX_STORES, CT_PTX_BOTH, CT_PTX_UNUSED};
    uint8_t dirs[64];
    double t0 = bench_now_ms();
    for (size_t i = from; i < to; i++) {
        const char *name = i < k->n ? k->v[i] : "absent";
        int n = ct_ptx_directions(b->p, b->n, name, dirs, sizeof dirs);
        if (i == k->n && n == -1)
            continue;
        if (n < 0 || (check && (n != 4 || memcmp(dirs, want, sizeof want) != 0))) {
            fprintf(stderr, "ptx_bench: %s read as %d parameters%s\n", name, n, n == 4 ? ", not L S B -" : "");
            exit(1);
        }
    }
    return bench_now_ms() - t0;
}

static double median(const blob *b, const names *k, size_t from, size_t to, bool check, int reps)
{
    double ms[MAX_REPS];
    for (int r = 0; r < reps; r++)
        ms[r] = time_kernels(b, k, from, to, check);
    return bench_median(ms, reps);
}

/* The first kernel's body bytes: from its .entry to the next one's (or the end). */
static size_t first_body(const blob *b, const names *k)
{
    const char *first = strstr(b->p, ".entry ");
    const char *next = k->n > 1 ? strstr(first + 1, ".entry ") : NULL;
    return (size_t)((next ? next : b->p + b->n) - first);
}

int main(int argc, char **argv)
{
    size_t mb = 40;
    unsigned kernels = 400;
    int reps = 5;
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
            mb = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc) {
            kernels = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc) {
            file = argv[++i];
        } else {
            fprintf(stderr, "usage: ptx_bench [--mb N] [--kernels K] [--reps R] [--file PTX]\n");
            return 2;
        }
    }
    if (mb < 1 || mb > 200 || kernels < 1 || kernels > 10000 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "ptx_bench: --mb 1..200, --kernels 1..10000, --reps 1..%d\n", MAX_REPS);
        return 2;
    }
    blob b = file ? read_file(file) : synthesize(mb * 1000000, kernels);
    names k = entries_of(&b);
    if (k.n == 0) {
        fprintf(stderr, "ptx_bench: no .entry in %s\n", file ? file : "the synthesized text");
        return 1;
    }
    bool check = !file;
    size_t body = first_body(&b, &k);
    double first = median(&b, &k, 0, 1, check, reps);
    double last = median(&b, &k, k.n - 1, k.n, check, reps);
    double absent = median(&b, &k, k.n, k.n + 1, check, reps);
    double all = median(&b, &k, 0, k.n, check, reps < 3 ? reps : 3);
    printf("ptx case=first bytes=%zu kernels=%zu body=%zu ms=%.3f mbps=%.0f\n", b.n, k.n, body, first,
           body / 1e6 / (first / 1e3));
    printf("ptx case=last bytes=%zu kernels=%zu ms=%.3f mbps=%.0f\n", b.n, k.n, last, b.n / 1e6 / (last / 1e3));
    printf("ptx case=absent bytes=%zu kernels=%zu ms=%.3f mbps=%.0f\n", b.n, k.n, absent, b.n / 1e6 / (absent / 1e3));
    printf("ptx case=all bytes=%zu kernels=%zu ms=%.3f per_kernel_ms=%.3f\n", b.n, k.n, all, all / k.n);
    free(k.v);
    free(b.p);
    return 0;
}

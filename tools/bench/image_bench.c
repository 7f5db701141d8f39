/*
 * image_bench.c - the one-off cost of reading a large kernel image
 * (core/image.h), as the shim reads one a program hands cuModuleLoadData.
 *
 *   image_bench [--mb N] [--reps R]
 *
 * Synthesizes, in memory, fatbins holding N MB (default 100) of content:
 *   sass      64 cubin entries of 100 kernels each, their .text sections
 *             filling the rest: only the headers and tables are read
 *   ptx       one uncompressed PTX entry of 1000 kernels whose bodies fill
 *             the rest: all of it is scanned
 *   ptx_zstd  the same PTX, zstd-compressed (level 1): inflated, then scanned
 * and reads each R times (default 5) through two fetches: memcpy, and
 * process_vm_readv on the bench's own memory (what the shim does to the
 * program's), each as a refusal reads it and as every load is read (with
 * the PTX's parameter directions, ct_image_read_directions).  One line per
 * case, fetch and read, the median over reps:
 *   image case=ptx fetch=pvr read=directions bytes=B content=C kernels=K ms=T mbps=M
 * mbps is content (N MB, 10^6 bytes each) per second of reading.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "blob.h"
#include "clock.h"
#include "image.h"

#define MAX_REPS 64

static void put_str(blob *b, const char *s)
{
    blob_put(b, s, strlen(s) + 1);
}

/* ---- synthesized images (the layouts of docs/IMAGES.md) ------------------------ */

#define KERNELS_PER_CUBIN 100

/* A cubin (ELF ABI 8, sm_90) of KERNELS_PER_CUBIN kernels, each a
 * .text.<name> of text bytes and a .nv.info.<name>. */
static void put_cubin(blob *out, size_t text)
{
    enum { N_SEC = 4 + 2 * KERNELS_PER_CUBIN };
    blob shstr = {0}, str = {0}, sym = {0};
    uint32_t name[N_SEC] = {0}, type[N_SEC] = {0}, link[N_SEC] = {0}, info[N_SEC] = {0};
    uint64_t size[N_SEC] = {0}, off[N_SEC] = {0};
    char kernel[64], section[80];
    put_str(&shstr, "");
    put_str(&str, "");
    blob_put_zero(&sym, 24);
    name[1] = (uint32_t)shstr.n, type[1] = 3, put_str(&shstr, ".shstrtab");
    name[2] = (uint32_t)shstr.n, type[2] = 3, put_str(&shstr, ".strtab");
    name[3] = (uint32_t)shstr.n, type[3] = 2, link[3] = 2, put_str(&shstr, ".symtab");
    for (unsigned k = 0; k < KERNELS_PER_CUBIN; k++) {
        unsigned t = 4 + 2 * k;
        snprintf(kernel, sizeof kernel, "_Z8kernel%03uPf", k);
        snprintf(section, sizeof section, ".text.%s", kernel);
        name[t] = (uint32_t)shstr.n, type[t] = 1, size[t] = text / KERNELS_PER_CUBIN;
        put_str(&shstr, section);
        snprintf(section, sizeof section, ".nv.info.%s", kernel);
        name[t + 1] = (uint32_t)shstr.n, type[t + 1] = 0x70000000, link[t + 1] = 3, info[t + 1] = t;
        size[t + 1] = 4;
        put_str(&shstr, section);
        blob_put_le(&sym, str.n, 4);
        blob_put_le(&sym, 0x12, 1);
        blob_put_le(&sym, 0x10, 1);
        blob_put_le(&sym, t, 2);
        blob_put_le(&sym, 0, 8);
        blob_put_le(&sym, size[t], 8);
        put_str(&str, kernel);
    }
    size[1] = shstr.n, size[2] = str.n, size[3] = sym.n;
    size_t at = 64;
    for (unsigned i = 1; i < N_SEC; i++) {
        off[i] = at;
        at += (size[i] + 7) / 8 * 8;
    }
    size_t start = out->n;
    blob_put_le(out, 0x464c457f, 4);
    blob_put_le(out, 0x41010102, 4);
    blob_put_le(out, 8, 8);
    blob_put_le(out, 2, 2);   /* ET_EXEC */
    blob_put_le(out, 190, 2); /* EM_CUDA */
    blob_put_le(out, 1, 4);
    blob_put_le(out, 0, 8);
    blob_put_le(out, 0, 8);           /* e_phoff */
    blob_put_le(out, at, 8);          /* e_shoff */
    blob_put_le(out, 0x06005a02u, 4); /* sm_90 */
    blob_put_le(out, 64, 2);
    blob_put_le(out, 56, 2);
    blob_put_le(out, 0, 2);
    blob_put_le(out, 64, 2);
    blob_put_le(out, N_SEC, 2);
    blob_put_le(out, 1, 2);
    const blob *tables[4] = {NULL, &shstr, &str, &sym};
    for (unsigned i = 1; i < N_SEC; i++) {
        blob_put_zero(out, start + off[i] - out->n);
        if (i < 4)
            blob_put(out, tables[i]->p, tables[i]->n);
        else
            blob_put_zero(out, size[i]);
    }
    blob_put_zero(out, start + at - out->n);
    for (unsigned i = 0; i < N_SEC; i++) {
        blob_put_le(out, name[i], 4);
        blob_put_le(out, type[i], 4);
        blob_put_le(out, 0, 8); /* sh_flags */
        blob_put_le(out, 0, 8); /* sh_addr */
        blob_put_le(out, off[i], 8);
        blob_put_le(out, size[i], 8);
        blob_put_le(out, link[i], 4);
        blob_put_le(out, info[i], 4);
        blob_put_le(out, 1, 8);
        blob_put_le(out, i == 3 ? 24 : 0, 8);
    }
    free(shstr.p);
    free(str.p);
    free(sym.p);
}

/* 1000 kernels of PTX whose bodies fill bytes, NUL-terminated. */
static blob ptx_text(size_t bytes)
{
    blob t = {0};
    static const char head[] = ".version 9.0\n.target sm_90\n.address_size 64\n\n";
    static const char line[] = "\tfma.rn.f32 \t%f3, %f1, %f2, %f3; // accumulate\n";
    blob_put(&t, head, sizeof head - 1);
    size_t per = (bytes - sizeof head) / 1000;
    char entry[128];
    for (unsigned k = 0; k < 1000; k++) {
        int n = snprintf(entry, sizeof entry, ".visible .entry _Z8kernel%04uPf(\n\t.param .u64 p\n)\n{\n", k);
        blob_put(&t, entry, (size_t)n);
        for (size_t body = (size_t)n + 2; body + sizeof line - 1 <= per; body += sizeof line - 1)
            blob_put(&t, line, sizeof line - 1);
        blob_put(&t, "}\n", 2);
    }
    blob_put(&t, "", 1);
    return t;
}

/* An entry header: kind, version, header size, payload size, compressed
 * size, arch, flags, inflated size. */
static void put_entry(blob *out, unsigned kind, const blob *payload, uint64_t flags, uint64_t inflated)
{
    size_t padded = (payload->n + 7) / 8 * 8;
    blob_put_le(out, kind, 2);
    blob_put_le(out, 0x0101, 2);
    blob_put_le(out, 64, 4);
    blob_put_le(out, padded, 8);
    blob_put_le(out, flags & 0x8000 ? payload->n : 0, 4);
    blob_put_le(out, 0, 4);
    blob_put_le(out, 0, 4);
    blob_put_le(out, 90, 4);
    blob_put_le(out, 0, 8);
    blob_put_le(out, 0x11 | flags, 8);
    blob_put_le(out, 0, 8);
    blob_put_le(out, inflated, 8);
    blob_put(out, payload->p, payload->n);
    blob_put_zero(out, padded - payload->n);
}

static blob container(const blob *entries)
{
    blob f = {0};
    blob_put_le(&f, 0xba55ed50u, 4);
    blob_put_le(&f, 1, 2);
    blob_put_le(&f, 16, 2);
    blob_put_le(&f, entries->n, 8);
    blob_put(&f, entries->p, entries->n);
    return f;
}

static blob sass_fatbin(size_t content)
{
    blob entries = {0};
    for (unsigned i = 0; i < CT_IMAGE_MAX_ENTRIES; i++) {
        blob cubin = {0};
        put_cubin(&cubin, content / CT_IMAGE_MAX_ENTRIES);
        put_entry(&entries, 2, &cubin, 0, 0);
        free(cubin.p);
    }
    blob f = container(&entries);
    free(entries.p);
    return f;
}

static blob ptx_fatbin(const blob *text, bool zstd)
{
    blob payload = *text, entries = {0};
    if (zstd) {
        payload = (blob){malloc(ZSTD_compressBound(text->n)), 0, 0};
        payload.n = payload.p ? ZSTD_compress(payload.p, ZSTD_compressBound(text->n), text->p, text->n, 1) : 0;
        if (!payload.p || ZSTD_isError(payload.n)) {
            fprintf(stderr, "image_bench: zstd failed\n");
            exit(1);
        }
    }
    put_entry(&entries, 1, &payload, zstd ? 0x8000 : 0, zstd ? text->n : 0);
    if (zstd)
        free(payload.p);
    blob f = container(&entries);
    free(entries.p);
    return f;
}

/* ---- reading ---------------------------------------------------------------- */

/* The bench's own memory through the kernel, as the shim reads the program's. */
static bool fetch_pvr(void *ctx, uint64_t off, void *dst, size_t len)
{
    const ct_image_bytes *b = ctx;
    if (off > b->n || len > b->n - off)
        return false;
    struct iovec local = {dst, len}, remote = {(void *)(uintptr_t)(b->p + off), len};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static void run(const char *name, blob *image, size_t content, int reps)
{
    static const struct {
        const char *name;
        ct_image_fetch fetch;
    } fetches[] = {
        {"memcpy", ct_image_fetch_bytes},
        {"pvr", fetch_pvr},
    };
    ct_image_bytes bytes = {image->p, image->n};
    for (size_t k = 0; k < 2 * sizeof fetches / sizeof *fetches; k++) {
        size_t f = k / 2;
        bool directions = k % 2;
        double ms[MAX_REPS];
        size_t kernels = 0;
        for (int r = 0; r < reps; r++) {
            ct_image img;
            double t0 = bench_now_ms();
            ct_image_status st = directions ? ct_image_read_directions(&img, fetches[f].fetch, &bytes, 0, NULL)
                                            : ct_image_read(&img, fetches[f].fetch, &bytes, 0);
            ms[r] = bench_now_ms() - t0;
            kernels = img.kernels_total;
            ct_image_free(&img);
            if (st != CT_IMAGE_OK) {
                fprintf(stderr, "image_bench: %s read as %d\n", name, st);
                exit(1);
            }
        }
        double median = bench_median(ms, reps);
        printf("image case=%s fetch=%s read=%s bytes=%zu content=%zu kernels=%zu ms=%.3f mbps=%.0f\n", name,
               fetches[f].name, directions ? "directions" : "plain", image->n, content, kernels, median,
               content / 1e6 / (median / 1e3));
    }
}

int main(int argc, char **argv)
{
    size_t mb = 100;
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
            mb = strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: image_bench [--mb N] [--reps R]\n");
            return 2;
        }
    }
    if (mb < 1 || mb > 200 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "image_bench: --mb 1..200, --reps 1..%d\n", MAX_REPS);
        return 2;
    }
    size_t content = mb * 1000000;
    blob sass = sass_fatbin(content);
    run("sass", &sass, content, reps);
    free(sass.p);
    blob text = ptx_text(content);
    blob plain = ptx_fatbin(&text, false), packed = ptx_fatbin(&text, true);
    free(text.p);
    run("ptx", &plain, content, reps);
    run("ptx_zstd", &packed, content, reps);
    free(plain.p);
    free(packed.p);
    return 0;
}

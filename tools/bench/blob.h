/*
 * blob.h - a growable byte buffer and little-endian integers written into
 * it: what the benches that synthesize kernel images build them with
 * (image_bench.c's cubins and fatbins, bench.c's first_use image).
 *
 * Invariants: a blob holds n bytes of its cap; a put appends and never
 * shrinks it; running out of memory ends the bench with one line on
 * stderr (a bench has nothing to fall back on, and is never measured
 * while it builds an image).
 */
#ifndef CT_BENCH_BLOB_H
#define CT_BENCH_BLOB_H

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct blob {
    uint8_t *p;
    size_t n, cap;
} blob;

/* Appends the n bytes at p. */
static inline void blob_put(blob *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 4096;
        if (!(b->p = realloc(b->p, b->cap))) {
            fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
            exit(1);
        }
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    assert(b->n <= b->cap && "a blob holds n bytes of its cap");
}

/* Appends v's low `bytes` bytes (at most 8), least significant first. */
static inline void blob_put_le(blob *b, uint64_t v, unsigned bytes)
{
    assert(bytes <= 8 && "an integer is at most 8 bytes");
    uint8_t le[8];
    for (unsigned i = 0; i < bytes; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    blob_put(b, le, bytes);
}

/* Appends n zero bytes. */
static inline void blob_put_zero(blob *b, size_t n)
{
    static const uint8_t zero[4096];
    for (; n > sizeof zero; n -= sizeof zero)
        blob_put(b, zero, sizeof zero);
    blob_put(b, zero, n);
}

#endif

/*
 * util.c - allocation helpers for the cutaint command (see util.h).
 * Invariant: none of these returns NULL.
 */
#include "util.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(void)
{
    fputs("cutaint: out of memory\n", stderr);
    exit(2);
}

void *ct_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *ct_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory();
    return p;
}

char *ct_xstrndup(const char *s, size_t n)
{
    if (n == SIZE_MAX)
        out_of_memory();
    char *copy = ct_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++)
        copy[i] = s[i] ? s[i] : '?';
    copy[n] = '\0';
    assert(strlen(copy) == n && "a NUL inside the data became '?'");
    return copy;
}

char *ct_xstrdup(const char *s)
{
    return ct_xstrndup(s, strlen(s));
}

void ct_grow(void **array, size_t *n, size_t *cap, size_t elem)
{
    assert(elem > 0 && *n <= *cap && "an array never holds more than its room");
    if (*n < *cap)
        return;
    size_t want = *cap ? *cap * 2 : 4;
    if (want > SIZE_MAX / elem)
        out_of_memory();
    void *grown = realloc(*array, want * elem);
    if (!grown)
        out_of_memory();
    *array = grown;
    *cap = want;
    assert(*n < *cap && "there is room for one more");
}

const char *ct_plural(unsigned long long count)
{
    return count == 1 ? "" : "s";
}

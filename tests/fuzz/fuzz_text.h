/*
 * fuzz_text.h - the fuzzers' input as the parsers take it: a NUL-terminated
 * copy of the bytes (which may hold NULs of their own), on the heap so that
 * AddressSanitizer sees every read past its end.  Free it with free().
 */
#ifndef FUZZ_TEXT_H
#define FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

#endif

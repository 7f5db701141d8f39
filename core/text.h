/*
 * text.h - private to core: (pointer, length) views of a caller's text, the
 * one set of helpers core's parsers (config.c, signature.c) and fixed-size
 * copies (latch.c, signature.c) share.
 *
 * Invariants:
 * - A view never owns its bytes and is never read past p + n, so a parser
 *   built on these is bounded by its input's length.
 * - A cut copy is always NUL-terminated and never cuts a UTF-8 character
 *   in two: well-formed text stays well-formed.  (Text that was already
 *   broken may stay broken: a lead byte its input left without its
 *   continuation bytes can still end the copy.)
 */
#ifndef CT_TEXT_H
#define CT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct ct_text {
    const char *p;
    size_t n;
} ct_text;

/* A C string as a view (NULL: the empty view). */
static inline ct_text ct_text_of(const char *s)
{
    return (ct_text){s, s ? strlen(s) : 0};
}

static inline bool ct_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* s without the white space at either end. */
static inline ct_text ct_text_trim(ct_text s)
{
    while (s.n && ct_is_space(s.p[0])) {
        s.p++;
        s.n--;
    }
    while (s.n && ct_is_space(s.p[s.n - 1]))
        s.n--;
    return s;
}

/* Where to cut text[0..len) so that no partial UTF-8 sequence is left at
 * its end: len itself, or the start of the character the cut broke. */
static inline size_t ct_utf8_boundary(const char *text, size_t len)
{
    size_t start = len;
    while (start > 0 && ((unsigned char)text[start - 1] & 0xC0) == 0x80)
        start--;
    if (start == 0 || ((unsigned char)text[start - 1] & 0x80) == 0)
        return len; /* ends in ASCII (or only continuation bytes: leave) */
    unsigned char lead = (unsigned char)text[start - 1];
    size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    return len - (start - 1) >= want ? len : start - 1;
}

/* Copy as much of s as fits in a NUL-terminated field of cap (> 0) bytes,
 * cut at a character boundary. */
static inline void ct_text_copy_cut(char *dst, size_t cap, ct_text s)
{
    size_t n = s.n < cap - 1 ? s.n : cap - 1;
    n = ct_utf8_boundary(s.p, n);
    if (n)
        memcpy(dst, s.p, n);
    dst[n] = '\0';
}

#endif

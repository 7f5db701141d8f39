/*
 * text.h - private to core: (pointer, length) views of a caller's text, the
 * one set of helpers core's parsers (config.c, signature.c), fixed-size
 * copies (latch.c, signature.c) and escapers (jsonl.c, diag.c) share.
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

#include <assert.h>
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

/* Length of the valid UTF-8 character starting at s (NUL-terminated), 0
 * if invalid: no overlong form, no surrogate, nothing past U+10FFFF. */
static inline size_t ct_utf8_sequence(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the 2nd byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80; /* no overlong forms */
        hi = c == 0xED ? 0x9F : 0xBF; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0; /* also stops at the NUL terminator */
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
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
    size_t cut = len - (start - 1) >= want ? len : start - 1;
    assert(cut <= len && "a cut never reads past the text it was given");
    return cut;
}

/* Copy as much of s as fits in a NUL-terminated field of cap (> 0) bytes,
 * cut at a character boundary. */
static inline void ct_text_copy_cut(char *dst, size_t cap, ct_text s)
{
    size_t n = s.n < cap - 1 ? s.n : cap - 1;
    n = ct_utf8_boundary(s.p, n);
    assert(cap > 0 && n < cap && "a cut copy leaves room for its NUL");
    if (n)
        memcpy(dst, s.p, n);
    dst[n] = '\0';
}

#endif

/*
 * diag.c - escaping outside text for diagnostics (diag.h says the form).
 *
 * Owns: which characters a diagnostic shows as they are.  UTF-8 validity
 * is text.h's (the JSON writer's own rule).
 */
#include "diag.h"

#include "text.h"

#include <assert.h>
#include <stdbool.h>
#include <string.h>

/* Is the valid n-byte character at c one a diagnostic escapes? */
static bool hidden(const unsigned char *c, size_t n)
{
    if (n == 1)
        return c[0] < 0x20 || c[0] == 0x7f;
    if (n == 2)
        return c[0] == 0xC2 && c[1] < 0xA0; /* C1: 0x9b is a CSI to a terminal */
    if (n == 3 && c[0] == 0xE2)
        return (c[1] == 0x80 && c[2] >= 0xA8 && c[2] <= 0xAE) || (c[1] == 0x81 && c[2] >= 0xA6 && c[2] <= 0xA9);
    return false;
}

/* The escape of one byte into e (<= 4 bytes): its length. */
static size_t escape_byte(unsigned char b, char e[4])
{
    static const char hex[] = "0123456789abcdef";
    static const char shorts[] = {['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't', ['\\'] = '\\'};
    e[0] = '\\';
    if (b < sizeof shorts && shorts[b]) {
        e[1] = shorts[b];
        return 2;
    }
    e[1] = 'x';
    e[2] = hex[b >> 4];
    e[3] = hex[b & 0xf];
    return 4;
}

size_t ct_diag_escape(const char *text, char *out, size_t cap)
{
    assert(out && cap > 0 && "room for the NUL at least");
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    size_t len = 0;
    while (*s) {
        size_t n = ct_utf8_sequence(s);
        char piece[4 * 4];
        size_t plen = 0;
        if (n == 0 || hidden(s, n) || *s == '\\') {
            for (size_t i = 0; i < (n ? n : 1); i++)
                plen += escape_byte(s[i], piece + plen);
        } else {
            memcpy(piece, s, n);
            plen = n;
        }
        if (plen >= cap - len)
            break; /* whole or not at all, and room for the NUL */
        memcpy(out + len, piece, plen);
        len += plen;
        s += n ? n : 1;
    }
    out[len] = '\0';
    return len;
}

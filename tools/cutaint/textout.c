/*
 * textout.c - sanitised output of report text (see textout.h).
 *
 * Owns: UTF-8 validation.  One decoder walks the text; each output form
 * decides what to print for a valid character and for a bad byte.
 */
#include "textout.h"

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Decodes one UTF-8 sequence at s; returns its length, or 0 for an invalid
 * byte (overlong forms, surrogates and values past U+10FFFF are invalid). */
static size_t decode(const unsigned char *s, uint32_t *cp)
{
    static const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t len = s[0] < 0x80             ? 1
                 : (s[0] & 0xe0) == 0xc0 ? 2
                 : (s[0] & 0xf0) == 0xe0 ? 3
                 : (s[0] & 0xf8) == 0xf0 ? 4
                                         : 0;
    if (len <= 1) {
        *cp = s[0];
        return len;
    }
    uint32_t value = s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        value = value << 6 | (s[i] & 0x3f);
    }
    if (value < min_for_len[len] || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff))
        return 0;
    *cp = value;
    return len;
}

static bool is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

/* Writes s with control characters and bad bytes as '?'; quote_dot adds
 * the escapes a DOT string needs. */
static void put_visible(FILE *out, const char *s, bool quote_dot)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t written = 0;
    while (*p) {
        if (written >= CT_TEXT_MAX) {
            fputs("...", out);
            return;
        }
        uint32_t cp;
        size_t len = decode(p, &cp);
        if (len == 0 || is_control(cp)) {
            fputc('?', out);
            p += len ? len : 1;
            written++;
            continue;
        }
        assert(len >= 1 && len <= 4 && !is_control(cp) && "only whole, visible characters are written");
        if (quote_dot && (cp == '"' || cp == '\\'))
            fputc('\\', out);
        fwrite(p, 1, len, out);
        p += len;
        written += len;
    }
}

void ct_put_text(FILE *out, const char *s, const char *absent)
{
    put_visible(out, s ? s : absent, false);
}

void ct_put_dot(FILE *out, const char *s)
{
    put_visible(out, s ? s : "", true);
}

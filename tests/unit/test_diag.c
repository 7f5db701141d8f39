/*
 * test_diag.c - escaping outside text for diagnostics: core/diag.h.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "diag.h"

static const char *escaped(const char *text)
{
    static char out[256];
    size_t n = ct_diag_escape(text, out, sizeof out);
    cr_assert_eq(n, strlen(out), "the length is what was written");
    return out;
}

Test(diag, a_newline_cannot_forge_a_line)
{
    cr_assert_str_eq(escaped("/tmp/a\n==1== cutaint: forged"), "/tmp/a\\n==1== cutaint: forged");
    cr_assert_str_eq(escaped("a\rb\tc"), "a\\rb\\tc");
}

Test(diag, escape_bytes_and_controls_cannot_drive_a_terminal)
{
    cr_assert_str_eq(escaped("\x1b[31mred\x1b]0;title\x07"), "\\x1b[31mred\\x1b]0;title\\x07");
    cr_assert_str_eq(escaped("del\x7f nul-free \x01"), "del\\x7f nul-free \\x01");
    /* U+009B, a CSI to a terminal, in UTF-8 */
    cr_assert_str_eq(escaped("c1 \xc2\x9b"
                             "31m"),
                     "c1 \\xc2\\x9b31m");
}

Test(diag, line_separators_and_bidirectional_overrides_are_escaped)
{
    cr_assert_str_eq(escaped("a\xe2\x80\xa8"
                             "b"),
                     "a\\xe2\\x80\\xa8b"); /* U+2028 */
    cr_assert_str_eq(escaped("txt.\xe2\x80\xae"
                             "exe"),
                     "txt.\\xe2\\x80\\xaeexe");                     /* U+202E */
    cr_assert_str_eq(escaped("\xe2\x81\xa6x"), "\\xe2\\x81\\xa6x"); /* U+2066 */
}

Test(diag, invalid_utf8_bytes_are_escaped_one_by_one)
{
    cr_assert_str_eq(escaped("bad \xff\xfe end"), "bad \\xff\\xfe end");
    cr_assert_str_eq(escaped("overlong \xc0\xaf"), "overlong \\xc0\\xaf");
    cr_assert_str_eq(escaped("surrogate \xed\xa0\x80"), "surrogate \\xed\\xa0\\x80");
    cr_assert_str_eq(escaped("cut \xe2\x82"), "cut \\xe2\\x82");
}

Test(diag, printable_text_is_kept_and_a_backslash_is_doubled)
{
    cr_assert_str_eq(escaped("/data/r\xc3\xa9sultats/\xe6\x97\xa5\xe6\x9c\xac %p \xf0\x9f\x99\x82"),
                     "/data/r\xc3\xa9sultats/\xe6\x97\xa5\xe6\x9c\xac %p \xf0\x9f\x99\x82");
    cr_assert_str_eq(escaped("C:\\x1b"), "C:\\\\x1b", "a literal \\x1b stays distinguishable from ESC");
    cr_assert_str_eq(escaped(NULL), "");
}

Test(diag, a_cut_never_splits_an_escape_or_a_character)
{
    char out[8];
    cr_assert_eq(ct_diag_escape("ab\x1b", out, sizeof out), 6);
    cr_assert_str_eq(out, "ab\\x1b");
    cr_assert_eq(ct_diag_escape("abcd\x1b", out, sizeof out), 4, "\\x1b does not fit whole after abcd");
    cr_assert_str_eq(out, "abcd");
    cr_assert_eq(ct_diag_escape("abcde\xc3\xa9", out, sizeof out), 7);
    cr_assert_eq(ct_diag_escape("abcdef\xc3\xa9", out, sizeof out), 6, "no half character");
    char one[1];
    cr_assert_eq(ct_diag_escape("x", one, sizeof one), 0);
    cr_assert_eq(one[0], '\0');
}

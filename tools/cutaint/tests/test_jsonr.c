/*
 * test_jsonr.c - the JSON line reader: what it accepts, what it refuses,
 * and that hostile input (deep nesting, bad escapes, random bytes) is
 * refused without crashing.
 */
#include "jsonr.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static jsonr_doc doc;

static void teardown(void)
{
    jsonr_free(&doc);
}

TestSuite(jsonr, .fini = teardown);

/* Parses a copy (the parser decodes in place). */
static bool parse(const char *text)
{
    static char buf[4096];
    size_t n = strlen(text);
    cr_assert_lt(n, sizeof buf);
    memcpy(buf, text, n + 1);
    return jsonr_parse(&doc, buf, n, NULL);
}

Test(jsonr, reads_an_event)
{
    cr_assert(parse("{\"event\":\"skip\",\"pid\":42,\"t\":1.5,\"ok\":true,\"k\":null,\"a\":[1,-2,3]}"));
    const jv *root = jsonr_root(&doc);
    cr_assert_eq(root->type, JV_OBJECT);
    cr_assert_eq(root->count, 6);
    const jv *pid = jsonr_get(&doc, root, "pid");
    cr_assert(pid->is_int);
    cr_assert_eq(pid->i, 42);
    const jv *t = jsonr_get(&doc, root, "t");
    cr_assert_not(t->is_int);
    cr_assert_float_eq(t->num, 1.5, 1e-12);
    const jv *a = jsonr_get(&doc, root, "a");
    cr_assert_eq(a->count, 3);
    cr_assert_eq(jsonr_next(&doc, jsonr_first(&doc, a))->i, -2);
    cr_assert_null(jsonr_get(&doc, root, "missing"));
}

Test(jsonr, decodes_escapes_in_place)
{
    cr_assert(parse("\"a\\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00\\u0000z\""));
    const jv *s = jsonr_root(&doc);
    const char want[] = "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80\0z";
    cr_assert_eq(s->len, sizeof want - 1);
    cr_assert_eq(memcmp(s->str, want, s->len), 0);
}

Test(jsonr, integers_that_do_not_fit_are_doubles)
{
    cr_assert(parse("[9223372036854775807,-9223372036854775808,9223372036854775808]"));
    const jv *a = jsonr_first(&doc, jsonr_root(&doc));
    cr_assert(a->is_int);
    cr_assert_eq(a->i, INT64_MAX);
    a = jsonr_next(&doc, a);
    cr_assert(a->is_int);
    cr_assert_eq(a->i, INT64_MIN);
    a = jsonr_next(&doc, a);
    cr_assert_not(a->is_int);
}

Test(jsonr, refuses_what_is_not_json)
{
    static const char *const bad[] = {
        "",
        "{",
        "{\"a\":1",
        "{\"a\" 1}",
        "{\"a\":1,}",
        "[1,]",
        "[01]",
        "[1.]",
        "[.5]",
        "[1e]",
        "[-]",
        "tru",
        "nul",
        "{\"a\":1} x",
        "\"unterminated",
        "\"bad \\x escape\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\\u12\"",
        "\"tab\there\"",
        "[0x10]",
        "[NaN]",
        "[Infinity]",
        "{1:2}",
        "'single'",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_not(parse(bad[i]), "accepted: %s", bad[i]);
}

Test(jsonr, bounds_nesting)
{
    char text[200];
    size_t depth = JSONR_DEPTH_MAX;
    memset(text, '[', depth);
    memset(text + depth, ']', depth);
    text[2 * depth] = '\0';
    cr_assert(parse(text), "depth %zu is allowed", depth);
    memset(text, '[', depth + 1);
    memset(text + depth + 1, ']', depth + 1);
    text[2 * depth + 2] = '\0';
    cr_assert_not(parse(text));
}

Test(jsonr, nul_bytes_are_data_not_ends)
{
    char text[] = "[1]\0garbage";
    cr_assert_not(jsonr_parse(&doc, text, sizeof text - 1, NULL));
}

/* Random and mutated lines: any answer is fine, a crash is not. */
Test(jsonr, survives_random_bytes)
{
    static const char seed[] = "{\"event\":\"failure\",\"pid\":1,\"a\":[1,2.5e3,\"\\u00e9\",{\"b\":null}]}";
    char buf[sizeof seed];
    srand(1234);
    for (int round = 0; round < 20000; round++) {
        memcpy(buf, seed, sizeof seed);
        size_t n = (size_t)rand() % sizeof seed;
        for (int k = rand() % 4; k >= 0; k--)
            buf[(size_t)rand() % (sizeof seed - 1)] = (char)(rand() % 256);
        jsonr_parse(&doc, buf, n, NULL);
    }
}

/*
 * test_jsonl.c - report lines (core/jsonl.h): exact output, escaping, and
 * validity whatever the buffer size.  A small strict JSON checker below
 * validates lines (no Python needed).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "jsonl.h"

/* ---- a strict checker for one JSON value ------------------------------ */

static bool value(const char **p);

static void skip_ws(const char **p)
{
    while (**p == ' ')
        (*p)++;
}

static bool utf8_char(const char **p)
{
    const unsigned char *s = (const unsigned char *)*p;
    size_t n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (n == 0 || s[0] >= 0xF5)
        return false;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return false;
    *p += n;
    return true;
}

static bool string(const char **p)
{
    if (**p != '"')
        return false;
    (*p)++;
    while (**p != '"') {
        unsigned char c = (unsigned char)**p;
        if (c < 0x20)
            return false;
        if (c == '\\') {
            (*p)++;
            if (**p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", (*p)[i]) || !(*p)[i])
                        return false;
                *p += 5;
            } else if (**p && strchr("\"\\/bfnrt", **p)) {
                (*p)++;
            } else
                return false;
        } else if (c >= 0x80) {
            if (!utf8_char(p))
                return false;
        } else
            (*p)++;
    }
    (*p)++;
    return true;
}

static bool number(const char **p)
{
    const char *start = *p;
    if (**p == '-')
        (*p)++;
    while (**p >= '0' && **p <= '9')
        (*p)++;
    if (**p == '.') {
        (*p)++;
        while (**p >= '0' && **p <= '9')
            (*p)++;
    }
    return *p > start && (*p)[-1] != '-' && (*p)[-1] != '.';
}

static bool container(const char **p, char open, char close, bool keyed)
{
    if (**p != open)
        return false;
    (*p)++;
    skip_ws(p);
    if (**p == close) {
        (*p)++;
        return true;
    }
    for (;;) {
        skip_ws(p);
        if (keyed && !(string(p) && *(*p)++ == ':'))
            return false;
        if (!value(p))
            return false;
        skip_ws(p);
        if (**p == close) {
            (*p)++;
            return true;
        }
        if (*(*p)++ != ',')
            return false;
    }
}

static bool literal(const char **p, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(*p, word, n) != 0)
        return false;
    *p += n;
    return true;
}

static bool value(const char **p)
{
    skip_ws(p);
    switch (**p) {
    case '{': return container(p, '{', '}', true);
    case '[': return container(p, '[', ']', false);
    case '"': return string(p);
    case 't': return literal(p, "true");
    case 'f': return literal(p, "false");
    case 'n': return literal(p, "null");
    default: return number(p);
    }
}

/* A whole report line: one object, then "\n", then the end. */
static bool valid_line(const char *line)
{
    const char *p = line;
    return *p == '{' && value(&p) && p[0] == '\n' && p[1] == '\0';
}

/* ---- exact output ----------------------------------------------------- */

static char buf[4096];

Test(jsonl, envelope)
{
    ct_jsonl j;
    ct_jsonl_begin(&j, buf, sizeof buf, "start", 1500000000, 42);
    size_t n = ct_jsonl_end(&j);
    cr_assert_str_eq(buf, "{\"event\":\"start\",\"time\":1.500000,\"pid\":42}\n");
    cr_assert_eq(n, strlen(buf));
    cr_assert_not(j.full);
}

Test(jsonl, time_has_six_decimals)
{
    static const struct {
        int64_t ns;
        const char *text;
    } cases[] = {
        {0, "0.000000"},
        {999, "0.000000"},
        {1000, "0.000001"},
        {1234567890123, "1234.567890"},
        {-1500000, "-0.001500"},
        {INT64_MAX, "9223372036.854775"},
        {INT64_MIN, "-9223372036.854775"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ct_jsonl j;
        ct_jsonl_begin(&j, buf, sizeof buf, "e", cases[i].ns, 1);
        ct_jsonl_end(&j);
        char want[128];
        snprintf(want, sizeof want, "{\"event\":\"e\",\"time\":%s,\"pid\":1}\n", cases[i].text);
        cr_assert_str_eq(buf, want);
    }
}

Test(jsonl, every_kind_of_member_and_nesting)
{
    ct_jsonl j;
    ct_jsonl_begin(&j, buf, sizeof buf, "failure", 0, 7);
    ct_jsonl_str(&j, "kernel", "saxpy");
    ct_jsonl_str(&j, "none", NULL);
    ct_jsonl_int(&j, "neg", -5);
    ct_jsonl_uint(&j, "big", UINT64_MAX);
    ct_jsonl_bool(&j, "t", true);
    ct_jsonl_bool(&j, "f", false);
    ct_jsonl_hex(&j, "addr", 0x7f001f00);
    ct_jsonl_open_array(&j, "ids");
    ct_jsonl_uint(&j, NULL, 1);
    ct_jsonl_str(&j, "ignored-key", "two");
    ct_jsonl_open_object(&j, NULL);
    ct_jsonl_int(&j, "k", 3);
    ct_jsonl_close(&j);
    ct_jsonl_open_array(&j, NULL);
    ct_jsonl_close(&j);
    ct_jsonl_close(&j);
    ct_jsonl_open_object(&j, "grid");
    ct_jsonl_uint(&j, "x", 1);
    /* left open: ct_jsonl_end closes it */
    ct_jsonl_end(&j);
    cr_assert_str_eq(buf, "{\"event\":\"failure\",\"time\":0.000000,\"pid\":7,\"kernel\":\"saxpy\","
                          "\"none\":null,\"neg\":-5,\"big\":18446744073709551615,\"t\":true,"
                          "\"f\":false,\"addr\":\"0x7f001f00\",\"ids\":[1,\"two\",{\"k\":3},[]],"
                          "\"grid\":{\"x\":1}}\n");
    cr_assert(valid_line(buf));
}

Test(jsonl, object_member_without_key_is_dropped)
{
    ct_jsonl j;
    ct_jsonl_begin(&j, buf, sizeof buf, "e", 0, 1);
    ct_jsonl_int(&j, NULL, 5);
    ct_jsonl_end(&j);
    cr_assert_str_eq(buf, "{\"event\":\"e\",\"time\":0.000000,\"pid\":1}\n");
}

Test(jsonl, escaping)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"a\"b\\c", "a\\\"b\\\\c"},
        {"\n\t\r\b\f", "\\n\\t\\r\\b\\f"},
        {"\x01\x1f\x7f", "\\u0001\\u001f\\u007f"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"\xff", "\\ufffd"},
        {"\xc0\xaf", "\\ufffd\\ufffd"},                       /* overlong */
        {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},            /* surrogate */
        {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"}, /* > U+10FFFF */
        {"x\xe2\x82", "x\\ufffd\\ufffd"},                     /* cut sequence at the end */
        {"\x80z", "\\ufffdz"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ct_jsonl j;
        ct_jsonl_begin(&j, buf, sizeof buf, "e", 0, 1);
        ct_jsonl_str(&j, "v", cases[i].in);
        ct_jsonl_end(&j);
        char want[256];
        snprintf(want, sizeof want, "{\"event\":\"e\",\"time\":0.000000,\"pid\":1,\"v\":\"%s\"}\n", cases[i].out);
        cr_assert_str_eq(buf, want, "case %zu", i);
        cr_assert(valid_line(buf), "case %zu", i);
    }
}

Test(jsonl, keys_are_escaped_too)
{
    ct_jsonl j;
    ct_jsonl_begin(&j, buf, sizeof buf, "e\"v", 0, 1);
    ct_jsonl_int(&j, "k\"", 1);
    ct_jsonl_end(&j);
    cr_assert_str_eq(buf, "{\"event\":\"e\\\"v\",\"time\":0.000000,\"pid\":1,\"k\\\"\":1}\n");
}

/* ---- overflow ------------------------------------------------------------ */

static const char hostile[] = "kernel<\"\\\n\xff\xe2\x82\xac\xf0\x9f\x98\x80>";

static void build_busy_line(ct_jsonl *j, char *out, size_t cap)
{
    ct_jsonl_begin(j, out, cap, "refused_read", 1234567890123, 99999);
    for (int i = 0; i < 3; i++) {
        ct_jsonl_str(j, "kernel", hostile);
        ct_jsonl_open_array(j, "ids");
        for (int k = 0; k < 5; k++) {
            ct_jsonl_uint(j, NULL, (uint64_t)k * 1000003);
            ct_jsonl_open_object(j, NULL);
            ct_jsonl_str(j, "api", "cuMemcpyDtoH_v2");
            ct_jsonl_hex(j, "addr", 0xdeadbeef);
            ct_jsonl_close(j);
        }
        ct_jsonl_close(j);
        ct_jsonl_bool(j, "lost", true);
    }
}

Test(jsonl, every_buffer_size_gives_a_valid_line_and_no_overrun)
{
    for (size_t cap = 0; cap < 1200; cap++) {
        char out[1300];
        memset(out, 0x5a, sizeof out);
        ct_jsonl j;
        build_busy_line(&j, out, cap);
        size_t n = ct_jsonl_end(&j);
        for (size_t i = cap; i < sizeof out; i++)
            cr_assert_eq(out[i], 0x5a, "cap %zu: byte %zu written", cap, i);
        if (cap < 4) {
            cr_assert_eq(n, 0);
            continue;
        }
        cr_assert_eq(n, strlen(out), "cap %zu", cap);
        cr_assert_lt(n, cap);
        cr_assert(valid_line(out), "cap %zu: %s", cap, out);
        if (cap >= CT_JSONL_MIN_CAP)
            cr_assert(strncmp(out, "{\"event\":\"refused_read\",\"time\":1234.567890,\"pid\":99999", 54) == 0,
                      "cap %zu: %s", cap, out);
    }
}

Test(jsonl, a_cut_string_ends_with_dots_and_marks_full)
{
    char out[80];
    char long_value[200];
    memset(long_value, 'x', sizeof long_value - 1);
    long_value[sizeof long_value - 1] = '\0';
    ct_jsonl j;
    ct_jsonl_begin(&j, out, sizeof out, "e", 0, 1);
    ct_jsonl_str(&j, "v", long_value);
    ct_jsonl_end(&j);
    cr_assert(j.full);
    cr_assert_eq(strlen(out), sizeof out - 1, "the cut uses the room: %s", out);
    cr_assert(strstr(out, "xxx...\"}\n"), "%s", out);
    cr_assert(valid_line(out));
}

Test(jsonl, a_cut_never_splits_a_character_or_an_escape)
{
    for (size_t cap = 40; cap < 90; cap++) {
        char out[100];
        ct_jsonl j;
        ct_jsonl_begin(&j, out, cap, "e", 0, 1);
        ct_jsonl_str(&j, "v",
                     "\xe2\x82\xac\xe2\x82\xac\"\"\x01\x01\xf0\x9f\x98\x80\xf0\x9f\x98\x80"
                     "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac");
        ct_jsonl_end(&j);
        cr_assert(valid_line(out), "cap %zu: %s", cap, out);
    }
}

Test(jsonl, nesting_past_the_depth_limit_stays_balanced)
{
    ct_jsonl j;
    ct_jsonl_begin(&j, buf, sizeof buf, "e", 0, 1);
    for (int i = 0; i < CT_JSONL_DEPTH + 4; i++)
        ct_jsonl_open_array(&j, "a");
    ct_jsonl_int(&j, NULL, 1);
    for (int i = 0; i < CT_JSONL_DEPTH + 4; i++)
        ct_jsonl_close(&j);
    ct_jsonl_int(&j, "after", 2);
    ct_jsonl_close(&j); /* one too many: the envelope stays open */
    ct_jsonl_end(&j);
    cr_assert(valid_line(buf), "%s", buf);
    cr_assert(j.full);
    /* The envelope and CT_JSONL_DEPTH - 1 arrays are real; deeper levels
     * and what is written into them are dropped. */
    char want[128] = "\"a\":";
    for (int i = 0; i < CT_JSONL_DEPTH - 1; i++)
        strcat(want, "[");
    for (int i = 0; i < CT_JSONL_DEPTH - 1; i++)
        strcat(want, "]");
    strcat(want, ",\"after\":2}\n");
    cr_assert(strstr(buf, want), "%s", buf);
}

Test(jsonl, end_twice_and_calls_after_end_are_harmless)
{
    ct_jsonl j;
    ct_jsonl_begin(&j, buf, sizeof buf, "e", 0, 1);
    size_t n = ct_jsonl_end(&j);
    ct_jsonl_int(&j, "late", 1);
    ct_jsonl_open_array(&j, "late");
    ct_jsonl_close(&j);
    cr_assert_eq(ct_jsonl_end(&j), n);
    cr_assert(valid_line(buf));
}

/* ---- a streamed line ------------------------------------------------- */

typedef struct collected {
    char text[1 << 16];
    size_t len, pieces;
} collected;

static void collect(void *arg, const char *piece, size_t len)
{
    collected *c = arg;
    cr_assert(c->len + len < sizeof c->text);
    memcpy(c->text + c->len, piece, len);
    c->len += len;
    c->text[c->len] = '\0';
    c->pieces++;
}

Test(jsonl, a_streamed_line_far_larger_than_its_buffer_is_whole_and_uncut)
{
    static collected out;
    char small[CT_JSONL_MIN_CAP];
    char name[3000];
    for (size_t i = 0; i + 1 < sizeof name; i++)
        name[i] = (char)('a' + i % 26);
    name[sizeof name - 1] = '\0';
    ct_jsonl j;
    ct_jsonl_begin_stream(&j, small, sizeof small, collect, &out);
    ct_jsonl_open_array(&j, "processes");
    for (int p = 0; p < 50; p++) {
        ct_jsonl_open_object(&j, NULL);
        ct_jsonl_int(&j, "pid", p);
        ct_jsonl_str(&j, "hostile", hostile);
        ct_jsonl_null(&j, "exit");
        ct_jsonl_close(&j);
    }
    ct_jsonl_close(&j);
    ct_jsonl_str(&j, "name", name);
    cr_assert_eq(ct_jsonl_end(&j), 0);
    cr_assert(!j.full, "nothing is cut from a streamed line");
    cr_assert(out.pieces > 50, "it went out in pieces (%zu)", out.pieces);
    cr_assert(valid_line(out.text), "%s", out.text);
    cr_assert(strstr(out.text, name), "the long value is whole");
    cr_assert(strstr(out.text, "{\"pid\":49,\"hostile\":\"kernel<\\\"\\\\\\n\\ufffd"), "%.200s", out.text);
    cr_assert(strstr(out.text, "\"exit\":null}]"));
    cr_assert_eq(out.text[0], '{');
    cr_assert_eq(out.text[out.len - 1], '\n');
}

Test(jsonl, c1_controls_are_escaped_so_a_raw_print_cannot_drive_a_terminal)
{
    ct_jsonl j;
    ct_jsonl_begin(&j, buf, sizeof buf, "e", 0, 1);
    ct_jsonl_str(&j, "k",
                 "a\xc2\x9b"
                 "2J\xc2\x85z\xc2\xa0");
    ct_jsonl_end(&j);
    cr_assert(valid_line(buf), "%s", buf);
    cr_assert(strstr(buf, "\"k\":\"a\\u009b2J\\u0085z\xc2\xa0\""), "C1 escaped, U+00A0 kept: %s", buf);
}

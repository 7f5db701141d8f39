/*
 * jsonr.c - recursive-descent JSON parser over one line, in place.
 *
 * Owns: the grammar and the node array.  Invariants (see jsonr.h): depth is
 * bounded by JSONR_DEPTH_MAX, every read is checked against `end`, and a
 * string's decoded bytes are written at or before the bytes being read
 * (an escape never decodes longer than it is written), so decoding in place
 * cannot overtake the input.  Nodes are addressed by index because the array
 * may move while it grows.
 */
#include "jsonr.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Longest number text handed to strtod; JSON does not need more digits
 * than this to name any double. */
#define NUMBER_TEXT_MAX 400

typedef struct parser {
    char *p;
    char *end;
    jsonr_doc *doc;
    const char *why;
} parser;

static bool fail(parser *ps, const char *why)
{
    if (!ps->why)
        ps->why = why;
    return false;
}

static void skip_space(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static uint32_t new_node(parser *ps, jv_type type)
{
    jsonr_doc *d = ps->doc;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        if (cap > JSONR_NONE - 1) {
            fail(ps, "too many values");
            return JSONR_NONE;
        }
        jv *grown = realloc(d->node, cap * sizeof *grown);
        if (!grown) {
            fail(ps, "out of memory");
            return JSONR_NONE;
        }
        d->node = grown;
        d->cap = cap;
    }
    assert(d->n < d->cap && d->n < JSONR_NONE && "a node has room, and an index that is not JSONR_NONE");
    jv *v = &d->node[d->n];
    memset(v, 0, sizeof *v);
    v->type = type;
    v->next = JSONR_NONE;
    v->child = JSONR_NONE;
    return (uint32_t)d->n++;
}

static bool literal(parser *ps, const char *word, jv_type type, uint32_t *out)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail(ps, "unexpected character");
    ps->p += n;
    *out = new_node(ps, type);
    return *out != JSONR_NONE;
}

/* ---- numbers ------------------------------------------------------------ */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool digits(parser *ps)
{
    if (ps->p >= ps->end || !is_digit(*ps->p))
        return fail(ps, "expected a digit");
    while (ps->p < ps->end && is_digit(*ps->p))
        ps->p++;
    return true;
}

/* The integer value of an optionally signed digit run, if it fits. */
static bool to_int64(const char *s, const char *end, int64_t *out)
{
    bool neg = *s == '-';
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t value = 0;
    for (s += neg; s < end; s++) {
        assert(is_digit(*s) && "number() hands over digits only");
        unsigned d = (unsigned)(*s - '0');
        if (value > (limit - d) / 10)
            return false;
        value = value * 10 + d;
    }
    *out = neg ? (int64_t)(0 - value) : (int64_t)value;
    return true;
}

static bool number(parser *ps, uint32_t *out)
{
    char *start = ps->p;
    bool integral = true;
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (ps->p < ps->end && *ps->p == '0')
        ps->p++;
    else if (!digits(ps))
        return false;
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        integral = false;
        if (!digits(ps))
            return false;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        integral = false;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (!digits(ps))
            return false;
    }
    size_t n = (size_t)(ps->p - start);
    if (n > NUMBER_TEXT_MAX)
        return fail(ps, "number too long");
    char text[NUMBER_TEXT_MAX + 1];
    memcpy(text, start, n);
    text[n] = '\0';
    *out = new_node(ps, JV_NUMBER);
    if (*out == JSONR_NONE)
        return false;
    jv *v = &ps->doc->node[*out];
    v->num = strtod(text, NULL);
    v->is_int = integral && to_int64(text, text + n, &v->i);
    return true;
}

/* ---- strings ------------------------------------------------------------ */

static int hex4(const char *s)
{
    int value = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        int d = is_digit(c)              ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                         : -1;
        if (d < 0)
            return -1;
        value = value * 16 + d;
    }
    return value;
}

static char *put_utf8(char *dst, uint32_t cp)
{
    if (cp < 0x80) {
        *dst++ = (char)cp;
    } else if (cp < 0x800) {
        *dst++ = (char)(0xc0 | (cp >> 6));
        *dst++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *dst++ = (char)(0xe0 | (cp >> 12));
        *dst++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *dst++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *dst++ = (char)(0xf0 | (cp >> 18));
        *dst++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *dst++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *dst++ = (char)(0x80 | (cp & 0x3f));
    }
    return dst;
}

/* ps->p is just past "\u"; reads one escape (two for a surrogate pair). */
static bool unicode_escape(parser *ps, uint32_t *cp)
{
    if (ps->end - ps->p < 4)
        return fail(ps, "short \\u escape");
    int hi = hex4(ps->p);
    if (hi < 0)
        return fail(ps, "bad \\u escape");
    ps->p += 4;
    if (hi >= 0xdc00 && hi <= 0xdfff)
        return fail(ps, "lone low surrogate");
    if (hi < 0xd800 || hi > 0xdbff) {
        *cp = (uint32_t)hi;
        return true;
    }
    if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u')
        return fail(ps, "lone high surrogate");
    int lo = hex4(ps->p + 2);
    if (lo < 0xdc00 || lo > 0xdfff)
        return fail(ps, "lone high surrogate");
    ps->p += 6;
    *cp = 0x10000 + (((uint32_t)hi - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
    return true;
}

static bool simple_escape(char c, char *out)
{
    static const char from[] = "\"\\/bfnrt";
    static const char to[] = "\"\\/\b\f\n\r\t";
    const char *at = memchr(from, c, sizeof from - 1);
    if (!at)
        return false;
    *out = to[at - from];
    return true;
}

/* ps->p is at the opening quote.  Decodes in place; *s and *len describe
 * the decoded bytes. */
static bool string_text(parser *ps, const char **s, size_t *len)
{
    char *dst = ++ps->p;
    *s = dst;
    while (ps->p < ps->end) {
        char c = *ps->p++;
        if (c == '"') {
            *len = (size_t)(dst - *s);
            return true;
        }
        if ((unsigned char)c < 0x20)
            return fail(ps, "control character in string");
        if (c != '\\') {
            *dst++ = c;
            continue;
        }
        if (ps->p >= ps->end)
            break;
        char e = *ps->p++;
        uint32_t cp;
        if (e == 'u') {
            if (!unicode_escape(ps, &cp))
                return false;
            dst = put_utf8(dst, cp);
        } else if (!simple_escape(e, dst++)) {
            return fail(ps, "bad escape");
        }
        assert(dst <= ps->p && "an escape never decodes longer than it is written");
    }
    return fail(ps, "unterminated string");
}

static bool string_value(parser *ps, uint32_t *out)
{
    const char *s;
    size_t len;
    if (!string_text(ps, &s, &len))
        return false;
    *out = new_node(ps, JV_STRING);
    if (*out == JSONR_NONE)
        return false;
    ps->doc->node[*out].str = s;
    ps->doc->node[*out].len = len;
    return true;
}

/* ---- containers --------------------------------------------------------- */

static bool value(parser *ps, unsigned depth, uint32_t *out);

static void append_child(parser *ps, uint32_t parent, uint32_t *last, uint32_t child)
{
    jv *node = ps->doc->node;
    assert(parent < child && child < ps->doc->n && "a child is made after its parent");
    if (*last == JSONR_NONE)
        node[parent].child = child;
    else
        node[*last].next = child;
    node[parent].count++;
    *last = child;
}

/* One member "key": value of an object; the key is stored on the value. */
static bool member(parser *ps, unsigned depth, uint32_t *out)
{
    const char *key;
    size_t key_len;
    skip_space(ps);
    if (ps->p >= ps->end || *ps->p != '"')
        return fail(ps, "expected a member name");
    if (!string_text(ps, &key, &key_len))
        return false;
    skip_space(ps);
    if (ps->p >= ps->end || *ps->p != ':')
        return fail(ps, "expected ':'");
    ps->p++;
    if (!value(ps, depth, out))
        return false;
    ps->doc->node[*out].key = key;
    ps->doc->node[*out].key_len = key_len;
    return true;
}

static bool container(parser *ps, unsigned depth, jv_type type, uint32_t *out)
{
    char close = type == JV_OBJECT ? '}' : ']';
    if (depth >= JSONR_DEPTH_MAX)
        return fail(ps, "nested too deeply");
    assert(ps->p < ps->end && "value() saw the opening bracket");
    ps->p++;
    *out = new_node(ps, type);
    if (*out == JSONR_NONE)
        return false;
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return true;
    }
    uint32_t last = JSONR_NONE;
    for (;;) {
        uint32_t child;
        bool ok = type == JV_OBJECT ? member(ps, depth + 1, &child) : value(ps, depth + 1, &child);
        if (!ok)
            return false;
        append_child(ps, *out, &last, child);
        skip_space(ps);
        if (ps->p >= ps->end)
            return fail(ps, "unterminated container");
        char c = *ps->p++;
        if (c == close)
            return true;
        if (c != ',')
            return fail(ps, "expected ',' or a closing bracket");
    }
}

static bool value(parser *ps, unsigned depth, uint32_t *out)
{
    skip_space(ps);
    if (ps->p >= ps->end)
        return fail(ps, "unexpected end of line");
    switch (*ps->p) {
    case '{': return container(ps, depth, JV_OBJECT, out);
    case '[': return container(ps, depth, JV_ARRAY, out);
    case '"': return string_value(ps, out);
    case 't': return literal(ps, "true", JV_TRUE, out);
    case 'f': return literal(ps, "false", JV_FALSE, out);
    case 'n': return literal(ps, "null", JV_NULL, out);
    default:
        if (*ps->p == '-' || is_digit(*ps->p))
            return number(ps, out);
        return fail(ps, "unexpected character");
    }
}

bool jsonr_parse(jsonr_doc *doc, char *text, size_t len, const char **why)
{
    parser ps = {text, text + len, doc, NULL};
    uint32_t root;
    doc->n = 0;
    bool ok = value(&ps, 0, &root);
    assert((!ok || root == 0) && "the root is the first node made: jsonr_root reads node[0]");
    assert(ps.p <= ps.end && "every read is checked against the end");
    if (ok) {
        skip_space(&ps);
        if (ps.p != ps.end)
            ok = fail(&ps, "trailing bytes after the value");
    }
    if (!ok)
        doc->n = 0;
    if (why)
        *why = ok ? NULL : ps.why;
    return ok;
}

void jsonr_free(jsonr_doc *doc)
{
    free(doc->node);
    doc->node = NULL;
    doc->n = doc->cap = 0;
}

const jv *jsonr_root(const jsonr_doc *doc)
{
    return doc->n ? &doc->node[0] : NULL;
}

const jv *jsonr_first(const jsonr_doc *doc, const jv *container)
{
    if (!container || (container->type != JV_ARRAY && container->type != JV_OBJECT) || container->child == JSONR_NONE)
        return NULL;
    assert(container->child < doc->n && "nodes are addressed by index within the doc");
    return &doc->node[container->child];
}

const jv *jsonr_next(const jsonr_doc *doc, const jv *v)
{
    assert((!v || v->next == JSONR_NONE || v->next < doc->n) && "nodes are addressed by index within the doc");
    return v && v->next != JSONR_NONE ? &doc->node[v->next] : NULL;
}

const jv *jsonr_get(const jsonr_doc *doc, const jv *obj, const char *key)
{
    if (!obj || obj->type != JV_OBJECT)
        return NULL;
    size_t n = strlen(key);
    for (const jv *m = jsonr_first(doc, obj); m; m = jsonr_next(doc, m))
        if (m->key_len == n && memcmp(m->key, key, n) == 0)
            return m;
    return NULL;
}

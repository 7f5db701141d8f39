/*
 * jsonr.h - a small JSON reader for one report line at a time.
 *
 * Owns: parsing one line of text into a flat tree of nodes that point into
 * the line itself (strings are decoded in place, like rapidjson's in-situ
 * mode), and lookups in that tree.
 *
 * Invariants (the reader is fed untrusted, possibly corrupt files):
 * - Nesting deeper than JSONR_DEPTH_MAX is an error, so recursion is bounded.
 * - Never reads outside [text, text + len); NUL bytes are data, not ends.
 * - Strict RFC 8259 grammar; anything else (trailing bytes, bad escapes,
 *   raw control characters, lone surrogates) fails the whole line: a line is
 *   either one whole value or rejected.
 * - Decoded strings may contain NUL bytes: use the length, not strlen.
 * - Nodes live until the next jsonr_parse on the same jsonr_doc.
 */
#ifndef CT_JSONR_H
#define CT_JSONR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSONR_DEPTH_MAX 32
#define JSONR_NONE UINT32_MAX

typedef enum { JV_NULL, JV_FALSE, JV_TRUE, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT } jv_type;

typedef struct jv {
    jv_type type;
    uint32_t next;   /* next sibling, or JSONR_NONE */
    uint32_t child;  /* first element / member (containers) */
    uint32_t count;  /* elements / members (containers) */
    const char *key; /* member name when the parent is an object */
    size_t key_len;
    const char *str; /* JV_STRING: decoded, not NUL-terminated */
    size_t len;
    double num;  /* JV_NUMBER */
    bool is_int; /* JV_NUMBER: an integer that fits int64_t */
    int64_t i;
} jv;

typedef struct jsonr_doc {
    jv *node; /* node[0] is the root after a successful parse */
    size_t n, cap;
} jsonr_doc;

/* Parses text[0..len) in place (strings are rewritten as they decode).
 * true on success; on failure *why names the first problem. */
bool jsonr_parse(jsonr_doc *doc, char *text, size_t len, const char **why);
void jsonr_free(jsonr_doc *doc);

const jv *jsonr_root(const jsonr_doc *doc);
/* The first member named key of an object, or NULL. */
const jv *jsonr_get(const jsonr_doc *doc, const jv *obj, const char *key);
/* Element / member after v, or NULL. */
const jv *jsonr_next(const jsonr_doc *doc, const jv *v);
/* First element / member of a container, or NULL. */
const jv *jsonr_first(const jsonr_doc *doc, const jv *container);

#endif

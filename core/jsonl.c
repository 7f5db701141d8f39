/*
 * jsonl.c - one line of JSON in a caller's buffer: a bounded report event,
 * or a streamed object handed out piece by piece.
 *
 * Owns: escaping, the event envelope, and the room accounting that keeps a
 * line valid whatever is thrown at it.
 *
 * Invariants:
 * - Room for every pending closer, the final '\n' and a terminating NUL is
 *   always held back (reserve()), so ct_jsonl_end can always finish the
 *   line: nothing is written at or past cap.
 * - A member is written whole or not at all, except a string value, which
 *   is cut at a character boundary and ends in "..." (the line stays valid
 *   JSON and says it was cut).  Either way j->full records the loss.
 * - A streamed line (j->flush) makes room by handing out what it holds, so
 *   nothing is ever cut or rolled back there: a piece is at most 32 bytes
 *   and the buffer holds at least CT_JSONL_MIN_CAP.
 * - Valid UTF-8 passes through; every invalid byte becomes \ufffd; '"',
 *   '\\' and control characters (C0, DEL and C1) are escaped, so a line
 *   printed raw (jq -r, a pager) cannot drive a terminal.
 * - Levels past CT_JSONL_DEPTH, or containers that did not fit, are
 *   "phantom": they swallow what is written into them and close silently,
 *   so open/close calls stay paired without writing anything unbalanced.
 *   closer[level] == '\0' marks a phantom level.
 *
 * Callers should give cap >= CT_JSONL_MIN_CAP; smaller buffers stay safe
 * (and end in "}\n" when at least 4 bytes) but hold little.
 */
#include "jsonl.h"

#include "schema_write.h"
#include "text.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Room held back beyond the closers: '\n' and the terminating NUL. */
#define TAIL 2
/* A cut string value ends with these. */
#define CUT_MARK "...\""

static bool level_is_phantom(const ct_jsonl *j)
{
    return j->depth == 0 || j->depth > CT_JSONL_DEPTH || j->closer[j->depth - 1] == '\0';
}

/* A count, not a walk of the levels: every byte written asks for room. */
static size_t reserve(const ct_jsonl *j)
{
    return j->closers + TAIL;
}

/* Debug builds check the count where it changes, as levels open and close. */
static void assert_closers(const ct_jsonl *j)
{
#ifndef NDEBUG
    unsigned closers = 0, levels = j->depth < CT_JSONL_DEPTH ? j->depth : CT_JSONL_DEPTH;
    for (unsigned i = 0; i < levels; i++)
        closers += j->closer[i] != '\0';
    assert(closers == j->closers && "the closers counted are the levels' real ones");
#else
    (void)j;
#endif
}

static size_t room(const ct_jsonl *j)
{
    size_t held = j->len + reserve(j);
    return held < j->cap ? j->cap - held : 0;
}

/* Room for n more bytes; a streamed line hands out what it holds first. */
static bool has_room(ct_jsonl *j, size_t n)
{
    if (n > room(j) && j->flush && j->len) {
        j->flush(j->flush_arg, j->buf, j->len);
        j->len = 0;
    }
    return n <= room(j);
}

static bool put(ct_jsonl *j, const char *s, size_t n)
{
    if (!has_room(j, n))
        return false;
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    return true;
}

static bool put_str(ct_jsonl *j, const char *s)
{
    return put(j, s, strlen(s));
}

/* ---- escaping --------------------------------------------------------- */

/* \u00XX for a control code (C0, DEL or C1), skipping its `len` bytes. */
static size_t escape_control(const char **s, unsigned code, size_t len, char out[6])
{
    static const char hex[] = "0123456789abcdef";
    memcpy(out, "\\u00", 4);
    out[4] = hex[code >> 4];
    out[5] = hex[code & 0xf];
    *s += len;
    return 6;
}

/* The JSON form of the character at *s: written to out (<= 6 bytes),
 * returns its length and advances *s. */
static size_t escape_one(const char **s, char out[6])
{
    const unsigned char *c = (const unsigned char *)*s;
    static const char shorts[] = {['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};
    if (*c == '"' || *c == '\\' || (*c < sizeof shorts && shorts[*c])) {
        out[0] = '\\';
        out[1] = *c == '"' || *c == '\\' ? (char)*c : shorts[*c];
        (*s)++;
        return 2;
    }
    if (*c < 0x20 || *c == 0x7f)
        return escape_control(s, *c, 1, out);
    size_t n = ct_utf8_sequence(c);
    if (n == 0) {
        memcpy(out, "\\ufffd", 6);
        (*s)++;
        return 6;
    }
    if (c[0] == 0xC2 && c[1] < 0xA0) /* a C1 control: a terminal may act on it raw */
        return escape_control(s, c[1], 2, out);
    memcpy(out, c, n);
    *s += n;
    return n;
}

/* A quoted string.  A value (may_cut) that does not fit is cut at a
 * character boundary and ends in "..."; a key is whole or not written. */
static bool put_string(ct_jsonl *j, const char *s, bool may_cut)
{
    size_t tail = may_cut ? sizeof CUT_MARK - 1 : 1;
    if (!has_room(j, 1 + tail))
        return false;
    put(j, "\"", 1);
    while (*s) {
        char piece[6];
        size_t n = escape_one(&s, piece);
        if (!has_room(j, n + tail)) {
            if (!may_cut)
                return false;
            j->full = true;
            return put_str(j, CUT_MARK);
        }
        put(j, piece, n);
    }
    return put(j, "\"", 1);
}

static bool put_value_string(ct_jsonl *j, const char *s)
{
    return s ? put_string(j, s, true) : put_str(j, "null");
}

/* ---- members ---------------------------------------------------------- */

static bool in_array(const ct_jsonl *j)
{
    return j->closer[j->depth - 1] == ']';
}

/* Separator and key of a new member; the caller writes the value. */
static bool put_member_head(ct_jsonl *j, const char *key)
{
    if (!j->first[j->depth - 1] && !put(j, ",", 1))
        return false;
    if (in_array(j))
        return true;
    return key && put_string(j, key, false) && put(j, ":", 1);
}

/* Runs the whole member or rolls it back. */
#define MEMBER(j, key, write_value)                                          \
    do {                                                                     \
        if (level_is_phantom(j))                                             \
            break;                                                           \
        size_t mark_ = (j)->len;                                             \
        if (put_member_head((j), (key)) && (write_value)) {                  \
            (j)->first[(j)->depth - 1] = false;                              \
        } else {                                                             \
            assert(!(j)->flush && "a streamed line never runs out of room"); \
            (j)->len = mark_;                                                \
            (j)->full = true;                                                \
        }                                                                    \
    } while (0)

static bool put_number(ct_jsonl *j, const char *format, ...) __attribute__((format(printf, 2, 3)));

static bool put_number(ct_jsonl *j, const char *format, ...)
{
    char digits[32];
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(digits, sizeof digits, format, ap);
    va_end(ap);
    return n > 0 && (size_t)n < sizeof digits && put(j, digits, (size_t)n);
}

void ct_jsonl_str(ct_jsonl *j, const char *key, const char *value)
{
    MEMBER(j, key, put_value_string(j, value));
}

void ct_jsonl_int(ct_jsonl *j, const char *key, int64_t value)
{
    MEMBER(j, key, put_number(j, "%" PRId64, value));
}

void ct_jsonl_uint(ct_jsonl *j, const char *key, uint64_t value)
{
    MEMBER(j, key, put_number(j, "%" PRIu64, value));
}

void ct_jsonl_bool(ct_jsonl *j, const char *key, bool value)
{
    MEMBER(j, key, put_str(j, value ? "true" : "false"));
}

void ct_jsonl_hex(ct_jsonl *j, const char *key, uint64_t value)
{
    MEMBER(j, key, put_number(j, "\"0x%" PRIx64 "\"", value));
}

void ct_jsonl_time(ct_jsonl *j, const char *key, int64_t ns)
{
    uint64_t magnitude = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    MEMBER(j, key,
           put_number(j, "%s%" PRIu64 ".%06" PRIu64, ns < 0 ? "-" : "", magnitude / 1000000000u,
                      magnitude % 1000000000u / 1000u));
}

void ct_jsonl_null(ct_jsonl *j, const char *key)
{
    MEMBER(j, key, put_str(j, "null"));
}

/* ---- containers ------------------------------------------------------- */

static void push_level(ct_jsonl *j, char closer)
{
    if (j->depth < CT_JSONL_DEPTH) {
        j->first[j->depth] = true;
        j->closer[j->depth] = closer;
        j->closers += closer != '\0';
    }
    j->depth++;
    assert_closers(j);
}

static bool put_opener(ct_jsonl *j, const char *opener)
{
    /* The opener and the closer it will need must both fit. */
    return has_room(j, 2) && put(j, opener, 1);
}

static void open_container(ct_jsonl *j, const char *key, const char *opener, char closer)
{
    if (j->depth == 0)
        return; /* no line open */
    bool opened = false;
    if (j->depth >= CT_JSONL_DEPTH) { /* too deep: a phantom level, nothing written */
        j->full = true;
        push_level(j, '\0');
        return;
    }
    MEMBER(j, key, (opened = put_opener(j, opener)));
    if (!opened)
        j->full = true;
    push_level(j, opened ? closer : '\0');
}

void ct_jsonl_open_array(ct_jsonl *j, const char *key)
{
    open_container(j, key, "[", ']');
}

void ct_jsonl_open_object(ct_jsonl *j, const char *key)
{
    open_container(j, key, "{", '}');
}

void ct_jsonl_close(ct_jsonl *j)
{
    if (j->depth <= 1)
        return; /* the event object itself closes in ct_jsonl_end */
    j->depth--;
    if (j->depth < CT_JSONL_DEPTH && j->closer[j->depth] != '\0') {
        /* Held back by reserve(), so this always fits. */
        j->closers--;
        assert(j->len + 1 + reserve(j) <= j->cap);
        j->buf[j->len++] = j->closer[j->depth];
        j->closer[j->depth] = '\0';
    }
    assert_closers(j);
}

/* ---- the envelope ----------------------------------------------------- */

/* Opens '{'.  It, its closer and the tail must fit, or no line is opened
 * (depth 0: every later call is a no-op and the line is empty). */
static bool open_line(ct_jsonl *j, char *buf, size_t cap)
{
    memset(j, 0, sizeof *j);
    j->buf = buf;
    j->cap = buf ? cap : 0;
    if (j->cap < 1 + 1 + TAIL) {
        j->full = true;
        if (j->cap)
            j->buf[0] = '\0';
        return false;
    }
    j->buf[j->len++] = '{';
    push_level(j, '}');
    return true;
}

void ct_jsonl_begin_stream(ct_jsonl *j, char *buf, size_t cap, ct_jsonl_flush flush, void *arg)
{
    assert(cap >= CT_JSONL_MIN_CAP && flush);
    if (open_line(j, buf, cap)) {
        j->flush = flush;
        j->flush_arg = arg;
    }
}

void ct_jsonl_begin(ct_jsonl *j, char *buf, size_t cap, const char *event, int64_t time_ns, long pid)
{
    if (open_line(j, buf, cap))
        ct_write_envelope(j, &(ct_out_envelope){.event = event, .time = time_ns, .pid = pid});
}

size_t ct_jsonl_end(ct_jsonl *j)
{
    if (j->depth == 0)
        return j->len; /* never opened, or already ended */
    while (j->depth > 1)
        ct_jsonl_close(j);
    /* Held back by reserve(): '}', '\n' and the NUL always fit. */
    j->buf[j->len++] = '}';
    j->buf[j->len++] = '\n';
    j->buf[j->len] = '\0';
    j->depth = 0;
    j->closers = 0;
    if (!j->flush)
        return j->len;
    j->flush(j->flush_arg, j->buf, j->len);
    j->len = 0;
    return 0;
}

/*
 * jsonl.h - cutaint's one JSON writer: a line holding one object, built in a
 * caller's buffer.  A report event (ct_jsonl_begin: the shim's, bounded, one
 * write(2) each) or a streamed object of any size (ct_jsonl_begin_stream:
 * the command's summary, handed out in pieces as the buffer fills).
 *
 * Owns: escaping, and opening an event with its envelope ("event", "time",
 * "pid", written by schema_write.h like every record).  Keys are literals
 * (the table's, schema.h); values may be anything (kernel names,
 * paths), so every string value is escaped.  In a bounded line a value that
 * does not fit is cut at a character boundary and marked with "..." so the
 * line stays valid JSON; a streamed line cuts nothing.
 *
 * Invariants: never writes past cap; ct_jsonl_end always yields a complete
 * object ending in "}\n" (closing any open arrays/objects), even after the
 * buffer filled up.
 */
#ifndef CT_JSONL_H
#define CT_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The report format's version, in every start event (format_version), so
 * a reader can tell a report newer than it is (docs/REPORT.md).  1: the
 * reports written before the field existed; 2: refused_read's "returned",
 * exit's "failed_reads", "interrupted" and "skipped"; 3: the image event,
 * exit's "unusable_images". */
#define CT_REPORT_FORMAT_VERSION 3

/* The summary nests 8 deep; a level past this swallows what it is given. */
#define CT_JSONL_DEPTH 12
/* The smallest buffer that always holds the envelope of a short event; a
 * smaller one is safe (never overrun) but keeps little or nothing. */
#define CT_JSONL_MIN_CAP 64

/* A streamed line's pieces, in order, as the buffer fills and at the end. */
typedef void (*ct_jsonl_flush)(void *arg, const char *piece, size_t len);

typedef struct ct_jsonl {
    char *buf;
    size_t cap, len;
    ct_jsonl_flush flush; /* NULL: a bounded line */
    void *flush_arg;
    bool full; /* something was cut */
    unsigned depth;
    unsigned closers;           /* real levels open: their closers are held back */
    bool first[CT_JSONL_DEPTH]; /* no member yet at this depth */
    char closer[CT_JSONL_DEPTH];
} ct_jsonl;

/* Opens {"event":EVENT,"time":SECONDS.micro,"pid":PID */
void ct_jsonl_begin(ct_jsonl *j, char *buf, size_t cap, const char *event, int64_t time_ns, long pid);
/* Opens a bare '{' streamed through flush (cap >= CT_JSONL_MIN_CAP). */
void ct_jsonl_begin_stream(ct_jsonl *j, char *buf, size_t cap, ct_jsonl_flush flush, void *arg);
void ct_jsonl_str(ct_jsonl *j, const char *key, const char *value); /* NULL -> null */
void ct_jsonl_int(ct_jsonl *j, const char *key, int64_t value);
void ct_jsonl_uint(ct_jsonl *j, const char *key, uint64_t value);
void ct_jsonl_bool(ct_jsonl *j, const char *key, bool value);
void ct_jsonl_hex(ct_jsonl *j, const char *key, uint64_t value); /* "0x1f00" */
void ct_jsonl_null(ct_jsonl *j, const char *key);
/* A time, from nanoseconds: seconds since the epoch with microseconds. */
void ct_jsonl_time(ct_jsonl *j, const char *key, int64_t ns);
/* key == NULL inside an array. */
void ct_jsonl_open_array(ct_jsonl *j, const char *key);
void ct_jsonl_open_object(ct_jsonl *j, const char *key);
void ct_jsonl_close(ct_jsonl *j);
/* Closes everything, appends "}\n"; returns the line length (a streamed
 * line: hands out its last piece and returns 0). */
size_t ct_jsonl_end(ct_jsonl *j);

#endif

/*
 * schema_read.h - the reader's serialisers, generated from schema.def: for
 * each record a struct of its fields, ct_in_<record>, and ct_read_<record>,
 * which fills it from a parsed object (jsonr.h).  The code that keeps a
 * value (report.c) takes it from the struct; nothing else spells a record,
 * so adding a field to the table adds it to the struct, and the reader
 * reads it.
 *
 * Owns: each shape's C type on the reader's side (CT_IN_C_<shape>) and how
 * each shape is read.
 *
 * Invariants: every field of the record is looked up; its bit
 * (CT_FIELD_BIT) is set in `has` only when the key is there with a value
 * of its shape (null, absent or of another JSON type: not set, and the
 * member is zero), so one odd value never rejects the line; strings point
 * into the parsed line (valid until the next parse of its doc) and may
 * hold NUL bytes; arrays and objects are their nodes, for the code that
 * keeps them to walk (ct_read_<record> on each object).
 */
#ifndef CT_SCHEMA_READ_H
#define CT_SCHEMA_READ_H

#include "jsonr.h"
#include "schema.h"

#include <stdbool.h>

/* A string value in the parsed line; str NULL: not there. */
typedef struct ct_text {
    const char *str;
    size_t len;
} ct_text;

#define CT_IN_C_STR ct_text
#define CT_IN_C_HEX ct_text /* kept as written, "0x..." */
#define CT_IN_C_INT int64_t
#define CT_IN_C_NUM double
#define CT_IN_C_BOOL bool
#define CT_IN_C_DIMS ct_dims
#define CT_IN_C_STRS const jv *
#define CT_IN_C_INTS const jv *
#define CT_IN_C_OBJ const jv *
#define CT_IN_C_OBJS const jv *

/* struct ct_in_<record> { uint64_t has; <a member per field> }: each
 * CT_RECORD row closes the struct before it and opens its own, so the
 * first row closes a placeholder. */
struct ct_in_placeholder_ {
    char unused_;
#define CT_RECORD(record, title) \
    }                            \
    ;                            \
    struct ct_in_##record {      \
        uint64_t has;
#define CT_FIELD(record, key, type, meaning) CT_PASTE(CT_IN_C_, CT_SHAPE_OF_##type) key;
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

/* Fills a record's struct from obj (an object node of doc): what
 * ct_read_<record> calls. */
void ct_schema_read(const jsonr_doc *doc, const jv *obj, unsigned record, void *values);

#define CT_RECORD(record, title)                                                                       \
    typedef struct ct_in_##record ct_in_##record;                                                      \
    static inline void ct_read_##record(const jsonr_doc *doc, const jv *obj, struct ct_in_##record *v) \
    {                                                                                                  \
        ct_schema_read(doc, obj, CT_RECORD_##record, v);                                               \
    }
#define CT_FIELD(record, key, type, meaning)
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD

#define CT_HAS(values, record, key) (((values)->has & CT_FIELD_BIT(record, key)) != 0)
/* A field's value, or fallback when it is not there. */
#define CT_OR(values, record, key, fallback) (CT_HAS(values, record, key) ? (values)->key : (fallback))

#endif

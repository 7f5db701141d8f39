/*
 * schema.h - the names of what cutaint writes, from the one table of events
 * and fields (schema.def), for its writer (shim/events.c), its reader
 * (tools/cutaint/report.c) and its re-writer (tools/cutaint/render_json.c).
 *
 * Owns: CT_EVENT and CT_KEY, which turn a record and a key of the table into
 * the string literal written or looked up, and the table itself at run time
 * (ct_schema_fields, for the docs test and tools).
 *
 * Invariants: CT_EVENT(record) compiles only for a record of the table, and
 * CT_KEY(record, key, SHAPE) only for a field of that record whose type has
 * that shape: the writer and the reader cannot name a field the table lacks,
 * nor write or read it as another type.  Both are address constants (usable
 * in static tables) and cost nothing at run time.
 */
#ifndef CT_SCHEMA_H
#define CT_SCHEMA_H

#include <stddef.h>

typedef enum ct_schema_type {
#define CT_SCHEMA_TYPE(type, text, shape) CT_TYPE_##type,
#include "schema_types.def"
#undef CT_SCHEMA_TYPE
} ct_schema_type;

/* How a type is written or read: the JSON calls that serve it. */
typedef enum ct_schema_shape {
    CT_SHAPE_STR, /* a string, or null */
    CT_SHAPE_HEX, /* a string "0x..." written from a number */
    CT_SHAPE_INT, /* an integer, or null */
    CT_SHAPE_NUM, /* any number */
    CT_SHAPE_BOOL,
    CT_SHAPE_DIMS, /* [x, y, z] */
    CT_SHAPE_STRS, /* an array of strings */
    CT_SHAPE_INTS, /* an array of integers */
    CT_SHAPE_OBJ,  /* an object, or null */
    CT_SHAPE_OBJS, /* an array of objects */
} ct_schema_shape;

/* Each type's shape, by name, for CT_KEY's check. */
enum {
#define CT_SCHEMA_TYPE(type, text, shape) CT_TYPE_SHAPE_##type = CT_SHAPE_##shape,
#include "schema_types.def"
#undef CT_SCHEMA_TYPE
};

/* One constant per record, and per field its shape. */
enum {
#define CT_RECORD(record, title) CT_RECORD_##record,
#define CT_FIELD(record, key, type, meaning)
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
    CT_RECORDS
};
enum {
#define CT_RECORD(record, title)
#define CT_FIELD(record, key, type, meaning) CT_FIELD_SHAPE_##record##__##key = CT_TYPE_SHAPE_##type,
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

#define CT_EVENT(record) (&#record[0 * CT_RECORD_##record])
#define CT_KEY(record, key, shape) \
    (&#key[0 * sizeof(char[(int)CT_FIELD_SHAPE_##record##__##key == (int)CT_SHAPE_##shape ? 1 : -1])])

typedef struct ct_schema_record {
    const char *name, *title;
} ct_schema_record;

typedef struct ct_schema_field {
    unsigned record; /* its index in ct_schema_records */
    const char *key;
    ct_schema_type type;
    const char *meaning;
} ct_schema_field;

extern const ct_schema_record ct_schema_records[CT_RECORDS];
extern const ct_schema_field ct_schema_fields[];
extern const size_t ct_schema_n_fields;
/* How docs/REPORT.md spells a type: "string", "integer or null", ... */
const char *ct_schema_type_text(ct_schema_type type);

#endif

/*
 * schema.h - the names of what cutaint writes, from the one table of events
 * and fields (schema.def), for its writer (shim/events.c, through
 * schema_write.h), its reader (tools/cutaint/report.c, through
 * schema_read.h) and its re-writer (tools/cutaint/render_json.c).
 *
 * Owns: CT_EVENT, which turns a record of the table into the event name
 * written or looked up; CT_FIELD_BIT, a field's bit in a record's masks;
 * each type's shape (CT_SHAPE_OF_<type>); and the table itself at run time
 * (ct_schema_records, ct_schema_fields), which the generated serialisers
 * walk.
 *
 * Invariants: CT_EVENT(record) compiles only for a record of the table, and
 * CT_FIELD_BIT(record, key) only for a field of that record; the generated
 * structs (schema_write.h, schema_read.h) have a member per field, of its
 * type's shape: the code that fills or takes a value cannot name a field
 * the table lacks, nor hold it as another type.  CT_EVENT is an address
 * constant (usable in static tables) and costs nothing at run time.  A
 * record's fields are ct_schema_fields from its ct_schema_record's first
 * on, while their record is its own, in the table's order; at most
 * CT_RECORD_FIELDS_MAX of them (a bit each in a uint64_t mask; schema.c
 * checks it at compile time).
 */
#ifndef CT_SCHEMA_H
#define CT_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#define CT_PASTE_(a, b) a##b
#define CT_PASTE(a, b) CT_PASTE_(a, b)

typedef enum ct_schema_type {
#define CT_SCHEMA_TYPE(type, text) CT_TYPE_##type,
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

/* Each type's shape, as a token: the generated structs and serialisers
 * paste it onto their names (CT_PASTE(prefix_, CT_SHAPE_OF_##type)). */
#define CT_SHAPE_OF_STRING STR
#define CT_SHAPE_OF_STRING_OR_NULL STR
#define CT_SHAPE_OF_HEX HEX
#define CT_SHAPE_OF_INT INT
#define CT_SHAPE_OF_INT_OR_NULL INT
#define CT_SHAPE_OF_NUMBER NUM
#define CT_SHAPE_OF_BOOL BOOL
#define CT_SHAPE_OF_DIMS DIMS
#define CT_SHAPE_OF_STRINGS STRS
#define CT_SHAPE_OF_INTS INTS
#define CT_SHAPE_OF_OBJECT OBJ
#define CT_SHAPE_OF_OBJECT_OR_NULL OBJ
#define CT_SHAPE_OF_OBJECTS OBJS

/* Each type's shape, by name, for ct_schema_fields. */
enum {
#define CT_SCHEMA_TYPE(type, text) CT_TYPE_SHAPE_##type = CT_PASTE(CT_SHAPE_, CT_SHAPE_OF_##type),
#include "schema_types.def"
#undef CT_SCHEMA_TYPE
};

/* One constant per record. */
enum {
#define CT_RECORD(record, title) CT_RECORD_##record,
#define CT_FIELD(record, key, type, meaning)
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
    CT_RECORDS
};

/* Each field's place: a record's marker, then its fields, so that a field's
 * bit in its record's masks is its distance from the marker, less one. */
enum {
#define CT_RECORD(record, title) CT_MARK_##record,
#define CT_FIELD(record, key, type, meaning) CT_MARK_##record##__##key,
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

/* How many fields the table holds, over all records. */
enum {
    CT_FIELDS = 0
#define CT_RECORD(record, title)
#define CT_FIELD(record, key, type, meaning) +1
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

#define CT_RECORD_FIELDS_MAX 64
/* The field's bit in its record's masks (a struct's absent, nulls, has). */
#define CT_FIELD_BIT(record, key) (UINT64_C(1) << (CT_MARK_##record##__##key - CT_MARK_##record - 1))

#define CT_EVENT(record) (&#record[0 * CT_RECORD_##record])

/* A DIMS value, written and read. */
typedef struct ct_dims {
    int64_t d[3];
} ct_dims;

typedef struct ct_schema_record {
    const char *name, *title;
    unsigned first; /* its first field in ct_schema_fields; the rest follow it */
} ct_schema_record;

typedef struct ct_schema_field {
    unsigned record; /* its index in ct_schema_records */
    const char *key;
    ct_schema_type type;
    ct_schema_shape shape;
    const char *meaning;
} ct_schema_field;

extern const ct_schema_record ct_schema_records[CT_RECORDS];
extern const ct_schema_field ct_schema_fields[];
extern const size_t ct_schema_n_fields;
/* How docs/REPORT.md spells a type: "string", "integer or null", ... */
const char *ct_schema_type_text(ct_schema_type type);

#endif
